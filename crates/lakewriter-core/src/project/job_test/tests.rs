//! Reading `[tests.NAME]`: dates, given tables, expectations, values, and the errors naming the
//! test and the key.

use std::path::Path;

use chrono::NaiveDate;

use crate::project::{Expect, Fixture, Project, Value};

const JOBS: &str = r#"
root = "lake"
[jobs.daily]
target = "mart.daily"
write = "overwrite_partition"
partition_by = "dt"
sql = "SELECT 1"
[jobs.whole]
target = "mart.whole"
write = "rebuild"
sql = "SELECT 1"
"#;

fn parse(tests: &str) -> crate::Result<Project> {
    Project::parse(&format!("{JOBS}{tests}"), Path::new("/p/lakewriter.toml"))
}

fn err(tests: &str) -> String {
    parse(tests).expect_err("an error").to_string()
}

fn day(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").expect("a date")
}

#[test]
fn a_test_reads_its_dates_given_rows_and_expectation() {
    let project = parse(
        r#"
[tests.counts]
job = "daily"
dates = [2026-09-01, 2026-09-02]
[tests.counts.given."raw.orders"]
rows = [{ id = 1, amount = 10.5, ok = true, dt = 2026-09-01, at = 2026-09-01T10:00:00, utc = 2026-09-01T10:00:00+02:00, name = "a" }, { id = 2 }]
schema = { amount = "DECIMAL(10,2)" }
[tests.counts.expect]
file = "tests/expected.csv"
schema = { revenue = "DECIMAL(22,2)" }
tolerance = 1e-9
"#,
    )
    .expect("a good test");
    let test = &project.tests["counts"];
    assert_eq!((test.job.as_str(), test.dates.clone()), ("daily", vec![day("2026-09-01"), day("2026-09-02")]));
    let given = &test.given[&crate::TableRef::parse("raw.orders").expect("a table")];
    let Fixture::Rows(rows) = &given.data else { panic!("rows") };
    let at = day("2026-09-01").and_hms_opt(10, 0, 0).expect("a time");
    assert_eq!(rows[0]["id"], Value::Integer(1));
    assert_eq!(rows[0]["amount"], Value::Float(10.5));
    assert_eq!(rows[0]["ok"], Value::Bool(true));
    assert_eq!(rows[0]["dt"], Value::Date(day("2026-09-01")));
    assert_eq!(rows[0]["at"], Value::Timestamp(at));
    assert_eq!(rows[0]["utc"], Value::TimestampUtc(at - chrono::Duration::hours(2)));
    assert_eq!(rows[0]["name"], Value::String("a".into()));
    assert!(!rows[1].contains_key("amount"), "a column a row leaves out is NULL in it");
    assert_eq!(given.schema["amount"], "DECIMAL(10,2)");
    let expected = Expect::Rows {
        data: Fixture::File(Path::new("/p/tests/expected.csv").into()),
        tolerance: Some(1e-9),
        schema: [("revenue".to_owned(), "DECIMAL(22,2)".to_owned())].into(),
    };
    assert_eq!(test.expect, expected);
}

#[test]
fn a_test_of_a_job_the_file_lacks_is_read_and_left_to_the_test_to_refuse() {
    // `lakewriter test` and `lint` refuse it; the file's jobs still run.
    let project = parse("[tests.t]\njob = \"nope\"\nexpect = { rows = [] }\n").expect("the file reads");
    assert_eq!((project.tests["t"].job.as_str(), project.tests["t"].dates.len()), ("nope", 0));
}

#[test]
fn a_rebuild_runs_without_a_date_and_an_error_can_be_expected() {
    let project = parse("[tests.t]\njob = \"whole\"\nexpect = { error = \"blocked\" }\n").expect("a good test");
    assert!(project.tests["t"].dates.is_empty());
    assert_eq!(project.tests["t"].expect, Expect::Error("blocked".into()));
}

#[test]
fn errors_name_the_test_and_the_key() {
    let cases = [
        ("[tests.t]\ndt = 2026-09-01\nexpect = { rows = [] }", "test `t`: missing field `job`"),
        (
            "[tests.t]\njob = \"daily\"\ndt = \"2026-09-01\"\nexpect = { rows = [] }",
            "key `dt`: \"2026-09-01\" is a string: write the date bare",
        ),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01T10:00:00\nexpect = { rows = [] }",
            "key `dt`: `2026-09-01T10:00:00` is not a date",
        ),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01\ndates = [2026-09-01]\nexpect = { rows = [] }",
            "either `dt` or `dates`",
        ),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01\nexpect = { rows = [], error = \"x\" }",
            "key `expect`: set `error`, or `rows` or `file`",
        ),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01\nexpect = { rows = [], tolerance = -1.0 }",
            "key `expect.tolerance`",
        ),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01\nexpect = { error = \"x\", schema = { a = \"INT\" } }",
            "key `expect.schema` applies to expected rows, not to an error",
        ),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01\nexpect = { rows = [], schema = { a = \" \" } }",
            "key `expect`: key `schema`: an empty column name or type (`a`)",
        ),
        ("[tests.t]\njob = \"daily\"\ndt = 2026-09-01\nexpect = {}", "key `expect`: set `rows` (or `file`)"),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01\nexpect = { rows = [{ a = [1] }] }",
            "key `expect.rows[0].a`: a list or a table",
        ),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01\nexpect = { rows = [] }\n[tests.t.given.orders]\nrows = []",
            "key `given.\"orders\"`: invalid table name",
        ),
        (
            "[tests.t]\njob = \"daily\"\ndt = 2026-09-01\nexpect = { rows = [] }\n[tests.t.given.\"raw.o\"]\nrows = []\nfile = \"a.csv\"",
            "key `given.\"raw.o\"`: set either `rows` or `file`",
        ),
        ("[tests.\"a b\"]\njob = \"daily\"\ndt = 2026-09-01\nexpect = { rows = [] }", "a test name may contain only"),
    ];
    for (text, wanted) in cases {
        let error = err(text);
        assert!(error.contains(wanted), "{text}\n→ {error}\n(wanted: {wanted})");
        assert!(error.starts_with("/p/lakewriter.toml: "), "{error}");
    }
}
