//! Where a keyed write looks its source's keys up in the table: the partitions its keys name,
//! `append_dedup`'s `dedup_window`, and the files of its keys by `cluster_by`.

use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::cast;
use datafusion::prelude::{Expr, lit};
use lakewriter_compute::KeyedSource;
use lakewriter_delta::ranges::{Range, order};

use super::Keyed;
use crate::RunError;
use crate::write::Attempt;

/// The table's side of a keyed write's join and merge, as the scope's columns are qualified.
const TABLE: &str = "t";
/// The source's side of a keyed write's join and merge.
const SOURCE: &str = "s";

/// Where a keyed write looks each source row's key up.
#[derive(Default)]
pub(super) struct Scope {
    /// The table's rows the source's keys can be among, a filter over `t`; `None`: every row.
    pub(super) rows: Option<Expr>,
    /// What a row of a source row's key must meet besides to match it, over `t` and `s`.
    pub(super) matches: Option<Expr>,
}

impl Keyed {
    /// Where the source's keys are looked for (see [`Scope`]): the partitions of the source's keys
    /// where the key holds partition columns (a key's row is in the partition its key names), the
    /// `dedup_window`, and the files of the source's keys by `cluster_by`. Nothing narrows it
    /// where there is no table.
    pub(super) async fn scope(&self, attempt: &Attempt<'_>, source: &KeyedSource) -> Result<Scope, RunError> {
        let Some(shape) = attempt.shape().await? else { return Ok(Scope::default()) };
        let partitions = self.partitions(attempt, source, &shape.partition_columns).await?;
        let (window, matches) = match self.window(attempt, &shape.schema, source).await? {
            Some((rows, matches)) => (Some(rows), Some(matches)),
            None => (None, None),
        };
        let clustered = self.clustered(attempt, source).await?;
        Ok(Scope { rows: partitions.into_iter().chain(window).chain(clustered).reduce(Expr::and), matches })
    }

    /// Where the job's `cluster_by` starts with a column of the key: the rows of the files whose
    /// range of that column holds a key of the source, as `t.c BETWEEN min AND max OR …` over
    /// those ranges, overlapping ones joined (a row of the source's key is in a file whose range
    /// holds it). `FALSE` where no file's range holds one; `None` where the table's files record
    /// no ranges of it.
    async fn clustered(&self, attempt: &Attempt<'_>, source: &KeyedSource) -> Result<Option<Expr>, RunError> {
        let Some(name) = attempt.run.job.spec.cluster_by.first().filter(|c| self.key.contains(c)) else {
            return Ok(None);
        };
        let Some(ranges) = attempt.ranges(name).await? else { return Ok(None) };
        let Some(data_type) = ranges.first().map(|(min, _)| min.data_type()) else { return Ok(Some(lit(false))) };
        let mut keys = Vec::new();
        for value in source.distinct_values(attempt.lake.ctx, name).await? {
            match value.cast_to(&data_type) {
                Ok(key) if !key.is_null() => keys.push(key),
                Ok(_) => {}
                // A key the table's column cannot hold is in no file: the merge fails on it.
                Err(_) => return Ok(None),
            }
        }
        keys.sort_by(order);
        let column = Expr::Column(datafusion::common::Column::new(Some(TABLE), name.as_str()));
        let filter = touched(ranges, &keys)
            .into_iter()
            .map(|(min, max)| column.clone().between(lit(min), lit(max)))
            .reduce(Expr::or)
            .unwrap_or_else(|| lit(false));
        Ok(Some(filter))
    }

    /// `column IN (…)` for each partition column of the key, over the values the source holds.
    async fn partitions(
        &self,
        attempt: &Attempt<'_>,
        source: &KeyedSource,
        partition_columns: &[String],
    ) -> Result<Option<Expr>, RunError> {
        let columns: Vec<&String> = self.key.iter().filter(|k| partition_columns.contains(k)).collect();
        if columns.is_empty() {
            return Ok(None);
        }
        let ctx = attempt.lake.ctx;
        let mut filters = Vec::new();
        for name in columns {
            let values = source.distinct_values(ctx, name).await?;
            let column = Expr::Column(datafusion::common::Column::new(Some(TABLE), name.as_str()));
            filters.push(column.in_list(values.into_iter().map(lit).collect(), false));
        }
        Ok(filters.into_iter().reduce(Expr::and))
    }

    /// The `dedup_window`: a source row's key is looked for among the table's rows whose window
    /// column is within the window's days of the source row's own value in it (a NULL matching a
    /// NULL) — the condition over `t` and `s` a match must meet —, so that a rerun finds its own
    /// rows whatever day they are of; and the table is read only around the values the source
    /// holds — the filter over `t`. `None` without a window. The window's column must be a date
    /// or a timestamp (read as its date), in the table and in the job's result.
    async fn window(
        &self,
        attempt: &Attempt<'_>,
        table: &Schema,
        source: &KeyedSource,
    ) -> Result<Option<(Expr, Expr)>, RunError> {
        let Some(window) = &self.window else { return Ok(None) };
        let name = &window.column;
        let refuse = |why: String| {
            RunError::Setup(crate::Error::Usage(format!(
                "job `{}`: dedup_window_column `{name}` {why}",
                attempt.run.job.spec.name
            )))
        };
        let as_date = |side: &str, data_type: &DataType| {
            let column = Expr::Column(datafusion::common::Column::new(Some(side), name));
            match data_type {
                DataType::Date32 => Ok(column),
                DataType::Timestamp(..) | DataType::Date64 => Ok(cast(column, DataType::Date32)),
                other => Err(format!("is {other}: the window counts days in a date or a timestamp column")),
            }
        };
        let field = table.field_with_name(name).map_err(|_| refuse("is not a column of the table".into()))?;
        let t = as_date(TABLE, field.data_type()).map_err(refuse)?;
        let field = source
            .held
            .schema
            .field_with_name(name)
            .map_err(|_| refuse("is not a column of the job's result".into()))?;
        let s = as_date(SOURCE, field.data_type()).map_err(refuse)?;
        let days = i64::from(window.days);
        let day = |date: Expr| cast(date, DataType::Int32);
        let near = day(t.clone()).between(day(s.clone()) - lit(days), day(s.clone()) + lit(days));
        let matches = near.or(t.clone().is_null().and(s.is_null()));
        let mut values = Vec::new();
        for value in source.distinct_values(attempt.lake.ctx, name).await? {
            match value.cast_to(&DataType::Date32) {
                Ok(ScalarValue::Date32(day)) => values.push(day),
                _ => return Err(refuse(format!("holds `{value}`, which is not a date"))),
            }
        }
        let nulls = values.contains(&None);
        let mut days_held: Vec<i32> = values.into_iter().flatten().collect();
        days_held.sort_unstable();
        let date = |d: i32| lit(ScalarValue::Date32(Some(d)));
        let rows = around(&days_held, window.days)
            .into_iter()
            .map(|(from, to)| t.clone().between(date(from), date(to)))
            .chain(nulls.then(|| t.clone().is_null()))
            .reduce(Expr::or)
            .unwrap_or_else(|| lit(false));
        Ok(Some((rows, matches)))
    }
}

/// The ranges a merge's scope names at most: more touched files are named by wider ranges, each
/// joining neighbours (widening a scope is safe: it only reads more), so that the filter stays a
/// short expression.
pub(super) const MAX_RANGES: usize = 64;

/// The ranges among `ranges` that hold one of `keys` (sorted), in order, overlapping ones joined
/// into one, and neighbours joined where there would be more than [`MAX_RANGES`].
pub(super) fn touched(mut ranges: Vec<Range>, keys: &[ScalarValue]) -> Vec<Range> {
    use std::cmp::Ordering;
    ranges.retain(|(min, max)| {
        let first = keys.partition_point(|k| order(k, min) == Ordering::Less);
        keys.get(first).is_some_and(|k| order(k, max) != Ordering::Greater)
    });
    ranges.sort_by(|a, b| order(&a.0, &b.0));
    let mut joined: Vec<Range> = Vec::new();
    for (min, max) in ranges {
        match joined.last_mut() {
            Some(last) if order(&min, &last.1) != Ordering::Greater => {
                if order(&max, &last.1) == Ordering::Greater {
                    last.1 = max;
                }
            }
            _ => joined.push((min, max)),
        }
    }
    if joined.len() <= MAX_RANGES {
        return joined;
    }
    // The ranges are apart and in order: a chunk of neighbours spans its first's start to its
    // last's end.
    joined
        .chunks(joined.len().div_ceil(MAX_RANGES))
        .map(|chunk| (chunk[0].0.clone(), chunk[chunk.len() - 1].1.clone()))
        .collect()
}

/// The days within `window` days of one of `days` (sorted), as ranges of days from and to, in
/// order, those that overlap or touch joined, and neighbours joined where there would be more
/// than [`MAX_RANGES`] (a wider range only reads more).
pub(super) fn around(days: &[i32], window: u32) -> Vec<(i32, i32)> {
    let window = i32::try_from(window).unwrap_or(i32::MAX);
    let mut joined: Vec<(i32, i32)> = Vec::new();
    for &day in days {
        let (from, to) = (day.saturating_sub(window), day.saturating_add(window));
        match joined.last_mut() {
            Some(last) if from <= last.1.saturating_add(1) => last.1 = last.1.max(to),
            _ => joined.push((from, to)),
        }
    }
    if joined.len() <= MAX_RANGES {
        return joined;
    }
    joined.chunks(joined.len().div_ceil(MAX_RANGES)).map(|chunk| (chunk[0].0, chunk[chunk.len() - 1].1)).collect()
}
