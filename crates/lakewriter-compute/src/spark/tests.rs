use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;
use lakewriter_core::{Dialect, Semantics};

use crate::Query;

/// The one row `sql` gives in the `spark` dialect (`ansi` as given), each column as text with
/// its type, or the planning or running error.
async fn row(sql: &str, ansi: bool) -> Result<Vec<(String, DataType)>, String> {
    let semantics = Semantics { dialect: Dialect::Spark, ansi, ..Semantics::default() };
    let query = Query::text(sql, semantics);
    let planned = crate::plan_partition(&SessionContext::new(), &query, None)
        .await
        .map_err(|e| lakewriter_core::error_chain(&e))?;
    let state = super::session(&SessionContext::new(), semantics).state();
    let batches =
        datafusion::prelude::DataFrame::new(state, planned.plan).collect().await.map_err(|e| e.to_string())?;
    let batch = &batches[0];
    Ok(batch
        .columns()
        .iter()
        .map(|column| {
            let text = datafusion::arrow::util::display::array_value_to_string(column, 0).expect("shown");
            (text, column.data_type().clone())
        })
        .collect())
}

#[tokio::test]
async fn operators_literals_and_div_read_and_compute_as_in_spark() {
    let sql = "SELECT 7 / 2 AS a, 10 div 3 + 1 AS b, 0.02 / 3 AS c, typeof(1) AS d, typeof(2147483648) AS e, 1L AS f, \
               7S AS g, 1Y AS h, 1.5D AS i, 10BD AS j";
    let got = row(sql, true).await.expect("runs");
    let expected = [
        ("3.5", DataType::Float64),
        ("4", DataType::Int64),
        ("0.006667", DataType::Decimal128(6, 6)),
        ("int", DataType::Utf8),
        ("bigint", DataType::Utf8),
        ("1", DataType::Int64),
        ("7", DataType::Int16),
        ("1", DataType::Int8),
        ("1.5", DataType::Float64),
        ("10", DataType::Decimal128(2, 0)),
    ];
    let expected: Vec<(String, DataType)> = expected.into_iter().map(|(v, t)| (v.to_owned(), t)).collect();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn overflow_and_division_by_zero_fail_in_ansi_mode_and_are_null_or_wrap_without() {
    let error = row("SELECT CAST(2147483647 AS INT) + 1", true).await.expect_err("an overflow");
    assert!(error.contains("[ARITHMETIC_OVERFLOW] int overflow in "), "{error}");
    let error = row("SELECT CAST(x AS TINYINT) FROM (SELECT 300 AS x)", true).await.expect_err("an overflow");
    assert!(
        error.contains("[CAST_OVERFLOW] the value 300 of the type int cannot be cast to tinyint due to an overflow in `CAST(x AS TINYINT)`; use try_cast"),
        "{error}"
    );
    let error = row("SELECT 1 / 0", true).await.expect_err("a division by zero");
    assert!(error.contains("[DIVIDE_BY_ZERO]"), "{error}");
    let got =
        row("SELECT CAST(2147483647 AS INT) + 1 AS a, 1 / 0 AS b, try_add(CAST(2147483647 AS INT), 1) AS c", false)
            .await;
    let got: Vec<String> = got.expect("runs").into_iter().map(|(v, _)| v).collect();
    assert_eq!(got, ["-2147483648", "", ""]);
}

#[tokio::test]
async fn a_function_without_a_spark_exact_implementation_is_refused_by_name() {
    let error = row("SELECT to_hex(1)", true).await.expect_err("refused");
    assert!(error.contains("`to_hex` has no Spark-exact implementation here"), "{error}");
    let error = row("SELECT no_such_function(1)", true).await.expect_err("refused");
    assert!(error.contains("`no_such_function` has no Spark-exact implementation here"), "{error}");
}

#[test]
fn every_refused_function_is_named_and_none_in_datafusions_dialect() {
    let sql = "SELECT regexp_replace(upper('a')), sha1('x'), no_such_function(1), upper('b'), \
               date_format(CAST('2026-01-01' AS DATE), 'yyyy'), count(*) OVER () FROM (SELECT 1 AS one)";
    let spark = |sql: &str| Query::text(sql, Semantics { dialect: Dialect::Spark, ..Semantics::default() });
    let refused = |sql: &str| crate::refused_functions(&SessionContext::new(), &spark(sql)).expect("parses");
    assert_eq!(refused(sql), ["no_such_function", "regexp_replace"]);
    assert_eq!(refused("SELECT 1 EXCEPT ALL SELECT 2"), ["except_all"]);
    let datafusion = Query::text(sql, Semantics { dialect: Dialect::DataFusion, ..Semantics::default() });
    assert!(crate::refused_functions(&SessionContext::new(), &datafusion).expect("parses").is_empty());
}

#[tokio::test]
async fn a_spark_session_keeps_the_tables_of_the_session_it_is_made_from() {
    let base = SessionContext::new();
    base.sql("CREATE TABLE t AS SELECT 1 AS x").await.expect("created").collect().await.expect("ran");
    let spark = super::session(&base, Semantics { dialect: Dialect::Spark, ..Semantics::default() });
    assert!(spark.table("t").await.is_ok(), "the spark session sees t");
    assert!(base.table("t").await.is_ok(), "the base session still holds t");
}

#[test]
fn a_condition_comparing_a_bigint_with_an_int_literal_is_of_one_type() {
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable};
    let schema = datafusion::common::DFSchema::try_from(Schema::new(vec![Field::new("k", DataType::Int64, false)]))
        .expect("schema");
    let semantics = Semantics { dialect: Dialect::Spark, ..Semantics::default() };
    let ast = datafusion::sql::sqlparser::parser::Parser::new(&datafusion::sql::sqlparser::dialect::SparkSqlDialect {})
        .try_with_sql("k = 1")
        .and_then(|mut p| p.parse_expr())
        .expect("parses");
    let expr = crate::statement::expression(&SessionContext::new(), semantics, &ast, &schema, None).expect("planned");
    let Expr::BinaryExpr(BinaryExpr { left, right, .. }) = expr else { panic!("a comparison: {expr}") };
    let types = [left.get_type(&schema).expect("typed"), right.get_type(&schema).expect("typed")];
    assert_eq!(types, [DataType::Int64, DataType::Int64]);
}
