//! A merge into an existing table reads the table once: the scan that classifies its batch
//! (inserted, updated, deleted, unchanged) is the scan that finds the files its changes fall in
//! and writes them again. Each file it reads is read once — no byte of it twice — and the counts
//! it reports are those of its commit.

use std::collections::BTreeMap;

use crate::support::fault_proxy::Proxy;
use crate::support::s3::S3;
use crate::support::{Job, Lake, Project, day, days};

const FROM: &str = "2026-09-01";
const TO: &str = "2026-09-04";
const DAY: &str = "2026-09-03";
const TABLE: &str = "analytics/orders_by_id";

/// The day's orders merged on `order_id` with `version` as their version; from `version` 2, the
/// orders of the first day too. Order ids are numbered by day, so each day's run adds one file
/// holding that day's range of ids.
fn job(version: u32) -> Job {
    let days = if version == 1 { "dt = $dt".to_owned() } else { format!("dt = $dt OR dt = DATE '{FROM}'") };
    Job::merge("orders_by_id", "analytics.orders_by_id", &["order_id"], "version")
        .sql(format!("SELECT order_id, amount, {version} AS version FROM raw.orders WHERE {days}"))
}

fn rows(days: &[&str]) -> u64 {
    days.iter().map(|d| lakewriter_datagen::orders_for(day(d)).num_rows() as u64).sum()
}

#[test]
fn a_merge_counts_what_its_commit_did_and_a_replay_scans_without_writing() {
    let lake = Lake::new(FROM, TO);
    lake.set_project(&Project::new().job(job(1)));
    lake.cli(&["backfill", "orders_by_id", "--from", FROM, "--to", TO]).assert_code(0);
    lake.set_project(&Project::new().job(job(2)));
    let report = lake.cli(&["--json", "run", "orders_by_id", "--dt", DAY]).assert_code(0).json().0.remove(0);
    let changes = report.changes.expect("a merge's counts");
    assert_eq!((changes.inserted, changes.updated, changes.deleted, changes.unchanged), (0, rows(&[FROM, DAY]), 0, 0));
    let info = lake.commit_info(TABLE, report.table_version.expect("a commit"));
    assert!(
        info["clientVersion"].as_str().is_some_and(|v| v.starts_with("lakewriter.")),
        "lakewriter's own merge: {info}"
    );
    let metrics = &info["operationMetrics"];
    assert_eq!(metrics["num_target_rows_updated"], serde_json::json!(changes.updated), "{metrics}");
    assert_eq!(metrics["num_target_rows_inserted"], serde_json::json!(changes.inserted), "{metrics}");
    // The two days' files are written again whole: their rows that did not change are copied.
    assert_eq!(metrics["num_target_files_removed"], serde_json::json!(2), "{metrics}");
    assert_eq!(metrics["num_target_rows_copied"], serde_json::json!(0), "{metrics}");
    assert_eq!(report.rows_written, Some(changes.updated));

    // A replay finds every row as new as its own: it scans, changes nothing and writes no file.
    let files = lake.commit_count(TABLE);
    let digest = lake.digest("analytics.orders_by_id", None);
    let again = lake.cli(&["--json", "run", "orders_by_id", "--dt", DAY]).assert_code(0).json().0.remove(0);
    let changes = again.changes.expect("counts");
    assert_eq!((changes.updated, changes.unchanged), (0, rows(&[FROM, DAY])));
    assert_eq!(lake.commit_count(TABLE), files, "nothing committed: the partition state is the run's already");
    assert_eq!(lake.digest("analytics.orders_by_id", None).digest, digest.digest, "a second run");
}

/// The byte ranges of each data file of the table that `seen` GETs, by file.
fn reads(seen: &[crate::support::fault_proxy::Seen], table: &str) -> BTreeMap<String, Vec<(u64, u64)>> {
    let mut reads: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for request in seen.iter().filter(|r| r.method == "GET") {
        let Some((_, file)) = request.target.split_once(&format!("{table}/")) else { continue };
        if !(file.starts_with("part-") && file.ends_with(".parquet")) {
            continue;
        }
        let range = request.range.as_deref().and_then(|r| r.strip_prefix("bytes="));
        let (first, last) = range.and_then(|r| r.split_once('-')).expect("a data file is read by byte ranges");
        let bounds = (first.parse().expect("first byte"), last.parse().expect("last byte"));
        reads.entry(file.to_owned()).or_default().push(bounds);
    }
    reads
}

#[test]
fn on_s3_a_merge_reads_no_byte_of_the_tables_files_twice() {
    let proxy = Proxy::start();
    let s3 = S3::new("merge-scan");
    for dt in days(FROM, TO) {
        let bytes = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(dt)).expect("parquet");
        s3.put(&format!("raw/orders/dt={dt}/part-00000.parquet"), bytes);
    }
    s3.lake.set_project(&Project::new().job(job(1)));
    s3.lake.cli(&["backfill", "orders_by_id", "--from", FROM, "--to", TO]).assert_code(0);
    let watched = Lake::empty(&s3.env_via(&proxy.endpoint));
    watched.set_project(&Project::new().job(job(2)));
    proxy.clear();
    let report = watched.cli(&["--json", "run", "orders_by_id", "--dt", DAY]).assert_code(0).json().0.remove(0);
    let changes = report.changes.expect("a merge's counts");
    assert_eq!((changes.inserted, changes.updated, changes.unchanged), (0, rows(&[FROM, DAY]), 0));
    assert_eq!(report.files_removed, Some(2), "the two days' files written again");

    let table = format!("{}analytics/orders_by_id", s3.root().trim_start_matches("s3://"));
    let reads = reads(&proxy.requests(), &table);
    // The files between the batch's smallest and greatest key: the first three days'.
    assert_eq!(reads.len(), 3, "{reads:?}");
    for (file, mut ranges) in reads {
        ranges.sort_unstable();
        for pair in ranges.windows(2) {
            assert!(pair[0].1 < pair[1].0, "{file}: bytes {:?} and {:?} both read", pair[0], pair[1]);
        }
    }
    let digest = s3.lake.digest("analytics.orders_by_id", None);
    watched.cli(&["run", "orders_by_id", "--dt", DAY]).assert_code(0);
    assert_eq!(s3.lake.digest("analytics.orders_by_id", None).digest, digest.digest, "a second run");
}
