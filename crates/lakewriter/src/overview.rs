//! What `lakewriter report` and `lakewriter status` without a job show, gathered: the job graph,
//! and for each job the state of its partitions over a range — [`Runner::status`], the very
//! report `status JOB` prints — with, for the report, its table's files and log (what `status
//! --maintenance` reads). It reads the tables' logs (and snapshots) and plans each day, as
//! `status` does — a day an upstream job's and a downstream job's status both need, once —, and
//! writes nothing; the page and the lines are the CLI's.

use chrono::{DateTime, Utc};
use lakewriter_core::{DateRange, PartitionKey};
use lakewriter_delta::maintain::Layout;
use lakewriter_delta::state::LogScope;

use crate::upstream::Found;
use crate::{Error, JobGraph, JobStatus, Result, Runner};

/// The project's jobs, each with its state, and the graph between them.
#[derive(Debug)]
pub struct Overview {
    /// The range asked for; `None`: each job's own, from the first to the last partition it wrote.
    pub range: Option<DateRange>,
    pub graph: JobGraph,
    /// In the graph's (dependency) order.
    pub jobs: Vec<JobOverview>,
}

/// One job of an [`Overview`].
#[derive(Debug)]
pub struct JobOverview {
    pub job: String,
    pub state: Overviewed,
    /// Where its state could not be read ([`Overviewed::Failed`]: its SQL does not plan, say),
    /// what its table's log records of its writes, where that can be read.
    pub written: Option<Written>,
}

/// What a job's table records of its writes in a range (or all of them), read from its log alone:
/// what is shown of a job whose partitions' freshness cannot be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The table version the log was read at.
    pub table_version: u64,
    /// The partitions written (in the range asked for, if one was).
    pub partitions: usize,
    /// The first to the last date partition of those, for a dated job.
    pub range: Option<DateRange>,
    /// When the newest of them was written (known for the writes the log still has).
    pub last_write: Option<DateTime<Utc>>,
}

/// What could be read of a job.
#[derive(Debug)]
pub enum Overviewed {
    /// Its partitions' states (as `status` shows them) and its table's files (`None`: no table
    /// yet).
    Read { status: Box<JobStatus>, layout: Option<Layout> },
    /// A dated job that has written no partition, where no range was given: nothing to show yet.
    NothingWritten,
    /// Its state could not be read, and why: the other jobs are shown all the same.
    Failed(Error),
}

impl Runner {
    /// The state of every job of the project over `range` (default: each job's written range),
    /// in dependency order, with each table's files where `layouts` (`report`). A job whose state
    /// cannot be read is kept as its error, with what its log records ([`Written`]); only a
    /// project whose graph cannot be made (a cycle) fails.
    pub async fn overview(&self, range: Option<DateRange>, layouts: bool) -> Result<Overview> {
        let (graph, mut unread) = self.graph_lenient()?;
        let mut jobs = Vec::with_capacity(graph.jobs.len());
        // Upstream first: a job's upstream days are told stale by the states found already.
        let mut found = Found::default();
        for node in &graph.jobs {
            let state = match unread.remove(&node.job) {
                Some(error) => Overviewed::Failed(error),
                None => self.job_overview(&node.job, range, layouts, &found).await,
            };
            match &state {
                Overviewed::Read { status, .. } => found.keep(&node.job, &status.partitions),
                Overviewed::Failed(_) => found.failed(&node.job),
                Overviewed::NothingWritten => {}
            }
            let written = match &state {
                Overviewed::Failed(_) => self.written_of(&node.job, range).await,
                _ => None,
            };
            jobs.push(JobOverview { job: node.job.clone(), state, written });
        }
        Ok(Overview { range, graph, jobs })
    }

    async fn job_overview(&self, name: &str, range: Option<DateRange>, layouts: bool, found: &Found) -> Overviewed {
        let job = match self.prepare(name) {
            Ok(job) => job,
            Err(e) => return Overviewed::Failed(e),
        };
        let status = match self.status_after(job, range, found).await {
            Ok(status) if status.nothing_written(job, range) => return Overviewed::NothingWritten,
            Ok(status) => status,
            Err(e) => return Overviewed::Failed(e),
        };
        match if layouts { self.layout(job).await } else { Ok(None) } {
            Ok(layout) => Overviewed::Read { status: Box::new(status), layout },
            Err(e) => Overviewed::Failed(e),
        }
    }

    /// What the log of job `name`'s table records of its writes in `range`; `None` where it
    /// cannot be read, or there is no table.
    async fn written_of(&self, name: &str, range: Option<DateRange>) -> Option<Written> {
        let workspace = self.workspace();
        let spec = workspace.spec(name).ok()?;
        let location = workspace.table_location(&spec.target).ok()?;
        let state = self.recorded_at(spec, &location, LogScope::Whole).await.ok()??;
        let within = |key: &PartitionKey| key.date().is_none_or(|dt| range.is_none_or(|r| r.contains(dt)));
        let written: Vec<_> = state.partitions.iter().filter(|(key, _)| within(key)).collect();
        let dates = || written.iter().filter_map(|(key, _)| key.date());
        Some(Written {
            table_version: state.version,
            partitions: written.len(),
            range: dates().min().zip(dates().max()).and_then(|(from, to)| DateRange::new(from, to).ok()),
            last_write: written.iter().filter_map(|(_, r)| r.written_at).max(),
        })
    }
}
