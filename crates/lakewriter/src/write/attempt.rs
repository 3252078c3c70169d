//! One attempt at a partition as a mode sees it — the run, the table as the attempt read it,
//! whether the partition was fresh — and what a mode calls: the session and the table at the
//! version read, the compute, the result laid onto the table's columns (`on_schema_change`), the
//! rows its write replaces.

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::DataFrame;
use lakewriter_compute::{KeyedCounts, KeyedSource, KeyedSpec, Materialized, keyed};
use lakewriter_delta::schema::{ColumnChanges, lay_out, replaced};
use lakewriter_delta::state::Recorded;
use lakewriter_delta::{Committed, Target};
use lakewriter_storage::Location;

use super::computed::{Computed, Replaces};
use crate::error::{diff_err, result_err};
use crate::lakehouse::Lakehouse;
use crate::{Note, PartitionReport, PreparedRun, RunError};

/// One attempt at a partition.
pub(crate) struct Attempt<'a> {
    /// The session and tables the attempt plans and reads with.
    pub lake: Lakehouse<'a>,
    /// `Some(show)` in a dry run (see [`crate::Runner::dry_run`]).
    pub dry_run: Option<usize>,
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
    pub columns: ColumnChanges,
}

impl<'a> Attempt<'a> {
    /// An attempt at `run` over the table at `read_version`, whose partition state was `previous`.
    pub(crate) fn new(
        lake: Lakehouse<'a>,
        dry_run: Option<usize>,
        run: &'a PreparedRun<'a>,
        read_version: Option<u64>,
        previous: Option<&'a Recorded>,
    ) -> Self {
        let columns = ColumnChanges::default();
        Self { lake, dry_run, run, location: &run.job.location, read_version, previous, fresh: false, columns }
    }

    /// The error of a dated mode's run without a date (which [`crate::Job::partition_run`]
    /// refuses before it starts).
    pub(super) fn no_date(&self) -> RunError {
        let job = &self.run.job.spec.name;
        RunError::Setup(crate::Error::Usage(format!("job `{job}` runs for a date: pass --dt YYYY-MM-DD")))
    }

    /// The columns of the table at the version the attempt read, `None` where there was no table.
    pub(super) async fn columns(&self) -> Result<Option<SchemaRef>, RunError> {
        Ok(match self.read_version {
            Some(version) => Some(self.lake.loaded.columns(self.location, version).await?),
            None => None,
        })
    }

    /// The columns and partition columns of the table at the version read, `None` where there was
    /// no table.
    pub(super) async fn shape(&self) -> Result<Option<lakewriter_delta::table::Shape>, RunError> {
        Ok(self.lake.loaded.shape(self.location, self.read_version).await?)
    }

    /// The range of `column` in each live file of the table at the version read (see
    /// [`lakewriter_delta::table::LoadedTables::ranges`]); `None` where there is no table or a
    /// file records none.
    pub(super) async fn ranges(&self, column: &str) -> Result<Option<Vec<lakewriter_delta::ranges::Range>>, RunError> {
        let Some(version) = self.read_version else { return Ok(None) };
        Ok(self.lake.loaded.ranges(self.location, version, column).await?)
    }

    /// What refuses a result of columns `schema` before anything is computed: a check definition
    /// that cannot apply to it, a `not_null` column it does not have.
    pub(super) fn refusal(&self, schema: &datafusion::common::DFSchema) -> Option<RunError> {
        let job = self.run.job;
        let problems = crate::lint::check_problems(self.lake.ctx, job, schema);
        if let Some((check, problem)) = problems.into_iter().next() {
            return Some(lakewriter_compute::Error::BadCheck { check, problem }.into());
        }
        let column = crate::lint::missing_not_null(&job.spec, schema)?;
        Some(crate::Error::NotNullColumn { job: job.spec.name.clone(), column: column.clone() }.into())
    }

    /// Computes `plan` as the rows the write takes: held for its checks and a dry run, or else
    /// the plan itself (see [`Self::refusal`]).
    pub(super) async fn compute_rows(&self, plan: LogicalPlan) -> Result<Computed, RunError> {
        if let Some(refusal) = self.refusal(plan.schema()) {
            return Err(refusal);
        }
        if self.run.job.spec.checks.checks.is_empty() && self.dry_run.is_none() {
            return Ok(Computed::Streamed(plan));
        }
        let held = Materialized::collect(DataFrame::new(self.lake.ctx.state(), plan)).await.map_err(result_err)?;
        Ok(Computed::Held(held))
    }

    /// What applying `source` to the table at the version read does, row by row.
    pub(super) async fn classify(&self, source: &KeyedSource, spec: &KeyedSpec<'_>) -> Result<KeyedCounts, RunError> {
        let provider = match self.read_version {
            Some(version) => Some(self.lake.loaded.provider_at(self.location, version).await?),
            None => None,
        };
        Ok(keyed::classify(self.lake.ctx, source, provider, spec).await?)
    }

    /// The result as a plan to write: held rows read back, a streamed plan as it is.
    pub(super) fn rows_plan(&self, computed: Computed) -> Result<LogicalPlan, lakewriter_compute::Error> {
        Ok(computed.dataframe(self.lake.ctx)?.into_unoptimized_plan())
    }

    /// An `INSERT`'s query laid out as the columns of the table at the version read, then the
    /// columns it adds where its job's `on_schema_change` lets them in (laid out as a write mode's
    /// result is after this: [`Self::columns_laid_out`]).
    pub(super) async fn insert_laid_out(
        &self,
        insert: &lakewriter_compute::statement::Insert,
        plan: LogicalPlan,
    ) -> Result<LogicalPlan, RunError> {
        let shape = self.shape().await?;
        let spec = &self.run.job.spec;
        let extra = spec.on_schema_change != lakewriter_core::OnSchemaChange::Fail;
        let laid_out =
            self.lake.laid_out(insert, &spec.target.to_string(), shape.as_ref(), plan, self.run.unit.dt, extra);
        Ok(laid_out.map_err(RunError::of)?.0)
    }

    /// `plan` laid out as the columns of the table read, as its job's `on_schema_change` says,
    /// with what that changes. A mode that replaces the table replaces its columns with its
    /// result's whatever it says (a full refresh): its changes are reported, its plan stays. An
    /// INSERT's rows come laid out by position ([`super::Mode::lay_out`]); a `MERGE INTO` sets the
    /// columns it names itself.
    pub(crate) async fn columns_laid_out(&self, plan: LogicalPlan) -> Result<(LogicalPlan, ColumnChanges), RunError> {
        let (job, mode) = (self.run.job, self.run.job.mode.as_ref());
        let Some(table) = self.columns().await? else { return Ok((plan, ColumnChanges::default())) };
        if mode.replaces() == Replaces::Table {
            let changes = replaced(&table, plan.schema().as_arrow());
            return Ok((plan, changes));
        }
        if !mode.result_is_rows() {
            return Ok((plan, ColumnChanges::default()));
        }
        let exempt: Vec<&str> = mode.tombstone().into_iter().collect();
        let name = job.spec.target.to_string();
        let partition_by = job.partition_by.as_slice();
        Ok(lay_out(plan, &table, job.spec.on_schema_change, partition_by, &exempt, &name)?)
    }

    /// A dry run's note on the columns its write would add: how many of the job's other written
    /// partitions would read them as NULL until each is rerun.
    pub(crate) async fn note_others_lacking(&self, report: &mut PartitionReport) -> Result<(), RunError> {
        let changes = &self.columns;
        if changes.added.is_empty() || self.run.job.mode.replaces() == Replaces::Table {
            return Ok(());
        }
        let job = &self.run.job.spec.name;
        let scope = lakewriter_delta::state::LogScope::FromLastCheckpoint;
        let state = lakewriter_delta::state::read(self.location, job, scope).await?;
        let others = state.map_or(0, |s| s.partitions.keys().filter(|p| **p != self.run.partition).count());
        report.note = Some(Note::OthersLacking { changes: changes.clone(), others });
        Ok(())
    }

    /// The rows of the table at the version read that the mode's write replaces: its slice, or
    /// the whole table. `None` where there is no table yet, and for the modes that replace no
    /// rows.
    pub(crate) async fn replaced(&self) -> Result<Option<DataFrame>, RunError> {
        let mode = self.run.job.mode.as_ref();
        let (Some(version), replaces) = (self.read_version, mode.replaces()) else { return Ok(None) };
        if replaces == Replaces::Nothing {
            return Ok(None);
        }
        let provider = self.lake.loaded.provider_at(self.location, version).await?;
        let columns = provider.schema();
        let table = self.lake.ctx.read_table(provider).map_err(diff_err)?;
        if replaces == Replaces::Table {
            return Ok(Some(table));
        }
        let (filter, _) = mode.slice(self, &columns).await?;
        Ok(Some(table.filter(filter).map_err(diff_err)?))
    }

    /// A keyed write or a `MERGE INTO` that changes no row: it commits nothing (`None`) where the
    /// partition is fresh (or a concurrent run recorded this very state since this run read it),
    /// and otherwise only the partition's new state over the table's columns (`schema`), so that
    /// it reads as fresh from then on.
    pub(super) async fn record_state_alone(
        &self,
        target: Target<'_>,
        schema: &Schema,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let fresh = self.fresh || recorded_fresh(&target).await;
        if !fresh && target.read_version.is_some() {
            let committed = lakewriter_delta::record_state(target, schema).await?;
            report.note = Some(Note::StateAlone { dry_run: false });
            return Ok(Some(committed));
        }
        report.nothing_to_change(target.read_version, fresh);
        Ok(None)
    }
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
