//! One attempt at a partition: plan, check the plan, fingerprint, compute, check the result, then
//! the write its [`WritePlan`] names — one Delta commit, or none (always none in a dry run).

use lakewriter_compute::{KeyedCounts, KeyedSource, KeyedSpec};
use lakewriter_core::{CheckOutcome, InputFile, input_fingerprint, stable_hash};
use lakewriter_delta::state::{LogScope, Recorded};
use lakewriter_delta::{AppendOutcome, CheckRecord, CommitMetadata, Committed, MergeSpec, Target};

use crate::result::Computed;
use crate::sql::JobStatement;
use crate::{DryRun, PartitionReport, PreparedRun, RunError, RunStatus, Runner, WritePlan};

impl Runner {
    /// Reads the table's version, plans `run`, checks its plan (determinism, storable types),
    /// fingerprints its inputs, computes and checks its result (see `crate::result`) and writes
    /// over that version — in a dry run, compares instead of writing. `previous` is the partition's
    /// recorded state, which tells whether it was fresh. The report is filled in as the attempt
    /// goes; an error leaves nothing committed.
    ///
    /// The version is read before the raw layer is: a commit made since — by a writer that may
    /// have read raw files this attempt did not see — then conflicts with this attempt's, which
    /// runs again, instead of overwriting it with an older result and older partition state.
    pub(crate) async fn attempt(
        &self,
        run: &PreparedRun<'_>,
        run_id: &str,
        previous: Option<&Recorded>,
        report: &mut PartitionReport,
    ) -> Result<(), RunError> {
        let job = run.job;
        let read_version = lakewriter_delta::state::latest_version(&job.location).await?;
        let mut query = self.plan(&job.query, run.unit.dt).await?;
        self.check_determinism(job, &query.plan).await?;
        let table = job.spec.target.to_string();
        if let Some(insert) = job.statement.as_ref().and_then(JobStatement::insert) {
            query.plan = self.lay_out(insert, job, read_version, query.plan, run.unit.dt).await?;
        }
        query.plan = lakewriter_delta::schema::storable(query.plan, &table)?;
        query.plan =
            lakewriter_delta::values::empty_partitions_as_null(query.plan, job.spec.partition_by.as_slice(), &table)?;
        lakewriter_delta::phase(lakewriter_core::Phase::Planned, &table, &run.partition);
        let inputs = input_fingerprint(&query.files);
        let fresh = previous.is_some_and(|r| r.is_fresh(&job.code, &inputs));
        report.fresh_before = Some(fresh);
        report.files_scanned = Some(query.files.len());
        report.input_fingerprint = Some(inputs.clone());
        if let (WritePlan::Append { force: false }, Some(_), Some(version)) = (&run.write, previous, read_version) {
            // Appended before (the state the write would find): nothing to compute.
            report.skipped(version);
            report.dry_run =
                self.dry_run.map(|_| DryRun { rows_added: Some(0), rows_removed: Some(0), ..DryRun::default() });
            return Ok(());
        }
        if self.dry_run.is_some() && matches!(run.write, WritePlan::Merge(_)) {
            let message =
                "a dry run of a job written as MERGE INTO is not supported: delta-rs merges only by committing";
            return Err(RunError::Setup(crate::Error::Usage(message.into())));
        }
        let computed = self.compute(run, query.plan).await?;
        let compares = self.dry_run.is_some() || job.spec.checks.compares();
        let replaced = if compares { self.replaced(run, &job.location, read_version).await? } else { None };
        let blocked = self.checked(run, &computed, (replaced.as_ref(), (&job.location, read_version)), report).await?;
        if self.dry_run.is_some() {
            let table = (&job.location, read_version);
            self.preview(run, computed, replaced, table, fresh, report).await?;
            return if blocked.is_empty() { Ok(()) } else { Err(RunError::Checks { failed: blocked }) };
        }
        if !blocked.is_empty() {
            return Err(RunError::Checks { failed: blocked });
        }
        let metadata = commit_metadata(run, run_id, &query.files, inputs, &report.checks);
        let target = Target {
            location: &job.location,
            name: &table,
            partition_columns: job.spec.partition_by.as_slice(),
            not_null: &job.spec.not_null,
            metadata: &metadata,
            read_version,
            loaded: &self.loaded,
        };
        if let Some(committed) = self.write(run, target, computed, fresh, report).await? {
            if matches!(run.write, WritePlan::Append { force: true }) && previous.is_some() {
                let note = "--force: appended again; rows appended before for this partition are now duplicated";
                report.note = Some(note.into());
            }
            report.record_commit(committed, fresh);
        }
        Ok(())
    }

    /// The write `run.write` names. `None` where nothing was committed (the report says why).
    async fn write(
        &self,
        run: &PreparedRun<'_>,
        target: Target<'_>,
        computed: Computed,
        fresh: bool,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let state = self.session().state();
        let plan = match computed {
            Computed::Keyed(source) => match &run.write {
                WritePlan::Keyed(spec) => {
                    let job = run.job.spec;
                    return self.write_keyed(target, (job, source), spec, fresh, report).await;
                }
                _ => unreachable!("a keyed source is computed for a keyed write only"),
            },
            Computed::Held(held) => {
                held.dataframe(self.session()).map_err(crate::result::result_err)?.into_unoptimized_plan()
            }
            Computed::Streamed(plan) => plan,
        };
        if let WritePlan::Merge(merge) = &run.write {
            let source = datafusion::prelude::DataFrame::new(state, plan);
            return self.write_merge(target, merge, source, run.unit.dt, fresh, report).await;
        }
        let committed = match &run.write {
            WritePlan::OverwritePartition { .. } | WritePlan::DeleteInsert { .. } => {
                let table = (target.location, target.read_version);
                let slice = self.slice(run, table, plan.schema().as_arrow()).await?;
                let (predicate, outside) = slice.expect("an overwrite and a delete+insert replace a slice");
                lakewriter_delta::replace_where(&state, target, plan, predicate, &outside).await?
            }
            WritePlan::Rebuild => lakewriter_delta::replace_all(&state, target, plan).await?,
            WritePlan::Append { force } => match lakewriter_delta::append_once(&state, target, plan, *force).await? {
                AppendOutcome::AlreadyCommitted { version } => {
                    report.skipped(version);
                    return Ok(None);
                }
                AppendOutcome::Committed(committed) => committed,
            },
            WritePlan::Keyed(_) => unreachable!("a keyed write's result is a keyed source"),
            WritePlan::Merge(_) => unreachable!("a MERGE statement is written above"),
        };
        Ok(Some(committed))
    }

    /// `merge` and `append_dedup`: prepare and classify the source, then merge it unless it
    /// changes nothing. A source that changes no row commits nothing (`None`) where the
    /// partition was `fresh`, and otherwise only the partition's new state, so that it reads as
    /// fresh from then on.
    async fn write_keyed(
        &self,
        target: Target<'_>,
        (job, source): (&lakewriter_core::JobSpec, KeyedSource),
        spec: &KeyedSpec<'_>,
        fresh: bool,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let ctx = self.session();
        self.refuse_other_columns(job, (target.location, target.read_version), &source.held.schema).await?;
        // Classified against the version the write reads and commits over.
        let counts = self.classify(&source, spec, target.location, target.read_version).await?;
        report.changes = Some(counts);
        if !counts.changes_anything() {
            // A concurrent run may have recorded this very state since this run read it.
            let fresh = fresh || recorded_fresh(target.metadata, target.location).await;
            if !fresh && target.read_version.is_some() {
                let committed = lakewriter_delta::record_state(target, &source.held.schema).await?;
                report.note = Some("no row to change: committed only the partition's new state".into());
                return Ok(Some(committed));
            }
            report.nothing_to_change(target.read_version, fresh);
            return Ok(None);
        }
        let df = source.dataframe(ctx)?;
        let merge = MergeSpec { key: spec.key, newer_by: spec.newer_by };
        Ok(Some(lakewriter_delta::merge(&ctx.state(), target, df, merge).await?))
    }
}

impl Runner {
    /// A job's INSERT: its query's rows laid out as the columns of the table at `read_version`.
    async fn lay_out(
        &self,
        insert: &lakewriter_compute::statement::Insert,
        job: &crate::PreparedJob<'_>,
        read_version: Option<u64>,
        plan: datafusion::logical_expr::LogicalPlan,
        dt: Option<chrono::NaiveDate>,
    ) -> Result<datafusion::logical_expr::LogicalPlan, RunError> {
        let shape = self.loaded.shape(&job.location, read_version).await?;
        let table = job.spec.target.to_string();
        Ok(self.laid_out(insert, &table, shape.as_ref(), plan, dt).map_err(RunError::of)?.0)
    }

    /// A job's `MERGE INTO`: as written, into the table at the version the run read. A merge
    /// that changes no row commits nothing (`None`) where the partition was `fresh`, and otherwise
    /// only the partition's new state.
    async fn write_merge(
        &self,
        target: Target<'_>,
        merge: &lakewriter_compute::statement::Merge,
        source: datafusion::prelude::DataFrame,
        dt: Option<chrono::NaiveDate>,
        fresh: bool,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let shape = self.loaded.shape(target.location, target.read_version).await?;
        let schema = source.schema().as_arrow().clone();
        let (committed, counts) =
            self.merge_statement(merge, target, shape.as_ref(), source, dt).await.map_err(RunError::of)?;
        report.changes = Some(KeyedCounts {
            inserted: counts.inserted,
            updated: counts.updated,
            deleted: counts.deleted,
            ..KeyedCounts::default()
        });
        if committed.is_some() {
            return Ok(committed);
        }
        let fresh = fresh || recorded_fresh(target.metadata, target.location).await;
        if !fresh && target.read_version.is_some() {
            let table_schema = shape.map_or(schema, |s| s.schema.as_ref().clone());
            let committed = lakewriter_delta::record_state(target, &table_schema).await?;
            report.note = Some("no row to change: committed only the partition's new state".into());
            return Ok(Some(committed));
        }
        report.nothing_to_change(target.read_version, fresh);
        Ok(None)
    }
}

/// The `lakewriter` metadata of `run`'s commit: what it was computed from, and by which run.
fn commit_metadata(
    run: &PreparedRun<'_>,
    run_id: &str,
    files: &[InputFile],
    inputs: String,
    checks: &[CheckOutcome],
) -> CommitMetadata {
    let job = run.job;
    CommitMetadata {
        job: job.spec.name.clone(),
        partition: run.partition.clone(),
        write: job.spec.write.mode().to_string(),
        lakewriter_version: lakewriter_core::VERSION.to_owned(),
        sql_hash: stable_hash(job.sql.as_bytes()),
        code_fingerprint: job.code.clone(),
        input_fingerprint: inputs,
        inputs: (files.len() <= CommitMetadata::MAX_LISTED_INPUTS).then(|| files.to_vec()),
        run_id: run_id.to_owned(),
        forced: run.unit.force,
        checks: checks.iter().map(CheckRecord::from).collect(),
    }
}

/// Whether the log records `metadata`'s code and inputs for its partition now.
async fn recorded_fresh(metadata: &CommitMetadata, location: &lakewriter_storage::Location) -> bool {
    matches!(
        lakewriter_delta::state::read(location, &metadata.job, LogScope::FromLastCheckpoint).await,
        Ok(Some(state)) if state
            .partitions
            .get(&metadata.partition)
            .is_some_and(|r| r.is_fresh(&metadata.code_fingerprint, &metadata.input_fingerprint))
    )
}

impl PartitionReport {
    /// An `append` found its partition appended before.
    fn skipped(&mut self, version: u64) {
        self.status = RunStatus::Skipped;
        self.table_version = Some(version);
        self.note = Some("already appended; nothing appended. --force appends again and duplicates these rows".into());
    }

    /// A keyed write with no row to change, and no state to record: no new table version.
    fn nothing_to_change(&mut self, current: Option<u64>, fresh: bool) {
        self.status = RunStatus::Ok;
        self.rows_written = Some(0);
        self.table_version = current;
        self.note = Some(if fresh {
            "already fresh: nothing to change, no new table version".into()
        } else {
            "nothing to change: no new table version".into()
        });
    }

    /// This run committed `committed`.
    fn record_commit(&mut self, committed: Committed, fresh: bool) {
        self.status = RunStatus::Ok;
        self.committed = true;
        if fresh && self.note.is_none() {
            self.note = Some("was already fresh (same code and inputs)".into());
        }
        self.rows_written = self.changes.map(|c| c.inserted + c.updated + c.deleted).or(committed.rows_written);
        self.table_version = Some(committed.version);
        self.files_added = committed.files_added;
        self.files_removed = committed.files_removed;
    }
}
