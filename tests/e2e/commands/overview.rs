//! `lakewriter status` without a job: a line per job of the project — its range, its partitions'
//! states, its last write —; a job that has written nothing shown as such (exit 0), and a job
//! whose SQL does not plan shown with what its table holds and the error (exit 1).

use serde_json::Value;

use crate::support::{Lake, edited, json_lines};

/// The `--json` lines of `status` without a job (each job's line, then the closing line), after
/// asserting its exit code.
fn overview(lake: &Lake, code: i32) -> (Vec<Value>, Value) {
    let run = lake.cli(&["--json", "status"]);
    run.assert_code(code);
    let mut lines = json_lines(&run);
    let closing = lines.pop().expect("a closing line");
    (lines, closing["overview"].clone())
}

/// The job's line of `lines`.
fn line<'a>(lines: &'a [Value], job: &str) -> &'a Value {
    lines.iter().find(|l| l["job"] == job).unwrap_or_else(|| panic!("no line of {job}: {lines:?}"))
}

/// `(fresh, stale, missing, no_input, failed)` of a job's line.
fn counts(line: &Value) -> [u64; 5] {
    ["fresh", "stale", "missing", "no_input", "failed"]
        .map(|k| line[k].as_u64().unwrap_or_else(|| panic!("{k}: {line}")))
}

#[test]
fn every_job_is_a_line_with_its_range_counts_and_last_write() {
    let lake = Lake::demo();
    // Nothing written yet: every job says so, and the command succeeds.
    let (lines, totals) = overview(&lake, 0);
    assert_eq!(lines.len(), 3, "{lines:?}");
    for job in ["daily_orders", "customers", "weekly_revenue"] {
        let line = line(&lines, job);
        assert_eq!((&line["written"], &line["from"], &line["last_write"]), (&false.into(), &Value::Null, &Value::Null));
    }
    assert_eq!((&totals["jobs"], &totals["not_written"]), (&3.into(), &3.into()), "{totals}");
    let text = lake.cli(&["status"]);
    text.assert_code(0);
    let unwritten = text.stdout.lines().filter(|l| l.ends_with("no partition written yet")).count();
    assert_eq!(unwritten, 3, "{}", text.stdout);
    // And `status JOB` of a job that has written nothing says so too, without an error.
    let one = lake.cli(&["status", "weekly_revenue"]);
    one.assert_code(0);
    assert!(one.stdout.contains("weekly_revenue: no partition written yet"), "{}", one.stdout);

    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-05"]).assert_code(0);
    lake.cli(&["backfill", "customers", "--from", "2026-09-03", "--to", "2026-09-04"]).assert_code(0);
    let (lines, totals) = overview(&lake, 0);
    let daily = line(&lines, "daily_orders");
    assert_eq!((&daily["from"], &daily["to"]), (&"2026-09-01".into(), &"2026-09-05".into()));
    assert_eq!(counts(daily), [5, 0, 0, 0, 0]);
    assert_eq!(daily["table_version"], 4);
    assert!(daily["age_s"].as_u64().is_some_and(|age| age < 600), "{daily}");
    let customers = line(&lines, "customers");
    assert_eq!((&customers["from"], &customers["write"]), (&"2026-09-03".into(), &"merge".into()));
    assert_eq!(counts(customers), [2, 0, 0, 0, 0]);
    assert_eq!(line(&lines, "weekly_revenue")["written"], false);
    assert_eq!((&totals["fresh"], &totals["not_written"], &totals["failed_jobs"]), (&7.into(), &1.into(), &0.into()));

    // A range asked for: the days of it, missing where not written.
    let run = lake.cli(&["--json", "status", "--from", "2026-09-04", "--to", "2026-09-08"]);
    run.assert_code(0);
    let lines = json_lines(&run);
    assert_eq!(counts(line(&lines, "daily_orders")), [2, 0, 3, 0, 0]);
    assert_eq!(counts(line(&lines, "customers")), [1, 0, 4, 0, 0]);

    // A day's late data makes it stale, in the overview as in `status JOB`.
    lake.run_demo(&["--late", "2026-09-02"]).assert_code(0);
    let (lines, _) = overview(&lake, 0);
    assert_eq!(counts(line(&lines, "daily_orders")), [4, 1, 0, 0, 0]);
    let text = lake.cli(&["status"]);
    let row = text.stdout.lines().find(|l| l.starts_with("daily_orders")).expect("daily_orders' line");
    let words: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&words[..8], ["daily_orders", "overwrite_partition", "2026-09-01..2026-09-05", "4", "1", "0", "0", "0"]);
    assert!(row.contains("version 4, 20") && row.ends_with(" ago)"), "{row}");
    assert!(
        text.stdout.ends_with("3 jobs: 7 partitions: 6 fresh, 1 stale, 0 missing; 1 job not written yet\n"),
        "{}",
        text.stdout
    );
}

#[test]
fn a_job_whose_sql_does_not_plan_shows_what_it_wrote_and_the_error() {
    let lake = Lake::demo();
    lake.cli(&["backfill", "--all", "--from", "2026-09-01", "--to", "2026-09-03"]).assert_code(0);
    let project = std::fs::read_to_string(lake.project_file()).expect("the demo's project");
    lake.set_project_text(&edited(&project, "FROM raw.orders\nWHERE dt = $dt", "FROM raw.order\nWHERE dt = $dt"));

    let (lines, totals) = overview(&lake, 1);
    let broken = line(&lines, "daily_orders");
    assert_eq!(
        (&broken["written"], &broken["from"], &broken["to"]),
        (&true.into(), &"2026-09-01".into(), &"2026-09-03".into())
    );
    assert_eq!(counts(broken), [0, 0, 0, 0, 3]);
    assert_eq!(broken["table_version"], 2);
    let error = broken["error"].as_str().expect("the error");
    assert!(error.contains("table `raw.order` not found") && error.contains("did you mean raw.orders?"), "{error}");
    // The jobs beside it, and the one that reads its table, keep their own states.
    assert_eq!(counts(line(&lines, "customers")), [3, 0, 0, 0, 0]);
    assert_eq!(counts(line(&lines, "weekly_revenue")), [3, 0, 0, 0, 0]);
    assert_eq!((&totals["failed_jobs"], &totals["failed"], &totals["fresh"]), (&1.into(), &3.into(), &6.into()));

    let text = lake.cli(&["status"]);
    text.assert_code(1);
    let at = text.stdout.lines().position(|l| l.starts_with("daily_orders")).expect("daily_orders' line");
    let lines: Vec<&str> = text.stdout.lines().collect();
    assert!(
        lines[at].split_whitespace().take(8).eq([
            "daily_orders",
            "overwrite_partition",
            "2026-09-01..2026-09-03",
            "-",
            "-",
            "-",
            "-",
            "3"
        ]),
        "{}",
        lines[at]
    );
    assert!(
        lines[at + 1].starts_with("  error: job `daily_orders`: ") && lines[at + 1].contains("raw.order"),
        "{}",
        lines[at + 1]
    );
    assert!(text.stdout.ends_with("; 1 job whose state cannot be told\n"), "{}", text.stdout);
}
