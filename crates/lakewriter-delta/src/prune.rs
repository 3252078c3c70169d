//! Which live files of a table a filter can match, from what the log records of each: its
//! partition values and its statistics (a column's minimum, maximum and NULL count, and the
//! file's rows). DataFusion's `PruningPredicate` reads them as it reads a Parquet file's row
//! groups. A value the log does not record — a column the statistics skip, or a type whose recorded
//! bounds are not true bounds (see [`crate::ranges`]) — keeps the file.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use datafusion::arrow::datatypes::Schema;
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, ScalarValue};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::pruning::PruningPredicateBuilder;
use serde_json::Value;

use crate::files::Live;

/// The files among `files` (of a table of the columns `schema`, partitioned by
/// `partition_columns`) that rows matching `predicate` (over `schema`) can be in, in their order.
/// Every file where the predicate cannot be read against statistics, or is always true.
pub(crate) fn matching<'a>(
    files: Vec<(&'a String, &'a Live)>,
    schema: &Arc<Schema>,
    partition_columns: &[String],
    predicate: Arc<dyn PhysicalExpr>,
) -> Vec<(&'a String, &'a Live)> {
    let Some(pruning) = PruningPredicateBuilder::new().with_file_schema(schema.clone()).build(predicate) else {
        return files;
    };
    let stats = Stats {
        stats: files.iter().map(|(_, live)| live.stats.as_deref().and_then(|s| serde_json::from_str(s).ok())).collect(),
        files: &files,
        schema,
        partition_columns,
    };
    match pruning.prune(&stats) {
        Ok(keep) => files.iter().zip(keep).filter(|(_, keep)| *keep).map(|(file, _)| *file).collect(),
        Err(e) => {
            tracing::debug!(error = %e, "cannot prune the table's files by their statistics; reading every one");
            files
        }
    }
}

/// A file's value of the partition column `column`; `None` for NULL (which the protocol also
/// reads an empty value as).
fn partition_value<'a>(live: &'a Live, column: &str) -> Option<&'a str> {
    live.partition_values.get(column)?.as_deref().filter(|v| !v.is_empty())
}

/// The statistics of a list of files, as `PruningPredicate` asks for them.
struct Stats<'a> {
    files: &'a [(&'a String, &'a Live)],
    /// Each file's statistics, parsed.
    stats: Vec<Option<Value>>,
    schema: &'a Schema,
    partition_columns: &'a [String],
}

impl Stats<'_> {
    /// Each file's value of `column` from its partition values (where it is a partition column)
    /// or from its statistics under `key` (`minValues`, `maxValues`); `None` where no file records
    /// one.
    fn bounds(&self, column: &Column, key: &str) -> Option<ArrayRef> {
        let data_type = self.schema.field_with_name(&column.name).ok()?.data_type();
        let unknown = ScalarValue::try_from(data_type).ok()?;
        let partition = self.partition_columns.contains(&column.name);
        let values: Vec<ScalarValue> = self
            .files
            .iter()
            .zip(&self.stats)
            .map(|((_, live), stats)| {
                let value = if partition {
                    partition_value(live, &column.name)
                        .and_then(|v| ScalarValue::try_from_string(v.to_owned(), data_type).ok())
                } else {
                    stats.as_ref().and_then(|s| crate::ranges::bound(s.get(key)?.get(&column.name)?, data_type))
                };
                value.unwrap_or_else(|| unknown.clone())
            })
            .collect();
        if values.iter().all(ScalarValue::is_null) {
            return None;
        }
        ScalarValue::iter_to_array(values).ok()
    }
}

/// A file's rows, as its statistics record them.
fn records(stats: Option<&Value>) -> Option<u64> {
    stats?.get("numRecords")?.as_u64()
}

impl PruningStatistics for Stats<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bounds(column, "minValues")
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bounds(column, "maxValues")
    }

    fn num_containers(&self) -> usize {
        self.files.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        let partition = self.partition_columns.contains(&column.name);
        let counts: UInt64Array = self
            .files
            .iter()
            .zip(&self.stats)
            .map(|((_, live), stats)| {
                if partition {
                    match partition_value(live, &column.name) {
                        Some(_) => Some(0),
                        None => records(stats.as_ref()),
                    }
                } else {
                    stats.as_ref()?.get("nullCount")?.get(&column.name)?.as_u64()
                }
            })
            .collect();
        Some(Arc::new(counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        let counts: UInt64Array = self.stats.iter().map(|s| records(s.as_ref())).collect();
        Some(Arc::new(counts))
    }

    /// For a partition column, whether each file's value is among `values` (a file holds one
    /// value of it, or NULL); unknown for any other column.
    fn contained(&self, column: &Column, values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        if !self.partition_columns.contains(&column.name) {
            return None;
        }
        let data_type = self.schema.field_with_name(&column.name).ok()?.data_type();
        let contained = self.files.iter().map(|(_, live)| match partition_value(live, &column.name) {
            None => Some(false),
            Some(value) => ScalarValue::try_from_string(value.to_owned(), data_type).ok().map(|v| values.contains(&v)),
        });
        Some(contained.collect())
    }
}
