//! The write modes, one module each. A job's write is resolved once, when the project loads, into
//! one [`Mode`]: from its `write` key, or — for a job written as a statement — from the statement
//! it holds (`INSERT OVERWRITE … PARTITION` is an `overwrite_partition`, `INSERT INTO` an
//! `append`, `MERGE INTO` a merge as written). Each mode decides, for both spellings of a job,
//! what the job may have (checks, a date, `--force`, a dry run, the lint rules that apply), and
//! owns its part of each run: the rows it replaces, how its result is computed, its dry-run
//! preview and its commit. A mode reaches the session and the table only through the
//! [`Attempt`] it is given; the runner's attempt (`crate::attempt`) runs the same steps for every
//! mode.
//!
//! Layers, bottom up: `computed` (the result between steps), `attempt` and `checked` (what a mode
//! calls), `mode` (the trait), the modes, then [`resolve`] here.
//!
//! Adding a mode: its module here, one arm in [`resolve`], its `write` value in the project-file
//! parser (`lakewriter-core`'s `project/parse.rs`), and the docs.

mod append;
mod attempt;
mod checked;
mod computed;
mod delete_insert;
mod keyed;
mod merge_into;
mod mode;
mod overwrite;
mod rebuild;

use std::sync::Arc;

use lakewriter_core::{JobSpec, WriteSpec};

pub(crate) use attempt::Attempt;
pub(crate) use computed::{Computed, Replaces};
pub(crate) use mode::Mode;

use crate::sql::JobStatement;

/// The mode of `job`, whose statement (a job without a `write` key) is `statement`; `None` for a
/// job without a `write` key whose statement was not given.
pub(crate) fn resolve(job: &JobSpec, statement: Option<&JobStatement>) -> Option<Arc<dyn Mode>> {
    let column = || job.partition_by.clone().unwrap_or_else(|| "dt".to_owned());
    Some(match (&job.write, statement) {
        (WriteSpec::OverwritePartition, _) => Arc::new(overwrite::Overwrite { column: column(), insert: None }),
        (WriteSpec::DeleteInsert { predicate }, _) => {
            Arc::new(delete_insert::DeleteInsert { predicate: predicate.clone() })
        }
        (WriteSpec::Append, _) => Arc::new(append::Append { insert: None }),
        (WriteSpec::Merge { key, newer_by, on_duplicate_keys, delete_when }, _) => {
            Arc::new(keyed::Keyed::merge(key, newer_by, *on_duplicate_keys, delete_when.as_deref(), job.semantics))
        }
        (WriteSpec::AppendDedup { key, window }, _) => Arc::new(keyed::Keyed::append_dedup(key, window.clone())),
        (WriteSpec::Rebuild, _) => Arc::new(rebuild::Rebuild),
        (WriteSpec::Statement, Some(JobStatement::Overwrite(insert))) => {
            let column = insert.partition.first().map_or_else(column, |p| p.column.clone());
            Arc::new(overwrite::Overwrite { column, insert: Some(insert.clone()) })
        }
        (WriteSpec::Statement, Some(JobStatement::Append(insert))) => {
            Arc::new(append::Append { insert: Some(insert.clone()) })
        }
        (WriteSpec::Statement, Some(JobStatement::Merge(merge))) => {
            Arc::new(merge_into::MergeInto { merge: merge.clone() })
        }
        (WriteSpec::Statement, None) => return None,
    })
}
