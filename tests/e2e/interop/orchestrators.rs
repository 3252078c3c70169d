//! Orchestrators driving lakewriter for real, each pinned and installed by `scripts/test`.
//! Dagster: the assets of `examples/dagster` materialized in-process, each partition a
//! `lakewriter run` launched through Dagster Pipes, which reads its date from the Pipes context
//! and reports its materialization, and a range of days in one run (`BackfillPolicy.single_run()`)
//! a `lakewriter backfill` that reads its range from the Pipes context; the materializations are
//! then read back from Dagster.
//! Airflow: the DAGs of `examples/airflow` run with `airflow dags test` for three data
//! intervals, then the repair DAG after late data; the tables are compared with lakewriter's
//! own backfill of the same days.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{Lake, customers_with_orders};

const DAYS: [&str; 3] = ["2026-09-01", "2026-09-02", "2026-09-03"];

/// How the example finds the `lakewriter` command, given the orchestrator's program (in its venv's
/// `bin/`): the command the wheel installed into that venv, on PATH as after `pip install
/// lakewriter` (the whole suite of `scripts/test`, which installs it there, sets
/// LAKEWRITER_TEST_INSTALLED); else this build's binary, through the example's LAKEWRITER_BIN.
fn lakewriter_command(program: &str) -> Vec<(String, String)> {
    if std::env::var_os("LAKEWRITER_TEST_INSTALLED").is_none() {
        return vec![("LAKEWRITER_BIN".into(), env!("CARGO_BIN_EXE_lakewriter").into())];
    }
    let bin = std::path::Path::new(program).parent().expect("the venv's bin folder");
    assert!(bin.join("lakewriter").is_file(), "no lakewriter command installed in {}", bin.display());
    let path = std::env::var("PATH").unwrap_or_default();
    vec![("PATH".into(), format!("{}:{path}", bin.display())), ("LAKEWRITER_BIN".into(), "lakewriter".into())]
}

/// Materializes `partitions` of `asset` with `examples/dagster/materialize.py`; its exit code and
/// JSON lines (the materializations read back, the failures).
fn dagster(lake: &Lake, asset: &str, partitions: &[&str]) -> (i32, Vec<Value>) {
    let python = std::env::var("LAKEWRITER_TEST_DAGSTER_PYTHON").unwrap_or_else(|_| {
        panic!("the Dagster tests need Dagster: run them with `scripts/test`, which installs it and sets LAKEWRITER_TEST_DAGSTER_PYTHON")
    });
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/dagster");
    let output = Command::new(&python)
        .arg(examples.join("materialize.py"))
        .arg(asset)
        .args(partitions)
        .current_dir(lake.path())
        .envs(lakewriter_command(&python))
        .env("LAKEWRITER_PROJECT", lake.project_file())
        .envs(lake.env())
        .output()
        .expect("run Dagster");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines =
        stdout.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    (output.status.code().unwrap_or(-1), lines)
}

#[test]
fn dagster_materializes_daily_partitions_through_pipes_and_reads_lakewriters_figures_back() {
    let lake = Lake::demo();
    let (code, materialized) = dagster(&lake, "analytics/daily_orders", &DAYS);
    assert_eq!(code, 0, "{materialized:?}");
    assert_eq!(materialized.len(), 3, "{materialized:?}");
    for (version, (day, m)) in DAYS.iter().zip(&materialized).enumerate() {
        let metadata = &m["metadata"];
        assert_eq!(m["partition"], *day, "Dagster's partition is the run's date");
        assert_eq!(metadata["partition"], format!("dt={day}"));
        assert_eq!(metadata["rows_written"], customers_with_orders(day), "{day}");
        assert_eq!(lake.digest("analytics.daily_orders", Some(day)).rows, customers_with_orders(day));
        assert_eq!(metadata["table_version"], version as u64);
        assert_eq!((&metadata["committed"], &metadata["fresh_before"]), (&Value::Bool(true), &Value::Bool(false)));
        // What the commit recorded: the run, its inputs and code.
        let commit = lake.commit_info("analytics/daily_orders", version as u64)["lakewriter"].clone();
        assert_eq!(metadata["run_id"], commit["run_id"], "{day}");
        assert_eq!(metadata["input_fingerprint"], commit["input_fingerprint"], "{day}");
        assert_eq!(metadata["code_fingerprint"], commit["code_fingerprint"], "{day}");
        assert_eq!(m["data_version"], commit["input_fingerprint"], "the data version is the input fingerprint");
    }

    // Materialized again: fresh before, the same data version, the same content.
    let before = lake.digest("analytics.daily_orders", None);
    let (code, again) = dagster(&lake, "analytics/daily_orders", &DAYS[1..2]);
    assert_eq!(code, 0, "{again:?}");
    let last = again.last().expect("a materialization");
    assert_eq!(last["metadata"]["fresh_before"], true);
    assert_eq!(last["data_version"], materialized[1]["data_version"]);
    assert_eq!(lake.digest("analytics.daily_orders", None).digest, before.digest);
}

#[test]
fn a_dagster_backfill_of_a_range_in_one_run_is_one_lakewriter_backfill_and_a_materialization_a_day() {
    let lake = Lake::demo();
    let (code, materialized) = dagster(&lake, "--range", &[DAYS[0], DAYS[2]]);
    assert_eq!(code, 0, "{materialized:?}");
    let mut partitions: Vec<&str> =
        materialized.iter().map(|m| m["partition"].as_str().expect("a partition")).collect();
    partitions.sort_unstable();
    assert_eq!(partitions, DAYS, "one materialization per partition of the range: {materialized:?}");
    let rows: u64 = DAYS.iter().map(|day| customers_with_orders(day)).sum();
    for m in &materialized {
        let metadata = &m["metadata"];
        assert_eq!(
            (&metadata["job"], &metadata["range"]),
            (&"daily_orders".into(), &format!("{}..{}", DAYS[0], DAYS[2]).into())
        );
        assert_eq!((&metadata["partitions"], &metadata["rows_written"]), (&3.into(), &rows.into()), "{metadata}");
        let by_partition = &metadata["by_partition"];
        for day in DAYS {
            let figures = &by_partition[format!("dt={day}")];
            assert_eq!(figures["rows_written"], customers_with_orders(day), "{by_partition}");
            let commit =
                lake.commit_info("analytics/daily_orders", figures["table_version"].as_u64().expect("a version"));
            assert_eq!(figures["run_id"], commit["lakewriter"]["run_id"], "{day}");
        }
    }
    assert_eq!(lake.commit_count("analytics/daily_orders"), 3, "one commit a day, one lakewriter backfill");
    for day in DAYS {
        assert_eq!(lake.digest("analytics.daily_orders", Some(day)).rows, customers_with_orders(day));
    }
}

#[test]
fn a_failed_lakewriter_run_is_a_failed_dagster_materialization_and_commits_nothing() {
    let lake = Lake::demo();
    let project = std::fs::read_to_string(lake.project_file()).expect("the project file");
    lake.set_project_text(&project.replace("\"revenue >= 0\"", "\"revenue < 0\""));
    let (code, lines) = dagster(&lake, "analytics/daily_orders", &DAYS[..1]);
    assert_eq!(code, 1, "{lines:?}");
    assert_eq!(lines.len(), 1, "no materialization, one failure: {lines:?}");
    assert_eq!(lines[0]["failed"], DAYS[0]);
    let errors = lines[0]["errors"].to_string();
    assert!(errors.contains("External execution process failed with code 1"), "{errors}");
    assert_eq!(lake.commit_count("analytics/daily_orders"), 0, "nothing committed");
}

/// `airflow ARGS…` with its home in `lake`'s folder, the example's DAGs, and `lake`'s project.
fn airflow(lake: &Lake, args: &[&str]) -> Output {
    let airflow = std::env::var("LAKEWRITER_TEST_AIRFLOW").unwrap_or_else(|_| {
        panic!("the Airflow tests need Airflow: run them with `scripts/test`, which installs it and sets LAKEWRITER_TEST_AIRFLOW")
    });
    let dags = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/airflow");
    Command::new(&airflow)
        .args(args)
        .current_dir(lake.path())
        .env("AIRFLOW_HOME", lake.path().join("airflow"))
        .env("AIRFLOW__CORE__DAGS_FOLDER", dags)
        .env("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        .envs(lakewriter_command(&airflow))
        .env("LAKEWRITER_PROJECT", lake.project_file())
        .envs(lake.env())
        .output()
        .expect("run airflow")
}

/// Runs `airflow ARGS…` and asserts that it succeeded; its output.
#[track_caller]
fn airflow_ok(lake: &Lake, args: &[&str]) -> String {
    let output = airflow(lake, args);
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "airflow {args:?} failed:\n{text}");
    text
}

/// A demo lakehouse (`demo --no-run`) with Airflow's metadata database set up beside it.
fn airflow_lake() -> Lake {
    let lake = Lake::demo();
    airflow_ok(&lake, &["db", "migrate"]);
    lake
}

fn assert_same_tables(lake: &Lake, reference: &Lake) {
    for table in ["analytics.daily_orders", "core.customers", "analytics.weekly_revenue"] {
        assert_eq!(lake.digest(table, None).digest, reference.digest(table, None).digest, "{table}");
    }
}

#[test]
fn airflow_runs_each_interval_and_the_repair_dag_and_the_tables_equal_lakewriters_backfill() {
    let lake = airflow_lake();
    for day in DAYS {
        airflow_ok(&lake, &["dags", "test", "lakewriter_daily", day]);
    }
    let reference = Lake::demo();
    reference.cli(&["backfill", "--all", "--from", DAYS[0], "--to", DAYS[2]]).assert_code(0);
    assert_same_tables(&lake, &reference);

    // Late orders for the second day: the repair DAG backfills what is stale, and only that.
    for l in [&lake, &reference] {
        l.run_demo(&["--late", DAYS[1]]).assert_code(0);
    }
    let conf = format!(r#"{{"from": "{}", "to": "{}"}}"#, DAYS[0], DAYS[2]);
    airflow_ok(&lake, &["dags", "test", "lakewriter_repair", DAYS[2], "--conf", &conf]);
    reference.cli(&["backfill", "--all", "--from", DAYS[0], "--to", DAYS[2], "--only", "stale"]).assert_code(0);
    assert_same_tables(&lake, &reference);
    let status = lake.cli(&["status", "daily_orders", "--from", DAYS[0], "--to", DAYS[2]]);
    assert!(status.stdout.contains("3 partitions: 3 fresh, 0 stale, 0 missing"), "{}", status.stdout);
}

#[test]
fn a_configuration_error_fails_the_airflow_task_at_once_and_the_other_jobs_still_run() {
    let lake = airflow_lake();
    let project = std::fs::read_to_string(lake.project_file()).expect("the project file");
    lake.set_project_text(&project.replace("[jobs.weekly_revenue]", "[jobs.weekly_revenue_renamed]"));
    let output = airflow(&lake, &["dags", "test", "lakewriter_daily", DAYS[0]]);
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("no job `weekly_revenue`"), "lakewriter's error: {text}");
    assert!(text.contains("a usage or configuration error (exit 2); not retried"), "{text}");
    assert!(!text.contains("up_for_retry"), "exit 2 is not retried: {text}");
    assert_eq!(lake.digest("analytics.daily_orders", Some(DAYS[0])).rows, customers_with_orders(DAYS[0]));
}
