use std::path::Path;

use datafusion::prelude::SessionContext;
use lakewriter_core::{CheckSeverity, Project};

use super::*;

/// The checks of a job whose project file sets `checks` (TOML lines under `[jobs.j.checks]`).
fn checks(write: &str, checks: &str) -> Checks {
    let toml = format!(
        "root = \"lake\"\n[jobs.j]\ntarget = \"a.b\"\nsql = \"SELECT 1\"\n{write}\n[jobs.j.checks]\n{checks}\n"
    );
    Project::parse(&toml, Path::new("/p/lakewriter.toml")).expect("project").jobs["j"].checks.clone()
}

const OVERWRITE: &str = "write = \"overwrite_partition\"\npartition_by = \"dt\"";

async fn result(ctx: &SessionContext, sql: &str) -> crate::Materialized {
    crate::Materialized::collect(ctx.sql(sql).await.expect("sql")).await.expect("rows")
}

const ROWS: &str = "SELECT * FROM (VALUES (1, 'open', 10), (2, 'paid', NULL), (2, 'lost', -5), (NULL, 'paid', 3)) \
                    AS t(customer_id, status, revenue)";

#[tokio::test]
async fn each_kind_counts_its_failing_rows_with_examples() {
    let ctx = SessionContext::new();
    let rows = result(&ctx, ROWS).await;
    let checks = checks(
        OVERWRITE,
        "not_null = [\"customer_id\", \"status\"]\nunique = [[\"customer_id\"]]\n\
         accepted_values = { status = [\"open\", \"paid\"] }\nexpect = [\"revenue >= 0\"]\n\
         row_count = { min = 1, max = 3 }\nwarn = [\"row_count\"]",
    );
    let outcomes = evaluate(&ctx, Semantics::default(), &rows, &checks, None, None).await.expect("evaluated");
    let by_name =
        |name: &str| outcomes.iter().find(|o| o.name == name).unwrap_or_else(|| panic!("{name}: {outcomes:?}"));

    let null = by_name("not_null(customer_id)");
    assert_eq!((null.passed, null.failing_rows), (false, 1));
    assert_eq!(null.examples, ["customer_id=NULL, status=paid, revenue=3"]);
    assert!(by_name("not_null(status)").passed);
    let unique = by_name("unique(customer_id)");
    assert_eq!(
        (unique.passed, unique.failing_rows, unique.examples.clone()),
        (false, 2, vec!["customer_id=2, rows=2".to_owned()])
    );
    let accepted = by_name("accepted_values(status)");
    assert_eq!(
        (accepted.failing_rows, accepted.examples.clone()),
        (1, vec!["customer_id=2, status=lost, revenue=-5".to_owned()])
    );
    // NULL passes a condition, as in a SQL CHECK.
    let expect = by_name("expect(revenue >= 0)");
    assert_eq!((expect.failing_rows, expect.severity), (1, CheckSeverity::Error));
    let count = by_name("row_count");
    assert_eq!((count.passed, count.severity), (false, CheckSeverity::Warn));
    assert_eq!(count.detail.as_deref(), Some("4 rows; expected between 1 and 3"));
}

#[tokio::test]
async fn change_vs_previous_compares_with_the_rows_replaced() {
    let ctx = SessionContext::new();
    let rows = result(&ctx, ROWS).await;
    let checks = checks(OVERWRITE, "change_vs_previous = { max_row_count_change_pct = 50 }");
    let outcome = |replaced| {
        let (ctx, rows, checks) = (&ctx, &rows, &checks);
        async move { evaluate(ctx, Semantics::default(), rows, checks, replaced, None).await.expect("evaluated").remove(0) }
    };
    let first = outcome(None).await;
    assert!(first.passed, "nothing to compare with: {first:?}");
    let close = outcome(Some(3)).await;
    assert_eq!((close.passed, close.detail.as_deref()), (true, Some("4 rows against 3 now (+33.3%); allowed ±50%")));
    let far = outcome(Some(10)).await;
    assert_eq!((far.passed, far.detail.as_deref()), (false, Some("4 rows against 10 now (-60.0%); allowed ±50%")));
}

#[tokio::test]
async fn bad_definitions_are_named_before_anything_is_evaluated() {
    let ctx = SessionContext::new();
    let rows = result(&ctx, ROWS).await;
    let df = rows.dataframe(&ctx).expect("frame");
    let bad = checks(
        OVERWRITE,
        "not_null = [\"customer\"]\naccepted_values = { revenue = [1, \"many\"] }\n\
         expect = [\"revenue >=\", \"revenue + 1\", \"nope > 1\", \"sum(revenue) > 0\"]",
    );
    let found = problems(&ctx, Semantics::default(), df.schema(), &bad);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "not_null(customer)",
            "accepted_values(revenue)",
            "expect(revenue >=)",
            "expect(revenue + 1)",
            "expect(nope > 1)",
            "expect(sum(revenue) > 0)"
        ]
    );
    assert_eq!(found[1].1, "the value 'many' is not a Int64 (the type of `revenue`)");
    assert!(found[5].1.starts_with("not a condition on one row: it uses an aggregate"), "{}", found[5].1);
    assert_eq!(found[0].1, "the result has no column `customer`; its columns: customer_id, status, revenue");
    assert!(found[3].1.starts_with("not a condition: its value is of type Int64"), "{}", found[3].1);
    let error =
        evaluate(&ctx, Semantics::default(), &rows, &bad, None, None).await.expect_err("a bad check").to_string();
    assert!(error.starts_with("check `not_null(customer)`: the result has no column"), "{error}");
}

#[test]
fn the_project_file_refuses_what_cannot_be_checked() {
    let parse = |write: &str, checks: &str| {
        let toml = format!(
            "root = \"l\"\n[jobs.j]\ntarget = \"a.b\"\nsql = \"SELECT 1\"\n{write}\n[jobs.j.checks]\n{checks}\n"
        );
        Project::parse(&toml, Path::new("/p/lakewriter.toml")).map(|_| ()).expect_err(checks).to_string()
    };
    let error = parse(OVERWRITE, "not_null = [\"a\"]\nwarn = [\"unique\"]");
    assert!(error.contains("checks.warn: `unique` names no check of this job (its checks: not_null(a))"), "{error}");
    let error = parse(OVERWRITE, "row_count = { min = 5, max = 1 }");
    assert!(error.contains("checks.row_count: min (5) is greater than max (1)"), "{error}");
    let error = parse(OVERWRITE, "not_nul = [\"a\"]");
    assert!(error.contains("unknown field `not_nul`"), "{error}");
}
