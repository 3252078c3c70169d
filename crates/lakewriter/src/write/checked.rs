//! A partition's result between its compute and its write: checked, refused where it would
//! write NULLs into NOT NULL columns or columns the table lacks, and compared with the rows it
//! would replace (a dry run's preview).

use datafusion::arrow::datatypes::Schema;
use datafusion::prelude::DataFrame;
use lakewriter_compute::checks;
use lakewriter_compute::{RowDiff, diff, spawned};
use lakewriter_core::{CheckOutcome, CheckSeverity};
use lakewriter_delta::nullability;
use lakewriter_delta::schema::Difference;

use super::attempt::Attempt;
use super::computed::{Computed, Replaces};
use crate::error::{diff_err, result_err};
use crate::{DryRun, Note, PartitionReport, RunError};

impl Attempt<'_> {
    /// Evaluates the job's checks on `computed` into `report.checks` (where its mode's result is
    /// the rows it writes). Returns the blocking checks that failed.
    async fn check(
        &self,
        computed: &Computed,
        replaced: Option<&DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<Vec<CheckOutcome>, RunError> {
        let checks = &self.run.job.spec.checks;
        let Some(held) = computed.held().filter(|_| !checks.checks.is_empty()) else { return Ok(Vec::new()) };
        let replaced_rows = match replaced.filter(|_| checks.compares()) {
            Some(df) => {
                Some(df.clone().count().await.map_err(|e| lakewriter_compute::Error::Checks { source: Box::new(e) })?
                    as u64)
            }
            None => None,
        };
        // In a task of its own, as the compute (see `Materialized::collect`).
        let (ctx, owned, dt) = (self.lake.ctx.clone(), checks.clone(), self.run.unit.dt);
        let semantics = self.run.job.spec.semantics;
        let outcomes =
            spawned(async move { checks::evaluate(&ctx, semantics, &held, &owned, replaced_rows, dt).await }).await?;
        let blocking = outcomes.iter().filter(|o| !o.passed && o.severity == CheckSeverity::Error).cloned().collect();
        report.checks = outcomes;
        Ok(blocking)
    }

    /// Evaluates the job's checks (see [`Self::check`]); where none blocks the commit, refuses a
    /// result with a NULL in a column the table has NOT NULL or the job declares so, before
    /// anything is written — in a dry run as in the run. A streamed result is not held: its
    /// NULLs are counted where the write fails on one. Returns the blocking checks that failed.
    pub(crate) async fn checked(
        &self,
        computed: &Computed,
        replaced: Option<&DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<Vec<CheckOutcome>, RunError> {
        let blocked = self.check(computed, replaced, report).await?;
        if blocked.is_empty() {
            self.refuse_nulls(computed).await?;
        }
        Ok(blocked)
    }

    async fn refuse_nulls(&self, computed: &Computed) -> Result<(), RunError> {
        let (run, mode) = (self.run, self.run.job.mode.as_ref());
        // A result that is not the rows written (a MERGE INTO's source): delta-rs's check stands.
        let Some(held) = computed.held().filter(|_| mode.result_is_rows()) else { return Ok(()) };
        let table = match mode.replaces() {
            Replaces::Table => None,
            Replaces::Slice | Replaces::Nothing => self.shape().await?,
        };
        let columns = nullability::required(table.as_ref().map(|s| s.schema.as_ref()), &run.job.spec.not_null);
        if columns.is_empty() {
            return Ok(());
        }
        let plan = held.dataframe(self.lake.ctx).map_err(result_err)?.into_unoptimized_plan();
        let nulls = nullability::null_counts(&self.lake.ctx.state(), plan, &columns).await.map_err(result_err)?;
        if nulls.is_empty() {
            return Ok(());
        }
        let table = run.job.spec.target.to_string();
        Err(lakewriter_delta::Error::NullInNotNull { table, partition: run.partition.clone(), nulls }.into())
    }

    /// What committing `computed` would change (the preview of the modes that write rows): the
    /// rows it would add and remove against `replaced`, with up to `show` examples of each, after
    /// the checks of the write itself (columns, rows outside the slice).
    pub(super) async fn preview_rows(
        &self,
        computed: Computed,
        replaced: Option<DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<DryRun, RunError> {
        let after = computed.dataframe(self.lake.ctx)?;
        match self.run.job.mode.replaces() {
            Replaces::Table => {}
            Replaces::Slice => {
                self.refuse_other_columns(after.schema().as_arrow()).await?;
                self.refuse_rows_outside(&after).await?;
            }
            Replaces::Nothing => {
                self.refuse_other_columns(after.schema().as_arrow()).await?;
            }
        }
        self.row_diff(replaced, after, report).await
    }

    /// The rows `after` adds to and removes from `replaced` (none yet: `None`). Where the columns
    /// differ (a `rebuild` may change them), every row is replaced.
    async fn row_diff(
        &self,
        replaced: Option<DataFrame>,
        after: DataFrame,
        report: &mut PartitionReport,
    ) -> Result<DryRun, RunError> {
        let show = self.dry_run.unwrap_or(0);
        let empty = after.clone().limit(0, Some(0)).map_err(diff_err)?;
        let before = replaced.unwrap_or(empty);
        let same_columns = lakewriter_delta::schema::differences(before.schema().as_arrow(), after.schema().as_arrow());
        let RowDiff { added, removed, added_examples, removed_examples } = if same_columns.is_empty() {
            let before = before.select_columns(&names(&after)).map_err(diff_err)?;
            spawned(diff(before, after, show)).await?
        } else {
            if report.schema_change.is_none() {
                report.note = Some(Note::ColumnsDiffer(same_columns));
            }
            let empty_before = before.clone().limit(0, Some(0)).map_err(diff_err)?;
            let empty_after = after.clone().limit(0, Some(0)).map_err(diff_err)?;
            let (add, remove) =
                (spawned(diff(empty_after, after, show)).await?, spawned(diff(before, empty_before, show)).await?);
            RowDiff {
                added: add.added,
                removed: remove.removed,
                added_examples: add.added_examples,
                removed_examples: remove.removed_examples,
            }
        };
        Ok(DryRun {
            changes: added + removed > 0,
            rows_added: Some(added),
            rows_removed: Some(removed),
            added_examples,
            removed_examples,
        })
    }

    /// The write's own column check, made before it (by a dry run, and by a keyed write before
    /// it classifies): a result whose columns differ from the table's fails the run (but for a
    /// `rebuild`, which replaces them), but for the columns the job's `on_schema_change` adds
    /// (`self.columns`). A `_deleted` column missing or new is said to be the job's
    /// `delete_when`, removed or added since the table was created.
    pub(super) async fn refuse_other_columns(&self, result: &Schema) -> Result<(), RunError> {
        let job = &self.run.job.spec;
        let Some(columns) = self.columns().await? else { return Ok(()) };
        let added = |column: &String| self.columns.added.iter().any(|a| &a.column == column);
        let mut differences = lakewriter_delta::schema::column_differences(&columns, result);
        differences.retain(|d| !matches!(d, Difference::Extra { column, .. } if added(column)));
        if differences.is_empty() {
            return Ok(());
        }
        let mode = self.run.job.mode.as_ref();
        let differences = differences.iter().map(|d| mode.explain(job, d)).collect();
        Err(lakewriter_delta::Error::SchemaMismatch { table: job.target.to_string(), differences }.into())
    }

    /// A dry run's stand-in for the write's own check of its slice: rows of `after` outside the
    /// slice the write replaces would fail the run.
    async fn refuse_rows_outside(&self, after: &DataFrame) -> Result<(), RunError> {
        let (slice, outside) = self.run.job.mode.slice(self, after.schema().as_arrow()).await?;
        let rows =
            after.clone().filter(datafusion::prelude::not(slice.clone()).or(slice.is_null())).map_err(diff_err)?;
        let rows = rows.count().await.map_err(diff_err)?;
        if rows == 0 {
            return Ok(());
        }
        Err(crate::Error::WouldWriteOutside { table: self.run.job.spec.target.to_string(), rows, outside }.into())
    }
}

fn names(df: &DataFrame) -> Vec<&str> {
    df.schema().fields().iter().map(|f| f.name().as_str()).collect()
}
