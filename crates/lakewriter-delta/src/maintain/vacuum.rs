//! Vacuum: delta-rs's full vacuum, planned by delta-rs (its dry run) and carried out here — the
//! `VACUUM START` commit, the deletes, the `VACUUM END` commit, as delta-rs makes them — so that
//! neither commit runs delta-rs's post-commit hooks. delta-rs 1.1.3 makes its `VACUUM START`
//! commit with default commit properties, whatever it is given: its log clean-up then removes
//! the expired log files (the `cleanup` step's work, which that step would then not find) and its
//! checkpoint hook writes a checkpoint every 100 versions (the `checkpoint` step's). Each step
//! does what it says, and reports what it did.

use std::time::Duration;

use deltalake::kernel::transaction::CommitBuilder;
use deltalake::operations::vacuum::{VacuumEndOperationMetrics, VacuumMode, VacuumStartOperationMetrics};
use deltalake::protocol::DeltaOperation;
use deltalake::{DeltaTable, DeltaTableError};
use futures::{StreamExt, TryStreamExt};
use lakewriter_storage::Location;
use object_store::ObjectStoreExt as _;
use object_store::path::Path;

use super::{Settings, failed, log::commit_properties};
use crate::{Result, table};

/// Files looked at at once, for their sizes.
const CONCURRENCY: usize = 16;

/// What the vacuum did, or (dry run) would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vacuumed {
    /// The files deleted (or to delete), relative to the table's folder.
    pub files: Vec<String>,
    /// The table's version after its `VACUUM START` and `VACUUM END` commits; `None` where it
    /// made none (nothing to delete, or a dry run).
    pub version: Option<u64>,
}

/// Deletes the data files of the table at `location` that no version within `retention`
/// references: files removed from the table longer ago than that, and files no commit ever
/// added (a failed or killed write's) last modified longer ago than that. delta-rs refuses a
/// retention below the table's `delta.deletedFileRetentionDuration` unless `force`. No log file
/// is removed and no checkpoint written.
pub async fn vacuum(
    location: &Location,
    name: &str,
    retention: Duration,
    force: bool,
    dry_run: bool,
) -> Result<Vacuumed> {
    let table = table::open_existing(location).await?;
    let default_retention = Settings::of(&table, location.url())?.deleted_file_retention;
    let period = chrono::Duration::from_std(retention).map_err(|e| failed(name, "vacuum", e))?;
    let (table, plan) = table
        .vacuum()
        .with_retention_period(period)
        .with_enforce_retention_duration(!force)
        .with_mode(VacuumMode::Full)
        .with_dry_run(true)
        .await
        .map_err(|e| failed(name, "vacuum", e))?;
    // delta-rs names each file by its object below the table's folder: its relative path (see
    // `crate::paths`), taken as it is.
    let paths = plan.files_deleted.iter().map(Path::parse).collect::<std::result::Result<Vec<_>, _>>();
    let paths = paths.map_err(|e| failed(name, "vacuum", e))?;
    if dry_run || paths.is_empty() {
        return Ok(Vacuumed { files: paths.iter().map(Path::to_string).collect(), version: None });
    }
    let retention = (force, millis(retention), millis(default_retention));
    let (version, deleted) = execute(&table, paths, retention).await.map_err(|e| failed(name, "vacuum", e))?;
    Ok(Vacuumed { files: deleted, version: Some(version) })
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Commits `VACUUM START` over the version `table` is at, deletes `paths`, commits `VACUUM END`;
/// both commits with lakewriter's commit properties (no post-commit hooks). `retention`: whether
/// it was forced, the retention and the table's default, in milliseconds. The version of `VACUUM
/// END`, and the files deleted (or found gone).
async fn execute(
    table: &DeltaTable,
    paths: Vec<Path>,
    (force, retention, default_retention): (bool, i64, i64),
) -> std::result::Result<(u64, Vec<String>), DeltaTableError> {
    let store = table.log_store().object_store(None);
    let sizes: Vec<u64> = futures::stream::iter(paths.clone())
        .map(|path| {
            let store = store.clone();
            async move { store.head(&path).await.map_or(0, |meta| meta.size) }
        })
        .buffered(CONCURRENCY)
        .collect()
        .await;
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let start = VacuumStartOperationMetrics {
        num_files_to_delete: count(paths.len()),
        size_of_data_to_delete: i64::try_from(sizes.iter().sum::<u64>()).unwrap_or(i64::MAX),
    };
    let operation = DeltaOperation::VacuumStart {
        retention_check_enabled: !force,
        specified_retention_millis: Some(retention),
        default_retention_millis: default_retention,
    };
    let props = commit_properties("vacuum", Some(serde_json::to_value(start)?));
    let started = CommitBuilder::from(props).build(Some(table.snapshot()?), table.log_store(), operation).await?;

    let deleted: Vec<String> = store
        .delete_stream(futures::stream::iter(paths.into_iter().map(Ok)).boxed())
        .map(|deleted| match deleted {
            Ok(path) => Ok(path.to_string()),
            Err(object_store::Error::NotFound { path, .. }) => Ok(path),
            Err(e) => Err(e),
        })
        .try_collect()
        .await?;

    let end = VacuumEndOperationMetrics { num_deleted_files: count(deleted.len()), num_vacuumed_directories: 0 };
    let props = commit_properties("vacuum", Some(serde_json::to_value(end)?));
    let operation = DeltaOperation::VacuumEnd { status: "COMPLETED".to_owned() };
    let ended = CommitBuilder::from(props).build(Some(&started.snapshot), table.log_store(), operation).await?;
    Ok((ended.version(), deleted))
}
