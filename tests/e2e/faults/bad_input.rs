//! Bad input of every kind a user writes: a clear `error:` naming what is wrong, exit code 2, and
//! nothing written.

use crate::support::figures::Figures;
use crate::support::{Change, DAILY_ORDERS_SQL, Job, Lake, Project, daily_orders, edited};

/// A project file with `body` after its root, run once: the exit code and stderr.
fn run_with_project(lake: &Lake, body: &str) -> (i32, String) {
    lake.set_project_text(&format!("root = \"lake\"\n{body}"));
    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]);
    (run.code, run.stderr)
}

/// toml's report of a mistake in `file` at `(row, column)`: the line, a caret under each of the
/// mistake's `width` characters, then what is wrong.
fn toml_error(file: &str, (row, column): (usize, usize), line: &str, width: usize, what: &str) -> String {
    let gutter = " ".repeat(row.to_string().len());
    let marks = format!("{}{}", " ".repeat(column - 1), "^".repeat(width));
    format!(
        "error: {file}: TOML parse error at line {row}, column {column}\n{gutter} |\n{row} | {line}\n\
         {gutter} | {marks}\n{what}\n"
    )
}

/// Each kind of project-file mistake: its kind, the file's text after its root, and the exact
/// stderr for the file at `file`.
fn project_file_mistakes(file: &str) -> Vec<(&'static str, String, String)> {
    let toml_error = |row, column, line, width, what| toml_error(file, (row, column), line, width, what);
    let job = "[jobs.daily_orders]\ntarget = \"a.b\"\nwrite = \"overwrite_partition\"\npartition_by = \"dt\"\n\
               sql = \"SELECT 1 AS x, $dt AS dt\"\n";
    let cases: Vec<(&'static str, String, String)> = vec![
        (
            "unknown top-level key",
            "colour = \"red\"".into(),
            toml_error(
                2,
                1,
                "colour = \"red\"",
                6,
                "unknown field `colour`, expected one of `root`, `dialect`, `ansi`, `time_zone`, `storage`, `engine`, `jobs`, `sources`, `tests`",
            ),
        ),
        (
            "duplicate job",
            format!("{job}[jobs.daily_orders]\ntarget = \"a.c\"\n"),
            toml_error(7, 7, "[jobs.daily_orders]", 12, "duplicate key"),
        ),
        (
            "unknown time zone",
            "time_zone = \"Europe/Pariss\"".into(),
            toml_error(
                2,
                13,
                "time_zone = \"Europe/Pariss\"",
                15,
                "`time_zone`: `Europe/Pariss` is not a time zone; write an IANA zone name, such as `UTC` or `Europe/Paris`",
            ),
        ),
        (
            "wrong type in [storage]",
            "[storage]\nregion = [\"a\"]".into(),
            toml_error(3, 10, "region = [\"a\"]", 5, "invalid type: sequence, expected a string"),
        ),
        (
            "wrong type of a job's list",
            format!("{job}key = 3\n"),
            format!("error: {file}: job `daily_orders`: invalid type: integer `3`, expected a sequence\nin `key`\n"),
        ),
        (
            "wrong type of a job's string",
            job.replace("partition_by = \"dt\"", "partition_by = 7"),
            format!(
                "error: {file}: job `daily_orders`: invalid type: integer `7`, expected a string\nin `partition_by`\n"
            ),
        ),
        (
            "unknown key in a source",
            format!("[sources.\"raw.orders\"]\nunique = [\"order_id\"]\nextra = 1\n{job}"),
            format!("error: {file}: source `raw.orders`: unknown field `extra`, expected `unique`\n"),
        ),
    ];
    [cases, storage_mistakes(file, job)].concat()
}

/// The mistakes in `[storage]`, in a file with `job`.
fn storage_mistakes(file: &str, job: &str) -> Vec<(&'static str, String, String)> {
    vec![
        (
            "literal secret in [storage]",
            format!("[storage]\naws_secret_access_key = \"abc\"\n{job}"),
            format!(
                "error: {file}: storage option `aws_secret_access_key` holds a secret in the project file: write \
                 `aws_secret_access_key = \"${{aws_secret_access_key}}\"` and set it in the environment\n"
            ),
        ),
        (
            "unknown key in [storage]",
            format!("[storage]\ncolour = \"red\"\n{job}"),
            format!(
                "error: {file}: unknown storage option `colour`: neither an S3 setting of object_store nor one of \
                 lakewriter's request policy\n"
            ),
        ),
    ]
}

#[test]
fn every_kind_of_project_file_mistake_is_named_with_its_place() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let cases = project_file_mistakes(&lake.project_file().display().to_string());
    let mut figures = Figures::new("bad input: project file", "faults::bad_input::every_kind_of_project_file_mistake");
    for (kind, body, expected) in &cases {
        let (code, stderr) = run_with_project(&lake, body);
        assert_eq!((code, stderr.as_str()), (2, expected.as_str()), "{body}");
        assert!(!stderr.contains("abc"), "a secret's value is never printed");
        figures.trial(kind, "clear error, exit 2, nothing committed");
    }
    assert!(!lake.root().join("a").exists(), "nothing written");
    figures.finish();
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
    let mut figures = Figures::new("bad input: arguments", "faults::bad_input::arguments_that_try_injection");
    for (args, expected) in &cases {
        let run = lake.cli(args);
        assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (2, "", expected.as_str()), "{args:?}");
        figures.trial(&args.join(" "), "clear error, exit 2, nothing committed");
    }
    let after = lake.digest("analytics.daily_orders", None);
    assert_eq!((after.digest, after.version), (before.digest, before.version), "nothing written");
    figures.finish();
}

#[test]
fn a_division_by_zero_at_run_time_fails_the_partition_and_writes_nothing() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    let before = lake.digest("analytics.daily_orders", None);
    // Spark's integral division (`/` is fractional), ANSI: a division by zero fails.
    let divides = edited(DAILY_ORDERS_SQL, "COUNT(*) AS orders", "COUNT(*) div (COUNT(*) - COUNT(*)) AS orders");
    lake.set_project(&daily_orders(&divides));
    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-02"]);
    run.assert_code(1);
    let error = "error: daily_orders dt=2026-09-02: analytics.daily_orders: writing dt=2026-09-02 failed; nothing \
                 was committed: Execution error: [DIVIDE_BY_ZERO] division by zero in `count(*) DIV ";
    assert!(run.stderr.contains(error), "{}", run.stderr);
    assert!(
        run.stderr
            .ends_with("use 'try_divide' to tolerate a zero divisor and return NULL instead, or `ansi = false`\n"),
        "{}",
        run.stderr
    );
    assert_eq!(lake.digest("analytics.daily_orders", None), before, "nothing written");
    let mut figures = Figures::new("bad input: SQL failing at run time", "faults::bad_input::a_division_by_zero");
    figures.trial("division by zero", "clear error, exit 1, nothing committed");
    figures.finish();
}

#[test]
fn null_and_duplicate_keys_fail_the_keyed_modes_and_leave_their_tables_unchanged() {
    let sql = "SELECT customer_id, email, tier, updated_at, op FROM raw.customers_batch WHERE dt = $dt";
    let merged = Job::merge("merged", "core.merged", &["customer_id"], "updated_at").duplicate_keys_are_errors();
    let seen = Job::append_dedup("seen", "core.seen", &["customer_id"]);
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.set_project(&Project::new().job(merged.sql(sql)).job(seen.sql(sql)));
    let up = |id: i64, at: i64| -> Change<'static> { (Some(id), "a@example.com", "gold", Some(at), "upsert") };
    lake.write_changes("2026-09-01", "part-0.parquet", &[up(1, 10), up(2, 10)]);
    lake.write_changes(
        "2026-09-02",
        "part-0.parquet",
        &[up(3, 20), (None, "n@example.com", "gold", Some(20), "upsert")],
    );
    lake.write_changes(
        "2026-09-03",
        "part-0.parquet",
        &[up(4, 30), (Some(5), "m@example.com", "gold", None, "upsert")],
    );
    lake.write_changes("2026-09-04", "part-0.parquet", &[up(6, 40), up(6, 41), up(7, 40), up(7, 42), up(8, 40)]);
    for job in ["merged", "seen"] {
        lake.cli(&["run", job, "--dt", "2026-09-01"]).assert_code(0);
    }
    let null = |job: &str, day: &str, columns: &str, example: &str| {
        format!("{job} dt={day}: 1 source row(s) have a NULL in {columns}; e.g. {example}")
    };
    let cases = [
        ("NULL key", "merged", "2026-09-02", null("merged", "2026-09-02", "customer_id, updated_at", "customer_id=NULL, updated_at=1970-01-01T00:00:20Z")),
        ("NULL key", "seen", "2026-09-02", null("seen", "2026-09-02", "customer_id", "customer_id=NULL")),
        ("NULL newer_by", "merged", "2026-09-03", null("merged", "2026-09-03", "customer_id, updated_at", "customer_id=5, updated_at=NULL")),
        (
            "duplicate keys",
            "merged",
            "2026-09-04",
            "merged dt=2026-09-04: 2 key(s) appear more than once in the source (on_duplicate_keys = \"error\"); e.g. customer_id=6; customer_id=7".to_owned(),
        ),
    ];
    let mut figures = Figures::new("bad input: NULL and duplicate keys", "faults::bad_input::null_and_duplicate_keys");
    for (kind, job, day, expected) in cases {
        let target = if job == "merged" { "core.merged" } else { "core.seen" };
        let before = lake.digest(target, None);
        let run = lake.cli(&["--json", "run", job, "--dt", day]);
        run.assert_code(1);
        let report = run.json().0.remove(0);
        assert_eq!((report.committed, report.error.as_deref()), (false, Some(expected.as_str())), "{job} {day}");
        assert!(run.stderr.ends_with(&format!("error: {expected}\n")), "{}", run.stderr);
        assert_eq!(lake.digest(target, None), before, "{job} {day}: the table changed");
        figures.trial(&format!("{kind} ({job})"), "clear error, exit 1, nothing committed");
    }
    figures.finish();
}

/// A table folder that cannot be read when the catalog is listed (here its `_delta_log` is a
/// link to itself: every read of it fails, as a folder of the wrong owner would) fails only the
/// jobs whose SQL names it, naming the folder; the others run, and `status` and `graph` work.
#[test]
fn an_unreadable_table_folder_fails_only_the_jobs_that_read_it() {
    let project = Project::new()
        .job(Job::new("daily", "analytics.daily").sql("SELECT COUNT(*) AS n, $dt AS dt FROM raw.orders WHERE dt = $dt"))
        .job(
            Job::new("reader", "analytics.reader")
                .sql("SELECT COUNT(*) AS n, $dt AS dt FROM raw.broken WHERE dt = $dt"),
        );
    let lake = crate::support::pipeline::lake(&project);
    let broken = lake.root().join("raw/broken");
    std::fs::create_dir_all(&broken).expect("the folder");
    std::os::unix::fs::symlink("_delta_log", broken.join("_delta_log")).expect("a link to itself");

    lake.cli(&["run", "daily", "--dt", "2026-09-02"]).assert_code(0);
    assert_eq!(lake.status(&["daily", "--from", "2026-09-02", "--to", "2026-09-02"]).partitions[0].state, "fresh");
    lake.cli(&["graph"]).assert_code(0);
    let failed = lake.cli(&["run", "reader", "--dt", "2026-09-02"]);
    failed.assert_code(1);
    let folder = format!("file://{}/_delta_log/", broken.display());
    let error = format!(
        "error: reader dt=2026-09-02: cannot open a table the job's SQL reads: cannot read this table's folder: \
         cannot list {folder} in the lakehouse root: Generic LocalFileSystem error: Unable to walk dir: IO error for \
         operation on {}/_delta_log: Too many levels of symbolic links (os error 40)",
        broken.display()
    );
    assert_eq!(failed.stderr.lines().last(), Some(error.as_str()), "{}", failed.stderr);
    assert!(!lake.root().join("analytics/reader").exists(), "nothing written");
}
