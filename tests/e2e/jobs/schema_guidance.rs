//! A column added, dropped or retyped under the default `on_schema_change = "fail"`: `plan`, the
//! dry run and the run say what refuses it and what lets it in — `on_schema_change` and `backfill
//! --replace-schema` —, and nothing is committed.

use crate::support::{DAILY_ORDERS_SQL, Lake, daily_orders, edited, schema_advice};

#[test]
fn a_changed_column_under_fail_names_on_schema_change_and_replace_schema() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]).assert_code(0);
    let before = lake.digest("analytics.daily_orders", None);

    // Added: `plan` says every run would fail, and why; the dry run and the run fail so.
    let added = edited(DAILY_ORDERS_SQL, "SUM(amount) AS revenue", "SUM(amount) AS revenue, MAX(amount) AS largest");
    lake.set_project(&daily_orders(&added));
    let plan = lake.cli(&["plan", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]);
    plan.assert_code(0);
    let refusal = format!(
        "every run fails: column `largest` (decimal(12,2)) is not in the table; {}",
        schema_advice("daily_orders")
    );
    assert!(plan.stdout.contains(&format!("  {refusal}\n")), "{}", plan.stdout);
    let json = lake.plan(&["daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]);
    assert_eq!(json.summary.refused.as_deref(), Some(refusal.as_str()), "{json:?}");
    let mismatch = |difference: &str| {
        format!(
            "daily_orders dt=2026-09-02: analytics.daily_orders: the result does not match the table's schema: \
             {difference}; nothing was committed; {}",
            schema_advice("daily_orders")
        )
    };
    for dry in [true, false] {
        let args = ["--json", "run", "daily_orders", "--dt", "2026-09-02"];
        let run = lake.cli(&if dry { [&args[..], &["--dry-run"]].concat() } else { args.to_vec() });
        run.assert_code(1);
        let error = run.json().0.remove(0).error.expect("the run's error");
        assert_eq!(error, mismatch("column `largest` (decimal(12,2)) is not in the table"), "dry run: {dry}");
    }

    // Dropped, and retyped: `plan` and the run name the same settings.
    let plan = |lake: &Lake| {
        let run = lake.cli(&["plan", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]);
        run.assert_code(0);
        run.stdout
    };
    let dropped = edited(DAILY_ORDERS_SQL, "COUNT(*) AS orders, ", "");
    lake.set_project(&daily_orders(&dropped));
    let refusal = format!(
        "  every run fails: column `orders` (long) is missing from the result; {}\n",
        schema_advice("daily_orders")
    );
    assert!(plan(&lake).contains(&refusal), "{}", plan(&lake));
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-02"]);
    run.assert_code(1);
    assert_eq!(run.json().0.remove(0).error, Some(mismatch("column `orders` (long) is missing from the result")));
    let retyped = edited(DAILY_ORDERS_SQL, "COUNT(*) AS orders", "CAST(COUNT(*) AS STRING) AS orders");
    lake.set_project(&daily_orders(&retyped));
    let planned = plan(&lake);
    assert!(
        planned.contains("  every run fails: column `orders` is long in the table but string in the result"),
        "{planned}"
    );
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-02"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("the run's error");
    assert!(error.contains("column `orders` is long in the table but string in the result"), "{error}");
    assert!(error.ends_with(&schema_advice("daily_orders")), "{error}");
    assert_eq!(lake.digest("analytics.daily_orders", None), before, "nothing committed");

    // The settings the advice names let the column in.
    lake.set_project(&daily_orders(&added).with_schema_change("daily_orders", "append_new_columns"));
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-02"]).assert_code(0);
}
