//! `--log-format json`: stderr is JSON Lines — every log line, and the CLI's own errors — and
//! each line of a partition's run carries its job, partition and run id.

use serde_json::Value;

use crate::support::Lake;

/// Each line of `stderr` as a JSON object; panics naming a line that is not one.
fn log_lines(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .map(|line| {
            let value: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
            assert!(value["timestamp"].is_string() && value["level"].is_string(), "{line}");
            value
        })
        .collect()
}

#[test]
fn json_logs_carry_each_runs_job_partition_and_run_id() {
    let lake = Lake::demo();
    let args = [
        "--log-format",
        "json",
        "-v",
        "--json",
        "backfill",
        "daily_orders",
        "--from",
        "2026-09-01",
        "--to",
        "2026-09-03",
    ];
    let run = lake.cli(&args);
    run.assert_code(0);
    let logs = log_lines(&run.stderr);
    let reports: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter(|v| v.get("partition").is_some())
        .collect();
    assert_eq!(reports.len(), 3);
    for report in &reports {
        let in_run: Vec<&Value> = logs.iter().filter(|l| l["span"]["run_id"] == report["run_id"]).collect();
        let phases: Vec<&str> = in_run.iter().filter_map(|l| l["fields"]["phase"].as_str()).collect();
        assert!(phases.contains(&"planned") && phases.contains(&"committed"), "{report}: {phases:?}");
        for line in in_run {
            assert_eq!(line["span"]["job"], "daily_orders", "{line}");
            assert_eq!(line["span"]["partition"], report["partition"], "{line}");
        }
    }

    // Set by the environment too; the CLI's own error is a log line of level ERROR.
    let failed = lake
        .command(&["run", "nope", "--dt", "2026-09-01"])
        .env("LAKEWRITER_LOG_FORMAT", "json")
        .output()
        .expect("run lakewriter");
    assert_eq!(failed.status.code(), Some(2));
    let logs = log_lines(&String::from_utf8_lossy(&failed.stderr));
    let errors: Vec<&Value> = logs.iter().filter(|l| l["level"] == "ERROR").collect();
    assert_eq!(errors.len(), 1, "{logs:?}");
    let message = errors[0]["fields"]["message"].as_str().expect("a message");
    assert!(message.ends_with("no job `nope`; jobs here: customers, daily_orders, weekly_revenue"), "{message}");
}
