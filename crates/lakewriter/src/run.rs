//! Running one partition: its attempts (see `crate::attempt`) under the retry policy
//! (`lakewriter_delta::retry`), run ids, and the report of a run that could not start.

use std::time::Instant;

use lakewriter_core::{CheckSeverity, JobSpec, PartitionKey, PartitionRun};
use lakewriter_delta::state::{JobState, Recorded};

use crate::{PartitionReport, PreparedRun, RunError, Runner, elapsed_ms};

impl Runner {
    /// Runs one partition into the job's target: plan, write, one commit (or none). Never panics
    /// on bad input and never returns early: a failure (an unknown job or a bad argument included)
    /// is a report with `status = failed`, and nothing committed.
    pub async fn run(&self, unit: &PartitionRun) -> PartitionReport {
        let started = Instant::now();
        let job = match self.prepare(&unit.job) {
            Ok(job) => job,
            Err(e) => {
                let spec = self.workspace().spec(&unit.job).ok();
                let partition = spec.map_or_else(|| PartitionKey::of(None, unit.dt), |s| s.partition_key(unit.dt));
                return PartitionReport::not_started(unit, spec, partition, started, &e);
            }
        };
        match job.partition_run(unit.dt, unit.force) {
            Ok(run) => self.run_prepared(&run).await,
            Err(e) => PartitionReport::not_run(job, unit, started, &e),
        }
    }

    /// Runs a prepared partition run (its arguments already checked) with conflict retries.
    pub async fn run_prepared(&self, run: &PreparedRun<'_>) -> PartitionReport {
        let (exists, state) = self.state_before_writing(run.job).await;
        self.run_with_retries(run, Previous::of(&state, exists, &run.partition)).await
    }

    /// Runs `run`, and runs it again — plan and write — while its commit conflicts with a
    /// concurrent one, as [`lakewriter_delta::retry::ON_CONFLICT`] says. `previous` is the partition's recorded
    /// state; each retry reads it again, since the concurrent writer may have recorded it.
    /// Its logs are in a span `partition` with the job, the partition and the run id: a span of
    /// level WARN, so that it is there whenever a warning is logged (the default verbosity).
    pub(crate) async fn run_with_retries(&self, run: &PreparedRun<'_>, previous: Previous) -> PartitionReport {
        use tracing::Instrument;
        let run_id = new_run_id();
        let span =
            tracing::warn_span!("partition", job = %run.job.spec.name, partition = %run.partition, run_id = %run_id);
        if let Some(lineage) = self.lineage() {
            lineage.started(run, &run_id, &self.inputs_of(run.job, None).await);
        }
        let report = self.retrying(run, previous, run_id).instrument(span).await;
        if let Some(lineage) = self.lineage() {
            lineage.finished(run, &report);
        }
        report
    }

    async fn retrying(&self, run: &PreparedRun<'_>, previous: Previous, run_id: String) -> PartitionReport {
        let (started, started_at) = (Instant::now(), chrono::Utc::now());
        let (run_id, previous) = (&run_id, &previous);
        let retryable = |(_, e): &(PartitionReport, RunError)| e.is_retryable();
        let (outcome, retries) = lakewriter_delta::retry::ON_CONFLICT
            .run(&run.unit, retryable, |attempt| async move {
                // A retry reads the state again: the concurrent writer may have recorded it.
                let previous = if attempt == 0 { previous.clone() } else { self.previous(run).await };
                let mut report = PartitionReport::of_run(run);
                match self.attempt(run, (run_id, started_at), &previous, &mut report).await {
                    Ok(()) => Ok(report),
                    Err(e) => Err((report, e)),
                }
            })
            .await;
        let mut report = match outcome {
            Err((failed, e)) => {
                // What the attempt found besides the failure: its checks, a dry run's diff.
                let mut report = PartitionReport::of_run(run);
                (report.checks, report.dry_run, report.changes, report.io) =
                    (failed.checks, failed.dry_run, failed.changes, failed.io);
                report.fail(&run.unit, &e.advised(&run.job.spec));
                report
            }
            Ok(report) => {
                for warning in report.checks.iter().filter(|c| !c.passed && c.severity == CheckSeverity::Warn) {
                    tracing::warn!(partition = %run.unit, "{warning} (a warning: it does not stop the commit)");
                }
                tracing::info!(partition = %run.unit, status = ?report.status, rows = report.rows_written, version = report.table_version, "done");
                report
            }
        };
        report.retries = retries;
        if let Some(engine) = self.engine() {
            engine.url().clone_into(&mut report.engine.url);
        }
        report.run_id = Some(run_id.clone());
        report.duration_ms = elapsed_ms(started);
        report
    }
}

/// A partition's recorded state before a run, and the table version it was read at (`None`: no
/// table then, or a log whose state could not be read).
#[derive(Debug, Clone, Default)]
pub(crate) struct Previous {
    pub(crate) recorded: Option<Recorded>,
    pub(crate) at: Option<u64>,
}

impl Previous {
    /// `partition`'s state in `state`, read from the table where it `exists`.
    pub(crate) fn of(state: &JobState, exists: bool, partition: &PartitionKey) -> Self {
        let at = exists.then_some(state.version);
        Self { recorded: state.partitions.get(partition).cloned(), at }
    }
}

impl Runner {
    /// `run`'s partition state as the log holds it now.
    pub(crate) async fn previous(&self, run: &PreparedRun<'_>) -> Previous {
        let (exists, state) = self.state_before_writing(run.job).await;
        Previous::of(&state, exists, &run.partition)
    }
}

impl PartitionReport {
    /// The report of `run` before anything is known: failed until the attempt says otherwise.
    fn of_run(run: &PreparedRun<'_>) -> Self {
        let mut report = Self::of_job(&run.job.spec, run.partition.clone(), run.unit.dt);
        report.mode = Some(run.job.write_mode());
        report
    }

    fn of_job(job: &JobSpec, partition: PartitionKey, dt: Option<chrono::NaiveDate>) -> Self {
        let mut report = Self::blank(job.name.clone(), partition, dt);
        report.target = Some(job.target.clone());
        report.write = Some(job.write.mode());
        report
    }

    /// A run that failed before it started (an unknown job, a bad argument) for its `partition`;
    /// `job` where it is known.
    pub(crate) fn not_started(
        unit: &PartitionRun,
        job: Option<&JobSpec>,
        partition: PartitionKey,
        started: Instant,
        error: &crate::Error,
    ) -> Self {
        let mut report = match job {
            Some(job) => Self::of_job(job, partition, unit.dt),
            None => Self::blank(unit.job.clone(), partition, unit.dt),
        };
        report.fail(unit, error);
        report.duration_ms = elapsed_ms(started);
        report
    }

    /// A run of `job` that failed before it started (a bad argument).
    pub(crate) fn not_run(job: &crate::Job, unit: &PartitionRun, started: Instant, error: &crate::Error) -> Self {
        let mut report = Self::not_started(unit, Some(&job.spec), job.partition(unit.dt), started, error);
        report.mode = Some(job.write_mode());
        report
    }

    /// This report, failed: its `error` is the run and the error's whole chain.
    fn fail(&mut self, unit: &PartitionRun, error: &(dyn std::error::Error + 'static)) {
        let failure = crate::Failure::of(unit, error);
        tracing::info!(partition = %unit, error = %failure, "failed; nothing committed");
        self.error = Some(failure);
    }
}

/// A run id (a partition run, a `maintain`): a random UUID, as OpenLineage identifies runs, which
/// tells runs apart in logs, commit history and lineage.
pub(crate) fn new_run_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunStatus;

    #[tokio::test]
    async fn a_run_that_cannot_start_is_a_failed_report_with_what_is_known_of_its_job() {
        let project = "root = \"lake\"\n[jobs.j]\ntarget = \"a.b\"\nwrite = \"overwrite_partition\"\n\
                       partition_by = \"order_date\"\nsql = \"SELECT $dt AS order_date\"\n";
        let (dir, runner) = Runner::for_test(project).await;

        let whole = runner.run(&PartitionRun::whole("j")).await;
        assert_eq!((whole.status, whole.committed), (RunStatus::Failed, false));
        let known = (whole.target.as_ref().map(ToString::to_string), whole.write, whole.partition.to_string());
        assert_eq!(
            known,
            (Some("a.b".to_owned()), Some(lakewriter_core::WriteMode::OverwritePartition), "all".to_owned())
        );
        let error = "j (whole table): job `j` (write = \"overwrite_partition\") runs for a date: pass --dt YYYY-MM-DD";
        assert_eq!(whole.error.map(|e| e.to_string()).as_deref(), Some(error));

        let day = lakewriter_core::parse_date("2026-09-30").expect("date");
        let forced = runner.run(&PartitionRun::new("j", day).forced(true)).await;
        assert_eq!(forced.partition.to_string(), "order_date=2026-09-30");
        let error = "j dt=2026-09-30: --force applies to write = \"append\" only; job `j` is overwrite_partition";
        assert_eq!(forced.error.map(|e| e.to_string()).as_deref(), Some(error));

        let unknown = runner.run(&PartitionRun::new("nope", day)).await;
        assert_eq!(
            (unknown.target, unknown.write, unknown.partition.to_string()),
            (None, None, "dt=2026-09-30".to_owned())
        );
        let error = format!(
            "nope dt=2026-09-30: {}: no job `nope`; jobs here: j",
            dir.path().join("lakewriter.toml").display()
        );
        assert_eq!(unknown.error.map(|e| e.to_string()), Some(error));
    }
}
