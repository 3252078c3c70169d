//! Write strategies. Each one is a single Delta commit, or nothing: delta-rs writes the data
//! files first and commits the log entry last, so a failure at any earlier step leaves the table
//! as it was (unreferenced files, at worst, for `VACUUM`).

use std::path::PathBuf;
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::common::{Column, ScalarValue, TableReference};
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, Expr, col, lit};
use deltalake::kernel::transaction::CommitProperties;
use deltalake::operations::write::{SchemaMode, WriteBuilder};
use deltalake::protocol::SaveMode;
use deltalake::{DeltaTable, DeltaTableError};
use lakewriter_core::days_since_epoch;
use lakewriter_storage::Location;
use serde::Serialize;

use crate::{Error, Result, state, table};

/// How often a commit that lost the race for a log version is retried. A retry re-checks Delta's
/// conflict rules against the commits that won (writes to other partitions do not conflict) and
/// costs one small log read, so the bound is generous: with N writers, a commit can lose up to
/// N - 1 times in a row.
const COMMIT_RETRIES: usize = 1_000;

/// What lakewriter records in the `commitInfo` of every commit it makes, under the key
/// `lakewriter`. delta-rs adds `operationMetrics` (rows and files added and removed) beside it.
#[derive(Debug, Clone, Serialize)]
pub struct CommitMetadata {
    pub job: String,
    /// The logical partition, e.g. `dt=2026-09-30`, or `all`.
    pub partition: String,
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
    /// An `append --force`: rows appended again on purpose.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
}

impl CommitMetadata {
    /// Input lists longer than this are recorded by their fingerprint only.
    pub const MAX_LISTED_INPUTS: usize = 100;
}

/// The outcome of one committed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    pub version: u64,
    pub rows_written: u64,
    pub files_added: u64,
    pub files_removed: u64,
}

/// The table a strategy writes.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub location: &'a Location,
    /// The table's name, for messages.
    pub name: &'a str,
    /// The partition column of a table this write creates.
    pub partition_column: Option<&'a str>,
    pub metadata: &'a CommitMetadata,
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

/// `column = date`, the replaceWhere predicate of a date partition.
#[must_use]
pub fn partition_predicate(column: &str, date: NaiveDate) -> Expr {
    col(column).eq(lit(ScalarValue::Date32(Some(days_since_epoch(date)))))
}

/// The commit's metadata and the partition state it records (see [`crate::state`]).
fn properties(metadata: &CommitMetadata, location: &Location) -> Result<CommitProperties> {
    let info =
        serde_json::to_value(metadata).map_err(|e| Error::Read { url: location.url().clone(), source: e.into() })?;
    let props =
        CommitProperties::default().with_metadata([("lakewriter".to_owned(), info)]).with_max_retries(COMMIT_RETRIES);
    Ok(state::transactions(metadata, chrono::Utc::now())
        .into_iter()
        .fold(props, CommitProperties::with_application_transaction))
}

/// Refuses a result whose columns differ from the table's.
fn check_schema(table: &DeltaTable, result: &datafusion::arrow::datatypes::Schema, name: &str) -> Result<()> {
    if let Ok(state) = table.snapshot() {
        let differences = crate::schema::differences(&state.snapshot().arrow_schema(), result);
        if !differences.is_empty() {
            return Err(Error::SchemaMismatch { table: name.to_owned(), differences });
        }
    }
    Ok(())
}

fn builder(table: DeltaTable, session: &SessionState, plan: LogicalPlan, target: &Target<'_>) -> WriteBuilder {
    let builder = table.write(Vec::new()).with_input_plan(plan).with_session_state(Arc::new(session.clone()));
    match target.partition_column {
        Some(column) => builder.with_partition_columns([column]),
        None => builder,
    }
}

/// Runs `write` on the table at `target`, classifying its failure; a failed first write removes
/// the local folder it created, so nothing that could pass for a dataset is left behind.
async fn attempt<F, Fut>(target: &Target<'_>, write: F) -> Result<DeltaTable>
where
    F: FnOnce(DeltaTable) -> Fut,
    Fut: std::future::IntoFuture<Output = Result<DeltaTable>>,
{
    let (table, created_dir): (DeltaTable, Option<PathBuf>) = table::open_for_write(target.location).await?;
    let result = write(table).await;
    if result.is_err()
        && let Some(dir) = created_dir
        && !dir.join("_delta_log").exists()
    {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn write_error(target: &Target<'_>, slice: &str, source: DeltaTableError) -> Error {
    use deltalake::kernel::transaction::{CommitConflictError as C, TransactionError};
    let table = target.name.to_owned();
    let conflict = match &source {
        DeltaTableError::Transaction { source: TransactionError::CommitConflict(c) } => {
            // The table changed under this write in a way its plan depends on, or another writer
            // created the table first (protocol and metadata of version 0): run the write again.
            matches!(
                c,
                C::ConcurrentAppend
                    | C::ConcurrentDeleteRead
                    | C::ConcurrentDeleteDelete
                    | C::ConcurrentTransaction
                    | C::MetadataChanged
                    | C::ProtocolChanged(_)
            )
        }
        // Lost the race for a log version with retries off (the first write of a keyed table).
        DeltaTableError::VersionAlreadyExists(_)
        | DeltaTableError::Transaction { source: TransactionError::MaxCommitAttempts(_) } => true,
        _ => false,
    };
    if conflict {
        Error::Conflict { table, partition: target.metadata.partition.clone(), source: Box::new(source) }
    } else if source.to_string().contains("failed validation") {
        Error::OutsideSlice { table, slice: slice.to_owned(), source: Box::new(source) }
    } else {
        Error::Write { table, partition: target.metadata.partition.clone(), source: Box::new(source) }
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
    let props = properties(target.metadata, target.location)?;
    let table = attempt(&target, |table| async {
        check_schema(&table, plan.schema().as_arrow(), target.name)?;
        builder(table, session, plan, &target)
            .with_save_mode(SaveMode::Overwrite)
            .with_replace_where(predicate)
            .with_commit_properties(props)
            .await
            .map_err(|e| write_error(&target, slice, e))
    })
    .await?;
    committed(&table, target.name).await
}

/// Replaces the whole table — rows, schema and partitioning — with `plan`'s rows (`rebuild`).
pub async fn replace_all(session: &SessionState, target: Target<'_>, plan: LogicalPlan) -> Result<Committed> {
    let props = properties(target.metadata, target.location)?;
    let table = attempt(&target, |table| async {
        builder(table, session, plan, &target)
            .with_save_mode(SaveMode::Overwrite)
            .with_schema_mode(SchemaMode::Overwrite)
            .with_commit_properties(props)
            .await
            .map_err(|e| write_error(&target, "the table", e))
    })
    .await?;
    committed(&table, target.name).await
}

/// Appends `plan`'s rows once per (job, partition): a second call appends nothing, unless `force`,
/// which appends again. The partition state every commit records (see [`crate::state`]) is what
/// marks a partition appended; it is read from the snapshot this append writes over, and
/// concurrent appends of one partition write the same application transaction, which Delta
/// refuses for all but one of them.
pub async fn append_once(
    session: &SessionState,
    target: Target<'_>,
    plan: LogicalPlan,
    force: bool,
) -> Result<AppendOutcome> {
    let props = properties(target.metadata, target.location)?;
    let marker = state::written_marker(&target.metadata.job, &target.metadata.partition);
    let mut already = None;
    let table = attempt(&target, |table| async {
        if let (Some(version), false) = (table.version(), force)
            && transaction_version(&table, &marker, target.location).await?.is_some()
        {
            already = Some(AppendOutcome::AlreadyCommitted { version });
            return Ok(table);
        }
        check_schema(&table, plan.schema().as_arrow(), target.name)?;
        builder(table, session, plan, &target)
            .with_save_mode(SaveMode::Append)
            .with_commit_properties(props)
            .await
            .map_err(|e| write_error(&target, "the table", e))
    })
    .await?;
    match already {
        Some(outcome) => Ok(outcome),
        None => Ok(AppendOutcome::Committed(committed(&table, target.name).await?)),
    }
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
/// table recorded. `read_version` is the version the run found nothing to change in; the commit
/// is made over it and not rebased, so any commit since then fails this one as a conflict and the
/// run is made again.
pub async fn record_state(target: Target<'_>, read_version: u64) -> Result<Committed> {
    use deltalake::kernel::transaction::CommitBuilder;
    use deltalake::protocol::DeltaOperation;
    let url = target.location.url();
    let open_err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let props = properties(target.metadata, target.location)?.with_max_retries(0);
    let mut table = table::open_existing(target.location).await?;
    if table.version() != Some(read_version) {
        table.load_version(read_version).await.map_err(open_err)?;
    }
    let snapshot = table.snapshot().map_err(open_err)?;
    let operation = DeltaOperation::Write { mode: SaveMode::Append, partition_by: None, predicate: None };
    let commit = CommitBuilder::from(props)
        .build(Some(snapshot), table.log_store(), operation)
        .await
        .map_err(|e| write_error(&target, "the table", e))?;
    Ok(Committed { version: commit.version(), rows_written: 0, files_added: 0, files_removed: 0 })
}

/// How a keyed source is merged.
#[derive(Debug, Clone, Copy)]
pub struct MergeSpec<'a> {
    pub key: &'a [String],
    /// `Some`: newer-wins upsert (`merge`). `None`: insert unknown keys only (`append_dedup`).
    pub newer_by: Option<&'a str>,
}

fn qualified(relation: &str, name: &str) -> Expr {
    Expr::Column(Column::new(Some(TableReference::bare(relation)), name))
}

/// Merges `source` (one row per key) into the table in one commit: rows of new keys are
/// inserted; with `newer_by`, an existing row is replaced by the source row only where the
/// source's `newer_by` is strictly greater. A table that does not exist yet is created with the
/// source's rows. The caller skips sources that change nothing (delta-rs would commit nothing).
pub async fn merge(
    session: &SessionState,
    target: Target<'_>,
    source: DataFrame,
    spec: MergeSpec<'_>,
) -> Result<Committed> {
    let props = properties(target.metadata, target.location)?;
    let columns: Vec<String> = source.schema().fields().iter().map(|f| f.name().clone()).collect();
    let table = attempt(&target, |table| async {
        check_schema(&table, source.schema().as_arrow(), target.name)?;
        if table.version().is_none() {
            // Creating the table with the source's rows is only right if nobody else created it
            // meanwhile: a create rebased over another one would be a blind append of keys that
            // may now exist. So this commit is not retried; a lost race re-runs the whole merge.
            let plan = source.logical_plan().clone();
            return builder(table, session, plan, &target)
                .with_save_mode(SaveMode::Append)
                .with_commit_properties(props.with_max_retries(0))
                .await
                .map_err(|e| write_error(&target, "the table", e));
        }
        let on = spec
            .key
            .iter()
            .map(|k| qualified("t", k).eq(qualified("s", k)))
            .reduce(Expr::and)
            .unwrap_or_else(|| lit(false));
        let err = |e| write_error(&target, "the table", e);
        let mut merge = table
            .merge(source, on)
            .with_source_alias("s")
            .with_target_alias("t")
            .with_session_state(Arc::new(session.clone()))
            .with_commit_properties(props);
        if let Some(newer_by) = spec.newer_by {
            merge = merge
                .when_matched_update(|update| {
                    let newer = qualified("s", newer_by).gt(qualified("t", newer_by));
                    columns
                        .iter()
                        .filter(|c| !spec.key.contains(c))
                        .fold(update.predicate(newer), |u, c| u.update(c.as_str(), qualified("s", c)))
                })
                .map_err(err)?;
        }
        let merge = merge
            .when_not_matched_insert(|insert| columns.iter().fold(insert, |i, c| i.set(c.as_str(), qualified("s", c))))
            .map_err(err)?;
        let (table, _metrics) = merge.await.map_err(err)?;
        Ok(table)
    })
    .await?;
    committed(&table, target.name).await
}

#[derive(serde::Deserialize, Default)]
struct OperationMetrics {
    #[serde(default, rename = "num_added_rows")]
    added_rows: u64,
    #[serde(default, rename = "num_added_files", alias = "num_target_files_added")]
    added_files: u64,
    #[serde(default, rename = "num_removed_files", alias = "num_target_files_removed")]
    removed_files: u64,
}

/// Reads back the metrics of the commit `table` was just advanced to. The commit file of that
/// exact version is read: with concurrent writers, "the latest commit" may be someone else's.
async fn committed(table: &DeltaTable, name: &str) -> Result<Committed> {
    let version = table.version().unwrap_or_default();
    let entry = table.log_store().read_commit_entry(version).await.map_err(|source| Error::CommitInfo {
        table: name.to_owned(),
        version,
        source: Box::new(source),
    })?;
    let metrics = entry
        .as_deref()
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .into_iter()
        .flat_map(str::lines)
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|mut action| {
            action.get_mut("commitInfo").and_then(|info| info.get_mut("operationMetrics")).map(serde_json::Value::take)
        })
        .and_then(|m| serde_json::from_value::<OperationMetrics>(m).ok())
        .unwrap_or_default();
    Ok(Committed {
        version,
        rows_written: metrics.added_rows,
        files_added: metrics.added_files,
        files_removed: metrics.removed_files,
    })
}
