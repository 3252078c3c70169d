//! Running several jobs in dependency order (`backfill --downstream`, `--all`, `reproduce`): each
//! job after every day of the jobs above it has committed; a failure stops only what is below it.

use std::collections::BTreeSet;
use std::time::Instant;

use chrono::NaiveDate;
use lakewriter_core::DateRange;

use crate::{Error, GraphJob, Job, Only, PartitionReport, Runner, Selection, Summary, elapsed_ms};

/// What a pipeline tells as it goes: the CLI prints it, a scratch reproduction ignores it.
pub trait PipelineObserver {
    /// `job` is about to run `days` partitions (one for a job without date partitions).
    fn job_started(&mut self, job: &Job, days: usize);
    /// A partition of the running job finished.
    fn partition_done(&mut self, report: &PartitionReport);
    /// `job` ran: its reports in date order and its summary.
    fn job_done(&mut self, job: &Job, reports: &[PartitionReport], summary: &Summary);
    /// `only` selected no partition of `job` (in `range`, for a job with date partitions).
    fn nothing_to_run(&mut self, job: &Job, only: Only, range: Option<DateRange>);
    /// `job` was not run, and why.
    fn not_run(&mut self, job: &str, reason: &str);
    /// `job` could not start (its partitions could not be selected).
    fn job_failed(&mut self, job: &str, error: &Error);
}

/// One job of a pipeline and the days it runs over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage<'g> {
    pub job: &'g GraphJob,
    /// The days it runs over; `None` for a job without date partitions (run whole). A job with
    /// date partitions and no range is not run, unless `days` is empty.
    pub range: Option<DateRange>,
    /// Where given, only these days of the range run (a reproduction's: the days the live
    /// lakehouse wrote); none: the job has nothing to run.
    pub days: Option<BTreeSet<NaiveDate>>,
}

impl<'g> Stage<'g> {
    /// `job` over `range`, every day of it.
    #[must_use]
    pub fn over(job: &'g GraphJob, range: Option<DateRange>) -> Self {
        Self { job, range, days: None }
    }
}

/// The jobs of a pipeline that failed (a partition, or the job) or were not run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PipelineOutcome {
    pub failed: BTreeSet<String>,
    pub not_run: BTreeSet<String>,
}

impl PipelineOutcome {
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.failed.is_empty() && self.not_run.is_empty()
    }
}

impl Runner {
    /// Runs `jobs` one after the other, in the (dependency) order given, each over its range
    /// (`None`: a job with date partitions is not run), the days `only` and `shard` select: a
    /// job's days run after every day of the jobs above it has committed, and its `--only`
    /// selection is made then, so that it sees what they rewrote. A job with an upstream job that
    /// failed or was not run is not run.
    pub async fn pipeline(
        &self,
        jobs: &[Stage<'_>],
        (only, shard): (Only, Option<(u32, u32)>),
        parallel: Option<usize>,
        observer: &mut impl PipelineObserver,
    ) -> PipelineOutcome {
        let mut outcome = PipelineOutcome::default();
        for Stage { job: graph_job, range, days: only_days } in jobs {
            let name = graph_job.job.as_str();
            if let Some(reason) = graph_job.blocked_by(&outcome.failed, &outcome.not_run) {
                observer.not_run(name, &reason);
                outcome.not_run.insert(name.to_owned());
                continue;
            }
            let job = match self.prepare(name) {
                Ok(job) => job,
                Err(e) => {
                    observer.job_failed(name, &e);
                    outcome.failed.insert(name.to_owned());
                    continue;
                }
            };
            let work = match (job.dated(), range) {
                (false, _) => {
                    self.rebuild_selected(job, only).await.map(|run| if run { Work::Whole } else { Work::Nothing })
                }
                (true, _) if only_days.as_ref().is_some_and(BTreeSet::is_empty) => Ok(Work::Nothing),
                (true, Some(range)) => {
                    self.select(job, Selection { range: *range, shard, only }).await.map(|mut days| {
                        if let Some(only_days) = only_days {
                            days.retain(|d| only_days.contains(d));
                        }
                        if days.is_empty() { Work::Nothing } else { Work::Days(days) }
                    })
                }
                (true, None) => {
                    observer.not_run(name, "it has written no partition, and no range was given (--from, --to)");
                    outcome.not_run.insert(name.to_owned());
                    continue;
                }
            };
            let reports = match work {
                Ok(work) => self.run_job(job, work, *range, only, parallel, observer).await,
                Err(e) => {
                    observer.job_failed(name, &e);
                    outcome.failed.insert(name.to_owned());
                    continue;
                }
            };
            if !reports.iter().all(PartitionReport::is_ok) {
                outcome.failed.insert(name.to_owned());
            }
        }
        outcome
    }

    /// One job of a pipeline: its `work`, told to `observer`.
    async fn run_job(
        &self,
        job: &Job,
        work: Work,
        range: Option<DateRange>,
        only: Only,
        parallel: Option<usize>,
        observer: &mut impl PipelineObserver,
    ) -> Vec<PartitionReport> {
        let started = Instant::now();
        let reports = match work {
            Work::Nothing => {
                observer.nothing_to_run(job, only, range);
                Vec::new()
            }
            Work::Days(days) => {
                observer.job_started(job, days.len());
                self.backfill(job, days, parallel, |r| observer.partition_done(r)).await
            }
            Work::Whole => {
                observer.job_started(job, 1);
                let report = match job.partition_run(None, false) {
                    Ok(run) => self.run_prepared(&run).await,
                    Err(e) => PartitionReport::not_run(
                        job,
                        &lakewriter_core::PartitionRun::whole(&job.spec.name),
                        started,
                        &e,
                    ),
                };
                observer.partition_done(&report);
                vec![report]
            }
        };
        observer.job_done(
            job,
            &reports,
            &Summary::of(&job.spec.name, &reports, elapsed_ms(started), self.dry_run.is_some()),
        );
        reports
    }
}

/// What a pipeline runs of one job.
enum Work {
    /// These days.
    Days(Vec<NaiveDate>),
    /// Its one run (a job without date partitions).
    Whole,
    /// Nothing: `--only` selected nothing.
    Nothing,
}
