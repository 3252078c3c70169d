//! Dates and timestamps outside the range the Delta protocol stores — 0001-01-01 to 9999-12-31,
//! a timestamp to 9999-12-31 23:59:59.999999 — which Spark refuses and delta-rs Python cannot
//! read back (a table holding one fails to read as a whole): a run or a statement whose rows hold
//! one fails naming the column and a value, in every write mode, for `lakewriter sql` INSERT,
//! MERGE and UPDATE, and nested in structs, lists and maps; nothing is committed and no table is
//! created. The range's own ends are written.

use crate::support::sql::sql;
use crate::support::{Job, Lake, Project, Run, WRITE_MODES, WriteMode, json_lines};

const DAY1: &str = "2026-09-01";
const DAY2: &str = "2026-09-02";

/// The day before the first date Delta stores.
const BEFORE_FIRST: &str = "DATE '0001-01-01' - INTERVAL '1 day'";

/// What a run of a date before the first says about the column `d`.
const D_BEFORE_FIRST: &str = "column `d` holds 0000-12-31, outside the dates Delta stores (0001-01-01 to 9999-12-31)";

/// Some of a day's orders hold [`BEFORE_FIRST`], the others the first date Delta stores.
fn some_before_first() -> String {
    format!("CASE WHEN order_id % 5 = 3 THEN {BEFORE_FIRST} ELSE DATE '0001-01-01' END")
}

fn table(mode: WriteMode) -> String {
    format!("dates.{}", mode.as_str())
}

/// The job of `mode`, named after it, writing [`table`]: each order of the day (`rebuild`: of
/// every day) with the column `column` computed by `expr`, keyed by `order_id`.
fn job(mode: WriteMode, column: &str, expr: &str) -> Job {
    let all = format!("SELECT order_id, {expr} AS {column}, created_at, dt FROM raw.orders");
    let one_day = format!("SELECT order_id, {expr} AS {column}, created_at, $dt AS dt FROM raw.orders WHERE dt = $dt");
    crate::support::modes::mode_job(mode, &table(mode), one_day, all)
}

fn project(column: &str, expr: &str) -> Project {
    WRITE_MODES.iter().fold(Project::new(), |project, &mode| project.job(job(mode, column, expr)))
}

/// `lakewriter --json run MODE --dt DAY` (`rebuild`: without a date).
fn run(lake: &Lake, mode: WriteMode, day: &str) -> Run {
    let mut args = vec!["--json", "run", mode.as_str()];
    if mode != WriteMode::Rebuild {
        args.extend(["--dt", day]);
    }
    lake.cli(&args)
}

/// Runs `mode` for `day`, which must fail (exit 1) with an error that says `refusal`; nothing is
/// committed: the table's digest and version are as they were, or there is still no table.
#[track_caller]
fn assert_refused(lake: &Lake, mode: WriteMode, day: &str, refusal: &str) {
    let log = lake.root().join(format!("dates/{}/_delta_log", mode.as_str()));
    let before = log.exists().then(|| lake.digest(&table(mode), None));
    let run = run(lake, mode, day);
    run.assert_code(1);
    let (reports, _) = run.json();
    let error = reports[0].error.as_deref().unwrap_or_default();
    assert!(error.contains(refusal), "{mode:?}: the error does not say `{refusal}`: {error}");
    assert!(!reports[0].committed, "{mode:?}");
    match before {
        Some(before) => assert_eq!(lake.digest(&table(mode), None), before, "{mode:?}: the table changed"),
        None => assert!(!log.exists(), "{mode:?}: a table was created"),
    }
}

#[test]
fn a_date_outside_the_protocols_range_fails_every_mode_and_commits_nothing() {
    let lake = Lake::new(DAY1, DAY2);
    // The range's ends are dates like any other.
    lake.set_project(&project("d", "CASE WHEN order_id % 2 = 0 THEN DATE '0001-01-01' ELSE DATE '9999-12-31' END"));
    for mode in WRITE_MODES {
        run(&lake, mode, DAY1).assert_code(0);
    }
    lake.set_project(&project("d", &some_before_first()));
    for mode in WRITE_MODES {
        assert_refused(&lake, mode, DAY2, D_BEFORE_FIRST);
    }

    // A first write creates no table.
    let fresh = Lake::new(DAY1, DAY1);
    fresh.set_project(&project("d", &some_before_first()));
    for mode in WRITE_MODES {
        assert_refused(&fresh, mode, DAY1, D_BEFORE_FIRST);
    }
}

#[test]
fn timestamps_and_nested_dates_outside_the_range_are_refused_naming_the_field() {
    let last = "to_timestamp_micros(253402300799999999)";
    let first = "to_timestamp_seconds(-62135596800)";
    let lake = Lake::new(DAY1, DAY1);
    for (column, expr) in [
        ("ts", first.to_owned()),
        ("ts", last.to_owned()),
        ("ts_utc", format!("arrow_cast({last}, 'Timestamp(Microsecond, Some(\"UTC\"))')")),
        ("st", format!("named_struct('at', {first}, 'd', DATE '9999-12-31')")),
    ] {
        lake.set_project(&Project::new().job(job(WriteMode::OverwritePartition, column, &expr).datafusion()));
        run(&lake, WriteMode::OverwritePartition, DAY1).assert_code(0);
        std::fs::remove_dir_all(lake.root().join("dates")).expect("remove the table");
    }
    let refused = |value: &str, at: &str, kind: &str| {
        let range = match kind {
            "dates" => "(0001-01-01 to 9999-12-31)".to_owned(),
            utc => format!("(0001-01-01 00:00:00 to 9999-12-31 23:59:59.999999{utc})"),
        };
        let kind = if kind == "dates" { "dates" } else { "timestamps" };
        format!("holds {value}{at}, outside the {kind} Delta stores {range}")
    };
    let cases = [
        ("d", "DATE '9999-12-31' + INTERVAL '1 day'".to_owned(), refused("+10000-01-01", "", "dates")),
        ("ts", "to_timestamp_seconds(-62135596801)".to_owned(), refused("0000-12-31 23:59:59", "", "")),
        ("ts", "to_timestamp_micros(253402300800000000)".to_owned(), refused("+10000-01-01 00:00:00", "", "")),
        (
            "ts_utc",
            "arrow_cast(to_timestamp_seconds(-62135596801), 'Timestamp(Second, Some(\"UTC\"))')".to_owned(),
            refused("0000-12-31 23:59:59 UTC", "", " UTC"),
        ),
        (
            "st",
            format!("named_struct('n', order_id, 'at', {BEFORE_FIRST})"),
            refused("0000-12-31", " in `st.at`", "dates"),
        ),
        ("l", format!("make_array(DATE '2026-01-01', {BEFORE_FIRST})"), refused("0000-12-31", " in `l[]`", "dates")),
        ("m", format!("map(['k'], [{BEFORE_FIRST}])"), refused("0000-12-31", " in `m.value`", "dates")),
        (
            "ls",
            "make_array(named_struct('ts', to_timestamp_seconds(-62135596801)))".to_owned(),
            refused("0000-12-31 23:59:59", " in `ls[].ts`", ""),
        ),
    ];
    for (column, expr, refusal) in cases {
        lake.set_project(&Project::new().job(job(WriteMode::OverwritePartition, column, &expr).datafusion()));
        assert_refused(&lake, WriteMode::OverwritePartition, DAY1, &format!("column `{column}` {refusal}"));
    }
}

/// Runs `statement` with `lakewriter --json sql -e`, which must fail with an error that says
/// `refusal`.
#[track_caller]
fn assert_statement_refused(lake: &Lake, statement: &str, refusal: &str) {
    let run = lake.cli(&["--json", "sql", "-e", statement]);
    run.assert_code(1);
    let lines = json_lines(&run);
    let error = lines.iter().find_map(|l| l["error"].as_str()).unwrap_or_default();
    assert!(error.contains(refusal), "{statement}: the error does not say `{refusal}`: {error}");
}

#[test]
fn insert_merge_and_update_statements_refuse_a_date_outside_the_range() {
    let lake = Lake::new(DAY1, DAY2);
    let create = format!(
        "INSERT OVERWRITE dates.t PARTITION (dt = '{DAY1}') SELECT order_id, DATE '0001-01-01' AS d FROM raw.orders \
         WHERE dt = '{DAY1}'"
    );
    sql(&lake, &["-e", &create]).assert_code(0);
    let before = lake.digest("dates.t", None);
    let statements = [
        format!("INSERT INTO dates.t SELECT order_id, {BEFORE_FIRST} AS d, dt FROM raw.orders WHERE dt = '{DAY2}'"),
        format!(
            "INSERT OVERWRITE dates.t PARTITION (dt = '{DAY1}') SELECT order_id, {BEFORE_FIRST} AS d \
             FROM raw.orders WHERE dt = '{DAY1}'"
        ),
        format!(
            "MERGE INTO dates.t t USING (SELECT order_id FROM raw.orders WHERE dt = '{DAY1}') s \
             ON t.order_id = s.order_id WHEN MATCHED AND s.order_id % 5 = 3 THEN UPDATE SET d = t.d - INTERVAL '1 day'"
        ),
        format!(
            "MERGE INTO dates.t t USING (SELECT order_id, {BEFORE_FIRST} AS d, dt FROM raw.orders \
             WHERE dt = '{DAY2}') s ON t.order_id = s.order_id WHEN NOT MATCHED THEN INSERT *"
        ),
        "UPDATE dates.t SET d = d - INTERVAL '1 day' WHERE order_id % 5 = 3".to_owned(),
    ];
    for statement in &statements {
        assert_statement_refused(&lake, statement, D_BEFORE_FIRST);
        assert_eq!(lake.digest("dates.t", None), before, "{statement}: the table changed");
    }
    // The guard sees the rows a statement writes, not those it leaves as they are: a day taken
    // off every date after the first is no refusal.
    sql(&lake, &["-e", "UPDATE dates.t SET d = DATE '2026-01-01' WHERE order_id % 2 = 0"]).assert_code(0);
    for statement in [
        "UPDATE dates.t SET d = d - INTERVAL '1 day' WHERE d > DATE '0001-01-01'",
        "MERGE INTO dates.t t USING (SELECT order_id FROM raw.orders) s ON t.order_id = s.order_id \
         WHEN MATCHED AND t.d > DATE '0001-01-01' THEN UPDATE SET d = t.d - INTERVAL '1 day'",
    ] {
        sql(&lake, &["-e", statement]).assert_code(0);
    }
    // A MERGE into a table that does not exist creates none.
    let merge = format!(
        "MERGE INTO dates.new t USING (SELECT order_id, {BEFORE_FIRST} AS d FROM raw.orders WHERE dt = '{DAY1}') s \
         ON t.order_id = s.order_id WHEN NOT MATCHED THEN INSERT *"
    );
    assert_statement_refused(&lake, &merge, D_BEFORE_FIRST);
    assert!(!lake.root().join("dates/new/_delta_log").exists(), "a table was created");
}
