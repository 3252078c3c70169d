use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// The unit of work: one job for one logical partition.
///
/// A plain value, so that a scheduler can queue it, a worker can retry it, a backfill can shard a
/// list of them and a report can name it. Running the same `PartitionRun` again is always safe.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PartitionRun {
    pub job: String,
    pub dt: NaiveDate,
}

impl PartitionRun {
    #[must_use]
    pub fn new(job: impl Into<String>, dt: NaiveDate) -> Self {
        Self { job: job.into(), dt }
    }
}

impl std::fmt::Display for PartitionRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} dt={}", self.job, self.dt)
    }
}
