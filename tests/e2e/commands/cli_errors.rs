//! Bad input: a clear message, the right exit code, and no table touched.

use crate::support::figures::Figures;
use crate::support::{Job, Lake, Project, customers_with_orders, daily_orders, lakewriter};

#[test]
fn configuration_errors_name_the_file_the_job_and_the_key() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let file = lake.project_file().display().to_string();
    // Files a `Project` cannot express: written as text.
    let cases = [
        (
            "[jobs.daily_orders]\ntarget = \"a.b\"\nwirte = \"overwrite_partition\"\n",
            "unknown field `wirte`, expected one of `target`, `write`, `partition_by`, `sql`, `sql_file`, `key`, \
             `newer_by`, `on_duplicate_keys`, `delete_when`, `predicate`, `allow_nondeterministic`, `not_null`, \
             `on_schema_change`, `on_missing_input`, `dialect`, `dedup_window`, `dedup_window_column`, `input_size_warning`, `cluster_by`, `target_file_size`, `checks`",
        ),
        (
            "[jobs.daily_orders]\nwrite = \"overwrite_partition\"\npartition_by = \"dt\"\nsql = \"SELECT 1\"\n",
            "missing field `target`",
        ),
        (
            "[jobs.daily_orders]\ntarget = \"a.b\"\nwrite = \"upsert\"\npartition_by = \"dt\"\nsql = \"SELECT 1\"\n",
            "unknown variant `upsert`, expected one of `overwrite_partition`, `merge`, `delete_insert`, \
             `append_dedup`, `append`, `rebuild`, `statement`\nin `write`",
        ),
    ];
    let mut figures =
        Figures::new("bad input: project file (a job's keys)", "commands::cli_errors::configuration_errors");
    let kinds = ["misspelt job key", "missing target", "unknown write mode"];
    for ((job, expected), kind) in cases.into_iter().zip(kinds) {
        lake.set_project_text(&format!("root = \"lake\"\n{job}"));
        let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]);
        run.assert_code(2);
        assert_eq!(run.stderr, format!("error: {file}: job `daily_orders`: {expected}\n"));
        figures.trial(kind, "clear error, exit 2, nothing committed");
    }
    assert!(!lake.root().join("a").exists());
    figures.finish();
}

#[test]
fn an_unknown_job_or_a_missing_project_is_a_usage_error() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let run = lake.cli(&["run", "daily_order", "--dt", "2026-09-01"]);
    run.assert_code(2);
    let file = lake.project_file().display().to_string();
    assert_eq!(run.stderr, format!("error: {file}: no job `daily_order`; jobs here: daily_orders\n"));

    let empty = tempfile::tempdir().expect("temp dir");
    let run = lakewriter(&["run", "daily_orders", "--dt", "2026-09-01"], empty.path());
    run.assert_code(2);
    assert_eq!(
        run.stderr,
        format!(
            "error: no lakewriter.toml in {} or any folder above it\n\
             hint: run `lakewriter init DIR` to start a project in DIR (or `lakewriter demo` for a sample one), or \
             pass --project PATH\n",
            std::fs::canonicalize(empty.path()).expect("the folder").display()
        )
    );
}

#[test]
fn invalid_sql_fails_the_partition_with_the_cause() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.set_project(&daily_orders("SELECT nope FROM raw.orders WHERE dt = $dt"));
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    assert_eq!(
        error,
        "daily_orders dt=2026-09-01: the job's SQL is invalid (at lakewriter.toml:7:15): Schema error: No field named nope.\nValid fields are \
         raw.orders.order_id, raw.orders.customer_id, raw.orders.amount, raw.orders.status, raw.orders.created_at, \
         raw.orders.dt."
    );

    lake.set_project(&daily_orders("CREATE TABLE x AS SELECT 1"));
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    assert_eq!(
        error,
        "daily_orders dt=2026-09-01: the job's SQL is invalid (at lakewriter.toml): Error during planning: DDL not \
         supported: CreateMemoryTable"
    );
    assert!(!lake.root().join("analytics").exists(), "nothing was written");
    let mut figures = Figures::new("bad input: SQL that cannot be planned", "commands::cli_errors::invalid_sql");
    for kind in ["unknown column", "DDL"] {
        figures.trial(kind, "clear error, exit 1, nothing committed");
    }
    figures.finish();
}

#[test]
fn json_output_is_only_json_lines() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    let run = lake.cli(&["--json", "-v", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]);
    run.assert_code(0);
    let (reports, summary) = run.json();
    assert_eq!((reports.len(), summary.partitions), (2, 2));
    // The first day creates the table, then the second runs: their reports come in that order.
    let written: Vec<_> = reports.iter().map(|r| (r.partition.as_str(), r.rows_written, r.table_version)).collect();
    let rows = ["2026-09-01", "2026-09-02"].map(|d| Some(customers_with_orders(d)));
    assert_eq!(written, [("dt=2026-09-01", rows[0], Some(0)), ("dt=2026-09-02", rows[1], Some(1))]);
    // Logs go to stderr: `-v` logs each partition's end (after the time it was logged, in the
    // span of its run: `partition{job=… partition=… run_id=…}: `).
    for report in &reports {
        let span = format!("partition{{job=daily_orders partition={}", report.partition);
        let done = format!(
            ": done partition=daily_orders {} status=Ok rows={} version={}",
            report.partition,
            report.rows_written.expect("rows"),
            report.table_version.expect("version")
        );
        let logged = |l: &&str| l.contains(" INFO ") && l.contains(&span) && l.ends_with(&done);
        assert!(run.stderr.lines().any(|l| logged(&l)), "no line `{span}…{done}` in:\n{}", run.stderr);
    }
}

#[test]
fn a_broken_table_fails_only_the_jobs_that_read_it() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let log = lake.root().join("other/broken/_delta_log");
    std::fs::create_dir_all(&log).expect("log folder");
    std::fs::write(log.join("00000000000000000000.json"), "not a Delta log\n").expect("broken commit");

    // Tables open when a plan names them: a job that does not read it runs.
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);

    let from_broken = Job::new("from_broken", "analytics.from_broken").sql("SELECT *, $dt AS dt FROM other.broken");
    lake.set_project(&Project::new().job(from_broken));
    let run = lake.cli(&["--json", "run", "from_broken", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("error");
    let table = format!("file://{}/other/broken/", lake.root().display());
    assert_eq!(
        error,
        format!(
            "from_broken dt=2026-09-01: cannot open a table the job's SQL reads: cannot open Delta table \
             other.broken: cannot open the Delta table at {table}: Kernel error: Json error: Encountered unexpected \
             'o' whilst parsing literal"
        )
    );
    assert!(!lake.root().join("analytics/from_broken").exists(), "nothing written");
}

/// Whether `text` holds a frame of a Rust backtrace (`   0: path::to::fn`, `at src/x.rs:1:2`).
fn has_frames(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("at ") && l.contains(".rs:")
            || l.split_once(": ").is_some_and(|(n, rest)| n.parse::<u32>().is_ok() && rest.contains("::"))
    })
}

/// With `RUST_BACKTRACE=1` in the environment, the errors a user sees are their message and
/// causes only: a run's `--json` error, the `error:` lines on stderr and `report`'s page. The
/// Delta kernel's errors carry a backtrace in their text then; it goes to the debug log (`-vv`).
#[test]
fn an_error_shows_no_backtrace_when_rust_backtrace_is_set() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let log = lake.root().join("other/broken/_delta_log");
    std::fs::create_dir_all(&log).expect("log folder");
    std::fs::write(log.join("00000000000000000000.json"), "not a Delta log\n").expect("broken commit");
    let from_broken = Job::new("from_broken", "analytics.from_broken").sql("SELECT *, $dt AS dt FROM other.broken");
    let writes_broken = Job::new("writes_broken", "other.broken").sql(crate::support::DAILY_ORDERS_SQL);
    lake.set_project(&Project::new().job(from_broken).job(writes_broken));
    let with_backtrace = |args: &[&str]| {
        let mut command = lake.command(args);
        command.env("RUST_BACKTRACE", "1");
        crate::support::Run::from(&command.output().expect("run lakewriter"))
    };
    let table = format!("file://{}/other/broken/", lake.root().display());
    let kernel = "Kernel error: Json error: Encountered unexpected 'o' whilst parsing literal";

    let run = with_backtrace(&["--json", "run", "from_broken", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("error");
    assert_eq!(
        error,
        format!(
            "from_broken dt=2026-09-01: cannot open a table the job's SQL reads: cannot open Delta table \
             other.broken: cannot open the Delta table at {table}: {kernel}"
        )
    );
    assert!(run.stderr.ends_with(&format!("error: {error}\n")), "stderr:\n{}", run.stderr);
    assert!(!has_frames(&run.stderr), "stderr:\n{}", run.stderr);

    let page = lake.path().join("page.html");
    let report = with_backtrace(&[
        "report",
        "--out",
        page.to_str().expect("utf-8"),
        "--from",
        "2026-09-01",
        "--to",
        "2026-09-01",
    ]);
    // Exit 1: the jobs' partitions could not be read; the page is written all the same.
    report.assert_code(1);
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.contains(&kernel.replace('\'', "&#39;")), "the page shows the job's error");
    assert!(!has_frames(&html) && !html.contains("with_backtrace"), "the page shows a backtrace");
    assert!(!has_frames(&report.stderr), "stderr:\n{}", report.stderr);

    // The backtrace, where wanted, is a debug log line; the report's error stays as it was.
    let debug = with_backtrace(&["--json", "-vv", "run", "from_broken", "--dt", "2026-09-01"]);
    debug.assert_code(1);
    assert_eq!(debug.json().0.remove(0).error.expect("error"), error);
    assert!(debug.stderr.lines().any(|l| l.contains(" DEBUG ") && l.contains("with_backtrace")), "{}", debug.stderr);
}
