//! A table's file list read from its log: the checkpoint `_last_checkpoint` names (where it is at
//! or below the version read) and the commit files after it up to that version — each live file's
//! path, size, partition values and statistics (kept as their JSON), the `metaData` and the
//! `protocol` — with no listing of the log, and without delta-rs's snapshot, which would parse
//! every file's statistics into columns.
//!
//! What this reader does not read it leaves to delta-rs (`Ok(None)`): a v2 checkpoint (with
//! sidecars), a checkpoint newer than the version read, a commit missing from the log.

use std::collections::HashMap;

use bytes::Bytes;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StructArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use delta_kernel::table_configuration::TableConfiguration;
use deltalake::kernel::{Add, Metadata, Protocol};
use deltalake::logstore::LogStoreRef;
use futures::StreamExt;
use lakewriter_storage::Location;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

use super::{FileList, Live};
use crate::{Error, Result};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Commit files read at once.
const CONCURRENT_READS: usize = 16;

/// The file list of the table at `location` as of `version`, from its log; `None` where the log
/// holds what this reader leaves to delta-rs (see the module's header).
pub(super) async fn from_log(location: &Location, log_store: LogStoreRef, version: u64) -> Result<Option<FileList>> {
    let read_err = |source: BoxError| Error::Read { url: location.url().clone(), source };
    let store = log_store.object_store(None);
    let mut replay = Replay::default();
    let first = match checkpoint(store.as_ref(), version).await.map_err(read_err)? {
        Start::Unreadable => return Ok(None),
        Start::Beginning => 0,
        Start::Checkpoint { version: checkpoint, parts } => {
            for part in parts {
                let bytes = match store.get(&part).await {
                    Ok(got) => got.bytes().await.map_err(|e| read_err(e.into()))?,
                    Err(object_store::Error::NotFound { .. }) => return Ok(None),
                    Err(e) => return Err(read_err(e.into())),
                };
                if !replay.checkpoint(bytes).map_err(read_err)? {
                    return Ok(None);
                }
            }
            checkpoint + 1
        }
    };
    let reader = log_store.clone();
    let mut commits = futures::stream::iter(first..=version)
        .map(|v| {
            let reader = reader.clone();
            async move { reader.read_commit_entry(v).await }
        })
        .buffered(CONCURRENT_READS);
    while let Some(commit) = commits.next().await {
        match commit {
            Ok(Some(bytes)) => replay.commit(&bytes).map_err(read_err)?,
            Ok(None) => return Ok(None),
            Err(e) => return Err(read_err(e.into())),
        }
    }
    drop(commits);
    let (Some(metadata), Some(protocol)) = (replay.metadata, replay.protocol) else { return Ok(None) };
    let root = log_store.config().location().clone();
    let config = TableConfiguration::try_new(metadata, protocol, root, version).map_err(|e| read_err(e.into()))?;
    FileList::new(location, version, &config, replay.files, log_store).map(Some)
}

/// Where a replay of the log up to a version starts.
enum Start {
    /// At the checkpoint of `version`, in these parts.
    Checkpoint { version: u64, parts: Vec<Path> },
    /// At the first commit: the log names no checkpoint.
    Beginning,
    /// Not here: a v2 checkpoint, or one newer than the version read.
    Unreadable,
}

/// The checkpoint `_last_checkpoint` names, where a replay up to `version` can start from it.
async fn checkpoint(store: &dyn ObjectStore, version: u64) -> Result<Start, BoxError> {
    let bytes = match store.get(&Path::from("_delta_log/_last_checkpoint")).await {
        Ok(got) => got.bytes().await?,
        Err(object_store::Error::NotFound { .. }) => return Ok(Start::Beginning),
        Err(e) => return Err(e.into()),
    };
    let last: Value = serde_json::from_slice(&bytes)?;
    let Some(checkpoint) = last["version"].as_u64() else { return Ok(Start::Unreadable) };
    if checkpoint > version || last.get("v2Checkpoint").is_some() {
        return Ok(Start::Unreadable);
    }
    let parts = match last.get("parts").and_then(Value::as_u64) {
        None | Some(1) => vec![Path::from(format!("_delta_log/{checkpoint:020}.checkpoint.parquet"))],
        Some(parts) => (1..=parts)
            .map(|part| Path::from(format!("_delta_log/{checkpoint:020}.checkpoint.{part:010}.{parts:010}.parquet")))
            .collect(),
    };
    Ok(Start::Checkpoint { version: checkpoint, parts })
}

/// The table's state as the log's actions are applied in order.
#[derive(Default)]
struct Replay {
    files: HashMap<String, Live>,
    metadata: Option<Metadata>,
    protocol: Option<Protocol>,
}

/// The fields of a checkpoint's `add` column read here; everything of `metaData` and `protocol`.
const ADD_FIELDS: &[&str] = &["path", "size", "partitionValues", "stats"];

impl Replay {
    /// Applies a checkpoint part (its Parquet `bytes`): its live files, metadata and protocol.
    /// False where it is not a checkpoint this reader reads (one that names sidecars).
    fn checkpoint(&mut self, bytes: Bytes) -> Result<bool, BoxError> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)?;
        let schema = builder.parquet_schema();
        let leaves = schema.columns().iter().enumerate().filter(|(_, column)| {
            let parts = column.path().parts();
            match parts.first().map(String::as_str) {
                Some("add") => parts.get(1).is_some_and(|f| ADD_FIELDS.contains(&f.as_str())),
                Some("metaData" | "protocol" | "sidecar") => true,
                _ => false,
            }
        });
        let mask = ProjectionMask::leaves(schema, leaves.map(|(i, _)| i).collect::<Vec<_>>());
        for batch in builder.with_projection(mask).build()? {
            let batch = batch?;
            if valid_row(&batch, "sidecar").is_some() {
                return Ok(false);
            }
            if let Some(add) = batch.column_by_name("add") {
                self.adds(add.as_struct_opt().ok_or("the checkpoint's `add` column is not a struct")?)?;
            }
            if let Some(row) = valid_row(&batch, "metaData") {
                self.metadata = Some(serde_json::from_value(row_json(&batch, "metaData", row)?)?);
            }
            if let Some(row) = valid_row(&batch, "protocol") {
                self.protocol = Some(serde_json::from_value(row_json(&batch, "protocol", row)?)?);
            }
        }
        Ok(true)
    }

    /// Applies the `add` actions of a checkpoint's `add` column, each file by its relative path (its
    /// `path` decoded once, as a commit's `add` is: see [`crate::paths`]).
    fn adds(&mut self, add: &StructArray) -> Result<(), BoxError> {
        let field =
            |name: &str| add.column_by_name(name).ok_or_else(|| format!("the checkpoint's `add` has no `{name}`"));
        let paths = text(field("path")?)?;
        let paths = paths.as_string::<i32>();
        let sizes = field("size")?.as_primitive_opt::<Int64Type>().ok_or("`add.size` is not a long")?;
        let stats = add.column_by_name("stats").map(text).transpose()?;
        let stats = stats.as_ref().map(AsArray::as_string::<i32>);
        let values = field("partitionValues")?.as_map_opt().ok_or("`add.partitionValues` is not a map")?;
        for row in (0..add.len()).filter(|&row| add.is_valid(row) && paths.is_valid(row)) {
            let entries = values.value(row);
            let (keys, entries) = (text(entries.column(0))?, text(entries.column(1))?);
            let (keys, entries) = (keys.as_string::<i32>(), entries.as_string::<i32>());
            let partition_values = (0..keys.len())
                .map(|i| (keys.value(i).to_owned(), entries.is_valid(i).then(|| entries.value(i).to_owned())))
                .collect();
            let stats = stats.filter(|s| s.is_valid(row)).map(|s| s.value(row).to_owned());
            let path = crate::paths::decode(paths.value(row))?;
            self.files.insert(path, Live::new(partition_values, sizes.value(row), stats));
        }
        Ok(())
    }

    /// Applies a commit file's actions, in order: each file by its relative path.
    fn commit(&mut self, bytes: &[u8]) -> Result<(), BoxError> {
        for mut action in crate::state::actions(bytes) {
            if let Some(add) = action.get_mut("add") {
                let add: Add = serde_json::from_value(add.take())?;
                self.files.insert(add.path, Live::new(add.partition_values, add.size, add.stats));
            } else if let Some(path) = action.pointer("/remove/path").and_then(Value::as_str) {
                self.files.remove(&crate::paths::decode(path)?);
            } else if let Some(metadata) = action.get_mut("metaData") {
                self.metadata = Some(serde_json::from_value(metadata.take())?);
            } else if let Some(protocol) = action.get_mut("protocol") {
                self.protocol = Some(serde_json::from_value(protocol.take())?);
            }
        }
        Ok(())
    }
}

/// `column` as plain strings.
fn text(column: &ArrayRef) -> Result<ArrayRef, BoxError> {
    Ok(if *column.data_type() == DataType::Utf8 { column.clone() } else { cast(column, &DataType::Utf8)? })
}

/// The row of `batch`'s column `name` that holds an action, if one does.
fn valid_row(batch: &RecordBatch, name: &str) -> Option<usize> {
    let column = batch.column_by_name(name)?;
    (0..column.len()).find(|&row| column.is_valid(row))
}

/// Row `row` of `batch`'s column `name` (an action) as JSON, as the log's JSON commits write it.
fn row_json(batch: &RecordBatch, name: &str, row: usize) -> Result<Value, BoxError> {
    let column = batch.column_by_name(name).ok_or("no such column")?.slice(row, 1);
    let one = RecordBatch::try_from_iter([(name, column)])?;
    let mut writer = datafusion::arrow::json::LineDelimitedWriter::new(Vec::new());
    writer.write(&one)?;
    writer.finish()?;
    let mut line: Value = serde_json::from_slice(&writer.into_inner())?;
    Ok(line[name].take())
}
