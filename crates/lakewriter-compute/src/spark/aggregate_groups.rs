//! Spark's `SUM` and `AVG` (see `aggregates`) over many groups at once: one [`Total`] per group,
//! each batch's values added group by group, as DataFusion's own `SUM` does — a grouped aggregate
//! over half a million groups a day costs what DataFusion's does, not an accumulator per group.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, PrimitiveArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{ArrowPrimitiveType, DataType, Decimal128Type, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};

use super::aggregates::{SparkAggregate, Total, each_state, unscaled};

/// The totals of every group.
#[derive(Debug)]
pub(super) struct Totals {
    aggregate: SparkAggregate,
    output: DataType,
    totals: Vec<Total>,
}

impl Totals {
    pub(super) fn new(aggregate: SparkAggregate, output: DataType) -> Self {
        Self { aggregate, output, totals: Vec::new() }
    }
}

impl Totals {
    /// Adds each value of `array` (each as `widen` makes it an unscaled `i128`) to its group's
    /// total, but NULLs and the rows the FILTER leaves out.
    fn add_all<T: ArrowPrimitiveType>(
        &mut self,
        array: &PrimitiveArray<T>,
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        widen: impl Fn(T::Native) -> i128,
    ) -> Result<()> {
        let values = array.values();
        for (row, &group) in group_indices.iter().enumerate() {
            if array.is_null(row) || !kept(opt_filter, row) {
                continue;
            }
            self.aggregate.add(&mut self.totals[group], widen(values[row]), 1, 1)?;
        }
        Ok(())
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
        let values = &values[0];
        if let DataType::Decimal128(..) = values.data_type() {
            return self.add_all(values.as_primitive::<Decimal128Type>(), group_indices, opt_filter, |v| v);
        }
        let longs = cast(values, &DataType::Int64)?;
        self.add_all(longs.as_primitive::<Int64Type>(), group_indices, opt_filter, i128::from)
    }

    fn merge_batch(&mut self, values: &[ArrayRef], group_indices: &[usize], total_num_groups: usize) -> Result<()> {
        self.totals.resize(total_num_groups, Total::default());
        let (aggregate, totals) = (&self.aggregate, &mut self.totals);
        each_state(values, |row, sum, count, overflowed| {
            aggregate.merge(&mut totals[group_indices[row]], sum, count, overflowed)
        })
    }

    /// Each row's value as a group's state of its own.
    fn convert_to_state(&self, values: &[ArrayRef], opt_filter: Option<&BooleanArray>) -> Result<Vec<ArrayRef>> {
        let mut totals = Vec::with_capacity(values[0].len());
        for (row, value) in unscaled(&values[0])?.into_iter().enumerate() {
            let mut total = Total::default();
            if let Some(value) = value.filter(|_| kept(opt_filter, row)) {
                self.aggregate.add(&mut total, value, 1, 1)?;
            }
            totals.push(total);
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
