//! The project file found as git and cargo find theirs: the nearest `lakewriter.toml` in the
//! current folder or a folder above it; `--project` a file or its folder; a hint naming `init`
//! where there is none.

use crate::support::{Lake, lakewriter};

#[test]
fn the_nearest_project_file_above_the_current_folder_is_the_project() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    let deeper = lake.path().join("sql/drafts");
    std::fs::create_dir_all(&deeper).expect("a subfolder");
    let run = lakewriter(&["--json", "run", "daily_orders", "--dt", "2026-09-01"], &deeper);
    run.assert_code(0);
    let (reports, _) = run.json();
    assert_eq!(reports[0].table_version, Some(0), "the project's lakehouse, relative to the project file");
    assert!(lake.root().join("analytics/daily_orders/_delta_log").is_dir());
    assert!(!deeper.join("lake").exists(), "nothing written below the current folder");

    // The root is the project file's, wherever the command runs.
    let status = lakewriter(&["status", "daily_orders"], &deeper);
    status.assert_code(0);
    assert!(status.stdout.ends_with("daily_orders: 1 partition: 1 fresh, 0 stale, 0 missing\n"), "{}", status.stdout);

    // A nearer project file is the one: a project in a subfolder of another.
    let inner = lake.path().join("inner");
    lakewriter(&["init", "inner"], lake.path()).assert_code(0);
    let graph = lakewriter(&["--json", "graph"], &inner.join("lake"));
    graph.assert_code(0);
    assert!(graph.stdout.contains("\"job\":\"daily_orders\""), "{}", graph.stdout);
    let written = lakewriter(&["--json", "status"], &inner);
    written.assert_code(0);
    assert!(written.stdout.contains("\"not_written\":1"), "the inner project has written nothing: {}", written.stdout);
}

#[test]
fn project_takes_a_folder_and_a_missing_project_names_init() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let folder = lake.path().to_str().expect("utf-8 path");
    let run = lakewriter(&["--project", folder, "run", "daily_orders", "--dt", "2026-09-01"], elsewhere.path());
    run.assert_code(0);
    let by_env = crate::support::lakewriter_with(
        &["status", "daily_orders"],
        elsewhere.path(),
        &[("LAKEWRITER_PROJECT", folder)],
    );
    by_env.assert_code(0);

    // No project file here or above: the error names the folder, the hint `init`.
    let run = lakewriter(&["status"], elsewhere.path());
    run.assert_code(2);
    let here = elsewhere.path().canonicalize().expect("the folder");
    let cwd = std::env::current_dir().ok();
    let shown = [elsewhere.path().display().to_string(), here.display().to_string()];
    assert!(
        shown.iter().any(|folder| run
            .stderr
            .starts_with(&format!("error: no lakewriter.toml in {folder} or any folder above it\n"))),
        "{}\n(cwd {cwd:?})",
        run.stderr
    );
    assert!(run.stderr.ends_with("hint: run `lakewriter init DIR` to start a project in DIR (or `lakewriter demo` for a sample one), or pass --project PATH\n"), "{}", run.stderr);
    // A folder without one.
    let empty = elsewhere.path().to_str().expect("utf-8 path");
    let run = lakewriter(&["--project", empty, "graph"], lake.path());
    run.assert_code(2);
    assert!(
        run.stderr.starts_with(&format!("error: cannot read the project file {empty}/lakewriter.toml\n")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("lakewriter init DIR"), "{}", run.stderr);
}
