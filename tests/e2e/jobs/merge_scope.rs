//! A merge into a table partitioned by a column of its key reads and rewrites only the partitions
//! its batch holds: a key's row is in the partition its key names, so no file of another
//! partition is scanned, removed or written.

use crate::support::s3::S3;
use crate::support::{Job, Lake, Project, day, days};

const FROM: &str = "2026-09-01";
const TO: &str = "2026-09-04";
const DAY: &str = "2026-09-03";
const TABLE: &str = "analytics/orders_by_day";

/// The day's orders, merged on (dt, order_id) with `version` as their version.
fn job(version: u32) -> Job {
    Job::merge("orders_by_day", "analytics.orders_by_day", &["dt", "order_id"], "version")
        .partition_by("dt")
        .sql(format!("SELECT order_id, amount, {version} AS version, $dt AS dt FROM raw.orders WHERE dt = $dt"))
}

/// Every partition folder's files (name and size), by partition.
fn files(lake: &Lake) -> Vec<(String, Vec<(String, u64)>)> {
    days(FROM, TO)
        .map(|d| {
            let partition = format!("dt={d}");
            let files = lake.partition_files(TABLE, &partition);
            (partition, files)
        })
        .collect()
}

#[test]
fn a_merge_rewrites_only_the_partitions_of_its_keys() {
    let lake = Lake::new(FROM, TO);
    lake.set_project(&Project::new().job(job(1)));
    lake.cli(&["backfill", "orders_by_day", "--from", FROM, "--to", TO]).assert_code(0);
    let before = files(&lake);
    let rows = lakewriter_datagen::orders_for(day(DAY)).num_rows() as u64;

    // A newer version of one day's rows: every row of that day is replaced, nothing else.
    lake.set_project(&Project::new().job(job(2)));
    let report = lake.cli(&["--json", "run", "orders_by_day", "--dt", DAY]).assert_code(0).json().0.remove(0);
    let changes = report.changes.expect("a merge's counts");
    assert_eq!((changes.inserted, changes.updated, changes.unchanged), (0, rows, 0));
    let after = files(&lake);
    for ((partition, old), (_, new)) in before.iter().zip(&after) {
        if partition == &format!("dt={DAY}") {
            assert!(new.len() > old.len(), "{partition}: the merge adds its files beside the old ones");
            // The bytes reported rewritten are the day's old file; the bytes added, its new ones.
            let old_bytes: u64 = old.iter().map(|(_, size)| size).sum();
            let new_bytes: u64 = new.iter().filter(|f| !old.contains(f)).map(|(_, size)| size).sum();
            assert_eq!((report.bytes_removed, report.bytes_added), (Some(old_bytes), Some(new_bytes)));
        } else {
            assert_eq!(old, new, "{partition}: a file of another partition was written");
        }
    }
    let version = report.table_version.expect("a commit");
    let info = lake.commit_info(TABLE, version);
    let metrics = &info["operationMetrics"];
    assert_eq!(metrics["num_target_files_removed"], serde_json::json!(1), "{metrics}");
    assert_eq!(metrics["num_target_files_scanned"], serde_json::json!(1), "only the day's file is scanned: {metrics}");

    // Run twice: the day's rows are the newest already.
    let digest = lake.digest("analytics.orders_by_day", None);
    let again = lake.cli(&["--json", "run", "orders_by_day", "--dt", DAY]).assert_code(0).json().0.remove(0);
    assert_eq!(again.changes.expect("counts").unchanged, rows);
    assert_eq!(lake.digest("analytics.orders_by_day", None).digest, digest.digest, "a second run");
}

#[test]
fn on_s3_a_merge_rewrites_only_the_partitions_of_its_keys() {
    let s3 = S3::new("merge-scope");
    for dt in days(FROM, TO) {
        let batch = lakewriter_datagen::orders_for(dt);
        s3.put(
            &format!("raw/orders/dt={dt}/part-00000.parquet"),
            lakewriter_datagen::parquet_bytes(&batch).expect("parquet"),
        );
    }
    s3.lake.set_project(&Project::new().job(job(1)));
    s3.lake.cli(&["backfill", "orders_by_day", "--from", FROM, "--to", TO]).assert_code(0);
    s3.lake.set_project(&Project::new().job(job(2)));
    let report = s3.lake.cli(&["--json", "run", "orders_by_day", "--dt", DAY]).assert_code(0).json().0.remove(0);
    let rows = lakewriter_datagen::orders_for(day(DAY)).num_rows() as u64;
    assert_eq!(report.changes.expect("counts").updated, rows);
    assert_eq!((report.files_removed, report.files_added), (Some(1), Some(1)), "one day's file rewritten");
    let (added, removed) = (report.bytes_added.expect("bytes added"), report.bytes_removed.expect("bytes removed"));
    assert!(added > 0 && removed > 0, "{added} bytes added, {removed} removed");
    let digest = s3.lake.digest("analytics.orders_by_day", None);
    s3.lake.cli(&["run", "orders_by_day", "--dt", DAY]).assert_code(0);
    assert_eq!(s3.lake.digest("analytics.orders_by_day", None).digest, digest.digest, "a second run");
}
