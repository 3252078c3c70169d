//! A partition's result between its compute and its write: held in memory where checks or a dry
//! run look at it, checked, and compared with the rows it would replace.

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, Expr};
use lakewriter_compute::{KeyedSource, KeyedSpec, RowDiff, diff, keyed, spawned};
use lakewriter_compute::{Materialized, checks};
use lakewriter_core::{CheckOutcome, CheckSeverity, JobSpec, WriteSpec};
use lakewriter_delta::nullability;
use lakewriter_delta::schema::Difference;
use lakewriter_storage::Location;

use crate::{DryRun, PartitionReport, PreparedRun, RunError, Runner, WritePlan};

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
}

impl Runner {
    /// Computes `plan` as `run`'s write needs it: a keyed source, the rows held for checks and a
    /// dry run, or else the plan itself. Check definitions that cannot apply to the result are
    /// refused before anything is computed.
    pub(crate) async fn compute(&self, run: &PreparedRun<'_>, plan: LogicalPlan) -> Result<Computed, RunError> {
        let ctx = self.session();
        let checks = &run.job.spec.checks;
        if let Some((check, problem)) = crate::lint::check_problems(ctx, run.job, plan.schema()).into_iter().next() {
            return Err(lakewriter_compute::Error::BadCheck { check, problem }.into());
        }
        if let Some(column) = missing_not_null(run.job.spec, plan.schema()) {
            return Err(crate::Error::NotNullColumn { job: run.job.spec.name.clone(), column: column.clone() }.into());
        }
        if let WritePlan::Keyed(spec) = &run.write {
            return Ok(Computed::Keyed(keyed::prepare(ctx, plan, spec).await?));
        }
        if checks.checks.is_empty() && self.dry_run.is_none() {
            return Ok(Computed::Streamed(plan));
        }
        let held = Materialized::collect(DataFrame::new(ctx.state(), plan)).await.map_err(result_err)?;
        Ok(Computed::Held(held))
    }

    /// The rows `run`'s write replaces, as a filter, and the rows outside it in words (for the
    /// error of a result that has any): its partition, or the rows its predicate selects — on the
    /// table's columns, on a first write the result's (`schema`). `None` for the writes that
    /// replace the whole table (`rebuild`) or no rows.
    pub(crate) async fn slice(
        &self,
        run: &PreparedRun<'_>,
        table: (&Location, Option<u64>),
        schema: &Schema,
    ) -> Result<Option<(Expr, String)>, RunError> {
        Ok(match &run.write {
            WritePlan::OverwritePartition { column, dt } => Some((
                lakewriter_compute::partition_predicate(column, *dt),
                format!("rows whose `{column}` is not {dt}"),
            )),
            WritePlan::DeleteInsert { predicate, dt } => {
                let columns = self.columns_at(table).await?;
                let schema = columns.as_deref().unwrap_or(schema);
                let condition = lakewriter_compute::condition(self.session(), predicate, schema, Some(*dt))?;
                Some((condition, format!("rows that do not satisfy the predicate `{predicate}` ($dt = {dt})")))
            }
            WritePlan::Rebuild | WritePlan::Append { .. } | WritePlan::Keyed(_) | WritePlan::Merge(_) => None,
        })
    }

    /// The columns of the table at `read_version` (the version the run read), `None` where there
    /// was no table.
    async fn columns_at(
        &self,
        (location, read_version): (&Location, Option<u64>),
    ) -> Result<Option<SchemaRef>, RunError> {
        Ok(match read_version {
            Some(version) => Some(self.loaded.provider_at(location, version).await?.schema()),
            None => None,
        })
    }

    /// The rows of the table at `read_version` that `run`'s write replaces (see [`Self::slice`];
    /// `rebuild`: the whole table). `None` where there is no table yet, and for the writes that
    /// replace no rows (`append`, `merge`, `append_dedup`).
    pub(crate) async fn replaced(
        &self,
        run: &PreparedRun<'_>,
        location: &Location,
        read_version: Option<u64>,
    ) -> Result<Option<DataFrame>, RunError> {
        let Some(version) = read_version else { return Ok(None) };
        if matches!(run.write, WritePlan::Append { .. } | WritePlan::Keyed(_) | WritePlan::Merge(_)) {
            return Ok(None);
        }
        let provider = self.loaded.provider_at(location, version).await?;
        let columns = provider.schema();
        let table = self.session().read_table(provider).map_err(diff_err)?;
        Ok(Some(match self.slice(run, (location, read_version), &columns).await? {
            Some((filter, _)) => table.filter(filter).map_err(diff_err)?,
            None => table,
        }))
    }

    /// Evaluates the job's checks on `computed` into `report.checks`. Returns the blocking checks
    /// that failed.
    pub(crate) async fn check(
        &self,
        run: &PreparedRun<'_>,
        computed: &Computed,
        replaced: Option<&DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<Vec<CheckOutcome>, RunError> {
        let checks = &run.job.spec.checks;
        let Some(held) = computed.held().filter(|_| !checks.checks.is_empty()) else { return Ok(Vec::new()) };
        let replaced_rows = match replaced.filter(|_| checks.compares()) {
            Some(df) => {
                Some(df.clone().count().await.map_err(|e| lakewriter_compute::Error::Checks { source: Box::new(e) })?
                    as u64)
            }
            None => None,
        };
        // In a task of its own, as the compute (see `Materialized::collect`).
        let (ctx, owned, dt) = (self.session().clone(), checks.clone(), run.unit.dt);
        let outcomes = spawned(async move { checks::evaluate(&ctx, &held, &owned, replaced_rows, dt).await }).await?;
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
        run: &PreparedRun<'_>,
        computed: &Computed,
        (replaced, table): (Option<&DataFrame>, (&Location, Option<u64>)),
        report: &mut PartitionReport,
    ) -> Result<Vec<CheckOutcome>, RunError> {
        let blocked = self.check(run, computed, replaced, report).await?;
        if blocked.is_empty() {
            self.refuse_nulls(run, computed, table).await?;
        }
        Ok(blocked)
    }

    async fn refuse_nulls(
        &self,
        run: &PreparedRun<'_>,
        computed: &Computed,
        (location, read_version): (&Location, Option<u64>),
    ) -> Result<(), RunError> {
        // A MERGE statement's source is not the table's rows: delta-rs's check stands.
        let Some(held) = computed.held().filter(|_| !matches!(run.write, WritePlan::Merge(_))) else { return Ok(()) };
        let replaces_schema = matches!(run.write, WritePlan::Rebuild);
        let table = if replaces_schema { None } else { self.loaded.shape(location, read_version).await? };
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

    /// What committing `computed` would do, into `report.dry_run` (and `report.changes` for a
    /// keyed write): the rows it would add and remove against `replaced`, with up to `show`
    /// examples of each, after the checks of the write itself (columns, rows outside the slice).
    /// `fresh`: the partition's recorded state is already this run's.
    pub(crate) async fn preview(
        &self,
        run: &PreparedRun<'_>,
        computed: Computed,
        replaced: Option<DataFrame>,
        (location, read_version): (&Location, Option<u64>),
        fresh: bool,
        report: &mut PartitionReport,
    ) -> Result<(), RunError> {
        let dry = match (computed, &run.write) {
            (Computed::Keyed(source), WritePlan::Keyed(spec)) => {
                self.refuse_other_columns(run.job.spec, (location, read_version), &source.held.schema).await?;
                let counts = self.classify(&source, spec, location, read_version).await?;
                report.changes = Some(counts);
                if !counts.changes_anything() && !fresh && read_version.is_some() {
                    report.note = Some("no row to change: a run would commit only the partition's new state".into());
                }
                // An `append_dedup` adds its new keys' rows whole; a merge's changes are counted by key.
                let (rows_added, rows_removed) =
                    if spec.newer_by.is_none() { (Some(counts.inserted), Some(0)) } else { (None, None) };
                DryRun { changes: counts.changes_anything(), rows_added, rows_removed, ..DryRun::default() }
            }
            (Computed::Held(held), _) => {
                let after = held.dataframe(self.session()).map_err(result_err)?;
                if !matches!(run.write, WritePlan::Rebuild) {
                    self.refuse_other_columns(run.job.spec, (location, read_version), &held.schema).await?;
                }
                self.refuse_rows_outside(run, (location, read_version), &after).await?;
                self.row_diff(replaced, after, report).await?
            }
            (Computed::Streamed(_) | Computed::Keyed(_), _) => unreachable!("a dry run holds its result"),
        };
        report.dry_run = Some(dry);
        report.status = crate::RunStatus::Ok;
        report.table_version = read_version;
        Ok(())
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
            report.note = Some(format!("the columns change ({}): every row is replaced", same_columns.join("; ")));
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
    /// `rebuild`, which replaces them). A `_deleted` column missing or new is said to be the
    /// job's `delete_when`, removed or added since the table was created.
    pub(crate) async fn refuse_other_columns(
        &self,
        job: &JobSpec,
        table: (&Location, Option<u64>),
        result: &Schema,
    ) -> Result<(), RunError> {
        let Some(columns) = self.columns_at(table).await? else { return Ok(()) };
        let differences = lakewriter_delta::schema::column_differences(&columns, result);
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
        run: &PreparedRun<'_>,
        table: (&Location, Option<u64>),
        after: &DataFrame,
    ) -> Result<(), RunError> {
        let Some((slice, outside)) = self.slice(run, table, after.schema().as_arrow()).await? else { return Ok(()) };
        let rows =
            after.clone().filter(datafusion::prelude::not(slice.clone()).or(slice.is_null())).map_err(diff_err)?;
        let rows = rows.count().await.map_err(diff_err)?;
        if rows == 0 {
            return Ok(());
        }
        Err(crate::Error::WouldWriteOutside { table: run.job.spec.target.to_string(), rows, outside }.into())
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

fn diff_err(source: datafusion::error::DataFusionError) -> lakewriter_compute::Error {
    lakewriter_compute::Error::Diff { source: Box::new(source) }
}
