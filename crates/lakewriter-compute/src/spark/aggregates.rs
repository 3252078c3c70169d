//! Spark's `SUM` and `AVG` (`Sum`, `Average` in `org.apache.spark.sql.catalyst.expressions.
//! aggregate`) where DataFusion's answer differs: `SUM` of integers and decimals is
//! [`super::sums::SparkSum`]; the `AVG` of a `DECIMAL(p, s)` is a `DECIMAL(p + 4, s + 4)`, the
//! exact quotient of the sum (a `DECIMAL(p + 10, s)`, which fails in ANSI mode or is NULL where it
//! does not fit) and the count rounded half up. Any other `AVG` is DataFusion's (a `DOUBLE`, as
//! Spark's). Its running [`Total`] is kept by one accumulator for a single group and by [`Totals`]
//! for many groups at once.

use std::sync::Arc;

use bigdecimal::num_bigint::BigInt;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Int64Array};
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Field, FieldRef, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, EmitTo, GroupsAccumulator, Signature, Volatility,
};

use super::arith::{Mode, Op};
use super::decimal::Scaled;
use super::sums::{POWERS_OF_TEN, SparkSum};

/// The aggregate Spark computes for the call `name(x)`, `x` of type `input`, where it is not
/// the one planned.
pub(crate) fn spark(name: &str, input: &DataType, mode: Mode) -> Option<Arc<AggregateUDF>> {
    let (precision, scale) = match (name, input) {
        ("sum", t) if t.is_integer() || matches!(t, DataType::Decimal128(..)) => {
            return Some(Arc::new(AggregateUDF::new_from_impl(SparkSum::new(t.clone(), mode))));
        }
        ("avg", DataType::Decimal128(p, s)) => (*p, *s),
        // DataFusion's, which computes a `DOUBLE` as Spark does (and honours FILTER and frames).
        ("avg", _) => return Some(datafusion::functions_aggregate::average::avg_udaf()),
        _ => return None,
    };
    Some(Arc::new(AggregateUDF::new_from_impl(SparkAverage {
        precision,
        scale,
        mode,
        signature: Signature::any(1, Volatility::Immutable),
    })))
}

/// `AVG` of a `DECIMAL(precision, scale)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SparkAverage {
    precision: u8,
    scale: i8,
    mode: Mode,
    signature: Signature,
}

impl SparkAverage {
    /// The type of the running sum.
    fn sum_type(&self) -> DataType {
        DataType::Decimal128((self.precision + 10).min(38), self.scale)
    }
}

impl AggregateUDFImpl for SparkAverage {
    fn name(&self) -> &'static str {
        "avg"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Decimal128((self.precision + 4).min(38), (self.scale + 4).min(38)))
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
        Ok(Box::new(Totals::new(self.clone(), args.return_field.data_type().clone())))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(format!("{}[sum]", args.name), self.sum_type(), true)),
            Arc::new(Field::new(format!("{}[count]", args.name), DataType::Int64, false)),
            Arc::new(Field::new(format!("{}[overflowed]", args.name), DataType::Boolean, false)),
        ])
    }
}

/// One group's running sum, unscaled in an `i128`, with the rows counted and whether it
/// overflowed.
#[derive(Debug, Clone, Copy, Default)]
struct Total {
    sum: i128,
    count: i64,
    overflowed: bool,
}

impl Total {
    /// Adds (`sign` 1) or takes away (-1) `value`, the sum of `count` rows.
    #[inline]
    fn add(&mut self, value: i128, sign: i64, count: i64) {
        self.count += sign * count;
        match if sign > 0 { self.sum.checked_add(value) } else { self.sum.checked_sub(value) } {
            Some(next) => self.sum = next,
            None => self.overflowed = true,
        }
    }

    /// Merges a partial total: its `sum` of `count` rows, and whether it `overflowed`.
    #[inline]
    fn merge(&mut self, sum: i128, count: i64, overflowed: bool) {
        self.overflowed |= overflowed;
        self.add(sum, 1, count);
    }
}

impl SparkAverage {
    /// `totals` as the state arrays: the sums, the counts, whether each overflowed.
    fn state_of(&self, totals: &[Total]) -> Result<Vec<ArrayRef>> {
        let DataType::Decimal128(p, s) = self.sum_type() else { unreachable!("a decimal sum") };
        let sums = totals.iter().map(|t| Some(t.sum)).collect::<Decimal128Array>().with_precision_and_scale(p, s)?;
        let counts = totals.iter().map(|t| t.count).collect::<Int64Array>();
        let overflowed = totals.iter().map(|t| Some(t.overflowed)).collect::<BooleanArray>();
        Ok(vec![Arc::new(sums), Arc::new(counts), Arc::new(overflowed)])
    }

    /// `value` as `DECIMAL(precision, scale)`, or the error (ANSI) or NULL where it does not fit
    /// (`None`: it overflowed).
    fn fitted(&self, value: Option<i128>, precision: u8, scale: i8) -> Result<Option<i128>> {
        let limit = POWERS_OF_TEN[usize::from(precision.min(38))];
        match value.filter(|v| v.abs() < limit) {
            Some(v) => Ok(Some(v)),
            None if self.mode == Mode::Ansi => Err(DataFusionError::Execution(format!(
                "[NUMERIC_VALUE_OUT_OF_RANGE] the avg does not fit in decimal({precision},{scale}); use 'try_avg' to tolerate overflow and return NULL instead, or `ansi = false`"
            ))),
            None => Ok(None),
        }
    }

    /// The average of `total`, unscaled: NULL where no row was added, or where the sum or the
    /// average does not fit (the error in ANSI mode).
    fn value(&self, total: &Total, output: &DataType) -> Result<Option<i128>> {
        if total.count == 0 {
            return Ok(None);
        }
        let DataType::Decimal128(sum_precision, sum_scale) = self.sum_type() else { unreachable!("a decimal sum") };
        let Some(sum) = self.fitted((!total.overflowed).then_some(total.sum), sum_precision, sum_scale)? else {
            return Ok(None);
        };
        // The exact quotient of the sum and the count, rounded half up to the average's scale.
        let quotient = super::decimal::exact(
            Op::Divide,
            Scaled(BigInt::from(sum), sum_scale),
            Scaled(BigInt::from(total.count), 0),
        );
        let DataType::Decimal128(precision, scale) = *output else { unreachable!("a decimal average") };
        self.fitted(i128::try_from(quotient.rescale(scale).0).ok(), precision, scale)
    }

    /// The averages of `totals` as an array of `output`.
    fn values(&self, totals: &[Total], output: &DataType) -> Result<ArrayRef> {
        let values = totals.iter().map(|t| self.value(t, output)).collect::<Result<Vec<_>>>()?;
        let DataType::Decimal128(p, s) = *output else { unreachable!("a decimal average") };
        Ok(Arc::new(values.into_iter().collect::<Decimal128Array>().with_precision_and_scale(p, s)?))
    }
}

/// Calls `merge` with each row of the partial totals `states` (as [`SparkAverage::state_of`]
/// writes them): the row, its sum (unscaled), its count, whether it overflowed.
fn each_state(states: &[ArrayRef], mut merge: impl FnMut(usize, i128, i64, bool)) {
    let (sums, counts, overflowed) = (
        states[0].as_primitive::<Decimal128Type>(),
        states[1].as_primitive::<Int64Type>().values(),
        states[2].as_boolean(),
    );
    for row in 0..counts.len() {
        let sum = if sums.is_null(row) { 0 } else { sums.value(row) };
        merge(row, sum, counts[row], overflowed.value(row));
    }
}

/// The average over the rows of one group (a window's frame, an aggregate without groups).
#[derive(Debug)]
struct Running {
    aggregate: SparkAverage,
    output: DataType,
    total: Total,
}

impl Running {
    /// The values of `batch` (the aggregate's input, a decimal) added (`sign` 1) or taken away
    /// (-1).
    fn update(&mut self, batch: &ArrayRef, sign: i64) {
        for v in batch.as_primitive::<Decimal128Type>().iter().flatten() {
            self.total.add(v, sign, 1);
        }
    }
}

impl Accumulator for Running {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.update(&values[0], 1);
        Ok(())
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.update(&values[0], -1);
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let total = &mut self.total;
        each_state(states, |_, sum, count, overflowed| total.merge(sum, count, overflowed));
        Ok(())
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

/// The averages of many groups at once: one [`Total`] per group, each batch's values added group
/// by group — a grouped average over half a million groups costs what DataFusion's does, not an
/// accumulator per group.
#[derive(Debug)]
struct Totals {
    aggregate: SparkAverage,
    output: DataType,
    totals: Vec<Total>,
}

impl Totals {
    fn new(aggregate: SparkAverage, output: DataType) -> Self {
        Self { aggregate, output, totals: Vec::new() }
    }
}

/// Whether row `row` passes the aggregate's FILTER (none: every row does).
fn kept(filter: Option<&BooleanArray>, row: usize) -> bool {
    filter.is_none_or(|f| f.is_valid(row) && f.value(row))
}

impl GroupsAccumulator for Totals {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.totals.resize(total_num_groups, Total::default());
        let values = values[0].as_primitive::<Decimal128Type>();
        for (row, &group) in group_indices.iter().enumerate() {
            if values.is_valid(row) && kept(opt_filter, row) {
                self.totals[group].add(values.value(row), 1, 1);
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, values: &[ArrayRef], group_indices: &[usize], total_num_groups: usize) -> Result<()> {
        self.totals.resize(total_num_groups, Total::default());
        let totals = &mut self.totals;
        each_state(values, |row, sum, count, overflowed| totals[group_indices[row]].merge(sum, count, overflowed));
        Ok(())
    }

    /// Each row's value as a group's state of its own.
    fn convert_to_state(&self, values: &[ArrayRef], opt_filter: Option<&BooleanArray>) -> Result<Vec<ArrayRef>> {
        let values = values[0].as_primitive::<Decimal128Type>();
        let mut totals = vec![Total::default(); values.len()];
        for (row, total) in totals.iter_mut().enumerate() {
            if values.is_valid(row) && kept(opt_filter, row) {
                total.add(values.value(row), 1, 1);
            }
        }
        self.aggregate.state_of(&totals)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        self.aggregate.values(&emit_to.take_needed(&mut self.totals), &self.output)
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.aggregate.state_of(&emit_to.take_needed(&mut self.totals))
    }

    fn size(&self) -> usize {
        self.totals.capacity() * std::mem::size_of::<Total>() + std::mem::size_of_val(self)
    }
}
