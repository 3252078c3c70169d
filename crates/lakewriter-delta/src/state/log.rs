//! The Delta log as files: listing it (commits and the newest complete checkpoint), its newest
//! version, and reading `txn` actions from commit files and checkpoints.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

/// An application transaction as read from the log.
#[derive(Debug, Clone, Copy)]
pub(super) struct Txn {
    pub version: i64,
    pub last_updated: Option<i64>,
    /// The commit that carried it, where read from a commit file.
    pub commit: Option<u64>,
}

pub(crate) enum LogFile {
    Commit(u64),
    /// A checkpoint part: its version, part number and part count (1 of 1 for single-file and
    /// v2 checkpoints).
    Checkpoint(u64, u32, u32),
}

/// A checkpoint's parts by part count, then part number.
type CheckpointParts = HashMap<u32, HashMap<u32, ObjectMeta>>;

pub(crate) fn parse_log_file(name: &str) -> Option<LogFile> {
    let (version, rest) = name.split_once('.')?;
    if version.len() != 20 {
        return None;
    }
    let version = version.parse().ok()?;
    match rest.split('.').collect::<Vec<_>>().as_slice() {
        ["json"] => Some(LogFile::Commit(version)),
        ["checkpoint", "parquet"] => Some(LogFile::Checkpoint(version, 1, 1)),
        ["checkpoint", part, parts, "parquet"] => {
            Some(LogFile::Checkpoint(version, part.parse().ok()?, parts.parse().ok()?))
        }
        // A v2 checkpoint (`<version>.checkpoint.<uuid>.parquet` or `.json`): its top-level file
        // holds the transactions; sidecars hold only files.
        ["checkpoint", _uuid, "parquet" | "json"] => Some(LogFile::Checkpoint(version, 1, 1)),
        _ => None,
    }
}

/// How much of a table's log a read of the partition state lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogScope {
    /// From the checkpoint `_last_checkpoint` names: what a run needs.
    FromLastCheckpoint,
    /// Every file, so that [`super::JobState::commit_files`] counts the whole log: what `status` shows.
    Whole,
}

/// The files of a table's log folder that a replay reads.
pub(super) struct Listing {
    pub commits: BTreeMap<u64, ObjectMeta>,
    /// The newest checkpoint with all its parts.
    pub checkpoint: Option<(u64, Vec<ObjectMeta>)>,
    /// The newest version: of a commit, or of the checkpoint.
    pub latest: u64,
}

/// Lists the log folder `log` (its own files only: not `_sidecars/`, `_commits/` and the like);
/// `None` where it holds no commit and no checkpoint. With [`LogScope::FromLastCheckpoint`] the
/// listing starts at the checkpoint `_last_checkpoint` names, so its cost stays that of a
/// checkpoint interval however long the log grows; the whole folder is listed where there is no
/// such checkpoint or the listing holds no complete checkpoint.
pub(super) async fn list(
    store: &Arc<dyn ObjectStore>,
    log: &Path,
    local: Option<&std::path::Path>,
    scope: LogScope,
) -> Result<Option<Listing>, Failure> {
    if scope == LogScope::FromLastCheckpoint
        && let Some(version) = last_checkpoint(store, log).await?
    {
        let listing = from_version(store, log, local, version);
        if let Some(listing) = from_files(listing.await?).filter(|l| l.checkpoint.is_some()) {
            return Ok(Some(listing));
        }
    }
    match store.list_with_delimiter(Some(log)).await {
        Ok(listed) => Ok(from_files(listed.objects)),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(Failure::Other(e.into())),
    }
}

/// The files of the log folder `log` from `version`'s on. In a local folder (`local`), its names
/// are read and only those files looked at: object_store's local listing looks at every file of
/// the folder, where every commit stays for the log retention of 30 days.
async fn from_version(
    store: &Arc<dyn ObjectStore>,
    log: &Path,
    local: Option<&std::path::Path>,
    version: u64,
) -> Result<Vec<ObjectMeta>, Failure> {
    let Some(folder) = local else {
        return listed(log, store.list_with_offset(Some(log), &offset(log, version))).await;
    };
    let first = format!("{version:020}");
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Failure::Other(e.into())),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Failure::Other(e.into()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| *n > first.as_str() && parse_log_file(n).is_some()) else { continue };
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            // Removed by log clean-up since the folder was read.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Failure::Other(e.into())),
        };
        let modified = meta.modified().map_err(|e| Failure::Other(e.into()))?;
        files.push(ObjectMeta {
            location: log.clone().join(name),
            last_modified: modified.into(),
            size: meta.len(),
            e_tag: None,
            version: None,
        });
    }
    Ok(files)
}

/// The files of `listing` that lie in `log` itself.
async fn listed(
    log: &Path,
    mut listing: BoxStream<'static, object_store::Result<ObjectMeta>>,
) -> Result<Vec<ObjectMeta>, Failure> {
    let depth = log.parts().count() + 1;
    let mut files = Vec::new();
    while let Some(meta) = listing.next().await {
        match meta {
            Ok(meta) if meta.location.parts().count() == depth => files.push(meta),
            Ok(_) => {}
            Err(object_store::Error::NotFound { .. }) => break,
            Err(e) => return Err(Failure::Other(e.into())),
        }
    }
    Ok(files)
}

fn from_files(files: Vec<ObjectMeta>) -> Option<Listing> {
    let mut commits = BTreeMap::new();
    let mut checkpoints: BTreeMap<u64, CheckpointParts> = BTreeMap::new();
    for meta in files {
        match meta.location.filename().and_then(parse_log_file) {
            Some(LogFile::Commit(v)) => {
                commits.insert(v, meta);
            }
            Some(LogFile::Checkpoint(v, part, parts)) => {
                checkpoints.entry(v).or_default().entry(parts).or_default().insert(part, meta);
            }
            None => {}
        }
    }
    let checkpoint = checkpoints.into_iter().rev().find_map(|(version, sets)| {
        sets.into_iter()
            .find(|(n, parts)| (1..=*n).all(|p| parts.contains_key(&p)))
            .map(|(_, parts)| (version, parts.into_values().collect::<Vec<_>>()))
    });
    let latest = commits.keys().next_back().copied().into_iter().chain(checkpoint.as_ref().map(|(v, _)| *v)).max();
    latest.map(|latest| Listing { commits, checkpoint, latest })
}

/// The version of the checkpoint `_last_checkpoint` names, if it names one.
async fn last_checkpoint(store: &Arc<dyn ObjectStore>, log: &Path) -> Result<Option<u64>, Failure> {
    match store.get(&log.clone().join("_last_checkpoint")).await {
        Ok(got) => Ok(serde_json::from_slice::<Value>(&got.bytes().await?).ok().and_then(|v| v["version"].as_u64())),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(Failure::Other(e.into())),
    }
}

/// The listing offset from which the files of `version` on are listed.
fn offset(log: &Path, version: u64) -> Path {
    log.clone().join(format!("{version:020}").as_str())
}

/// The newest version in the log folder `log`, of a commit or a checkpoint; `None` where it holds
/// neither. The listing starts at the checkpoint `_last_checkpoint` names, so it costs one small
/// read and a listing of at most a checkpoint interval of files; the whole folder is listed where
/// there is no such checkpoint (or nothing from it).
pub(super) async fn latest(
    store: &Arc<dyn ObjectStore>,
    log: &Path,
    local: Option<&std::path::Path>,
) -> Result<Option<u64>, Failure> {
    if let Some(version) = last_checkpoint(store, log).await?
        && let Some(latest) = from_version(store, log, local, version).await?.iter().filter_map(version_of).max()
    {
        return Ok(Some(latest));
    }
    newest(log, store.list(Some(log))).await
}

/// The newest version among the log files `listing` lists in `log`.
async fn newest(
    log: &Path,
    listing: BoxStream<'static, object_store::Result<ObjectMeta>>,
) -> Result<Option<u64>, Failure> {
    Ok(listed(log, listing).await?.iter().filter_map(version_of).max())
}

/// The version of a log file, of a commit or a checkpoint.
fn version_of(meta: &ObjectMeta) -> Option<u64> {
    match meta.location.filename().and_then(parse_log_file)? {
        LogFile::Commit(v) | LogFile::Checkpoint(v, ..) => Some(v),
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

pub(super) enum Failure {
    /// A file listed in the log was gone when read.
    Vanished(BoxError),
    Other(BoxError),
}

impl From<object_store::Error> for Failure {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { .. } => Self::Vanished(e.into()),
            e => Self::Other(e.into()),
        }
    }
}

/// The actions of a JSON log file, one per line.
pub(crate) fn actions(bytes: &[u8]) -> impl Iterator<Item = Value> + '_ {
    bytes.split(|b| *b == b'\n').filter_map(|line| serde_json::from_slice::<Value>(line).ok())
}

/// Records `action` if it is a `txn` whose application id starts with `prefix`; true for any `txn`.
pub(super) fn apply_txn(action: &Value, commit: Option<u64>, prefix: &str, txns: &mut HashMap<String, Txn>) -> bool {
    let Some(txn) = action.get("txn") else { return false };
    if let (Some(id), Some(version)) = (txn.get("appId").and_then(Value::as_str), txn["version"].as_i64())
        && id.starts_with(prefix)
    {
        let last_updated = txn.get("lastUpdated").and_then(Value::as_i64);
        txns.insert(id.to_owned(), Txn { version, last_updated, commit });
    }
    true
}

/// Adds the `txn` rows of one checkpoint file whose application id starts with `prefix`. Only the
/// `txn` column of a Parquet checkpoint is decoded; a JSON (v2) checkpoint is read line by line.
pub(super) async fn read_checkpoint_txns(
    store: &Arc<dyn ObjectStore>,
    meta: &ObjectMeta,
    prefix: &str,
    txns: &mut HashMap<String, Txn>,
) -> Result<(), Failure> {
    let bytes = store.get(&meta.location).await?.bytes().await?;
    if meta.location.extension() == Some("json") {
        for action in actions(&bytes) {
            apply_txn(&action, None, prefix, txns);
        }
        return Ok(());
    }
    let other = |e: parquet::errors::ParquetError| Failure::Other(e.into());
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(other)?;
    let Some(index) = builder.parquet_schema().root_schema().get_fields().iter().position(|f| f.name() == "txn") else {
        return Ok(());
    };
    let mask = ProjectionMask::roots(builder.parquet_schema(), [index]);
    for batch in builder.with_projection(mask).build().map_err(other)? {
        let batch = batch.map_err(|e| Failure::Other(e.into()))?;
        add_checkpoint_txns(&batch, prefix, txns).map_err(Failure::Other)?;
    }
    Ok(())
}

fn add_checkpoint_txns(batch: &RecordBatch, prefix: &str, txns: &mut HashMap<String, Txn>) -> Result<(), BoxError> {
    let txn = batch.column(0).as_struct_opt().ok_or("the checkpoint's `txn` column is not a struct")?;
    let field = |name: &str| txn.column_by_name(name).ok_or_else(|| format!("the checkpoint's `txn` has no `{name}`"));
    let app_ids = datafusion::arrow::compute::cast(field("appId")?, &DataType::Utf8)?;
    let app_ids = app_ids.as_string::<i32>();
    let versions = field("version")?.as_primitive_opt::<Int64Type>().ok_or("`txn.version` is not a long")?;
    let updated = txn.column_by_name("lastUpdated").and_then(|c| c.as_primitive_opt::<Int64Type>());
    for row in 0..txn.len() {
        if txn.is_null(row) || app_ids.is_null(row) || !app_ids.value(row).starts_with(prefix) {
            continue;
        }
        let last_updated = updated.filter(|u| !u.is_null(row)).map(|u| u.value(row));
        txns.insert(app_ids.value(row).to_owned(), Txn { version: versions.value(row), last_updated, commit: None });
    }
    Ok(())
}
