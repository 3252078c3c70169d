//! The same failure in every write mode it applies to. Each test is a table with a row per mode:
//! the exit code, the exact error the binary prints (in the run's report and on stderr), and the
//! table as it was (the same content digest and version). A mode a failure cannot happen in has
//! no row, and the test says why.

use crate::support::figures::Figures;
use crate::support::modes::{Columns, DATED, FAILING, GOOD, WRITTEN, job, label, project, run, table, written};
use crate::support::{Digest, Lake, Project, WRITE_MODES, WriteMode, orders};

/// A day without raw data.
const NO_DATA: &str = "2026-09-03";

/// Runs each mode of `expected` for `day` and asserts that it fails: exit code 1, a failed report
/// whose error is exactly the row's, the same error last on stderr,
/// and the table's digest and version as they were. Each mode is a trial of the figures of
/// `failure` (`bad input: FAILURE`), run by `test`.
#[track_caller]
fn assert_each_fails(lake: &Lake, day: &str, expected: &[(WriteMode, String)], (failure, test): (&str, &str)) {
    let mut figures = Figures::new(&format!("bad input: {failure}"), &format!("faults::failures::{test}"));
    for (mode, error) in expected {
        let before = lake.digest(&table(*mode), None);
        let run = run(lake, *mode, day);
        run.assert_code(1);
        let (mut reports, summary) = run.json();
        assert_eq!((reports.len(), summary.ok, summary.failed), (1, 0, 1), "{mode:?}");
        let report = reports.remove(0);
        assert_eq!((report.status.as_str(), report.committed), ("failed", false), "{mode:?}: {report:?}");
        let reported = report.error.as_deref().unwrap_or_default();
        assert_eq!(reported, error, "{mode:?}: the error");
        // Logs (warnings, each with its time) may come before it.
        assert!(run.stderr.ends_with(&format!("error: {reported}\n")), "{mode:?}: stderr:\n{}", run.stderr);
        assert_eq!(lake.digest(&table(*mode), None), before, "{mode:?}: the table changed");
        figures.trial(mode.as_str(), "clear error, exit 1, nothing committed");
    }
    figures.finish();
}

#[test]
fn a_runtime_sql_error_fails_every_mode_and_the_fixed_job_writes_what_it_would_have() {
    let lake = written(&WRITE_MODES);
    // Fails on the first row, while the result is computed: planning succeeds.
    let failing = Columns { customer_id: "CAST(CASE WHEN customer_id >= 0 THEN 'x' ELSE '1' END AS BIGINT)", ..GOOD };
    // DataFusion's dialect, whose cast error this is (Spark's is `CAST_INVALID_INPUT`).
    lake.set_project(&project(&WRITE_MODES, failing).all_datafusion());
    let cast = "Cast error: Cannot cast string 'x' to value of Int64 type";
    // delta-rs's write (of a table that is not partitioned by the predicate's column, here) in its
    // words; lakewriter's own write (a partition overwrite, an append and a rebuild of an existing
    // table) hands on DataFusion's.
    let writing = |mode: &str, partition: &str| {
        format!(
            "failures.{mode}: writing {partition} failed; nothing was committed: Failed to convert into Arrow \
             schema: {cast}"
        )
    };
    let own = |mode: &str, partition: &str| {
        format!("failures.{mode}: writing {partition} failed; nothing was committed: Arrow error: {cast}")
    };
    assert_each_fails(
        &lake,
        FAILING,
        &[
            (
                WriteMode::OverwritePartition,
                format!("overwrite_partition dt=2026-09-02: {}", own("overwrite_partition", "dt=2026-09-02")),
            ),
            (
                WriteMode::DeleteInsert,
                format!("delete_insert dt=2026-09-02: {}", writing("delete_insert", "dt=2026-09-02")),
            ),
            (WriteMode::Merge, format!("merge dt=2026-09-02: cannot prepare the keyed source: Arrow error: {cast}")),
            (
                WriteMode::AppendDedup,
                format!("append_dedup dt=2026-09-02: cannot prepare the keyed source: Arrow error: {cast}"),
            ),
            (WriteMode::Append, format!("append dt=2026-09-02: {}", own("append", "dt=2026-09-02"))),
            (WriteMode::Rebuild, format!("rebuild (whole table): {}", own("rebuild", "all"))),
        ],
        (
            "SQL failing at run time (a cast)",
            "a_runtime_sql_error_fails_every_mode_and_the_fixed_job_writes_what_it_would_have",
        ),
    );

    // The job fixed, each run commits one new version, and every table is what runs that never
    // failed write.
    let reference = written(&WRITE_MODES);
    lake.set_project(&project(&WRITE_MODES, GOOD));
    for mode in WRITE_MODES {
        let before = lake.digest(&table(mode), None);
        let report = run(&lake, mode, FAILING).assert_code(0).json().0.remove(0);
        assert_eq!((report.committed, report.table_version), (true, Some(before.version + 1)), "{mode:?}");
        // A row an order of the day (`rebuild`: of every day), each order a new key.
        let rows = if mode == WriteMode::Rebuild { orders(WRITTEN) + orders(FAILING) } else { orders(FAILING) };
        assert_eq!(report.rows_written, Some(rows), "{mode:?}: {report:?}");
        run(&reference, mode, FAILING).assert_code(0);
        let (retried, expected) = (lake.digest(&table(mode), None), reference.digest(&table(mode), None));
        assert_eq!((retried.digest, retried.rows), (expected.digest, expected.rows), "{mode:?}");
    }
}

#[test]
fn a_column_of_another_type_fails_every_mode_but_rebuild() {
    // `rebuild` replaces the whole table, its schema with it: another type is no failure there.
    let lake = written(&DATED);
    lake.set_project(&project(&DATED, Columns { amount: "CAST(amount AS VARCHAR)", ..GOOD }));
    let refused = "the result does not match the table's schema: column `amount` is decimal(12,2) in the table \
                   but string in the result; nothing was committed";
    let expected = DATED.map(|mode| {
        let (name, advice) = (mode.as_str(), crate::support::schema_advice(mode.as_str()));
        (mode, format!("{name} dt=2026-09-02: failures.{name}: {refused}; {advice}"))
    });
    assert_each_fails(
        &lake,
        FAILING,
        &expected,
        ("a column of another type than the table", "a_column_of_another_type_fails_every_mode_but_rebuild"),
    );
}

#[test]
fn rows_outside_the_partition_fail_the_modes_that_replace_a_slice() {
    // `merge`, `append_dedup` and `append` replace no slice: they write rows of any `dt`;
    // `rebuild` has no partition.
    let modes = [WriteMode::OverwritePartition, WriteMode::DeleteInsert];
    let lake = written(&modes);
    lake.set_project(&project(&modes, Columns { dt: "DATE '2026-01-01'", ..GOOD }));
    let rows = orders(FAILING);
    assert_each_fails(
        &lake,
        FAILING,
        &[
            (
                WriteMode::OverwritePartition,
                format!(
                    "overwrite_partition dt=2026-09-02: failures.overwrite_partition: the result has {rows} rows \
                     whose `dt` is not 2026-09-02; nothing was committed"
                ),
            ),
            (
                WriteMode::DeleteInsert,
                format!(
                    "delete_insert dt=2026-09-02: failures.delete_insert: the result has {rows} rows that do not \
                     satisfy the predicate `dt = $dt` ($dt = 2026-09-02); nothing was committed"
                ),
            ),
        ],
        ("rows outside the partition", "rows_outside_the_partition_fail_the_modes_that_replace_a_slice"),
    );
}

#[test]
fn a_clock_or_random_function_fails_every_mode_before_it_reads_anything() {
    let lake = written(&WRITE_MODES);
    // DataFusion's `now()`, which its dialect plans (the `spark` dialect refuses it).
    lake.set_project(&project(&WRITE_MODES, Columns { status: "CAST(now() AS VARCHAR)", ..GOOD }).all_datafusion());
    let expected = WRITE_MODES.map(|mode| {
        let name = mode.as_str();
        let error = format!(
            "{}: job {name}: nondeterministic: now() differs between runs of the same partition; compute from $dt \
             and the data instead, or set `allow_nondeterministic = true` on job `{name}` to allow it",
            label(mode, FAILING)
        );
        (mode, error)
    });
    assert_each_fails(
        &lake,
        FAILING,
        &expected,
        ("a clock or random function", "a_clock_or_random_function_fails_every_mode_before_it_reads_anything"),
    );
}

#[test]
fn an_unreadable_raw_file_fails_every_mode_that_reads_it_and_names_it() {
    let lake = written(&WRITE_MODES);
    let bad = lake.root().join("raw/orders/dt=2026-09-02/part-bad.parquet");
    std::fs::write(&bad, "not parquet").expect("bad raw file");
    let expected = WRITE_MODES.map(|mode| {
        let error = format!(
            "{}: raw file file://{} of raw.orders is not a readable Parquet file: Parquet error: Parquet error: \
             Invalid Parquet file. Corrupt footer",
            label(mode, FAILING),
            bad.display()
        );
        (mode, error)
    });
    assert_each_fails(
        &lake,
        FAILING,
        &expected,
        ("an unreadable raw file", "an_unreadable_raw_file_fails_every_mode_that_reads_it_and_names_it"),
    );
}

#[test]
fn a_raw_table_that_does_not_exist_fails_every_mode() {
    let lake = written(&WRITE_MODES);
    lake.set_project(&project(&WRITE_MODES, Columns { from: "raw.nothing", ..GOOD }));
    let expected = WRITE_MODES.map(|mode| {
        let error = format!(
            "{}: table `raw.nothing` not found (at lakewriter.toml:{}); the lakehouse has 7 table(s): `lakewriter \
             sql -e \"SHOW TABLES\"` lists them",
            label(mode, FAILING),
            raw_nothing_at(&lake, mode)
        );
        (mode, error)
    });
    assert_each_fails(
        &lake,
        FAILING,
        &expected,
        ("a raw table that does not exist (SQL planning error)", "a_raw_table_that_does_not_exist_fails_every_mode"),
    );
}

#[test]
fn a_day_without_raw_data_fails_in_every_dated_mode_and_is_an_empty_run_where_the_job_says_so() {
    // By default the run fails naming the dataset and the day, and commits nothing.
    let lake = written(&DATED);
    for mode in DATED {
        let before = lake.digest(&table(mode), None);
        let report = run(&lake, mode, NO_DATA).assert_code(1).json().0.remove(0);
        assert_eq!((report.status.as_str(), report.committed), ("failed", false), "{mode:?}: {report:?}");
        let error = report.error.as_deref().unwrap_or_default();
        assert!(error.contains(&format!("no input: raw.orders has no file for {NO_DATA}")), "{mode:?}: {error}");
        assert_eq!(lake.digest(&table(mode), None), before, "{mode:?}: nothing committed");
    }
    // With `on_missing_input = "empty"` the run succeeds writing no row: the partition overwrites
    // empty; the keyed modes, with no row to change, commit the partition's new state alone; an
    // append appends nothing.
    lake.set_project(&DATED.iter().fold(Project::new(), |p, &mode| p.job(job(mode, GOOD).on_missing_input("empty"))));
    for mode in DATED {
        let before = lake.digest(&table(mode), None);
        let report = run(&lake, mode, NO_DATA).assert_code(0).json().0.remove(0);
        let outcome = (report.status.as_str(), report.committed, report.rows_written, report.files_scanned);
        assert_eq!(outcome, ("ok", true, Some(0), Some(0)), "{mode:?}: {report:?}");
        let after = lake.digest(&table(mode), None);
        assert_eq!((after.digest, after.rows, after.version), (before.digest, before.rows, before.version + 1));
    }
}

#[test]
fn a_bad_or_missing_date_is_a_usage_error_in_every_mode() {
    let lake = written(&WRITE_MODES);
    let before: Vec<Digest> = WRITE_MODES.iter().map(|&mode| lake.digest(&table(mode), None)).collect();
    let runs_for_a_date =
        |name: &str| format!("error: job `{name}` (write = \"{name}\") runs for a date: pass --dt YYYY-MM-DD\n");
    let invalid = |option: &str, value: &str| {
        format!(
            "error: invalid value '{value}' for '--{option} <DATE>': invalid date `{value}`: expected a calendar date \
             as YYYY-MM-DD\n\nFor more information, try '--help'.\n"
        )
    };
    let inverted = "error: invalid date range: --from 2026-09-02 is after --to 2026-09-01\n".to_owned();
    let mut cases: Vec<(Vec<&str>, String)> = Vec::new();
    for mode in WRITE_MODES {
        let name = mode.as_str();
        for bad in ["2026-02-30", "2026-9-1", "yesterday"] {
            cases.push((vec!["run", name, "--dt", bad], invalid("dt", bad)));
        }
        cases.push((
            vec!["backfill", name, "--from", "2026-09-32", "--to", "2026-09-01"],
            invalid("from", "2026-09-32"),
        ));
        cases.push((vec!["backfill", name, "--from", "2026-09-02", "--to", "2026-09-01"], inverted.clone()));
        let date = match mode {
            WriteMode::Rebuild => {
                "error: job `rebuild` (write = \"rebuild\") rebuilds the whole table: run it without --dt\n".to_owned()
            }
            WriteMode::Append => "error: job `append` (write = \"append\") runs for a date: pass --dt YYYY-MM-DD (an \
                             append without a partition could not be made exactly-once)\n"
                .to_owned(),
            _ => runs_for_a_date(name),
        };
        let args = if mode == WriteMode::Rebuild { vec!["run", name, "--dt", WRITTEN] } else { vec!["run", name] };
        cases.push((args, date));
    }
    cases.push((
        vec!["backfill", "rebuild", "--from", "2026-09-01", "--to", "2026-09-02"],
        "error: job `rebuild` (write = \"rebuild\") has no partitions to backfill: use `lakewriter run rebuild`\n"
            .to_owned(),
    ));
    for (args, stderr) in cases {
        let run = lake.cli(&args);
        run.assert_code(2);
        assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", stderr.as_str()), "{args:?}");
    }
    let after: Vec<Digest> = WRITE_MODES.iter().map(|&mode| lake.digest(&table(mode), None)).collect();
    assert_eq!(after, before, "no table changed");
}

/// `LINE:COLUMN` of `raw.nothing` in `mode`'s job of the project file: where its error says it is.
fn raw_nothing_at(lake: &Lake, mode: WriteMode) -> String {
    let text = std::fs::read_to_string(lake.project_file()).expect("the project file");
    let job = text.find(&format!("[jobs.{}]", mode.as_str())).expect("the job's table");
    let at = job + text[job..].find("raw.nothing").expect("raw.nothing in the job's SQL");
    let line = text[..at].matches('\n').count() + 1;
    let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{line}:{column}")
}
