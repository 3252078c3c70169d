//! `lakewriter demo`: the one-command start.

use crate::support::{Lake, Run};

/// The digests on the two lines after `rerun    JOB …`: `content digest before  DIGEST  (…)`, then
/// `content digest after   DIGEST  (…)`.
fn rerun_digests<'a>(run: &'a Run, job: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = run.stdout.lines().collect();
    let rerun = lines.iter().position(|l| l.starts_with(&format!("rerun    {job} "))).expect("a rerun line");
    let digests = lines[rerun + 1..].iter().zip(["before", "after"]).map(|(line, label)| {
        match line.split_whitespace().collect::<Vec<_>>()[..] {
            ["content", "digest", l, digest, ..] if l == label => digest,
            _ => panic!("not the digest {label}: {line}\n{}", run.stdout),
        }
    });
    digests.collect()
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
    assert_eq!(run.stdout.matches("  unchanged: running the day again left the very same rows\n").count(), 2);
    for (job, table) in [("daily_orders", "analytics.daily_orders"), ("customers", "core.customers")] {
        let table = lake.digest(table, None).digest;
        assert_eq!(rerun_digests(&run, job), [table.as_str(); 2], "{job}: the digests before and after its rerun");
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
    assert_eq!(again.stdout.matches("  unchanged: running the day again left the very same rows\n").count(), 2);

    // `digest` prints what `--json digest` holds.
    let digest = lake.digest("analytics.daily_orders", None);
    let text = lake.cli(&["digest", "analytics.daily_orders"]);
    text.assert_code(0);
    assert_eq!(text.stdout, format!("{}  {} rows  version {}\n", digest.digest, digest.rows, digest.version));
}
