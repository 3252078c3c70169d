//! One attempt at a partition: plan, check the plan, fingerprint, compute, check the result, then
//! its mode's write (see `crate::write`) — one Delta commit, or none (always none in a dry run).

use chrono::{DateTime, Utc};
use lakewriter_core::{CheckOutcome, InputFile, input_fingerprint, stable_hash};
use lakewriter_delta::schema::ColumnChanges;
use lakewriter_delta::{CheckRecord, CommitMetadata, Committed, Target};

use crate::run::Previous;
use crate::write::{Attempt, Replaces};
use crate::{DryRun, Error, Note, PartitionReport, PreparedRun, RunError, RunStatus, Runner};

impl Runner {
    /// Reads the table's version, plans `run`, checks its plan (determinism, storable types),
    /// fingerprints its inputs, computes and checks its result (see `crate::write`) and writes
    /// over that version — in a dry run, compares instead of writing. `previous` is the partition's
    /// recorded state, which tells whether it was fresh; a mode that fills in what the partition
    /// lacked reads it again where it was read at another version than the one it writes over
    /// (another writer's commit since, or the days of its own backfill). The commit carries the run's id and the
    /// time it started (its first attempt). The report is filled in as the attempt goes; an
    /// error leaves nothing committed.
    ///
    /// The version is read before the raw layer is: a commit made since — by a writer that may
    /// have read raw files this attempt did not see — then conflicts with this attempt's, which
    /// runs again, instead of overwriting it with an older result and older partition state.
    pub(crate) async fn attempt(
        &self,
        run: &PreparedRun<'_>,
        (run_id, started_at): (&str, DateTime<Utc>),
        previous: &Previous,
        report: &mut PartitionReport,
    ) -> Result<(), RunError> {
        let job = run.job;
        let mode = job.mode.as_ref();
        let read_version = self.loaded.latest_version(&job.location).await?;
        let read_again;
        let previous = if mode.fills_in() && previous.at != read_version {
            read_again = self.previous(run).await;
            read_again.recorded.as_ref()
        } else {
            previous.recorded.as_ref()
        };
        let mut attempt = Attempt::new(self.lakehouse(), self.dry_run, run, read_version, previous);
        let (query, columns) = self.planned(&attempt).await?;
        attempt.columns = columns;
        report.columns_changed(&attempt.columns, job.spec.on_schema_change);
        let table = job.spec.target.to_string();
        lakewriter_delta::phase(lakewriter_core::Phase::Planned, &table, &run.partition);
        let inputs = input_fingerprint(&query.files);
        attempt.fresh = previous.is_some_and(|r| r.is_fresh(&job.code, &inputs));
        report.fresh_before = Some(attempt.fresh);
        report.files_scanned = Some(query.files.len());
        if self.lineage().is_some() {
            let columns =
                query.plan.schema().fields().iter().map(|f| lakewriter_delta::schema::SchemaColumn::of(f)).collect();
            let inputs = self.inputs_of(job, Some(&query.files)).await;
            report.io = Some(Box::new(crate::lineage::RunIo { inputs, columns }));
        }
        report.input_fingerprint = Some(inputs.clone());
        if let Some(version) = mode.already_written(&attempt) {
            report.skipped(version);
            report.dry_run =
                self.dry_run.map(|_| DryRun { rows_added: Some(0), rows_removed: Some(0), ..DryRun::default() });
            return Ok(());
        }
        if let (Some(_), Some(why)) = (self.dry_run, mode.refuses_dry_run()) {
            return Err(RunError::Setup(crate::Error::Usage(why.into())));
        }
        let computed = mode.compute(&attempt, query.plan).await?;
        let compares = self.dry_run.is_some() || job.spec.checks.compares();
        let replaced = if compares { attempt.replaced().await? } else { None };
        let blocked = attempt.checked(&computed, replaced.as_ref(), report).await?;
        if self.dry_run.is_some() {
            attempt.note_others_lacking(report).await?;
            let dry = mode.preview(&attempt, computed, replaced, report).await?;
            report.previewed(dry, read_version);
            return if blocked.is_empty() { Ok(()) } else { Err(RunError::Checks { failed: blocked }) };
        }
        if !blocked.is_empty() {
            return Err(RunError::Checks { failed: blocked });
        }
        let mut metadata = commit_metadata(run, (run_id, started_at), &query.files, inputs, &report.checks);
        metadata.unwritten = attempt.columns.missing.iter().map(|c| c.column.clone()).collect();
        let adds_columns = mode.replaces() != Replaces::Table && !attempt.columns.added.is_empty();
        let target = Target { adds_columns, ..self.target_of(job, &table, &metadata, read_version) };
        if let Some(committed) = mode.commit(&attempt, target, computed, report).await? {
            report.record_commit(committed, attempt.fresh);
        }
        Ok(())
    }

    /// The partition's plan, checked (determinism, storable types) and laid out as its write
    /// takes it, with what that does to the table's columns (see [`Attempt::columns_laid_out`]).
    async fn planned(
        &self,
        attempt: &Attempt<'_>,
    ) -> Result<(lakewriter_compute::PartitionQuery, ColumnChanges), RunError> {
        let job = attempt.run.job;
        let mut query = self.plan(&job.query, attempt.run.unit.dt).await.map_err(|e| {
            Error::own_table_missing(&e, &job.spec.name).map_or_else(|| RunError::from(e), RunError::Setup)
        })?;
        if let (Some(dt), false) = (attempt.run.unit.dt, query.no_input.is_empty())
            && job.spec.on_missing_input == lakewriter_core::OnMissingInput::Fail
        {
            let (job, tables) = (job.spec.name.clone(), std::mem::take(&mut query.no_input));
            return Err(RunError::Setup(Error::NoInput { job, dt, tables }));
        }
        self.check_determinism(job, &query.plan).await?;
        let table = job.spec.target.to_string();
        query.plan = job.mode.lay_out(attempt, query.plan).await?;
        query.plan = lakewriter_delta::schema::storable(query.plan, &table)?;
        query.plan =
            lakewriter_delta::values::empty_partitions_as_null(query.plan, job.partition_by.as_slice(), &table)?;
        let (plan, columns) = attempt.columns_laid_out(query.plan).await?;
        query.plan = plan;
        Ok((query, columns))
    }
}

impl Runner {
    /// The table `job` writes, named `table`, for a commit of `metadata` over `read_version`
    /// (adding no column).
    pub(crate) fn target_of<'a>(
        &'a self,
        job: &'a crate::Job,
        table: &'a str,
        metadata: &'a CommitMetadata,
        read_version: Option<u64>,
    ) -> Target<'a> {
        Target {
            location: &job.location,
            name: table,
            partition_columns: job.partition_by.as_slice(),
            not_null: &job.spec.not_null,
            metadata,
            read_version,
            loaded: &self.loaded,
            adds_columns: false,
        }
    }
}

/// The `lakewriter` metadata of `run`'s commit: what it was computed from, and by which run.
fn commit_metadata(
    run: &PreparedRun<'_>,
    (run_id, started_at): (&str, DateTime<Utc>),
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
        started_at: Some(started_at.timestamp_millis()),
        forced: run.unit.force,
        checks: checks.iter().map(CheckRecord::from).collect(),
        unwritten: Vec::new(),
    }
}

impl PartitionReport {
    /// An `append` found its partition appended before.
    pub(crate) fn skipped(&mut self, version: u64) {
        self.status = RunStatus::Skipped;
        self.table_version = Some(version);
        self.note = Some(Note::AlreadyAppended);
    }

    /// A write with no row to change, and no state to record: no new table version.
    pub(crate) fn nothing_to_change(&mut self, current: Option<u64>, fresh: bool) {
        self.status = RunStatus::Ok;
        self.rows_written = Some(0);
        self.table_version = current;
        self.note = Some(Note::NothingToChange { fresh });
    }

    /// A dry run found `dry`, against the table at `read_version`.
    fn previewed(&mut self, dry: DryRun, read_version: Option<u64>) {
        self.dry_run = Some(dry);
        self.status = RunStatus::Ok;
        self.table_version = read_version;
    }

    /// This run committed `committed`.
    fn record_commit(&mut self, committed: Committed, fresh: bool) {
        self.status = RunStatus::Ok;
        self.committed = true;
        if fresh && self.note.is_none() {
            self.note = Some(Note::WasFresh);
        }
        self.rows_written = self.changes.map(|c| c.rows_changed()).or(committed.rows_written);
        self.table_version = Some(committed.version);
        self.files_added = committed.files_added;
        self.files_removed = committed.files_removed;
        self.bytes_added = committed.bytes_added;
        self.bytes_removed = committed.bytes_removed;
        if let Some(spread) = committed.spread {
            (self.engine.executors, self.engine.tasks, self.engine.files) =
                (Some(spread.writers), Some(spread.tasks), Some(spread.files));
        }
    }
}
