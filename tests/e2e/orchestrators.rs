//! Orchestrators driving lakewriter for real. Dagster: the assets of `examples/dagster`
//! materialized in-process (a pinned `dagster`, installed by `scripts/test`), each partition a
//! `lakewriter run` launched through Dagster Pipes, which reads its date from the Pipes context
//! and reports its materialization; the materializations are then read back from Dagster.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::support::{Lake, customers_with_orders};

const DAYS: [&str; 3] = ["2026-09-01", "2026-09-02", "2026-09-03"];

/// Materializes `partitions` of `asset` with `examples/dagster/materialize.py`; its exit code and
/// JSON lines (the materializations read back, the failures).
fn dagster(lake: &Lake, asset: &str, partitions: &[&str]) -> (i32, Vec<Value>) {
    let python = std::env::var("LAKEWRITER_TEST_DAGSTER_PYTHON").unwrap_or_else(|_| {
        panic!("the Dagster tests need Dagster: run them with `scripts/test`, which installs it and sets LAKEWRITER_TEST_DAGSTER_PYTHON")
    });
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/dagster");
    let output = Command::new(python)
        .arg(examples.join("materialize.py"))
        .arg(asset)
        .args(partitions)
        .current_dir(lake.path())
        .env("LAKEWRITER_BIN", env!("CARGO_BIN_EXE_lakewriter"))
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
