//! Reading the partition state back from a real table's log.

use super::log::{LogFile, parse_log_file};
use super::*;
use crate::table::LoadedTables;
use crate::{CommitMetadata, Target, replace_where};
use chrono::NaiveDate;
use lakewriter_compute::partition_predicate;
use lakewriter_core::stable_hash;

fn metadata(job: &str, dt: NaiveDate, code: &str, inputs: &str) -> CommitMetadata {
    CommitMetadata {
        job: job.into(),
        partition: PartitionKey::of(None, Some(dt)),
        write: "overwrite_partition".into(),
        lakewriter_version: "test".into(),
        sql_hash: stable_hash(code.as_bytes()),
        code_fingerprint: stable_hash(code.as_bytes()),
        input_fingerprint: stable_hash(inputs.as_bytes()),
        inputs: None,
        run_id: format!("{job}-{dt}"),
        started_at: None,
        forced: false,
        checks: Vec::new(),
        unwritten: Vec::new(),
    }
}

/// Writes one partition (`dt_in_rows` as the rows' `dt`) and records `code`/`inputs`.
async fn write(
    location: &Location,
    job: &str,
    dt: NaiveDate,
    dt_in_rows: NaiveDate,
    code: &str,
    inputs: &str,
) -> Result<u64> {
    let ctx = crate::session();
    let plan = ctx
        .sql(&format!("SELECT CAST('{dt_in_rows}' AS DATE) AS dt, 1 AS x"))
        .await
        .expect("plan")
        .logical_plan()
        .clone();
    let meta = metadata(job, dt, code, inputs);
    let read_version = latest_version(location).await?;
    let target = Target {
        location,
        name: "t",
        partition_columns: &["dt".to_owned()],
        not_null: &[],
        metadata: &meta,
        read_version,
        loaded: &LoadedTables::default(),
        adds_columns: false,
    };
    Ok(replace_where(&ctx.state(), target, plan, partition_predicate("dt", dt), "rows elsewhere").await?.version)
}

/// A folder for a table `t`, kept while the returned handle lives, and its location.
fn temp_table() -> (tempfile::TempDir, Location) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
    (dir, Location::new(url, HashMap::new(), |_| None).expect("location"))
}

/// September `d`, 2026.
fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 9, d).expect("date")
}

#[tokio::test]
async fn state_is_read_from_checkpoints_after_log_clean_up_and_moves_with_the_data() {
    let (dir, location) = temp_table();
    assert_eq!(read(&location, "j", LogScope::FromLastCheckpoint).await.expect("read"), None, "no table, no state");
    assert_eq!(latest_version(&location).await.expect("latest"), None, "no table, no version");

    for d in 1..=5 {
        write(&location, "j", day(d), day(d), "code", &format!("inputs {d}")).await.expect("write");
    }
    write(&location, "other", day(1), day(1), "other code", "other inputs").await.expect("other job");
    let table = crate::table::open_existing(&location).await.expect("open");
    deltalake::checkpoints::create_checkpoint(&table, None).await.expect("checkpoint");
    // Log clean-up: the commits before the checkpoint are gone (as delta-rs's clean-up does).
    for v in 0..5 {
        std::fs::remove_file(dir.path().join(format!("t/_delta_log/{v:020}.json"))).expect("remove commit");
    }
    // The latest version is the checkpoint's: the state is the checkpoint's, with no commit after it.
    let at_checkpoint = read(&location, "j", LogScope::FromLastCheckpoint).await.expect("read").expect("a table");
    assert_eq!((at_checkpoint.version, at_checkpoint.checkpoint, at_checkpoint.partitions.len()), (5, Some(5), 5));
    assert_eq!(latest_version(&location).await.expect("latest"), Some(5), "listed from the checkpoint");
    assert_eq!(write(&location, "j", day(6), day(6), "code", "inputs 6").await.expect("write"), 6);
    assert_eq!(write(&location, "j", day(2), day(2), "code", "late inputs 2").await.expect("write"), 7);
    assert_eq!(latest_version(&location).await.expect("latest"), Some(7));
    // A failed write (a row outside its partition) records nothing.
    let failed = write(&location, "j", day(3), day(9), "new code", "inputs 3").await;
    assert!(matches!(failed, Err(Error::OutsideSlice { .. })), "{failed:?}");

    let state = read(&location, "j", LogScope::FromLastCheckpoint).await.expect("read").expect("a table");
    assert_eq!((state.version, state.checkpoint), (7, Some(5)));
    let labels: Vec<String> = state.partitions.keys().map(ToString::to_string).collect();
    assert_eq!(labels, (1..=6).map(|d| format!("dt={}", day(d))).collect::<Vec<_>>());
    let get = |d| &state.partitions[&PartitionKey::of(None, Some(day(d)))];
    for d in [1, 3, 4, 5] {
        let r = get(d);
        assert!(
            r.code_matches(&stable_hash(b"code")) && r.inputs_match(&stable_hash(format!("inputs {d}").as_bytes()))
        );
        assert!(r.written_at.is_some());
        assert_eq!(r.version, None, "from the checkpoint: its commit file is gone");
    }
    assert!(get(2).inputs_match(&stable_hash(b"late inputs 2")) && !get(2).inputs_match(&stable_hash(b"inputs 2")));
    assert_eq!((get(2).version, get(2).rows), (Some(7), Some(1)));
    assert_eq!((get(6).version, get(6).run_id.as_deref()), (Some(6), Some("j-2026-09-06")));

    let other = read(&location, "other", LogScope::FromLastCheckpoint).await.expect("read").expect("a table");
    assert_eq!(other.partitions.len(), 1, "each job reads its own state");
    assert!(
        other.partitions[&"dt=2026-09-01".parse::<PartitionKey>().expect("key")]
            .code_matches(&stable_hash(b"other code"))
    );
}

#[tokio::test]
async fn a_run_lists_the_log_from_its_last_checkpoint_and_status_lists_all_of_it() {
    let (dir, location) = temp_table();
    for d in 1..=3 {
        write(&location, "j", day(d), day(d), "code", &format!("inputs {d}")).await.expect("write");
    }
    let table = crate::table::open_existing(&location).await.expect("open");
    deltalake::checkpoints::create_checkpoint(&table, None).await.expect("checkpoint");
    for d in 4..=5 {
        write(&location, "j", day(d), day(d), "code", &format!("inputs {d}")).await.expect("write");
    }
    let state = async |scope| read(&location, "j", scope).await.expect("read").expect("a table");
    let filled = async |mut state: JobState, wanted: &(dyn Fn(&PartitionKey) -> bool + Sync)| {
        fill_details(&location, "j", &mut state, wanted).await.expect("details");
        state
    };
    let run = state(LogScope::FromLastCheckpoint).await;
    // Only the partitions asked for: the first day's details alone, then all of them.
    let first = PartitionKey::of(None, Some(day(1)));
    let one = filled(state(LogScope::Whole).await, &|p| *p == first).await;
    let versions = |state: &JobState| state.partitions.values().map(|r| r.version).collect::<Vec<_>>();
    assert_eq!(versions(&one), [Some(0), None, None, Some(3), Some(4)]);
    let status = filled(state(LogScope::Whole).await, &|_| true).await;
    assert_eq!((run.version, run.checkpoint, run.commit_files), (4, Some(2), 3), "commits 2 to 4");
    assert_eq!((status.version, status.checkpoint, status.commit_files), (4, Some(2), 5), "commits 0 to 4");
    assert_eq!((run.partitions.len(), fingerprints(&run)), (5, fingerprints(&status)));
    // A run needs the fingerprints alone: the details of the writes before the checkpoint are
    // read for `status`, from the commit files the log keeps.
    assert_eq!(versions(&run), [None, None, None, Some(3), Some(4)]);
    assert_eq!(versions(&status), [Some(0), Some(1), Some(2), Some(3), Some(4)]);
    assert!(status.partitions.values().all(|r| r.rows == Some(1) && r.run_id.is_some()), "{status:?}");
    // Commit files stamped far from their writes' times (a copy that did not keep them): found
    // all the same, by reading the kept commits one by one.
    let later = std::time::SystemTime::now() + std::time::Duration::from_hours(48);
    for v in 0..5 {
        let file = std::fs::File::options().append(true).open(dir.path().join(format!("t/_delta_log/{v:020}.json")));
        file.and_then(|f| f.set_modified(later)).expect("stamp the commit file");
    }
    assert_eq!(filled(state(LogScope::Whole).await, &|_| true).await.partitions, status.partitions);
    // A `_last_checkpoint` naming a checkpoint that is not there: the whole log is listed.
    let last = dir.path().join("t/_delta_log/_last_checkpoint");
    std::fs::write(&last, br#"{"version":9,"size":1}"#).expect("write _last_checkpoint");
    let fallback = state(LogScope::FromLastCheckpoint).await;
    assert_eq!(
        (fallback.checkpoint, fallback.commit_files, fingerprints(&fallback)),
        (Some(2), 5, fingerprints(&status))
    );
    std::fs::remove_file(&last).expect("remove _last_checkpoint");
    let whole = state(LogScope::FromLastCheckpoint).await;
    assert_eq!(
        (whole.commit_files, fingerprints(&whole)),
        (5, fingerprints(&status)),
        "no _last_checkpoint: the whole log"
    );
}

/// Each partition's fingerprints and time of writing: what a run reads of the state.
fn fingerprints(state: &JobState) -> Vec<(String, i64, i64, Option<chrono::DateTime<chrono::Utc>>)> {
    state.partitions.iter().map(|(p, r)| (p.to_string(), r.code, r.inputs, r.written_at)).collect()
}

#[test]
fn log_file_names() {
    assert!(matches!(parse_log_file("00000000000000000007.json"), Some(LogFile::Commit(7))));
    assert!(matches!(parse_log_file("00000000000000000100.checkpoint.parquet"), Some(LogFile::Checkpoint(100, 1, 1))));
    assert!(matches!(
        parse_log_file("00000000000000000100.checkpoint.0000000002.0000000003.parquet"),
        Some(LogFile::Checkpoint(100, 2, 3))
    ));
    assert!(parse_log_file("_last_checkpoint").is_none());
    assert!(parse_log_file("00000000000000000007.crc").is_none());
    assert!(parse_log_file("7.json").is_none());
}

#[test]
fn fingerprints_become_positive_versions_that_tell_fingerprints_apart() {
    let a = fingerprint_version("ffffffffffffffffffffffffffffffff");
    assert_eq!(a, 0x0fff_ffff_ffff_ffff);
    assert_ne!(
        fingerprint_version("0123456789abcdef0123456789abcdef"),
        fingerprint_version("1123456789abcdef0123456789abcdef")
    );
}

#[test]
fn a_write_s_duration_is_its_commit_s_time_less_its_run_s_start_where_the_commit_records_it() {
    let commit = |started: &str| {
        format!(
            r#"{{"commitInfo":{{"timestamp":1764412623000,"operationMetrics":{{"num_added_rows":3}},"lakewriter":{{"job":"j","partition":"dt=2026-09-01","run_id":"r"{started}}}}}}}"#
        )
    };
    let partition: PartitionKey = "dt=2026-09-01".parse().expect("partition");
    for (started, duration) in [(r#","started_at":1764412621750"#, Some(1_250)), ("", None)] {
        let (mut txns, mut details) = (HashMap::new(), HashMap::new());
        apply_commit(4, commit(started).as_bytes(), "j", "lakewriter/j/", &mut txns, &mut details);
        let detail = &details[&partition];
        // A commit made before runs recorded their start reads as before, its duration unknown.
        assert_eq!((detail.version, detail.rows, detail.duration_ms), (4, Some(3), duration), "{started}");
    }
}

#[test]
fn a_partition_lacks_the_columns_its_last_write_left_without_a_value_and_those_added_since() {
    let mut last = metadata("j", day(1), "code", "inputs");
    last.unwritten = vec!["a/b".into(), "50%".into(), "plain".into()];
    let mut earlier = last.clone();
    earlier.unwritten = vec!["gone".into()];
    let now = chrono::Utc::now();
    let mut txns = HashMap::new();
    for (metadata, at) in [(&earlier, now - chrono::Duration::seconds(5)), (&last, now)] {
        for t in transactions(metadata, Some(5), at) {
            txns.insert(t.app_id.clone(), log::Txn { version: t.version, last_updated: t.last_updated, commit: None });
        }
    }
    // The earlier write's entry stays in the log, but it is not the last write's.
    assert!(txns.keys().any(|id| id.ends_with("/unwritten:gone")), "{txns:?}");
    assert!(txns.keys().any(|id| id.ends_with("/dt=2026-09-01/unwritten:a%2Fb")), "{txns:?}");
    let partitions = recorded(txns, HashMap::new(), "lakewriter/j/", None);
    let recorded = &partitions[&PartitionKey::of(None, Some(day(1)))];
    let mut unwritten = recorded.unwritten.clone();
    unwritten.sort();
    assert_eq!(unwritten, ["50%", "a/b", "plain"]);
    // Five columns when it was written: a sixth, added since, is lacked too.
    let table = ["x", "a/b", "gone", "plain", "50%", "added"];
    assert_eq!(recorded.lacks(&table), [&"a/b", &"plain", &"50%", &"added"]);
}

#[test]
fn a_day_recorded_under_two_names_is_its_last_write_under_the_name_it_gave() {
    // A release before named the day by the job's `partition_by`; this one by `dt`.
    let mut before = metadata("j", day(1), "old code", "old inputs");
    before.partition = PartitionKey::of(Some("region"), Some(day(1)));
    before.unwritten = vec!["gone".into()];
    let mut last = metadata("j", day(1), "code", "inputs");
    last.unwritten = vec!["kept".into()];
    let now = chrono::Utc::now();
    for order in [
        [(&before, now - chrono::Duration::seconds(5)), (&last, now)],
        [(&last, now), (&before, now - chrono::Duration::seconds(5))],
    ] {
        let mut txns = HashMap::new();
        for (metadata, at) in order {
            let columns = if metadata.partition.to_string().starts_with("region") { 3 } else { 4 };
            for t in transactions(metadata, Some(columns), at) {
                txns.insert(
                    t.app_id.clone(),
                    log::Txn { version: t.version, last_updated: t.last_updated, commit: None },
                );
            }
        }
        let partitions = recorded(txns, HashMap::new(), "lakewriter/j/", None);
        assert_eq!(partitions.len(), 1, "one day: {partitions:?}");
        let (name, recorded) = partitions.iter().next().expect("the day");
        assert_eq!(name.to_string(), "dt=2026-09-01", "named as its last write named it");
        assert!(recorded.is_fresh(&last.code_fingerprint, &last.input_fingerprint), "{recorded:?}");
        assert_eq!((recorded.columns, recorded.unwritten.as_slice()), (Some(4), &["kept".to_owned()][..]));
        let old_name = PartitionKey::of(Some("region"), Some(day(1)));
        assert_eq!(partitions.get(&old_name), Some(recorded), "found by either name");
    }
    // The day recorded under the old name alone reads as that day.
    let mut txns = HashMap::new();
    for t in transactions(&before, Some(3), now) {
        txns.insert(t.app_id.clone(), log::Txn { version: t.version, last_updated: t.last_updated, commit: None });
    }
    let partitions = recorded(txns, HashMap::new(), "lakewriter/j/", None);
    let recorded = &partitions[&PartitionKey::of(None, Some(day(1)))];
    assert!(recorded.is_fresh(&before.code_fingerprint, &before.input_fingerprint));
    assert_eq!(recorded.unwritten, ["gone"]);
}
