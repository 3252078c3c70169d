//! Bad input: a clear message, the right exit code, and no table touched.

use crate::support::{Job, Lake, Project, daily_orders, lakewriter};

#[test]
fn configuration_errors_name_the_file_the_job_and_the_key() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let file = lake.project_file().display().to_string();
    let cases = [
        ("[jobs.daily_orders]\ntarget = \"a.b\"\nwirte = \"overwrite_partition\"\n", "unknown field `wirte`"),
        (
            "[jobs.daily_orders]\nwrite = \"overwrite_partition\"\npartition_by = \"dt\"\nsql = \"SELECT 1\"\n",
            "missing field `target`",
        ),
        (
            "[jobs.daily_orders]\ntarget = \"a.b\"\nwrite = \"upsert\"\npartition_by = \"dt\"\nsql = \"SELECT 1\"\n",
            "unknown variant `upsert`",
        ),
    ];
    for (job, expected) in cases {
        lake.set_project_text(&format!("root = \"lake\"\n{job}"));
        let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]);
        run.assert_code(2);
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(first.starts_with(&format!("error: {file}: job `daily_orders`: ")), "{}", run.stderr);
        assert!(run.stderr.contains(expected), "{expected}: {}", run.stderr);
    }
    assert!(!lake.root().join("a").exists());
}

#[test]
fn an_unknown_job_or_a_missing_project_is_a_usage_error() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let run = lake.cli(&["run", "daily_order", "--dt", "2026-09-01"]);
    run.assert_code(2);
    assert!(run.stderr.contains("no job `daily_order`; jobs here: daily_orders"), "{}", run.stderr);

    let empty = tempfile::tempdir().expect("temp dir");
    let run = lakewriter(&["run", "daily_orders", "--dt", "2026-09-01"], empty.path());
    run.assert_code(2);
    assert!(run.stderr.contains("cannot read the project file lakewriter.toml"), "{}", run.stderr);
    assert!(run.stderr.contains("hint: "), "{}", run.stderr);
}

#[test]
fn invalid_sql_fails_the_partition_with_the_cause() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.set_project(&daily_orders("SELECT nope FROM raw.orders WHERE dt = $dt"));
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    assert!(error.starts_with("daily_orders dt=2026-09-01: the job's SQL is invalid"), "{error}");
    assert!(error.contains("nope"), "{error}");

    lake.set_project(&daily_orders("CREATE TABLE x AS SELECT 1"));
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    assert!(!lake.root().join("analytics").exists(), "nothing was written");
}

#[test]
fn json_output_is_only_json_lines() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    let run = lake.cli(&["--json", "-v", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]);
    run.assert_code(0);
    let (reports, summary) = run.json();
    assert_eq!(reports.len(), 2);
    assert_eq!(summary.partitions, 2);
    assert!(run.stderr.contains("done"), "logs go to stderr: {}", run.stderr);
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
    assert!(error.contains("cannot open Delta table other.broken"), "{error}");
    assert!(!lake.root().join("analytics/from_broken").exists(), "nothing written");
}
