//! `lakewriter test` compares exactly: an expected value is compared at its own precision, never
//! rounded to the table's type first, so a wrong average or a sum off in its third decimal fails,
//! and the failure shows both values as they are; a given value its `schema` type cannot hold
//! exactly is an error, not a rounded input.

use crate::support::job_test::{JobTest, TestResult, test_results};
use crate::support::{Job, Lake, Project, daily_orders};

const DAY: &str = "2026-09-30";

/// The expected_rows detail of the test `name` in a `--json` run that failed.
#[track_caller]
fn failed_detail(lake: &Lake, name: &str) -> (TestResult, String) {
    let run = lake.cli(&["--json", "test", name]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let result = results[name].clone();
    let check = result.check("expected_rows");
    assert!(!check.passed, "{result:?}");
    let detail = check.detail.clone().unwrap_or_default();
    (result, detail)
}

/// Quantities 2 and 3 of one customer: an average of 2.5, which integer division makes 2.
const QUANTITIES: &[&str] =
    &["{ customer_id = 1, qty = 2, dt = 2026-09-30 }", "{ customer_id = 1, qty = 3, dt = 2026-09-30 }"];

#[test]
fn an_expected_value_the_column_cannot_hold_fails_instead_of_being_cast_to_it() {
    let lake = Lake::empty(&[]);
    // In DataFusion's dialect, BIGINT / BIGINT is a BIGINT: 5 / 2 = 2, a wrong average.
    let sql = "SELECT customer_id, SUM(qty) / COUNT(*) AS avg_qty, $dt AS dt FROM raw.orders WHERE dt = $dt \
               GROUP BY customer_id";
    let expecting = |avg: &str| {
        JobTest::new("daily_orders", DAY)
            .given("raw.orders", QUANTITIES)
            .expect(&[&format!("{{ customer_id = 1, avg_qty = {avg}, dt = 2026-09-30 }}")])
    };
    let project = Project::new()
        .job(Job::new("daily_orders", "analytics.daily_orders").sql(sql).datafusion())
        .test("half", expecting("2.5"))
        .test("nearly_three", expecting("2.999"))
        .test("what_it_writes", expecting("2"));
    lake.set_project(&project);
    for (name, expected) in [("half", "2.5"), ("nearly_three", "2.999")] {
        let (_, detail) = failed_detail(&lake, name);
        let lines: Vec<&str> = detail.lines().collect();
        assert_eq!(
            lines,
            [
                "1 expected row(s) missing, 1 row(s) unexpected",
                &format!("missing: (customer_id=1, avg_qty={expected}, dt=2026-09-30)"),
                "unexpected: (customer_id=1, avg_qty=2, dt=2026-09-30)",
                &format!("the table's column `avg_qty` is long, which cannot hold the expected {expected} exactly"),
            ],
            "{name}"
        );
    }
    lake.cli(&["test", "what_it_writes"]).assert_code(0);
}

/// Orders of one customer as DECIMAL(12,2): a revenue of DECIMAL(22,2) 15.50.
fn revenue_test(revenue: &str) -> JobTest {
    JobTest::new("daily_orders", DAY)
        .given(
            "raw.orders",
            &[
                "{ customer_id = 1, amount = \"10.00\", dt = 2026-09-30 }",
                "{ customer_id = 1, amount = \"5.50\", dt = 2026-09-30 }",
            ],
        )
        .given_type("raw.orders", "amount", "DECIMAL(12,2)")
        .expect(&[&format!("{{ customer_id = 1, revenue = {revenue}, dt = 2026-09-30 }}")])
}

const REVENUE_SQL: &str =
    "SELECT customer_id, SUM(amount) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id";

#[test]
fn an_expected_value_with_more_digits_than_the_decimal_fails() {
    let lake = Lake::empty(&[]);
    let project = daily_orders(REVENUE_SQL)
        .test("four_digits", revenue_test("15.5049"))
        .test("as_written", revenue_test("15.5"))
        .test("as_text", revenue_test("\"15.50\""))
        .test("as_text_longer", revenue_test("\"15.500\""));
    lake.set_project(&project);
    let (_, detail) = failed_detail(&lake, "four_digits");
    assert!(detail.contains("cannot hold the expected 15.5049 exactly"), "{detail}");
    // The same number, however it is written, passes.
    for name in ["as_written", "as_text", "as_text_longer"] {
        let run = lake.cli(&["test", name]);
        assert_eq!(run.code, 0, "{name}: {}", run.stdout);
    }
}

#[test]
fn a_failed_check_shows_the_expected_and_the_actual_values_unrounded() {
    let lake = Lake::empty(&[]);
    lake.set_project(&daily_orders(REVENUE_SQL).test("off", revenue_test("16.004")));
    let run = lake.cli(&["test", "off"]);
    run.assert_code(1);
    run.assert_line("FAIL off expected_rows");
    run.assert_line("     missing: (customer_id=1, revenue=16.004, dt=2026-09-30)");
    run.assert_line("     unexpected: (customer_id=1, revenue=15.50, dt=2026-09-30)");
}

#[test]
fn a_given_value_its_decimal_cannot_hold_is_an_error_naming_it() {
    let lake = Lake::empty(&[]);
    let test = JobTest::new("daily_orders", DAY)
        .given(
            "raw.orders",
            &[
                "{ customer_id = 1, amount = \"10.00\", dt = 2026-09-30 }",
                "{ customer_id = 1, amount = \"1.005\", dt = 2026-09-30 }",
            ],
        )
        .given_type("raw.orders", "amount", "DECIMAL(12,2)")
        .expect(&["{ customer_id = 1, revenue = 11.01, dt = 2026-09-30 }"]);
    lake.set_project(&daily_orders(REVENUE_SQL).test("t", test));
    let run = lake.cli(&["test"]);
    run.assert_code(2);
    run.assert_line(
        "ERROR t: key `tests.t.given.\"raw.orders\".rows`: column `amount` does not fit DECIMAL(12,2): 1.005 (row 1) would be 1.01",
    );

    // The same from a fixture file.
    let file = lake.path().join("tests/orders.csv");
    std::fs::create_dir_all(file.parent().expect("a folder")).expect("a folder");
    std::fs::write(&file, "customer_id,amount,dt\n1,10.00,2026-09-30\n1,1.005,2026-09-30\n").expect("the file");
    let test = JobTest::new("daily_orders", DAY)
        .given_file("raw.orders", "tests/orders.csv")
        .given_type("raw.orders", "amount", "DECIMAL(12,2)")
        .expect(&["{ customer_id = 1, revenue = 11.01, dt = 2026-09-30 }"]);
    lake.set_project(&daily_orders(REVENUE_SQL).test("t", test));
    let run = lake.cli(&["test"]);
    run.assert_code(2);
    run.assert_line(&format!(
        "ERROR t: key `tests.t.given.\"raw.orders\".schema`: {}: column `amount` does not fit DECIMAL(12,2): 1.005 (row 1) would be 1.01",
        file.display()
    ));
}

#[test]
fn a_real_column_compares_at_its_own_precision_with_and_without_a_tolerance() {
    let lake = Lake::empty(&[]);
    let sql = "SELECT customer_id, CAST(amount AS REAL) AS amount, $dt AS dt FROM raw.orders WHERE dt = $dt";
    let test = JobTest::new("daily_orders", DAY)
        .given("raw.orders", &["{ customer_id = 1, amount = 0.1, dt = 2026-09-30 }"])
        .expect(&["{ customer_id = 1, amount = 0.1, dt = 2026-09-30 }"]);
    let project = daily_orders(sql).test("exact", test.clone()).test("near", test.tolerance(1e-12));
    lake.set_project(&project);
    let run = lake.cli(&["test"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}
