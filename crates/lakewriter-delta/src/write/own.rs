//! What lakewriter's own commits share (a write of a slice of a table, [`super::slice`], and a keyed
//! write in one scan, [`super::merge::scan`]): the data files written by delta-rs's writer in the
//! table's layout, the commit file — `commitInfo`, the partition state, removes, adds — and its
//! put as the log's next version with the log store's put-if-absent. Nothing loads, replays or
//! updates delta-rs's snapshot, and nothing lists the log.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, FieldRef, Schema, SchemaRef};
use delta_kernel::table_properties::DataSkippingNumIndexedCols;
use deltalake::DeltaTableError;
use deltalake::kernel::transaction::TransactionError;
use deltalake::kernel::{Action, Add, Remove, Transaction};
use deltalake::logstore::CommitOrBytes;
use deltalake::operations::write::writer::{DeltaWriter, WriterConfig};
use serde_json::{Value, json};

use super::commit::{COMMIT_RETRIES, changed_meanwhile, write_error};
use super::target::Target;
use crate::files::{FileList, Shape};
use crate::{Error, Result};

/// The table's columns in the order its data files are written: the columns that are not
/// partition columns in the table's order, then the partition columns (as delta-rs writes them),
/// each of the table's type.
pub(super) fn layout(shape: &Shape) -> SchemaRef {
    let fields = shape.schema.fields();
    let ordered: Vec<FieldRef> = fields
        .iter()
        .filter(|f| !shape.partition_columns.contains(f.name()))
        .chain(shape.partition_columns.iter().filter_map(|c| fields.find(c).map(|(_, f)| f)))
        .cloned()
        .collect();
    Arc::new(Schema::new(ordered))
}

/// The nullable twin of `schema`: what a write's batches carry before their NOT NULL columns are
/// checked (see [`FileWriter::write`]).
pub(super) fn relaxed(schema: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        schema.fields().iter().map(|f| Arc::new(Field::clone(f).with_nullable(true))).collect::<Vec<_>>(),
    ))
}

/// What a task needs to write a table's data files, carried in the plan (as JSON) to wherever it
/// runs: the table's folder, its partition columns and its write settings.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileSpec {
    /// The table's folder (`file:///…/schema/table/` or `s3://bucket/…/schema/table/`).
    pub table: String,
    pub partition_columns: Vec<String>,
    pub target_file_size: std::num::NonZeroU64,
    /// How many leading columns get statistics; `None`: all of them.
    pub indexed_columns: Option<u64>,
    pub stats_columns: Option<Vec<String>>,
}

impl FileSpec {
    fn num_indexed_cols(&self) -> DataSkippingNumIndexedCols {
        self.indexed_columns.map_or(DataSkippingNumIndexedCols::AllColumns, DataSkippingNumIndexedCols::NumColumns)
    }
}

/// delta-rs's writer of a table's data files, over the file list's settings (target file size,
/// statistics), for batches in the table's [`layout`].
pub(super) struct FileWriter {
    writer: DeltaWriter,
    pub rows: u64,
}

impl FileWriter {
    /// A writer of files into `store` (the table's folder), as `spec` says, for batches of
    /// `schema`.
    pub(super) fn new(store: Arc<dyn object_store::ObjectStore>, spec: &FileSpec, schema: SchemaRef) -> Self {
        let config = WriterConfig::new(
            schema,
            spec.partition_columns.clone(),
            None,
            Some(spec.target_file_size),
            None,
            spec.num_indexed_cols(),
            spec.stats_columns.clone(),
        );
        Self { writer: DeltaWriter::new(store, config), rows: 0 }
    }

    /// A writer of the data files of the table `list` describes.
    pub(super) fn of(list: &FileList, schema: SchemaRef, operation_id: uuid::Uuid) -> Self {
        Self::new(list.log_store.object_store(Some(operation_id)), &file_spec(list), schema)
    }

    /// Writes `batch`; on a failure the writer is aborted (its uploads ended).
    pub(super) async fn write(&mut self, batch: &RecordBatch) -> Result<(), DeltaTableError> {
        self.rows += batch.num_rows() as u64;
        self.writer.write(batch).await
    }

    pub(super) async fn close(self) -> Result<Vec<Add>, DeltaTableError> {
        self.writer.close().await
    }

    /// Ends the writer after a failure: its files belong to no commit.
    pub(super) async fn abort(self) {
        let _ = self.writer.abort().await;
    }
}

/// Writes the batches of `stream` with `writer`: the files' `add` actions and the rows written.
/// On a failure (of the stream or the writer) the writer is aborted.
pub(super) async fn write_stream(
    mut writer: FileWriter,
    mut stream: datafusion::execution::SendableRecordBatchStream,
) -> Result<(Vec<Add>, u64), DeltaTableError> {
    use futures::StreamExt;
    while let Some(batch) = stream.next().await {
        let written = match batch {
            Ok(batch) => writer.write(&batch).await,
            Err(e) => Err(failed(e)),
        };
        if let Err(e) = written {
            writer.abort().await;
            return Err(e);
        }
    }
    let rows = writer.rows;
    Ok((writer.close().await?, rows))
}

/// How the data files of the table `list` describes are written: its folder, partition columns
/// and write settings.
pub(super) fn file_spec(list: &FileList) -> FileSpec {
    let indexed_columns = match list.settings.stats.num_indexed_cols {
        DataSkippingNumIndexedCols::AllColumns => None,
        DataSkippingNumIndexedCols::NumColumns(n) => Some(n),
    };
    FileSpec {
        table: list.log_store.root_url().to_string(),
        partition_columns: list.shape.partition_columns.clone(),
        target_file_size: list.settings.target_file_size,
        indexed_columns,
        stats_columns: list.settings.stats.stats_columns.clone(),
    }
}

/// The commit's `commitInfo`: delta-rs's words for `operation` with its `parameters`, lakewriter's
/// metadata and the write's metrics beside them.
pub(super) fn commit_info(
    target: &Target<'_>,
    (operation, parameters): (&str, Value),
    read_version: Option<u64>,
    metrics: &Value,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Value> {
    let metadata = serde_json::to_value(target.metadata)
        .map_err(|e| Error::Read { url: target.location.url().clone(), source: e.into() })?;
    let mut info = json!({"commitInfo": {
        "timestamp": now.timestamp_millis(),
        "operation": operation,
        "operationParameters": parameters,
        "readVersion": read_version,
        "isBlindAppend": false,
        "clientVersion": concat!("lakewriter.", env!("CARGO_PKG_VERSION")),
        "lakewriter": metadata,
        "operationMetrics": metrics,
    }});
    if read_version.is_none() {
        // A commit that creates the table read none.
        info["commitInfo"].as_object_mut().map(|o| o.remove("readVersion"));
    }
    Ok(info)
}

/// The commit file: its `commitInfo`, the actions that create the table (where it does), the
/// partition state, the removes and the adds, a line each.
pub(super) fn entry(
    target: &Target<'_>,
    info: &Value,
    (creation, txns): (&[Action], &[Transaction]),
    removes: &[Remove],
    adds: &[Add],
) -> Result<bytes::Bytes> {
    let actions = creation
        .iter()
        .cloned()
        .chain(txns.iter().cloned().map(Action::Txn))
        .chain(removes.iter().cloned().map(Action::Remove))
        .chain(adds.iter().cloned().map(Action::Add));
    let mut lines = vec![info.to_string()];
    for action in actions {
        lines.push(serde_json::to_string(&action).map_err(|e| Error::Write {
            table: target.name.to_owned(),
            partition: target.metadata.partition.clone(),
            source: e.into(),
        })?);
    }
    Ok(bytes::Bytes::from(lines.join("\n")))
}

/// Puts `bytes` as the log's next version after `list`'s, and on losing that version to another
/// writer asks `conflict` about the winning commit (its commit file): where it says why, the run
/// conflicts (it is made again); otherwise the winner is applied to `list` and the next version
/// tried. Returns the version committed.
pub(super) async fn put(
    target: &Target<'_>,
    list: &mut FileList,
    bytes: bytes::Bytes,
    conflict: impl Fn(&[u8]) -> Option<&'static str>,
    operation_id: uuid::Uuid,
) -> Result<u64> {
    let log_store = list.log_store.clone();
    for _ in 0..=COMMIT_RETRIES {
        let version = list.version + 1;
        let put = log_store.write_commit_entry(version, CommitOrBytes::LogBytes(bytes.clone()), operation_id).await;
        match put {
            Ok(()) => return Ok(version),
            Err(TransactionError::VersionAlreadyExists(_)) => {
                let winner = match log_store.read_commit_entry(version).await {
                    Ok(Some(winner)) => winner,
                    Ok(None) => return Err(changed_meanwhile(target, "a commit could not be read")),
                    Err(e) => return Err(write_error(target, e)),
                };
                if let Some(why) = conflict(&winner) {
                    return Err(changed_meanwhile(target, &format!("version {version} {why}")));
                }
                if list.apply(version, &winner).is_err() {
                    return Err(changed_meanwhile(target, &format!("version {version} changed the table")));
                }
            }
            Err(e) => return Err(write_error(target, e.into())),
        }
    }
    Err(write_error(
        target,
        TransactionError::MaxCommitAttempts(i32::try_from(COMMIT_RETRIES).unwrap_or(i32::MAX)).into(),
    ))
}

/// Commits `adds` and `removes` with the partition state over `list` (the table as the write read
/// it) as `operation`, with its `metrics`: the commit put (see [`put`], `conflict` telling which
/// winning commits this one conflicts with), the list kept as committed, and the run
/// [`finish`](super::commit::finish)ed.
pub(super) async fn commit(
    target: &Target<'_>,
    list: &FileList,
    operation: (&str, Value),
    (adds, removes): (&[Add], &[Remove]),
    metrics: &Value,
    conflict: impl Fn(&[u8]) -> Option<&'static str>,
    operation_id: uuid::Uuid,
) -> Result<crate::state::Committed> {
    use lakewriter_core::Phase;
    let read_version = list.version;
    let now = chrono::Utc::now();
    let txns = crate::state::transactions(target.metadata, Some(list.shape.schema.fields().len()), now);
    let info = commit_info(target, operation, Some(read_version), metrics, now)?;
    let bytes = entry(target, &info, (&[], &txns), removes, adds)?;
    let mut list = FileList::clone(list);
    crate::phase(Phase::Committing, target.name, &target.metadata.partition);
    let outcome =
        put(target, &mut list, bytes, |winner| conflict(winner).or_else(|| same_state(winner, &txns)), operation_id)
            .await;
    let landed = outcome.map(|version| kept(target, list, version, (adds, removes)));
    super::commit::finish(target, Some(read_version), landed).await
}

/// What landed as `version`: `list` with the commit's `adds` and `removes` applied, kept for the
/// command's next write of the table.
fn kept(
    target: &Target<'_>,
    mut list: FileList,
    version: u64,
    (adds, removes): (&[Add], &[Remove]),
) -> super::commit::Landed {
    list.committed(version, adds, removes);
    let (checkpoint_interval, log_store) = (list.settings.checkpoint_interval, list.log_store.clone());
    target.loaded.keep_list(target.location, list);
    super::commit::Landed::Commit { version, log_store, checkpoint_interval }
}

/// Commits `adds` with the partition state as the first version of a new table, created by the
/// `creation` actions (its protocol and metadata; `list` is the empty table they describe), as
/// `operation`, with its `metrics`. A table created meanwhile by another writer fails this commit
/// as a conflict: the run is made again, over that table. The list is kept as committed, and the
/// run [`finish`](super::commit::finish)ed.
pub(super) async fn create(
    target: &Target<'_>,
    list: &FileList,
    creation: &[Action],
    operation: (&str, Value),
    adds: &[Add],
    metrics: &Value,
    operation_id: uuid::Uuid,
) -> Result<crate::state::Committed> {
    use lakewriter_core::Phase;
    let now = chrono::Utc::now();
    let txns = crate::state::transactions(target.metadata, Some(list.shape.schema.fields().len()), now);
    let info = commit_info(target, operation, None, metrics, now)?;
    let bytes = entry(target, &info, (creation, &txns), &[], adds)?;
    crate::phase(Phase::Committing, target.name, &target.metadata.partition);
    let put = list.log_store.write_commit_entry(0, CommitOrBytes::LogBytes(bytes), operation_id).await;
    let landed = match put {
        Ok(()) => Ok(kept(target, FileList::clone(list), 0, (adds, &[]))),
        Err(TransactionError::VersionAlreadyExists(_)) => {
            Err(changed_meanwhile(target, "another writer created the table first"))
        }
        Err(e) => Err(write_error(target, e.into())),
    };
    super::commit::finish(target, None, landed).await
}

/// Why a winning commit (`bytes`) conflicts with one recording `txns`: it records one of them.
fn same_state(bytes: &[u8], txns: &[Transaction]) -> Option<&'static str> {
    crate::state::actions(bytes)
        .filter_map(|action| action.pointer("/txn/appId").and_then(Value::as_str).map(str::to_owned))
        .any(|id| txns.iter().any(|t| t.app_id == id))
        .then_some("recorded the same partition's state")
}

/// A failure of a write's own query (DataFusion's) as delta-rs's write hands it on: a failed
/// storage request as itself, anything else in DataFusion's words.
pub(super) fn failed(error: datafusion::error::DataFusionError) -> DeltaTableError {
    match error {
        datafusion::error::DataFusionError::ObjectStore(source) => DeltaTableError::from(*source),
        other => DeltaTableError::Generic(other.to_string()),
    }
}
