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
use lakewriter_core::{PartitionKey, days_since_epoch};
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
    /// An `append --force`: rows appended again on purpose.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
}

impl CommitMetadata {
    /// Input lists longer than this are recorded by their fingerprint only.
    pub const MAX_LISTED_INPUTS: usize = 100;
}

/// The outcome of one committed write. The counts come from delta-rs's `operationMetrics` in the
/// commit; they are `None` where that commit could not be read back after it landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    pub version: u64,
    pub rows_written: Option<u64>,
    pub files_added: Option<u64>,
    pub files_removed: Option<u64>,
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
///
/// A commit that creates the table is never retried: delta-rs would commit a create that lost
/// the race for version 0 as the next version, whole, without a conflict check (a second copy of
/// its rows). Failing instead lets the runner run the partition again as a write into the table
/// the winner created. delta-rs's post-commit hooks are off: [`finish`] checkpoints and cleans up
/// the log itself, after the commit is known to have landed, so that a failure there never turns
/// a durable commit into a reported failure.
fn properties(metadata: &CommitMetadata, location: &Location, creating: bool) -> Result<CommitProperties> {
    let info =
        serde_json::to_value(metadata).map_err(|e| Error::Read { url: location.url().clone(), source: e.into() })?;
    let props = CommitProperties::default()
        .with_metadata([("lakewriter".to_owned(), info)])
        .with_max_retries(if creating { 0 } else { COMMIT_RETRIES })
        .with_create_checkpoint(false)
        .with_cleanup_expired_logs(Some(false));
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

/// Runs `write` on the table at `target` with the commit properties for it, then [`finish`]es.
///
/// A failed first write removes the local folders it created only while they hold no file: it
/// never deletes a file, since another process may be writing into the same new table folder.
/// Data files it left behind belong to no commit (`VACUUM` removes them), and a job's target is
/// never read as a raw dataset, so they cannot pass for one.
async fn attempt<F, Fut>(target: &Target<'_>, write: F) -> Result<Committed>
where
    F: FnOnce(DeltaTable, CommitProperties) -> Fut,
    Fut: std::future::IntoFuture<Output = Result<DeltaTable>>,
{
    let committed = attempt_or_skip(target, |table, props| async { write(table, props).await.map(Some) }).await?;
    Ok(committed.expect("a write that returns its table has committed"))
}

/// [`attempt`] for a write that may decide not to commit (`Ok(None)`).
async fn attempt_or_skip<F, Fut>(target: &Target<'_>, write: F) -> Result<Option<Committed>>
where
    F: FnOnce(DeltaTable, CommitProperties) -> Fut,
    Fut: std::future::IntoFuture<Output = Result<Option<DeltaTable>>>,
{
    let (table, created_dir): (DeltaTable, Option<PathBuf>) = table::open_for_write(target.location).await?;
    let read_version = table.version();
    let props = properties(target.metadata, target.location, read_version.is_none())?;
    let result = match write(table, props).await {
        Ok(None) => Ok(None),
        Ok(Some(table)) => finish(target, read_version, Ok(table)).await.map(Some),
        Err(error) => finish(target, read_version, Err(error)).await.map(Some),
    };
    if result.is_err()
        && let Some(dir) = created_dir
    {
        remove_empty_dirs(&dir);
    }
    result
}

/// Removes `dir` and the folders below it, bottom up, where they are empty; never a file.
fn remove_empty_dirs(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// What a write's outcome means for the run. A write that returned its table at a new version
/// committed that version: its counts are read back from that commit file (where the run id is
/// this run's) and the log is checkpointed where due. A write that failed is looked for in the log
/// by run id all the same: where its commit landed and only a step after it failed, the run
/// committed, and says so.
async fn finish(target: &Target<'_>, read_version: Option<u64>, outcome: Result<DeltaTable>) -> Result<Committed> {
    let since = read_version.map_or(0, |v| v + 1);
    match outcome {
        Ok(table) => {
            // delta-rs hands back the table at the version its commit made, or, where it made
            // none (a MERGE that found nothing to do), at the version it read.
            let Some(version) = table.version().filter(|v| Some(*v) != read_version) else {
                return Err(changed_meanwhile(target, "the write made no commit"));
            };
            // The counts come from the commit file; where it cannot be read back, they are unknown.
            let committed = read_commit(&table, version, target).await.unwrap_or(Committed {
                version,
                rows_written: None,
                files_added: None,
                files_removed: None,
            });
            maintain(&table, version, target.name).await;
            Ok(committed)
        }
        // These fail a write before it writes its commit.
        Err(error @ (Error::OutsideSlice { .. } | Error::SchemaMismatch { .. })) => Err(error),
        // Any other failure may come after the commit landed: a step after it, or a storage
        // request retried after it succeeded (a conditional PUT then answers "already exists").
        Err(error) => match find_commit(target, since).await {
            Some(committed) => {
                tracing::warn!(table = target.name, version = committed.version, error = %lakewriter_core::error_chain(&error), "the commit landed; a step after it failed");
                Ok(committed)
            }
            None => Err(error),
        },
    }
}

/// A conflict with a writer that changed the table between this run's read and its write.
fn changed_meanwhile(target: &Target<'_>, what: &str) -> Error {
    Error::Conflict {
        table: target.name.to_owned(),
        partition: target.metadata.partition.clone(),
        source: format!("the table changed since this run read it: {what}").into(),
    }
}

/// Checkpoints the log where delta-rs would have (every `delta.checkpointInterval` commits), and
/// then removes expired log files where the table allows it. The commit has landed: a failure
/// here is logged, never the run's.
async fn maintain(table: &DeltaTable, version: u64, name: &str) {
    use deltalake::table::config::TablePropertiesExt;
    let Ok(state) = table.snapshot() else { return };
    if table.version() != Some(version)
        || !(version + 1).is_multiple_of(state.table_config().checkpoint_interval().get())
    {
        return;
    }
    if let Err(e) = deltalake::checkpoints::create_checkpoint(table, None).await {
        tracing::warn!(table = name, version, error = %e, "committed; writing the checkpoint failed (the next one will be written as usual)");
        return;
    }
    if state.table_config().enable_expired_log_cleanup()
        && let Err(e) = deltalake::checkpoints::cleanup_metadata(table, None).await
    {
        tracing::warn!(table = name, version, error = %e, "committed; removing expired log files failed");
    }
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
    attempt(&target, |table, props| async {
        check_schema(&table, plan.schema().as_arrow(), target.name)?;
        builder(table, session, plan, &target)
            .with_save_mode(SaveMode::Overwrite)
            .with_replace_where(predicate)
            .with_commit_properties(props)
            .await
            .map_err(|e| write_error(&target, slice, e))
    })
    .await
}

/// Replaces the whole table — rows, schema and partitioning — with `plan`'s rows (`rebuild`).
pub async fn replace_all(session: &SessionState, target: Target<'_>, plan: LogicalPlan) -> Result<Committed> {
    attempt(&target, |table, props| async {
        builder(table, session, plan, &target)
            .with_save_mode(SaveMode::Overwrite)
            .with_schema_mode(SchemaMode::Overwrite)
            .with_commit_properties(props)
            .await
            .map_err(|e| write_error(&target, "the table", e))
    })
    .await
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
    let marker = state::written_marker(&target.metadata.job, &target.metadata.partition);
    let mut already = None;
    let committed = attempt_or_skip(&target, |table, props| async {
        if let (Some(version), false) = (table.version(), force)
            && transaction_version(&table, &marker, target.location).await?.is_some()
        {
            already = Some(AppendOutcome::AlreadyCommitted { version });
            return Ok(None);
        }
        check_schema(&table, plan.schema().as_arrow(), target.name)?;
        builder(table, session, plan, &target)
            .with_save_mode(SaveMode::Append)
            .with_commit_properties(props)
            .await
            .map(Some)
            .map_err(|e| write_error(&target, "the table", e))
    })
    .await;
    match already {
        Some(outcome) => Ok(outcome),
        None => Ok(AppendOutcome::Committed(committed?.expect("an append not skipped has committed"))),
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
pub async fn record_state(
    target: Target<'_>,
    read_version: u64,
    result: &datafusion::arrow::datatypes::Schema,
) -> Result<Committed> {
    use deltalake::kernel::transaction::CommitBuilder;
    use deltalake::protocol::DeltaOperation;
    let url = target.location.url();
    let open_err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let props = properties(target.metadata, target.location, false)?.with_max_retries(0);
    let mut table = table::open_existing(target.location).await?;
    if table.version() != Some(read_version) {
        table.load_version(read_version).await.map_err(open_err)?;
    }
    check_schema(&table, result, target.name)?;
    let snapshot = table.snapshot().map_err(open_err)?;
    let operation = DeltaOperation::Write { mode: SaveMode::Append, partition_by: None, predicate: None };
    let outcome = match CommitBuilder::from(props).build(Some(snapshot), table.log_store(), operation).await {
        Ok(commit) => table.load_version(commit.version()).await.map(|()| table).map_err(open_err),
        Err(e) => Err(write_error(&target, "the table", e)),
    };
    finish(&target, Some(read_version), outcome).await
}

/// How a keyed source is merged.
#[derive(Debug, Clone, Copy)]
pub struct MergeSpec<'a> {
    pub key: &'a [String],
    /// `Some`: newer-wins upsert (`merge`). `None`: insert unknown keys only (`append_dedup`).
    pub newer_by: Option<&'a str>,
    /// The table version the source was classified against; `None` where there was no table.
    pub read_version: Option<u64>,
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
    let columns: Vec<String> = source.schema().fields().iter().map(|f| f.name().clone()).collect();
    attempt(&target, |table, props| async {
        if table.version() != spec.read_version {
            // The source was classified against another version (or before the table existed):
            // its counts, and a create, would not hold. Delta cannot see this read, so say it.
            return Err(changed_meanwhile(&target, "its rows were classified against another version"));
        }
        check_schema(&table, source.schema().as_arrow(), target.name)?;
        if table.version().is_none() {
            // Creating the table with the source's rows is only right if nobody else created it
            // meanwhile: a create is never retried (see `properties`), so a lost race runs the
            // whole merge again, against the winner's rows.
            let plan = source.logical_plan().clone();
            return builder(table, session, plan, &target)
                .with_save_mode(SaveMode::Append)
                .with_commit_properties(props)
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
    .await
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

/// Commit `version` of the table, where it is this run's: its `lakewriter.run_id` is
/// `target`'s, so another writer's commit is never reported as this run's.
async fn read_commit(table: &DeltaTable, version: u64, target: &Target<'_>) -> Option<Committed> {
    match table.log_store().read_commit_entry(version).await {
        Ok(entry) => entry.and_then(|bytes| parse_commit(&bytes, version, &target.metadata.run_id)),
        Err(e) => {
            tracing::warn!(table = target.name, version, error = %e, "cannot read back the commit just made");
            None
        }
    }
}

/// The commit in `bytes` (a commit file), with its delta-rs metrics, if `run_id` made it.
fn parse_commit(bytes: &[u8], version: u64, run_id: &str) -> Option<Committed> {
    let mut info = std::str::from_utf8(bytes)
        .ok()?
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|mut action| action.get_mut("commitInfo").map(serde_json::Value::take))?;
    if info.pointer("/lakewriter/run_id").and_then(serde_json::Value::as_str) != Some(run_id) {
        return None;
    }
    let metrics = info
        .get_mut("operationMetrics")
        .map(serde_json::Value::take)
        .and_then(|m| serde_json::from_value::<OperationMetrics>(m).ok())
        .unwrap_or_default();
    Some(Committed {
        version,
        rows_written: Some(metrics.added_rows),
        files_added: Some(metrics.added_files),
        files_removed: Some(metrics.removed_files),
    })
}

/// This run's commit among the table's versions from `since` on, newest first.
async fn find_commit(target: &Target<'_>, since: u64) -> Option<Committed> {
    let table = table::unloaded(target.location).ok()?;
    let latest = match table.log_store().get_latest_version(since).await {
        Ok(latest) => latest,
        Err(e) => {
            tracing::warn!(table = target.name, error = %e, "cannot look for this run's commit in the log");
            return None;
        }
    };
    for version in (since..=latest).rev() {
        if let Some(committed) = read_commit(&table, version, target).await {
            return Some(committed);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_first_write_removes_empty_folders_and_never_a_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let table = dir.path().join("t");
        std::fs::create_dir_all(table.join("dt=2026-09-01/empty")).expect("folders");
        std::fs::create_dir_all(table.join("dt=2026-09-02")).expect("folders");
        std::fs::write(table.join("dt=2026-09-02/part-another-writer.parquet"), b"x").expect("a file");
        remove_empty_dirs(&table);
        assert!(!table.join("dt=2026-09-01").exists(), "empty folders go");
        assert!(table.join("dt=2026-09-02/part-another-writer.parquet").exists(), "files stay");
        let empty = dir.path().join("e");
        std::fs::create_dir_all(empty.join("a/b")).expect("folders");
        remove_empty_dirs(&empty);
        assert!(!empty.exists());
    }

    #[test]
    fn a_commit_is_this_runs_only_with_its_run_id() {
        let commit = concat!(
            r#"{"add":{"path":"x.parquet"}}"#,
            "\n",
            r#"{"commitInfo":{"operationMetrics":{"num_added_rows":7,"num_added_files":1,"num_removed_files":2},"lakewriter":{"run_id":"abc"}}}"#,
        );
        let mine = parse_commit(commit.as_bytes(), 4, "abc").expect("this run's commit");
        assert_eq!(mine, Committed { version: 4, rows_written: Some(7), files_added: Some(1), files_removed: Some(2) });
        assert_eq!(parse_commit(commit.as_bytes(), 4, "another"), None, "another writer's commit");
        assert_eq!(parse_commit(b"not a commit", 4, "abc"), None);
    }
}
