//! How a write becomes a commit: the commit's properties, one attempt at a write with its
//! clean-up, reading the commit back (see [`crate::state::find_commit`]), and what a delta-rs
//! error means (a conflict, a failed data check, anything else).

use deltalake::kernel::transaction::CommitProperties;
use deltalake::logstore::{LogStore, LogStoreRef};
use deltalake::{DeltaTable, DeltaTableError};
use lakewriter_core::Phase;
use lakewriter_storage::Location;

use super::target::Target;
use crate::state::{CommitMetadata, Committed};
use crate::{Error, Result, state, table};

/// How often a commit that lost the race for a log version is retried. A retry re-checks Delta's
/// conflict rules against the commits that won (writes to other partitions do not conflict) and
/// costs one small log read, so the bound is generous: with N writers, a commit can lose up to
/// N - 1 times in a row.
pub(super) const COMMIT_RETRIES: usize = 1_000;

/// The commit's metadata and the partition state it records (see [`crate::state`]).
///
/// A commit that creates the table is never retried: delta-rs would commit a create that lost
/// the race for version 0 as the next version, whole, without a conflict check (a second copy of
/// its rows). Failing instead lets the runner run the partition again as a write into the table
/// the winner created. delta-rs's post-commit hooks are off: [`finish`] checkpoints and cleans up
/// the log itself, after the commit is known to have landed, so that a failure there never turns
/// a durable commit into a reported failure. `columns` is the number of the table's columns after
/// the commit (`None`: unknown, and not recorded); `base`, where the commit is the job's first to
/// add columns, the number before it (see [`crate::state`]).
pub(super) fn properties(
    metadata: &CommitMetadata,
    location: &Location,
    creating: bool,
    columns: Option<usize>,
    base: Option<usize>,
) -> Result<CommitProperties> {
    let info =
        serde_json::to_value(metadata).map_err(|e| Error::Read { url: location.url().clone(), source: e.into() })?;
    let props = CommitProperties::default()
        .with_metadata([("lakewriter".to_owned(), info)])
        .with_max_retries(if creating { 0 } else { COMMIT_RETRIES })
        .with_create_checkpoint(false)
        .with_cleanup_expired_logs(Some(false));
    let now = chrono::Utc::now();
    let base = base.filter(|_| !metadata.job.is_empty()).map(|base| state::columns_base(&metadata.job, base, now));
    Ok(state::transactions(metadata, columns, now)
        .into_iter()
        .chain(base)
        .fold(props, CommitProperties::with_application_transaction))
}

/// The commit properties of a write over `table` (`None` before the table exists) after which the
/// table has `columns` columns (`None`: as many as it has): [`properties`], with the number of
/// columns the table had before where this is the job's first commit to add any.
pub(super) async fn properties_over(
    target: &Target<'_>,
    table: Option<&DeltaTable>,
    columns: Option<usize>,
) -> Result<CommitProperties> {
    let before = table.and_then(|t| t.snapshot().ok()).map(|s| s.schema().fields().count());
    let after = columns.or(before);
    let mut base = None;
    if let (Some(table), Some(before), Some(after)) = (table, before, after)
        && after > before
        && target.adds_columns
        && transaction_version(table, &state::columns_base_id(&target.metadata.job), target.location).await?.is_none()
    {
        base = Some(before);
    }
    properties(target.metadata, target.location, table.is_none(), after, base)
}

/// Runs `write` on the table at `target` as of `target.read_version` with the commit properties
/// for it, then [`finish`]es. A table created since the run read none is a conflict.
///
/// A failed first write removes the local folders it created only while they hold no file: it
/// never deletes a file, since another process may be writing into the same new table folder.
/// Data files it left behind belong to no commit (`VACUUM` removes them), and a job's target is
/// never read as a raw dataset, so they cannot pass for one.
pub(super) async fn attempt<F, Fut>(target: &Target<'_>, columns: Option<usize>, write: F) -> Result<Committed>
where
    F: FnOnce(DeltaTable, CommitProperties) -> Fut,
    Fut: std::future::IntoFuture<Output = Result<DeltaTable>>,
{
    let committed =
        attempt_or_skip(target, columns, |table, props| async { write(table, props).await.map(Some) }).await?;
    Ok(committed.expect("a write that returns its table has committed"))
}

/// [`attempt`] for a write that may decide not to commit (`Ok(None)`). `columns` is the number of
/// the table's columns after the write (`None`: the columns it has).
pub(super) async fn attempt_or_skip<F, Fut>(
    target: &Target<'_>,
    columns: Option<usize>,
    write: F,
) -> Result<Option<Committed>>
where
    F: FnOnce(DeltaTable, CommitProperties) -> Fut,
    Fut: std::future::IntoFuture<Output = Result<Option<DeltaTable>>>,
{
    let read_version = target.read_version;
    let table::ForWrite { table, base, created } =
        table::open_for_write(target.location, read_version, target.loaded).await?;
    if table.version() != read_version {
        return Err(changed_meanwhile(target, "another writer created the table"));
    }
    crate::protocol::check(&table, target.name)?;
    let props = properties_over(target, read_version.map(|_| &table), columns).await?;
    crate::phase(Phase::Writing, target.name, &target.metadata.partition);
    let result = match write(table, props).await {
        Ok(None) => Ok(None),
        Ok(Some(table)) => {
            target.loaded.keep(target.location, &table, base);
            finish(target, read_version, Ok(Landed::Table(table))).await.map(Some)
        }
        Err(error) => finish(target, read_version, Err(error)).await.map(Some),
    };
    if result.is_err()
        && let Some(dir) = created
    {
        remove_empty_dirs(&dir);
    }
    result
}

/// The version of the application transaction `app_id` in `table`'s snapshot, if it has one.
pub(super) async fn transaction_version(table: &DeltaTable, app_id: &str, location: &Location) -> Result<Option<i64>> {
    let url = location.url();
    let state = table.snapshot().map_err(|source| Error::Open { url: url.clone(), source: Box::new(source) })?;
    state
        .transaction_version(table.log_store().as_ref(), app_id)
        .await
        .map_err(|source| Error::Open { url: url.clone(), source: Box::new(source) })
}

/// Removes `dir` and the folders below it, bottom up, where they are empty; never a file.
pub(super) fn remove_empty_dirs(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// What a write that did not fail left: delta-rs's table at the version its write made (or, where
/// it made none — a MERGE that found nothing to do — at the version it read), or a commit
/// lakewriter put itself, with the log store it put it in and the table's checkpoint interval.
pub(super) enum Landed {
    Table(DeltaTable),
    Commit { version: u64, log_store: LogStoreRef, checkpoint_interval: u64 },
}

/// What a write's outcome means for the run. A write that committed a new version: its counts
/// are read back from that commit file (where the run id is this run's) and the log is
/// checkpointed where due. A write that failed is looked for in the log by run id all the same:
/// where its commit landed and only a step after it failed, the run committed, and says so.
pub(super) async fn finish(
    target: &Target<'_>,
    read_version: Option<u64>,
    outcome: Result<Landed>,
) -> Result<Committed> {
    let since = read_version.map_or(0, |v| v + 1);
    match outcome {
        Ok(landed) => {
            let (version, log_store) = match &landed {
                Landed::Table(table) => (table.version(), table.log_store()),
                Landed::Commit { version, log_store, .. } => (Some(*version), log_store.clone()),
            };
            let Some(version) = version.filter(|v| Some(*v) != read_version) else {
                return Err(changed_meanwhile(target, "the write made no commit"));
            };
            crate::phase(Phase::Committed, target.name, &target.metadata.partition);
            // The counts come from the commit file; where it cannot be read back, they are unknown.
            let committed = read_commit(log_store.as_ref(), version, target).await.unwrap_or(Committed {
                version,
                rows_written: None,
                files_added: None,
                files_removed: None,
                bytes_added: None,
                bytes_removed: None,
                spread: None,
            });
            match landed {
                Landed::Table(table) => maintain(&table, version, target.name).await,
                Landed::Commit { checkpoint_interval, .. } if (version + 1).is_multiple_of(checkpoint_interval) => {
                    match table::open_at(target.location, version).await {
                        Ok(table) => maintain(&table, version, target.name).await,
                        Err(e) => {
                            tracing::warn!(table = target.name, version, error = %e, "committed; cannot open the table to write its checkpoint (the next one will be written as usual)");
                        }
                    }
                }
                Landed::Commit { .. } => {}
            }
            Ok(committed)
        }
        // These fail a write before it writes its commit.
        Err(error @ (Error::Invalid { .. } | Error::SchemaMismatch { .. })) => Err(error),
        // Any other failure may come after the commit landed: a step after it, or a storage
        // request retried after it succeeded (a conditional PUT then answers "already exists").
        Err(error) => match run_commit(target, since).await {
            Ok(Some(committed)) => {
                tracing::warn!(table = target.name, version = committed.version, error = %lakewriter_core::error_chain(&error), "this run's commit is in the log although the write failed after it (a later step, or a storage request retried after it had landed)");
                Ok(committed)
            }
            Ok(None) => Err(error),
            Err(lookup) => {
                tracing::warn!(table = target.name, error = %lookup, "cannot look for this run's commit in the log");
                Err(unconfirmed(target, error))
            }
        },
    }
}

/// A failed write whose commit could not be looked for: whether it landed is unknown. Its cause is
/// the write's own failure (for a delta-rs error, without the "nothing was committed" that
/// lakewriter could not check).
fn unconfirmed(target: &Target<'_>, error: Error) -> Error {
    let source: Box<dyn std::error::Error + Send + Sync> = match error {
        Error::Write { source, .. } | Error::Conflict { source, .. } => source,
        Error::Request { source, .. } => source,
        other => Box::new(other),
    };
    Error::Unconfirmed { table: target.name.to_owned(), partition: target.metadata.partition.clone(), source }
}

/// A conflict with a writer that changed the table between this run's read and its write.
pub(super) fn changed_meanwhile(target: &Target<'_>, what: &str) -> Error {
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
    tracing::info!(target: crate::PHASE_TARGET, phase = Phase::Checkpointing.as_str(), table = name, version);
    if let Err(e) = deltalake::checkpoints::create_checkpoint(table, None).await {
        let error = crate::error::own_words(&e);
        tracing::warn!(table = name, version, %error, "committed; writing the checkpoint failed (the next one will be written as usual)");
        return;
    }
    if state.table_config().enable_expired_log_cleanup()
        && let Err(e) = deltalake::checkpoints::cleanup_metadata(table, None).await
    {
        let error = crate::error::own_words(&e);
        tracing::warn!(table = name, version, %error, "committed; removing expired log files failed");
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a delta-rs error from a write means: a conflict with a concurrent commit (run the
/// partition again), a failed data check, or another failure.
pub(super) fn write_error(target: &Target<'_>, source: DeltaTableError) -> Error {
    let table = target.name.to_owned();
    let partition = target.metadata.partition.clone();
    if crate::error::conflicted(&source) {
        Error::Conflict { table, partition, source: Box::new(source) }
    } else if failed_data_check(&source) {
        // delta-rs's words (a count of one batch's rows, a preview of them) say nothing of the
        // column or the rule: the caller counts what it can name, from the result.
        tracing::debug!(table, error = %source, "delta-rs refused the rows");
        Error::Invalid { table, partition, not_null: Vec::new() }
    } else {
        match storage_request(source) {
            Ok(request) => Error::Request { table, partition, source: Box::new(request) },
            Err(DeltaTableError::Generic(message)) => {
                Error::Write { table, partition, source: Box::new(crate::error::Message(message)) }
            }
            Err(source) => Error::Write { table, partition, source: Box::new(source) },
        }
    }
}

/// The failed storage request behind a delta-rs error, where it is one: delta-rs labels a failed
/// PUT of a log entry "Failed to read delta log object" and of a data file "Failed to parse
/// parquet"; the request's own error names the operation and the object (`PUT <url>`) and the
/// server's answer.
fn storage_request(error: DeltaTableError) -> Result<deltalake::ObjectStoreError, DeltaTableError> {
    use deltalake::parquet::errors::ParquetError;
    match error {
        DeltaTableError::ObjectStore { source } => Ok(source),
        // An upload's error reaches parquet's writer as an I/O error around the request's.
        DeltaTableError::Parquet { source: ParquetError::External(external) } => match request_in(external) {
            Ok(request) => Ok(request),
            Err(external) => Err(DeltaTableError::Parquet { source: ParquetError::External(external) }),
        },
        other => Err(other),
    }
}

/// The storage request's error in `error`, itself or inside an I/O error; else `error` back.
fn request_in(error: BoxError) -> Result<deltalake::ObjectStoreError, BoxError> {
    let error = match error.downcast::<deltalake::ObjectStoreError>() {
        Ok(request) => return Ok(*request),
        Err(error) => error,
    };
    let io = match error.downcast::<std::io::Error>() {
        Ok(io) if io.get_ref().is_some() => io,
        Ok(io) => return Err(io as BoxError),
        Err(error) => return Err(error),
    };
    let kind = io.kind();
    let inner = io.into_inner().unwrap_or_else(|| "an I/O error".into());
    inner
        .downcast::<deltalake::ObjectStoreError>()
        .map(|request| *request)
        .map_err(|inner| Box::new(std::io::Error::new(kind, inner)) as BoxError)
}

/// Whether delta-rs refused the rows it was writing: a row outside a replaceWhere predicate, a
/// NULL in a NOT NULL column or a row breaking a CHECK constraint — or lakewriter's own guard of
/// a column the job declares NOT NULL refused a NULL. delta-rs raises its refusals as
/// `DeltaTableError::InvalidData`, but a write's stream hands them on as text
/// (`DeltaTableError::Generic`, via its `From<DataFusionError>`), so this is the one place where
/// lakewriter reads a delta-rs message: its data check's wording, "rows failed validation".
fn failed_data_check(error: &DeltaTableError) -> bool {
    match error {
        DeltaTableError::InvalidData { .. } => true,
        DeltaTableError::Generic(text) => {
            text.contains("failed validation") || text.contains(crate::nullability::GUARD_REFUSAL)
        }
        _ => false,
    }
}

/// This run's commit among the table's versions from `since` on (see [`state::find_commit`]).
async fn run_commit(target: &Target<'_>, since: u64) -> Result<Option<Committed>, BoxError> {
    let table = table::unloaded(target.location)?;
    Ok(state::find_commit(table.log_store().as_ref(), since, &target.metadata.run_id).await?)
}

/// Commit `version` of the table, where it is this run's: its `lakewriter.run_id` is
/// `target`'s, so another writer's commit is never reported as this run's.
async fn read_commit(log_store: &dyn LogStore, version: u64, target: &Target<'_>) -> Option<Committed> {
    state::commit_of(log_store, version, &target.metadata.run_id).await.unwrap_or_else(|e| {
        tracing::warn!(table = target.name, version, error = %e, "cannot read back the commit just made");
        None
    })
}

#[cfg(test)]
mod tests;
