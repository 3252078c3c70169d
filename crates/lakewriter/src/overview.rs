//! What `lakewriter report` shows, gathered: the job graph, and for each job the state of its
//! partitions over a range — [`Runner::status`], the very report `status` prints — with its
//! table's files and log (what `status --maintenance` reads). It reads the tables' logs and
//! snapshots and plans each day, as `status` does — a day an upstream job's and a downstream job's
//! status both need, once —, and writes nothing; the page is the CLI's.

use lakewriter_core::DateRange;
use lakewriter_delta::maintain::Layout;

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
    /// in dependency order. A job whose state cannot be read is kept as its error; only a project
    /// whose graph cannot be made (a cycle, SQL that names no readable table) fails.
    pub async fn overview(&self, range: Option<DateRange>) -> Result<Overview> {
        let graph = self.graph()?;
        let mut jobs = Vec::with_capacity(graph.jobs.len());
        // Upstream first: a job's upstream days are told stale by the states found already.
        let mut found = Found::default();
        for node in &graph.jobs {
            let state = self.job_overview(&node.job, range, &found).await;
            if let Overviewed::Read { status, .. } = &state {
                found.keep(&node.job, &status.partitions);
            }
            jobs.push(JobOverview { job: node.job.clone(), state });
        }
        Ok(Overview { range, graph, jobs })
    }

    async fn job_overview(&self, name: &str, range: Option<DateRange>, found: &Found) -> Overviewed {
        let job = match self.prepare(name) {
            Ok(job) => job,
            Err(e) => return Overviewed::Failed(e),
        };
        let status = match self.status_after(job, range, found).await {
            Ok(status) => status,
            Err(Error::NothingWritten { .. }) => return Overviewed::NothingWritten,
            Err(e) => return Overviewed::Failed(e),
        };
        match self.layout(job).await {
            Ok(layout) => Overviewed::Read { status: Box::new(status), layout },
            Err(e) => Overviewed::Failed(e),
        }
    }
}
