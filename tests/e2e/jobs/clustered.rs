//! A merge into a table clustered by its key (`cluster_by`) reads and rewrites only the files
//! whose range of the key holds a key of its batch. The orders' ids are numbered by day, so each
//! day's backfill adds one file holding that day's range of ids; a batch of two days' orders then
//! touches those two days' files, where delta-rs's own pruning (the batch's smallest and greatest
//! key) would read every file between them.

use crate::support::s3::S3;
use crate::support::{Job, Lake, Project, day, days};

const FROM: &str = "2026-09-01";
const TO: &str = "2026-09-04";
const DAY: &str = "2026-09-03";
const TABLE: &str = "analytics/orders_by_id";

/// The day's orders merged on `order_id` with `version` as their version; from `version` 2, the
/// orders of the first day too.
fn job(version: u32, cluster_by: &[&str]) -> Job {
    let days = if version == 1 { "dt = $dt".to_owned() } else { format!("dt = $dt OR dt = DATE '{FROM}'") };
    let job = Job::merge("orders_by_id", "analytics.orders_by_id", &["order_id"], "version").cluster_by(cluster_by);
    let job = if cluster_by.is_empty() { job } else { job.target_file_size("1 MiB") };
    job.sql(format!("SELECT order_id, amount, {version} AS version FROM raw.orders WHERE {days}"))
}

fn rows(days: &[&str]) -> u64 {
    days.iter().map(|d| lakewriter_datagen::orders_for(day(d)).num_rows() as u64).sum()
}

/// Backfills the four days (one file each), then merges the newer version of the first day's and
/// `DAY`'s orders: the merge's report.
fn merged(lake: &Lake, cluster_by: &[&str]) -> crate::support::Report {
    lake.set_project(&Project::new().job(job(1, cluster_by)));
    for dt in days(FROM, TO) {
        let report = lake.cli(&["--json", "run", "orders_by_id", "--dt", &dt.to_string()]).assert_code(0).json().0;
        assert_eq!(report[0].files_removed, Some(0), "{dt}: new keys, in no file's range, rewrite no file");
    }
    lake.set_project(&Project::new().job(job(2, cluster_by)));
    let report = lake.cli(&["--json", "run", "orders_by_id", "--dt", DAY]).assert_code(0).json().0.remove(0);
    let changes = report.changes.as_ref().expect("a merge's counts");
    assert_eq!((changes.inserted, changes.updated, changes.unchanged), (0, rows(&[FROM, DAY]), 0));
    report
}

/// Backfills the second and fourth days, then merges the first day's and `DAY`'s orders: new keys
/// all, written sorted into one file whose range of ids spans the second day's file.
fn spanning(lake: &Lake, cluster_by: &[&str]) {
    lake.set_project(&Project::new().job(job(1, cluster_by)));
    for dt in ["2026-09-02", TO] {
        lake.cli(&["run", "orders_by_id", "--dt", dt]).assert_code(0);
    }
    lake.set_project(&Project::new().job(job(2, cluster_by)));
    let report = lake.cli(&["--json", "run", "orders_by_id", "--dt", DAY]).assert_code(0).json().0.remove(0);
    let changes = report.changes.as_ref().expect("a merge's counts");
    assert_eq!((changes.inserted, changes.updated), (rows(&[FROM, DAY]), 0));
}

/// The `operationMetrics` of the commit `report` made.
fn commit_metrics(lake: &Lake, report: &crate::support::Report) -> serde_json::Value {
    lake.commit_info(TABLE, report.table_version.expect("a commit"))["operationMetrics"].clone()
}

#[test]
fn a_clustered_merge_rewrites_only_the_files_whose_key_range_holds_a_key_of_its_batch() {
    let lake = Lake::new(FROM, TO);
    let report = merged(&lake, &["order_id"]);
    // The table the job created cuts its files at the job's size.
    let created = std::fs::read_to_string(lake.root().join(TABLE).join("_delta_log/00000000000000000000.json"));
    let created = created.expect("the first commit");
    assert!(created.contains(r#""delta.targetFileSize":"1048576""#), "{created}");
    let metrics = commit_metrics(&lake, &report);
    assert_eq!(metrics["num_target_files_scanned"], serde_json::json!(2), "the two days' files: {metrics}");
    assert_eq!(metrics["num_target_files_removed"], serde_json::json!(2), "{metrics}");
    assert_eq!(report.files_removed, Some(2));
    // Each file is written again as a file of its own: the table's ranges stay apart.
    assert_eq!(report.files_added, Some(2), "{report:?}");
    let (removed, added) = (report.bytes_removed.expect("bytes rewritten"), report.bytes_added.expect("bytes"));
    assert!(removed > 0 && added > 0, "{removed} bytes rewritten, {added} written");

    // Run twice: the batch's rows are the newest already; nothing changes.
    let digest = lake.digest("analytics.orders_by_id", None);
    let again = lake.cli(&["--json", "run", "orders_by_id", "--dt", DAY]).assert_code(0).json().0.remove(0);
    assert_eq!(again.changes.expect("counts").unchanged, rows(&[FROM, DAY]));
    assert_eq!(lake.digest("analytics.orders_by_id", None).digest, digest.digest, "a second run");

    // The same rows merged without clustering: delta-rs reads every file between the batch's
    // smallest and greatest key (the three first days'), rewrites the two with a match, and the
    // table ends the same.
    let plain = Lake::new(FROM, TO);
    let report = merged(&plain, &[]);
    let metrics = commit_metrics(&plain, &report);
    assert_eq!(metrics["num_target_files_scanned"], serde_json::json!(3), "{metrics}");
    assert_eq!(report.files_removed, Some(2));
    assert_eq!(plain.digest("analytics.orders_by_id", None).digest, digest.digest, "clustered or not, the same rows");
}

#[test]
fn maintain_re_sorts_the_files_whose_ranges_a_merge_made_overlap() {
    use crate::support::maintain::maintain;
    // A target size below every file's: no file is small, so only overlapping ranges count.
    let compact = ["orders_by_id", "--only", "compact", "--target-file-size", "1"];
    let lake = Lake::new(FROM, TO);
    spanning(&lake, &["order_id"]);
    let digest = lake.digest("analytics.orders_by_id", None);
    // The merge's new file holds the first and third days' ids: its range overlaps the second
    // day's file, not the fourth's.
    let planned = maintain(&lake, &[&compact[..], &["--dry-run"]].concat()).remove(0);
    let partitions = planned.partitions.expect("the partitions to rewrite");
    assert_eq!(partitions.len(), 1, "{partitions:?}");
    assert!(partitions[0].files >= 2, "{partitions:?}");
    let compacted = maintain(&lake, &compact).remove(0);
    assert!(compacted.committed, "{compacted:?}");
    assert_eq!(compacted.files_removed, Some(partitions[0].files));
    assert_eq!(lake.digest("analytics.orders_by_id", None).digest, digest.digest, "compaction changes no row");
    let again = maintain(&lake, &[&compact[..], &["--dry-run"]].concat()).remove(0);
    assert_eq!(again.partitions.as_deref(), Some(&[][..]), "the files' ranges are apart: {again:?}");
    assert!(again.note.as_deref().is_some_and(|n| n.contains("cluster_by ranges overlap")), "{again:?}");

    // Without cluster_by, the same files are not compared by range: nothing to rewrite.
    let plain = Lake::new(FROM, TO);
    spanning(&plain, &[]);
    let planned = maintain(&plain, &[&compact[..], &["--dry-run"]].concat()).remove(0);
    assert_eq!(planned.partitions.as_deref(), Some(&[][..]), "{planned:?}");
}

#[test]
fn a_cluster_by_column_the_result_lacks_fails_the_run_and_names_it() {
    let lake = Lake::new(FROM, TO);
    lake.set_project(&Project::new().job(job(1, &["order_id", "region"])));
    let out = lake.cli(&["run", "orders_by_id", "--dt", DAY]);
    out.assert_code(1);
    let expected = "job `orders_by_id`: cluster_by column `region` is not a column of the job's result";
    assert!(out.stderr.contains(expected), "{}", out.stderr);
    assert!(!lake.root().join(TABLE).exists(), "no table is written");
}

#[test]
fn on_s3_a_clustered_merge_rewrites_only_the_files_whose_key_range_holds_a_key_of_its_batch() {
    let s3 = S3::new("clustered");
    for dt in days(FROM, TO) {
        let batch = lakewriter_datagen::orders_for(dt);
        s3.put(
            &format!("raw/orders/dt={dt}/part-00000.parquet"),
            lakewriter_datagen::parquet_bytes(&batch).expect("parquet"),
        );
    }
    let report = merged(&s3.lake, &["order_id"]);
    assert_eq!(report.files_removed, Some(2), "the two days' files rewritten");
    let digest = s3.lake.digest("analytics.orders_by_id", None);
    s3.lake.cli(&["run", "orders_by_id", "--dt", DAY]).assert_code(0);
    assert_eq!(s3.lake.digest("analytics.orders_by_id", None).digest, digest.digest, "a second run");
}
