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

    /// Rows outside the slice a replaceWhere replaces (`slice` says which, e.g. "rows whose `dt`
    /// is not 2026-09-30").
    #[error("{table}: the result has {rows} {slice}; nothing was committed")]
    OutsideSlice { table: String, rows: usize, slice: String },

    /// NULLs in columns that are NOT NULL in the table (or declared so by the job): `(column,
    /// rows)`.
    #[error(
        "{table}: the result{} has {}, NOT NULL in the table; nothing was committed. Where the column must hold a value, make the job's SQL give one (e.g. `COALESCE`) and declare it in the job's `not_null`; where NULL is a value it may hold, make the column nullable: rebuild the table (a `rebuild` job's run replaces its schema), or run `ALTER TABLE {table} ALTER COLUMN {} DROP NOT NULL` in another engine (Spark)",
        of_partition(partition),
        nulls_in(nulls),
        nulls.first().map_or("", |(column, _)| column.as_str())
    )]
    NullInNotNull { table: String, partition: PartitionKey, nulls: Vec<(String, u64)> },

    /// Rows the table's own data checks refuse, where lakewriter cannot say which: a NULL in a
    /// NOT NULL nested field, or a CHECK constraint or invariant another engine added.
    #[error(
        "{table}: the result{} has rows the table refuses: {}, or a value a CHECK constraint of the table rejects; nothing was committed",
        of_partition(partition),
        null_in(not_null)
    )]
    Invalid { table: String, partition: PartitionKey, not_null: Vec<String> },

    #[error("{table}: the result does not match the table's schema: {}; nothing was committed", differences.join("; "))]
    SchemaMismatch { table: String, differences: Vec<String> },

    /// A column a whole-table backfill would drop still holds values: `(column, rows)`.
    #[error(
        "{table}: cannot drop {}: without column mapping, Delta drops a column only once no row holds a value of it (a column added again under its name would read the old values); rerun the partitions that hold them, or rebuild the table; nothing was committed",
        values.iter().map(|(column, rows)| format!("`{column}`, which {rows} row(s) hold a value of")).collect::<Vec<_>>().join(", ")
    )]
    ColumnHoldsValues { table: String, values: Vec<(String, u64)> },

    #[error(
        "{table}: the table's protocol asks for {}, which lakewriter does not write with (another engine enabled it); nothing was written",
        features.join(", ")
    )]
    UnsupportedFeatures { table: String, features: Vec<String> },

    #[error("{table}: Delta cannot store {}; nothing was written", columns.join("; "))]
    Unstorable { table: String, columns: Vec<String> },

    #[error("{table}: cannot cast the result to the types Delta stores")]
    Plan { table: String, source: Box<datafusion::error::DataFusionError> },

    /// The write failed otherwise: delta-rs's error, or the message alone of its `Generic` error
    /// (a runtime error of the job's query reaches the write so: `Arrow error: Divide by zero
    /// error`), without delta-rs's "Generic DeltaTable error" wrapper.
    #[error("{table}: writing {partition} failed; nothing was committed")]
    Write { table: String, partition: PartitionKey, source: Box<dyn std::error::Error + Send + Sync> },

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

    #[error("cannot write the fixture table at {url}")]
    Fixture { url: Url, source: Box<dyn std::error::Error + Send + Sync> },

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

/// Whether delta-rs failed a commit for a concurrent one, so that planning and running it again
/// may succeed (what makes an [`Error::Conflict`]): the table changed under it in a way its plan
/// depends on, another writer created the table first (protocol and metadata of version 0), or it
/// lost the race for a log version with retries off or used up.
pub(crate) fn conflicted(error: &deltalake::DeltaTableError) -> bool {
    use deltalake::DeltaTableError;
    use deltalake::kernel::transaction::{CommitConflictError as C, TransactionError};
    match error {
        DeltaTableError::Transaction { source: TransactionError::CommitConflict(c) } => matches!(
            c,
            C::ConcurrentAppend
                | C::ConcurrentDeleteRead
                | C::ConcurrentDeleteDelete
                | C::ConcurrentTransaction
                | C::MetadataChanged
                | C::ProtocolChanged(_)
        ),
        DeltaTableError::VersionAlreadyExists(_)
        | DeltaTableError::Transaction { source: TransactionError::MaxCommitAttempts(_) } => true,
        _ => false,
    }
}

/// ` for dt=2026-09-30`, or nothing for a write of the whole table.
fn of_partition(partition: &PartitionKey) -> String {
    match partition {
        PartitionKey::All => String::new(),
        day @ PartitionKey::Day { .. } => format!(" for {day}"),
    }
}

/// Where a NULL the table refuses may be: one of its NOT NULL columns, or a nested field.
fn null_in(not_null: &[String]) -> String {
    if not_null.is_empty() {
        return "a NULL in a NOT NULL field".to_owned();
    }
    let columns: Vec<String> = not_null.iter().map(|c| format!("`{c}`")).collect();
    format!("a NULL in one of its NOT NULL columns ({})", columns.join(", "))
}

/// `a NULL in column `c` (3 rows)`, or `NULLs in columns `a` (3 rows), `b` (1 row)`.
fn nulls_in(nulls: &[(String, u64)]) -> String {
    let each: Vec<String> = nulls
        .iter()
        .map(|(column, rows)| format!("`{column}` ({rows} row{})", if *rows == 1 { "" } else { "s" }))
        .collect();
    match each.as_slice() {
        [one] => format!("a NULL in column {one}"),
        many => format!("NULLs in columns {}", many.join(", ")),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A message that is the whole of an error (delta-rs's `Generic` error without its wrapper).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Message(pub String);

/// The prefixes that delta-rs (`Kernel error: `), the kernel (`Arrow error: `) and Arrow
/// (`External: `) put before a cause's text, saying nothing of their own.
const WRAPPERS: [&str; 3] = ["Kernel error: ", "Arrow error: ", "External: "];

/// `error` in its own words: its text without the causes that only put one of [`WRAPPERS`]
/// before their cause's.
pub(crate) fn own_words(error: &(dyn std::error::Error + 'static)) -> String {
    let mut error = error;
    while let Some(source) = error.source() {
        let (text, inner) = (error.to_string(), source.to_string());
        if !text.strip_suffix(&inner).is_some_and(|prefix| WRAPPERS.contains(&prefix)) {
            break;
        }
        error = source;
    }
    error.to_string()
}

#[cfg(test)]
mod tests {
    #[derive(Debug, thiserror::Error)]
    enum Wrapped {
        #[error("Kernel error: {0}")]
        Kernel(#[source] std::io::Error),
        #[error("cannot rename the checkpoint")]
        Named(#[source] std::io::Error),
    }

    #[test]
    fn a_cause_s_own_words_drop_the_prefixes_that_say_nothing() {
        let io = || std::io::Error::other("Unable to rename file: Is a directory");
        assert_eq!(super::own_words(&Wrapped::Kernel(io())), "Unable to rename file: Is a directory");
        let store = object_store::Error::Generic { store: "LocalFileSystem", source: Box::new(io()) };
        let kernel = Wrapped::Kernel(std::io::Error::other(store));
        assert_eq!(super::own_words(&kernel), "Generic LocalFileSystem error: Unable to rename file: Is a directory");
        assert_eq!(super::own_words(&Wrapped::Named(io())), "cannot rename the checkpoint", "its own words");
    }
}
