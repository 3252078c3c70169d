//! Table maintenance: compaction of small files, checkpoints, vacuum and log clean-up.
//!
//! - [`compact`]: the small files of each partition holding several are rewritten into fewer,
//!   larger ones, in one commit (`OPTIMIZE`, `dataChange: false`) made by lakewriter itself — see
//!   `compact.rs` for why not by delta-rs's `optimize`;
//! - [`checkpoint`]: a checkpoint of the latest version (a file, not a commit);
//! - [`vacuum`]: delta-rs's full vacuum — data files no version within the retention references,
//!   tombstones and orphans alike — planned by delta-rs, committed as its `VACUUM START` and
//!   `VACUUM END` by lakewriter, without the log clean-up delta-rs runs after its own;
//! - [`cleanup`]: delta-rs's removal of log files older than the table's log retention that lie
//!   before a checkpoint.
//!
//! [`layout`] tells what compaction would do (the files, the small ones, the partitions holding
//! several), for `status --maintenance` and `maintain --dry-run`. None of these steps changes a
//! row or the partition state: a compaction commit carries no `txn` action of a job, and
//! checkpoints keep every `txn` (see [`crate::state`]).

mod bins;
mod compact;
mod log;
mod vacuum;

#[cfg(test)]
mod tests;

use std::time::Duration;

use deltalake::DeltaTable;
use deltalake::table::config::TablePropertiesExt;
use lakewriter_storage::Location;
use serde::Serialize;

use crate::{Error, Result, table};
pub use compact::{Compacted, compact};
pub use log::{Checkpointed, Cleaned, checkpoint, cleanup};
pub use vacuum::{Vacuumed, vacuum};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// delta-rs's target file size where a table sets none (`delta.targetFileSize`): 100 MiB.
pub const DEFAULT_TARGET_FILE_SIZE: u64 = deltalake::table::config::DEFAULT_TARGET_FILE_SIZE.get();

/// The table properties maintenance follows, or Delta's defaults where the table sets none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `delta.targetFileSize` (100 MiB).
    pub target_file_size: u64,
    /// `delta.deletedFileRetentionDuration` (a week): the shortest vacuum retention allowed
    /// without `--force`.
    pub deleted_file_retention: Duration,
    /// `delta.logRetentionDuration` (30 days).
    pub log_retention: Duration,
    /// `delta.enableExpiredLogCleanup` (true).
    pub expired_log_cleanup: bool,
}

impl Settings {
    fn of(table: &DeltaTable, url: &url::Url) -> Result<Self> {
        let state = table.snapshot().map_err(|source| Error::Open { url: url.clone(), source: Box::new(source) })?;
        let config = state.table_config();
        Ok(Self {
            target_file_size: config.target_file_size().get(),
            deleted_file_retention: config.deleted_file_retention_duration(),
            log_retention: config.log_retention_duration(),
            expired_log_cleanup: config.enable_expired_log_cleanup(),
        })
    }
}

/// The maintenance settings of the table at `location`; `None` where there is no table.
pub async fn settings(location: &Location) -> Result<Option<Settings>> {
    match table::open_if_exists(location).await? {
        Some(table) => Settings::of(&table, location.url()).map(Some),
        None => Ok(None),
    }
}

/// The data files of a table's latest version, and what compaction would rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Layout {
    pub version: u64,
    pub files: u64,
    pub bytes: u64,
    /// The rows of its files, from their statistics; `None` where a file has no row count.
    pub rows: Option<u64>,
    pub partitions: u64,
    /// Files smaller than the target file size.
    pub small_files: u64,
    pub target_file_size: u64,
    /// The partitions holding more than one small file (writes since the last compaction made
    /// them), or files whose `cluster_by` ranges overlap: what compaction rewrites.
    pub to_compact: Vec<PartitionFiles>,
}

/// The files of one partition that compaction would rewrite: small ones, and those whose
/// `cluster_by` ranges overlap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionFiles {
    /// `dt=2026-09-30`, or `all` for an unpartitioned table.
    pub partition: String,
    pub files: u64,
    pub bytes: u64,
}

/// The layout of the table at `location` against `target_file_size` (default: the table's), its
/// files clustered by `cluster_by` where it names columns; `None` where there is no table. Opens the table's latest snapshot.
pub async fn layout(
    location: &Location,
    target_file_size: Option<u64>,
    cluster_by: &[String],
) -> Result<Option<Layout>> {
    let Some(table) = table::open_if_exists(location).await? else { return Ok(None) };
    let target = target_file_size.unwrap_or(Settings::of(&table, location.url())?.target_file_size);
    let files = bins::data_files(&table, cluster_by).map_err(|e| read_error(location, e))?;
    let bins = bins::plan(&files, target);
    let partitions: std::collections::BTreeSet<&str> = files.iter().map(|f| f.partition.as_str()).collect();
    Ok(Some(Layout {
        version: table.version().unwrap_or(0),
        files: files.len() as u64,
        bytes: files.iter().map(|f| f.size).sum(),
        rows: files.iter().map(|f| f.rows).sum(),
        partitions: partitions.len() as u64,
        small_files: files.iter().filter(|f| f.size < target).count() as u64,
        target_file_size: target,
        to_compact: bins::by_partition(&files, &bins),
    }))
}

fn read_error(location: &Location, source: impl Into<BoxError>) -> Error {
    Error::Read { url: location.url().clone(), source: source.into() }
}

/// A failed step of maintenance on `table`.
fn failed(table: &str, step: &'static str, source: impl Into<BoxError>) -> Error {
    Error::Maintain { table: table.to_owned(), step, source: source.into() }
}
