use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// The unit of work: one job for one logical partition.
///
/// A plain value, so that a scheduler can queue it, a worker can retry it, a backfill can shard a
/// list of them and a report can name it. Running the same `PartitionRun` again is always safe.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PartitionRun {
    pub job: String,
    /// The logical date; `None` for a job that runs whole (`rebuild`).
    pub dt: Option<NaiveDate>,
    /// For `append`: append again even though this partition was committed before.
    #[serde(default)]
    pub force: bool,
}

impl PartitionRun {
    #[must_use]
    pub fn new(job: impl Into<String>, dt: NaiveDate) -> Self {
        Self { job: job.into(), dt: Some(dt), force: false }
    }

    /// A run of a job that takes no partition (`rebuild`).
    #[must_use]
    pub fn whole(job: impl Into<String>) -> Self {
        Self { job: job.into(), dt: None, force: false }
    }

    #[must_use]
    pub fn forced(self, force: bool) -> Self {
        Self { force, ..self }
    }
}

impl std::fmt::Display for PartitionRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.dt {
            Some(dt) => write!(f, "{} dt={dt}", self.job),
            None => write!(f, "{} (whole table)", self.job),
        }
    }
}
