//! The write modes, one module each. A job's write is resolved once, when the project loads, into
//! one [`Mode`]: from its `write` key, or — for a job written as a statement — from the statement
//! it holds (`INSERT OVERWRITE … PARTITION` is an `overwrite_partition`, `INSERT INTO` an
//! `append`, `MERGE INTO` a merge as written). Each mode decides, for both spellings of a job,
//! what the job may have (checks, a date, `--force`, a dry run), and owns its part of each run:
//! the rows it replaces, how its result is computed, its dry-run preview and its commit. The
//! attempt (`crate::attempt`) runs the same steps for every mode.
//!
//! Adding a mode: its module here, one arm in [`resolve`], its `write` value in the project-file
//! parser (`lakewriter-core`'s `project/parse.rs`), and the docs.

mod append;
mod delete_insert;
mod keyed;
mod merge_into;
mod overwrite;
mod rebuild;

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::Schema;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, Expr};
use lakewriter_core::{CheckKind, JobSpec, WriteMode, WriteSpec};
use lakewriter_delta::state::Recorded;
use lakewriter_delta::{Committed, Target};
use lakewriter_storage::Location;

use crate::result::Computed;
use crate::sql::JobStatement;
use crate::{DryRun, PartitionReport, PreparedRun, RunError, Runner};

/// The rows a mode's write replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replaces {
    /// None: it adds rows, or changes them by key.
    Nothing,
    /// A slice of the table: [`Mode::slice`].
    Slice,
    /// The whole table, its columns included.
    Table,
}

/// One attempt at a partition as a mode sees it: the run, the table as the attempt read it, and
/// whether the partition was already fresh.
pub(crate) struct Attempt<'a> {
    pub runner: &'a Runner,
    pub run: &'a PreparedRun<'a>,
    pub location: &'a Location,
    /// The table version the attempt read before it planned; `None`: no table yet.
    pub read_version: Option<u64>,
    /// The partition's recorded state before the attempt; `None`: never written.
    pub previous: Option<&'a Recorded>,
    /// That state already is this run's (same code and inputs).
    pub fresh: bool,
    /// What the write does to the table's columns (`on_schema_change`): set once the plan is laid
    /// out onto them.
    pub columns: lakewriter_delta::schema::ColumnChanges,
}

impl<'a> Attempt<'a> {
    /// An attempt at `run` over the table at `read_version`, whose partition state was `previous`.
    pub(crate) fn new(
        runner: &'a Runner,
        run: &'a PreparedRun<'a>,
        read_version: Option<u64>,
        previous: Option<&'a Recorded>,
    ) -> Self {
        let columns = lakewriter_delta::schema::ColumnChanges::default();
        Self { runner, run, location: &run.job.location, read_version, previous, fresh: false, columns }
    }

    pub(crate) fn table(&self) -> (&Location, Option<u64>) {
        (self.location, self.read_version)
    }

    /// The error of a dated mode's run without a date (which [`crate::Job::partition_run`]
    /// refuses before it starts).
    fn no_date(&self) -> RunError {
        let job = &self.run.job.spec.name;
        RunError::Setup(crate::Error::Usage(format!("job `{job}` runs for a date: pass --dt YYYY-MM-DD")))
    }
}

/// A write mode: what it allows, and its part of each run. Every method but [`Mode::mode`] and
/// [`Mode::commit`] has the behaviour most modes share.
#[async_trait::async_trait(?Send)]
pub(crate) trait Mode: fmt::Debug + Send + Sync {
    /// The mode the job's runs make (a statement's: the mode it maps onto).
    fn mode(&self) -> WriteMode;

    /// Why a job of this mode cannot have `check`, where it cannot (a usage error at load).
    fn refuses(&self, _check: &CheckKind) -> Option<String> {
        None
    }

    /// Whether its runs are for a date (all but `rebuild`).
    fn dated(&self) -> bool {
        true
    }

    /// Whether `--force` applies: an `append` runs once per partition, and `--force` runs it
    /// again.
    fn forceable(&self) -> bool {
        false
    }

    /// Whether runs of several partitions commit side by side, or would only conflict with each
    /// other (they read and rewrite the same rows).
    fn commits_side_by_side(&self) -> bool {
        true
    }

    /// Whether a run fills in the rows it keeps from what the partition's last write lacked (a
    /// keyed write, see `keyed::Keyed::fill`): it then needs the partition's state as of the
    /// version it writes over, not as a backfill read it before its first day.
    fn fills_in(&self) -> bool {
        false
    }

    /// Whether the table may depend on the order its partitions were written in: a keyed write
    /// (a merge, an append deduplicated by key) keeps rows across partitions. `lakewriter test`
    /// replays such a job's dates out of order (`order_independent`).
    fn depends_on_order(&self) -> bool {
        false
    }

    /// Why a dry run of it cannot be made, where it cannot.
    fn refuses_dry_run(&self) -> Option<&'static str> {
        None
    }

    /// Whether its computed result is the rows it writes (a `MERGE INTO`'s is its source): the
    /// checks and the NOT NULL refusal look at the result only where it is.
    fn result_is_rows(&self) -> bool {
        true
    }

    /// The rows its write replaces.
    fn replaces(&self) -> Replaces {
        Replaces::Nothing
    }

    /// The slice its write replaces, where it [`Replaces::Slice`], as a filter over `schema` (the
    /// table's columns, or on a first write the result's), and the rows outside it in words; for
    /// the other modes, every row.
    async fn slice(&self, _attempt: &Attempt<'_>, _schema: &Schema) -> Result<(Expr, String), RunError> {
        Ok((datafusion::prelude::lit(true), "no rows".into()))
    }

    /// The planned rows laid out as the table's columns: an `INSERT`'s query onto the table.
    async fn lay_out(&self, _attempt: &Attempt<'_>, plan: LogicalPlan) -> Result<LogicalPlan, RunError> {
        Ok(plan)
    }

    /// The version at which the partition's write is already made, where a run has nothing to
    /// compute (an `append` appended before).
    fn already_written(&self, _attempt: &Attempt<'_>) -> Option<u64> {
        None
    }

    /// Computes the result as the write needs it (see [`Runner::compute`]).
    async fn compute(&self, attempt: &Attempt<'_>, plan: LogicalPlan) -> Result<Computed, RunError> {
        attempt.runner.compute_rows(attempt.run, plan).await
    }

    /// What committing `computed` would change, against the rows it replaces (`replaced`).
    async fn preview(
        &self,
        attempt: &Attempt<'_>,
        computed: Computed,
        replaced: Option<DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<DryRun, RunError> {
        attempt.runner.preview_rows(self, attempt, computed, replaced, report).await
    }

    /// Commits `computed` over the version the attempt read: `None` where it committed nothing
    /// (the report says why).
    async fn commit(
        &self,
        attempt: &Attempt<'_>,
        target: Target<'_>,
        computed: Computed,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError>;
}

/// The mode of `job`, whose statement (a job without a `write` key) is `statement`; `None` for a
/// job without a `write` key whose statement was not given.
pub(crate) fn resolve(job: &JobSpec, statement: Option<&JobStatement>) -> Option<Arc<dyn Mode>> {
    let column = || job.partition_by.clone().unwrap_or_else(|| "dt".to_owned());
    Some(match (&job.write, statement) {
        (WriteSpec::OverwritePartition, _) => Arc::new(overwrite::Overwrite { column: column(), insert: None }),
        (WriteSpec::DeleteInsert { predicate }, _) => {
            Arc::new(delete_insert::DeleteInsert { predicate: predicate.clone() })
        }
        (WriteSpec::Append, _) => Arc::new(append::Append { insert: None }),
        (WriteSpec::Merge { key, newer_by, on_duplicate_keys, delete_when }, _) => {
            Arc::new(keyed::Keyed::merge(key, newer_by, *on_duplicate_keys, delete_when.as_deref(), job.semantics))
        }
        (WriteSpec::AppendDedup { key, window }, _) => Arc::new(keyed::Keyed::append_dedup(key, window.clone())),
        (WriteSpec::Rebuild, _) => Arc::new(rebuild::Rebuild),
        (WriteSpec::Statement, Some(JobStatement::Overwrite(insert))) => {
            let column = insert.partition.first().map_or_else(column, |p| p.column.clone());
            Arc::new(overwrite::Overwrite { column, insert: Some(insert.clone()) })
        }
        (WriteSpec::Statement, Some(JobStatement::Append(insert))) => {
            Arc::new(append::Append { insert: Some(insert.clone()) })
        }
        (WriteSpec::Statement, Some(JobStatement::Merge(merge))) => {
            Arc::new(merge_into::MergeInto { merge: merge.clone() })
        }
        (WriteSpec::Statement, None) => return None,
    })
}

/// The refusal of a check that compares a result with the rows it replaces, by a mode that
/// replaces none.
fn refuses_comparison(check: &CheckKind, what: &str) -> Option<String> {
    matches!(check, CheckKind::ChangeVsPrevious { .. }).then(|| {
        format!(
            "checks.change_vs_previous is not available for {what}: it compares a result with the rows it replaces, and this mode replaces none (a merge or an append changes rows by key or adds them)"
        )
    })
}

/// A keyed write or a `MERGE INTO` that changes no row: it commits nothing (`None`) where the
/// partition is fresh (or a concurrent run recorded this very state since this run read it), and
/// otherwise only the partition's new state over the table's columns (`schema`), so that it
/// reads as fresh from then on.
async fn record_state_alone(
    attempt: &Attempt<'_>,
    target: Target<'_>,
    schema: &Schema,
    report: &mut PartitionReport,
) -> Result<Option<Committed>, RunError> {
    let fresh = attempt.fresh || recorded_fresh(&target).await;
    if !fresh && target.read_version.is_some() {
        let committed = lakewriter_delta::record_state(target, schema).await?;
        report.note = Some("no row to change: committed only the partition's new state".into());
        return Ok(Some(committed));
    }
    report.nothing_to_change(target.read_version, fresh);
    Ok(None)
}

/// Whether the log records `target`'s commit metadata (its code and inputs) for its partition now.
async fn recorded_fresh(target: &Target<'_>) -> bool {
    let metadata = target.metadata;
    let scope = lakewriter_delta::state::LogScope::FromLastCheckpoint;
    matches!(
        lakewriter_delta::state::read(target.location, &metadata.job, scope).await,
        Ok(Some(state)) if state
            .partitions
            .get(&metadata.partition)
            .is_some_and(|r| r.is_fresh(&metadata.code_fingerprint, &metadata.input_fingerprint))
    )
}

/// The write of a mode that replaces a slice ([`Mode::slice`]): the slice replaced by the result,
/// whose rows must all be in it.
async fn replace_slice(
    mode: &dyn Mode,
    attempt: &Attempt<'_>,
    target: Target<'_>,
    computed: Computed,
) -> Result<Committed, RunError> {
    let plan = rows_plan(attempt, computed)?;
    let (predicate, outside) = mode.slice(attempt, plan.schema().as_arrow()).await?;
    let state = attempt.runner.session().state();
    Ok(lakewriter_delta::replace_where(&state, target, plan, predicate, &outside).await?)
}

/// The result as a plan to write: held rows read back, a streamed plan as it is.
fn rows_plan(attempt: &Attempt<'_>, computed: Computed) -> Result<LogicalPlan, lakewriter_compute::Error> {
    Ok(computed.dataframe(attempt.runner.session())?.into_unoptimized_plan())
}

/// An `INSERT`'s query laid out as the columns of the table at the version `attempt` read, then
/// the columns it adds where its job's `on_schema_change` lets them in (laid out as a write
/// mode's result is after this: see `crate::columns`).
async fn insert_laid_out(
    attempt: &Attempt<'_>,
    insert: &lakewriter_compute::statement::Insert,
    plan: LogicalPlan,
) -> Result<LogicalPlan, RunError> {
    let runner = attempt.runner;
    let shape = runner.loaded.shape(attempt.location, attempt.read_version).await?;
    let table = attempt.run.job.spec.target.to_string();
    let extra = attempt.run.job.spec.on_schema_change != lakewriter_core::OnSchemaChange::Fail;
    let laid_out = runner.laid_out(insert, &table, shape.as_ref(), plan, attempt.run.unit.dt, extra);
    Ok(laid_out.map_err(RunError::of)?.0)
}
