//! Write strategies. Each one is a single Delta commit, or nothing: delta-rs writes the data
//! files first and commits the log entry last, so a failure at any earlier step leaves the table
//! as it was (unreferenced files, at worst, for `VACUUM`). How a commit is made, found and
//! classified is in `commit`; the keyed merge in `merge`.
//!
//! - `target`: the table a strategy writes, and the check of a result's columns against it;
//! - `builder`: delta-rs's own write of a plan, and its refusals in the job's terms;
//! - `commit`: a write's commit — its properties, an attempt, its outcome;
//! - `own`, `slice`, [`files_exec`]: lakewriter's own write and commit over the kept file list;
//! - `replace`, `append`, `statement`, `merge`, `record`, `drop`: the strategies.

mod added;
mod append;
mod builder;
mod commit;
mod drop;
pub mod files_exec;
mod fixture;
mod merge;
mod own;
mod record;
mod replace;
mod slice;
mod statement;
mod target;

pub use crate::state::{CheckRecord, CommitMetadata, Committed, Spread};
pub use append::{AppendOutcome, append_once};
pub use drop::drop_columns;
pub use fixture::{FixtureFiles, create_fixture};
pub use merge::{MergeSpec, RowCounts, Scanned, merge, merge_in_one_scan};
pub use record::record_state;
pub use replace::{replace_all, replace_where};
pub use statement::{Clause, MergeCounts, MergeStatement, append, delete, merge_clauses, update};
pub use target::Target;

#[cfg(test)]
mod tests;
