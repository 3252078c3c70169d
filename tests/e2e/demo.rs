//! `lakewriter demo`: the one-command start.

use crate::support::lakewriter;

#[test]
fn the_demo_writes_thirty_partitions_and_a_rerun_changes_nothing_and_can_run_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = lakewriter(&["--color", "never", "demo", "demo"], dir.path());
    run.assert_code(0);
    assert!(run.stdout.contains("30 days of orders and customer changes"), "{}", run.stdout);
    assert!(run.stdout.contains("daily_orders: 30 partitions, 30 ok, 0 failed"), "{}", run.stdout);
    assert!(run.stdout.contains("table version 29"), "{}", run.stdout);
    assert!(run.stdout.contains("customers: 30 partitions, 30 ok, 0 failed"), "{}", run.stdout);
    assert!(run.stdout.contains("duplicate source rows dropped"), "{}", run.stdout);
    assert!(
        run.stdout.contains("rerun    customers dt=2026-09-10 -> nothing to change: no new table version"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout.matches("unchanged: running the day again").count(), 2, "{}", run.stdout);
    assert_eq!(std::fs::read_dir(dir.path().join("demo/lake/raw/orders")).expect("raw").count(), 30);
    assert_eq!(std::fs::read_dir(dir.path().join("demo/lake/raw/customers_batch")).expect("raw").count(), 30);

    let again = lakewriter(&["--color", "never", "demo", "demo"], dir.path());
    again.assert_code(0);
    assert!(
        again.stdout.contains("kept as it was") && again.stdout.contains("90 kept as they were"),
        "{}",
        again.stdout
    );
    assert!(again.stdout.contains("daily_orders: 30 partitions, 30 ok, 0 failed"), "{}", again.stdout);
    assert!(again.stdout.contains("customers: 30 partitions, 30 ok, 0 failed"), "{}", again.stdout);
    assert_eq!(again.stdout.matches("unchanged: running the day again").count(), 2, "{}", again.stdout);

    let digest = |args: &[&str]| {
        let run = lakewriter(args, dir.path());
        run.assert_code(0);
        run.stdout.split_whitespace().next().unwrap_or_default().to_owned()
    };
    let project = dir.path().join("demo/lakewriter.toml");
    let project = project.to_str().expect("utf-8");
    assert_eq!(digest(&["--project", project, "digest", "analytics.daily_orders"]).len(), 32);
}
