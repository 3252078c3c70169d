//! Unit tests of `write::commit`: clean-up of a failed first write, run ids, metrics, error classes.

use super::*;
use crate::table::LoadedTables;

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

/// The metadata of a `rebuild` commit of job `j`.
fn metadata() -> CommitMetadata {
    CommitMetadata {
        job: "j".into(),
        partition: lakewriter_core::PartitionKey::All,
        write: "rebuild".into(),
        lakewriter_version: "test".into(),
        sql_hash: String::new(),
        code_fingerprint: String::new(),
        input_fingerprint: String::new(),
        inputs: None,
        run_id: "r".into(),
        started_at: None,
        forced: false,
        checks: Vec::new(),
        unwritten: Vec::new(),
    }
}

#[test]
fn delta_errors_are_classified_by_their_variants() {
    use deltalake::kernel::transaction::{CommitConflictError, TransactionError};
    let url = url::Url::parse("file:///tmp/t/").expect("url");
    let location = Location::new(url, std::collections::HashMap::new(), |_| None).expect("location");
    let metadata = metadata();
    let target = Target {
        location: &location,
        name: "a.t",
        partition_columns: &[],
        not_null: &[],
        metadata: &metadata,
        read_version: None,
        loaded: &LoadedTables::default(),
        adds_columns: false,
    };
    let kind = |error| match write_error(&target, error) {
        Error::Conflict { .. } => "conflict",
        Error::Invalid { .. } => "invalid",
        Error::Write { .. } => "write",
        Error::Request { .. } => "request",
        other => panic!("unexpected {other:?}"),
    };
    let conflict = |c| DeltaTableError::Transaction { source: TransactionError::CommitConflict(c) };
    assert_eq!(kind(conflict(CommitConflictError::ConcurrentAppend)), "conflict");
    assert_eq!(kind(conflict(CommitConflictError::ConcurrentTransaction)), "conflict");
    assert_eq!(kind(DeltaTableError::VersionAlreadyExists(0)), "conflict");
    let lost = DeltaTableError::Transaction { source: TransactionError::MaxCommitAttempts(0) };
    assert_eq!(kind(lost), "conflict");
    let invalid =
        DeltaTableError::InvalidData { message: "Invalid data found: 1 rows failed validation check.".into() };
    assert_eq!(kind(invalid), "invalid");
    let as_text = DeltaTableError::Generic("Invalid data found: 2 rows failed validation check.".into());
    assert_eq!(kind(as_text), "invalid");
    let guard = format!("Execution error: {} `n`", crate::nullability::GUARD_REFUSAL);
    assert_eq!(kind(DeltaTableError::Generic(guard)), "invalid");
    assert_eq!(kind(DeltaTableError::Generic("the disk is full".into())), "write");
    // A query's runtime error, without delta-rs's "Generic DeltaTable error" wrapper.
    let divided = write_error(&target, DeltaTableError::Generic("Arrow error: Divide by zero error".into()));
    let chain = lakewriter_core::error_chain(&divided);
    assert!(chain.ends_with("nothing was committed: Arrow error: Divide by zero error"), "{chain}");
    // A failed storage request, however delta-rs labels it, is the request's own error.
    let request = || deltalake::ObjectStoreError::Generic { store: "S3", source: "Error performing PUT".into() };
    assert_eq!(kind(DeltaTableError::ObjectStore { source: request() }), "request");
    let upload = deltalake::parquet::errors::ParquetError::External(Box::new(request()));
    assert_eq!(kind(DeltaTableError::Parquet { source: upload }), "request");
    let wrapped = std::io::Error::other(request());
    let upload = deltalake::parquet::errors::ParquetError::External(Box::new(wrapped));
    assert_eq!(kind(DeltaTableError::Parquet { source: upload }), "request");
    let other = deltalake::parquet::errors::ParquetError::External("not a request".into());
    assert_eq!(kind(DeltaTableError::Parquet { source: other }), "write");
    assert!(write_error(&target, DeltaTableError::VersionAlreadyExists(0)).is_conflict());
}
