//! Compaction: the small files of each partition that holds several are rewritten into fewer,
//! larger ones, all in one commit (`OPTIMIZE`; its removes and adds `dataChange: false`). A table
//! clustered by a column (a job's `cluster_by`) also has the files whose ranges of it overlap
//! rewritten together, sorted by the `cluster_by` columns into files of the target size, so that
//! each holds a range of its own again.
//!
//! lakewriter makes this commit itself (reading the files through delta-rs's scan, writing them
//! with delta-rs's `RecordBatchWriter`, committing with its `CommitBuilder`) rather than through
//! `DeltaTable::optimize`, for two facts of delta-rs 1.1.3:
//!
//! - its conflict checker ignores removes with `dataChange: false` — what compaction's are — in
//!   both of its checks of removed files, so a second compaction that read the same version is
//!   rebased over the first, and both commits stand: the rows of the files they both rewrote are
//!   then in the table twice (`tests.rs` shows it);
//! - `optimize` drops the application transactions of the commit properties it is given.
//!
//! Every compaction commit therefore carries the application transaction [`APP_ID`]: two
//! compactions from one version conflict (`ConcurrentTransaction`), and the later one plans
//! again. Writers are safe by Delta's rules: a write that replaces rows (a replaceWhere or a
//! merge) conflicts with a compaction that added files its predicate may match, and a
//! compaction conflicts with any write that removed files since the version it read.

use std::sync::Arc;

use deltalake::DeltaTable;
use deltalake::DeltaTableError;
use deltalake::kernel::transaction::CommitBuilder;
use deltalake::kernel::{Action, Transaction};
use deltalake::protocol::DeltaOperation;
use deltalake::writer::{DeltaWriter, RecordBatchWriter};
use futures::StreamExt;
use lakewriter_core::Phase;
use lakewriter_storage::Location;
use serde::Serialize;

use super::bins::{Bin, DataFile, by_partition, columns_of, data_files, plan};
use super::{PartitionFiles, Settings, failed};
use crate::retry::ON_CONFLICT;
use crate::{Error, Result, state, table};

/// The application transaction every compaction commit carries; its version is the table
/// version the compaction read.
pub const APP_ID: &str = "lakewriter-maintain/compact";

/// How often a compaction commit that lost the race for a log version is rebased over the
/// commits that won, where Delta's rules allow it.
const COMMIT_RETRIES: usize = 100;

/// What a compaction did, or (dry run) would do.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Compacted {
    /// The compaction's commit; `None` where it made none (nothing to compact, or a dry run).
    pub version: Option<u64>,
    /// The partitions rewritten, with their files before.
    pub partitions: Vec<PartitionFiles>,
    pub files_removed: u64,
    pub files_added: u64,
    pub bytes_removed: u64,
    pub bytes_added: u64,
    pub target_file_size: u64,
    /// Plans made again after a conflict with a concurrent commit.
    pub retries: u32,
}

/// Compacts the table at `location` (see the module's header): plans from its latest version
/// against `target_file_size` (default: the table's `delta.targetFileSize`), rewrites, commits
/// once. A commit that conflicts is planned again, as [`ON_CONFLICT`] says; the files an attempt
/// wrote but did not commit are left to `vacuum`, as a failed write's are.
pub async fn compact(
    location: &Location,
    name: &str,
    target_file_size: Option<u64>,
    cluster_by: &[String],
    dry_run: bool,
    run_id: &str,
) -> Result<Compacted> {
    let compaction = Compaction { location, name, target_file_size, cluster_by, dry_run, run_id };
    let (outcome, retries) = ON_CONFLICT.run(&name, Error::is_conflict, |_| compaction.run()).await;
    match outcome {
        Ok(compacted) => Ok(Compacted { retries, ..compacted }),
        Err(Error::Conflict { source, .. }) => Err(failed(name, "compaction", source)),
        Err(error) => Err(error),
    }
}

/// One compaction's arguments (see [`compact`]).
#[derive(Clone, Copy)]
struct Compaction<'a> {
    location: &'a Location,
    name: &'a str,
    target_file_size: Option<u64>,
    cluster_by: &'a [String],
    dry_run: bool,
    run_id: &'a str,
}

impl Compaction<'_> {
    /// Plans from the table's latest version and, unless a dry run, rewrites and commits. A commit
    /// that failed but is in the log (by this run's id) counts as made; one that conflicted is an
    /// [`Error::Conflict`].
    async fn run(self) -> Result<Compacted> {
        let name = self.name;
        let table = table::open_existing(self.location).await?;
        let target = self.target_file_size.unwrap_or(Settings::of(&table, self.location.url())?.target_file_size);
        let cluster_by = columns_of(&table, self.cluster_by).map_err(|e| failed(name, "compaction", e))?;
        let files = data_files(&table, &cluster_by).map_err(|e| failed(name, "compaction", e))?;
        let bins = plan(&files, target);
        let mut planned = Compacted {
            partitions: by_partition(&files, &bins),
            files_removed: bins.iter().map(|b| b.files.len() as u64).sum(),
            bytes_removed: bins.iter().flat_map(|b| &b.files).map(|i| files[*i].size).sum(),
            target_file_size: target,
            ..Compacted::default()
        };
        if bins.is_empty() || self.dry_run {
            return Ok(planned);
        }
        let read_version = table.version().unwrap_or(0);
        let rewrite = Rewrite { target, cluster_by: &cluster_by };
        match attempt(&table, &files, &bins, name, self.run_id, rewrite).await {
            Ok((version, adds)) => {
                tracing::info!(target: crate::PHASE_TARGET, phase = Phase::Compacted.as_str(), table = name, version);
                planned.version = Some(version);
                planned.files_added = adds.len() as u64;
                planned.bytes_added = adds.iter().map(|a| u64::try_from(a.size).unwrap_or(0)).sum();
                Ok(planned)
            }
            Err(error) => {
                let log_store = table.log_store();
                if let Ok(Some(found)) = state::find_commit(log_store.as_ref(), read_version + 1, self.run_id).await {
                    tracing::warn!(table = name, version = found.version, error = %error, "this compaction's commit is in the log although its commit failed after it");
                    planned.version = Some(found.version);
                    planned.files_added = found.files_added.unwrap_or(0);
                    planned.bytes_added = found.bytes_added.unwrap_or(0);
                    return Ok(planned);
                }
                if !crate::error::conflicted(&error) {
                    return Err(failed(name, "compaction", error));
                }
                let partition = lakewriter_core::PartitionKey::All;
                Err(Error::Conflict { table: name.to_owned(), partition, source: Box::new(error) })
            }
        }
    }
}

/// Rewrites each bin and commits the lot: the commit's version and the files it added.
async fn attempt(
    table: &DeltaTable,
    files: &[DataFile],
    bins: &[Bin],
    name: &str,
    run_id: &str,
    rewrite: Rewrite<'_>,
) -> Result<(u64, Vec<deltalake::kernel::Add>), DeltaTableError> {
    let mut adds = Vec::new();
    for bin in bins {
        let paths = bin.files.iter().map(|i| crate::paths::spelled(&files[*i].path));
        adds.extend(rewrite.files(table, paths).await?);
    }
    let target = rewrite.target;
    let removes = bins.iter().flat_map(|b| &b.files).map(|i| Action::Remove(files[*i].remove.clone()));
    let actions: Vec<Action> = removes.chain(adds.iter().cloned().map(Action::Add)).collect();
    tracing::info!(target: crate::PHASE_TARGET, phase = Phase::Compacting.as_str(), table = name);
    let version = commit(table, actions, bins, files, run_id, target).await?;
    Ok((version, adds))
}

/// How a compaction writes a bin's rows: into files of about `target` bytes, sorted by
/// `cluster_by` where it names columns.
#[derive(Clone, Copy)]
struct Rewrite<'a> {
    target: u64,
    cluster_by: &'a [String],
}

impl Rewrite<'_> {
    /// Writes the rows of the files at `paths` (of one partition, each as the log spells it: that
    /// is how delta-rs's file selection finds a file) as new files: the `add` actions, marked
    /// `dataChange: false`.
    async fn files(
        self,
        table: &DeltaTable,
        paths: impl Iterator<Item = String>,
    ) -> Result<Vec<deltalake::kernel::Add>, DeltaTableError> {
        let snapshot = table.snapshot()?.snapshot().clone();
        let provider = deltalake::delta_datafusion::TableProviderBuilder::default()
            .with_log_store(table.log_store())
            .with_eager_snapshot(snapshot)
            .with_file_paths(paths)
            .build()
            .await?;
        let ctx = crate::session();
        let mut rows = ctx.read_table(Arc::new(provider))?;
        if !self.cluster_by.is_empty() {
            rows = rows.sort(crate::ranges::sort_order(self.cluster_by))?;
        }
        write(table, rows.execute_stream().await?, self.target).await
    }
}

/// Writes `batches` as new files of `table` of about `target` bytes: the `add` actions, marked
/// `dataChange: false`.
async fn write(
    table: &DeltaTable,
    mut batches: datafusion::physical_plan::SendableRecordBatchStream,
    target: u64,
) -> Result<Vec<deltalake::kernel::Add>, DeltaTableError> {
    let mut writer = RecordBatchWriter::for_table(table)?.with_target_file_size(target);
    let schema = writer.arrow_schema();
    while let Some(batch) = batches.next().await {
        writer.write(crate::schema::conform(&batch?, &schema)?).await?;
    }
    let mut adds = writer.flush().await?;
    for add in &mut adds {
        add.data_change = false;
    }
    Ok(adds)
}

/// Commits the compaction over the version `table` is at, carrying [`APP_ID`].
async fn commit(
    table: &DeltaTable,
    actions: Vec<Action>,
    bins: &[Bin],
    files: &[DataFile],
    run_id: &str,
    target: u64,
) -> Result<u64, DeltaTableError> {
    let snapshot = table.snapshot()?;
    let read_version = snapshot.version();
    let labels: Vec<String> = by_partition(files, bins).into_iter().map(|p| p.partition).collect();
    let (removed, added) = actions.iter().fold((0u64, 0u64), |(r, a), action| match action {
        Action::Remove(_) => (r + 1, a),
        Action::Add(_) => (r, a + 1),
        _ => (r, a),
    });
    let info = serde_json::json!({
        "maintain": "compact", "run_id": run_id, "lakewriter_version": lakewriter_core::VERSION,
    });
    let metrics = serde_json::json!({ "num_removed_files": removed, "num_added_files": added });
    let now = chrono::Utc::now().timestamp_millis();
    let props = deltalake::kernel::transaction::CommitProperties::default()
        .with_metadata([("lakewriter".to_owned(), info), ("operationMetrics".to_owned(), metrics)])
        .with_application_transaction(Transaction::new_with_last_update(
            APP_ID,
            i64::try_from(read_version).unwrap_or(i64::MAX),
            Some(now),
        ))
        .with_max_retries(COMMIT_RETRIES)
        .with_create_checkpoint(false)
        .with_cleanup_expired_logs(Some(false));
    let operation = DeltaOperation::Optimize {
        predicate: serde_json::to_string(&labels).ok(),
        target_size: i64::try_from(target).unwrap_or(i64::MAX),
    };
    let committed =
        CommitBuilder::from(props).with_actions(actions).build(Some(snapshot), table.log_store(), operation).await?;
    Ok(committed.version())
}

/// One compaction attempt over the version `table` is at: its commit's version.
#[cfg(test)]
pub(super) async fn attempt_at(table: &DeltaTable, name: &str, run_id: &str) -> Result<u64, DeltaTableError> {
    let target = super::DEFAULT_TARGET_FILE_SIZE;
    let files = data_files(table, &[])?;
    let rewrite = Rewrite { target, cluster_by: &[] };
    attempt(table, &files, &plan(&files, target), name, run_id, rewrite).await.map(|(version, _)| version)
}
