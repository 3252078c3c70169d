//! A `delete_insert` whose predicate holds where a column is NULL (`day = $dt OR day IS NULL`,
//! `coalesce(day, $dt) = $dt`) replaces the table's rows where it is NULL, also when the new rows
//! hold no NULL there (delta-rs reads the predicate against the new rows' columns: over a column
//! they hold no NULL in, `day IS NULL` would be false and those rows kept beside the new ones).

use serde_json::{Value, json};

use crate::support::sql::{query_rows, sql_json};
use crate::support::{Job, Lake, Project};

const DAY: &str = "2026-09-01";

fn rows(lake: &Lake) -> Vec<Value> {
    let query = "SELECT CAST(day AS STRING) AS day, total FROM core.slices ORDER BY total";
    query_rows(&sql_json(lake, query, &[]), 1).into_iter().map(|r| json!([r["day"], r["total"]])).collect()
}

#[test]
fn a_predicate_that_holds_where_a_column_is_null_replaces_those_rows() {
    for predicate in ["day = $dt OR day IS NULL", "coalesce(day, $dt) = $dt"] {
        let lake = Lake::new(DAY, DAY);
        let job = |sql: &str| Job::delete_insert("slices", "core.slices", predicate).sql(sql);
        let first = "SELECT CAST(NULL AS DATE) AS day, CAST(1 AS BIGINT) AS total \
            UNION ALL SELECT $dt, CAST(2 AS BIGINT) UNION ALL SELECT CAST(NULL AS DATE), CAST(3 AS BIGINT)";
        lake.set_project(&Project::new().job(job(first)));
        lake.cli(&["run", "slices", "--dt", DAY]).assert_code(0);
        // The other day's row is outside the slice: written by hand, kept by every run below.
        sql_json(&lake, "INSERT INTO core.slices VALUES (DATE'2026-08-31', CAST(4 AS BIGINT))", &[]);
        lake.set_project(&Project::new().job(job("SELECT $dt AS day, CAST(5 AS BIGINT) AS total")));
        lake.cli(&["run", "slices", "--dt", DAY]).assert_code(0);
        assert_eq!(rows(&lake), [json!(["2026-08-31", 4]), json!([DAY, 5])], "{predicate}");
        let digest = lake.digest("core.slices", None);
        lake.cli(&["run", "slices", "--dt", DAY]).assert_code(0);
        assert_eq!(lake.digest("core.slices", None).digest, digest.digest, "{predicate}: a second run");
    }
}
