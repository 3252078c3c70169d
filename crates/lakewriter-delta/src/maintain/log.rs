//! The log steps of maintenance: a checkpoint of the latest version, and the removal of expired
//! log files; and the commit properties of every maintenance commit.

use futures::TryStreamExt;
use lakewriter_storage::Location;

use super::{Settings, failed, read_error};
use crate::state::{LogFile, parse_log_file};
use crate::{Result, table};

/// The `commitInfo` of a maintenance commit: `lakewriter: {"maintain": STEP, …}` and its
/// `operationMetrics` where given, and no post-commit hooks (the steps checkpoint and clean up on
/// their own terms).
pub(super) fn commit_properties(
    step: &str,
    metrics: Option<serde_json::Value>,
) -> deltalake::kernel::transaction::CommitProperties {
    let info = serde_json::json!({ "maintain": step, "lakewriter_version": lakewriter_core::VERSION });
    let metrics = metrics.map(|m| ("operationMetrics".to_owned(), m));
    deltalake::kernel::transaction::CommitProperties::default()
        .with_metadata(std::iter::once(("lakewriter".to_owned(), info)).chain(metrics))
        .with_create_checkpoint(false)
        .with_cleanup_expired_logs(Some(false))
}

/// A file of the log folder, as listed.
struct Entry {
    version: u64,
    checkpoint: bool,
    modified_ms: i64,
}

/// The commit and checkpoint files of the table's log folder (one listing).
async fn entries(location: &Location) -> Result<Vec<Entry>> {
    let store = location.object_store().map_err(|e| read_error(location, e))?;
    let log = crate::paths::folder(location.url()).map_err(|e| read_error(location, e))?.join("_delta_log");
    let listed: Vec<_> = store.list(Some(&log)).try_collect().await.map_err(|e| read_error(location, e))?;
    Ok(listed
        .into_iter()
        .filter(|meta| meta.location.prefix_matches(&log) && meta.location.parts().count() == log.parts().count() + 1)
        .filter_map(|meta| {
            let (version, checkpoint) = match meta.location.filename().and_then(parse_log_file)? {
                LogFile::Commit(v) => (v, false),
                LogFile::Checkpoint(v, ..) => (v, true),
            };
            Some(Entry { version, checkpoint, modified_ms: meta.last_modified.timestamp_millis() })
        })
        .collect())
}

/// A checkpoint of the table's latest version: written, or there already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpointed {
    pub version: u64,
    /// Written by this step (false: the version had one already, or a dry run).
    pub written: bool,
    /// The version had a checkpoint before this step.
    pub existed: bool,
}

/// Writes a checkpoint of the latest version of the table at `location`, unless it has one.
/// A checkpoint is a file beside the log, not a commit: concurrent writers never conflict with it.
pub async fn checkpoint(location: &Location, name: &str, dry_run: bool) -> Result<Checkpointed> {
    let table = table::open_existing(location).await?;
    let version = table.version().unwrap_or(0);
    let existed = entries(location).await?.iter().any(|e| e.checkpoint && e.version == version);
    if existed || dry_run {
        return Ok(Checkpointed { version, written: false, existed });
    }
    deltalake::checkpoints::create_checkpoint(&table, None).await.map_err(|e| failed(name, "checkpoint", e))?;
    Ok(Checkpointed { version, written: true, existed })
}

/// What the removal of expired log files did, or (dry run) would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cleaned {
    /// Log files (commits and checkpoints) removed, or to remove.
    pub removed: u64,
    pub retention: std::time::Duration,
    /// `delta.enableExpiredLogCleanup` is false: nothing is removed.
    pub disabled: bool,
}

/// Removes the log files of the table at `location` that delta-rs's clean-up removes: older than
/// the table's `delta.logRetentionDuration`, and before a checkpoint that is itself before every
/// log file younger than that. The partition state is in that checkpoint, so it survives.
pub async fn cleanup(location: &Location, name: &str, dry_run: bool) -> Result<Cleaned> {
    let table = table::open_existing(location).await?;
    let settings = Settings::of(&table, location.url())?;
    let retention = settings.log_retention;
    if !settings.expired_log_cleanup {
        return Ok(Cleaned { removed: 0, retention, disabled: true });
    }
    let removed = if dry_run {
        let cutoff = chrono::Utc::now().timestamp_millis() - i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
        expired(&entries(location).await?, table.version().unwrap_or(0), cutoff)
    } else {
        deltalake::checkpoints::cleanup_metadata(&table, None).await.map_err(|e| failed(name, "cleanup", e))? as u64
    };
    Ok(Cleaned { removed, retention, disabled: false })
}

/// The log files `deltalake::checkpoints::cleanup_expired_logs_for(latest, …, cutoff_ms)` removes:
/// those before the newest checkpoint that is no newer than the oldest log file modified since
/// the cutoff (or than `latest`), and modified no later than the cutoff.
fn expired(entries: &[Entry], latest: u64, cutoff_ms: i64) -> u64 {
    let retained = entries.iter().filter(|e| e.modified_ms >= cutoff_ms).map(|e| e.version).min();
    let keep = retained.map_or(latest, |v| v.min(latest));
    let Some(safe) = entries.iter().filter(|e| e.checkpoint && e.version <= keep).map(|e| e.version).max() else {
        return 0;
    };
    entries.iter().filter(|e| e.version < safe && e.modified_ms <= cutoff_ms).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_log_files_lie_before_a_checkpoint_older_than_the_retained_files() {
        let commit = |version, modified_ms| Entry { version, checkpoint: false, modified_ms };
        let checkpoint = |version, modified_ms| Entry { version, checkpoint: true, modified_ms };
        // Commits 0..=5 at times 0..=5; checkpoints at 2 and 4.
        let mut log: Vec<Entry> = (0..=5).map(|v| commit(v, i64::try_from(v).unwrap())).collect();
        log.extend([checkpoint(2, 2), checkpoint(4, 4)]);
        // Everything expired: before the newest checkpoint, 4.
        assert_eq!(expired(&log, 5, 10), 5, "commits 0..=3 and the checkpoint at 2");
        // Files from time 3 on are retained: the newest checkpoint at or before version 3 is 2.
        assert_eq!(expired(&log, 5, 3), 2, "commits 0 and 1");
        // Nothing expired, or no checkpoint early enough.
        assert_eq!(expired(&log, 5, 0), 0);
        assert_eq!(expired(&log[..6], 5, 10), 0, "no checkpoint");
    }
}
