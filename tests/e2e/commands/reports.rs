//! What the commands report, said exactly: `audit --against` refuses the project's own root as
//! `reproduce --into` does; `maintain`'s vacuum leaves the expired log files to the clean-up step,
//! which counts them; log lines carry their run's span and plain numbers; a MERGE job's checks
//! fail in `run` as in `lint`; `sql --json` rows keep their NULL columns; `verify` shows the rows
//! that differ and says when floats alone differ; a run says its engine and how its files were
//! written — locally and on the S3 test server where
//! storage is involved.

use serde_json::Value;

use crate::support::maintain::{maintain, uri};
use crate::support::place::{DAY, Place, WRITTEN};
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{Checks, Job, Lake, Project, Run, WriteMode, daily_orders, json_lines, parse_lines};

const DT: &str = "2026-09-01";

/// The refusal `error: FLAG URL: …` of a reproduction root that is not apart from the project's.
fn assert_not_apart(run: &Run, flag: &str) -> String {
    run.assert_code(2);
    let lines = run.error_lines();
    assert!(
        lines.len() == 1
            && lines[0].starts_with(&format!("error: {flag} "))
            && lines[0].contains(": the reproduction's root must be apart from the project's root ")
            && lines[0].ends_with(" (neither inside the other)"),
        "{}",
        run.stderr
    );
    lines[0].replacen(flag, "FLAG", 1)
}

/// `root` (the project's root, as the project file or `LAKEWRITER_ROOT` gives it), a root inside
/// it and one holding it are refused by `audit --against` with `reproduce --into`'s words; a
/// root apart is audited.
fn audit_refuses_roots_not_apart(lake: &Lake, root: &str, apart: &str) {
    lake.cli(&["run", "daily_orders", "--dt", DT]).assert_code(0);
    let root = root.trim_end_matches('/');
    let holding = &root[..root.rfind('/').expect("a parent")];
    for there in
        [root.to_owned(), format!("{root}/analytics"), format!("{root}/analytics/daily_orders/"), holding.to_owned()]
    {
        let audited = lake.cli(&["audit", "daily_orders", "--against", &there]);
        let reproduced = lake.cli(&["reproduce", "daily_orders", "--into", &there]);
        assert_eq!(assert_not_apart(&audited, "--against"), assert_not_apart(&reproduced, "--into"), "{there}");
        assert!(audited.stdout.is_empty(), "nothing audited: {}", audited.stdout);
    }
    let audited = lake.cli(&["--json", "audit", "daily_orders", "--against", apart]);
    audited.assert_code(1);
    let lines = json_lines(&audited);
    assert_eq!(
        (lines[0]["partition"].as_str(), lines[0]["verdict"].as_str()),
        (Some("dt=2026-09-01"), Some("missing_there"))
    );
}

#[test]
fn audit_against_the_projects_own_root_or_a_root_inside_or_above_it_is_refused() {
    let lake = Lake::demo();
    let root = lake.root().display().to_string();
    let apart = lake.path().join("elsewhere").display().to_string();
    audit_refuses_roots_not_apart(&lake, &root, &apart);
}

#[test]
fn on_s3_audit_against_the_projects_own_prefix_or_one_inside_or_above_it_is_refused() {
    let s3 = S3::new("reports-audit");
    s3.lake.prepare_demo();
    let apart = format!("{}-elsewhere/", s3.root().trim_end_matches('/'));
    audit_refuses_roots_not_apart(&s3.lake, s3.root(), &apart);
    // The same prefix through `s3a://`.
    let s3a = s3.root().replacen("s3://", "s3a://", 1);
    assert_not_apart(&s3.lake.cli(&["audit", "daily_orders", "--against", &s3a]), "--against");
}

/// The commit files of `mode`'s table, as `status` counts them.
fn commit_files(lake: &Lake, mode: WriteMode) -> u64 {
    let summary = lake.status(&[mode.as_str(), "--from", WRITTEN, "--to", DAY]).summary;
    summary.log.expect("a table's log").commit_files
}

/// Vacuum deletes data files and removes no log file, even expired ones: the clean-up step does,
/// and counts them.
fn vacuum_leaves_expired_logs_to_cleanup(on_s3: bool) {
    let place = Place::new(on_s3, WriteMode::Append);
    let lake = place.lake();
    crate::support::maintain::write_tables(lake);
    maintain(lake, &["append", "--only", "compact,checkpoint"]);
    // Every log file before the checkpoint of version 4 expires at once (a commit, version 5).
    Reader::new(lake).set_property("delta.logRetentionDuration", "interval 0 seconds", &uri(&place, WriteMode::Append));
    assert_eq!(commit_files(lake, WriteMode::Append), 6, "versions 0 to 5");

    let vacuum = maintain(lake, &["append", "--only", "vacuum", "--retention", "0h", "--force"]);
    let found: Vec<_> = vacuum.iter().map(|s| (s.step.as_str(), s.files_deleted, s.table_version)).collect();
    assert_eq!(found, [("vacuum", Some(3), Some(7))], "the three files compaction replaced: {vacuum:?}");
    assert_eq!(commit_files(lake, WriteMode::Append), 8, "VACUUM START and END added, no log file removed");
    if !on_s3 {
        // Its commits are delta-rs's, with lakewriter's metadata.
        let start = lake.commit_info("concurrent/append", 6);
        assert_eq!((&start["operation"], &start["lakewriter"]["maintain"]), (&"VACUUM START".into(), &"vacuum".into()));
        assert_eq!(start["operationMetrics"]["numFilesToDelete"], 3, "{start}");
        assert!(start["operationMetrics"]["sizeOfDataToDelete"].as_u64().is_some_and(|n| n > 0), "{start}");
        let end = lake.commit_info("concurrent/append", 7);
        assert_eq!((&end["operation"], &end["operationMetrics"]["numDeletedFiles"]), (&"VACUUM END".into(), &3.into()));
    }

    let run = lake.cli(&["maintain", "append", "--only", "cleanup"]);
    run.assert_code(0);
    run.assert_line_starts("  cleanup     ok       version -      removed 4 log files (log retention 0s)");
    assert_eq!(commit_files(lake, WriteMode::Append), 4, "versions 4 to 7");
}

#[test]
fn vacuum_leaves_expired_log_files_to_the_cleanup_step_which_counts_them() {
    vacuum_leaves_expired_logs_to_cleanup(false);
}

#[test]
fn on_s3_vacuum_leaves_expired_log_files_to_the_cleanup_step_which_counts_them() {
    vacuum_leaves_expired_logs_to_cleanup(true);
}

#[test]
fn a_runs_log_lines_carry_its_span_and_its_figures_as_numbers() {
    let lake = Lake::demo();
    let checks = Checks::new().row_count(None, Some(1)).warn("row_count");
    lake.set_project(&daily_orders(crate::support::DAILY_ORDERS_SQL).with_checks("daily_orders", checks));
    let message = |l: &Value| l["fields"]["message"].as_str().unwrap_or_default().to_owned();
    // At the default verbosity: the warnings, each in its run's span.
    let run = lake.cli(&["--log-format", "json", "--json", "run", "daily_orders", "--dt", DT]);
    run.assert_code(0);
    let report = json_lines(&run).into_iter().find(|l| l.get("partition").is_some()).expect("a partition line");
    let logs: Vec<Value> = parse_lines(&run.stderr);
    assert_eq!(logs.len(), 1, "the check's warning alone: {logs:?}");
    let warning = &logs[0];
    assert!(message(warning).starts_with("check `row_count` failed"), "{warning}");
    assert_eq!(warning["level"], "WARN", "{warning}");
    let span = &warning["span"];
    let expected = (&"partition".into(), &"daily_orders".into(), &report["partition"], &report["run_id"]);
    assert_eq!((&span["name"], &span["job"], &span["partition"], &span["run_id"]), expected, "{warning}");

    // With -v, the closing line's figures as numbers.
    let run = lake.cli(&["--log-format", "json", "-v", "--json", "run", "daily_orders", "--dt", DT]);
    run.assert_code(0);
    let report = json_lines(&run).into_iter().find(|l| l.get("partition").is_some()).expect("a partition line");
    let logs: Vec<Value> = parse_lines(&run.stderr);
    let done = logs.iter().find(|l| message(l) == "done").expect("the done line");
    assert_eq!(&done["fields"]["rows"], &report["rows_written"], "{done}");
    assert_eq!(&done["fields"]["version"], &report["table_version"], "{done}");
    assert!(done["fields"]["rows"].is_u64(), "{done}");
}

#[test]
fn a_merge_jobs_checks_fail_run_and_lint_alike() {
    let lake = Lake::demo();
    let merge = "MERGE INTO analytics.t AS t USING (SELECT 1 AS id) AS s ON t.id = s.id \
                 WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)";
    let job = Job::statement("j", "analytics.t", merge).checks(Checks::new().row_count(Some(1), None));
    lake.set_project(&Project::new().job(job));
    let problem = "check `row_count`: checks are not supported for a job written as MERGE INTO: they would see its \
                   source, not the rows it writes; give the job `write = \"merge\"` and a SELECT to check its rows";
    let run = lake.cli(&["run", "j", "--dt", DT]);
    run.assert_code(1);
    assert_eq!(run.error_lines(), [format!("error: j dt={DT}: {problem}")], "{}", run.stderr);
    let lint = lake.cli(&["--json", "lint"]);
    lint.assert_code(1);
    let findings = json_lines(&lint);
    let found: Vec<(&str, &str, &str)> = findings
        .iter()
        .filter(|f| f.get("rule").is_some())
        .map(|f| {
            (
                f["severity"].as_str().unwrap_or(""),
                f["rule"].as_str().unwrap_or(""),
                f["message"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let message = format!("`row_count`: {}", problem.trim_start_matches("check `row_count`: "));
    assert_eq!(found, [("error", "check", message.as_str())]);
    assert!(!lake.root().join("analytics/t").exists(), "nothing written");
}

#[test]
fn sql_json_rows_carry_every_column_null_as_null() {
    let lake = Lake::demo();
    let run = lake.cli(&[
        "--json",
        "sql",
        "-e",
        "SELECT 1 AS a, CAST(NULL AS INT) AS b, CAST(NULL AS VARCHAR) AS c UNION ALL SELECT 2, 3, 'x' ORDER BY a",
    ]);
    run.assert_code(0);
    let closing =
        serde_json::json!({"summary": {"statements": 1, "ok": 1, "failed": 0, "not_run": 0, "schema_version": 4}});
    assert_eq!(
        json_lines(&run),
        [
            serde_json::json!({"statement": 1, "row": {"a": 1, "b": null, "c": null}}),
            serde_json::json!({"statement": 1, "row": {"a": 2, "b": 3, "c": "x"}}),
            closing
        ]
    );
}

/// `verify --json` of `daily_orders` for [`DT`] over `lake`, which must fail: the report.
fn failed_verify(lake: &Lake) -> Value {
    let run = lake.cli(&["--json", "verify", "daily_orders", "--dt", DT]);
    run.assert_code(1);
    let report = json_lines(&run).pop().expect("the report");
    assert_eq!(report["pass"], false, "{report}");
    report
}

/// The `order_id` of each example row.
fn example_ids(examples: &Value) -> Vec<i64> {
    let rows = examples.as_array().expect("examples");
    rows.iter()
        .map(|row| {
            let row = row.as_str().expect("a row");
            let id = row.strip_prefix("order_id=").and_then(|r| r.split(',').next()).expect("order_id first");
            id.parse().expect("an id")
        })
        .collect()
}

#[test]
fn verify_shows_the_rows_that_differ_and_says_when_floats_alone_differ() {
    use crate::support::Job;
    let lake = Lake::new(DT, DT);
    let job = |score: &str| {
        let sql = format!("SELECT order_id, {score} AS score, $dt AS dt FROM raw.orders WHERE dt = $dt");
        crate::support::Project::new()
            .job(Job::new("daily_orders", "analytics.daily_orders").sql(sql).allow_nondeterministic().datafusion())
    };
    // The first five orders by id: the examples, first in the order of the columns.
    let orders = lakewriter_datagen::orders_for(crate::support::day(DT));
    let ids = orders.column_by_name("order_id").expect("order_id");
    let mut first_ids = ids.as_any().downcast_ref::<arrow::array::Int64Array>().expect("Int64").values().to_vec();
    first_ids.sort_unstable();
    first_ids.truncate(5);

    // A float that differs on every run.
    lake.set_project(&job("random()"));
    let report = failed_verify(&lake);
    let rows = crate::support::orders(DT);
    assert_eq!((report["rows_added"].as_u64(), report["rows_removed"].as_u64()), (Some(rows), Some(rows)));
    assert_eq!(example_ids(&report["added_examples"]), first_ids, "{report}");
    assert_eq!(example_ids(&report["removed_examples"]), first_ids, "{report}");
    assert_eq!(report["float_columns"], serde_json::json!(["score"]));
    assert_eq!(example_ids(&failed_verify(&lake)["added_examples"]), first_ids, "the same rows on a rerun");
    let text = lake.cli(&["verify", "daily_orders", "--dt", DT]);
    text.assert_code(1);
    let details: Vec<&str> = text.stdout.lines().skip_while(|l| !l.starts_with("FAIL ")).skip(1).collect();
    assert_eq!(details.len(), 11, "{}", text.stdout);
    assert!(
        details[..5].iter().all(|l| l.starts_with("  + order_id="))
            && details[5..10].iter().all(|l| l.starts_with("  - order_id=")),
        "{}",
        text.stdout
    );
    assert_eq!(
        details[10],
        "  the rows differ only in floating-point columns (score): a float summed in another order on each run \
         (SUM or AVG over DOUBLE) differs in its last bits; cast it to DECIMAL, or ROUND it"
    );

    // An integer that differs: not the floats.
    lake.set_project(&job("CAST(random() * 1000000000 AS BIGINT)"));
    let report = failed_verify(&lake);
    assert_eq!(example_ids(&report["removed_examples"]), first_ids, "{report}");
    assert_eq!(report["float_columns"], serde_json::json!([]));
    let text = lake.cli(&["verify", "daily_orders", "--dt", DT]);
    assert!(!text.stdout.contains("floating-point"), "{}", text.stdout);
}

#[test]
fn lint_warns_of_a_float_sum_written_by_a_job() {
    let lake = Lake::new(DT, DT);
    let sql = "SELECT customer_id, SUM(CAST(amount AS DOUBLE)) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id";
    lake.set_project(&daily_orders(sql));
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    run.assert_line(
        "warning: job daily_orders: float_aggregate: `revenue` is sum(CAST(raw.orders.amount AS Float64)), a \
         floating-point sum whose last bits depend on the order rows are added in (file and thread order), so runs \
         of the same partition can write different values (`verify` and `audit` then find it changed); sum a DECIMAL \
         (e.g. CAST(x AS DECIMAL(18, 2))) or ROUND the result",
    );
    let rounded = sql.replace("SUM(CAST(amount AS DOUBLE))", "ROUND(SUM(CAST(amount AS DOUBLE)), 2)");
    lake.set_project(&daily_orders(&rounded));
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert!(!run.stdout.contains("float_aggregate"), "{}", run.stdout);
}

#[test]
fn a_local_run_reports_its_engine_and_how_its_own_write_wrote_its_files() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    let engine = |dt: &str| {
        let run = lake.cli(&["--json", "run", "daily_orders", "--dt", dt]);
        run.assert_code(0);
        run.json().0[0].engine.clone().expect("engine")
    };
    // The first run creates the table, its files written by lakewriter's own write.
    let created = engine("2026-09-01");
    assert_eq!(
        (created.url.as_str(), created.executors, created.tasks, created.files),
        ("local", Some(1), Some(1), Some(1))
    );
    // Into the table: lakewriter's own write, one writer (this process) in one task.
    let replaced = engine("2026-09-02");
    assert_eq!(
        (replaced.url.as_str(), replaced.executors, replaced.tasks, replaced.files),
        ("local", Some(1), Some(1), Some(1))
    );
}
