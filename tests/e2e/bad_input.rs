//! Bad input of every kind a user writes: a clear `error:` naming what is wrong, exit code 2, and
//! nothing written.

use crate::support::{DAILY_ORDERS_SQL, Lake, daily_orders, edited};

/// A project file with `body` after its root, run once: the exit code and stderr.
fn run_with_project(lake: &Lake, body: &str) -> (i32, String) {
    lake.set_project_text(&format!("root = \"lake\"\n{body}"));
    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]);
    (run.code, run.stderr)
}

#[test]
fn every_kind_of_project_file_mistake_is_named_with_its_place() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let file = lake.project_file().display().to_string();
    // toml's report: the line, a caret under each character of the mistake, then what is wrong.
    let toml_error = |row: usize, column: usize, line: &str, width: usize, what: &str| {
        let gutter = " ".repeat(row.to_string().len());
        let marks = format!("{}{}", " ".repeat(column - 1), "^".repeat(width));
        format!(
            "error: {file}: TOML parse error at line {row}, column {column}\n{gutter} |\n{row} | {line}\n\
             {gutter} | {marks}\n{what}\n"
        )
    };
    let job = "[jobs.daily_orders]\ntarget = \"a.b\"\nwrite = \"overwrite_partition\"\npartition_by = \"dt\"\n\
               sql = \"SELECT 1 AS x, $dt AS dt\"\n";
    let cases: Vec<(String, String)> = vec![
        (
            "colour = \"red\"".into(),
            toml_error(
                2,
                1,
                "colour = \"red\"",
                6,
                "unknown field `colour`, expected one of `root`, `storage`, `jobs`, `sources`",
            ),
        ),
        (
            format!("{job}[jobs.daily_orders]\ntarget = \"a.c\"\n"),
            toml_error(7, 7, "[jobs.daily_orders]", 12, "duplicate key"),
        ),
        (
            "[storage]\nregion = [\"a\"]".into(),
            toml_error(3, 10, "region = [\"a\"]", 5, "invalid type: sequence, expected a string"),
        ),
        (
            format!("{job}key = 3\n"),
            format!("error: {file}: job `daily_orders`: invalid type: integer `3`, expected a sequence\nin `key`\n"),
        ),
        (
            job.replace("partition_by = \"dt\"", "partition_by = 7"),
            format!(
                "error: {file}: job `daily_orders`: invalid type: integer `7`, expected a string\nin `partition_by`\n"
            ),
        ),
        (
            format!("[sources.\"raw.orders\"]\nunique = [\"order_id\"]\nextra = 1\n{job}"),
            format!("error: {file}: source `raw.orders`: unknown field `extra`, expected `unique`\n"),
        ),
        (
            format!("[storage]\naws_secret_access_key = \"abc\"\n{job}"),
            format!(
                "error: {file}: storage option `aws_secret_access_key` holds a secret in the project file: write \
                 `aws_secret_access_key = \"${{aws_secret_access_key}}\"` and set it in the environment\n"
            ),
        ),
    ];
    for (body, expected) in &cases {
        let (code, stderr) = run_with_project(&lake, body);
        assert_eq!((code, stderr.as_str()), (2, expected.as_str()), "{body}");
        assert!(!stderr.contains("abc"), "a secret's value is never printed");
    }
    assert!(!lake.root().join("a").exists(), "nothing written");
}

#[test]
fn arguments_that_try_injection_or_make_no_sense_are_usage_errors() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    let before = lake.digest("analytics.daily_orders", None);
    let invalid = |option: &str, value: &str, why: &str| {
        format!("error: invalid value '{value}' for '--{option}': {why}\n\nFor more information, try '--help'.\n")
    };
    let not_a_date = |value: &str| format!("invalid date `{value}`: expected a calendar date as YYYY-MM-DD");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["run", "daily_orders", "--dt", "2026-09-30' OR '1'='1"],
            invalid("dt <DATE>", "2026-09-30' OR '1'='1", &not_a_date("2026-09-30' OR '1'='1")),
        ),
        (vec!["run", "daily_orders", "--dt", "../x"], invalid("dt <DATE>", "../x", &not_a_date("../x"))),
        (
            vec!["run", "daily_orders", "--dt", "2026-09-01/../../etc"],
            invalid("dt <DATE>", "2026-09-01/../../etc", &not_a_date("2026-09-01/../../etc")),
        ),
        (
            vec!["backfill", "daily_orders", "--from", "2026-09-02", "--to", "2026-09-01"],
            "error: invalid date range: --from 2026-09-02 is after --to 2026-09-01\n".into(),
        ),
        (
            vec!["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02", "--parallel", "0"],
            invalid("parallel <N>", "0", "0 is not in 1..=256"),
        ),
        (
            vec!["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02", "--shard", "3/2"],
            invalid("shard <I/N>", "3/2", "invalid shard `3/2`: expected I/N with 0 <= I < N, e.g. 0/4"),
        ),
    ];
    let too_long = "error: date range too long: --from 0202-09-01 --to 2026-09-30 holds 666233 days, more than \
                    36525 (100 years of daily partitions); check the years, or split the range\n";
    let mut cases = cases;
    for command in ["backfill", "plan", "status"] {
        cases.push((vec![command, "daily_orders", "--from", "0202-09-01", "--to", "2026-09-30"], too_long.into()));
    }
    for (args, expected) in &cases {
        let run = lake.cli(args);
        assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (2, "", expected.as_str()), "{args:?}");
    }
    let after = lake.digest("analytics.daily_orders", None);
    assert_eq!((after.digest, after.version), (before.digest, before.version), "nothing written");
}

#[test]
fn a_division_by_zero_at_run_time_fails_the_partition_and_writes_nothing() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    let before = lake.digest("analytics.daily_orders", None);
    let divides = edited(DAILY_ORDERS_SQL, "COUNT(*) AS orders", "COUNT(*) / (COUNT(*) - COUNT(*)) AS orders");
    lake.set_project(&daily_orders(&divides));
    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-02"]);
    run.assert_code(1);
    let error = "error: daily_orders dt=2026-09-02: analytics.daily_orders: writing dt=2026-09-02 failed; nothing \
                 was committed: Generic DeltaTable error: Arrow error: Divide by zero error\n";
    assert!(run.stderr.ends_with(error), "{}", run.stderr);
    assert_eq!(lake.digest("analytics.daily_orders", None), before, "nothing written");
}
