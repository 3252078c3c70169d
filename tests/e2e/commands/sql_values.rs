//! A query's rows in `lakewriter --json sql`: every value told apart from every other — a NaN
//! and an infinity are not NULL, a FLOAT keeps its own digits, -0.0 keeps its sign.

use serde_json::json;

use crate::support::Lake;
use crate::support::sql::{query_rows, sql_json};

#[test]
fn nan_and_the_infinities_are_strings_as_spark_writes_them_and_null_is_null() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let query = "SELECT CAST('NaN' AS DOUBLE) AS nan, CAST('Infinity' AS DOUBLE) AS inf, \
        CAST('-Infinity' AS DOUBLE) AS neg_inf, CAST(NULL AS DOUBLE) AS none, CAST('-0.0' AS DOUBLE) AS neg_zero, \
        CAST('NaN' AS FLOAT) AS float_nan, CAST(1.1 AS FLOAT) AS float, 2.5D AS double, \
        array(CAST('-Infinity' AS DOUBLE), 0.5D) AS nested";
    let rows = query_rows(&sql_json(&lake, query, &[]), 1);
    let expected = json!({
        "nan": "NaN", "inf": "Infinity", "neg_inf": "-Infinity", "none": null, "neg_zero": -0.0,
        "float_nan": "NaN", "float": 1.1, "double": 2.5, "nested": ["-Infinity", 0.5],
    });
    assert_eq!(rows, [expected]);
    let line = &rows[0];
    assert!(line["neg_zero"].as_f64().is_some_and(|z| z == 0.0 && z.is_sign_negative()), "{line}");
}
