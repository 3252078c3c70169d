//! A partition's result between its compute and its write: held in memory where checks or a dry
//! run look at it, checked, and compared with the rows it would replace.

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::DataFrame;
use lakewriter_compute::{KeyedSource, KeyedSpec, RowDiff, diff, keyed, spawned};
use lakewriter_compute::{Materialized, checks};
use lakewriter_core::{CheckOutcome, CheckSeverity, JobSpec, WriteSpec};
use lakewriter_delta::nullability;
use lakewriter_delta::schema::Difference;
use lakewriter_storage::Location;

use crate::write::{Attempt, Mode, Replaces};
use crate::{DryRun, PartitionReport, PreparedRun, RunError, Runner};

/// A partition's computed result.
pub(crate) enum Computed {
    /// Not held: streamed into the write (a job without checks, outside a dry run).
    Streamed(LogicalPlan),
    /// Computed once and held, to be checked and compared, then written.
    Held(Materialized),
    /// A `merge` or `append_dedup` source, validated and deduplicated (always held).
    Keyed(KeyedSource),
}

impl Computed {
    fn held(&self) -> Option<Materialized> {
        match self {
            Self::Streamed(_) => None,
            Self::Held(held) => Some(held.clone()),
            Self::Keyed(source) => Some(source.held.clone()),
        }
    }

    /// The result's rows: read back where they are held, computed where they are streamed.
    pub(crate) fn dataframe(
        self,
        ctx: &datafusion::prelude::SessionContext,
    ) -> Result<DataFrame, lakewriter_compute::Error> {
        match self {
            Self::Streamed(plan) => Ok(DataFrame::new(ctx.state(), plan)),
            Self::Held(held) => held.dataframe(ctx).map_err(result_err),
            Self::Keyed(source) => source.dataframe(ctx),
        }
    }
}

impl Runner {
    /// What refuses a result of columns `schema` before anything is computed: a check definition
    /// that cannot apply to it, a `not_null` column it does not have.
    pub(crate) fn refusal(&self, run: &PreparedRun<'_>, schema: &datafusion::common::DFSchema) -> Option<RunError> {
        let problems = crate::lint::check_problems(self.session(), run.job, schema);
        if let Some((check, problem)) = problems.into_iter().next() {
            return Some(lakewriter_compute::Error::BadCheck { check, problem }.into());
        }
        let column = missing_not_null(&run.job.spec, schema)?;
        Some(crate::Error::NotNullColumn { job: run.job.spec.name.clone(), column: column.clone() }.into())
    }

    /// Computes `plan` as the rows `run`'s write takes: held for its checks and a dry run, or else
    /// the plan itself (see [`Self::refusal`]).
    pub(crate) async fn compute_rows(&self, run: &PreparedRun<'_>, plan: LogicalPlan) -> Result<Computed, RunError> {
        if let Some(refusal) = self.refusal(run, plan.schema()) {
            return Err(refusal);
        }
        if run.job.spec.checks.checks.is_empty() && self.dry_run.is_none() {
            return Ok(Computed::Streamed(plan));
        }
        let held = Materialized::collect(DataFrame::new(self.session().state(), plan)).await.map_err(result_err)?;
        Ok(Computed::Held(held))
    }

    /// The columns of the table at `read_version` (the version the run read), `None` where there
    /// was no table.
    pub(crate) async fn columns_at(
        &self,
        (location, read_version): (&Location, Option<u64>),
    ) -> Result<Option<SchemaRef>, RunError> {
        Ok(match read_version {
            Some(version) => Some(self.loaded.columns(location, version).await?),
            None => None,
        })
    }

    /// The columns and partition columns of the table at `read_version`, `None` where there was no
    /// table.
    pub(crate) async fn shape_at(
        &self,
        (location, read_version): (&Location, Option<u64>),
    ) -> Result<Option<lakewriter_delta::table::Shape>, RunError> {
        Ok(self.loaded.shape(location, read_version).await?)
    }

    /// The range of `column` in each live file of the table at `read_version` (see
    /// [`lakewriter_delta::table::LoadedTables::ranges`]); `None` where there is no table or a
    /// file records none.
    pub(crate) async fn ranges_at(
        &self,
        (location, read_version): (&Location, Option<u64>),
        column: &str,
    ) -> Result<Option<Vec<lakewriter_delta::ranges::Range>>, RunError> {
        let Some(version) = read_version else { return Ok(None) };
        Ok(self.loaded.ranges(location, version, column).await?)
    }

    /// Evaluates the job's checks on `computed` into `report.checks` (where its mode's result is
    /// the rows it writes). Returns the blocking checks that failed.
    async fn check(
        &self,
        attempt: &Attempt<'_>,
        computed: &Computed,
        replaced: Option<&DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<Vec<CheckOutcome>, RunError> {
        let checks = &attempt.run.job.spec.checks;
        let Some(held) = computed.held().filter(|_| !checks.checks.is_empty()) else { return Ok(Vec::new()) };
        let replaced_rows = match replaced.filter(|_| checks.compares()) {
            Some(df) => {
                Some(df.clone().count().await.map_err(|e| lakewriter_compute::Error::Checks { source: Box::new(e) })?
                    as u64)
            }
            None => None,
        };
        // In a task of its own, as the compute (see `Materialized::collect`).
        let (ctx, owned, dt) = (self.session().clone(), checks.clone(), attempt.run.unit.dt);
        let semantics = attempt.run.job.spec.semantics;
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
        attempt: &Attempt<'_>,
        computed: &Computed,
        replaced: Option<&DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<Vec<CheckOutcome>, RunError> {
        let blocked = self.check(attempt, computed, replaced, report).await?;
        if blocked.is_empty() {
            self.refuse_nulls(attempt, computed).await?;
        }
        Ok(blocked)
    }

    async fn refuse_nulls(&self, attempt: &Attempt<'_>, computed: &Computed) -> Result<(), RunError> {
        let (run, mode) = (attempt.run, attempt.run.job.mode.as_ref());
        // A result that is not the rows written (a MERGE INTO's source): delta-rs's check stands.
        let Some(held) = computed.held().filter(|_| mode.result_is_rows()) else { return Ok(()) };
        let table = match mode.replaces() {
            Replaces::Table => None,
            Replaces::Slice | Replaces::Nothing => self.loaded.shape(attempt.location, attempt.read_version).await?,
        };
        let columns = nullability::required(table.as_ref().map(|s| s.schema.as_ref()), &run.job.spec.not_null);
        if columns.is_empty() {
            return Ok(());
        }
        let plan = held.dataframe(self.session()).map_err(result_err)?.into_unoptimized_plan();
        let nulls = nullability::null_counts(&self.session().state(), plan, &columns).await.map_err(result_err)?;
        if nulls.is_empty() {
            return Ok(());
        }
        let table = run.job.spec.target.to_string();
        Err(lakewriter_delta::Error::NullInNotNull { table, partition: run.partition.clone(), nulls }.into())
    }

    /// What committing `computed` would change (the preview of the modes that write rows): the
    /// rows it would add and remove against `replaced`, with up to `show` examples of each, after
    /// the checks of the write itself (columns, rows outside the slice).
    pub(crate) async fn preview_rows(
        &self,
        mode: &(impl Mode + ?Sized),
        attempt: &Attempt<'_>,
        computed: Computed,
        replaced: Option<DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<DryRun, RunError> {
        let after = computed.dataframe(self.session())?;
        match mode.replaces() {
            Replaces::Table => {}
            Replaces::Slice => {
                self.refuse_other_columns(attempt, after.schema().as_arrow()).await?;
                self.refuse_rows_outside(mode, attempt, &after).await?;
            }
            Replaces::Nothing => {
                self.refuse_other_columns(attempt, after.schema().as_arrow()).await?;
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
                report.note = Some(format!("the columns change ({}): every row is replaced", same_columns.join("; ")));
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
    /// (`attempt.columns`). A `_deleted` column missing or new is said to be the job's
    /// `delete_when`, removed or added since the table was created.
    pub(crate) async fn refuse_other_columns(&self, attempt: &Attempt<'_>, result: &Schema) -> Result<(), RunError> {
        let job = &attempt.run.job.spec;
        let Some(columns) = self.columns_at(attempt.table()).await? else { return Ok(()) };
        let added = |column: &String| attempt.columns.added.iter().any(|a| &a.column == column);
        let mut differences = lakewriter_delta::schema::column_differences(&columns, result);
        differences.retain(|d| !matches!(d, Difference::Extra { column, .. } if added(column)));
        if differences.is_empty() {
            return Ok(());
        }
        let differences = differences.iter().map(|d| explained(job, d)).collect();
        Err(lakewriter_delta::Error::SchemaMismatch { table: job.target.to_string(), differences }.into())
    }

    /// A dry run's stand-in for the write's own check of its slice: rows of `after` outside the
    /// slice the write replaces would fail the run.
    async fn refuse_rows_outside(
        &self,
        mode: &(impl Mode + ?Sized),
        attempt: &Attempt<'_>,
        after: &DataFrame,
    ) -> Result<(), RunError> {
        let (slice, outside) = mode.slice(attempt, after.schema().as_arrow()).await?;
        let rows =
            after.clone().filter(datafusion::prelude::not(slice.clone()).or(slice.is_null())).map_err(diff_err)?;
        let rows = rows.count().await.map_err(diff_err)?;
        if rows == 0 {
            return Ok(());
        }
        Err(crate::Error::WouldWriteOutside { table: attempt.run.job.spec.target.to_string(), rows, outside }.into())
    }

    /// What applying `source` to the table at `read_version` does, row by row.
    pub(crate) async fn classify(
        &self,
        source: &KeyedSource,
        spec: &KeyedSpec<'_>,
        location: &Location,
        read_version: Option<u64>,
    ) -> Result<lakewriter_compute::KeyedCounts, RunError> {
        let provider = match read_version {
            Some(version) => Some(self.loaded.provider_at(location, version).await?),
            None => None,
        };
        Ok(keyed::classify(self.session(), source, provider, spec).await?)
    }
}

/// The first of the job's `not_null` columns that `schema` (its result's) does not have.
pub(crate) fn missing_not_null<'a>(job: &'a JobSpec, schema: &datafusion::common::DFSchema) -> Option<&'a String> {
    job.not_null.iter().find(|c| !schema.has_column_with_unqualified_name(c.as_str()))
}

/// A difference between a merge's result and its table, where it is the tombstone column of
/// `delete_when`, said as the job's `delete_when` added or removed since the table was created.
fn explained(job: &JobSpec, difference: &Difference) -> String {
    let WriteSpec::Merge { delete_when, .. } = &job.write else { return difference.to_string() };
    let flag = lakewriter_compute::keyed::DELETED;
    let recreate =
        "the table's columns do not change: recreate the table (drop it and backfill the job) or write a new target";
    match difference {
        Difference::Missing { column, .. } if column == flag && delete_when.is_none() => format!(
            "column `{flag}` (boolean) is missing from the result: the table was created by a job with `delete_when`, which job `{}` no longer has (its tombstones are rows whose `{flag}` is true); {recreate}, or put `delete_when` back",
            job.name
        ),
        Difference::Extra { column, .. } if column == flag && delete_when.is_some() => format!(
            "column `{flag}` (boolean) is not in the table: job `{}`'s `delete_when` was added since the table was created without it (it marks deleted keys in `{flag}`); {recreate}, or take `delete_when` out",
            job.name
        ),
        _ => difference.to_string(),
    }
}

fn names(df: &DataFrame) -> Vec<&str> {
    df.schema().fields().iter().map(|f| f.name().as_str()).collect()
}

pub(crate) fn result_err(source: datafusion::error::DataFusionError) -> lakewriter_compute::Error {
    lakewriter_compute::Error::Result { source: Box::new(source) }
}

pub(crate) fn diff_err(source: datafusion::error::DataFusionError) -> lakewriter_compute::Error {
    lakewriter_compute::Error::Diff { source: Box::new(source) }
}
