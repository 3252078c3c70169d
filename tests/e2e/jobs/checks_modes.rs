//! Data checks in every write mode: a blocking check commits nothing whether the table exists or
//! not; `merge` and `append_dedup` check their deduplicated source; `change_vs_previous` compares
//! a result with the rows its write replaces, and is refused where a write replaces none; and
//! the same on the S3 test server. Expected counts come from the raw data.

use std::collections::BTreeSet;

use arrow::array::{Decimal128Array, Int64Array, StringArray};

use crate::support::checks::{self, CHECKED, JOB, SQL, TABLE};
use crate::support::modes::{FAILING, GOOD, WRITTEN, label, project, run, table, written};
use crate::support::reader::Reader;
use crate::support::s3::{S3, assert_no_secret};
use crate::support::{
    CheckOutcome, Checks, Job, Lake, Project, Report, WRITE_MODES, WriteMode, daily_orders, day, orders,
};

/// Two checks every result with a row fails: each of its rows fails the second.
fn blocking() -> Checks {
    Checks::new().row_count(None, Some(0)).expect("amount < 0")
}

/// The project of `modes` (see `support::modes`), each job with `checks`.
fn checked(modes: &[WriteMode], checks: &Checks) -> Project {
    modes.iter().fold(project(modes, GOOD), |project, mode| project.with_checks(mode.as_str(), checks.clone()))
}

/// The text of `project` with `[jobs.JOB.checks]` holding `lines`: for check tables the builder
/// cannot write, such as misspelt ones.
fn with_check_lines(project: &Project, job: &str, lines: &str) -> String {
    format!("{}\n[jobs.{job}.checks]\n{lines}\n", project.to_toml())
}

/// The folder of `mode`'s table below the root.
fn dir(mode: WriteMode) -> String {
    table(mode).replace('.', "/")
}

/// How an example of a row of the raw orders of `days` starts: `order_id=…, customer_id=…,
/// amount=…, status=…, `, as the jobs of `support::modes` select them.
fn order_starts(days: &[&str]) -> BTreeSet<String> {
    let mut starts = BTreeSet::new();
    for d in days {
        let batch = lakewriter_datagen::orders_for(day(d));
        let column = |name: &str| batch.column_by_name(name).unwrap_or_else(|| panic!("raw column {name}")).as_any();
        let ids = column("order_id").downcast_ref::<Int64Array>().expect("Int64 order ids");
        let customers = column("customer_id").downcast_ref::<Int64Array>().expect("Int64 customer ids");
        let amounts = column("amount").downcast_ref::<Decimal128Array>().expect("decimal amounts");
        let statuses = column("status").downcast_ref::<StringArray>().expect("string statuses");
        for i in 0..batch.num_rows() {
            let (cents, status) = (amounts.value(i), statuses.value(i));
            let amount = format!("{}.{:02}", cents / 100, cents % 100);
            starts.insert(format!(
                "order_id={}, customer_id={}, amount={amount}, status={status}, ",
                ids.value(i),
                customers.value(i)
            ));
        }
    }
    starts
}

/// Asserts that `report` is a run of `mode` for `dt` that [`BLOCKING`] failed: `rows` result
/// rows of the raw orders of `days`, both checks failed, named in the error, nothing committed.
#[track_caller]
fn assert_blocked(report: &Report, (mode, dt): (WriteMode, &str), days: &[&str]) {
    let rows: u64 = days.iter().map(|d| orders(d)).sum();
    assert_eq!((report.status.as_str(), report.committed), ("failed", false), "{mode:?}: {report:?}");
    let [count, expect] = &report.checks[..] else { panic!("{mode:?}: two checks: {report:?}") };
    let detail = format!("{rows} rows; expected at most 0");
    let expected = CheckOutcome {
        name: "row_count".into(),
        passed: false,
        failing_rows: 0,
        severity: "error".into(),
        detail: Some(detail.clone()),
        examples: Vec::new(),
    };
    assert_eq!(*count, expected, "{mode:?}");
    let found = (expect.name.as_str(), expect.passed, expect.failing_rows, expect.severity.as_str(), &expect.detail);
    assert_eq!(found, ("expect(amount < 0)", false, rows, "error", &None), "{mode:?}");
    let starts = order_starts(days);
    assert_eq!(expect.examples.len(), 5, "{mode:?}: five examples of {rows} rows");
    for example in &expect.examples {
        assert!(starts.iter().any(|s| example.starts_with(s.as_str())), "{mode:?}: `{example}` is no row of {days:?}");
    }
    let shown: Vec<String> = expect.examples.iter().map(|e| format!("({e})")).collect();
    let error = format!(
        "{}: check `row_count` failed: {detail}; check `expect(amount < 0)` failed: {rows} failing rows; e.g. {}",
        label(mode, dt),
        shown.join(", ")
    );
    assert_eq!(report.error.as_deref(), Some(error.as_str()), "{mode:?}");
}

#[test]
fn a_blocking_check_commits_nothing_in_any_mode() {
    let lake = written(&WRITE_MODES);
    lake.set_project(&checked(&WRITE_MODES, &blocking()));
    let reader = Reader::new(&lake);
    for mode in WRITE_MODES {
        let uri = lake.root().join(dir(mode)).display().to_string();
        let (before, read, commits) =
            (lake.digest(&table(mode), None), reader.read(&uri), lake.commit_count(&dir(mode)));
        let run = run(&lake, mode, FAILING);
        run.assert_code(1);
        let days: &[&str] = if mode == WriteMode::Rebuild { &[WRITTEN, FAILING] } else { &[FAILING] };
        assert_blocked(&run.json().0.remove(0), (mode, FAILING), days);
        assert_eq!(lake.digest(&table(mode), None), before, "{mode:?}: the table changed");
        assert_eq!(lake.commit_count(&dir(mode)), commits, "{mode:?}: a commit was added");
        let after = reader.read(&uri);
        assert_eq!((after.version, after.rows, after.digest), (read.version, read.rows, read.digest), "{mode:?}");
    }
}

#[test]
fn a_blocking_check_on_a_first_write_creates_no_table_in_any_mode() {
    let lake = Lake::new(WRITTEN, FAILING);
    lake.set_project(&checked(&WRITE_MODES, &blocking()));
    for mode in WRITE_MODES {
        let run = run(&lake, mode, WRITTEN);
        run.assert_code(1);
        let days: &[&str] = if mode == WriteMode::Rebuild { &[WRITTEN, FAILING] } else { &[WRITTEN] };
        assert_blocked(&run.json().0.remove(0), (mode, WRITTEN), days);
        assert!(!lake.root().join(dir(mode)).exists(), "{mode:?}: a table folder was created");
    }
    assert!(!lake.root().join("failures").exists(), "nothing below the root but the raw layer");
}

#[test]
fn merge_and_append_dedup_check_their_deduplicated_source() {
    let lake = Lake::new(WRITTEN, WRITTEN);
    let sql = "SELECT customer_id, order_id, amount, created_at, $dt AS dt FROM raw.orders WHERE dt = $dt";
    // One row per customer is left of the day's orders.
    let customers = checks::rows(WRITTEN).len();
    assert!(orders(WRITTEN) > customers as u64, "the source has duplicate keys");
    let jobs = [
        ("merged", Job::merge("merged", "keyed.merged", &["customer_id"], "created_at").sql(sql)),
        ("deduped", Job::append_dedup("deduped", "keyed.deduped", &["customer_id"]).sql(sql)),
    ];
    for (name, job) in jobs {
        let project = Project::new().job(job);
        let few = Checks::new().row_count(None, Some(customers as u64 - 1));
        lake.set_project(&project.clone().with_checks(name, few));
        let run = lake.cli(&["--json", "run", name, "--dt", WRITTEN]);
        run.assert_code(1);
        let report = run.json().0.remove(0);
        let detail = format!("{customers} rows; expected at most {}", customers - 1);
        let found: Vec<_> = report.checks.iter().map(|c| (c.name.as_str(), c.passed, c.detail.as_deref())).collect();
        assert_eq!(found, [("row_count", false, Some(detail.as_str()))], "{name}");
        assert!(!lake.root().join("keyed").join(name).exists(), "{name}: no table");

        let exact = Checks::new().unique(&["customer_id"]).row_count(Some(customers as u64), Some(customers as u64));
        lake.set_project(&project.clone().with_checks(name, exact));
        let run = lake.cli(&["--json", "run", name, "--dt", WRITTEN]);
        run.assert_code(0);
        let report = run.json().0.remove(0);
        assert_eq!((report.committed, report.rows_written), (true, Some(customers as u64)), "{name}: {report:?}");
        let found: Vec<_> = report.checks.iter().map(|c| (c.name.as_str(), c.passed, c.failing_rows)).collect();
        assert_eq!(found, [("unique(customer_id)", true, 0), ("row_count", true, 0)], "{name}");
        assert_eq!(lake.digest(&format!("keyed.{name}"), None).rows, customers as u64, "{name}");
    }
}

/// `mode`'s run for `dt` with `checks`, which must exit with `code`.
#[track_caller]
fn run_with(lake: &Lake, (mode, dt): (WriteMode, &str), checks: &Checks, code: i32) -> Report {
    lake.set_project(&project(&[mode], GOOD).with_checks(mode.as_str(), checks.clone()));
    let run = run(lake, mode, dt);
    run.assert_code(code);
    run.json().0.remove(0)
}

/// Asserts that `report` has one check, `change_vs_previous`, as given.
#[track_caller]
fn assert_change(report: &Report, passed: bool, severity: &str, detail: Option<&str>) {
    let found: Vec<_> =
        report.checks.iter().map(|c| (c.name.as_str(), c.passed, c.failing_rows, c.severity.as_str())).collect();
    assert_eq!(found, [("change_vs_previous", passed, 0, severity)], "{report:?}");
    if let Some(detail) = detail {
        assert_eq!(report.checks[0].detail.as_deref(), Some(detail));
    }
}

#[test]
fn change_vs_previous_compares_with_the_rows_the_write_replaces() {
    let limit = &Checks::new().change_vs_previous(10.0);
    for mode in [WriteMode::OverwritePartition, WriteMode::DeleteInsert, WriteMode::Rebuild] {
        let lake = Lake::new(WRITTEN, FAILING);
        // What the write replaces: the day's orders (`rebuild`: every day's).
        let now = if mode == WriteMode::Rebuild { orders(WRITTEN) + orders(FAILING) } else { orders(WRITTEN) };
        let first = run_with(&lake, (mode, WRITTEN), limit, 0);
        assert_change(&first, true, "error", None);
        assert!(first.committed, "nothing to compare with yet: {first:?}");
        let same = run_with(&lake, (mode, WRITTEN), limit, 0);
        assert_change(&same, true, "error", Some(&format!("{now} rows against {now} now (+0.0%); allowed ±10%")));

        let late_orders = lakewriter_datagen::late_orders_for(day(WRITTEN));
        let path = lake.root().join(format!("raw/orders/dt={WRITTEN}/part-late-00000.parquet"));
        lakewriter_datagen::write_parquet(&path, &late_orders).expect("late orders");
        let grown = now + late_orders.num_rows() as u64;
        #[allow(clippy::cast_precision_loss)]
        let pct = (grown - now) as f64 / now as f64 * 100.0;
        assert!(pct > 10.0, "the late orders grow the result beyond the limit");
        let detail = format!("{grown} rows against {now} now ({pct:+.1}%); allowed ±10%");
        let (before, commits) = (lake.digest(&table(mode), None), lake.commit_count(&dir(mode)));
        let blocked = run_with(&lake, (mode, WRITTEN), limit, 1);
        assert_change(&blocked, false, "error", Some(&detail));
        let error = format!("{}: check `change_vs_previous` failed: {detail}", label(mode, WRITTEN));
        assert_eq!((blocked.committed, blocked.error.as_deref()), (false, Some(error.as_str())), "{mode:?}");
        assert_eq!(lake.digest(&table(mode), None), before, "{mode:?}: the table changed");
        assert_eq!(lake.commit_count(&dir(mode)), commits, "{mode:?}: a commit was added");

        let warned = run_with(&lake, (mode, WRITTEN), &limit.clone().warn("change_vs_previous"), 0);
        assert_change(&warned, false, "warn", Some(&detail));
        assert_eq!((warned.committed, warned.table_version), (true, Some(before.version + 1)), "{mode:?}");
        assert_eq!(lake.digest(&table(mode), None).rows, grown, "{mode:?}: the grown result was written");
    }
}

#[test]
fn the_project_file_refuses_checks_a_job_cannot_have() {
    let lake = Lake::new(WRITTEN, WRITTEN);
    let limit = "change_vs_previous = { max_row_count_change_pct = 50 }";
    let refused = |mode: &str| format!("checks.change_vs_previous is not available for write = \"{mode}\"");
    let no_check = |entry: &str| format!("checks.warn: `{entry}` names no check of this job");
    let cases = [
        (WriteMode::Merge, limit, refused("merge")),
        (WriteMode::AppendDedup, limit, refused("append_dedup")),
        (WriteMode::Append, limit, refused("append")),
        (WriteMode::OverwritePartition, "not_nul = [\"customer_id\"]", "not_nul".to_owned()),
        (WriteMode::DeleteInsert, "row_count = { min = 1, most = 2 }", "most".to_owned()),
        (WriteMode::OverwritePartition, "not_null = [\"customer_id\"]\nwarn = [\"unique\"]", no_check("unique")),
        (
            WriteMode::Rebuild,
            "row_count = { min = 1 }\nwarn = [\"not_null(customer_id)\"]",
            no_check("not_null(customer_id)"),
        ),
    ];
    for (mode, lines, says) in cases {
        lake.set_project_text(&with_check_lines(&project(&[mode], GOOD), mode.as_str(), lines));
        for run in [lake.cli(&["lint"]), run(&lake, mode, WRITTEN)] {
            run.assert_code(2);
            assert!(run.stderr.starts_with("error: ") && run.stderr.contains(&says), "{lines}: {}", run.stderr);
        }
    }
    assert!(!lake.root().join("failures").exists(), "nothing written");
}

#[test]
fn on_s3_a_blocking_check_commits_nothing_and_a_warning_commits() {
    let s3 = S3::new("checks");
    for d in [checks::WRITTEN, CHECKED] {
        let bytes = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(day(d))).expect("parquet");
        s3.put(&format!("raw/orders/dt={d}/part-00000.parquet"), bytes);
    }
    let (lake, project) = (&s3.lake, daily_orders(SQL).root(s3.root()));
    let written = checks::rows(checks::WRITTEN).len() as u64;
    lake.set_project(&project.clone().with_checks(JOB, Checks::new().row_count(None, Some(0))));
    let run = lake.cli(&["--json", "run", JOB, "--dt", checks::WRITTEN]);
    run.assert_code(1);
    assert_no_secret(&run);
    let error = run.json().0.remove(0).error.unwrap_or_default();
    let label = format!("{JOB} dt={}", checks::WRITTEN);
    assert_eq!(error, format!("{label}: check `row_count` failed: {written} rows; expected at most 0"));
    let digest = lake.cli(&["digest", TABLE]);
    digest.assert_code(1);
    assert!(
        digest.stderr.contains(&format!("no Delta table at {}", s3.url("analytics/daily_orders/"))),
        "{}",
        digest.stderr
    );

    lake.set_project(&project);
    lake.cli(&["run", JOB, "--dt", checks::WRITTEN]).assert_code(0);
    let (reader, uri) = (Reader::new(lake), s3.url("analytics/daily_orders"));
    let (before, read) = (lake.digest(TABLE, None), reader.read(&uri));
    let nulls = checks::rows(CHECKED).iter().filter(|r| r.orders == 1).count() as u64;
    let nulls_checked = Checks::new().not_null("repeat_orders");
    for (checks, code) in [(nulls_checked.clone(), 1), (nulls_checked.warn("not_null"), 0)] {
        lake.set_project(&project.clone().with_checks(JOB, checks));
        let run = lake.cli(&["--json", "run", JOB, "--dt", CHECKED]);
        run.assert_code(code);
        assert_no_secret(&run);
        let report = run.json().0.remove(0);
        let [check] = &report.checks[..] else { panic!("one check: {report:?}") };
        let severity = if code == 0 { "warn" } else { "error" };
        let found = (check.name.as_str(), check.passed, check.failing_rows, check.severity.as_str());
        assert_eq!(found, ("not_null(repeat_orders)", false, nulls, severity));
        let after = reader.read(&uri);
        if code == 1 {
            assert!(!report.committed && lake.digest(TABLE, None) == before, "{report:?}");
            assert_eq!((after.version, after.rows, &after.digest), (read.version, read.rows, &read.digest));
        } else {
            assert_eq!((report.committed, report.table_version), (true, Some(before.version + 1)));
            let rows = written + checks::rows(CHECKED).len() as u64;
            assert_eq!((after.version, after.rows), (before.version + 1, rows), "the independent reader");
        }
    }
}

#[test]
fn passing_checks_write_what_a_job_without_checks_writes_in_every_mode() {
    // Checks hold the result in memory before writing it: the table must be the same, and
    // runs with and without checks must mix on one table.
    let unchecked = written(&WRITE_MODES);
    let checked_lake = Lake::new(WRITTEN, FAILING);
    let passing = Checks::new().not_null("order_id").not_null("amount").unique(&["order_id"]).row_count(Some(1), None);
    checked_lake.set_project(&checked(&WRITE_MODES, &passing));
    for mode in WRITE_MODES {
        run(&unchecked, mode, FAILING).assert_code(0);
        for dt in [WRITTEN, FAILING] {
            let report = run(&checked_lake, mode, dt).assert_code(0).json().0.remove(0);
            assert!(report.committed && report.checks.len() == 4, "{mode:?}: {report:?}");
            assert!(report.checks.iter().all(|c| c.passed), "{mode:?}: {report:?}");
        }
        let (with, without) = (checked_lake.digest(&table(mode), None), unchecked.digest(&table(mode), None));
        assert_eq!((with.rows, with.digest), (without.rows, without.digest), "{mode:?}");
    }
    checked_lake.set_project(&project(&WRITE_MODES, GOOD));
    for mode in WRITE_MODES {
        let before = checked_lake.digest(&table(mode), None);
        run(&checked_lake, mode, WRITTEN).assert_code(0);
        let after = checked_lake.digest(&table(mode), None);
        assert_eq!((after.rows, after.digest), (before.rows, before.digest), "{mode:?}: rerun without checks");
    }
}

#[test]
fn a_condition_on_dt_is_refused_by_lint_or_evaluated_for_the_partition() {
    // `$dt` binds in a job's SQL and a delete_insert's predicate; in a check's condition too:
    // lint passes it, and the run evaluates it with the partition's date.
    let lake = Lake::new(WRITTEN, WRITTEN);
    lake.set_project(&daily_orders(SQL).with_checks(JOB, Checks::new().expect("dt = $dt")));
    let lint = lake.cli(&["--json", "lint"]);
    let run = lake.cli(&["--json", "run", JOB, "--dt", WRITTEN]);
    let report = run.json().0.remove(0);
    lint.assert_code(0);
    run.assert_code(0);
    let found: Vec<_> = report.checks.iter().map(|c| (c.name.as_str(), c.passed, c.failing_rows)).collect();
    assert_eq!(found, [("expect(dt = $dt)", true, 0)], "lint passed it, the run failed: {report:?}");
}
