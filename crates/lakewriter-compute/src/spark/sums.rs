//! Spark's `SUM` (`org.apache.spark.sql.catalyst.expressions.aggregate.Sum`): of integers a
//! `BIGINT`, which without ANSI mode wraps around as the JVM's `long` does and in ANSI mode fails
//! where the total is outside it (`ARITHMETIC_OVERFLOW`); of a `DECIMAL(p, s)` a
//! `DECIMAL(p + 10, s)`, which fails (ANSI) or is NULL where the total does not fit.
//!
//! A total is added as DataFusion adds its own, in the native type that wraps around (`i64` for
//! integers, the `i128` unscaled value for decimals), and counts how often it wrapped (its
//! carry): the exact total is the total plus the carry times 2^64 (2^128). A total fits where it
//! never wrapped in all (carry 0) and, for a decimal, is within its precision. So a grouped `SUM`
//! costs about what DataFusion's does — one total and one carry per group, a batch added in one
//! pass (over DataFusion's [`NullState`]) — and the checks are made once, on the totals.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Int64Array, PrimitiveArray};
use datafusion::arrow::compute::kernels::boolean::not;
use datafusion::arrow::compute::{cast, nullif, prep_null_mask_filter};
use datafusion::arrow::datatypes::{ArrowPrimitiveType, DataType, Decimal128Type, Field, FieldRef, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl, EmitTo, GroupsAccumulator, Signature, Volatility};
use datafusion_functions_aggregate_common::aggregate::groups_accumulator::accumulate::NullState;

use super::arith::{Mode, spark_type_name};

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

/// A running total that wraps around: adding or taking away a value gives how it wrapped (up 1,
/// down -1, else 0).
trait Total: Copy + Default + Send + Sync + 'static {
    fn add(&mut self, value: Self) -> i64;
    fn sub(&mut self, value: Self) -> i64;
}

macro_rules! total {
    ($native:ty) => {
        impl Total for $native {
            fn add(&mut self, value: Self) -> i64 {
                let (total, wrapped) = self.overflowing_add(value);
                *self = total;
                match wrapped {
                    false => 0,
                    true if value < 0 => -1,
                    true => 1,
                }
            }

            fn sub(&mut self, value: Self) -> i64 {
                let (total, wrapped) = self.overflowing_sub(value);
                *self = total;
                match wrapped {
                    false => 0,
                    true if value < 0 => 1,
                    true => -1,
                }
            }
        }
    };
}
total!(i64);
total!(i128);

/// The Arrow type of a total: `BIGINT` or `DECIMAL(38, s)`.
trait Summed: ArrowPrimitiveType<Native: Total> + Send + std::fmt::Debug {}
impl Summed for Int64Type {}
impl Summed for Decimal128Type {}

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
            DataType::Decimal128(_, s) => DataType::Decimal128(38, *s),
            _ => DataType::Int64,
        }
    }

    /// `values` (the aggregate's input) as values of the total's native type: a decimal's
    /// unscaled values as they are (whatever their precision), an integer cast to a `BIGINT`.
    fn as_totals(&self, values: &ArrayRef) -> Result<ArrayRef> {
        match values.data_type() {
            DataType::Decimal128(..) | DataType::Int64 => Ok(Arc::clone(values)),
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

    /// The error of a sum that does not fit its type, in ANSI mode.
    fn overflow(&self) -> DataFusionError {
        DataFusionError::Execution(match self.output() {
            DataType::Decimal128(p, s) => format!(
                "[NUMERIC_VALUE_OUT_OF_RANGE] the sum does not fit in decimal({p},{s}); use 'try_sum' to tolerate overflow and return NULL instead, or `ansi = false`"
            ),
            output => format!(
                "[ARITHMETIC_OVERFLOW] long overflow in `sum`: the result is outside {}; use 'try_sum' to tolerate overflow and return NULL instead, or `ansi = false`",
                spark_type_name(&output)
            ),
        })
    }

    /// The sums of `totals` (an array of [`Self::total_type`], NULL where a group had no row)
    /// and their `carries`: a total as it is where it fits the sum's type (or wraps around);
    /// else the error in ANSI mode, or NULL.
    fn sums(&self, totals: &ArrayRef, carries: &[i64]) -> Result<ArrayRef> {
        if self.wraps() {
            return Ok(Arc::clone(totals));
        }
        let fits: Vec<bool> = match self.output() {
            DataType::Decimal128(p, _) => {
                let bound = POWERS_OF_TEN[usize::from(p)].unsigned_abs();
                let totals = totals.as_primitive::<Decimal128Type>().values();
                carries.iter().zip(totals).map(|(carry, total)| *carry == 0 && total.unsigned_abs() < bound).collect()
            }
            _ => carries.iter().map(|carry| *carry == 0).collect(),
        };
        let totals = if fits.iter().enumerate().all(|(i, fits)| *fits || totals.is_null(i)) {
            Arc::clone(totals)
        } else if self.mode == Mode::Ansi {
            return Err(self.overflow());
        } else {
            nullif(totals, &not(&BooleanArray::from(fits))?)?
        };
        Ok(match self.output() {
            DataType::Decimal128(p, s) => {
                Arc::new(totals.as_primitive::<Decimal128Type>().clone().with_precision_and_scale(p, s)?)
            }
            _ => totals,
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
        Ok(vec![
            Arc::new(Field::new(format!("{}[sum]", args.name), self.total_type(), true)),
            Arc::new(Field::new(format!("{}[carry]", args.name), DataType::Int64, true)),
        ])
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(match self.total_type() {
            DataType::Int64 => Box::new(Running::<Int64Type>::new(self.clone())),
            _ => Box::new(Running::<Decimal128Type>::new(self.clone())),
        })
    }

    fn groups_accumulator_supported(&self, _args: AccumulatorArgs) -> bool {
        true
    }

    fn create_groups_accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(match self.total_type() {
            DataType::Int64 => Box::new(Totals::<Int64Type>::new(self.clone())),
            _ => Box::new(Totals::<Decimal128Type>::new(self.clone())),
        })
    }
}

/// The sum of one group's rows (a window's frame, an aggregate without groups): its total and
/// carry, and how many rows (or partial totals) it holds, so that a frame left without rows is
/// NULL.
#[derive(Debug)]
struct Running<T: ArrowPrimitiveType> {
    sum: SparkSum,
    total: T::Native,
    carry: i64,
    rows: i64,
}

impl<T: Summed> Running<T> {
    fn new(sum: SparkSum) -> Self {
        Self { sum, total: T::Native::default(), carry: 0, rows: 0 }
    }

    /// The total as a scalar of the total's type, NULL where there is no row.
    fn total(&self) -> Result<ScalarValue> {
        ScalarValue::new_primitive::<T>((self.rows > 0).then_some(self.total), &self.sum.total_type())
    }
}

impl<T: Summed> Accumulator for Running<T> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for value in self.sum.as_totals(&values[0])?.as_primitive::<T>().iter().flatten() {
            self.rows += 1;
            self.carry += self.total.add(value);
        }
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for value in self.sum.as_totals(&values[0])?.as_primitive::<T>().iter().flatten() {
            self.rows -= 1;
            self.carry += self.total.sub(value);
        }
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let carries = states[1].as_primitive::<Int64Type>();
        for (total, carry) in states[0].as_primitive::<T>().iter().zip(carries.values()) {
            if let Some(total) = total {
                self.rows += 1;
                self.carry += self.total.add(total) + carry;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.total()?, ScalarValue::Int64(Some(self.carry))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        ScalarValue::try_from_array(&self.sum.sums(&self.total()?.to_array()?, &[self.carry])?, 0)
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}

/// The totals of every group, NULL where a group has seen no value, and the carries of those
/// that wrapped (few or none: kept apart, so that the others cost nothing more than DataFusion's).
#[derive(Debug)]
struct Totals<T: ArrowPrimitiveType> {
    sum: SparkSum,
    totals: Vec<T::Native>,
    carries: HashMap<usize, i64>,
    seen: NullState,
}

impl<T: Summed> Totals<T> {
    fn new(sum: SparkSum) -> Self {
        Self { sum, totals: Vec::new(), carries: HashMap::new(), seen: NullState::new() }
    }

    /// Adds `values` to the totals of their groups.
    fn add(
        &mut self,
        values: &ArrayRef,
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) {
        self.totals.resize(total_num_groups, T::Native::default());
        let (totals, carries) = (&mut self.totals, &mut self.carries);
        self.seen.accumulate(
            group_indices,
            values.as_primitive::<T>(),
            opt_filter,
            total_num_groups,
            |group, value| {
                let wrapped = totals[group].add(value);
                if wrapped != 0 {
                    *carries.entry(group).or_default() += wrapped;
                }
            },
        );
    }

    /// The totals of the groups `emit_to` names, and their carries, taken out.
    fn take(&mut self, emit_to: EmitTo) -> (ArrayRef, Vec<i64>) {
        let totals = emit_to.take_needed(&mut self.totals);
        let mut carries = vec![0; totals.len()];
        let rest = std::mem::take(&mut self.carries);
        for (group, carry) in rest {
            match group.checked_sub(totals.len()) {
                None => carries[group] = carry,
                Some(group) => _ = self.carries.insert(group, carry),
            }
        }
        let totals = PrimitiveArray::<T>::new(totals.into(), self.seen.build(emit_to));
        (Arc::new(totals.with_data_type(self.sum.total_type())), carries)
    }
}

impl<T: Summed> GroupsAccumulator for Totals<T> {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        let values = self.sum.as_totals(&values[0])?;
        self.add(&values, group_indices, opt_filter, total_num_groups);
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef], group_indices: &[usize], total_num_groups: usize) -> Result<()> {
        self.add(&states[0], group_indices, None, total_num_groups);
        for (group, carry) in group_indices.iter().zip(states[1].as_primitive::<Int64Type>().values()) {
            if *carry != 0 {
                *self.carries.entry(*group).or_default() += carry;
            }
        }
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let (totals, carries) = self.take(emit_to);
        self.sum.sums(&totals, &carries)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let (totals, carries) = self.take(emit_to);
        Ok(vec![totals, Arc::new(Int64Array::from(carries))])
    }

    /// Each row as a state of its own: its value (NULL where it is filtered out), carry 0.
    fn convert_to_state(&self, values: &[ArrayRef], opt_filter: Option<&BooleanArray>) -> Result<Vec<ArrayRef>> {
        // Of the state's type (a decimal's precision as the total's).
        let totals = self.sum.as_totals(&values[0])?;
        let mut totals: ArrayRef = Arc::new(totals.as_primitive::<T>().clone().with_data_type(self.sum.total_type()));
        if let Some(filter) = opt_filter {
            totals = nullif(&totals, &not(&prep_null_mask_filter(filter))?)?;
        }
        let carries = Int64Array::from(vec![0; totals.len()]);
        Ok(vec![totals, Arc::new(carries)])
    }

    fn size(&self) -> usize {
        self.totals.capacity() * size_of::<T::Native>()
            + self.carries.capacity() * size_of::<(usize, i64)>()
            + self.seen.size()
    }
}

#[cfg(test)]
mod tests;
