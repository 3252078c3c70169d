//! Compaction against real tables in a temporary folder: what it rewrites, that rows and the
//! partition state stay, and how it meets a concurrent compaction or rebuild.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::{Date32Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use deltalake::protocol::SaveMode;
use lakewriter_compute::partition_predicate;
use lakewriter_core::{PartitionKey, stable_hash};
use lakewriter_storage::Location;

use super::bins::{self, DataFile};
use super::compact;
use super::*;
use crate::table::LoadedTables;
use crate::{CommitMetadata, Target, replace_all, replace_where};

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 9, d).expect("date")
}

fn location(dir: &tempfile::TempDir) -> Location {
    let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
    Location::new(url, HashMap::new(), |_| None).expect("location")
}

fn metadata(dt: Option<NaiveDate>, write: &str) -> CommitMetadata {
    CommitMetadata {
        job: "j".into(),
        partition: PartitionKey::of(None, dt),
        write: write.into(),
        lakewriter_version: "test".into(),
        sql_hash: stable_hash(b"code"),
        code_fingerprint: stable_hash(b"code"),
        input_fingerprint: stable_hash(format!("inputs {dt:?}").as_bytes()),
        inputs: None,
        run_id: format!("run-{dt:?}"),
        started_at: None,
        forced: false,
        checks: Vec::new(),
        unwritten: Vec::new(),
    }
}

/// Overwrites partition `dt` with rows `ns`, as a run of job `j` does (recording its state).
async fn overwrite(location: &Location, dt: NaiveDate, ns: &[i64]) -> u64 {
    overwrite_in(location, dt, ns, &["dt".to_owned()]).await
}

/// [`overwrite`] into a table partitioned by `partition_column` (or not partitioned).
async fn overwrite_in(location: &Location, dt: NaiveDate, ns: &[i64], partition_columns: &[String]) -> u64 {
    let ctx = crate::session();
    let values: Vec<String> = ns.iter().map(|n| format!("(CAST({n} AS BIGINT), DATE '{dt}')")).collect();
    let sql = format!("SELECT column1 AS n, column2 AS dt FROM (VALUES {})", values.join(", "));
    let plan = ctx.sql(&sql).await.expect("plan").logical_plan().clone();
    let meta = metadata(Some(dt), "overwrite_partition");
    let read_version = crate::state::latest_version(location).await.expect("version");
    let target = Target {
        location,
        name: "a.t",
        partition_columns,
        not_null: &[],
        metadata: &meta,
        read_version,
        loaded: &LoadedTables::default(),
        adds_columns: false,
    };
    replace_where(&ctx.state(), target, plan, partition_predicate("dt", dt), "elsewhere").await.expect("write").version
}

/// Appends rows `ns` to partition `dt` as another writer would: one more small file, no state.
async fn append(location: &Location, dt: NaiveDate, ns: &[i64]) {
    let schema =
        Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, true), Field::new("dt", DataType::Date32, true)]));
    let days = lakewriter_core::days_since_epoch(dt);
    let batch = RecordBatch::try_new(
        schema,
        vec![Arc::new(Int64Array::from(ns.to_vec())), Arc::new(Date32Array::from(vec![days; ns.len()]))],
    )
    .expect("batch");
    let table = crate::table::open_existing(location).await.expect("open");
    table.write(vec![batch]).with_save_mode(SaveMode::Append).with_partition_columns(["dt"]).await.expect("append");
}

/// Day 1 written, then appended to twice (three small files); day 2 written once (one file).
async fn table_with_small_files(location: &Location) {
    overwrite(location, day(1), &[1, 2]).await;
    append(location, day(1), &[3]).await;
    append(location, day(1), &[4, 5]).await;
    overwrite(location, day(2), &[6]).await;
}

async fn digest(location: &Location) -> (String, u64) {
    let digest = crate::digest(location, None).await.expect("digest");
    (digest.digest, digest.rows)
}

#[tokio::test]
async fn compaction_rewrites_the_partitions_with_several_small_files_in_one_commit_and_keeps_rows_and_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    table_with_small_files(&location).await;
    let (rows, state) = (
        digest(&location).await,
        crate::state::read(&location, "j", crate::state::LogScope::Whole).await.expect("state"),
    );
    let state = state.expect("a table");
    let before = layout(&location, None, &[]).await.expect("layout").expect("a table");
    assert_eq!((before.version, before.files, before.partitions, before.small_files), (3, 4, 2, 4));
    let to_compact: Vec<(&str, u64)> = before.to_compact.iter().map(|p| (p.partition.as_str(), p.files)).collect();
    assert_eq!(to_compact, [("dt=2026-09-01", 3)]);

    let planned = compact(&location, "a.t", None, &[], true, "dry").await.expect("dry run");
    assert_eq!(
        (planned.version, planned.files_removed, planned.files_added),
        (None, 3, 0),
        "a dry run commits nothing"
    );
    let compacted = compact(&location, "a.t", None, &[], false, "run-1").await.expect("compact");
    assert_eq!(
        (compacted.version, compacted.files_removed, compacted.files_added, compacted.retries),
        (Some(4), 3, 1, 0)
    );
    assert_eq!(compacted.partitions, before.to_compact);
    // Found again by its run id, as a commit whose answer was lost is, it counts the same.
    let table = crate::table::open_at(&location, 3).await.expect("the version it read");
    let log_store = table.log_store();
    let found = crate::state::find_commit(log_store.as_ref(), 4, "run-1").await.expect("the log").expect("its commit");
    let counts = (found.version, found.files_added, found.bytes_added);
    assert_eq!(counts, (4, Some(1), Some(compacted.bytes_added)));
    assert!(compacted.bytes_added > 0);
    assert_eq!(crate::state::find_commit(log_store.as_ref(), 4, "another run").await.expect("the log"), None);

    assert_eq!(digest(&location).await, rows, "the same rows");
    let after =
        crate::state::read(&location, "j", crate::state::LogScope::Whole).await.expect("state").expect("a table");
    assert_eq!(after.partitions, state.partitions, "the same partition state, commit details included");
    let after_layout = layout(&location, None, &[]).await.expect("layout").expect("a table");
    assert_eq!((after_layout.files, after_layout.to_compact.len()), (2, 0));
    let again = compact(&location, "a.t", None, &[], false, "run-2").await.expect("compact again");
    assert_eq!((again.version, again.files_removed), (None, 0), "nothing left to compact");

    // The commit: OPTIMIZE, no data change, lakewriter's run id, the compaction's transaction.
    let log = std::fs::read_to_string(dir.path().join("t/_delta_log/00000000000000000004.json")).expect("commit");
    let actions: Vec<serde_json::Value> = crate::state::actions(log.as_bytes()).collect();
    let info = actions.iter().find_map(|a| a.get("commitInfo")).expect("commitInfo");
    assert_eq!((info["operation"].as_str(), info["lakewriter"]["run_id"].as_str()), (Some("OPTIMIZE"), Some("run-1")));
    assert!(actions.iter().filter_map(|a| a.get("add").or_else(|| a.get("remove"))).all(|f| f["dataChange"] == false));
    let txns: Vec<&str> = actions.iter().filter_map(|a| a.pointer("/txn/appId")?.as_str()).collect();
    assert_eq!(txns, [compact::APP_ID]);
}

#[tokio::test]
async fn two_compactions_from_one_version_conflict_and_the_later_plans_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    table_with_small_files(&location).await;
    let rows = digest(&location).await;
    // Two compactions read version 3; the first commits.
    let first = crate::table::open_existing(&location).await.expect("open");
    let second = crate::table::open_existing(&location).await.expect("open");
    compact::attempt_at(&first, "a.t", "first").await.expect("the first compaction");
    let conflict = compact::attempt_at(&second, "a.t", "second").await.expect_err("the second conflicts");
    assert!(crate::error::conflicted(&conflict), "{conflict}");
    assert_eq!(digest(&location).await, rows, "no row twice");
    // Planned again from the latest version, it finds nothing to do.
    let again = compact(&location, "a.t", None, &[], false, "third").await.expect("compact");
    assert_eq!((again.version, again.files_removed), (None, 0));
}

/// Why compaction is lakewriter's own commit: delta-rs 1.1's `optimize`, read at one version and
/// committed after another `optimize` of the same files, is rebased over it — both commits stand,
/// and the rows of the files they rewrote are in the table twice. Should delta-rs refuse the
/// second one day, this test fails: `compact` could then use `optimize` again (see compact.rs).
#[tokio::test]
async fn delta_rs_optimize_twice_from_one_version_duplicates_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    table_with_small_files(&location).await;
    let (_, rows) = digest(&location).await;
    let first = crate::table::open_existing(&location).await.expect("open");
    let second = crate::table::open_existing(&location).await.expect("open");
    first.optimize().await.expect("the first optimize");
    second.optimize().await.expect("the second optimize, rebased");
    let (_, after) = digest(&location).await;
    assert_eq!(after, rows + 5, "day 1's five rows twice: {rows} rows became {after}");
}

#[tokio::test]
async fn a_rebuild_read_before_a_compaction_conflicts_with_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    table_with_small_files(&location).await;
    let read_version = crate::state::latest_version(&location).await.expect("version");
    compact(&location, "a.t", None, &[], false, "run-1").await.expect("compact");
    // A rebuild that read the table before the compaction: delta-rs would rebase it over the
    // compaction (a write without a predicate reads no file it checks) and the compacted file
    // would stay beside the rebuild's rows. It is never rebased: a conflict, run again.
    let ctx = crate::session();
    let plan = ctx.sql("SELECT CAST(9 AS BIGINT) AS n, DATE '2026-09-09' AS dt").await.expect("plan");
    let meta = metadata(None, "rebuild");
    let target = Target {
        location: &location,
        name: "a.t",
        partition_columns: &["dt".to_owned()],
        not_null: &[],
        metadata: &meta,
        read_version,
        loaded: &LoadedTables::default(),
        adds_columns: false,
    };
    let stale = replace_all(&ctx.state(), target, plan.logical_plan().clone()).await;
    assert!(stale.as_ref().is_err_and(Error::is_conflict), "{stale:?}");
    let read_version = crate::state::latest_version(&location).await.expect("version");
    let target = Target { read_version, ..target };
    replace_all(&ctx.state(), target, plan.logical_plan().clone()).await.expect("the rebuild run again");
    assert_eq!(digest(&location).await.1, 1, "the rebuild's one row");
}

fn file(partition: &str, path: &str, size: u64, modified: i64) -> DataFile {
    DataFile::for_test(partition, path, size, modified)
}

#[test]
fn compaction_packs_each_partitions_small_files_oldest_first_and_never_rewrites_one_alone() {
    let files = [
        file("dt=1", "a", 10, 3),
        file("dt=1", "b", 10, 1),
        file("dt=1", "c", 90, 2),
        file("dt=1", "big", 100, 0),
        file("dt=2", "d", 10, 0),
        file("dt=3", "e", 40, 0),
        file("dt=3", "f", 40, 1),
        file("dt=3", "g", 40, 2),
    ];
    let bins: Vec<(String, Vec<&str>)> = bins::plan(&files, 100)
        .into_iter()
        .map(|bin| (bin.partition, bin.files.iter().map(|i| files[*i].path.as_str()).collect()))
        .collect();
    // dt=1: b (oldest) and c fill a bin; a is left alone; big is not small. dt=2: one file.
    // dt=3: e and f fill a bin; g alone.
    assert_eq!(bins, [("dt=1".to_owned(), vec!["b", "c"]), ("dt=3".to_owned(), vec!["e", "f"])]);
}

#[test]
fn compaction_rewrites_each_group_of_files_whose_ranges_overlap_and_packs_the_other_small_ones() {
    use datafusion::common::ScalarValue;
    let ranged = |partition: &str, path: &str, size: u64, (min, max): (i64, i64)| {
        let mut file = file(partition, path, size, 0);
        file.range = Some((ScalarValue::Int64(Some(min)), ScalarValue::Int64(Some(max))));
        file
    };
    let files = [
        ranged("all", "a", 500, (0, 9)),
        ranged("all", "b", 500, (10, 19)),
        ranged("all", "c", 500, (5, 12)),
        ranged("all", "d", 500, (30, 39)),
        ranged("all", "f", 10, (50, 59)),
        ranged("all", "e", 10, (40, 49)),
        ranged("all", "g", 500, (60, 69)),
        ranged("all", "h", 500, (69, 70)),
        file("all", "no range", 10, 1),
        ranged("other", "i", 500, (0, 9)),
    ];
    let bins: Vec<(String, Vec<&str>)> = bins::plan(&files, 100)
        .into_iter()
        .map(|bin| (bin.partition, bin.files.iter().map(|i| files[*i].path.as_str()).collect()))
        .collect();
    // a, c and b overlap through c; d stands alone, big enough; g and h only touch (69 ends one
    // and begins the other: sorted rows of a value cut between files), which is no overlap. The
    // small e and f, whose ranges are their own, are packed as small files are, in key order,
    // the file of no range after them. The other partition's file overlaps none of its own.
    let all = |paths: &[&'static str]| ("all".to_owned(), paths.to_vec());
    assert_eq!(bins, [all(&["a", "c", "b"]), all(&["e", "f", "no range"])]);
}

#[tokio::test]
async fn a_compaction_read_before_an_overwrite_of_its_files_conflicts_with_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    table_with_small_files(&location).await;
    let stale = crate::table::open_existing(&location).await.expect("open");
    overwrite(&location, day(1), &[1, 2, 3, 4, 5]).await;
    let rows = digest(&location).await;
    let conflict = compact::attempt_at(&stale, "a.t", "stale").await;
    let log = std::fs::read_to_string(dir.path().join("t/_delta_log/00000000000000000004.json")).expect("commit");
    assert!(conflict.as_ref().is_err_and(crate::error::conflicted), "{conflict:?}\n{log}");
    assert_eq!(digest(&location).await, rows);
}

#[tokio::test]
async fn a_compaction_read_before_a_delete_insert_into_an_unpartitioned_table_conflicts_with_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    for d in 1..=3 {
        overwrite_in(&location, day(d), &[i64::from(d)], &[]).await;
    }
    let stale = crate::table::open_existing(&location).await.expect("open");
    overwrite_in(&location, day(2), &[2], &[]).await;
    let rows = digest(&location).await;
    let conflict = compact::attempt_at(&stale, "a.t", "stale").await;
    let log = std::fs::read_to_string(dir.path().join("t/_delta_log/00000000000000000003.json")).expect("commit");
    assert!(conflict.as_ref().is_err_and(crate::error::conflicted), "{conflict:?}\n{log}");
    assert_eq!(digest(&location).await, rows);
}
