//! lakewriter's own write of a table, existing or new: delta-rs's writer writes the data files — in the
//! tasks of the engine's executors where the run has one ([`WriteFilesExec`]) — and the commit —
//! the slice's live files removed, the new ones added, the partition state, lakewriter's
//! `commitInfo` — is put as the next log entry by the table's log store (a put-if-absent,
//! [`own`]), with Delta's conflict check against every commit that won a version since the run
//! read the table. Nothing loads, replays or updates delta-rs's snapshot, and nothing lists the
//! log (but an append, which reads the partition state from it: see `append_once`).
//!
//! The slice a write replaces is the files of the partitions a replaceWhere names (a predicate
//! over partition columns whose values the log records exactly: `DATE`, integers, booleans), every
//! file (a rebuild whose columns and partitioning stay), or none (an append). It applies where the
//! write adds no column and the table asks for nothing lakewriter's own checks do not do (see
//! [`FileList::guarded`]), and to a table's first write, whose commit creates it ([`NewTable`]);
//! every other write goes through delta-rs's own.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch, StringArray};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::Column;
use datafusion::common::DFSchema;
use datafusion::common::runtime::SpawnedTask;
use datafusion::error::DataFusionError;
use datafusion::execution::SessionState;
use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder, cast};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::prelude::Expr;
use deltalake::kernel::{Action, Remove};
use futures::TryStreamExt;
use lakewriter_core::Phase;
use serde_json::{Value, json};

use super::commit::{finish, write_error};
use super::files_exec::{WriteFilesExec, Written};
use super::own;
use super::target::Target;
use crate::files::{FileList, Shape};
use crate::state::{Committed, Spread};
use crate::{Error, Result, nullability, state};

/// The live files a write of lakewriter's own replaces.
pub(super) enum Slice {
    /// The files of the partitions a replaceWhere names; the write's rows must all be there.
    Partitions(Partitions),
    /// Every file: a rebuild.
    Table,
    /// None: an append.
    Nothing,
}

/// A replaceWhere predicate over partition columns, read against the partition values the log
/// records for each file: exactly, as the partition's rows would read it.
pub(super) struct Partitions {
    predicate: Expr,
    physical: Arc<dyn PhysicalExpr>,
    /// The partition columns it reads, nullable, each of the table's type.
    columns: SchemaRef,
}

impl Partitions {
    /// `predicate` as a predicate over the partition values of the table `shape` describes, where
    /// it reads partition columns only, each of a type whose values the log records exactly
    /// (`DATE`, integers, booleans: a string's empty value and NULL, say, are one in the log), and
    /// gives the same answer each time (no volatile function). It is planned by `session` as a
    /// query's filter is — its types coerced (`year = 2024` on an `INT` column), its constants
    /// folded (`current_date()`) — and tried once on NULLs: any predicate that cannot be read
    /// this way is delta-rs's write's.
    pub(super) fn of(session: &SessionState, predicate: &Expr, shape: &Shape) -> Option<Self> {
        let read = predicate.column_refs();
        if read.is_empty() || predicate.is_volatile() {
            return None;
        }
        let mut fields = Vec::new();
        for column in read {
            if column.relation.is_some() || !shape.partition_columns.contains(&column.name) {
                return None;
            }
            let field = shape.schema.field_with_name(&column.name).ok()?;
            let exact =
                matches!(field.data_type(), DataType::Date32 | DataType::Boolean) || field.data_type().is_integer();
            if !exact {
                return None;
            }
            fields.push(Field::new(column.name.clone(), field.data_type().clone(), true));
        }
        let columns = Arc::new(Schema::new(fields));
        let schema = DFSchema::try_from(columns.as_ref().clone()).ok()?;
        let physical = session.create_physical_expr(predicate.clone(), &schema).ok()?;
        let partitions = Self { predicate: predicate.clone(), physical, columns };
        partitions.hold(&[&HashMap::new()]).ok()?;
        Some(partitions)
    }

    /// Whether each of `files` (their partition values, as the log records them) is in the
    /// partitions: the predicate true of its values, each read as a reader reads it — an empty
    /// value or none as NULL.
    pub(super) fn hold(&self, files: &[&HashMap<String, Option<String>>]) -> datafusion::error::Result<Vec<bool>> {
        let mut arrays = Vec::with_capacity(self.columns.fields().len());
        for field in self.columns.fields() {
            let value = |values: &&HashMap<String, Option<String>>| {
                values.get(field.name()).and_then(|v| v.as_deref()).filter(|v| !v.is_empty()).map(str::to_owned)
            };
            let text: StringArray = files.iter().map(value).collect();
            let options = CastOptions { safe: false, ..Default::default() };
            arrays.push(cast_with_options(&text, field.data_type(), &options)?);
        }
        let batch = RecordBatch::try_new(self.columns.clone(), arrays)?;
        let result = self.physical.evaluate(&batch)?.into_array(files.len())?;
        let held =
            result.as_boolean_opt().ok_or_else(|| DataFusionError::Internal("a predicate not boolean".into()))?;
        Ok((0..files.len()).map(|i| held.is_valid(i) && held.value(i)).collect())
    }

    /// Whether a file with the partition values `values` (a commit's action's) may hold rows of
    /// the partitions: where it records no value of a column the predicate reads, or its values
    /// cannot be read, it may.
    pub(super) fn touched_by(&self, values: &HashMap<String, Option<String>>) -> bool {
        self.columns.fields().iter().any(|f| !values.contains_key(f.name()))
            || self.hold(&[values]).map_or(true, |held| held[0])
    }

    /// The predicate as SQL, as the commit records it.
    fn sql(&self) -> String {
        datafusion::sql::unparser::expr_to_sql(&self.predicate)
            .map_or_else(|_| self.predicate.to_string(), |e| e.to_string())
    }
}

impl Slice {
    /// The live files of `list` in the slice, as `remove` actions stamped `now` (milliseconds
    /// since the epoch), by path.
    fn removes(&self, list: &FileList, now: i64) -> datafusion::error::Result<Vec<Remove>> {
        let files: Vec<_> = list.files().collect();
        let chosen = match self {
            Self::Partitions(partitions) => {
                partitions.hold(&files.iter().map(|(_, live)| live.partition_values.as_ref()).collect::<Vec<_>>())?
            }
            Self::Table => vec![true; files.len()],
            Self::Nothing => vec![false; files.len()],
        };
        let mut removes: Vec<Remove> = files
            .iter()
            .zip(chosen)
            .filter(|(_, chosen)| *chosen)
            .map(|((path, live), _)| live.remove(path, now))
            .collect();
        removes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(removes)
    }

    /// Why a winning commit (`bytes`) conflicts with this write, if it does: Delta's conflicts —
    /// for a replaceWhere, data files added or removed in its partitions (or in no partition); for
    /// a rebuild, which is never rebased, any commit; for every write, a metadata or protocol
    /// change. (A commit recording the same partition state conflicts too: see [`own::commit`].)
    fn conflict(&self, bytes: &[u8]) -> Option<&'static str> {
        if matches!(self, Self::Table) {
            return Some("committed first (a rebuild is never rebased)");
        }
        for action in state::actions(bytes) {
            if action.get("metaData").is_some() || action.get("protocol").is_some() {
                return Some("changed the table's metadata or protocol");
            }
            let Self::Partitions(partitions) = self else { continue };
            for file in ["add", "remove", "cdc"].iter().filter_map(|kind| action.get(kind)) {
                let values = file.get("partitionValues").and_then(|v| serde_json::from_value(v.clone()).ok());
                let touches =
                    values.is_none_or(|values: HashMap<String, Option<String>>| partitions.touched_by(&values));
                if touches {
                    return Some("wrote the same partition");
                }
            }
        }
        None
    }

    /// The write's `operationParameters`, as delta-rs's write records them.
    fn parameters(&self, list: &FileList) -> Value {
        let partition_by = serde_json::to_string(&list.shape.partition_columns).unwrap_or_default();
        match self {
            Self::Partitions(partitions) => {
                json!({ "mode": "Overwrite", "partitionBy": partition_by, "predicate": partitions.sql() })
            }
            Self::Table => json!({ "mode": "Overwrite", "partitionBy": partition_by }),
            Self::Nothing => json!({ "mode": "Append", "partitionBy": partition_by }),
        }
    }
}

/// The table a write of lakewriter's own writes into.
pub(super) enum Over {
    /// An existing table, as the run read it.
    Table(Arc<FileList>),
    /// A table the write creates.
    New(NewTable),
}

/// A table lakewriter's own write creates: its file list (empty, at version 0, over the table's
/// log store) and the protocol and metadata actions that create it.
pub(super) struct NewTable {
    list: Arc<FileList>,
    creation: Vec<Action>,
}

impl NewTable {
    /// The table at `target.location` with the columns `schema` (a result as written, see
    /// [`nullability::as_written`]) and the target's partition columns, as delta-rs's write
    /// creates it — its `CreateBuilder`, run against an in-memory store, gives the protocol and
    /// metadata — where lakewriter's own commit writes it: a protocol of no table features.
    /// `None` for any other, which delta-rs's write creates (or refuses, saying why).
    pub(super) async fn of(target: &Target<'_>, schema: &Schema) -> Result<Option<Self>> {
        use deltalake::kernel::StructType;
        use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
        let Ok(columns) = TryIntoKernel::<StructType>::try_into_kernel(schema) else { return Ok(None) };
        let created = deltalake::operations::create::CreateBuilder::new()
            .with_location("memory:///")
            .with_columns(columns.fields().cloned())
            .with_partition_columns(target.partition_columns.to_vec())
            .await;
        let Ok(scratch) = created else { return Ok(None) };
        let open_err = |source| Error::Open { url: target.location.url().clone(), source: Box::new(source) };
        let snapshot = scratch.snapshot().map_err(open_err)?;
        let (protocol, metadata) = (snapshot.protocol().clone(), snapshot.metadata().clone());
        if protocol.min_reader_version() > 1 || protocol.min_writer_version() > 2 {
            return Ok(None);
        }
        let mut list = FileList::of(target.location, &scratch)?;
        if list.guarded || !list.unsupported.is_empty() {
            return Ok(None);
        }
        list.log_store = crate::table::unloaded(target.location)?.log_store();
        let creation = vec![Action::Protocol(protocol), Action::Metadata(metadata)];
        Ok(Some(Self { list: Arc::new(list), creation }))
    }

    pub(super) fn shape(&self) -> &Shape {
        &self.list.shape
    }
}

/// Writes `plan`'s rows into the table `over` names (an existing one at `target.read_version`, or
/// one it creates), replacing the `slice`, in one commit. A row outside a replaceWhere's
/// partitions, or a NULL in a NOT NULL column, fails the write with [`Error::Invalid`] before
/// anything is committed. A failed first write removes the local folders it made where they hold
/// no file, as delta-rs's does (see `commit::attempt`).
pub(super) async fn write(
    session: &SessionState,
    target: &Target<'_>,
    plan: LogicalPlan,
    over: Over,
    slice: &Slice,
) -> Result<Committed> {
    let (list, creation, created) = match over {
        Over::Table(list) => (list, None, None),
        Over::New(NewTable { list, creation }) => {
            // The table's folder, made here where it is local (a failure to make it said as such).
            let opened = crate::table::open_for_write(target.location, None, target.loaded).await?;
            if opened.table.version().is_some() {
                return Err(super::commit::changed_meanwhile(target, "another writer created the table"));
            }
            (list, Some(creation), opened.created)
        }
    };
    let written = write_over(session, target, plan, (list, creation), slice).await;
    if written.is_err()
        && let Some(dir) = created
    {
        super::commit::remove_empty_dirs(&dir);
    }
    written
}

/// [`write`] over `list`, with the actions that create its table where it is new.
async fn write_over(
    session: &SessionState,
    target: &Target<'_>,
    plan: LogicalPlan,
    (list, creation): (Arc<FileList>, Option<Vec<Action>>),
    slice: &Slice,
) -> Result<Committed> {
    let read_version = creation.is_none().then_some(list.version);
    crate::phase(Phase::Writing, target.name, &target.metadata.partition);
    let started = std::time::Instant::now();
    let operation_id = uuid::Uuid::new_v4();
    let Written { adds, rows, writers, tasks } = match write_files(session, target, plan, &list).await {
        Ok(written) => written,
        Err(error) => return finish(target, read_version, Err(error)).await,
    };
    let plan_err = |source| write_error(target, own::failed(source));
    if let Slice::Partitions(partitions) = slice {
        let held =
            partitions.hold(&adds.iter().map(|add| &add.partition_values).collect::<Vec<_>>()).map_err(plan_err)?;
        if held.contains(&false) {
            // Rows outside the partitions: their files belong to no commit (VACUUM removes them).
            let (table, partition) = (target.name.to_owned(), target.metadata.partition.clone());
            return Err(Error::Invalid { table, partition, not_null: Vec::new() });
        }
    }
    let removes = slice.removes(&list, chrono::Utc::now().timestamp_millis()).map_err(plan_err)?;
    let metrics = json!({
        "num_added_files": adds.len(),
        "num_removed_files": removes.len(),
        "num_added_rows": rows,
        "execution_time_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    let operation = ("WRITE", slice.parameters(&list));
    let conflict = |winner: &[u8]| slice.conflict(winner);
    let mut committed = if let Some(creation) = creation {
        own::create(target, &list, &creation, operation, &adds, &metrics, operation_id).await?
    } else {
        own::commit(target, &list, operation, (&adds, &removes), &metrics, conflict, operation_id).await?
    };
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
