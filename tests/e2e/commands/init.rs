//! `lakewriter init`: a new project that `lint` and `test` pass and whose sample job runs; `completions`
//! and `man`, generated from the command line's own definition.

use crate::support::{Run, command};

fn lakewriter(dir: &std::path::Path, args: &[&str]) -> Run {
    Run::from(&command(args, dir, &[]).output().expect("run lakewriter"))
}

#[test]
fn init_writes_a_project_that_lints_tests_and_runs_and_never_overwrites_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("new");
    let created = lakewriter(dir.path(), &["init", "new"]);
    created.assert_code(0);
    let file = project.join("lakewriter.toml");
    let text = std::fs::read_to_string(&file).expect("the project file");
    assert!(text.starts_with("# lakewriter project file."), "{text}");
    let raw = project.join("lake/raw/orders/dt=2026-01-01/part-00000.parquet");
    assert!(raw.is_file(), "the sample raw layer");

    let project_arg = file.to_str().expect("utf-8 path");
    let lint = lakewriter(dir.path(), &["--project", project_arg, "lint"]);
    lint.assert_code(0);
    assert_eq!(lint.stdout, "lint: 1 job checked, 0 errors, 0 warnings\n");
    let tests = lakewriter(dir.path(), &["--project", project_arg, "test"]);
    tests.assert_code(0);
    assert!(tests.stdout.starts_with("PASS daily_orders_counts expected_rows\n"), "{}", tests.stdout);
    let run =
        lakewriter(dir.path(), &["--project", project_arg, "--json", "run", "daily_orders", "--dt", "2026-01-01"]);
    run.assert_code(0);
    let (reports, _) = run.json();
    assert_eq!(reports[0].rows_written, Some(crate::support::customers_with_orders("2026-01-01")));

    // A second init keeps the project as it is.
    std::fs::write(&file, "root = \"elsewhere\"\n").expect("edit the project");
    let again = lakewriter(dir.path(), &["init", "new"]);
    again.assert_code(2);
    assert!(again.stderr.contains("exists: init never overwrites a project file"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&file).expect("the project file"), "root = \"elsewhere\"\n");
}

#[test]
fn completions_and_the_manual_page_come_from_the_command_line_definition() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (shell, marker) in
        [("bash", "_lakewriter()"), ("zsh", "#compdef lakewriter"), ("fish", "complete -c lakewriter")]
    {
        let script = lakewriter(dir.path(), &["completions", shell]);
        script.assert_code(0);
        assert!(script.stdout.contains(marker), "{shell}");
        for command in ["backfill", "sql", "maintain", "completions"] {
            assert!(script.stdout.contains(command), "{shell} completes {command}");
        }
    }
    let man = lakewriter(dir.path(), &["man"]);
    man.assert_code(0);
    assert!(man.stdout.contains(".TH lakewriter 1"), "{}", man.stdout);
    let listed: Vec<&str> =
        man.stdout.lines().filter_map(|l| l.strip_prefix("lakewriter\\-")?.strip_suffix("(1)")).collect();
    let commands =
        ["run", "verify", "backfill", "graph", "reproduce", "audit", "status", "plan", "report", "demo", "lint", "sql"];
    let more = ["init", "completions", "man", "test", "digest", "engine", "maintain", "help"];
    assert_eq!(listed, [&commands[..], &more].concat(), "the subcommands are listed");
    assert!(lakewriter(dir.path(), &["completions", "tcsh"]).code == 2, "an unknown shell is a usage error");
}
