//! A job written as a statement is held to the rules of the write mode it maps onto, and reported
//! as that mode: an `INSERT INTO` job is an append (no `change_vs_previous`, runs once per
//! partition), an `INSERT OVERWRITE` job of an empty day leaves its partition empty and says so,
//! and a `MERGE INTO` job's changes are the rows delta-rs counted, no more.

use std::collections::BTreeSet;

use crate::support::{Checks, Job, Lake, Project, json_lines, orders};

const DAY: &str = "2026-09-30";

/// Appends a day's orders, as a statement.
const INSERT_INTO: &str = "INSERT INTO analytics.events PARTITION (dt = $dt) \
                           SELECT order_id, amount FROM raw.orders WHERE dt = $dt";

fn lake(job: Job) -> Lake {
    let lake = Lake::new(DAY, DAY);
    lake.set_project(&Project::new().job(job));
    lake
}

#[test]
fn an_insert_into_job_cannot_have_change_vs_previous_as_an_append_cannot() {
    let refused = "checks.change_vs_previous is not available for a job written as INSERT INTO (an append): it compares a result with the rows it replaces, and this mode replaces none";
    for (job, says) in [
        (Job::statement("events", "analytics.events", INSERT_INTO), refused),
        (
            Job::append("events", "analytics.events")
                .sql("SELECT order_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt"),
            "checks.change_vs_previous is not available for write = \"append\": it compares a result with the rows it replaces",
        ),
    ] {
        let lake = lake(job.checks(Checks::new().change_vs_previous(50.0)));
        for run in [lake.cli(&["lint"]), lake.cli(&["run", "events", "--dt", DAY])] {
            run.assert_code(2);
            let error = format!("error: {}: job `events`: {says}", lake.project_file().display());
            assert!(run.stderr.starts_with(&error), "{}", run.stderr);
        }
        assert!(!lake.root().join("analytics").exists(), "nothing written");
    }
}

#[test]
fn plan_says_an_insert_into_job_runs_once_as_an_append() {
    let lake = lake(Job::statement("events", "analytics.events", INSERT_INTO));
    lake.cli(&["run", "events", "--dt", DAY]).assert_code(0);
    let edited = Project::new().job(Job::statement("events", "analytics.events", INSERT_INTO)).edited_sql(
        "events",
        "SELECT order_id, amount",
        "SELECT order_id, amount * 2 AS amount",
    );
    lake.set_project(&edited);
    let plan = lake.cli(&["plan", "events", "--from", DAY, "--to", DAY]);
    plan.assert_code(0);
    plan.assert_line(&format!(
        "  dt={DAY}    run   stale: code changed (an append runs once: it skips unless --force)"
    ));
}

#[test]
fn an_insert_overwrite_job_of_an_empty_day_says_the_partition_is_now_empty() {
    let sql = "INSERT OVERWRITE analytics.events PARTITION (dt = $dt) \
               SELECT order_id, amount FROM raw.orders WHERE dt = $dt AND amount < 0";
    let twin = Job::new("events", "analytics.events")
        .sql("SELECT order_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt AND amount < 0");
    for job in [Job::statement("events", "analytics.events", sql), twin] {
        let lake = lake(job);
        let run = lake.cli(&["run", "events", "--dt", DAY]);
        run.assert_code(0);
        let line = run.stdout.lines().next().unwrap_or_default();
        assert!(line.starts_with(&format!("  dt={DAY}  ok            0 rows  version 0")), "{line}");
        assert!(line.contains("  (no rows: the partition is now empty)"), "{line}");
    }
}

#[test]
fn a_merge_into_job_reports_the_rows_delta_rs_counted() {
    let sql = "MERGE INTO analytics.orders_by_id AS t \
               USING (SELECT order_id, amount FROM raw.orders WHERE dt = $dt) AS s ON t.order_id = s.order_id \
               WHEN NOT MATCHED THEN INSERT (order_id, amount) VALUES (s.order_id, s.amount)";
    let lake = lake(Job::statement("orders", "analytics.orders_by_id", sql));
    let first = lake.cli(&["--json", "run", "orders", "--dt", DAY]);
    first.assert_code(0);
    let lines = json_lines(&first);
    let changes = lines[0]["changes"].as_object().expect("a merge's counts");
    let keys: BTreeSet<&str> = changes.keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["inserted", "updated", "deleted"]), "{changes:?}");
    let counted = (&changes["inserted"], &changes["updated"], &changes["deleted"]);
    assert_eq!(counted, (&orders(DAY).into(), &0.into(), &0.into()));

    lake.set_project(&Project::new().job(Job::statement("orders", "analytics.orders_by_id", sql)).edited_sql(
        "orders",
        "WHEN NOT MATCHED",
        "WHEN MATCHED THEN UPDATE SET amount = s.amount WHEN NOT MATCHED",
    ));
    let again = lake.cli(&["run", "orders", "--dt", DAY]);
    again.assert_code(0);
    let line = again.stdout.lines().next().unwrap_or_default();
    let n = orders(DAY);
    assert!(line.contains(&format!("  (0 inserted, {n} updated, 0 deleted)")), "{line}");
    assert!(!line.contains("unchanged"), "{line}");
}
