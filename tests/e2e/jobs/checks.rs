//! Data checks (`[jobs.NAME.checks]`), evaluated on a partition's result after its compute and
//! before its commit: a failing check fails the run and nothing is committed, unless `warn` names
//! it; then the commit goes ahead and the failure is reported. Every count a test expects is
//! computed here from the raw data (`lakewriter-datagen`), never taken from the binary.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::support::checks::{CHECKED, JOB, Row, SQL, TABLE, WRITTEN, rows};
use crate::support::json_lines;
use crate::support::{CheckOutcome, Checks, Lake, Report, Run, daily_orders};

const TABLE_DIR: &str = "analytics/daily_orders";
/// A check that fails on [`CHECKED`], and how, from the raw data.
struct Failing {
    /// The job's `[jobs.daily_orders.checks]`.
    definition: Checks,
    name: String,
    failing_rows: u64,
    detail: Option<String>,
    /// Every example the check may show: a failing row, or for `unique` a shared key.
    examples: BTreeSet<String>,
}

impl Failing {
    /// A check that looks at one row at a time, failing on the rows `fails` picks.
    fn rows(definition: Checks, name: &str, fails: impl Fn(&Row) -> bool) -> Self {
        let failing: Vec<Row> = rows(CHECKED).into_iter().filter(|r| fails(r)).collect();
        Self {
            definition,
            name: name.to_owned(),
            failing_rows: failing.len() as u64,
            detail: None,
            examples: failing.iter().map(|r| r.shown(CHECKED)).collect(),
        }
    }

    /// `unique(column)`, whose value in a row is `key` (None: NULL, ignored).
    fn unique(column: &str, key: impl Fn(&Row) -> Option<u64>) -> Self {
        let mut groups: BTreeMap<u64, u64> = BTreeMap::new();
        for row in rows(CHECKED) {
            if let Some(k) = key(&row) {
                *groups.entry(k).or_default() += 1;
            }
        }
        groups.retain(|_, n| *n > 1);
        Self {
            definition: Checks::new().unique(&[column]),
            name: format!("unique({column})"),
            failing_rows: groups.values().sum(),
            detail: None,
            examples: groups.iter().map(|(k, n)| format!("{column}={k}, rows={n}")).collect(),
        }
    }

    /// `row_count` (at least `min`, at most `max`) failing with `detail`.
    fn row_count(min: Option<u64>, max: Option<u64>, detail: String) -> Self {
        let definition = Checks::new().row_count(min, max);
        Self { definition, name: "row_count".into(), failing_rows: 0, detail: Some(detail), examples: BTreeSet::new() }
    }

    /// The run's error when it is the only blocking check that failed, with the examples shown.
    fn error(&self, examples: &[String]) -> String {
        let rows = match self.failing_rows {
            0 => String::new(),
            1 => ": 1 failing row".to_owned(),
            n => format!(": {n} failing rows"),
        };
        let detail = self.detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default();
        let shown: Vec<String> = examples.iter().map(|e| format!("({e})")).collect();
        let examples = if shown.is_empty() { String::new() } else { format!("; e.g. {}", shown.join(", ")) };
        format!("{JOB} dt={CHECKED}: check `{}` failed{rows}{detail}{examples}", self.name)
    }

    /// Asserts that `report` has this check's outcome alone, failed with `severity`.
    #[track_caller]
    fn assert_outcome<'a>(&self, report: &'a Report, severity: &str) -> &'a CheckOutcome {
        assert_eq!(report.checks.len(), 1, "{report:?}");
        let outcome = &report.checks[0];
        let found = (outcome.name.as_str(), outcome.passed, outcome.failing_rows, outcome.severity.as_str());
        assert_eq!(found, (self.name.as_str(), false, self.failing_rows, severity), "{outcome:?}");
        assert_eq!(outcome.detail, self.detail, "{}", self.name);
        assert_eq!(outcome.examples.len(), self.examples.len().min(5), "{}: at most 5 examples", self.name);
        let distinct: BTreeSet<&String> = outcome.examples.iter().collect();
        assert_eq!(distinct.len(), outcome.examples.len(), "{}: examples repeat: {outcome:?}", self.name);
        for example in &outcome.examples {
            assert!(self.examples.contains(example), "{}: `{example}` is none of {:#?}", self.name, self.examples);
        }
        outcome
    }
}

/// `lakewriter --json run daily_orders --dt DAY`, which must exit with `code`.
#[track_caller]
fn run_day(lake: &Lake, day: &str, code: i32) -> (Run, Report) {
    let run = lake.cli(&["--json", "run", JOB, "--dt", day]);
    run.assert_code(code);
    let (mut reports, summary) = run.json();
    assert_eq!((reports.len(), summary.failed), (1, usize::from(code != 0)), "{}", run.stdout);
    let report = reports.remove(0);
    (run, report)
}

/// The `lakewriter.checks` a commit records for `checks`.
fn recorded(checks: &[CheckOutcome]) -> Value {
    checks
        .iter()
        .map(|c| json!({"name": c.name, "passed": c.passed, "failing_rows": c.failing_rows, "severity": c.severity}))
        .collect()
}

/// Raw orders of [`WRITTEN`] and [`CHECKED`], and [`SQL`]'s table written for [`WRITTEN`] by a
/// job without checks: its report lists none, its commit records none.
fn written() -> Lake {
    let lake = Lake::new(WRITTEN, CHECKED);
    lake.set_project(&daily_orders(SQL));
    let run = lake.cli(&["--json", "run", JOB, "--dt", WRITTEN]);
    run.assert_code(0);
    assert_eq!(json_lines(&run)[0]["checks"], json!([]), "{}", run.stdout);
    assert_eq!(lake.commit_info(TABLE_DIR, 0)["lakewriter"].get("checks"), None);
    lake
}

/// Runs [`CHECKED`] with `failing` blocking: the run fails, names the check, and commits
/// nothing; then with `warn = [WARN]`: the run commits, and reports and records the failure.
#[track_caller]
fn assert_blocks_then_warns(lake: &Lake, failing: &Failing, warn: &str) {
    let (before, commits) = (lake.digest(TABLE, None), lake.commit_count(TABLE_DIR));
    lake.set_project(&daily_orders(SQL).with_checks(JOB, failing.definition.clone()));
    let (run, report) = run_day(lake, CHECKED, 1);
    assert_eq!((report.status.as_str(), report.committed), ("failed", false), "{report:?}");
    let outcome = failing.assert_outcome(&report, "error");
    let error = failing.error(&outcome.examples);
    assert_eq!(report.error.as_deref(), Some(error.as_str()));
    assert!(run.stderr.ends_with(&format!("error: {error}\n")), "{}", run.stderr);
    assert_eq!(lake.digest(TABLE, None), before, "{}: the table changed", failing.name);
    assert_eq!(lake.commit_count(TABLE_DIR), commits, "{}: a commit was added", failing.name);

    lake.set_project(&daily_orders(SQL).with_checks(JOB, failing.definition.clone().warn(warn)));
    let (_, report) = run_day(lake, CHECKED, 0);
    let version = before.version + 1;
    let outcome = (report.status.as_str(), report.committed, report.table_version, report.error.as_deref());
    assert_eq!(outcome, ("ok", true, Some(version), None), "{}: {report:?}", failing.name);
    failing.assert_outcome(&report, "warn");
    assert_eq!(lake.commit_info(TABLE_DIR, version)["lakewriter"]["checks"], recorded(&report.checks));
    assert_eq!(lake.digest(TABLE, Some(CHECKED)).rows, rows(CHECKED).len() as u64, "{}", failing.name);
}

#[test]
fn passing_checks_of_every_kind_are_reported_in_kind_order_and_recorded_in_the_commit() {
    let lake = written();
    let n = rows(CHECKED).len();
    // Outcomes come not_null, unique, accepted_values, row_count, expect, change_vs_previous, each
    // kind's in the order listed (not in the order of the names).
    let definition = Checks::new()
        .change_vs_previous(0.0)
        .expect("revenue > 0")
        .expect("orders >= 1")
        .row_count(Some(n as u64), Some(n as u64))
        .accepted_values("busy", &[true, false])
        .accepted_values("min_status", &["placed", "shipped", "delivered", "cancelled"])
        .unique(&["customer_id"])
        .unique(&["customer_id", "orders"])
        .not_null("revenue")
        .not_null("customer_id");
    lake.set_project(&daily_orders(SQL).with_checks(JOB, definition));
    let names = [
        "not_null(revenue)",
        "not_null(customer_id)",
        "unique(customer_id)",
        "unique(customer_id, orders)",
        "accepted_values(busy)",
        "accepted_values(min_status)",
        "row_count",
        "expect(revenue > 0)",
        "expect(orders >= 1)",
        "change_vs_previous",
    ];
    for version in [1, 2] {
        let (_, report) = run_day(&lake, CHECKED, 0);
        assert_eq!((report.committed, report.table_version), (true, Some(version)), "{report:?}");
        let found: Vec<(&str, bool, u64, &str)> =
            report.checks.iter().map(|c| (c.name.as_str(), c.passed, c.failing_rows, c.severity.as_str())).collect();
        assert_eq!(found, names.map(|name| (name, true, 0, "error")));
        assert!(report.checks.iter().all(|c| c.examples.is_empty()), "{report:?}");
        assert_eq!(lake.commit_info(TABLE_DIR, version)["lakewriter"]["checks"], recorded(&report.checks));
        if version == 2 {
            // The rerun of the same data: the very rows it replaces, no change.
            let change = report.checks.last().and_then(|c| c.detail.as_deref());
            assert_eq!(change, Some(format!("{n} rows against {n} now (+0.0%); allowed ±0%").as_str()));
        }
    }
    assert_eq!(lake.digest(TABLE, Some(CHECKED)).rows, n as u64);
}

#[test]
fn not_null_blocks_or_warns_on_each_null() {
    let lake = written();
    let nulls = Failing::rows(Checks::new().not_null("repeat_orders"), "not_null(repeat_orders)", |r| r.orders == 1);
    assert!(nulls.failing_rows > 5, "more failing rows than examples shown");
    assert_blocks_then_warns(&lake, &nulls, "not_null");
}

#[test]
fn unique_blocks_or_warns_on_rows_sharing_a_key_and_ignores_nulls() {
    let lake = written();
    let orders = Failing::unique("orders", |r| Some(r.orders));
    // Customers with one order have NULL there: they share no key.
    let repeats = Failing::unique("repeat_orders", Row::repeat_orders);
    let single = rows(CHECKED).iter().filter(|r| r.orders == 1).count() as u64;
    assert!(single >= 2 && repeats.failing_rows == orders.failing_rows - single, "the data tells NULLs apart");
    assert_blocks_then_warns(&lake, &orders, "unique");
    assert_blocks_then_warns(&lake, &repeats, "unique(repeat_orders)");
}

#[test]
fn accepted_values_of_each_type_block_or_warn_and_null_passes() {
    let lake = written();
    // repeat_orders is NULL for one order: only four and more fail.
    let ints =
        Failing::rows(Checks::new().accepted_values("repeat_orders", &[2, 3]), "accepted_values(repeat_orders)", |r| {
            r.orders >= 4
        });
    let strings = Failing::rows(
        Checks::new().accepted_values("min_status", &["cancelled", "delivered"]),
        "accepted_values(min_status)",
        |r| ["placed", "shipped"].contains(&r.min_status.as_str()),
    );
    assert!((1..5).contains(&strings.failing_rows), "fewer failing rows than examples: all shown");
    let bools =
        Failing::rows(Checks::new().accepted_values("busy", &[false]), "accepted_values(busy)", |r| r.orders >= 4);
    assert_blocks_then_warns(&lake, &ints, "accepted_values");
    assert_blocks_then_warns(&lake, &strings, "accepted_values(min_status)");
    let floats =
        Failing::rows(Checks::new().accepted_values("orders", &[1.0, 2.0, 3.0]), "accepted_values(orders)", |r| {
            r.orders >= 4
        });
    assert_blocks_then_warns(&lake, &bools, "accepted_values");
    assert_blocks_then_warns(&lake, &floats, "accepted_values(orders)");
}

#[test]
fn row_count_blocks_or_warns_outside_its_bounds() {
    let lake = written();
    let n = rows(CHECKED).len();
    let low = Failing::row_count(Some(n as u64 + 1), None, format!("{n} rows; expected at least {}", n + 1));
    let high = Failing::row_count(None, Some(n as u64 - 1), format!("{n} rows; expected at most {}", n - 1));
    assert_blocks_then_warns(&lake, &low, "row_count");
    assert_blocks_then_warns(&lake, &high, "row_count");

    // A day without raw data, which the job writes as an empty result.
    let (before, empty) = (lake.digest(TABLE, None), "2026-09-03");
    let checked = daily_orders(SQL).with_checks(JOB, Checks::new().row_count(Some(1), None));
    lake.set_project(&checked.with_missing_input(JOB, "empty"));
    let error = run_day(&lake, empty, 1).1.error.unwrap_or_default();
    assert_eq!(error, format!("{JOB} dt={empty}: check `row_count` failed: 0 rows; expected at least 1"));
    assert_eq!(lake.digest(TABLE, None), before, "nothing committed");
}

#[test]
fn expect_blocks_or_warns_on_rows_that_make_it_false_and_null_passes() {
    let lake = written();
    let revenue =
        Failing::rows(Checks::new().expect("revenue < 1000"), "expect(revenue < 1000)", |r| r.cents >= 100_000);
    // NULL (one order) passes: only two orders fail.
    let repeats =
        Failing::rows(Checks::new().expect("repeat_orders >= 3"), "expect(repeat_orders >= 3)", |r| r.orders == 2);
    let first = rows(CHECKED)[0].id;
    let one = Failing::rows(
        Checks::new().expect(&format!("customer_id <> {first}")),
        &format!("expect(customer_id <> {first})"),
        |r| r.id == first,
    );
    assert_eq!(one.failing_rows, 1, "one failing row");
    assert_blocks_then_warns(&lake, &revenue, "expect");
    assert_blocks_then_warns(&lake, &repeats, "expect(repeat_orders >= 3)");
    assert_blocks_then_warns(&lake, &one, "expect");
}

#[test]
fn lint_names_checks_on_missing_columns_and_conditions_that_are_not_ones() {
    let lake = Lake::new(WRITTEN, WRITTEN);
    let bad = Checks::new()
        .not_null("customer")
        .unique(&["customer_id", "region"])
        .expect("revenue >=")
        .expect("revenue + 1")
        .expect("revenue >= 0");
    lake.set_project(&daily_orders(SQL).with_checks(JOB, bad));
    let run = lake.cli(&["--json", "lint"]);
    run.assert_code(1);
    let lines = json_lines(&run);
    let (summary, findings) = lines.split_last().expect("lines");
    let expected = [
        ("not_null(customer)", "the result has no column `customer`"),
        ("unique(customer_id, region)", "the result has no column `region`"),
        ("expect(revenue >=)", "not a valid condition"),
        ("expect(revenue + 1)", "not a condition"),
    ];
    assert_eq!(findings.len(), expected.len(), "{}", run.stdout);
    for (finding, (check, says)) in findings.iter().zip(expected) {
        let message = finding["message"].as_str().unwrap_or_default();
        assert_eq!(
            (&finding["severity"], &finding["rule"], &finding["job"], &finding["construct"]),
            (&json!("error"), &json!("check"), &json!(JOB), &json!(check)),
            "{finding}"
        );
        assert!(message.starts_with(&format!("`{check}`: ")) && message.contains(says), "{check}: {message}");
    }
    assert_eq!(summary["summary"]["errors"], json!(4), "{summary}");
    let text = lake.cli(&["lint"]);
    text.assert_code(1);
    assert_eq!(text.stdout.lines().last(), Some("lint: 1 job checked, 4 errors, 0 warnings"));

    // A run refuses them too, before it writes anything.
    let (_, report) = run_day(&lake, WRITTEN, 1);
    let error = report.error.unwrap_or_default();
    assert!(error.contains("check `not_null(customer)`: the result has no column `customer`"), "{error}");
    assert!(!lake.root().join(TABLE_DIR).exists(), "no table");

    lake.set_project(&daily_orders(SQL).with_checks(JOB, Checks::new().not_null("customer_id").expect("revenue >= 0")));
    let run = lake.cli(&["lint"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "lint: 1 job checked, 0 errors, 0 warnings\n");
}
