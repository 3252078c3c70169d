//! The figures both printers show: a status's counts, the maintenance due, a job's overview.

use chrono::{DateTime, NaiveDate, Utc};
use lakewriter::{DateRange, Freshness, JobOverview, Layout, LogLength, Overviewed, PartitionStatus};
use serde::Serialize;

/// How many partitions of a status are fresh, stale, missing and without input.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct StateCounts {
    pub fresh: usize,
    pub stale: usize,
    pub missing: usize,
    pub no_input: usize,
}

impl StateCounts {
    pub fn of(partitions: &[PartitionStatus]) -> Self {
        let count = |state| partitions.iter().filter(|p| p.state == state).count();
        Self {
            fresh: count(Freshness::Fresh),
            stale: count(Freshness::Stale),
            missing: count(Freshness::Missing),
            no_input: count(Freshness::NoInput),
        }
    }

    /// The partitions of `state`.
    pub fn of_state(&self, state: Freshness) -> usize {
        match state {
            Freshness::Fresh => self.fresh,
            Freshness::Stale => self.stale,
            Freshness::Missing => self.missing,
            Freshness::NoInput => self.no_input,
        }
    }

    /// These counts and `other`'s, added.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            fresh: self.fresh + other.fresh,
            stale: self.stale + other.stale,
            missing: self.missing + other.missing,
            no_input: self.no_input + other.no_input,
        }
    }
}

/// What `status --maintenance` says of a table: its files, and which steps are due.
#[derive(Serialize)]
pub struct Maintenance<'a> {
    #[serde(flatten)]
    pub layout: &'a Layout,
    /// `compact` where a partition holds several small files, `checkpoint` where
    /// [`lakewriter::CHECKPOINT_AFTER`] commits or more follow the newest checkpoint.
    pub needed: Vec<&'static str>,
}

impl<'a> Maintenance<'a> {
    pub fn of(layout: &'a Layout, log: Option<LogLength>) -> Self {
        let mut needed = Vec::new();
        if !layout.to_compact.is_empty() {
            needed.push("compact");
        }
        if log.is_some_and(|log| log.needs_checkpoint()) {
            needed.push("checkpoint");
        }
        Self { layout, needed }
    }
}

/// One job of `status` without a job: its range, the counts of its partitions' states, its last
/// write — or that it has written nothing, or why its state cannot be told.
#[derive(Debug, Serialize)]
pub struct JobOverviewLine {
    pub job: String,
    pub write: lakewriter::WriteMode,
    pub target: String,
    /// The days shown: the range asked for, else the first to the last partition written (both
    /// null for a job that is not dated, or has written nothing).
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    /// Whether it has written any partition (of the range, where one was asked for).
    pub written: bool,
    #[serde(flatten)]
    pub counts: StateCounts,
    /// Partitions whose state cannot be told (`error` says why): those its table records.
    pub failed: usize,
    pub table_version: Option<u64>,
    /// When the newest partition shown was written, and how long ago (seconds).
    pub last_write: Option<DateTime<Utc>>,
    pub age_s: Option<i64>,
    /// Why its state cannot be told: its SQL does not plan, its table cannot be read.
    pub error: Option<String>,
}

impl JobOverviewLine {
    /// The line of `job` (whose write mode and target `spec` gives), as of `now`.
    pub fn of(job: &JobOverview, spec: &lakewriter::JobSpec, range: Option<DateRange>, now: DateTime<Utc>) -> Self {
        let mut line = Self {
            job: job.job.clone(),
            write: spec.write.mode(),
            target: spec.target.to_string(),
            from: range.map(|r| r.from()),
            to: range.map(|r| r.to()),
            written: false,
            counts: StateCounts::default(),
            failed: 0,
            table_version: None,
            last_write: None,
            age_s: None,
            error: None,
        };
        match &job.state {
            Overviewed::Read { status, .. } => {
                let dates = status.partitions.iter().filter_map(|p| p.dt);
                (line.from, line.to) = (dates.clone().min(), dates.max());
                line.written = status.partitions.iter().any(|p| {
                    matches!(p.state, Freshness::Fresh | Freshness::Stale)
                        || p.version.is_some()
                        || p.written_at.is_some()
                });
                line.counts = StateCounts::of(&status.partitions);
                line.table_version = status.table_version;
                line.last_write = status.partitions.iter().filter_map(|p| p.written_at).max();
            }
            Overviewed::NothingWritten => {}
            Overviewed::Failed(error) => {
                line.error = Some(crate::output::stderr::one_line(error));
                if let Some(written) = &job.written {
                    line.written = written.partitions > 0;
                    line.failed = written.partitions;
                    line.table_version = Some(written.table_version);
                    line.last_write = written.last_write;
                    if range.is_none() {
                        (line.from, line.to) = (written.range.map(|r| r.from()), written.range.map(|r| r.to()));
                    }
                }
            }
        }
        line.age_s = line.last_write.map(|at| (now - at).num_seconds().max(0));
        line
    }
}

/// The closing line of `status` without a job: the jobs, and their partitions' states.
#[derive(Debug, Default, Serialize)]
pub struct OverviewTotals {
    pub jobs: usize,
    /// Jobs that have written no partition (of the range asked for).
    pub not_written: usize,
    /// Jobs whose state cannot be told (the command exits 1).
    pub failed_jobs: usize,
    #[serde(flatten)]
    pub counts: StateCounts,
    /// Partitions whose state cannot be told.
    pub failed: usize,
}

impl OverviewTotals {
    pub fn of(lines: &[JobOverviewLine]) -> Self {
        let mut totals = Self { jobs: lines.len(), ..Self::default() };
        for line in lines {
            totals.counts = totals.counts.plus(line.counts);
            totals.failed += line.failed;
            totals.not_written += usize::from(!line.written && line.error.is_none());
            totals.failed_jobs += usize::from(line.error.is_some());
        }
        totals
    }
}
