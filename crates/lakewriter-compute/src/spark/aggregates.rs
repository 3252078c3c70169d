//! Spark's `SUM` and `AVG` (`Sum`, `Average` in `org.apache.spark.sql.catalyst.expressions.
//! aggregate`) where DataFusion's answer differs: the `SUM` of integers is a `BIGINT` that, in
//! ANSI mode, fails on overflow (`ARITHMETIC_OVERFLOW`) and otherwise wraps around; the `SUM` of a
//! `DECIMAL(p, s)` is a `DECIMAL(p + 10, s)` that fails (ANSI) or is NULL where it overflows; the
//! `AVG` of a `DECIMAL(p, s)` is a `DECIMAL(p + 4, s + 4)`, the exact quotient of the sum and
//! the count rounded half up. Any other
//! `AVG` is DataFusion's (a `DOUBLE`, as Spark's).

use std::sync::Arc;

use bigdecimal::num_bigint::BigInt;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Int64Array, PrimitiveArray};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{ArrowPrimitiveType, DataType, Decimal128Type, Field, FieldRef, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, GroupsAccumulator, Signature, Volatility};

use super::arith::{Mode, Op};
use super::decimal::Scaled;

/// The aggregate Spark computes for the call `name(x)`, `x` of type `input`, where it is not
/// the one planned.
pub(crate) fn spark(name: &str, input: &DataType, mode: Mode) -> Option<Arc<AggregateUDF>> {
    let kind = match (name, input) {
        ("sum", t) if t.is_integer() => Kind::Sum { scale: None },
        ("sum", DataType::Decimal128(p, s)) => Kind::Sum { scale: Some((*p, *s)) },
        ("avg", DataType::Decimal128(p, s)) => Kind::Avg { precision: *p, scale: *s },
        // DataFusion's, which computes a `DOUBLE` as Spark does (and honours FILTER and frames).
        ("avg", _) => return Some(datafusion::functions_aggregate::average::avg_udaf()),
        _ => return None,
    };
    Some(Arc::new(AggregateUDF::new_from_impl(SparkAggregate {
        kind,
        mode,
        signature: Signature::any(1, Volatility::Immutable),
    })))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// `SUM` of integers (`scale` none) or of a `DECIMAL(p, s)`.
    Sum { scale: Option<(u8, i8)> },
    /// `AVG` of a `DECIMAL(precision, scale)`.
    Avg { precision: u8, scale: i8 },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct SparkAggregate {
    kind: Kind,
    mode: Mode,
    signature: Signature,
}

/// 10 to the power of 0 to 38: the bound of each decimal precision's unscaled values.
const POWERS_OF_TEN: [i128; 39] = {
    let mut powers = [1_i128; 39];
    let mut i = 1;
    while i < 39 {
        powers[i] = powers[i - 1] * 10;
        i += 1;
    }
    powers
};

fn bounded(precision: u8) -> u8 {
    precision.min(38)
}

impl SparkAggregate {
    /// The type of the running sum.
    fn sum_type(&self) -> DataType {
        match self.kind {
            Kind::Sum { scale: None } => DataType::Int64,
            Kind::Sum { scale: Some((p, s)) } | Kind::Avg { precision: p, scale: s } => {
                DataType::Decimal128(bounded(p + 10), s)
            }
        }
    }
}

impl AggregateUDFImpl for SparkAggregate {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Sum { .. } => "sum",
            Kind::Avg { .. } => "avg",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::Sum { .. } => self.sum_type(),
            Kind::Avg { precision, scale } => DataType::Decimal128(bounded(precision + 4), (scale + 4).min(38)),
        })
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(Running {
            aggregate: self.clone(),
            output: args.return_field.data_type().clone(),
            total: Total::default(),
        }))
    }

    fn groups_accumulator_supported(&self, _args: AccumulatorArgs) -> bool {
        true
    }

    fn create_groups_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(Box::new(super::aggregate_groups::Totals::new(self.clone(), args.return_field.data_type().clone())))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(format!("{}[sum]", args.name), self.sum_type(), true)),
            Arc::new(Field::new(format!("{}[count]", args.name), DataType::Int64, false)),
            Arc::new(Field::new(format!("{}[overflowed]", args.name), DataType::Boolean, false)),
        ])
    }
}

/// The values of `batch` as unscaled integers (a decimal's) or integers.
pub(super) fn unscaled(batch: &ArrayRef) -> Result<Vec<Option<i128>>> {
    if let DataType::Decimal128(..) = batch.data_type() {
        return Ok(batch.as_primitive::<Decimal128Type>().iter().collect());
    }
    let longs = cast_with_options(batch, &DataType::Int64, &CastOptions::default())?;
    Ok(longs.as_primitive::<Int64Type>().iter().map(|v| v.map(i128::from)).collect())
}

/// One group's running sum: unscaled, in an `i128` (an `i64` for integers), with the rows
/// counted and whether it overflowed.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Total {
    sum: i128,
    count: i64,
    overflowed: bool,
}

impl SparkAggregate {
    fn integral(&self) -> bool {
        matches!(self.kind, Kind::Sum { scale: None })
    }

    fn overflow(&self) -> DataFusionError {
        let what = if self.integral() { "long overflow" } else { "decimal overflow" };
        DataFusionError::Execution(format!(
            "[ARITHMETIC_OVERFLOW] {what} in `{}`: the result is outside {}; use 'try_{}' to tolerate overflow and return NULL instead, or `ansi = false`",
            self.name(),
            super::arith::spark_type_name(&self.sum_type()),
            self.name(),
        ))
    }

    /// Adds to `total` (`sign` 1) or takes away from it (-1) `value`, the sum of `count` rows.
    #[inline]
    pub(super) fn add(&self, total: &mut Total, value: i128, sign: i64, count: i64) -> Result<()> {
        total.count += sign * count;
        if self.integral() {
            let long = |v: i128| i64::try_from(v).expect("an integral sum and its values are BIGINTs");
            let (sum, value) = (long(total.sum), long(value));
            let next = if sign > 0 { sum.checked_add(value) } else { sum.checked_sub(value) };
            total.sum = i128::from(match (next, self.mode) {
                (Some(next), _) => next,
                (None, Mode::Ansi) => return Err(self.overflow()),
                (None, Mode::Legacy) => {
                    if sign > 0 {
                        sum.wrapping_add(value)
                    } else {
                        sum.wrapping_sub(value)
                    }
                }
                (None, Mode::Try) => {
                    total.overflowed = true;
                    0
                }
            });
            return Ok(());
        }
        match if sign > 0 { total.sum.checked_add(value) } else { total.sum.checked_sub(value) } {
            Some(next) => total.sum = next,
            None => total.overflowed = true,
        }
        Ok(())
    }

    /// Merges into `total` a partial total: its `sum` of `count` rows, and whether it
    /// `overflowed`.
    #[inline]
    pub(super) fn merge(&self, total: &mut Total, sum: i128, count: i64, overflowed: bool) -> Result<()> {
        total.overflowed |= overflowed;
        self.add(total, sum, 1, count)
    }

    /// `totals` as the state arrays: the sums, the counts, whether each overflowed.
    pub(super) fn state_of(&self, totals: &[Total]) -> Result<Vec<ArrayRef>> {
        let sums: ArrayRef = match self.sum_type() {
            DataType::Decimal128(p, s) => Arc::new(
                totals.iter().map(|t| Some(t.sum)).collect::<Decimal128Array>().with_precision_and_scale(p, s)?,
            ),
            _ => Arc::new(totals.iter().map(|t| i64::try_from(t.sum).ok()).collect::<Int64Array>()),
        };
        let counts: ArrayRef = Arc::new(totals.iter().map(|t| t.count).collect::<Int64Array>());
        let overflowed: ArrayRef = Arc::new(totals.iter().map(|t| Some(t.overflowed)).collect::<BooleanArray>());
        Ok(vec![sums, counts, overflowed])
    }

    /// The sum as `DECIMAL(precision, scale)`, or the error (ANSI) or NULL where it does not fit
    /// (`None`: it overflowed).
    fn fitted(&self, value: Option<i128>, precision: u8, scale: i8) -> Result<Option<i128>> {
        let limit = POWERS_OF_TEN[usize::from(precision.min(38))];
        match value.filter(|v| v.abs() < limit) {
            Some(v) => Ok(Some(v)),
            None if self.mode == Mode::Ansi => Err(DataFusionError::Execution(format!(
                "[NUMERIC_VALUE_OUT_OF_RANGE] the {} does not fit in decimal({precision},{scale}); use 'try_{}' to tolerate overflow and return NULL instead, or `ansi = false`",
                self.name(),
                self.name(),
            ))),
            None => Ok(None),
        }
    }

    /// The aggregate's value of `total` (unscaled where it is a decimal), NULL where no row was
    /// added or the sum overflowed (the error in ANSI mode, for a decimal sum that does not fit).
    pub(super) fn value(&self, total: &Total, output: &DataType) -> Result<Option<i128>> {
        if total.count == 0 {
            return Ok(None);
        }
        if self.integral() {
            return Ok((!total.overflowed).then_some(total.sum));
        }
        let DataType::Decimal128(sum_precision, sum_scale) = self.sum_type() else { unreachable!("a decimal sum") };
        let sum = self.fitted((!total.overflowed).then_some(total.sum), sum_precision, sum_scale)?;
        let Kind::Avg { .. } = self.kind else { return Ok(sum) };
        let Some(sum) = sum else { return Ok(None) };
        // The exact quotient of the sum and the count, rounded half up to the average's scale.
        let quotient = super::decimal::exact(
            Op::Divide,
            Scaled(BigInt::from(sum), sum_scale),
            Scaled(BigInt::from(total.count), 0),
        );
        let DataType::Decimal128(precision, scale) = *output else { unreachable!("a decimal average") };
        self.fitted(i128::try_from(quotient.rescale(scale).0).ok(), precision, scale)
    }

    /// The values of `totals` as an array of `output`.
    pub(super) fn values(&self, totals: &[Total], output: &DataType) -> Result<ArrayRef> {
        let values = totals.iter().map(|t| self.value(t, output)).collect::<Result<Vec<_>>>()?;
        Ok(match output {
            DataType::Decimal128(p, s) => {
                Arc::new(values.into_iter().collect::<Decimal128Array>().with_precision_and_scale(*p, *s)?)
            }
            _ => Arc::new(values.into_iter().map(|v| v.and_then(|v| i64::try_from(v).ok())).collect::<Int64Array>()),
        })
    }
}

/// Calls `merge` with each row of the partial totals `states` (as [`SparkAggregate::state_of`]
/// writes them): the row, its sum (unscaled), its count, whether it overflowed.
pub(super) fn each_state(states: &[ArrayRef], merge: impl FnMut(usize, i128, i64, bool) -> Result<()>) -> Result<()> {
    fn each<T: ArrowPrimitiveType>(
        sums: &PrimitiveArray<T>,
        states: &[ArrayRef],
        widen: impl Fn(T::Native) -> i128,
        mut merge: impl FnMut(usize, i128, i64, bool) -> Result<()>,
    ) -> Result<()> {
        let (counts, overflowed) = (states[1].as_primitive::<Int64Type>().values(), states[2].as_boolean());
        let values = sums.values();
        for row in 0..counts.len() {
            let sum = if sums.is_null(row) { 0 } else { widen(values[row]) };
            merge(row, sum, counts[row], overflowed.value(row))?;
        }
        Ok(())
    }
    match states[0].data_type() {
        DataType::Decimal128(..) => each(states[0].as_primitive::<Decimal128Type>(), states, |v| v, merge),
        _ => each(states[0].as_primitive::<Int64Type>(), states, i128::from, merge),
    }
}

/// The aggregate over the rows of one group (a window's frame, an aggregate without groups).
#[derive(Debug)]
struct Running {
    aggregate: SparkAggregate,
    output: DataType,
    total: Total,
}

impl Running {
    /// The values of `batch` (the aggregate's input) added (`sign` 1) or taken away (-1).
    fn update(&mut self, batch: &ArrayRef, sign: i64) -> Result<()> {
        for v in unscaled(batch)?.into_iter().flatten() {
            self.aggregate.add(&mut self.total, v, sign, 1)?;
        }
        Ok(())
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
        let (aggregate, total) = (&self.aggregate, &mut self.total);
        each_state(states, |_, sum, count, overflowed| aggregate.merge(total, sum, count, overflowed))
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let arrays = self.aggregate.state_of(std::slice::from_ref(&self.total))?;
        arrays.iter().map(|a| ScalarValue::try_from_array(a, 0)).collect()
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        ScalarValue::try_from_array(&self.aggregate.values(std::slice::from_ref(&self.total), &self.output)?, 0)
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
