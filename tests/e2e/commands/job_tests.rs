//! `lakewriter test`: each check passing on a correct job and catching its defect — a wrong
//! expectation, a tie-dependent `ROW_NUMBER`, a non-idempotent rewrite, a merge without a
//! newer-wins guard replayed out of order —, expected errors, the exit codes, `--junit`.

use crate::support::job_test::{JobTest, test_results};
use crate::support::{DAILY_ORDERS_SQL, Job, Lake, Project, daily_orders};

const DAY: &str = "2026-09-30";

/// Two customers' orders on [`DAY`].
const ORDERS: &[&str] = &[
    "{ customer_id = 1, amount = 10.0, dt = 2026-09-30 }",
    "{ customer_id = 1, amount = 5.5, dt = 2026-09-30 }",
    "{ customer_id = 2, amount = 7.25, dt = 2026-09-30 }",
];

/// What [`DAILY_ORDERS_SQL`] writes of [`ORDERS`].
const COUNTS: &[&str] = &[
    "{ customer_id = 1, orders = 2, revenue = 15.5, dt = 2026-09-30 }",
    "{ customer_id = 2, orders = 1, revenue = 7.25, dt = 2026-09-30 }",
];

fn counts_test() -> JobTest {
    JobTest::new("daily_orders", DAY).given("raw.orders", ORDERS).expect(COUNTS)
}

#[test]
fn a_correct_job_passes_each_check_and_the_project_root_is_never_touched() {
    let lake = Lake::empty(&[]);
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("counts", counts_test()));
    let run = lake.cli(&["test"]);
    run.assert_code(0);
    for check in ["expected_rows", "idempotent", "deterministic"] {
        run.assert_line(&format!("PASS counts {check}"));
    }
    run.assert_line_starts("1 test: 1 passed, 0 failed, 0 could not run; 3 checks: 0 failed (");
    assert!(!lake.root().exists(), "the project's root is neither read nor written");

    let run = lake.cli(&["--json", "test", "counts"]);
    run.assert_code(0);
    let (results, summary) = test_results(&run);
    assert_eq!(results["counts"].names(), ["expected_rows", "idempotent", "deterministic"]);
    assert_eq!((results["counts"].status.as_str(), results["counts"].job.as_str()), ("passed", "daily_orders"));
    assert_eq!((summary.tests, summary.passed, summary.checks, summary.checks_failed), (1, 1, 3, 0));
}

#[test]
fn a_wrong_expectation_fails_naming_the_rows_missing_and_unexpected() {
    let lake = Lake::empty(&[]);
    let wrong = counts_test().expect(&[
        "{ customer_id = 1, orders = 2, revenue = 16.0, dt = 2026-09-30 }",
        "{ customer_id = 2, orders = 1, revenue = 7.25, dt = 2026-09-30 }",
    ]);
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("counts", wrong));
    let run = lake.cli(&["test"]);
    run.assert_code(1);
    run.assert_line("FAIL counts expected_rows");
    run.assert_line("     1 expected row(s) missing, 1 row(s) unexpected");
    run.assert_line("     missing: (customer_id=1, orders=2, revenue=16.0, dt=2026-09-30)");
    run.assert_line("     unexpected: (customer_id=1, orders=2, revenue=15.5, dt=2026-09-30)");
    // The other checks still run, each on its own.
    run.assert_line("PASS counts idempotent");
    run.assert_line("PASS counts deterministic");

    // Columns the expected rows lack, or have and the table has not, are named.
    let columns = counts_test().expect(&["{ customer_id = 1, orders = 2, total = 15.5, dt = 2026-09-30 }"]);
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).test("counts", columns));
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let detail = results["counts"].check("expected_rows").detail.clone().unwrap_or_default();
    assert_eq!(
        detail,
        "the expected rows have no column `revenue` of the table; the table has no column `total` of the expected rows"
    );
}

#[test]
fn floats_compare_within_the_tolerance_given() {
    let lake = Lake::empty(&[]);
    let sql =
        "SELECT customer_id, SUM(amount) / 3 AS third, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id";
    let near = [
        "{ customer_id = 1, third = 5.1666666666, dt = 2026-09-30 }",
        "{ customer_id = 2, third = 2.4166666666, dt = 2026-09-30 }",
    ];
    let test = JobTest::new("daily_orders", DAY).given("raw.orders", ORDERS).expect(&near);
    lake.set_project(&daily_orders(sql).test("exact", test.clone()).test("near", test.tolerance(1e-9)));
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    assert!(!results["exact"].check("expected_rows").passed);
    assert!(results["near"].check("expected_rows").passed, "{:?}", results["near"]);
}

#[test]
fn a_row_number_over_ties_fails_deterministic_and_a_total_order_passes() {
    let lake = Lake::empty(&[]);
    // The first order of each customer, "first" by day alone: every order of a day ties.
    let ties = "SELECT customer_id, amount, dt FROM (SELECT customer_id, amount, dt, \
                ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY dt) AS rn FROM raw.orders WHERE dt = $dt) \
                WHERE rn = 1";
    let total = ties.replace("ORDER BY dt)", "ORDER BY dt, amount)");
    let test = JobTest::new("daily_orders", DAY).given("raw.orders", ORDERS).expect(&[
        "{ customer_id = 1, amount = 5.5, dt = 2026-09-30 }",
        "{ customer_id = 2, amount = 7.25, dt = 2026-09-30 }",
    ]);
    let project = |sql: &str| daily_orders(sql).test("first_order", test.clone());

    lake.set_project(&project(ties));
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let deterministic = results["first_order"].check("deterministic");
    assert!(!deterministic.passed, "{:?}", results["first_order"]);
    let detail = deterministic.detail.as_deref().unwrap_or_default();
    assert!(detail.contains("customer_id=1"), "names the rows that differ: {detail}");

    lake.set_project(&project(&total));
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(0);
}

/// A MERGE statement job over `raw.customers` (a day's changes) into `dim.customers`.
fn merge_job(matched: &str) -> Project {
    let statement = format!(
        "MERGE INTO dim.customers t USING (SELECT id, tier, updated_at FROM raw.customers WHERE dt = $dt) s \
         ON t.id = s.id {matched} WHEN NOT MATCHED THEN INSERT (id, tier, updated_at) VALUES (s.id, s.tier, s.updated_at)"
    );
    Project::new().job(Job::statement("customers", "dim.customers", &statement))
}

const CUSTOMER_CHANGES: &[&str] = &[
    "{ id = 1, tier = \"bronze\", updated_at = 2026-09-01T10:00:00, dt = 2026-09-01 }",
    "{ id = 2, tier = \"silver\", updated_at = 2026-09-01T11:00:00, dt = 2026-09-01 }",
    "{ id = 1, tier = \"gold\", updated_at = 2026-09-02T09:00:00, dt = 2026-09-02 }",
];

const CUSTOMERS: &[&str] = &[
    "{ id = 1, tier = \"gold\", updated_at = 2026-09-02T09:00:00 }",
    "{ id = 2, tier = \"silver\", updated_at = 2026-09-01T11:00:00 }",
];

fn customers_test() -> JobTest {
    JobTest::new("customers", DAY)
        .dates(&["2026-09-01", "2026-09-02"])
        .given("raw.customers", CUSTOMER_CHANGES)
        .expect(CUSTOMERS)
}

#[test]
fn a_merge_without_a_newer_wins_guard_fails_order_independent() {
    let lake = Lake::empty(&[]);
    let unguarded = "WHEN MATCHED THEN UPDATE SET tier = s.tier, updated_at = s.updated_at";
    lake.set_project(&merge_job(unguarded).test("latest_tier", customers_test()));
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let result = &results["latest_tier"];
    assert_eq!(result.names(), ["expected_rows", "idempotent", "deterministic", "order_independent"]);
    for check in ["expected_rows", "idempotent", "deterministic"] {
        assert!(result.check(check).passed, "{check}: {result:?}");
    }
    let order = result.check("order_independent");
    assert!(!order.passed, "{result:?}");
    let detail = order.detail.as_deref().unwrap_or_default();
    assert!(detail.starts_with("the dates in reverse order leave another table"), "{detail}");
    assert!(detail.contains("tier=bronze") && detail.contains("tier=gold"), "{detail}");

    let guarded =
        "WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET tier = s.tier, updated_at = s.updated_at";
    lake.set_project(&merge_job(guarded).test("latest_tier", customers_test()));
    lake.cli(&["--json", "test"]).assert_code(0);
}

#[test]
fn a_rewrite_that_adds_to_what_it_wrote_fails_idempotent() {
    let lake = Lake::empty(&[]);
    let statement = "MERGE INTO mart.totals t USING (SELECT customer_id, SUM(amount) AS total FROM raw.orders \
                     WHERE dt = $dt GROUP BY customer_id) s ON t.customer_id = s.customer_id \
                     WHEN MATCHED THEN UPDATE SET total = t.total + s.total \
                     WHEN NOT MATCHED THEN INSERT (customer_id, total) VALUES (s.customer_id, s.total)";
    let project = Project::new().job(Job::statement("totals", "mart.totals", statement)).test(
        "totals",
        JobTest::new("totals", DAY)
            .given("raw.orders", ORDERS)
            .expect(&["{ customer_id = 1, total = 15.5 }", "{ customer_id = 2, total = 7.25 }"]),
    );
    lake.set_project(&project);
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let result = &results["totals"];
    assert!(result.check("expected_rows").passed, "{result:?}");
    let idempotent = result.check("idempotent");
    assert!(!idempotent.passed, "{result:?}");
    let detail = idempotent.detail.as_deref().unwrap_or_default();
    assert!(detail.contains("total=31.0"), "the rerun doubled the total: {detail}");
}
