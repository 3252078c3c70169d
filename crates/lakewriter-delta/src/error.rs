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

    #[error("{table}: Delta cannot store {}; nothing was written", columns.join("; "))]
    Unstorable { table: String, columns: Vec<String> },

    #[error("{table}: cannot cast the result to the types Delta stores")]
    Plan { table: String, source: Box<datafusion::error::DataFusionError> },

    #[error("{table}: writing {partition} failed; nothing was committed")]
    Write { table: String, partition: PartitionKey, source: Box<DeltaTableError> },

    /// The store refused a request of the write (a read-only or full disk, a missing permission):
    /// `cause` is the store's own error, without the delta-rs step that met it ("Failed to parse
    /// parquet" for a data file, "Failed to read delta log object" for the log entry).
    #[error("{table}: cannot write {partition} to {url}; nothing was committed: {cause}")]
    Store { table: String, partition: PartitionKey, url: String, cause: String },

    #[error("{table}: writing {partition} conflicted with a concurrent commit; nothing was committed")]
    Conflict { table: String, partition: PartitionKey, source: Box<dyn std::error::Error + Send + Sync> },

    #[error("the Delta table at {url} is partitioned by {columns:?}, not by one column: a partition digest needs one")]
    NotPartitionedByOne { url: Url, columns: Vec<String> },

    #[error("cannot read the Delta table at {url}")]
    Read { url: Url, source: Box<dyn std::error::Error + Send + Sync> },
}

impl Error {
    /// True where running the same write again may succeed: a concurrent commit changed what this
    /// one read (Delta's conflict rules), so the write must be planned and run anew.
    #[must_use]
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }
}

/// The error of the object store that `error` comes from, if it does: its own message (below
/// object_store's `Generic <store> error` wrapper) and its causes, each once.
pub(crate) fn store_cause(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut next = Some(error);
    while let Some(e) = next {
        // An upload's last step fails as an `io::Error` around the store's error, whose `source`
        // skips that error: it is found inside.
        let inner = e.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref);
        let inner = inner.map(|i| -> &(dyn std::error::Error + 'static) { i });
        if let Some(store) = inner.unwrap_or(e).downcast_ref::<object_store::Error>() {
            return Some(match store {
                object_store::Error::Generic { source, .. } => lakewriter_core::error_chain(source.as_ref()),
                other => lakewriter_core::error_chain(other),
            });
        }
        next = e.source();
    }
    None
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
