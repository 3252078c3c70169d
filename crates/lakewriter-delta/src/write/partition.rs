//! A partition overwrite committed over lakewriter's file list ([`crate::files`]): delta-rs's
//! writer writes the data files, and the commit — the partition's live files removed, the new ones
//! added, the partition state, lakewriter's `commitInfo` — is put as the next log entry by the
//! table's log store (a put-if-absent, [`own`]), with Delta's conflict check against every commit
//! that won a version since the run read the table. Nothing loads, replays or updates delta-rs's
//! snapshot, and nothing lists the log.
//!
//! It applies where the write replaces one value of a `DATE` partition column of an existing
//! table, adds no column, and the table asks for nothing lakewriter's own checks do not do (see
//! [`FileList::guarded`]); every other write goes through delta-rs's own (`replace_where`).

use std::sync::Arc;

use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{Column, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::execution::SessionState;
use datafusion::logical_expr::{BinaryExpr, LogicalPlan, LogicalPlanBuilder, Operator, cast};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::prelude::Expr;
use futures::TryStreamExt;
use lakewriter_core::Phase;
use serde_json::json;

use super::commit::{finish, write_error};
use super::files_exec::{WriteFilesExec, Written};
use super::{Committed, Spread, Target, own};
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
    let Written { adds, rows, writers, tasks } = match write_files(session, target, plan, &list).await {
        Ok(written) => written,
        Err(error) => return finish(target, Some(read_version), Err(error)).await,
    };
    if adds.iter().any(|add| !crate::files::in_partition(&add.partition_values, column, value)) {
        // Rows outside the partition: their files belong to no commit (VACUUM removes them).
        let (table, partition) = (target.name.to_owned(), target.metadata.partition.clone());
        return Err(Error::Invalid { table, partition, not_null: Vec::new() });
    }
    let removes = list.removes(column, value, chrono::Utc::now().timestamp_millis());
    let metrics = json!({
        "num_added_files": adds.len(),
        "num_removed_files": removes.len(),
        "num_added_rows": rows,
        "execution_time_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    let parameters = json!({
        "mode": "Overwrite",
        "partitionBy": serde_json::to_string(&list.shape.partition_columns).unwrap_or_default(),
        "predicate": format!("{column} = '{value}'::date"),
    });
    let conflict = |winner: &[u8]| conflict(winner, (column, value));
    let mut committed =
        own::commit(target, &list, ("WRITE", parameters), (&adds, &removes), &metrics, conflict, operation_id).await?;
    committed.spread = Some(Spread { writers: writers.len(), tasks, files: adds.len() });
    Ok(committed)
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
) -> Result<Written> {
    let plan_err = |source| write_error(target, own::failed(source));
    let required = nullability::required(Some(&list.shape.schema), target.not_null);
    let plan = nullability::as_written(plan, &required, false).map_err(plan_err)?;
    let plan = as_table(plan, &list.shape).map_err(plan_err)?;
    let physical = session.create_physical_plan(&plan).await.map_err(plan_err)?;
    let write = Arc::new(WriteFilesExec::new(own::file_spec(list), Arc::new(CoalescePartitionsExec::new(physical))));
    let context = session.task_ctx();
    // In a task of its own: the query and the encoding are CPU work, and the partitions of a
    // backfill in flight are polled by one task.
    let written = SpawnedTask::spawn(async move {
        let batches: Vec<_> = lakewriter_compute::engine::execute(write, context)?.try_collect().await?;
        Written::read(&batches)
    })
    .join_unwind()
    .await;
    written.map_err(|e| plan_err(DataFusionError::External(e.into())))?.map_err(|e| write_error(target, delta_error(e)))
}

/// The writer's own error where a write of files failed on one (see [`WriteFilesExec`]), else the
/// query's.
fn delta_error(error: DataFusionError) -> deltalake::DeltaTableError {
    match error {
        DataFusionError::External(source) => match source.downcast::<deltalake::DeltaTableError>() {
            Ok(delta) => *delta,
            // Another's error (an engine's, say) in its own words.
            Err(other) => deltalake::DeltaTableError::Generic(other.to_string()),
        },
        other => own::failed(other),
    }
}

/// `plan`'s columns as the table's, by name, in its [layout](own::layout), each cast to the
/// table's type where it differs (a `Utf8View` to `string`'s `Utf8`, say).
fn as_table(plan: LogicalPlan, shape: &Shape) -> datafusion::error::Result<LogicalPlan> {
    let layout = own::layout(shape);
    let mut columns = Vec::with_capacity(layout.fields().len());
    for field in layout.fields() {
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

/// Why a winning commit (`bytes`) conflicts with this write of the partition `column = value`, if
/// it does: Delta's conflicts for a partition overwrite — data files added or removed in the
/// partition it read (or in no partition), or a metadata or protocol change. (A commit recording
/// the same partition state conflicts too: see [`own::commit`].)
fn conflict(bytes: &[u8], (column, value): (&str, &str)) -> Option<&'static str> {
    for action in state::actions(bytes) {
        if action.get("metaData").is_some() || action.get("protocol").is_some() {
            return Some("changed the table's metadata or protocol");
        }
        if crate::files::touches(&action, column, value) {
            return Some("wrote the same partition");
        }
    }
    None
}
