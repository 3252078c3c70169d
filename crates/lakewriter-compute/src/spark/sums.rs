//! Spark's `SUM` (`org.apache.spark.sql.catalyst.expressions.aggregate.Sum`): of integers a
//! `BIGINT`, which without ANSI mode wraps around as the JVM's `long` does and in ANSI mode fails
//! where the total is outside it (`ARITHMETIC_OVERFLOW`); of a `DECIMAL(p, s)` a
//! `DECIMAL(p + 10, s)`, which fails (ANSI) or is NULL where the total does not fit.
//!
//! The running total is DataFusion's own grouped sum (`PrimitiveGroupsAccumulator`, one value per
//! group, a batch added in one pass), so a grouped `SUM` costs what DataFusion's does: over an
//! `i64` that wraps (integers, without ANSI mode), or an `i128` of the unscaled value (decimals,
//! and integers in ANSI mode) that, once it overflows, holds [`OVERFLOWED`] for good. The checks
//! are made once, on the totals.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, BooleanArray, Decimal128Array, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Field, FieldRef, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl, EmitTo, GroupsAccumulator, Signature, Volatility};
use datafusion_functions_aggregate_common::aggregate::groups_accumulator::prim_op::PrimitiveGroupsAccumulator;

use super::arith::{Mode, spark_type_name};

/// The `i128` total that overflowed: no sum of values that fit a `DECIMAL(38)` reaches it
/// without overflowing first.
const OVERFLOWED: i128 = i128::MIN;

/// 10 to the power of 0 to 38: the bound of each decimal precision's unscaled values.
pub(super) const POWERS_OF_TEN: [i128; 39] = {
    let mut powers = [1_i128; 39];
    let mut i = 1;
    while i < 39 {
        powers[i] = powers[i - 1] * 10;
        i += 1;
    }
    powers
};

/// `x + y` on `i128` totals, [`OVERFLOWED`] where either is or the sum overflows.
fn add(x: &mut i128, y: i128) {
    *x = if *x == OVERFLOWED || y == OVERFLOWED { OVERFLOWED } else { x.checked_add(y).unwrap_or(OVERFLOWED) };
}

/// A total that wraps around as a `long` (held in an `i128`, always within an `i64`).
fn long(total: i128) -> i64 {
    i64::try_from(total).expect("a wrapped total and its values are BIGINTs")
}

/// `SUM(x)`, `x` an integer or a decimal, in `mode`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct SparkSum {
    input: DataType,
    mode: Mode,
    signature: Signature,
}

impl SparkSum {
    pub(super) fn new(input: DataType, mode: Mode) -> Self {
        Self { input, mode, signature: Signature::any(1, Volatility::Immutable) }
    }

    /// Whether the total wraps around as a `long` (integers without ANSI mode).
    fn wraps(&self) -> bool {
        self.input.is_integer() && self.mode == Mode::Legacy
    }

    /// The type of the running total.
    fn total_type(&self) -> DataType {
        match &self.input {
            _ if self.wraps() => DataType::Int64,
            DataType::Decimal128(_, s) => DataType::Decimal128(38, *s),
            _ => DataType::Decimal128(38, 0),
        }
    }

    /// `values` (the aggregate's input) as values of the total's native type: a decimal's
    /// unscaled values as they are (the grouped sum reads them whatever their precision), an
    /// integer cast.
    fn as_totals(&self, values: &ArrayRef) -> Result<ArrayRef> {
        match values.data_type() {
            DataType::Decimal128(..) | DataType::Int64 if values.data_type().is_integer() == self.wraps() => {
                Ok(Arc::clone(values))
            }
            _ => Ok(cast(values, &self.total_type())?),
        }
    }

    /// The sum's type: Spark's.
    fn output(&self) -> DataType {
        match &self.input {
            DataType::Decimal128(p, s) => DataType::Decimal128((p + 10).min(38), *s),
            _ => DataType::Int64,
        }
    }

    /// Whether `total` (not wrapped) fits the sum's type.
    fn fits(&self, total: i128) -> bool {
        match self.output() {
            DataType::Decimal128(p, _) => total != OVERFLOWED && total.abs() < POWERS_OF_TEN[usize::from(p)],
            _ => i64::try_from(total).is_ok(),
        }
    }

    /// The sum of a total (unscaled where it is a decimal), NULL where there was no row; where it
    /// does not fit the sum's type, the error in ANSI mode, else NULL.
    fn finished(&self, total: Option<i128>) -> Result<Option<i128>> {
        let Some(total) = total else { return Ok(None) };
        if self.wraps() {
            return Ok(Some(total));
        }
        let output = self.output();
        match (self.fits(total), self.mode) {
            (true, _) => Ok(Some(total)),
            (false, Mode::Ansi) => Err(DataFusionError::Execution(match output {
                DataType::Decimal128(p, s) => format!(
                    "[NUMERIC_VALUE_OUT_OF_RANGE] the sum does not fit in decimal({p},{s}); use 'try_sum' to tolerate overflow and return NULL instead, or `ansi = false`"
                ),
                output => format!(
                    "[ARITHMETIC_OVERFLOW] long overflow in `sum`: the result is outside {}; use 'try_sum' to tolerate overflow and return NULL instead, or `ansi = false`",
                    spark_type_name(&output)
                ),
            })),
            (false, _) => Ok(None),
        }
    }

    /// `totals` (an array of [`Self::total_type`]) as the sums.
    fn sums(&self, totals: &ArrayRef) -> Result<ArrayRef> {
        if self.wraps() {
            return Ok(Arc::clone(totals));
        }
        let decimals = totals.as_primitive::<Decimal128Type>();
        if decimals.iter().flatten().all(|t| self.fits(t)) {
            // Every total is its sum: the array as it is, of the sum's type.
            return Ok(match self.output() {
                DataType::Decimal128(p, s) => Arc::new(decimals.clone().with_precision_and_scale(p, s)?),
                _ => Arc::new(decimals.unary::<_, Int64Type>(|t| i64::try_from(t).unwrap_or_default())),
            });
        }
        let totals: Vec<Option<i128>> = decimals.iter().collect();
        let sums = totals.into_iter().map(|t| self.finished(t)).collect::<Result<Vec<_>>>()?;
        Ok(match self.output() {
            DataType::Decimal128(p, s) => {
                Arc::new(sums.into_iter().collect::<Decimal128Array>().with_precision_and_scale(p, s)?)
            }
            _ => Arc::new(sums.into_iter().map(|v| v.and_then(|v| i64::try_from(v).ok())).collect::<Int64Array>()),
        })
    }
}

impl AggregateUDFImpl for SparkSum {
    fn name(&self) -> &'static str {
        "sum"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.output())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![Arc::new(Field::new(format!("{}[sum]", args.name), self.total_type(), true))])
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(Running { sum: self.clone(), total: 0, rows: 0 }))
    }

    fn groups_accumulator_supported(&self, _args: AccumulatorArgs) -> bool {
        true
    }

    fn create_groups_accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn GroupsAccumulator>> {
        let totals: Box<dyn GroupsAccumulator> = if self.wraps() {
            Box::new(PrimitiveGroupsAccumulator::<Int64Type, _>::new(&DataType::Int64, |x, y| *x = x.wrapping_add(y)))
        } else {
            Box::new(PrimitiveGroupsAccumulator::<Decimal128Type, _>::new(&self.total_type(), add))
        };
        Ok(Box::new(Totals { sum: self.clone(), totals }))
    }
}

/// The sum of one group's rows (a window's frame, an aggregate without groups): its total, and
/// how many rows (or partial totals) it holds, so that a frame left without rows is NULL.
#[derive(Debug)]
struct Running {
    sum: SparkSum,
    total: i128,
    rows: i64,
}

impl Running {
    /// Adds (`sign` 1) or takes away (-1) the values of `values`, cast to the total's type.
    fn update(&mut self, values: &ArrayRef, sign: i64) -> Result<()> {
        let values = cast(values, &self.sum.total_type())?;
        let values: Vec<i128> = if self.sum.wraps() {
            values.as_primitive::<Int64Type>().iter().flatten().map(i128::from).collect()
        } else {
            values.as_primitive::<Decimal128Type>().iter().flatten().collect()
        };
        for value in values {
            self.rows += sign;
            if self.sum.wraps() {
                let (total, value) = (long(self.total), long(value));
                self.total = i128::from(if sign > 0 { total.wrapping_add(value) } else { total.wrapping_sub(value) });
            } else if sign > 0 {
                add(&mut self.total, value);
            } else {
                add(&mut self.total, if value == OVERFLOWED { OVERFLOWED } else { -value });
            }
        }
        Ok(())
    }

    fn total(&self) -> ScalarValue {
        let total = (self.rows > 0).then_some(self.total);
        match self.sum.total_type() {
            DataType::Decimal128(p, s) => ScalarValue::Decimal128(total, p, s),
            _ => ScalarValue::Int64(total.map(long)),
        }
    }
}

impl Accumulator for Running {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.update(&values[0], 1)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.update(&values[0], -1)
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.update(&states[0], 1)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.total()])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        ScalarValue::try_from_array(&self.sum.sums(&self.total().to_array()?)?, 0)
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

/// The totals of every group: DataFusion's grouped sum over the total's type, the sums made
/// of them as they are emitted.
struct Totals {
    sum: SparkSum,
    totals: Box<dyn GroupsAccumulator>,
}

impl std::fmt::Debug for Totals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Totals").field("sum", &self.sum).finish_non_exhaustive()
    }
}

impl GroupsAccumulator for Totals {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        let values = self.sum.as_totals(&values[0])?;
        self.totals.update_batch(&[values], group_indices, opt_filter, total_num_groups)
    }

    fn merge_batch(&mut self, values: &[ArrayRef], group_indices: &[usize], total_num_groups: usize) -> Result<()> {
        self.totals.merge_batch(values, group_indices, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        self.sum.sums(&self.totals.evaluate(emit_to)?)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.totals.state(emit_to)
    }

    fn convert_to_state(&self, values: &[ArrayRef], opt_filter: Option<&BooleanArray>) -> Result<Vec<ArrayRef>> {
        let values = self.sum.as_totals(&values[0])?;
        self.totals.convert_to_state(&[values], opt_filter)
    }

    fn size(&self) -> usize {
        self.totals.size()
    }
}
