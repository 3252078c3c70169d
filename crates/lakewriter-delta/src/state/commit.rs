//! What a commit of lakewriter's carries and tells: the metadata it records in its `commitInfo`
//! ([`CommitMetadata`]), delta-rs's `operationMetrics` beside it ([`CommitMetrics`]), the outcome
//! a commit file tells of a write ([`Committed`]), and the one lookup of a run's commit in the
//! log by its run id ([`find_commit`]), for writes and compaction alike.

use deltalake::DeltaTableError;
use deltalake::logstore::LogStore;
use lakewriter_core::PartitionKey;
use serde::Serialize;
use serde_json::Value;

use super::actions;

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
    /// (recorded in the partition's state: see [`super`]).
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
    /// `write::files_exec`).
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

/// delta-rs's `operationMetrics` of a commit (in its `commitInfo`): the one place they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CommitMetrics {
    /// Rows added by a write (`num_added_rows`), or inserted, updated and deleted by a merge.
    pub rows: Option<u64>,
    pub files_added: u64,
    pub files_removed: u64,
}

impl CommitMetrics {
    pub(crate) fn of(commit_info: &Value) -> Self {
        let metrics = &commit_info["operationMetrics"];
        let count = |k: &str| metrics.get(k).and_then(Value::as_u64);
        let merged = ["num_target_rows_inserted", "num_target_rows_updated", "num_target_rows_deleted"];
        Self {
            rows: count("num_added_rows").or_else(|| merged.iter().map(|k| count(k)).sum()),
            files_added: count("num_added_files").or_else(|| count("num_target_files_added")).unwrap_or(0),
            files_removed: count("num_removed_files").or_else(|| count("num_target_files_removed")).unwrap_or(0),
        }
    }
}

/// Commit `version` of the table if the run `run_id` made it; an error where it cannot be read.
pub(crate) async fn commit_of(
    log_store: &dyn LogStore,
    version: u64,
    run_id: &str,
) -> Result<Option<Committed>, DeltaTableError> {
    let entry = log_store.read_commit_entry(version).await?;
    Ok(entry.and_then(|bytes| parse_commit(&bytes, version, run_id)))
}

/// The commit in `bytes` (a commit file), with its metrics and the bytes its file actions add and
/// remove, if `run_id` made it.
fn parse_commit(bytes: &[u8], version: u64, run_id: &str) -> Option<Committed> {
    let (mut info, mut bytes_added, mut bytes_removed) = (None, 0, 0);
    for mut action in actions(bytes) {
        let size = |kind: &str| action.pointer(&format!("/{kind}/size")).and_then(Value::as_u64).unwrap_or(0);
        bytes_added += size("add");
        bytes_removed += size("remove");
        if let Some(found) = action.get_mut("commitInfo") {
            info = Some(found.take());
        }
    }
    let info = info?;
    if info.pointer("/lakewriter/run_id").and_then(Value::as_str) != Some(run_id) {
        return None;
    }
    let metrics = CommitMetrics::of(&info);
    Some(Committed {
        version,
        rows_written: metrics.rows,
        files_added: Some(metrics.files_added),
        files_removed: Some(metrics.files_removed),
        bytes_added: Some(bytes_added),
        bytes_removed: Some(bytes_removed),
        spread: None,
    })
}

/// The commit of the run `run_id` among the versions of the table of `log_store` from `since` (the
/// version after the one the run read) on, newest first: a write's or a compaction's whose commit
/// landed although a step after it failed (or whose answer was lost, and whose retry conflicted
/// with itself). An error where the log cannot be read, so that whether the run committed is
/// unknown.
pub(crate) async fn find_commit(
    log_store: &dyn LogStore,
    since: u64,
    run_id: &str,
) -> Result<Option<Committed>, DeltaTableError> {
    let latest = match log_store.get_latest_version(since).await {
        Ok(latest) => latest,
        // No version from `since` on: nothing was committed since the run read the table.
        Err(DeltaTableError::InvalidVersion(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    for version in (since..=latest).rev() {
        if let Some(committed) = commit_of(log_store, version, run_id).await? {
            return Ok(Some(committed));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_is_this_runs_only_with_its_run_id() {
        let commit = concat!(
            r#"{"add":{"path":"x.parquet","size":300}}"#,
            "\n",
            r#"{"add":{"path":"y.parquet","size":20}}"#,
            "\n",
            r#"{"remove":{"path":"old.parquet","size":500}}"#,
            "\n",
            r#"{"remove":{"path":"unsized.parquet"}}"#,
            "\n",
            r#"{"commitInfo":{"operationMetrics":{"num_added_rows":7,"num_added_files":1,"num_removed_files":2},"lakewriter":{"run_id":"abc"}}}"#,
        );
        let mine = parse_commit(commit.as_bytes(), 4, "abc").expect("this run's commit");
        assert_eq!(
            mine,
            Committed {
                version: 4,
                rows_written: Some(7),
                files_added: Some(1),
                files_removed: Some(2),
                bytes_added: Some(320),
                bytes_removed: Some(500),
                spread: None,
            }
        );
        assert_eq!(parse_commit(commit.as_bytes(), 4, "another"), None, "another writer's commit");
        assert_eq!(parse_commit(b"not a commit", 4, "abc"), None);
    }

    #[test]
    fn metrics_of_writes_and_merges() {
        let merge: Value = serde_json::from_str(
            r#"{"operationMetrics":{"num_target_rows_inserted":3,"num_target_rows_updated":2,"num_target_rows_deleted":1,"num_target_files_added":4,"num_target_files_removed":5}}"#,
        )
        .expect("json");
        let expected = CommitMetrics { rows: Some(6), files_added: 4, files_removed: 5 };
        assert_eq!(CommitMetrics::of(&merge), expected);
        let state_only: Value = serde_json::from_str(r#"{"operationMetrics":{}}"#).expect("json");
        assert_eq!(CommitMetrics::of(&state_only), CommitMetrics { rows: None, files_added: 0, files_removed: 0 });
    }
}
