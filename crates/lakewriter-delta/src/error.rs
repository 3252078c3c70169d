use deltalake::DeltaTableError;
use lakewriter_core::PartitionKey;
use url::Url;

/// Errors from reading or writing Delta tables. Each names the table (and partition) it concerns;
/// the delta-rs or DataFusion cause follows in the chain.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot open the Delta table at {url}")]
    Open { url: Url, source: Box<DeltaTableError> },

    #[error("no Delta table at {url}")]
    NotATable { url: Url },

    #[error("cannot create the folder of the Delta table at {url}")]
    CreateFolder { url: Url, source: std::io::Error },

    #[error("{table}: the result has {slice}; nothing was committed")]
    OutsideSlice { table: String, slice: String, source: Box<DeltaTableError> },

    #[error(
        "{table}: the result breaks the table's data checks (a NULL in a NOT NULL column, or a CHECK constraint); nothing was committed"
    )]
    Invalid { table: String, source: Box<DeltaTableError> },

    #[error("{table}: the result does not match the table's schema: {}; nothing was committed", differences.join("; "))]
    SchemaMismatch { table: String, differences: Vec<String> },

    #[error(
        "{table}: the table's protocol asks for {}, which lakewriter does not write with (another engine enabled it); nothing was written",
        features.join(", ")
    )]
    UnsupportedFeatures { table: String, features: Vec<String> },

    #[error("{table}: Delta cannot store {}; nothing was written", columns.join("; "))]
    Unstorable { table: String, columns: Vec<String> },

    #[error("{table}: cannot cast the result to the types Delta stores")]
    Plan { table: String, source: Box<datafusion::error::DataFusionError> },

    #[error("{table}: writing {partition} failed; nothing was committed")]
    Write { table: String, partition: PartitionKey, source: Box<DeltaTableError> },

    /// A storage request of the write failed (retried as the storage policy allows): its error
    /// names the operation, the object and the server's answer.
    #[error("{table}: writing {partition} failed; nothing was committed")]
    Request { table: String, partition: PartitionKey, source: Box<deltalake::ObjectStoreError> },

    #[error(
        "{table}: writing {partition} failed, and whether it committed is unknown: the table's log could not be read to look for its commit; running it again is safe"
    )]
    Unconfirmed { table: String, partition: PartitionKey, source: Box<dyn std::error::Error + Send + Sync> },

    #[error("{table}: writing {partition} conflicted with a concurrent commit; nothing was committed")]
    Conflict { table: String, partition: PartitionKey, source: Box<dyn std::error::Error + Send + Sync> },

    #[error("the Delta table at {url} is partitioned by {columns:?}, not by one column: a partition digest needs one")]
    NotPartitionedByOne { url: Url, columns: Vec<String> },

    #[error("cannot read the Delta table at {url}")]
    Read { url: Url, source: Box<dyn std::error::Error + Send + Sync> },

    /// A step of table maintenance failed; a compaction that failed committed nothing.
    #[error("{table}: {step} failed")]
    Maintain { table: String, step: &'static str, source: Box<dyn std::error::Error + Send + Sync> },
}

impl Error {
    /// True where running the same write again may succeed: a concurrent commit changed what this
    /// one read (Delta's conflict rules), so the write must be planned and run anew.
    #[must_use]
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
