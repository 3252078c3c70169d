//! The table features lakewriter writes with: a table whose protocol asks for another (deletion
//! vectors or column mapping, say, enabled by another engine) is refused before anything is
//! written, instead of being written in a way its other readers would misread.

use deltalake::DeltaTable;

use crate::{Error, Result};

/// Reader features lakewriter writes tables with: beyond reader version 1, only timestamps
/// without a time zone (which lakewriter itself never writes: it stores UTC timestamps).
const READER_FEATURES: &[&str] = &["timestampNtz"];

/// Writer features a table may have for lakewriter to write it: those of writer versions 2 to 4
/// (`appendOnly`, `invariants`, `checkConstraints`, `changeDataFeed`, `generatedColumns`), which
/// delta-rs enforces on every write, and `timestampNtz`.
const WRITER_FEATURES: &[&str] =
    &["appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "timestampNtz"];

/// The features of `table`'s protocol that lakewriter does not write with, by name; empty where
/// it may write the table (or there is no table yet).
pub fn unsupported(table: &DeltaTable) -> Vec<String> {
    let Ok(state) = table.snapshot() else { return Vec::new() };
    unsupported_by(state.protocol())
}

/// The features of the table protocol `protocol` that lakewriter does not write with, by name.
pub(crate) fn unsupported_by(protocol: &deltalake::kernel::Protocol) -> Vec<String> {
    let mut found = match protocol.min_reader_version() {
        0 | 1 => Vec::new(),
        2 => vec!["columnMapping".to_owned()],
        3 => named(protocol.reader_features(), READER_FEATURES),
        v => vec![format!("reader version {v}")],
    };
    found.extend(match protocol.min_writer_version() {
        0..=4 => Vec::new(),
        5 => vec!["columnMapping".to_owned()],
        6 => vec!["columnMapping".to_owned(), "identityColumns".to_owned()],
        7 => named(protocol.writer_features(), WRITER_FEATURES),
        v => vec![format!("writer version {v}")],
    });
    found.sort();
    found.dedup();
    found
}

/// The names of `features` not in `allowed`.
fn named<T: ToString>(features: Option<&[T]>, allowed: &[&str]) -> Vec<String> {
    features.unwrap_or_default().iter().map(ToString::to_string).filter(|f| !allowed.contains(&f.as_str())).collect()
}

/// Refuses to write `table` (called `name`) where its protocol asks for a feature lakewriter does
/// not write with.
pub(crate) fn check(table: &DeltaTable, name: &str) -> Result<()> {
    let features = unsupported(table);
    if features.is_empty() {
        return Ok(());
    }
    Err(Error::UnsupportedFeatures { table: name.to_owned(), features })
}
