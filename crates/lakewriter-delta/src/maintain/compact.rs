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

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::common::ScalarValue;
use deltalake::DeltaTable;
use deltalake::DeltaTableError;
use deltalake::kernel::transaction::{CommitBuilder, TransactionError};
use deltalake::kernel::{Action, Remove, Transaction};
use deltalake::protocol::DeltaOperation;
use deltalake::writer::{DeltaWriter, RecordBatchWriter};
use futures::StreamExt;
use lakewriter_core::Phase;
use lakewriter_storage::Location;
use serde::Serialize;

use super::{PartitionFiles, Settings, failed};
use crate::ranges::{Range, order};
use crate::{Result, table};

/// The application transaction every compaction commit carries; its version is the table
/// version the compaction read.
pub const APP_ID: &str = "lakewriter-maintain/compact";

/// Compactions planned and tried in a row when their commit conflicts with a concurrent one.
const ATTEMPTS: u32 = 5;

/// How often a compaction commit that lost the race for a log version is rebased over the
/// commits that won, where Delta's rules allow it.
const COMMIT_RETRIES: usize = 100;

/// One data file of a table's latest version.
pub(super) struct DataFile {
    /// Its relative path (see [`crate::paths`]).
    pub path: String,
    pub size: u64,
    /// `dt=2026-09-30`, or `all` for an unpartitioned table.
    pub partition: String,
    pub modified: i64,
    /// Its rows, from its statistics.
    pub rows: Option<u64>,
    /// Its range of the first `cluster_by` column, where the table is clustered and its
    /// statistics record one (see [`crate::ranges`]).
    pub range: Option<Range>,
    remove: Remove,
}

/// The data files of the table's loaded version, with their ranges of `cluster_by`'s first column
/// where it has one.
pub(super) fn data_files(table: &DeltaTable, cluster_by: &[String]) -> Result<Vec<DataFile>, DeltaTableError> {
    let state = table.snapshot()?;
    let columns = state.metadata().partition_columns().to_vec();
    let schema = state.snapshot().arrow_schema();
    let clustered = cluster_by.first().and_then(|c| Some((c, schema.field_with_name(c).ok()?.data_type().clone())));
    Ok(state
        .log_data()
        .into_iter()
        .map(|file| {
            let values = file.partition_values_map();
            let range = clustered
                .as_ref()
                .and_then(|(column, data_type)| crate::ranges::range(&file.stats()?, column, data_type));
            DataFile {
                path: file.path().into_owned(),
                size: u64::try_from(file.size()).unwrap_or(0),
                partition: partition_label(&columns, &values),
                modified: file.modification_time(),
                rows: file.num_records().and_then(|n| u64::try_from(n).ok()),
                range,
                remove: file.remove_action(false),
            }
        })
        .collect())
}

/// The `cluster_by` columns `table` has (a column renamed or dropped since is left out).
fn columns_of(table: &DeltaTable, cluster_by: &[String]) -> Result<Vec<String>, DeltaTableError> {
    let schema = table.snapshot()?.snapshot().arrow_schema();
    Ok(cluster_by.iter().filter(|c| schema.field_with_name(c).is_ok()).cloned().collect())
}

/// `dt=2026-09-30` (Hive-style, in the table's column order), or `all` without partition columns.
fn partition_label(columns: &[String], values: &std::collections::HashMap<String, Option<String>>) -> String {
    if columns.is_empty() {
        return "all".to_owned();
    }
    let value = |c: &String| values.get(c).cloned().flatten().unwrap_or_else(|| "__HIVE_DEFAULT_PARTITION__".into());
    columns.iter().map(|c| format!("{c}={}", value(c))).collect::<Vec<_>>().join("/")
}

/// Files of one partition to rewrite as one: indexes into the data files.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Bin {
    pub partition: String,
    pub files: Vec<usize>,
}

/// What compaction rewrites: in each partition, the files whose ranges overlap (see
/// [`overlapping`]) a bin each group, and of the others, those smaller than `target` (oldest
/// first) packed into bins of at most `target` bytes; a bin of one file is left alone, so a
/// partition with a single small file is never rewritten.
pub(super) fn plan(files: &[DataFile], target: u64) -> Vec<Bin> {
    let mut bins = overlapping(files);
    let grouped: std::collections::HashSet<usize> = bins.iter().flat_map(|b| b.files.iter().copied()).collect();
    let mut small: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, file) in files.iter().enumerate().filter(|(i, f)| f.size < target && !grouped.contains(i)) {
        small.entry(&file.partition).or_default().push(i);
    }
    for (partition, mut indexes) in small {
        // Of a clustered table, neighbours in key order, so that a bin's sorted rows stay a
        // narrow range; else the oldest first.
        indexes.sort_by(|a, b| match (&files[*a].range, &files[*b].range) {
            (Some(x), Some(y)) => order(&x.0, &y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => (files[*a].modified, &files[*a].path).cmp(&(files[*b].modified, &files[*b].path)),
        });
        let mut bin: Vec<usize> = Vec::new();
        let mut bytes = 0;
        for i in indexes {
            if !bin.is_empty() && bytes + files[i].size > target {
                bins.push(Bin { partition: partition.to_owned(), files: std::mem::take(&mut bin) });
                bytes = 0;
            }
            bytes += files[i].size;
            bin.push(i);
        }
        bins.push(Bin { partition: partition.to_owned(), files: bin });
    }
    bins.retain(|bin| bin.files.len() > 1);
    bins
}

/// The groups of files of one partition whose ranges overlap, a bin each, by partition and the
/// group's smallest bound: two files are in one group where one's range starts below the other's
/// end, or each does so with a third. Ranges that only touch (one ends on the value the next
/// begins with: a value of a column that is not unique, cut between two files) do not overlap, so
/// sorted files are never rewritten again. Files without a range are in none.
fn overlapping(files: &[DataFile]) -> Vec<Bin> {
    use std::cmp::Ordering;
    let mut ranged: BTreeMap<&str, Vec<(usize, &Range)>> = BTreeMap::new();
    for (i, file) in files.iter().enumerate() {
        if let Some(range) = &file.range {
            ranged.entry(&file.partition).or_default().push((i, range));
        }
    }
    let mut bins = Vec::new();
    for (partition, mut ranged) in ranged {
        ranged.sort_by(|a, b| order(&a.1.0, &b.1.0));
        let mut group: Vec<usize> = Vec::new();
        let mut end: Option<&ScalarValue> = None;
        for (i, (min, max)) in ranged {
            if end.is_some_and(|end| order(min, end) != Ordering::Less) {
                bins.push(Bin { partition: partition.to_owned(), files: std::mem::take(&mut group) });
                end = None;
            }
            group.push(i);
            if end.is_none_or(|end| order(max, end) == Ordering::Greater) {
                end = Some(max);
            }
        }
        bins.push(Bin { partition: partition.to_owned(), files: group });
    }
    bins.retain(|bin| bin.files.len() > 1);
    bins
}

/// The bins' files per partition.
pub(super) fn by_partition(files: &[DataFile], bins: &[Bin]) -> Vec<PartitionFiles> {
    let mut partitions: BTreeMap<&str, PartitionFiles> = BTreeMap::new();
    for bin in bins {
        let entry = partitions.entry(&bin.partition).or_insert_with(|| PartitionFiles {
            partition: bin.partition.clone(),
            files: 0,
            bytes: 0,
        });
        entry.files += bin.files.len() as u64;
        entry.bytes += bin.files.iter().map(|i| files[*i].size).sum::<u64>();
    }
    partitions.into_values().collect()
}

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
/// once. A commit that conflicts is planned again, up to [`ATTEMPTS`] times; the files an
/// attempt wrote but did not commit are left to `vacuum`, as a failed write's are.
pub async fn compact(
    location: &Location,
    name: &str,
    target_file_size: Option<u64>,
    cluster_by: &[String],
    dry_run: bool,
    run_id: &str,
) -> Result<Compacted> {
    let mut retries = 0;
    loop {
        let table = table::open_existing(location).await?;
        let target = target_file_size.unwrap_or(Settings::of(&table, location.url())?.target_file_size);
        let cluster_by = columns_of(&table, cluster_by).map_err(|e| failed(name, "compaction", e))?;
        let files = data_files(&table, &cluster_by).map_err(|e| failed(name, "compaction", e))?;
        let bins = plan(&files, target);
        let mut planned = Compacted {
            partitions: by_partition(&files, &bins),
            files_removed: bins.iter().map(|b| b.files.len() as u64).sum(),
            bytes_removed: bins.iter().flat_map(|b| &b.files).map(|i| files[*i].size).sum(),
            target_file_size: target,
            retries,
            ..Compacted::default()
        };
        if bins.is_empty() || dry_run {
            return Ok(planned);
        }
        let read_version = table.version().unwrap_or(0);
        let rewrite = Rewrite { target, cluster_by: &cluster_by };
        match attempt(&table, &files, &bins, name, run_id, rewrite).await {
            Ok((version, adds)) => {
                tracing::info!(target: crate::PHASE_TARGET, phase = Phase::Compacted.as_str(), table = name, version);
                planned.version = Some(version);
                planned.files_added = adds.len() as u64;
                planned.bytes_added = adds.iter().map(|a| u64::try_from(a.size).unwrap_or(0)).sum();
                return Ok(planned);
            }
            Err(error) => {
                if let Some(found) = find_commit(&table, read_version, run_id).await {
                    tracing::warn!(table = name, version = found.version, error = %error, "this compaction's commit is in the log although its commit failed after it");
                    planned.version = Some(found.version);
                    (planned.files_added, planned.bytes_added) = (found.files_added, found.bytes_added);
                    return Ok(planned);
                }
                if !is_conflict(&error) || retries + 1 >= ATTEMPTS {
                    return Err(failed(name, "compaction", error));
                }
                tracing::info!(table = name, error = %error, "the compaction conflicted with a concurrent commit; planning it again");
                retries += 1;
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

/// Whether a commit failed for a concurrent commit: planning again may succeed.
pub(super) fn is_conflict(error: &DeltaTableError) -> bool {
    matches!(
        error,
        DeltaTableError::Transaction {
            source: TransactionError::CommitConflict(_) | TransactionError::MaxCommitAttempts(_)
        } | DeltaTableError::VersionAlreadyExists(_)
    )
}

/// A compaction's commit found in the log by its run id.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FoundCommit {
    pub version: u64,
    /// The files the commit added, and their bytes.
    pub files_added: u64,
    pub bytes_added: u64,
}

/// This compaction's commit (its `run_id`) after `read_version`, if the log has it: a commit whose
/// answer was lost, and retried into a conflict with itself. Its counts come from its `add`
/// actions, as a commit whose answer arrived takes them from the files it wrote.
pub(super) async fn find_commit(table: &DeltaTable, read_version: u64, run_id: &str) -> Option<FoundCommit> {
    let store = table.log_store();
    let latest = store.get_latest_version(read_version + 1).await.ok()?;
    for version in (read_version + 1..=latest).rev() {
        let bytes = store.read_commit_entry(version).await.ok()??;
        let ours = crate::state::actions(&bytes).any(|action| {
            action.pointer("/commitInfo/lakewriter/run_id").and_then(serde_json::Value::as_str) == Some(run_id)
        });
        if ours {
            let sizes: Vec<u64> = crate::state::actions(&bytes)
                .filter_map(|action| action.get("add").map(|add| add["size"].as_u64().unwrap_or(0)))
                .collect();
            return Some(FoundCommit { version, files_added: sizes.len() as u64, bytes_added: sizes.iter().sum() });
        }
    }
    None
}

#[cfg(test)]
impl DataFile {
    pub(super) fn for_test(partition: &str, path: &str, size: u64, modified: i64) -> Self {
        let remove = Remove {
            path: path.to_owned(),
            data_change: false,
            deletion_timestamp: None,
            extended_file_metadata: None,
            partition_values: None,
            size: None,
            deletion_vector: None,
            tags: None,
            base_row_id: None,
            default_row_commit_version: None,
        };
        Self { path: path.to_owned(), size, partition: partition.to_owned(), modified, rows: None, range: None, remove }
    }
}

/// One compaction attempt over the version `table` is at: its commit's version.
#[cfg(test)]
pub(super) async fn attempt_at(table: &DeltaTable, name: &str, run_id: &str) -> Result<u64, DeltaTableError> {
    let target = super::DEFAULT_TARGET_FILE_SIZE;
    let files = data_files(table, &[])?;
    let rewrite = Rewrite { target, cluster_by: &[] };
    attempt(table, &files, &plan(&files, target), name, run_id, rewrite).await.map(|(version, _)| version)
}
