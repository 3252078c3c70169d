//! `lakewriter test` over every write mode and jobs written as statements: each mode's job of
//! the shared scenario (`support::modes`) tested on the same given orders passes every check that
//! applies to it, and a job reading an upstream job's table is given that table as Delta.

use crate::support::job_test::{JobTest, test_results};
use crate::support::modes::{self, GOOD};
use crate::support::{Job, Lake, WRITE_MODES, WriteMode};

/// Two days of raw orders: order 1 changes on the second day (a newer `created_at`). A job that
/// keeps each day's rows as they are writes exactly these.
const ORDERS: &[&str] = &[
    "{ order_id = 1, customer_id = 1, amount = 10.0, status = \"new\", created_at = 2026-09-01T10:00:00, dt = 2026-09-01 }",
    "{ order_id = 2, customer_id = 2, amount = 5.0, status = \"new\", created_at = 2026-09-01T11:00:00, dt = 2026-09-01 }",
    "{ order_id = 1, customer_id = 1, amount = 12.0, status = \"paid\", created_at = 2026-09-02T09:00:00, dt = 2026-09-02 }",
];

/// The newest version of each order.
const NEWEST: &[&str] = &[
    "{ order_id = 1, customer_id = 1, amount = 12.0, status = \"paid\", created_at = 2026-09-02T09:00:00, dt = 2026-09-02 }",
    "{ order_id = 2, customer_id = 2, amount = 5.0, status = \"new\", created_at = 2026-09-01T11:00:00, dt = 2026-09-01 }",
];

/// Each order once, over the two days.
const DEDUP_ORDERS: &[&str] = &[
    "{ order_id = 1, customer_id = 1, amount = 10.0, status = \"new\", created_at = 2026-09-01T10:00:00, dt = 2026-09-01 }",
    "{ order_id = 2, customer_id = 2, amount = 5.0, status = \"new\", created_at = 2026-09-01T11:00:00, dt = 2026-09-01 }",
    "{ order_id = 3, customer_id = 3, amount = 7.0, status = \"new\", created_at = 2026-09-02T08:00:00, dt = 2026-09-02 }",
];

const DATES: [&str; 2] = ["2026-09-01", "2026-09-02"];

/// The test of `mode`'s job on [`ORDERS`], and the checks it runs.
fn test_of(mode: WriteMode) -> (JobTest, &'static [&'static str]) {
    const PLAIN: &[&str] = &["expected_rows", "idempotent", "deterministic"];
    const KEYED: &[&str] = &["expected_rows", "idempotent", "deterministic", "order_independent"];
    let dated = JobTest::new(mode.as_str(), DATES[0]).dates(&DATES).given("raw.orders", ORDERS);
    match mode {
        WriteMode::OverwritePartition | WriteMode::DeleteInsert | WriteMode::Append => (dated.expect(ORDERS), PLAIN),
        WriteMode::Merge => (dated.expect(NEWEST), KEYED),
        // Each order once: a later copy of a key is not appended, so the test gives order 1 no
        // second version, which would make the table depend on the order; the second day brings
        // a new order.
        WriteMode::AppendDedup => {
            let test = JobTest::new(mode.as_str(), DATES[0]).dates(&DATES).given("raw.orders", DEDUP_ORDERS);
            (test.expect(DEDUP_ORDERS), KEYED)
        }
        WriteMode::Rebuild => (JobTest::undated(mode.as_str()).given("raw.orders", ORDERS).expect(ORDERS), PLAIN),
        WriteMode::Statement => unreachable!("a statement's job is none of WRITE_MODES"),
    }
}

#[test]
fn every_write_mode_and_statement_job_passes_the_checks_that_apply_to_it() {
    let lake = Lake::empty(&[]);
    let mut project = modes::project(&WRITE_MODES, GOOD);
    let mut wanted = Vec::new();
    for mode in WRITE_MODES {
        let (test, checks) = test_of(mode);
        project = project.test(mode.as_str(), test);
        wanted.push((mode.as_str().to_owned(), checks));
    }
    // Statements: INSERT OVERWRITE of a partition, INSERT INTO (an append once per day).
    let select = "SELECT order_id, customer_id, amount, status, created_at FROM raw.orders WHERE dt = $dt";
    project = project
        .job(Job::statement(
            "insert_overwrite",
            "statements.overwrite",
            &format!("INSERT OVERWRITE statements.overwrite PARTITION (dt = $dt) {select}"),
        ))
        .job(Job::statement(
            "insert_into",
            "statements.appended",
            "INSERT INTO statements.appended SELECT order_id, customer_id, amount, status, created_at, $dt AS dt \
             FROM raw.orders WHERE dt = $dt",
        ));
    for name in ["insert_overwrite", "insert_into"] {
        let test = JobTest::new(name, DATES[0]).dates(&DATES).given("raw.orders", ORDERS).expect(ORDERS);
        project = project.test(name, test);
        wanted.push((name.to_owned(), &["expected_rows", "idempotent", "deterministic"][..]));
    }
    lake.set_project(&project);

    let run = lake.cli(&["--json", "test"]);
    let (results, summary) = test_results(&run);
    for (name, checks) in &wanted {
        let result = &results[name];
        assert_eq!(result.names(), *checks, "{name}: {result:?}");
        assert_eq!(result.status, "passed", "{name}: {result:?}");
    }
    assert_eq!((summary.tests, summary.passed), (wanted.len(), wanted.len()));
    run.assert_code(0);
    // `--job` runs one job's tests.
    let run = lake.cli(&["--json", "test", "--job", "merge"]);
    let (results, _) = test_results(&run);
    assert_eq!(results.keys().collect::<Vec<_>>(), ["merge"]);
}

#[test]
fn an_upstream_jobs_table_is_given_as_delta() {
    let lake = Lake::empty(&[]);
    let daily = Job::new("daily_orders", "analytics.daily_orders")
        .sql("SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id");
    let revenue = Job::new("revenue", "analytics.revenue").sql(
        "SELECT SUM(revenue) AS revenue, SUM(orders) AS orders, $dt AS dt FROM analytics.daily_orders WHERE dt = $dt",
    );
    let test = JobTest::new("revenue", "2026-09-30")
        .given(
            "analytics.daily_orders",
            &[
                "{ customer_id = 1, orders = 2, revenue = 15.5, dt = 2026-09-30 }",
                "{ customer_id = 2, orders = 1, revenue = 7.25, dt = 2026-09-30 }",
                "{ customer_id = 2, orders = 9, revenue = 99.0, dt = 2026-09-29 }",
            ],
        )
        .expect(&["{ revenue = 22.75, orders = 3, dt = 2026-09-30 }"]);
    lake.set_project(&crate::support::Project::new().job(daily).job(revenue).test("revenue", test));
    let run = lake.cli(&["--json", "test"]);
    let (results, _) = test_results(&run);
    assert_eq!(results["revenue"].status, "passed", "{:?}", results["revenue"]);
    run.assert_code(0);
}

/// A job's own target given with the columns it had before an edit added `status_code`: the test
/// runs the edited job over it, and the column is added, NULL in the given day's rows.
#[test]
fn a_given_target_whose_columns_are_older_than_the_jobs_result_grows_as_a_run_grows_it() {
    const OLD: &str = "{ order_id = 9, customer_id = 9, amount = 1.0, status = \"old\", created_at = 2026-08-31T08:00:00, dt = 2026-08-31 }";
    let added = |row: &str, code: &str| row.replacen(", dt =", &format!(", status_code = \"{code}\", dt ="), 1);
    let expected: Vec<String> =
        std::iter::once(OLD.to_owned()).chain(ORDERS[..2].iter().map(|row| added(row, "NEW"))).collect();
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    let modes = [WriteMode::OverwritePartition, WriteMode::Merge];
    let project = |policy: Option<&'static str>| {
        let mut project = modes::project(&modes, GOOD);
        for mode in modes {
            project = project.edited_sql(mode.as_str(), "created_at,", "created_at, upper(status) AS status_code,");
            if let Some(policy) = policy {
                project = project.with_schema_change(mode.as_str(), policy);
            }
            let test = JobTest::new(mode.as_str(), DATES[0])
                .given("raw.orders", &ORDERS[..2])
                .given(&modes::table(mode), &[OLD])
                .expect(&expected);
            project = project.test(mode.as_str(), test);
        }
        project
    };
    let lake = Lake::empty(&[]);
    lake.set_project(&project(Some("append_new_columns")));
    let run = lake.cli(&["--json", "test"]);
    let (results, _) = test_results(&run);
    for mode in modes {
        let result = &results[mode.as_str()];
        assert_eq!(result.status, "passed", "{mode:?}: {result:?}");
        assert!(result.names().contains(&"idempotent"), "{mode:?}: {result:?}");
    }
    run.assert_code(0);

    // Without the key, the run fails as it would on the table: the test's first check says why.
    lake.set_project(&project(None));
    let run = lake.cli(&["--json", "test"]);
    let (results, _) = test_results(&run);
    for mode in modes {
        let check = &results[mode.as_str()].check("expected_rows");
        let detail = format!("{check:?}");
        assert!(
            detail.contains("column `status_code` (string) is not in the table; nothing was committed"),
            "{mode:?}: {detail}"
        );
    }
    run.assert_code(1);
}
