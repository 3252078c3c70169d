use std::path::PathBuf;

/// Errors of the library face. Per-partition failures are not errors here: they are reported in
/// a [`crate::PartitionReport`], so that one failed day never stops a backfill.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read the project file {}", path.display())]
    ReadProject { path: PathBuf, source: std::io::Error },

    #[error(transparent)]
    Config(#[from] lakewriter_core::Error),

    #[error("job `{job}`: cannot read sql_file {}", path.display())]
    SqlFile { job: String, path: PathBuf, source: std::io::Error },

    #[error("cannot open the lakehouse catalog")]
    Catalog { source: lakewriter_compute::Error },

    #[error("job `{job}`: cannot plan its SQL to check it")]
    Lint { job: String, source: Box<lakewriter_compute::Error> },

    #[error("{}", findings.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Nondeterministic { findings: Vec<lakewriter_compute::Finding> },

    #[error("cannot open Delta table {table}")]
    OpenTable { table: String, source: Box<lakewriter_delta::Error> },

    #[error("cannot read the partition state of {table}")]
    State { table: String, source: Box<lakewriter_delta::Error> },

    #[error("job `{job}`: cannot plan {partition}")]
    PlanPartition { job: String, partition: String, source: Box<lakewriter_compute::Error> },

    #[error("cannot compute the digest of {table}")]
    Digest { table: String, source: Box<lakewriter_delta::Error> },

    #[error("{0}")]
    Usage(String),

    #[error("verify copies the target to a local scratch folder; {url} is not local")]
    VerifyNotLocal { url: url::Url },

    #[error("cannot copy {} to a scratch folder", from.display())]
    Scratch { from: PathBuf, source: std::io::Error },

    #[error("cannot set up the demo in {}", dir.display())]
    Demo { dir: PathBuf, source: Box<dyn std::error::Error + Send + Sync> },
}

impl Error {
    /// True for errors in what the user wrote (project file, job names, dates): exit code 2.
    #[must_use]
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Config(_) | Self::ReadProject { .. } | Self::SqlFile { .. } | Self::Usage(_))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

pub use lakewriter_core::error_chain;
