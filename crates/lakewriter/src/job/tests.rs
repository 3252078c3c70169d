use super::*;
use crate::Workspace;

/// The project file `text` loaded from a temporary folder (kept while the handle lives).
fn load(text: &str) -> (tempfile::TempDir, Result<Workspace>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lakewriter.toml");
    std::fs::write(&file, text).expect("project file");
    let workspace = Workspace::load(Some(&file), None);
    (dir, workspace)
}

/// The job `j` writing `a.b` with `write` (the write key and its settings) and `sql`.
fn project(write: &str, sql: &str) -> String {
    format!("root = \"lake\"\n[jobs.j]\ntarget = \"a.b\"\nsql = \"\"\"{sql}\"\"\"\n{write}\n")
}

fn job(write: &str) -> (tempfile::TempDir, Workspace) {
    let (dir, workspace) = load(&project(write, "SELECT 1 AS x, $dt AS dt"));
    (dir, workspace.expect("workspace"))
}

fn day() -> Option<NaiveDate> {
    lakewriter_core::parse_date("2026-09-30").ok()
}

#[test]
fn dated_modes_need_a_date_and_rebuild_refuses_one() {
    let modes = [
        "write = \"overwrite_partition\"\npartition_by = \"dt\"",
        "write = \"delete_insert\"\npredicate = \"dt = $dt\"",
        "write = \"append\"",
        "write = \"merge\"\nkey = [\"x\"]\nnewer_by = \"v\"",
        "write = \"append_dedup\"\nkey = [\"x\"]",
    ];
    for write in modes {
        let (_dir, workspace) = job(write);
        let job = workspace.job("j").expect("job");
        assert!(job.partition_run(day(), false).is_ok(), "{write} with a date");
        let error = job.partition_run(None, false).expect_err("a dated mode without a date").to_string();
        assert!(error.starts_with("job `j` (write = \""), "{error}");
        assert!(error.contains("runs for a date: pass --dt YYYY-MM-DD"), "{error}");
    }
    let (_dir, workspace) = job("write = \"append\"");
    let append = workspace.job("j").expect("job").partition_run(None, false).expect_err("append needs a date");
    assert!(append.to_string().ends_with("(an append without a partition could not be made exactly-once)"));

    let (_dir, workspace) = job("write = \"rebuild\"");
    let rebuild = workspace.job("j").expect("job");
    assert_eq!(rebuild.partition_run(None, false).expect("a rebuild").partition, PartitionKey::All);
    let error = rebuild.partition_run(day(), false).expect_err("rebuild with a date").to_string();
    assert_eq!(error, "job `j` (write = \"rebuild\") rebuilds the whole table: run it without --dt");
}

#[test]
fn force_is_for_appends_only_and_errors_are_usage() {
    let (_dir, workspace) = job("write = \"append\"");
    assert!(workspace.job("j").expect("job").partition_run(day(), true).expect("a forced append").unit.force);
    let (_dir, workspace) = job("write = \"merge\"\nkey = [\"x\"]\nnewer_by = \"v\"");
    let error = workspace.job("j").expect("job").partition_run(day(), true).expect_err("--force on a merge");
    assert_eq!(error.to_string(), "--force applies to write = \"append\" only; job `j` is merge");
    assert!(error.is_usage());
    let sql = "INSERT INTO a.b SELECT 1 AS x";
    let (_dir, workspace) = load(&project("", sql));
    let job = workspace.expect("workspace");
    assert!(job.job("j").expect("job").partition_run(day(), true).is_ok(), "an INSERT INTO job is an append");
}

#[test]
fn a_statement_job_is_resolved_once_onto_its_mode_and_partition_column() {
    let sql = "INSERT OVERWRITE a.b PARTITION (day = $dt) SELECT 1 AS x";
    let (_dir, workspace) = load(&project("", sql));
    let workspace = workspace.expect("workspace");
    let job = workspace.job("j").expect("job");
    assert_eq!((job.write_mode(), job.partition_by.as_deref()), (WriteMode::OverwritePartition, Some("day")));
    // The query as the (default) Spark dialect plans it: the literal is an `INT`.
    assert_eq!(job.query.to_string(), "SELECT CAST(1 AS Int32) AS x");
    assert_eq!(job.partition(day()).to_string(), "day=2026-09-30");
    // The parsed job is kept as written.
    assert_eq!(workspace.project.jobs["j"].partition_by, None);
    let (_dir, workspace) =
        load(&project("", "MERGE INTO a.b USING raw.s ON b.x = s.x WHEN NOT MATCHED THEN INSERT *"));
    assert_eq!(workspace.expect("workspace").job("j").expect("job").write_mode(), WriteMode::Merge);
}

#[test]
fn a_job_that_cannot_be_resolved_fails_its_own_commands_only() {
    let text =
        format!("{}[jobs.k]\ntarget = \"a.c\"\nsql = \"DELETE FROM a.c\"\n", project("write = \"append\"", "SELECT 1"));
    let (_dir, workspace) = load(&text);
    let workspace = workspace.expect("a project with one job that cannot be resolved loads");
    assert!(workspace.job("j").is_ok());
    let error = workspace.job("k").expect_err("a DELETE job");
    assert!(error.to_string().starts_with("job `k`: its SQL is a DELETE"), "{error}");
    assert!(error.is_usage());
    assert_eq!(workspace.jobs().map(|j| j.spec.name.as_str()).collect::<Vec<_>>(), ["j"]);
}

/// Each spelling of a mode is held to what the mode allows: a check that compares a result with
/// the rows it replaces is refused by every mode that replaces none, written as a `write` mode
/// or as a statement; `$dt` in a rebuild's check is refused.
#[test]
fn what_a_mode_cannot_check_is_refused_for_both_spellings_when_the_project_loads() {
    let compare = "[jobs.j.checks]\nchange_vs_previous = { max_row_count_change_pct = 5 }";
    let cases = [
        ("write = \"merge\"\nkey = [\"x\"]\nnewer_by = \"v\"", "SELECT 1 AS x", "for write = \"merge\""),
        ("write = \"append_dedup\"\nkey = [\"x\"]", "SELECT 1 AS x", "for write = \"append_dedup\""),
        ("write = \"append\"", "SELECT 1 AS x", "for write = \"append\""),
        ("", "INSERT INTO a.b SELECT 1 AS x", "for a job written as INSERT INTO (an append)"),
        ("", "INSERT INTO a.b PARTITION (dt = $dt) SELECT 1 AS x", "for a job written as INSERT INTO (an append)"),
        (
            "",
            "MERGE INTO a.b USING raw.s ON b.x = s.x WHEN NOT MATCHED THEN INSERT *",
            "for a job written as MERGE INTO",
        ),
    ];
    for (write, sql, what) in cases {
        let (dir, workspace) = load(&format!("{}{compare}\n", project(write, sql)));
        let error = workspace.expect_err(sql);
        let expected = format!(
            "{}: job `j`: checks.change_vs_previous is not available {what}: it compares a result with the rows it replaces",
            dir.path().join("lakewriter.toml").display()
        );
        assert!(error.to_string().starts_with(&expected), "{sql}: {error}");
        assert!(error.is_usage());
    }
    for (write, sql) in [
        ("write = \"overwrite_partition\"\npartition_by = \"dt\"", "SELECT 1 AS x, $dt AS dt"),
        ("", "INSERT OVERWRITE a.b PARTITION (dt = $dt) SELECT 1 AS x"),
        ("write = \"delete_insert\"\npredicate = \"dt = $dt\"", "SELECT 1 AS x, $dt AS dt"),
    ] {
        let (_dir, workspace) = load(&format!("{}{compare}\n", project(write, sql)));
        assert!(workspace.is_ok(), "{sql}: a mode that replaces rows compares with them");
    }
    let (_dir, workspace) =
        load(&format!("{}[jobs.j.checks]\nexpect = [\"dt = $dt\"]\n", project("write = \"rebuild\"", "SELECT 1 AS x")));
    let error = workspace.expect_err("$dt in a rebuild's check").to_string();
    assert!(error.contains("job `j`: checks.expect: `dt = $dt` uses $dt, which a rebuild"), "{error}");
}

#[tokio::test]
async fn statements_are_read_in_the_dialect_queries_are_planned_in() {
    let (_dir, runner) = crate::Runner::for_test("root = \"lake\"\n").await;
    for dialect in [lakewriter_core::Dialect::DataFusion, lakewriter_core::Dialect::Spark] {
        let semantics = lakewriter_core::Semantics { dialect, ..lakewriter_core::Semantics::default() };
        let session = lakewriter_compute::spark::session(runner.session(), semantics);
        let planned = session.state().config().options().sql_parser.dialect.to_string();
        assert_eq!(planned.to_lowercase(), lakewriter_compute::statement::parser_dialect(dialect), "{dialect}");
    }
}
