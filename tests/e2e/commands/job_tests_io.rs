//! `lakewriter test` in and out: fixture files, expected errors, a test that cannot be run as
//! written (exit 2, naming the test and the key), `--update` and the JUnit file read back by a
//! JUnit parser.

use crate::support::job_test::{JobTest, test_results};
use crate::support::{Checks, DAILY_ORDERS_SQL, Lake, daily_orders};

const DAY: &str = "2026-09-30";

const COUNTS: &[&str] = &[
    "{ customer_id = 1, orders = 2, revenue = 15.5, dt = 2026-09-30 }",
    "{ customer_id = 2, orders = 1, revenue = 7.25, dt = 2026-09-30 }",
];

const ORDERS_CSV: &str = "customer_id,amount,dt\n1,10.0,2026-09-30\n1,5.5,2026-09-30\n2,7.25,2026-09-30\n";

const ORDERS_JSONL: &str = r#"{"customer_id": 1, "amount": 10.0, "dt": "2026-09-30"}
{"customer_id": 1, "amount": 5.5, "dt": "2026-09-30"}
{"customer_id": 2, "amount": 7.25, "dt": "2026-09-30"}
"#;

/// `text` written to `path` under the lake's folder.
fn file(lake: &Lake, path: &str, text: &[u8]) {
    let path = lake.path().join(path);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("fixture folder");
    std::fs::write(path, text).expect("fixture file");
}

#[test]
fn given_rows_and_expected_rows_come_from_csv_and_json_lines_files() {
    let lake = Lake::empty(&[]);
    file(&lake, "tests/orders.csv", ORDERS_CSV.as_bytes());
    file(&lake, "tests/orders.jsonl", ORDERS_JSONL.as_bytes());
    file(&lake, "tests/counts.csv", b"dt,customer_id,orders,revenue\n2026-09-30,2,1,7.25\n2026-09-30,1,2,15.5\n");
    let project = daily_orders(DAILY_ORDERS_SQL)
        .test("from_csv", JobTest::new("daily_orders", DAY).given_file("raw.orders", "tests/orders.csv").expect(COUNTS))
        .test(
            "from_jsonl",
            JobTest::new("daily_orders", DAY)
                .given_file("raw.orders", "tests/orders.jsonl")
                .expect_file("tests/counts.csv"),
        );
    lake.set_project(&project);
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(0);
    let (results, summary) = test_results(&run);
    assert_eq!((summary.tests, summary.passed), (2, 2), "{results:?}");
}

#[test]
fn tests_need_neither_the_lakehouse_nor_its_credentials() {
    let lake = Lake::empty(&[]);
    let orders = ["{ customer_id = 1, amount = 10.0, dt = 2026-09-30 }"];
    let test = JobTest::new("daily_orders", DAY)
        .given("raw.orders", &orders)
        .expect(&["{ customer_id = 1, orders = 1, revenue = 10.0, dt = 2026-09-30 }"]);
    let project = daily_orders(DAILY_ORDERS_SQL)
        .root("s3://no-such-bucket/lake")
        .storage("aws_endpoint", "${LAKEWRITER_TEST_NO_SUCH_VARIABLE}")
        .test("counts", test);
    lake.set_project(&project);
    lake.cli(&["test"]).assert_code(0);
    // A command that reads the lakehouse needs them.
    let run = lake.cli(&["status", "daily_orders"]);
    run.assert_code(2);
    assert!(run.stderr.contains("LAKEWRITER_TEST_NO_SUCH_VARIABLE"), "{}", run.stderr);
}

#[test]
fn update_writes_the_expect_file_and_the_test_then_passes() {
    let lake = Lake::empty(&[]);
    let test = JobTest::new("daily_orders", DAY)
        .given(
            "raw.orders",
            &[
                "{ customer_id = 1, amount = 10.0, dt = 2026-09-30 }",
                "{ customer_id = 2, amount = 7.25, dt = 2026-09-30 }",
            ],
        )
        .expect_file("tests/expected/counts.csv");
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("counts", test));

    let run = lake.cli(&["test", "counts"]);
    run.assert_code(2);
    let expected = lake.path().join("tests/expected/counts.csv");
    run.assert_line(&format!("ERROR counts: key `tests.counts.expect.file`: there is no file {}", expected.display()));

    lake.cli(&["test", "--update"]).assert_code(2);
    let run = lake.cli(&["test", "--update", "counts"]);
    run.assert_code(0);
    run.assert_line("PASS counts expected_rows");
    run.assert_line(&format!("     updated {}", expected.display()));
    let written = std::fs::read_to_string(&expected).expect("the expect file");
    assert_eq!(written, "customer_id,orders,revenue,dt\n1,1,10.0,2026-09-30\n2,1,7.25,2026-09-30\n");
    lake.cli(&["test", "counts"]).assert_code(0);
}

#[test]
fn an_expected_error_passes_only_when_a_run_fails_with_it() {
    let lake = Lake::empty(&[]);
    let orders = ["{ customer_id = 1, amount = 10.0, dt = 2026-09-30 }"];
    let blocked = JobTest::new("daily_orders", DAY).given("raw.orders", &orders).expect_error("row_count");
    let other = JobTest::new("daily_orders", DAY).given("raw.orders", &orders).expect_error("no such text");
    let project = daily_orders(DAILY_ORDERS_SQL)
        .with_checks("daily_orders", Checks::new().row_count(Some(2), None))
        .test("blocked", blocked.clone())
        .test("other", other);
    lake.set_project(&project);
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    assert_eq!(results["blocked"].names(), ["expected_error"]);
    assert!(results["blocked"].check("expected_error").passed, "{:?}", results["blocked"]);
    let detail = results["other"].check("expected_error").detail.clone().unwrap_or_default();
    assert!(
        detail.starts_with("a run failed, but not with `no such text`: the run for dt=2026-09-30 failed: "),
        "{detail}"
    );

    // Without the check, the run succeeds: the expected error is missed.
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("blocked", blocked));
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let detail = results["blocked"].check("expected_error").detail.clone().unwrap_or_default();
    assert_eq!(detail, "every run succeeded; expected a failure with `row_count`");

    // A test whose job fails unexpectedly fails with that error.
    let failing = JobTest::new("daily_orders", DAY).given("raw.orders", &orders).expect(COUNTS);
    let project = daily_orders(DAILY_ORDERS_SQL)
        .with_checks("daily_orders", Checks::new().row_count(Some(2), None))
        .test("counts", failing);
    lake.set_project(&project);
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let detail = results["counts"].check("expected_rows").detail.clone().unwrap_or_default();
    assert!(detail.starts_with("the run for dt=2026-09-30 failed: ") && detail.contains("row_count"), "{detail}");
}

/// Tests that cannot be run as written, each with the start of its error.
fn unrunnable() -> Vec<(JobTest, &'static str)> {
    let base = || JobTest::new("daily_orders", DAY).expect(COUNTS);
    vec![
        (
            base()
                .given("raw.orders", &["{ customer_id = 1, amount = 1.0, dt = 2026-09-30 }"])
                .given("raw.other", &["{ a = 1 }"]),
            "key `tests.t.given.\"raw.other\"`: job `daily_orders` does not read raw.other (it reads raw.orders)",
        ),
        (
            base().given_file("raw.orders", "tests/none.csv"),
            "key `tests.t.given.\"raw.orders\".file`: there is no file ",
        ),
        (
            base().given("raw.orders", &["{ customer_id = 1, amount = \"ten\", dt = 2026-09-30 }"]).given_type(
                "raw.orders",
                "amount",
                "DOUBLE",
            ),
            "key `tests.t.given.\"raw.orders\".rows`: column `amount` does not fit DOUBLE: ",
        ),
        (
            base().given(
                "raw.orders",
                &["{ customer_id = 1, dt = 2026-09-30 }", "{ customer_id = \"a\", dt = 2026-09-30 }"],
            ),
            "key `tests.t.given.\"raw.orders\".rows`: column `customer_id` holds a BIGINT in row 0 and a VARCHAR in row 1: give it one type with `schema`",
        ),
        (
            base().given("raw.orders", &["{ customer_id = 1 }"]).given_type("raw.orders", "amount", "NOT A TYPE"),
            "key `tests.t.given.\"raw.orders\".schema.amount`: `NOT A TYPE` is not a SQL type",
        ),
        (
            base().given(
                "raw.orders",
                &["{ customer_id = 1, amount = 1.0 }", "{ customer_id = 2, amount = 1.0, dt = 2026-09-30 }"],
            ),
            "key `tests.t.given.\"raw.orders\"`: row 0 has no `dt`, the raw layer's partition folder",
        ),
    ]
}

#[test]
fn a_test_that_cannot_be_run_as_written_exits_2_naming_the_test_and_the_key_and_fails_lint() {
    let lake = Lake::new(DAY, DAY);
    let base = || JobTest::new("daily_orders", DAY).expect(COUNTS);
    for (test, wanted) in unrunnable() {
        lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("t", test));
        let run = lake.cli(&["test"]);
        run.assert_code(2);
        assert!(run.stdout.starts_with(&format!("ERROR t: {wanted}")), "wanted: {wanted}\n{}", run.stdout);
        // `lint` finds the same, without running anything.
        let lint = lake.cli(&["lint"]);
        lint.assert_code(1);
        let finding = format!("error: job daily_orders: test: test `t`: {wanted}");
        assert!(lint.stdout.starts_with(&finding), "wanted: {finding}\n{}", lint.stdout);
    }
    lake.set_project(
        &daily_orders(DAILY_ORDERS_SQL)
            .test("t", base().given("raw.orders", &["{ customer_id = 1, amount = 1.0, dt = 2026-09-30 }"])),
    );
    lake.cli(&["lint"]).assert_code(0);

    // A test of a job the file does not define fails itself alone: the job still runs.
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("t", JobTest::new("nope", DAY)));
    let run = lake.cli(&["test"]);
    run.assert_code(2);
    let unknown = "key `tests.t.job`: no job `nope`; jobs here: daily_orders";
    assert_eq!(run.stdout.lines().next(), Some(format!("ERROR t: {unknown}").as_str()), "{}", run.stdout);
    let lint = lake.cli(&["lint"]);
    lint.assert_code(1);
    assert!(lint.stdout.contains(&format!("error: job nope: test: test `t`: {unknown}\n")), "{}", lint.stdout);
    lake.cli(&["run", "daily_orders", "--dt", DAY]).assert_code(0);
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("t", JobTest::undated("daily_orders")));
    let run = lake.cli(&["test"]);
    run.assert_code(2);
    let missing =
        "ERROR t: key `tests.t.dt`: missing: job `daily_orders` runs for a date, as in `dt = 2026-09-30` (or `dates`)";
    assert_eq!(run.stdout.lines().next(), Some(missing), "{}", run.stdout);

    // An unknown test is the command's usage error.
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("t", base()));
    let run = lake.cli(&["test", "nope"]);
    run.assert_code(2);
    assert_eq!(run.stderr, "error: no test `nope`; tests here: t\n");
}

#[test]
fn the_junit_file_is_read_back_by_a_junit_parser() {
    let lake = Lake::empty(&[]);
    let orders = [
        "{ customer_id = 1, amount = 10.0, dt = 2026-09-30 }",
        "{ customer_id = 1, amount = 5.5, dt = 2026-09-30 }",
        "{ customer_id = 2, amount = 7.25, dt = 2026-09-30 }",
    ];
    let good = JobTest::new("daily_orders", DAY).given("raw.orders", &orders).expect(COUNTS);
    let wrong = good.clone().expect(&["{ customer_id = 1, orders = 3, revenue = 15.5, dt = 2026-09-30 }"]);
    let unreadable = JobTest::new("daily_orders", DAY).given_file("raw.orders", "tests/none.csv").expect(COUNTS);
    lake.set_project(
        &daily_orders(DAILY_ORDERS_SQL).test("good", good).test("wrong", wrong).test("unreadable", unreadable),
    );
    let junit = lake.path().join("junit.xml");
    let run = lake.cli(&["test", "--junit", junit.to_str().expect("utf-8")]);
    run.assert_code(2);

    let python = std::env::var("LAKEWRITER_TEST_PYTHON").expect("LAKEWRITER_TEST_PYTHON (scripts/test sets it)");
    let read = r#"
import sys
from junitparser import JUnitXml, Failure, Error
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    for case in suite:
        outcome = "pass"
        for result in case.result:
            outcome = ("failure" if isinstance(result, Failure) else "error" if isinstance(result, Error) else "?") + ": " + (result.message or "")
        print(f"{suite.name}|{case.classname}|{case.name}|{outcome}")
print(f"tests={xml.tests} failures={xml.failures} errors={xml.errors}")
"#;
    let out =
        std::process::Command::new(python).args(["-c", read, junit.to_str().expect("utf-8")]).output().expect("python");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "good|daily_orders.good|expected_rows|pass",
            "good|daily_orders.good|idempotent|pass",
            "good|daily_orders.good|deterministic|pass",
            &format!(
                "unreadable|daily_orders.unreadable|definition|error: key `tests.unreadable.given.\"raw.orders\".file`: there is no file {}",
                lake.path().join("tests/none.csv").display()
            ),
            "wrong|daily_orders.wrong|expected_rows|failure: 1 expected row(s) missing, 2 row(s) unexpected",
            "wrong|daily_orders.wrong|idempotent|pass",
            "wrong|daily_orders.wrong|deterministic|pass",
            "tests=7 failures=1 errors=1",
        ]
    );
}
