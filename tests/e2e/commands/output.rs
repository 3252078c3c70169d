//! Output that stays quiet and true: a lint warning said once per job per command, a failed
//! partition's error once on a terminal, and no panic where stdout or stderr is closed — the
//! command exits with its own code. (Every `--json` command's closing line: `events_schema.rs`.)

use std::process::Stdio;

use crate::support::{Lake, command, edited, lakewriter};

#[test]
fn a_lint_warning_is_said_once_in_a_command_that_runs_its_job_many_times() {
    let dir = tempfile::tempdir().expect("temp dir");
    lakewriter(&["init", "p"], dir.path()).assert_code(0);
    let project = dir.path().join("p/lakewriter.toml");
    let text = std::fs::read_to_string(&project).expect("the project file");
    // Every day read (no filter on `dt`): a warning, and the same rows from the test's one day.
    std::fs::write(&project, edited(&text, "FROM raw.orders\nWHERE dt = $dt\n", "FROM raw.orders\n")).expect("edit");
    let tests = lakewriter(&["test"], &dir.path().join("p"));
    tests.assert_code(0);
    let said = tests.stderr.matches("unbounded_scan").count();
    assert_eq!(said, 1, "the warning once, for the test's every run of the job:\n{}", tests.stderr);
    // A backfill of many days says it once too.
    let backfill =
        lakewriter(&["backfill", "daily_orders", "--from", "2026-01-01", "--to", "2026-01-07"], &dir.path().join("p"));
    backfill.assert_code(0);
    assert_eq!(backfill.stderr.matches("unbounded_scan").count(), 1, "{}", backfill.stderr);
}

#[test]
fn a_failed_partition_is_said_once_on_a_terminal_and_on_stderr_when_stdout_is_elsewhere() {
    let lake = Lake::demo();
    let project = std::fs::read_to_string(lake.project_file()).expect("the demo's project");
    lake.set_project_text(&edited(&project, "row_count = { min = 1 }", "row_count = { min = 1000 }"));
    let args = ["--project", "lakewriter.toml", "run", "daily_orders", "--dt", "2026-09-03"];
    let failure = "daily_orders dt=2026-09-03: check `row_count` failed:";
    // stdout and stderr the same terminal (`script` gives the command one).
    let shell = format!("{} {}", env!("CARGO_BIN_EXE_lakewriter"), args.join(" "));
    let terminal = std::process::Command::new("script")
        .args(["-qec", &shell, "/dev/null"])
        .current_dir(lake.path())
        .output()
        .expect("run the command on a terminal (`script`, of util-linux)");
    let seen = String::from_utf8_lossy(&terminal.stdout);
    assert_eq!(seen.matches(failure).count(), 1, "said once on the terminal:\n{seen}");
    assert_eq!(terminal.status.code(), Some(1));
    // stdout to a file: the error on stderr as well.
    let run = lakewriter(&args, lake.path());
    run.assert_code(1);
    assert_eq!((run.stdout.matches(failure).count(), run.stderr.matches(failure).count()), (1, 1));
}

/// Runs `lakewriter ARGS` in `dir` with its stdout and stderr pipes closed before it writes; its
/// exit code.
fn with_closed_pipes(args: &[&str], dir: &std::path::Path) -> (Option<i32>, String) {
    let mut child = command(args, dir, &[]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().expect("wait");
    (status.code(), format!("{status}"))
}

#[test]
fn a_closed_stdout_or_stderr_never_panics_the_command_keeps_its_exit_code() {
    let lake = Lake::demo();
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-10"]).assert_code(0);
    for _ in 0..5 {
        assert_eq!(with_closed_pipes(&["status", "daily_orders"], lake.path()).0, Some(0));
        assert_eq!(with_closed_pipes(&["sql", "-e", "SELECT * FROM raw.orders"], lake.path()).0, Some(0));
    }
    // A bad project: its usage error, not a panic (101), however closed stderr is.
    std::fs::write(lake.project_file(), "jobs = [\n").expect("a broken project file");
    for _ in 0..5 {
        assert_eq!(with_closed_pipes(&["graph"], lake.path()).0, Some(2));
        assert_eq!(with_closed_pipes(&["-v", "status"], lake.path()).0, Some(2));
    }
}
