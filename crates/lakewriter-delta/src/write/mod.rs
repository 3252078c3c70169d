//! Write strategies. Each one is a single Delta commit, or nothing: delta-rs writes the data
//! files first and commits the log entry last, so a failure at any earlier step leaves the table
//! as it was (unreferenced files, at worst, for `VACUUM`). How a commit is made, found and
//! classified is in `commit`; the keyed merge in `merge`.

mod added;
mod commit;
mod drop;
pub mod files_exec;
mod fixture;
mod merge;
mod own;
mod slice;
mod statement;

use std::sync::Arc;

use datafusion::common::Column;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, Expr};
use deltalake::DeltaTable;
use deltalake::delta_datafusion::DeltaColumn;
use deltalake::operations::write::{SchemaMode, WriteBuilder};
use deltalake::protocol::SaveMode;
use lakewriter_core::PartitionKey;
use lakewriter_storage::Location;
use serde::Serialize;

use crate::{Error, Result, nullability, state};
use commit::{Landed, attempt, attempt_or_skip, finish, properties_over, write_error};
use slice::Slice;

pub(crate) use commit::CommitMetrics;
pub use drop::drop_columns;
pub use fixture::{FixtureFiles, create_fixture};
pub use merge::{MergeSpec, RowCounts, Scanned, merge, merge_in_one_scan};
pub use statement::{Clause, MergeCounts, MergeStatement, append, delete, merge_clauses, update};

/// The column `name` of a merge's or an update's target, exactly as written: delta-rs's own
/// conversion of a `&str` parses it as SQL (`a.b` a qualified name, a space or a quote not one
/// name).
fn column(name: &str) -> DeltaColumn {
    DeltaColumn::from(Column::new_unqualified(name))
}

/// What lakewriter records in the `commitInfo` of every commit it makes, under the key
/// `lakewriter`. delta-rs adds `operationMetrics` (rows and files added and removed) beside it.
#[derive(Debug, Clone, Serialize)]
pub struct CommitMetadata {
    /// The job that wrote; empty for a statement run by `lakewriter sql`, whose commit records
    /// no partition state.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub job: String,
    /// The logical partition, e.g. `dt=2026-09-30`, or `all`.
    pub partition: PartitionKey,
    pub write: String,
    pub lakewriter_version: String,
    /// Hash of the job's SQL text.
    pub sql_hash: String,
    /// Hash of the normalized SQL and the write settings: what decides the output besides inputs.
    pub code_fingerprint: String,
    /// Hash of the input files the plan read (path, size, modification time, e-tag).
    pub input_fingerprint: String,
    /// The input files themselves, where there are few (at most [`CommitMetadata::MAX_LISTED_INPUTS`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<lakewriter_core::InputFile>>,
    /// Identifies the run (and its retries) in logs and reports.
    pub run_id: String,
    /// When that run started (its first attempt), in milliseconds since the epoch: with the
    /// commit's `timestamp`, how long the run took from its start to its commit. `None` for a
    /// commit that is no job's run; commits made before it was recorded have none either.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    /// An `append --force`: rows appended again on purpose.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
    /// The job's checks on the result this commit writes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckRecord>,
    /// The table's columns the write writes as NULL because the job's result does not have them
    /// (recorded in the partition's state: see [`crate::state`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unwritten: Vec<String>,
}

/// A check's outcome as a commit records it.
#[derive(Debug, Clone, Serialize)]
pub struct CheckRecord {
    pub name: String,
    pub passed: bool,
    pub failing_rows: u64,
    pub severity: lakewriter_core::CheckSeverity,
}

impl From<&lakewriter_core::CheckOutcome> for CheckRecord {
    fn from(outcome: &lakewriter_core::CheckOutcome) -> Self {
        Self {
            name: outcome.name.clone(),
            passed: outcome.passed,
            failing_rows: outcome.failing_rows,
            severity: outcome.severity,
        }
    }
}

impl CommitMetadata {
    /// Input lists longer than this are recorded by their fingerprint only.
    pub const MAX_LISTED_INPUTS: usize = 100;
}

/// The outcome of one committed write. The rows and file counts come from the `operationMetrics`
/// in the commit, the bytes from the sizes of its `add` and `remove` actions (for a merge, the
/// removed files are the ones it rewrote); all are `None` where that commit could not be read back
/// after it landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    pub version: u64,
    pub rows_written: Option<u64>,
    pub files_added: Option<u64>,
    pub files_removed: Option<u64>,
    pub bytes_added: Option<u64>,
    pub bytes_removed: Option<u64>,
    /// How the data files were written, where lakewriter's own write wrote them (see
    /// [`files_exec`]).
    pub spread: Option<Spread>,
}

/// How a write's data files were written: by how many writers (processes), in how many tasks,
/// how many files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spread {
    pub writers: usize,
    pub tasks: usize,
    pub files: usize,
}

/// The table a strategy writes.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub location: &'a Location,
    /// The table's name, for messages.
    pub name: &'a str,
    /// The partition columns of a table this write creates (a rebuild: of the table it leaves).
    pub partition_columns: &'a [String],
    /// The columns the job declares NOT NULL (`not_null`): NOT NULL in a table this write creates,
    /// every other column nullable; a NULL in one fails the write, naming it.
    pub not_null: &'a [String],
    pub metadata: &'a CommitMetadata,
    /// The table version the run read before it planned (see [`crate::state::latest_version`]);
    /// `None` where there was no table. The write reads the table as of this version and commits
    /// over it: Delta's conflict checks then cover every commit made since the run read its
    /// inputs — a concurrent writer of the same partition, which may have read newer raw files,
    /// fails this commit as a conflict instead of being overwritten by an older result. A table
    /// created since a run read none is such a commit too.
    pub read_version: Option<u64>,
    /// The tables this command's writes loaded before: a write brings one forward instead of
    /// reading the table's log again.
    pub loaded: &'a crate::table::LoadedTables,
    /// The write adds the result's columns the table lacks (`on_schema_change`; the result was
    /// laid out by [`crate::schema::lay_out`]): at the end of the schema, nullable, in the
    /// commit of its rows. Otherwise a column the table lacks fails the write.
    pub adds_columns: bool,
}

/// The outcome of an `append` that may have been committed before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendOutcome {
    Committed(Committed),
    /// This (job, partition) was appended before; the table is at `version`.
    AlreadyCommitted {
        version: u64,
    },
}

/// Refuses a result whose columns differ from the table's, but for the columns it adds where
/// `target` [adds columns](Target::adds_columns). Returns whether it adds any.
fn check_schema(
    table: &DeltaTable,
    result: &datafusion::arrow::datatypes::Schema,
    target: &Target<'_>,
) -> Result<bool> {
    let Ok(state) = table.snapshot() else { return Ok(false) };
    check_columns(&state.snapshot().arrow_schema(), result, target)
}

/// [`check_schema`] against the table's columns `table`.
fn check_columns(
    table: &datafusion::arrow::datatypes::Schema,
    result: &datafusion::arrow::datatypes::Schema,
    target: &Target<'_>,
) -> Result<bool> {
    let (added, refused): (Vec<_>, Vec<_>) = crate::schema::column_differences(table, result)
        .into_iter()
        .partition(|d| target.adds_columns && matches!(d, crate::schema::Difference::Extra { .. }));
    if !refused.is_empty() {
        let differences = refused.iter().map(ToString::to_string).collect();
        return Err(Error::SchemaMismatch { table: target.name.to_owned(), differences });
    }
    Ok(!added.is_empty())
}

/// `builder` with the schema mode of a write that adds columns (`adds`): Delta's schema merge,
/// which appends them to the table's schema, nullable, in the write's commit.
fn evolving(builder: WriteBuilder, adds: bool) -> WriteBuilder {
    if adds { builder.with_schema_mode(SchemaMode::Merge) } else { builder }
}

/// The number of columns of `plan`'s rows.
fn width(plan: &LogicalPlan) -> usize {
    plan.schema().fields().len()
}

/// delta-rs's write of `plan` into `table`, with the nullability of [`nullability::as_written`]:
/// a table it creates — or whose schema it replaces (`replaces_schema`) — nullable but for the
/// job's `not_null` columns.
fn builder(
    table: DeltaTable,
    session: &SessionState,
    plan: LogicalPlan,
    target: &Target<'_>,
    replaces_schema: bool,
) -> Result<WriteBuilder> {
    let creates = replaces_schema || table.version().is_none();
    let plan = nullability::as_written(plan, target.not_null, creates)
        .map_err(|source| Error::Plan { table: target.name.to_owned(), source: Box::new(source) })?;
    let builder = table.write(Vec::new()).with_input_plan(plan).with_session_state(Arc::new(session.clone()));
    Ok(if target.partition_columns.is_empty() {
        builder
    } else {
        builder.with_partition_columns(target.partition_columns)
    })
}

/// A write that delta-rs's data checks refused ([`Error::Invalid`]) in the job's terms: the NULLs
/// in the columns that are NOT NULL in the table (the table at the version the write read, unless
/// it `replaces_schema`) or declared so, counted again from `plan` (on the failure path only);
/// where there is no plan to count in, or no NULL there, the refusal names those columns. Any
/// other error is returned as it is.
async fn refused(
    session: &SessionState,
    target: &Target<'_>,
    plan: Option<LogicalPlan>,
    replaces_schema: bool,
    error: Error,
) -> Error {
    let Error::Invalid { table, partition, .. } = error else { return error };
    let shape = match target.loaded.shape(target.location, target.read_version).await {
        Ok(shape) => shape.filter(|_| !replaces_schema),
        Err(e) => {
            tracing::debug!(error = %e, "cannot read the table's NOT NULL columns");
            None
        }
    };
    let not_null = nullability::required(shape.as_ref().map(|s| s.schema.as_ref()), target.not_null);
    let nulls = match plan {
        Some(plan) => nullability::null_counts(session, plan, &not_null).await.unwrap_or_else(|e| {
            tracing::debug!(error = %e, "cannot count the NULLs in the NOT NULL columns");
            Vec::new()
        }),
        None => Vec::new(),
    };
    if nulls.is_empty() {
        Error::Invalid { table, partition, not_null }
    } else {
        Error::NullInNotNull { table, partition, nulls }
    }
}

/// Commits `plan`'s rows as the whole content of the slice `predicate` selects: one commit that
/// removes the rows matching `predicate` and adds the new ones (Delta replaceWhere). Used by
/// `overwrite_partition` (`partition = date`) and `delete_insert` (any predicate). The first write
/// creates the table. A row outside the slice, or a schema that differs from the table's, fails
/// the write before anything is committed; `slice` describes the slice in that error.
pub async fn replace_where(
    session: &SessionState,
    target: Target<'_>,
    plan: LogicalPlan,
    predicate: Expr,
    slice: &str,
) -> Result<Committed> {
    let (checked, check) = (plan.clone(), predicate.clone());
    let outcome = match own_partitions(session, &target, &plan, &predicate).await? {
        Some((over, partitions)) => slice::write(session, &target, plan, over, &Slice::Partitions(partitions)).await,
        None => {
            attempt(&target, Some(width(&plan)), |table, props| async {
                let adds = check_schema(&table, plan.schema().as_arrow(), &target)?;
                let plan = match table.snapshot() {
                    Ok(snapshot) => {
                        nullability::nullable_where_read(plan, &snapshot.snapshot().arrow_schema(), &predicate)
                            .map_err(|source| Error::Plan { table: target.name.to_owned(), source: Box::new(source) })?
                    }
                    Err(_) => plan,
                };
                evolving(builder(table, session, plan, &target, false)?, adds)
                    .with_save_mode(SaveMode::Overwrite)
                    .with_replace_where(predicate)
                    .with_commit_properties(props)
                    .await
                    .map_err(|e| write_error(&target, e))
            })
            .await
        }
    };
    let error = match outcome {
        Err(error) => refused(session, &target, Some(checked.clone()), false, error).await,
        committed => return committed,
    };
    let Error::Invalid { table, partition, not_null } = error else { return Err(error) };
    Err(match rows_outside(session, checked, check).await {
        Ok(0) => Error::Invalid { table, partition, not_null },
        Ok(rows) => Error::OutsideSlice { table, rows, slice: slice.to_owned() },
        Err(e) => {
            tracing::debug!(error = %e, "cannot count the rows outside the slice");
            Error::Invalid { table, partition, not_null }
        }
    })
}

/// The file list of the table `target` names as of the version the run read, where lakewriter's
/// own write ([`slice::write`]) writes it: an existing table whose protocol lakewriter writes and
/// which asks for no check of delta-rs's. `None` for any other, which delta-rs's write makes.
async fn own_list(target: &Target<'_>) -> Result<Option<Arc<crate::files::FileList>>> {
    let Some(read_version) = target.read_version else { return Ok(None) };
    let list = target.loaded.list_at(target.location, read_version).await?;
    Ok((!list.guarded && list.unsupported.is_empty()).then_some(list))
}

/// The new table lakewriter's own write creates for `plan`'s rows where the run found none
/// ([`slice::NewTable`]).
async fn own_new_table(target: &Target<'_>, plan: &LogicalPlan) -> Result<Option<slice::NewTable>> {
    if target.read_version.is_some() {
        return Ok(None);
    }
    let written = nullability::as_written(plan.clone(), target.not_null, true)
        .map_err(|source| Error::Plan { table: target.name.to_owned(), source: Box::new(source) })?;
    slice::NewTable::of(target, written.schema().as_arrow()).await
}

/// The table and the partitions of a replaceWhere lakewriter writes itself: a `predicate` over
/// partition columns ([`slice::Partitions`]) of a table it creates ([`own_new_table`]) or of an
/// existing one ([`own_list`]) into which the result adds no column.
async fn own_partitions(
    session: &SessionState,
    target: &Target<'_>,
    plan: &LogicalPlan,
    predicate: &Expr,
) -> Result<Option<(slice::Over, slice::Partitions)>> {
    if let Some(new) = own_new_table(target, plan).await? {
        return Ok(slice::Partitions::of(session, predicate, new.shape()).map(|p| (slice::Over::New(new), p)));
    }
    let Some(list) = own_list(target).await? else { return Ok(None) };
    let Some(partitions) = slice::Partitions::of(session, predicate, &list.shape) else { return Ok(None) };
    if check_columns(&list.shape.schema, plan.schema().as_arrow(), target)? {
        return Ok(None);
    }
    Ok(Some((slice::Over::Table(list), partitions)))
}

/// Rows of `plan` that `predicate` does not select (false or NULL): what tells a row outside a
/// replaceWhere slice from another row the table refuses, which delta-rs reports alike. Computed
/// again, on the failure path only.
async fn rows_outside(session: &SessionState, plan: LogicalPlan, predicate: Expr) -> datafusion::error::Result<usize> {
    let outside = datafusion::prelude::not(predicate.clone()).or(predicate.is_null());
    DataFrame::new(session.clone(), plan).filter(outside)?.count().await
}

/// Replaces the whole table — rows, schema and partitioning — with `plan`'s rows (`rebuild`).
///
/// The commit is never rebased: a write without a predicate reads no file Delta's conflict checks
/// look at, so delta-rs would rebase it over a compaction made since `target.read_version` and
/// leave the compacted file, rows the rebuild replaces, beside its own. Any commit since is a
/// conflict, and the run is made again (a rebuild's table has no other writer to lose to).
pub async fn replace_all(session: &SessionState, target: Target<'_>, plan: LogicalPlan) -> Result<Committed> {
    let checked = plan.clone();
    let outcome = match own_rebuild(&target, &plan).await? {
        Some(over) => slice::write(session, &target, plan, over, &Slice::Table).await,
        None => {
            attempt(&target, Some(width(&plan)), |table, props| async {
                builder(table, session, plan, &target, true)?
                    .with_save_mode(SaveMode::Overwrite)
                    .with_schema_mode(SchemaMode::Overwrite)
                    .with_commit_properties(props.with_max_retries(0))
                    .await
                    .map_err(|e| write_error(&target, e))
            })
            .await
        }
    };
    match outcome {
        Err(error) => Err(refused(session, &target, Some(checked), true, error).await),
        committed => committed,
    }
}

/// The table of a rebuild lakewriter writes itself: one it creates ([`own_new_table`]), or an
/// existing one ([`own_list`]) whose columns it leaves as they are — the same names in the same
/// order, each stored as before, NOT NULL where the job declares it and only there — and whose
/// partition columns it keeps.
async fn own_rebuild(target: &Target<'_>, plan: &LogicalPlan) -> Result<Option<slice::Over>> {
    if let Some(new) = own_new_table(target, plan).await? {
        return Ok(Some(slice::Over::New(new)));
    }
    let Some(list) = own_list(target).await? else { return Ok(None) };
    let (table, result) = (&list.shape.schema, plan.schema().as_arrow());
    let same = list.shape.partition_columns == target.partition_columns
        && table.fields().len() == result.fields().len()
        && table
            .fields()
            .iter()
            .zip(result.fields())
            .all(|(t, r)| t.name() == r.name() && t.is_nullable() != target.not_null.contains(t.name()))
        && crate::schema::column_differences(table, result).is_empty();
    Ok(same.then_some(slice::Over::Table(list)))
}

/// Appends `plan`'s rows once per (job, partition): a second call appends nothing, unless `force`,
/// which appends again. The partition state every commit records (see [`crate::state`]) is what
/// marks a partition appended, under any name of its day (see `PartitionKey`); it is read from the
/// log as it is before the write, and for delta-rs's write (where a column is added or the table
/// is guarded) again from the snapshot the write goes over. Concurrent appends of one partition
/// write the same application transaction, which Delta refuses for all but one of them.
pub async fn append_once(
    session: &SessionState,
    target: Target<'_>,
    plan: LogicalPlan,
    force: bool,
) -> Result<AppendOutcome> {
    let over = if let Some(new) = own_new_table(&target, &plan).await? {
        slice::Over::New(new)
    } else if let Some(list) = own_list(&target).await? {
        if !force && let Some(version) = appended(&target).await? {
            return Ok(AppendOutcome::AlreadyCommitted { version });
        }
        if check_columns(&list.shape.schema, plan.schema().as_arrow(), &target)? {
            return append_with_delta_rs(session, target, plan, force).await;
        }
        slice::Over::Table(list)
    } else {
        if !force && let Some(version) = appended(&target).await? {
            return Ok(AppendOutcome::AlreadyCommitted { version });
        }
        return append_with_delta_rs(session, target, plan, force).await;
    };
    let checked = plan.clone();
    match slice::write(session, &target, plan, over, &Slice::Nothing).await {
        Ok(committed) => Ok(AppendOutcome::Committed(committed)),
        Err(error) => Err(refused(session, &target, Some(checked), false, error).await),
    }
}

/// [`append_once`] by delta-rs's write, once [`appended`] found the partition not appended (under
/// any name of its day, see `PartitionKey`): the snapshot each attempt writes over is asked again,
/// for this run's name of it, since a concurrent append commits under that name.
async fn append_with_delta_rs(
    session: &SessionState,
    target: Target<'_>,
    plan: LogicalPlan,
    force: bool,
) -> Result<AppendOutcome> {
    let checked = plan.clone();
    let marker = state::written_marker(&target.metadata.job, &target.metadata.partition);
    let mut already = None;
    let committed = attempt_or_skip(&target, Some(width(&plan)), |table, props| async {
        if let (Some(version), false) = (table.version(), force)
            && transaction_version(&table, &marker, target.location).await?.is_some()
        {
            already = Some(AppendOutcome::AlreadyCommitted { version });
            return Ok(None);
        }
        let adds = check_schema(&table, plan.schema().as_arrow(), &target)?;
        evolving(builder(table, session, plan, &target, false)?, adds)
            .with_save_mode(SaveMode::Append)
            .with_commit_properties(props)
            .await
            .map(Some)
            .map_err(|e| write_error(&target, e))
    })
    .await;
    match (already, committed) {
        (Some(outcome), _) => Ok(outcome),
        (None, Err(error)) => Err(refused(session, &target, Some(checked), false, error).await),
        (None, Ok(committed)) => Ok(AppendOutcome::Committed(committed.expect("an append not skipped has committed"))),
    }
}

/// The table's version where its partition state records `target`'s partition written: an append
/// made before, by a run this one did not see (one that committed after this run read the state).
/// Read from the log as it is now; a commit that wins a version after this read is checked by
/// the commit itself (see [`own::commit`]).
async fn appended(target: &Target<'_>) -> Result<Option<u64>> {
    let state = state::read(target.location, &target.metadata.job, state::LogScope::FromLastCheckpoint).await?;
    Ok(state.filter(|s| s.partitions.contains_key(&target.metadata.partition)).map(|s| s.version))
}

async fn transaction_version(table: &DeltaTable, app_id: &str, location: &Location) -> Result<Option<i64>> {
    let url = location.url();
    let state = table.snapshot().map_err(|source| Error::Open { url: url.clone(), source: Box::new(source) })?;
    state
        .transaction_version(table.log_store().as_ref(), app_id)
        .await
        .map_err(|source| Error::Open { url: url.clone(), source: Box::new(source) })
}

/// Records the partition state of `target.metadata` in a commit without data: for a run whose
/// write changes no row (a `merge` with nothing new) but whose code or inputs differ from what the
/// table recorded. The commit is made over `target.read_version`, the version the run found
/// nothing to change in, and not rebased, so any commit since then fails this one as a conflict
/// and the run is made again. A result with columns the table lacks, where the target
/// [adds columns](Target::adds_columns), adds them in this commit (a metadata action).
///
/// Where the table asks for nothing lakewriter's own commits do not check and the result adds no
/// column, the commit is lakewriter's own over the kept file list ([`own::commit`]), without
/// loading delta-rs's snapshot.
pub async fn record_state(target: Target<'_>, result: &datafusion::arrow::datatypes::Schema) -> Result<Committed> {
    let url = target.location.url();
    let open_err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let Some(read_version) = target.read_version else { return Err(Error::NotATable { url: url.clone() }) };
    let list = target.loaded.list_at(target.location, read_version).await?;
    if !list.guarded && list.unsupported.is_empty() && !check_columns(&list.shape.schema, result, &target)? {
        let never_rebased = |_: &[u8]| Some("committed first (a commit of the partition state alone is never rebased)");
        let operation = ("WRITE", serde_json::json!({ "mode": "Append" }));
        let metrics = serde_json::json!({});
        return own::commit(&target, &list, operation, (&[], &[]), &metrics, never_rebased, uuid::Uuid::new_v4()).await;
    }
    let (table, _) = target.loaded.table_at(target.location, read_version).await?;
    crate::protocol::check(&table, target.name)?;
    let adds = check_schema(&table, result, &target)?;
    let props = properties_over(&target, Some(&table), Some(result.fields().len())).await?.with_max_retries(0);
    let snapshot = table.snapshot().map_err(open_err)?;
    let actions = if adds { vec![added_columns(snapshot, result, target.name)?] } else { Vec::new() };
    commit_actions(&target, table, read_version, props, actions).await
}

/// Commits `actions` (no data files) over `table` at `read_version` with `props`, then
/// [`finish`]es: a commit of the partition state alone, or of a schema change.
async fn commit_actions(
    target: &Target<'_>,
    mut table: DeltaTable,
    read_version: u64,
    props: deltalake::kernel::transaction::CommitProperties,
    actions: Vec<deltalake::kernel::Action>,
) -> Result<Committed> {
    use deltalake::kernel::transaction::CommitBuilder;
    use deltalake::protocol::DeltaOperation;
    let url = target.location.url();
    let open_err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let snapshot = table.snapshot().map_err(open_err)?;
    let operation = DeltaOperation::Write { mode: SaveMode::Append, partition_by: None, predicate: None };
    let commit = CommitBuilder::from(props).with_actions(actions);
    let outcome = match commit.build(Some(snapshot), table.log_store(), operation).await {
        Ok(commit) => table.load_version(commit.version()).await.map(|()| Landed::Table(table)).map_err(open_err),
        Err(e) => Err(write_error(target, e)),
    };
    finish(target, Some(read_version), outcome).await
}

/// The metadata action that adds `result`'s columns the table of `snapshot` lacks at the end of
/// its schema, nullable (as Delta's schema merge adds them); the table's id, name and settings
/// stay.
fn added_columns(
    snapshot: &deltalake::table::state::DeltaTableState,
    result: &datafusion::arrow::datatypes::Schema,
    name: &str,
) -> Result<deltalake::kernel::Action> {
    let table = snapshot.snapshot().arrow_schema();
    let mut fields: Vec<_> = table.fields().iter().cloned().collect();
    for field in result.fields().iter().filter(|f| table.field_with_name(f.name()).is_err()) {
        fields.push(Arc::new(field.as_ref().clone().with_nullable(true)));
    }
    metadata_with(snapshot, fields, name)
}

/// The metadata action that gives the table of `snapshot` the columns `fields`; its id, name and
/// settings stay.
fn metadata_with(
    snapshot: &deltalake::table::state::DeltaTableState,
    fields: Vec<datafusion::arrow::datatypes::FieldRef>,
    name: &str,
) -> Result<deltalake::kernel::Action> {
    use deltalake::kernel::MetadataExt;
    use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
    let invalid = |e: String| Error::SchemaMismatch { table: name.to_owned(), differences: vec![e] };
    let schema: deltalake::kernel::StructType =
        (&datafusion::arrow::datatypes::Schema::new(fields)).try_into_kernel().map_err(|e| invalid(e.to_string()))?;
    let metadata = snapshot.metadata().clone().with_schema(&schema).map_err(|e| invalid(e.to_string()))?;
    Ok(deltalake::kernel::Action::Metadata(metadata))
}

#[cfg(test)]
mod tests;
