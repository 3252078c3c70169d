//! Unit tests of `write::commit`: clean-up of a failed first write, error classes.

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
