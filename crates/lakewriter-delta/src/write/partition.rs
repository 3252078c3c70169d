//! A partition overwrite committed over lakewriter's file list ([`crate::files`]): delta-rs's
//! writer writes the data files, and the commit — the partition's live files removed, the new ones
//! added, the partition state, lakewriter's `commitInfo` — is put as the next log entry by the
//! table's log store (a put-if-absent), with Delta's conflict check against every commit that won
//! a version since the run read the table. Nothing loads, replays or updates delta-rs's snapshot,
//! and nothing lists the log.
//!
//! It applies where the write replaces one value of a `DATE` partition column of an existing
//! table, adds no column, and the table asks for nothing lakewriter's own checks do not do (see
//! [`FileList::guarded`]); every other write goes through delta-rs's own (`replace_where`).

use std::sync::Arc;

use datafusion::common::{Column, ScalarValue};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{BinaryExpr, LogicalPlan, LogicalPlanBuilder, Operator, cast};
use datafusion::prelude::Expr;
use deltalake::DeltaTableError;
use deltalake::kernel::transaction::TransactionError;
use deltalake::kernel::{Action, Add, Remove};
use deltalake::logstore::CommitOrBytes;
use deltalake::operations::write::writer::{DeltaWriter, WriterConfig};
use futures::StreamExt;
use lakewriter_core::Phase;
use serde_json::{Value, json};

use super::commit::{COMMIT_RETRIES, Landed, finish, write_error};
use super::{Committed, Target};
use crate::files::FileList;
use crate::table::Shape;
use crate::{Error, Result, nullability, state};

/// The partition a replaceWhere `predicate` replaces, as `(column, value)` in the log's words,
/// where it is `column = DATE '…'` on a `DATE` partition column of the table `shape` describes.
pub(super) fn replaced(predicate: &Expr, shape: &Shape) -> Option<(String, String)> {
    let Expr::BinaryExpr(BinaryExpr { left, op: Operator::Eq, right }) = predicate else { return None };
    let (Expr::Column(column), Expr::Literal(ScalarValue::Date32(Some(days)), _)) = (left.as_ref(), right.as_ref())
    else {
        return None;
    };
    let name = &column.name;
    let field = shape.schema.field_with_name(name).ok()?;
    if !shape.partition_columns.contains(name) || field.data_type() != &datafusion::arrow::datatypes::DataType::Date32 {
        return None;
    }
    let date = chrono::DateTime::from_timestamp(i64::from(*days) * 86_400, 0)?.date_naive();
    Some((name.clone(), date.format("%Y-%m-%d").to_string()))
}

/// Replaces the partition `column = value` of the table `list` describes (at
/// `target.read_version`) with `plan`'s rows, in one commit. A row outside the partition, or a
/// NULL in a NOT NULL column, fails the write with [`Error::Invalid`] before anything is
/// committed.
pub(super) async fn replace(
    session: &SessionState,
    target: &Target<'_>,
    plan: LogicalPlan,
    list: Arc<FileList>,
    (column, value): (&str, &str),
) -> Result<Committed> {
    let read_version = list.version;
    crate::phase(Phase::Writing, target.name, &target.metadata.partition);
    let started = std::time::Instant::now();
    let operation_id = uuid::Uuid::new_v4();
    let written = write_files(session, target, plan, &list, operation_id).await;
    let (adds, rows) = match written {
        Ok(written) => written,
        Err(error) => return finish(target, Some(read_version), Err(error)).await,
    };
    if adds.iter().any(|add| !crate::files::in_partition(&add.partition_values, column, value)) {
        // Rows outside the partition: their files belong to no commit (VACUUM removes them).
        let (table, partition) = (target.name.to_owned(), target.metadata.partition.clone());
        return Err(Error::Invalid { table, partition, not_null: Vec::new() });
    }
    let now = chrono::Utc::now();
    let removes = list.removes(column, value, now.timestamp_millis());
    let metrics = json!({
        "num_added_files": adds.len(),
        "num_removed_files": removes.len(),
        "num_added_rows": rows,
        "execution_time_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    let info = commit_info(target, &list, (column, value), read_version, &metrics, now)?;
    let txns = state::transactions(target.metadata, Some(list.shape.schema.fields().len()), now);
    let bytes = entry(target, &info, &txns, &removes, &adds)?;
    let mut list = FileList::clone(&list);
    crate::phase(Phase::Committing, target.name, &target.metadata.partition);
    let outcome = put(target, &mut list, bytes, (column, value), &txns, operation_id).await;
    let landed = outcome.map(|version| {
        list.committed(version, &adds, &removes);
        let settings = list.settings.clone();
        let log_store = list.log_store.clone();
        target.loaded.keep_list(target.location, list);
        Landed::Commit { version, log_store, checkpoint_interval: settings.checkpoint_interval }
    });
    finish(target, Some(read_version), landed).await
}

/// Writes `plan`'s rows as data files of the table `list` describes, with the nullability checks
/// of its NOT NULL and declared `not_null` columns, laid out and cast as the table's columns (the
/// partition columns last, as delta-rs writes them). Returns the files' `add` actions and the
/// number of rows.
async fn write_files(
    session: &SessionState,
    target: &Target<'_>,
    plan: LogicalPlan,
    list: &FileList,
    operation_id: uuid::Uuid,
) -> Result<(Vec<Add>, u64)> {
    let plan_err = |source| write_error(target, failed(source));
    let required = nullability::required(Some(&list.shape.schema), target.not_null);
    let plan = nullability::as_written(plan, &required, false).map_err(plan_err)?;
    let plan = as_table(plan, &list.shape).map_err(plan_err)?;
    let physical = session.create_physical_plan(&plan).await.map_err(plan_err)?;
    let config = WriterConfig::new(
        physical.schema(),
        list.shape.partition_columns.clone(),
        None,
        Some(list.settings.target_file_size),
        None,
        list.settings.stats.num_indexed_cols,
        list.settings.stats.stats_columns.clone(),
    );
    let mut writer = DeltaWriter::new(list.log_store.object_store(Some(operation_id)), config);
    let mut stream = datafusion::physical_plan::execute_stream(physical, session.task_ctx()).map_err(plan_err)?;
    let mut rows = 0u64;
    while let Some(batch) = stream.next().await {
        let written = match batch {
            Ok(batch) => {
                rows += batch.num_rows() as u64;
                writer.write(&batch).await
            }
            Err(e) => Err(failed(e)),
        };
        if let Err(e) = written {
            let _ = writer.abort().await;
            return Err(write_error(target, e));
        }
    }
    let adds = writer.close().await.map_err(|e| write_error(target, e))?;
    Ok((adds, rows))
}

/// A failure of the write's query as delta-rs's write hands it on: a failed storage request as
/// itself, anything else in DataFusion's words.
fn failed(error: datafusion::error::DataFusionError) -> DeltaTableError {
    match error {
        datafusion::error::DataFusionError::ObjectStore(source) => DeltaTableError::from(*source),
        other => DeltaTableError::Generic(other.to_string()),
    }
}

/// `plan`'s columns as the table's, by name: the columns that are not partition columns in the
/// table's order, then the partition columns, each cast to the table's type where it differs (a
/// `Utf8View` to `string`'s `Utf8`, say).
fn as_table(plan: LogicalPlan, shape: &Shape) -> datafusion::error::Result<LogicalPlan> {
    let fields = shape.schema.fields();
    let ordered = fields
        .iter()
        .filter(|f| !shape.partition_columns.contains(f.name()))
        .chain(shape.partition_columns.iter().filter_map(|c| fields.find(c).map(|(_, f)| f)));
    let mut columns = Vec::with_capacity(fields.len());
    for field in ordered {
        let (qualifier, found) = plan.schema().qualified_field_with_unqualified_name(field.name())?;
        let column = Expr::Column(Column::from((qualifier, found)));
        columns.push(if found.data_type() == field.data_type() {
            column
        } else {
            cast(column, field.data_type().clone()).alias(field.name())
        });
    }
    LogicalPlanBuilder::from(plan).project(columns)?.build()
}

/// The commit's `commitInfo`: delta-rs's words for a partition overwrite, with lakewriter's
/// metadata and the write's metrics beside them.
fn commit_info(
    target: &Target<'_>,
    list: &FileList,
    (column, value): (&str, &str),
    read_version: u64,
    metrics: &Value,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Value> {
    let metadata = serde_json::to_value(target.metadata)
        .map_err(|e| Error::Read { url: target.location.url().clone(), source: e.into() })?;
    let partition_by = serde_json::to_string(&list.shape.partition_columns).unwrap_or_default();
    Ok(json!({"commitInfo": {
        "timestamp": now.timestamp_millis(),
        "operation": "WRITE",
        "operationParameters": {
            "mode": "Overwrite",
            "partitionBy": partition_by,
            "predicate": format!("{column} = '{value}'::date"),
        },
        "readVersion": read_version,
        "isBlindAppend": false,
        "clientVersion": concat!("lakewriter.", env!("CARGO_PKG_VERSION")),
        "lakewriter": metadata,
        "operationMetrics": metrics,
    }}))
}

/// The commit file: its `commitInfo`, the partition state, the removes and the adds, a line each.
fn entry(
    target: &Target<'_>,
    info: &Value,
    txns: &[deltalake::kernel::Transaction],
    removes: &[Remove],
    adds: &[Add],
) -> Result<bytes::Bytes> {
    let actions = txns
        .iter()
        .cloned()
        .map(Action::Txn)
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
/// writer checks the winning commit: one that touches the partition, changes the metadata or the
/// protocol, or records one of `txns` is a conflict (the run is made again); another is applied to
/// `list` and the next version tried. Returns the version committed.
async fn put(
    target: &Target<'_>,
    list: &mut FileList,
    bytes: bytes::Bytes,
    (column, value): (&str, &str),
    txns: &[deltalake::kernel::Transaction],
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
                    Ok(None) => return Err(super::commit::changed_meanwhile(target, "a commit could not be read")),
                    Err(e) => return Err(write_error(target, e)),
                };
                if let Some(why) = conflict(&winner, (column, value), txns) {
                    return Err(super::commit::changed_meanwhile(target, &format!("version {version} {why}")));
                }
                if list.apply(version, &winner).is_err() {
                    return Err(super::commit::changed_meanwhile(
                        target,
                        &format!("version {version} changed the table"),
                    ));
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

/// Why a winning commit (`bytes`) conflicts with this write of the partition `column = value`
/// recording `txns`, if it does: Delta's conflicts for a partition overwrite — data files added
/// or removed in the partition it read (or in no partition), a metadata or protocol change, or
/// the same application transaction.
fn conflict(
    bytes: &[u8],
    (column, value): (&str, &str),
    txns: &[deltalake::kernel::Transaction],
) -> Option<&'static str> {
    for action in state::actions(bytes) {
        if action.get("metaData").is_some() || action.get("protocol").is_some() {
            return Some("changed the table's metadata or protocol");
        }
        if crate::files::touches(&action, column, value) {
            return Some("wrote the same partition");
        }
        if let Some(id) = action.pointer("/txn/appId").and_then(Value::as_str)
            && txns.iter().any(|t| t.app_id == id)
        {
            return Some("recorded the same partition's state");
        }
    }
    None
}
