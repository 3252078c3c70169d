//! A floating-point key of `merge` and `append_dedup` is one key however its NaN or zero is
//! written, as Spark's `NormalizeFloatingNumbers` makes it: any NaN matches any NaN, -0.0
//! matches 0.0 — in the source's deduplication and against the table, in lakewriter's own merge
//! and in delta-rs's (a merge that adds a column). A row the source replaces is the source's row,
//! its key as the source wrote it.

use serde_json::{Value, json};

use crate::support::sql::{query_rows, sql_json};
use crate::support::{Job, Lake, Project};

const DAY: &str = "2026-09-01";

/// Doubles as Spark SQL writes them: NaN of the sign bit set is `-CAST('NaN' AS DOUBLE)`.
const NAN: &str = "CAST('NaN' AS DOUBLE)";
const OTHER_NAN: &str = "-CAST('NaN' AS DOUBLE)";
const ZERO: &str = "CAST('0.0' AS DOUBLE)";
const NEGATIVE_ZERO: &str = "CAST('-0.0' AS DOUBLE)";

/// A keyed job's source: `(k, v)` rows, `k` a double.
fn values(rows: &[(&str, u32)]) -> String {
    let rows: Vec<String> = rows.iter().map(|(k, v)| format!("({k}, {v})")).collect();
    format!("SELECT k, v FROM VALUES {} AS t(k, v)", rows.join(", "))
}

/// The table's rows as `[k as Spark writes it, v]`, in order of `v` then `k`.
fn rows(lake: &Lake, table: &str) -> Vec<Value> {
    let query = format!("SELECT CAST(k AS STRING) AS k, v FROM {table} ORDER BY v, k");
    query_rows(&sql_json(lake, &query, &[]), 1).into_iter().map(|r| json!([r["k"], r["v"]])).collect()
}

/// Runs `job` for the day: its counts, as (inserted, updated, unchanged, duplicates dropped).
fn run(lake: &Lake, job: &str) -> (u64, u64, u64, u64) {
    let report = lake.cli(&["--json", "run", job, "--dt", DAY]).assert_code(0).json().0.remove(0);
    let changes = report.changes.expect("a keyed write's counts");
    (changes.inserted, changes.updated, changes.unchanged, changes.duplicates_dropped)
}

#[test]
fn a_merge_matches_any_nan_to_any_nan_and_negative_zero_to_zero() {
    let lake = Lake::new(DAY, DAY);
    let first = values(&[(NAN, 1), (ZERO, 1), ("1.5D", 1), (OTHER_NAN, 0), (NEGATIVE_ZERO, 0)]);
    lake.set_project(&Project::new().job(Job::merge("m", "core.m", &["k"], "v").sql(first)));
    // One row per key in the source already: the NaNs are one key, the zeros another.
    assert_eq!(run(&lake, "m"), (3, 0, 0, 2));
    assert_eq!(rows(&lake, "core.m"), [json!(["0.0", 1]), json!(["1.5", 1]), json!(["NaN", 1])]);

    let second = values(&[(OTHER_NAN, 2), (NEGATIVE_ZERO, 2), ("2.5D", 2)]);
    lake.set_project(&Project::new().job(Job::merge("m", "core.m", &["k"], "v").sql(&second)));
    assert_eq!(run(&lake, "m"), (1, 2, 0, 0), "the NaN and the zero replaced, 2.5 inserted");
    let merged = [json!(["1.5", 1]), json!(["-0.0", 2]), json!(["2.5", 2]), json!(["NaN", 2])];
    assert_eq!(rows(&lake, "core.m"), merged, "each replaced row is the source's: its key -0.0");

    let digest = lake.digest("core.m", None);
    assert_eq!(run(&lake, "m"), (0, 0, 3, 0), "a second run finds every key as new as its own");
    assert_eq!(lake.digest("core.m", None).digest, digest.digest, "a second run");

    // delta-rs's merge (the source adds a column) matches the same keys.
    let third = values(&[(ZERO, 3), (NAN, 3)]).replace("SELECT k, v", "SELECT k, v, 'x' AS note");
    let job = Job::merge("m", "core.m", &["k"], "v").on_schema_change("append_new_columns").sql(third);
    lake.set_project(&Project::new().job(job));
    assert_eq!(run(&lake, "m"), (0, 2, 0, 0), "delta-rs's merge: the zero and the NaN replaced");
    let query = "SELECT CAST(k AS STRING) AS k, v, note FROM core.m ORDER BY v, k";
    let after: Vec<Value> =
        query_rows(&sql_json(&lake, query, &[]), 1).into_iter().map(|r| json!([r["k"], r["v"], r["note"]])).collect();
    assert_eq!(
        after,
        [json!(["1.5", 1, null]), json!(["2.5", 2, null]), json!(["0.0", 3, "x"]), json!(["NaN", 3, "x"])]
    );
}

#[test]
fn an_append_dedup_appends_no_key_again_however_its_nan_or_zero_is_written() {
    let lake = Lake::new(DAY, DAY);
    let first = values(&[(NAN, 1), (NEGATIVE_ZERO, 1)]);
    lake.set_project(&Project::new().job(Job::append_dedup("a", "core.a", &["k"]).sql(first)));
    assert_eq!(run(&lake, "a"), (2, 0, 0, 0));
    let second = values(&[(OTHER_NAN, 2), (ZERO, 2), (ZERO, 3), ("7.0D", 2)]);
    lake.set_project(&Project::new().job(Job::append_dedup("a", "core.a", &["k"]).sql(second)));
    assert_eq!(run(&lake, "a"), (1, 0, 2, 1), "only 7.0 is new; the zeros are one key in the source");
    assert_eq!(rows(&lake, "core.a"), [json!(["-0.0", 1]), json!(["NaN", 1]), json!(["7.0", 2])]);
    let digest = lake.digest("core.a", None);
    assert_eq!(run(&lake, "a"), (0, 0, 3, 1), "nothing new, and the source's zeros one key again");
    assert_eq!(lake.digest("core.a", None).digest, digest.digest, "a second run");
}
