//! `--log-format json`: stderr is JSON Lines — every log line, and the CLI's own errors — and
//! each line of a partition's run carries its job, partition and run id.

use lakewriter_core::Phase;
use serde_json::Value;

use crate::support::{Lake, json_lines, log_lines};

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
    assert!(logs.iter().all(|l| !l.timestamp.is_empty()), "{logs:?}");
    let reports: Vec<Value> = json_lines(&run).into_iter().filter(|v| v.get("partition").is_some()).collect();
    assert_eq!(reports.len(), 3);
    let mut own_commits = 0;
    for report in &reports {
        let in_run: Vec<_> = logs.iter().filter(|l| l.span_field("run_id") == report["run_id"].as_str()).collect();
        let phases: Vec<Phase> = in_run.iter().filter_map(|l| l.phase()).collect();
        // `committing` where lakewriter puts the log entry itself (a partition overwrite of the
        // table a run found); delta-rs's commit (the first, which creates it) logs no phase there.
        let own = [Phase::Planned, Phase::Writing, Phase::Committing, Phase::Committed];
        let delta_rs = [Phase::Planned, Phase::Writing, Phase::Committed];
        assert!(phases == own || phases == delta_rs, "{phases:?} {report}");
        own_commits += usize::from(phases == own);
        for line in in_run {
            assert_eq!(line.span_field("job"), Some("daily_orders"), "{line:?}");
            assert_eq!(line.span_field("partition"), report["partition"].as_str(), "{line:?}");
        }
    }
    assert!(own_commits >= 2, "the partitions after the one that created the table: {own_commits}");

    // Set by the environment too; the CLI's own error is a log line of level ERROR.
    let failed = lake
        .command(&["run", "nope", "--dt", "2026-09-01"])
        .env("LAKEWRITER_LOG_FORMAT", "json")
        .output()
        .expect("run lakewriter");
    assert_eq!(failed.status.code(), Some(2));
    let logs = log_lines(&String::from_utf8_lossy(&failed.stderr));
    let errors: Vec<&str> = logs.iter().filter_map(|l| l.error()).collect();
    let expected =
        format!("{}: no job `nope`; jobs here: customers, daily_orders, weekly_revenue", lake.project_file().display());
    assert_eq!(errors, [expected.as_str()], "{logs:?}");
}
