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
             `on_schema_change`, `on_missing_input`, `dedup_window`, `dedup_window_column`, `input_size_warning`, `cluster_by`, `target_file_size`, `checks`",
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
        "error: cannot read the project file lakewriter.toml\n  caused by: No such file or directory (os error 2)\n\
         hint: pass --project PATH, or run `lakewriter demo` to create a sample project\n"
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
        "daily_orders dt=2026-09-01: the job's SQL is invalid: Schema error: No field named nope.\nValid fields are \
         raw.orders.order_id, raw.orders.customer_id, raw.orders.amount, raw.orders.status, raw.orders.created_at, \
         raw.orders.dt."
    );

    lake.set_project(&daily_orders("CREATE TABLE x AS SELECT 1"));
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    assert_eq!(
        error,
        "daily_orders dt=2026-09-01: the job's SQL is invalid: Error during planning: DDL not supported: \
         CreateMemoryTable"
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
