//! lakewriter-core: the pure vocabulary of lakewriter.
//!
//! Logical dates and ranges ([`date`]), table names ([`TableRef`]), the project file and its jobs
//! ([`project`]), partition names ([`PartitionKey`]), the per-partition unit of work
//! ([`PartitionRun`]) and the steps and option values of table maintenance ([`maintain`]).
//! Everything here is a plain value: it parses, validates and hashes, and never does I/O or
//! touches an async runtime.

pub mod date;
pub mod maintain;
pub mod project;

mod chain;
mod error;
mod partition;
mod phase;
#[cfg(test)]
mod properties;
mod table_ref;
mod unit;

pub use chain::{backtrace, causes, error_chain};
pub use date::{DateRange, days_since_epoch, parse_date};
pub use error::{Error, Result};
pub use partition::PartitionKey;
pub use phase::Phase;
pub use project::{
    Check, CheckKind, CheckOutcome, CheckSeverity, CheckValue, Checks, DedupWindow, Dialect, JobSpec, OnDuplicateKeys,
    OnMissingInput, OnSchemaChange, Project, Semantics, SourceSpec, SqlSource, TestSpec, TimeZone, WriteMode,
    WriteSpec, root_url,
};
pub use table_ref::TableRef;
pub use unit::{InputFile, PartitionRun, input_fingerprint};

/// The version of lakewriter recorded in every commit it makes.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The DataFusion settings, beyond DataFusion's defaults, of every session lakewriter plans SQL
/// in (job SQL, `lakewriter sql`, `lint`, the benchmark's floor): a literal such as `1.005` is an
/// exact `DECIMAL(4,3)`, as in Spark, not a `DOUBLE`. They are part of the code fingerprint of
/// every job whose SQL has such a literal ([`JobSpec::fingerprinted`]): a change here changes what
/// that SQL writes, so its days written before read as stale.
pub const SQL_SETTINGS: &[(&str, &str)] = &[("datafusion.sql_parser.parse_float_as_decimal", "true")];

/// A stable, hex-encoded 128-bit hash (XXH3) of `bytes`, used for code fingerprints.
#[must_use]
pub fn stable_hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}
