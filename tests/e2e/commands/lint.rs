//! `lakewriter lint`, and the same determinism checks before every run.

use crate::support::{Job, Lake, Project, daily_orders, json_lines};

/// What the `order_not_total` warning says after the window it names.
const ORDER_NOT_TOTAL: &str = "its PARTITION BY and ORDER BY columns cover no declared unique key of the tables it \
     reads, so rows that tie come in file and thread order and the rows it keeps or the numbers it gives can differ \
     between runs; order by a unique key as well, or declare the source's key with [sources.\"schema.table\"] unique \
     = [...]";

const WITH_NOW: &str = "SELECT customer_id, COUNT(*) AS orders, now() AS loaded_at, $dt AS dt \
     FROM raw.orders WHERE dt = $dt GROUP BY customer_id";

/// `daily_orders` of `sql` in DataFusion's dialect, whose clock functions (`now()`) it plans and
/// lint finds nondeterministic; the `spark` dialect refuses them (see the last test).
fn datafusion_job(sql: &str) -> Project {
    Project::new().job(Job::new("daily_orders", "analytics.daily_orders").sql(sql).datafusion())
}

#[test]
fn a_clock_function_fails_lint_and_the_run_unless_the_job_allows_it() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.set_project(&datafusion_job(WITH_NOW));

    let finding = "job daily_orders: nondeterministic: now() differs between runs of the same partition; compute \
                   from $dt and the data instead, or set `allow_nondeterministic = true` on job `daily_orders` to \
                   allow it";
    for args in [&["lint"][..], &["lint", "daily_orders"]] {
        let run = lake.cli(args);
        run.assert_code(1);
        assert_eq!(run.stdout, format!("error: {finding}\nlint: 1 job checked, 1 error, 0 warnings\n"));
    }

    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    assert_eq!(run.stderr, format!("error: daily_orders dt=2026-09-01: {finding}\n"));
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert_eq!(lines[0], format!("  dt=2026-09-01  FAILED   daily_orders dt=2026-09-01: {finding}"));
    // The summary line ends with the run's duration.
    assert!(
        lines[1].starts_with("daily_orders: 1 partition, 0 ok, 1 failed, 0 rows written, table version -, "),
        "{}",
        run.stdout
    );
    assert_eq!(lake.commit_count("analytics/daily_orders"), 0, "nothing committed");

    let allowed =
        Job::new("daily_orders", "analytics.daily_orders").sql(WITH_NOW).allow_nondeterministic().datafusion();
    lake.set_project(&Project::new().job(allowed));
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "lint: 1 job checked, 0 errors, 0 warnings\n");
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    assert_eq!(lake.commit_count("analytics/daily_orders"), 1);
}

#[test]
fn warnings_are_json_lines_with_their_rule_ids_and_logged_once_per_run() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    lake.set_project(&datafusion_job(
        "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount) AS n, DATE '2026-09-01' AS dt \
         FROM raw.orders",
    ));
    let run = lake.cli(&["--json", "lint"]);
    run.assert_code(0);
    let lines = json_lines(&run);
    let (summary, findings) = lines.split_last().expect("lines");
    let mut findings = findings.to_vec();
    findings.sort_by_key(|f| f["rule"].to_string());
    let warning = |rule: &str, construct: &str, message: &str| {
        serde_json::json!({
            "severity": "warn", "rule": rule, "job": "daily_orders", "construct": construct, "message": message
        })
    };
    let row_number = "ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount)";
    assert_eq!(
        findings,
        [
            warning("order_not_total", row_number, &format!("{row_number}: {ORDER_NOT_TOTAL}")),
            warning(
                "outside_partition",
                "DATE '2026-09-01'",
                "the partition column `dt` is the constant DATE '2026-09-01', not $dt: a run for any other date \
                 writes outside its partition and fails (nothing is committed)"
            ),
            warning(
                "unbounded_scan",
                "raw.orders",
                "raw.orders is read with no filter on its partition column `dt`: the run reads all history and its \
                 cost grows every day; add e.g. `WHERE dt = $dt`"
            ),
        ]
    );
    assert_eq!(
        *summary,
        serde_json::json!({"summary": {"jobs": 1, "errors": 0, "warnings": 3, "unchecked": 0, "waiting": 0, "schema_version": 4}})
    );

    // A job with one warning runs; the warning is logged once for the whole backfill.
    // ROW_NUMBER is unsigned; the table stores it as a long (Delta has no unsigned types), and
    // the second day's write must still match the table.
    lake.set_project(&daily_orders(
        "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount) AS n, $dt AS dt \
         FROM raw.orders WHERE dt = $dt",
    ));
    let run = lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02", "--parallel", "1"]);
    run.assert_code(0);
    let logged = format!(": job daily_orders: order_not_total: {row_number}: {ORDER_NOT_TOTAL}");
    // The line starts with the time it was logged, then the span of the run that logged it.
    let span = " WARN partition{job=daily_orders partition=dt=2026-09-01 run_id=";
    let lines: Vec<&str> = run.stderr.lines().filter(|l| l.contains(span) && l.ends_with(&logged)).collect();
    assert!(lines.len() == 1 && run.stderr.lines().count() == 1, "one line `{span}…{logged}`:\n{}", run.stderr);

    // Declaring the key the order ends with makes it total.
    let total = daily_orders(
        "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount, order_id) AS n, $dt AS dt \
         FROM raw.orders WHERE dt = $dt",
    );
    lake.set_project(&total.source_unique("raw.orders", &["order_id"]));
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "lint: 1 job checked, 0 errors, 0 warnings\n");
}

#[test]
fn the_demo_project_lints_clean() {
    let lake = Lake::demo();
    // weekly_revenue reads daily_orders' table, which a fresh project does not have yet.
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert_eq!(
        run.stdout,
        "lint: 3 jobs checked, 0 errors, 0 warnings, 1 waiting for the tables it reads (see above)\n"
    );
    assert!(
        run.stderr.starts_with("note: weekly_revenue: checked once the tables it reads exist: ")
            && run.stderr.contains("analytics.daily_orders has no Delta table yet"),
        "{}",
        run.stderr
    );
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-01"]).assert_code(0);
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "lint: 3 jobs checked, 0 errors, 0 warnings\n", "{}", run.stderr);
    let run = lake.cli(&["lint", "no_such_job"]);
    run.assert_code(2);
    let file = lake.project_file().display().to_string();
    assert_eq!(
        run.stderr,
        format!("error: {file}: no job `no_such_job`; jobs here: customers, daily_orders, weekly_revenue\n")
    );
}

#[test]
fn lint_names_every_function_the_spark_dialect_refuses_and_a_run_fails_on_one() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let sql = "SELECT customer_id, regexp_replace(status, 'a', 'b') AS s, upper(status) AS u, made_up(amount) AS m, $dt AS dt \
               FROM raw.orders WHERE dt = $dt";
    lake.set_project_text(&format!("dialect = \"spark\"\n{}", daily_orders(sql).to_toml()));
    let refused = |name: &str| {
        format!(
            "error: job daily_orders: refused_function: `{name}` has no Spark-exact implementation here; \
             `dialect = \"datafusion\"` runs DataFusion's"
        )
    };
    let run = lake.cli(&["lint"]);
    run.assert_code(1);
    let expected =
        format!("{}\n{}\nlint: 1 job checked, 2 errors, 0 warnings\n", refused("made_up"), refused("regexp_replace"));
    assert_eq!(run.stdout, expected);
    let json = lake.cli(&["--json", "lint"]);
    assert!(json.stdout.contains(r#""rule":"refused_function""#), "{}", json.stdout);

    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    // Planning stops at the first function it refuses: one that no registry holds, here.
    assert!(run.stderr.contains("`made_up` has no Spark-exact implementation here"), "{}", run.stderr);
    assert_eq!(lake.commit_count("analytics/daily_orders"), 0, "nothing committed");
}

/// The rules that apply to a job are its write mode's, however the job is written: a job written
/// as `INSERT OVERWRITE … PARTITION (dt = $dt)` or `INSERT INTO … PARTITION (dt = $dt)` lints as
/// its `write = "overwrite_partition"` or `write = "append"` twin of the same query.
#[test]
fn a_job_written_as_a_statement_lints_as_its_write_mode_twin() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let columns = "order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount) AS n";
    let written = format!("SELECT {columns}, $dt AS dt FROM raw.orders");
    let twins = [
        (
            Job::new("written", "analytics.written").sql(&written),
            format!("INSERT OVERWRITE analytics.statement PARTITION (dt = $dt) SELECT {columns} FROM raw.orders"),
        ),
        (
            Job::append("written", "analytics.written").partition_by("dt").sql(&written),
            format!("INSERT INTO analytics.statement PARTITION (dt = $dt) SELECT {columns} FROM raw.orders"),
        ),
    ];
    for (job, statement) in twins {
        lake.set_project(&Project::new().job(job).job(Job::statement("statement", "analytics.statement", &statement)));
        let run = lake.cli(&["--json", "lint"]);
        run.assert_code(0);
        let findings = |job: &str| {
            let mut found: Vec<(String, String, String)> = crate::support::json_lines(&run)
                .into_iter()
                .filter(|f| f["job"] == job)
                .map(|f| (f["rule"].to_string(), f["construct"].to_string(), f["message"].to_string()))
                .collect();
            found.sort();
            found
        };
        let rules: Vec<String> = findings("written").into_iter().map(|(rule, ..)| rule).collect();
        assert_eq!(rules, ["\"order_not_total\"", "\"unbounded_scan\""], "{statement}: {}", run.stdout);
        assert_eq!(findings("statement"), findings("written"), "{statement}: {}", run.stdout);
    }
}
