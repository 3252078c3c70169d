//! `lakewriter lint`, and the same determinism checks before every run.

use crate::support::{Job, Lake, Project, daily_orders};

const WITH_NOW: &str = "SELECT customer_id, COUNT(*) AS orders, now() AS loaded_at, $dt AS dt \
     FROM raw.orders WHERE dt = $dt GROUP BY customer_id";

#[test]
fn a_clock_function_fails_lint_and_the_run_unless_the_job_allows_it() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.set_project(&daily_orders(WITH_NOW));

    for args in [&["lint"][..], &["lint", "daily_orders"]] {
        let run = lake.cli(args);
        run.assert_code(1);
        assert!(run.stdout.contains("error: job daily_orders: nondeterministic: now()"), "{}", run.stdout);
        assert!(run.stdout.contains("allow_nondeterministic = true"), "{}", run.stdout);
        assert!(run.stdout.contains("lint: 1 job checked, 1 error, 0 warnings"), "{}", run.stdout);
    }

    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    assert!(run.stderr.contains("job daily_orders: nondeterministic: now()"), "{}", run.stderr);
    assert!(run.stdout.contains("FAILED"), "{}", run.stdout);
    assert_eq!(lake.commit_count("analytics/daily_orders"), 0, "nothing committed");

    let allowed = Job::new("daily_orders", "analytics.daily_orders").sql(WITH_NOW).allow_nondeterministic();
    lake.set_project(&Project::new().job(allowed));
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert!(!run.stdout.contains("error:") && !run.stdout.contains("warning:"), "{}", run.stdout);
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    assert_eq!(lake.commit_count("analytics/daily_orders"), 1);
}

#[test]
fn warnings_are_json_lines_with_their_rule_ids_and_logged_once_per_run() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    lake.set_project(&daily_orders(
        "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount) AS n, DATE '2026-09-01' AS dt \
         FROM raw.orders",
    ));
    let run = lake.cli(&["--json", "lint"]);
    run.assert_code(0);
    let lines: Vec<serde_json::Value> =
        run.stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}"))).collect();
    let (summary, findings) = lines.split_last().expect("lines");
    let mut rules: Vec<&str> = findings.iter().map(|f| f["rule"].as_str().expect("rule")).collect();
    rules.sort_unstable();
    assert_eq!(rules, ["order_not_total", "outside_partition", "unbounded_scan"], "{}", run.stdout);
    for finding in findings {
        assert_eq!(finding["severity"], "warning", "{finding}");
        assert_eq!(finding["job"], "daily_orders", "{finding}");
        assert!(finding["construct"].is_string() && finding["message"].is_string(), "{finding}");
    }
    assert_eq!(summary["summary"]["warnings"], 3, "{summary}");
    assert_eq!(summary["summary"]["errors"], 0, "{summary}");

    // A job with one warning runs; the warning is logged once for the whole backfill.
    // ROW_NUMBER is unsigned; the table stores it as a long (Delta has no unsigned types), and
    // the second day's write must still match the table.
    lake.set_project(&daily_orders(
        "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount) AS n, $dt AS dt \
         FROM raw.orders WHERE dt = $dt",
    ));
    let run = lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02", "--parallel", "1"]);
    run.assert_code(0);
    assert_eq!(
        run.stderr.matches("ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount)").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("job daily_orders: order_not_total: ROW_NUMBER()"), "{}", run.stderr);

    // Declaring the key the order ends with makes it total.
    let total = daily_orders(
        "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount, order_id) AS n, $dt AS dt \
         FROM raw.orders WHERE dt = $dt",
    );
    lake.set_project(&total.source_unique("raw.orders", &["order_id"]));
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert!(run.stdout.contains("lint: 1 job checked, 0 errors, 0 warnings"), "{}", run.stdout);
}

#[test]
fn the_demo_project_lints_clean() {
    let lake = Lake::demo();
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "lint: 2 jobs checked, 0 errors, 0 warnings\n", "{}", run.stderr);
    let run = lake.cli(&["lint", "no_such_job"]);
    run.assert_code(2);
    let file = lake.project_file().display().to_string();
    assert_eq!(run.stderr, format!("error: {file}: no job `no_such_job`; jobs here: customers, daily_orders\n"));
}
