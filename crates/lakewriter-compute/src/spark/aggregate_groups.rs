//! Spark's `AVG` of decimals (see `aggregates`) over many groups at once: one [`Total`] per
//! group, each batch's values added group by group — a grouped average over half a million
//! groups costs what DataFusion's does, not an accumulator per group.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use datafusion::arrow::datatypes::{DataType, Decimal128Type};
use datafusion::common::Result;
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};

use super::aggregates::{SparkAverage, Total, each_state};

/// The totals of every group.
#[derive(Debug)]
pub(super) struct Totals {
    aggregate: SparkAverage,
    output: DataType,
    totals: Vec<Total>,
}

impl Totals {
    pub(super) fn new(aggregate: SparkAverage, output: DataType) -> Self {
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
