//! `merge` and `append_dedup`: the result is a keyed source — validated, deduplicated (per key
//! the newest row wins) — classified against the table row by row, then merged on its key. A
//! source that changes no row commits at most the partition's new state.

use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::cast;
use datafusion::prelude::{DataFrame, Expr, lit};
use lakewriter_compute::date_literal;
use lakewriter_compute::{KeyedCounts, KeyedSource, KeyedSpec, keyed};
use lakewriter_core::DedupWindow;
use lakewriter_core::{CheckKind, OnDuplicateKeys, WriteMode};
use lakewriter_delta::ranges::{Range, order};
use lakewriter_delta::{Committed, MergeSpec, Target};

use super::{Attempt, Mode};
use crate::result::Computed;
use crate::{Changes, DryRun, PartitionReport, RunError};

/// The table's side of a keyed write's join and merge, as the scope's columns are qualified.
const TABLE: &str = "t";

#[derive(Debug)]
pub(crate) struct Keyed {
    mode: WriteMode,
    key: Vec<String>,
    /// `merge`: the column whose greatest value wins; `None`: an `append_dedup`.
    newer_by: Option<String>,
    delete_when: Option<String>,
    duplicates_are_errors: bool,
    /// `append_dedup`'s `dedup_window`.
    window: Option<DedupWindow>,
}

impl Keyed {
    /// A job's `merge` on `key`, the newest row by `newer_by` winning.
    pub(super) fn merge(
        key: &[String],
        newer_by: &str,
        on_duplicate_keys: OnDuplicateKeys,
        delete_when: Option<&str>,
    ) -> Self {
        Self {
            mode: WriteMode::Merge,
            key: key.to_vec(),
            newer_by: Some(newer_by.to_owned()),
            delete_when: delete_when.map(str::to_owned),
            duplicates_are_errors: on_duplicate_keys == OnDuplicateKeys::Error,
            window: None,
        }
    }

    /// A job's `append_dedup` on `key`, within `window` where it has one.
    pub(super) fn append_dedup(key: &[String], window: Option<DedupWindow>) -> Self {
        Self {
            mode: WriteMode::AppendDedup,
            key: key.to_vec(),
            newer_by: None,
            delete_when: None,
            duplicates_are_errors: false,
            window,
        }
    }

    fn spec(&self) -> KeyedSpec<'_> {
        KeyedSpec {
            key: &self.key,
            newer_by: self.newer_by.as_deref(),
            delete_when: self.delete_when.as_deref(),
            duplicates_are_errors: self.duplicates_are_errors,
            fill: None,
            scope: None,
        }
    }

    /// The table's rows the source's keys can be among, as a filter over them (the columns
    /// qualified by `t`, the table's side of the merge): the partitions of the source's keys where the key
    /// holds partition columns (a key's row is in the partition its key names), and the
    /// `dedup_window`. `None` where nothing narrows it, or there is no table.
    async fn scope(&self, attempt: &Attempt<'_>, source: &KeyedSource) -> Result<Option<Expr>, RunError> {
        let Some(shape) = attempt.runner.shape_at(attempt.table()).await? else { return Ok(None) };
        let partitions = self.partitions(attempt, source, &shape.partition_columns).await?;
        let window = self.window(attempt, &shape.schema).map_err(|e| *e)?;
        let clustered = self.clustered(attempt, source).await?;
        Ok(partitions.into_iter().chain(window).chain(clustered).reduce(Expr::and))
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
        let Some(ranges) = attempt.runner.ranges_at(attempt.table(), name).await? else { return Ok(None) };
        let Some(data_type) = ranges.first().map(|(min, _)| min.data_type()) else { return Ok(Some(lit(false))) };
        let mut keys = Vec::new();
        for value in source.distinct_values(attempt.runner.session(), name).await? {
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
        let ctx = attempt.runner.session();
        let mut filters = Vec::new();
        for name in columns {
            let values = source.distinct_values(ctx, name).await?;
            let column = Expr::Column(datafusion::common::Column::new(Some(TABLE), name.as_str()));
            filters.push(column.in_list(values.into_iter().map(lit).collect(), false));
        }
        Ok(filters.into_iter().reduce(Expr::and))
    }

    /// The `dedup_window` around the attempt's day as a filter over the rows of `table`, the
    /// columns qualified by `t`; `None` without a window. The window's column
    /// must be a date or a timestamp (read as its date).
    fn window(&self, attempt: &Attempt<'_>, table: &Schema) -> Result<Option<Expr>, Box<RunError>> {
        let Some(window) = &self.window else { return Ok(None) };
        let Some(dt) = attempt.run.unit.dt else { return Err(Box::new(attempt.no_date())) };
        let name = &window.column;
        let refuse = |why: String| {
            Box::new(RunError::Setup(crate::Error::Usage(format!(
                "job `{}`: dedup_window_column `{name}` {why}",
                attempt.run.job.spec.name
            ))))
        };
        let field = table.field_with_name(name).map_err(|_| refuse("is not a column of the table".into()))?;
        let column = Expr::Column(datafusion::common::Column::new(Some(TABLE), name));
        let column = match field.data_type() {
            DataType::Date32 => column,
            DataType::Timestamp(..) | DataType::Date64 => cast(column, DataType::Date32),
            other => return Err(refuse(format!("is {other}: the window counts days in a date or a timestamp column"))),
        };
        let days = chrono::Days::new(u64::from(window.days));
        let (from, to) = (dt - days, dt + days);
        Ok(Some(column.between(lit(date_literal(from)), lit(date_literal(to)))))
    }

    /// The keyed source this mode's [`Mode::compute`] made.
    fn source(computed: Computed) -> Result<KeyedSource, Box<crate::Error>> {
        match computed {
            Computed::Keyed(source) => Ok(source),
            Computed::Streamed(_) | Computed::Held(_) => {
                Err(Box::new(crate::Error::Usage("a keyed write computes a keyed source".into())))
            }
        }
    }

    /// Checks the source's columns against the table's, then finds the [scope](Self::scope) the
    /// write reads the table in (over `t`).
    async fn scoped(&self, attempt: &Attempt<'_>, source: &KeyedSource) -> Result<Option<Expr>, RunError> {
        attempt.runner.refuse_other_columns(attempt, &source.held.schema).await?;
        self.scope(attempt, source).await
    }

    /// Classifies the source against the version the write reads and commits over, filling in as
    /// [`Self::fill`] says, in the write's `scope`.
    async fn classified(
        &self,
        attempt: &Attempt<'_>,
        source: &KeyedSource,
        fill: Option<&Fill>,
        scope: Option<&Expr>,
    ) -> Result<KeyedCounts, RunError> {
        let spec = KeyedSpec { fill: fill.map(|f| &f.condition), scope, ..self.spec() };
        attempt.runner.classify(source, &spec, attempt.location, attempt.read_version).await
    }

    /// What a rerun fills in: the columns of the table the partition's rows lack (added since it
    /// was written) and those this write adds, in the rows of its keys that it does not replace
    /// but that are otherwise its own (see [`keyed::fill_condition`]). A merge's newer-wins rule
    /// stands: a row written by a newer version of its key is not the source's row. `None` where
    /// there is nothing to fill.
    async fn fill(&self, attempt: &Attempt<'_>, source: &KeyedSource) -> Result<Option<Fill>, RunError> {
        let Some(table) = attempt.runner.columns_at(attempt.table()).await? else { return Ok(None) };
        let names: Vec<String> = table.fields().iter().map(|f| f.name().clone()).collect();
        let lacks = attempt.previous.map(|r| r.lacks(&names)).unwrap_or_default();
        let added = attempt.columns.added.iter().map(|c| c.column.clone());
        let columns: Vec<String> = lacks.iter().cloned().chain(added).collect();
        let condition = keyed::fill_condition(&source.held.schema, &table, &self.key, &columns);
        Ok(condition.map(|condition| Fill { condition, columns }))
    }
}

/// The ranges a merge's scope names at most: more touched files are named by wider ranges, each
/// joining neighbours (widening a scope is safe: it only reads more), so that the filter stays a
/// short expression.
const MAX_RANGES: usize = 64;

/// The ranges among `ranges` that hold one of `keys` (sorted), in order, overlapping ones joined
/// into one, and neighbours joined where there would be more than [`MAX_RANGES`].
fn touched(mut ranges: Vec<Range>, keys: &[ScalarValue]) -> Vec<Range> {
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

/// The rows a keyed rerun fills in, and the columns it sets in them.
struct Fill {
    condition: datafusion::prelude::Expr,
    columns: Vec<String>,
}

#[async_trait::async_trait(?Send)]
impl Mode for Keyed {
    fn mode(&self) -> WriteMode {
        self.mode
    }

    fn commits_side_by_side(&self) -> bool {
        false
    }

    fn depends_on_order(&self) -> bool {
        true
    }

    fn refuses(&self, check: &CheckKind) -> Option<String> {
        super::refuses_comparison(check, &format!("write = \"{}\"", self.mode))
    }

    async fn compute(
        &self,
        attempt: &Attempt<'_>,
        plan: datafusion::logical_expr::LogicalPlan,
    ) -> Result<Computed, RunError> {
        if let Some(refusal) = attempt.runner.refusal(attempt.run, plan.schema()) {
            return Err(refusal);
        }
        let spec = &attempt.run.job.spec;
        if let Some(missing) = spec.cluster_by.iter().find(|c| plan.schema().field_with_unqualified_name(c).is_err()) {
            return Err(RunError::Setup(crate::Error::Usage(format!(
                "job `{}`: cluster_by column `{missing}` is not a column of the job's result",
                spec.name
            ))));
        }
        Ok(Computed::Keyed(keyed::prepare(attempt.runner.session(), plan, &self.spec()).await?))
    }

    async fn preview(
        &self,
        attempt: &Attempt<'_>,
        computed: Computed,
        _replaced: Option<DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<DryRun, RunError> {
        let source = Self::source(computed).map_err(|e| *e)?;
        let fill = self.fill(attempt, &source).await?;
        let scope = self.scoped(attempt, &source).await?;
        let counts = self.classified(attempt, &source, fill.as_ref(), scope.as_ref()).await?;
        report.changes = Some(Changes::Keyed(counts));
        if !counts.changes_anything() && !attempt.fresh && attempt.read_version.is_some() {
            report.note = Some("no row to change: a run would commit only the partition's new state".into());
        }
        // An `append_dedup` adds its new keys' rows whole; a merge's changes are counted by key.
        let (rows_added, rows_removed) =
            if self.spec().newer_by.is_none() { (Some(counts.inserted), Some(0)) } else { (None, None) };
        Ok(DryRun { changes: counts.changes_anything(), rows_added, rows_removed, ..DryRun::default() })
    }

    async fn commit(
        &self,
        attempt: &Attempt<'_>,
        target: Target<'_>,
        computed: Computed,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let source = Self::source(computed).map_err(|e| *e)?;
        let fill = self.fill(attempt, &source).await?;
        let scope = self.scoped(attempt, &source).await?;
        let ctx = attempt.runner.session();
        let df = source.dataframe(ctx)?;
        let spec = self.spec();
        let job = &attempt.run.job.spec;
        let merge = MergeSpec {
            key: spec.key,
            newer_by: spec.newer_by,
            fill: fill.as_ref().map(|f| (&f.condition, f.columns.as_slice())),
            scope: scope.as_ref(),
            tombstone: spec.delete_when.map(|_| keyed::DELETED),
            cluster_by: &job.cluster_by,
            target_file_size: job.target_file_size,
        };
        let state = ctx.state();
        // Into an existing table, lakewriter's own merge classifies the source in the scan that
        // rewrites the table's files; else the source is classified first, then delta-rs merges it.
        if let Some(scanned) = lakewriter_delta::merge_in_one_scan(&state, target, df.clone(), merge).await? {
            let counts = scanned.counts;
            report.changes = Some(Changes::Keyed(KeyedCounts {
                inserted: counts.inserted,
                updated: counts.updated,
                deleted: counts.deleted,
                unchanged: counts.unchanged,
                duplicates_dropped: source.duplicates_dropped as u64,
            }));
            return match scanned.committed {
                Some(committed) => Ok(Some(committed)),
                None => super::record_state_alone(attempt, target, &source.held.schema, report).await,
            };
        }
        let counts = self.classified(attempt, &source, fill.as_ref(), scope.as_ref()).await?;
        report.changes = Some(Changes::Keyed(counts));
        if !counts.changes_anything() {
            return super::record_state_alone(attempt, target, &source.held.schema, report).await;
        }
        Ok(Some(lakewriter_delta::merge(&state, target, df, merge).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i64) -> ScalarValue {
        ScalarValue::Int64(Some(v))
    }

    #[test]
    fn the_touched_ranges_are_those_holding_a_key_joined_where_they_overlap() {
        let ranges = |pairs: &[(i64, i64)]| pairs.iter().map(|&(a, b)| (int(a), int(b))).collect::<Vec<_>>();
        let files = ranges(&[(50, 59), (0, 9), (10, 19), (15, 25), (30, 39), (40, 49)]);
        let keys: Vec<ScalarValue> = [12, 31, 39, 60].into_iter().map(int).collect();
        // 12 is in [10, 19] and nowhere else, but [15, 25] overlaps it and is not touched: only
        // ranges that hold a key count; 31 and 39 are in [30, 39]; 60 is in no file.
        assert_eq!(touched(files.clone(), &keys), ranges(&[(10, 19), (30, 39)]));
        // 18 is in both overlapping files: they are joined into one range.
        let keys: Vec<ScalarValue> = [18, 59].into_iter().map(int).collect();
        assert_eq!(touched(files.clone(), &keys), ranges(&[(10, 25), (50, 59)]));
        assert_eq!(touched(files, &[]), ranges(&[]));
        // Bounds are inclusive.
        assert_eq!(touched(ranges(&[(1, 5)]), &[int(5)]), ranges(&[(1, 5)]));
        assert_eq!(touched(ranges(&[(1, 5)]), &[int(0), int(6)]), ranges(&[]));
        // 200 touched files apart are named by 64 ranges at most, which cover every one of them.
        let files: Vec<Range> = (0..200).map(|i| (int(i * 10), int(i * 10 + 5))).collect();
        let keys: Vec<ScalarValue> = (0..200).map(|i| int(i * 10 + 1)).collect();
        let scope = touched(files.clone(), &keys);
        assert!(scope.len() <= MAX_RANGES, "{}", scope.len());
        let covered = |k: &ScalarValue| scope.iter().any(|(a, b)| order(a, k).is_le() && order(k, b).is_le());
        assert!(files.iter().all(|(min, max)| covered(min) && covered(max)));
    }
}
