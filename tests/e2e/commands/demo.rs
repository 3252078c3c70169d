//! `lakewriter demo`: the one-command start.

use serde_json::Value;

use crate::support::{
    Changes, Lake, Report, Run, customers_with_orders, daily_orders_rows, day, days, distinct_customers, json_lines,
};

/// The two lines after `rerun    JOB …`: the content digests before and after the rerun.
fn rerun_digests<'a>(run: &'a Run, job: &str) -> Vec<&'a str> {
    let rerun = run.stdout.lines().position(|l| l.starts_with(&format!("rerun    {job} "))).expect("a rerun line");
    run.stdout.lines().skip(rerun + 1).take(2).collect()
}

/// The rows of `analytics.weekly_revenue`: for each day of September, the customers with an
/// order in the 7 days up to it (September's days only).
fn weekly_revenue_rows() -> u64 {
    days("2026-09-01", "2026-09-30")
        .map(|dt| {
            let first = (dt - chrono::Duration::days(6)).max(day("2026-09-01"));
            let week: Vec<_> = days(&first.to_string(), &dt.to_string()).map(lakewriter_datagen::orders_for).collect();
            distinct_customers(&week)
        })
        .sum()
}

/// The rows of `core.customers`: a row (or a tombstone) for every customer a September batch
/// changed.
fn september_customers() -> u64 {
    let batches: Vec<_> = days("2026-09-01", "2026-09-30").map(lakewriter_datagen::customers_for).collect();
    distinct_customers(&batches)
}

#[test]
fn the_demo_writes_thirty_partitions_and_a_rerun_changes_nothing_and_can_run_again() {
    let lake = Lake::empty(&[]);
    let run = lake.run_demo(&[]);
    run.assert_code(0);
    let project = lake.project_file().display().to_string();
    run.assert_line(&format!("  project  {project} (written)"));
    run.assert_line(
        "  raw      30 days of orders and customer changes under raw/ (90 files written, 0 kept as they were)",
    );
    run.assert_line_starts("daily_orders: 30 partitions, 30 ok, 0 failed, 1123 rows written, table version 29, ");
    run.assert_line("rerun    daily_orders dt=2026-09-15 -> committed table version 30 (40 rows)");
    run.assert_line_starts("customers: 30 partitions, 30 ok, 0 failed, 553 rows written, table version 29, ");
    run.assert_line(
        "  merged: 56 inserted, 467 updated, 30 deleted (tombstones), 0 unchanged, 328 duplicate source rows dropped",
    );
    run.assert_line("rerun    customers dt=2026-09-10 -> nothing to change: no new table version");
    run.assert_line_starts(&format!(
        "weekly_revenue: 30 partitions, 30 ok, 0 failed, {} rows written, table version 29, ",
        weekly_revenue_rows()
    ));
    run.assert_line("rerun    weekly_revenue dt=2026-09-20 -> committed table version 30 (40 rows)");
    assert_eq!(run.stdout.matches("  unchanged: running the day again left the very same rows\n").count(), 3);
    let tables = [
        ("daily_orders", "analytics.daily_orders", daily_orders_rows("2026-09-01", "2026-09-30"), 30),
        ("customers", "core.customers", september_customers(), 29),
        ("weekly_revenue", "analytics.weekly_revenue", weekly_revenue_rows(), 30),
    ];
    for (job, table, rows, rerun_version) in tables {
        let table = lake.digest(table, None);
        let digest = |label: &str, version: u64| {
            format!("  content digest {label:<6}  {}  ({rows} rows, version {version})", table.digest)
        };
        let expected = [digest("before", 29), digest("after", rerun_version)];
        assert_eq!(rerun_digests(&run, job), expected, "{job}: the digests before and after its rerun");
        assert_eq!((table.rows, table.version), (rows, rerun_version));
    }
    assert_eq!(std::fs::read_dir(lake.root().join("raw/orders")).expect("raw").count(), 30);
    assert_eq!(std::fs::read_dir(lake.root().join("raw/customers_batch")).expect("raw").count(), 30);

    let again = lake.run_demo(&[]);
    again.assert_code(0);
    again.assert_line(&format!("  project  {project} (kept as it was)"));
    again.assert_line(
        "  raw      30 days of orders and customer changes under raw/ (0 files written, 90 kept as they were)",
    );
    again.assert_line_starts("daily_orders: 30 partitions, 30 ok, 0 failed, 1123 rows written, table version 60, ");
    again.assert_line_starts("customers: 30 partitions, 30 ok, 0 failed, 0 rows written, table version 29, ");
    again.assert_line(
        "  merged: 0 inserted, 0 updated, 0 deleted (tombstones), 553 unchanged, 328 duplicate source rows dropped",
    );
    again.assert_line_starts("weekly_revenue: 30 partitions, 30 ok, 0 failed, ");
    assert_eq!(again.stdout.matches("  unchanged: running the day again left the very same rows\n").count(), 3);

    // `digest` prints what `--json digest` holds.
    let digest = lake.digest("analytics.daily_orders", None);
    let text = lake.cli(&["digest", "analytics.daily_orders"]);
    text.assert_code(0);
    assert_eq!(text.stdout, format!("{}  {} rows  version {}\n", digest.digest, digest.rows, digest.version));
}

/// The lines `demo --json` prints of one job, in their order: the backfill's reports (one a day
/// of September, as each day finishes), its summary, the rerun's report, and its verdict.
struct DemoLines {
    backfill: Vec<Report>,
    summary: Value,
    rerun: Report,
    verdict: Value,
}

impl DemoLines {
    /// Takes the lines of `job` from the front of `lines`, asserting what each one is.
    #[track_caller]
    fn take(lines: &mut Vec<Value>, job: &str) -> Self {
        assert!(lines.len() >= 33, "{job}: {} lines left", lines.len());
        let mut taken: Vec<Value> = lines.drain(..33).collect();
        let (verdict, summary) = (taken.pop().expect("verdict"), taken.remove(30));
        let mut backfill: Vec<Report> = taken
            .into_iter()
            .map(|line| {
                assert_eq!(line["job"], job, "a report of {job}: {line}");
                serde_json::from_value(line.clone()).unwrap_or_else(|e| panic!("a report: {line}: {e}"))
            })
            .collect();
        let rerun = backfill.pop().expect("the rerun's report");
        for (what, line, key) in [("summary", &summary, "summary"), ("verdict", &verdict, "rerun")] {
            assert!(line.as_object().is_some_and(|o| o.contains_key(key)), "{job}: not the {what}: {line}");
        }
        Self { backfill, summary, rerun, verdict }
    }

    /// The backfill's `(partition, status, committed, rows written)`, in date order.
    fn outcomes(&self) -> Vec<(String, String, bool, Option<u64>)> {
        let mut outcomes: Vec<_> = self
            .backfill
            .iter()
            .map(|r| (r.partition.clone(), r.status.clone(), r.committed, r.rows_written))
            .collect();
        outcomes.sort();
        outcomes
    }

    /// The summary without its duration, which differs from run to run.
    fn summary(&self) -> Value {
        let mut summary = self.summary.clone();
        let duration = summary["summary"].as_object_mut().and_then(|s| s.remove("duration_ms"));
        assert!(duration.is_some_and(|d| d.is_u64()), "a duration in {}", self.summary);
        summary
    }
}

/// A summary line of `demo --json`: 30 days of `job`, every one ok.
fn september_summary(job: &str, rows_written: u64) -> Value {
    serde_json::json!({"summary": {
        "job": job, "partitions": 30, "ok": 30, "skipped": 0, "failed": 0, "rows_written": rows_written,
        "table_version": 29, "would_change": null, "schema_version": 4
    }})
}

/// The verdict line of a rerun of `job`'s `partition` that left the table's digest `digest` as
/// it was.
fn unchanged(job: &str, partition: &str, digest: &str) -> Value {
    serde_json::json!({"job": job, "rerun": partition, "digest_before": digest, "digest_after": digest, "unchanged": true})
}

#[test]
fn the_demo_json_output_is_json_lines_job_by_job() {
    let lake = Lake::demo();
    let run = lake.run_demo(&["--json"]);
    run.assert_code(0);
    assert_eq!(run.stderr, "", "nothing but JSON lines on stdout");
    let mut lines = json_lines(&run);
    let september = || days("2026-09-01", "2026-09-30").map(|d| d.to_string());

    let daily = DemoLines::take(&mut lines, "daily_orders");
    let written: Vec<_> =
        september().map(|d| (format!("dt={d}"), "ok".to_owned(), true, Some(customers_with_orders(&d)))).collect();
    assert_eq!(daily.outcomes(), written);
    assert_eq!(daily.summary(), september_summary("daily_orders", daily_orders_rows("2026-09-01", "2026-09-30")));
    let r = &daily.rerun;
    assert_eq!(
        (r.partition.as_str(), r.status.as_str(), r.committed, r.rows_written, r.table_version, r.note.as_deref()),
        (
            "dt=2026-09-15",
            "ok",
            true,
            Some(customers_with_orders("2026-09-15")),
            Some(30),
            Some("was already fresh (same code and inputs)")
        )
    );
    // The digest the README shows.
    assert_eq!(lake.digest("analytics.daily_orders", None).digest, "85ba7f3654b5f7e68d7b974d3e503076");
    assert_eq!(daily.verdict, unchanged("daily_orders", "dt=2026-09-15", "85ba7f3654b5f7e68d7b974d3e503076"));

    let customers = DemoLines::take(&mut lines, "customers");
    let outcomes: Vec<_> = customers.outcomes().into_iter().map(|(p, s, c, _)| (p, s, c)).collect();
    assert_eq!(outcomes, september().map(|d| (format!("dt={d}"), "ok".to_owned(), true)).collect::<Vec<_>>());
    // A merge runs one day at a time, in date order: a version a day.
    let versions: Vec<Option<u64>> = customers.backfill.iter().map(|r| r.table_version).collect();
    assert_eq!(versions, (0..30).map(Some).collect::<Vec<_>>());
    // 553 rows, as the text output and the README show.
    assert_eq!(customers.backfill.iter().filter_map(|r| r.rows_written).sum::<u64>(), 553);
    assert_eq!(customers.summary(), september_summary("customers", 553));
    assert_rerun_of_customers(&customers.rerun);
    assert_eq!(lake.digest("core.customers", None).digest, "003b414d518d1c5e88436a4f61f2e458");
    assert_eq!(customers.verdict, unchanged("customers", "dt=2026-09-10", "003b414d518d1c5e88436a4f61f2e458"));

    // The job that reads daily_orders' table runs after it, over the same days.
    let weekly = DemoLines::take(&mut lines, "weekly_revenue");
    assert_eq!(weekly.summary(), september_summary("weekly_revenue", weekly_revenue_rows()));
    assert_eq!((weekly.rerun.partition.as_str(), weekly.rerun.table_version), ("dt=2026-09-20", Some(30)));
    let digest = lake.digest("analytics.weekly_revenue", None).digest;
    assert_eq!(weekly.verdict, unchanged("weekly_revenue", "dt=2026-09-20", &digest));
    // Last, the closing line: three jobs, 93 partition runs (30 days and a rerun each).
    let pipeline = lines.pop().expect("the closing line");
    assert_eq!(
        (&pipeline["pipeline"]["jobs"], &pipeline["pipeline"]["ok"], &pipeline["pipeline"]["partitions"]),
        (&3.into(), &3.into(), &93.into()),
        "{pipeline}"
    );
    assert!(lines.is_empty(), "lines after the weekly_revenue job: {lines:?}");
}

/// The rerun of `customers` for 2026-09-10: every key of the day's batch is known, nothing is
/// committed.
#[track_caller]
fn assert_rerun_of_customers(r: &Report) {
    assert_eq!(
        (r.partition.as_str(), r.status.as_str(), r.committed, r.rows_written, r.table_version, r.note.as_deref()),
        (
            "dt=2026-09-10",
            "ok",
            false,
            Some(0),
            Some(29),
            Some("already fresh: nothing to change, no new table version")
        )
    );
    let batch = lakewriter_datagen::customers_for(day("2026-09-10"));
    let keys = distinct_customers(std::slice::from_ref(&batch));
    let rows = batch.num_rows() as u64;
    let known = Changes { inserted: 0, updated: 0, deleted: 0, unchanged: keys, duplicates_dropped: rows - keys };
    assert_eq!(r.changes.as_ref(), Some(&known));
}
