//! A column added to a job written as a statement (`on_schema_change`): an `INSERT`'s query
//! columns beyond the table's, and the source columns a `MERGE INTO`'s `*` clauses take, are
//! added at the end of the table in the commit of the run's rows; `backfill --only stale` fills
//! them day by day. As in Delta's schema merge, an INSERT's columns go by position and a MERGE
//! adds only the columns its clauses set.

use serde_json::{Map, Value};

use super::schema_changes::Place;
use crate::support::modes::{FAILING, WRITTEN, uri_of};
use crate::support::reader::Reader;
use crate::support::{Job, Lake, Project};

const ADDED: &str = "status_code";

/// The days' orders, without the partition column: an INSERT's `PARTITION (dt = $dt)` gives it.
const ORDERS: &str = "SELECT order_id, customer_id, amount, status, created_at FROM raw.orders WHERE dt = $dt";

/// The column the edit adds, after `created_at`.
const WITH_ADDED: &str = "created_at, upper(status) AS status_code FROM";

fn overwrite() -> Job {
    Job::statement("orders", "facts.orders", &format!("INSERT OVERWRITE facts.orders PARTITION (dt = $dt) {ORDERS}"))
}

/// An upsert whose matched rows take the source's every column: its rerun fills the column in.
fn upsert() -> Job {
    Job::statement(
        "orders",
        "facts.orders",
        &format!(
            "MERGE INTO facts.orders AS t USING (SELECT *, $dt AS dt FROM ({ORDERS})) AS s ON t.order_id = s.order_id \
             WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
        ),
    )
}

fn with_added(job: Job, policy: &'static str) -> Project {
    Project::new().job(job).edited_sql("orders", "created_at FROM", WITH_ADDED).with_schema_change("orders", policy)
}

/// Both days' raw orders, and `job`'s table written for both with the columns it had.
fn written_twice(job: Job) -> Lake {
    let Place::Local(lake) = written_at(job, "local", false) else { unreachable!("a local place") };
    lake
}

/// [`written_twice`], locally or below the S3 prefix `schema-NAME`.
fn written_at(job: Job, name: &str, on_s3: bool) -> Place {
    let place = super::schema_changes::raw_orders_at(name, on_s3);
    place.set_project(&Project::new().job(job));
    for dt in [WRITTEN, FAILING] {
        place.cli(&["run", "orders", "--dt", dt]).assert_code(0);
    }
    place
}

fn rows_of(lake: &Lake, day: &str) -> Vec<Map<String, Value>> {
    Reader::new(lake).rows(&uri_of(lake, "facts.orders")).into_iter().filter(|r| r["dt"] == day).collect()
}

/// Whether every row of `day` has the column filled in (its `status` upper-cased), or every row
/// has it NULL; panics on a mix or a wrong value.
fn filled(lake: &Lake, day: &str) -> bool {
    let rows = rows_of(lake, day);
    assert!(!rows.is_empty(), "{day}: no rows");
    let nulls = rows.iter().filter(|r| r[ADDED].is_null()).count();
    for row in rows.iter().filter(|r| !r[ADDED].is_null()) {
        assert_eq!(row[ADDED], row["status"].as_str().expect("a status").to_uppercase(), "{day}: {row:?}");
    }
    assert!(nulls == 0 || nulls == rows.len(), "{day}: {nulls} of {} rows NULL", rows.len());
    nulls == 0
}

fn lacking(lake: &Lake) -> Vec<(String, Vec<String>)> {
    let status = lake.status(&["orders", "--from", WRITTEN, "--to", FAILING]);
    status.partitions.iter().map(|p| (p.label(), p.lacking().into_iter().map(str::to_owned).collect())).collect()
}

fn stale_lacking() -> (String, Vec<String>) {
    ("stale:code_changed,lacks_column".to_owned(), vec![ADDED.to_owned()])
}

fn fresh() -> (String, Vec<String>) {
    ("fresh".to_owned(), Vec::new())
}

/// The walk: the edit shows in `status` and `plan`, one run adds the column, the backfill fills
/// the other day, a second backfill changes nothing.
fn walk(job: Job, name: &str, on_s3: bool) {
    let place = written_at(job.clone(), name, on_s3);
    let lake: &Lake = &place;
    lake.set_project(&with_added(job, "append_new_columns"));
    assert_eq!(lacking(lake), vec![stale_lacking(), stale_lacking()], "before any run");
    let plan = lake.cli(&["plan", "orders", "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
    plan.assert_code(0);
    assert!(
        plan.stdout.contains("a run adds column `status_code` (string); 2 written partitions will read it as NULL"),
        "{}",
        plan.stdout
    );
    let run = lake.cli(&["--json", "run", "orders", "--dt", FAILING]);
    run.assert_code(0);
    let report = run.json().0.remove(0);
    let added = serde_json::json!({"added": [{"column": ADDED, "type": "string"}], "missing": [], "ignored": [], "dropped": []});
    assert_eq!(report.schema_change.as_ref(), Some(&added));
    assert_eq!((filled(lake, WRITTEN), filled(lake, FAILING)), (false, true));
    assert_eq!(lacking(lake), vec![stale_lacking(), fresh()], "one day run");
    let schema = Reader::new(lake).schema(&uri_of(lake, "facts.orders"));
    assert_eq!(schema.last(), Some(&(ADDED.to_owned(), "string".to_owned(), true)), "added last, nullable");

    let backfill = lake.cli(&["--json", "backfill", "orders", "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
    backfill.assert_code(0);
    let (reports, _) = backfill.json();
    assert_eq!(reports.iter().map(|r| r.partition.as_str()).collect::<Vec<_>>(), [format!("dt={WRITTEN}")]);
    assert_eq!((filled(lake, WRITTEN), filled(lake, FAILING)), (true, true));
    assert_eq!(lacking(lake), vec![fresh(), fresh()], "backfilled");

    let digest = lake.digest("facts.orders", None);
    lake.cli(&["backfill", "orders", "--from", WRITTEN, "--to", FAILING]).assert_code(0);
    assert_eq!(lake.digest("facts.orders", None).digest, digest.digest, "a second backfill");
}

#[test]
fn insert_overwrite_adds_the_querys_columns_beyond_the_tables_and_backfilling_fills_them() {
    walk(overwrite(), "insert", false);
}

#[test]
fn merge_into_adds_the_source_columns_its_star_clauses_take_and_backfilling_fills_them() {
    walk(upsert(), "merge-into", false);
}

#[test]
fn on_s3_a_statements_added_column_is_filled_by_backfilling_stale_days() {
    walk(overwrite(), "insert-overwrite", true);
    walk(upsert(), "merge-into", true);
}

#[test]
fn insert_into_appends_new_days_with_the_column_and_an_insert_names_what_position_cannot_tell() {
    let append =
        || Job::statement("orders", "facts.orders", &format!("INSERT INTO facts.orders PARTITION (dt = $dt) {ORDERS}"));
    let lake = Lake::new(WRITTEN, FAILING);
    lake.set_project(&Project::new().job(append()));
    lake.cli(&["run", "orders", "--dt", WRITTEN]).assert_code(0);
    lake.set_project(&with_added(append(), "append_new_columns"));
    let run = lake.cli(&["--json", "run", "orders", "--dt", FAILING]);
    run.assert_code(0);
    assert_eq!(run.json().0[0].note.as_deref(), Some("adds column `status_code` (string)"));
    assert_eq!((filled(&lake, WRITTEN), filled(&lake, FAILING)), (false, true));
    let digest = lake.digest("facts.orders", None);
    lake.cli(&["run", "orders", "--dt", FAILING]).assert_code(0);
    assert_eq!(lake.digest("facts.orders", None), digest, "run twice: appended once");

    // A column of the table after the table's columns is a mistake of position, not a new column.
    let reordered = with_added(append(), "append_new_columns").edited_sql(
        "orders",
        "SELECT order_id, customer_id,",
        "SELECT order_id,",
    );
    let reordered = reordered.edited_sql("orders", "status_code FROM", "status_code, customer_id FROM");
    lake.set_project(&reordered);
    let run = lake.cli(&["--json", "run", "orders", "--dt", "2026-09-03"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    assert!(error.contains("the query's column 2 is `amount` but goes to `customer_id`"), "{error}");
    assert_eq!(lake.digest("facts.orders", None), digest, "nothing committed");
}

#[test]
fn ignore_leaves_an_inserts_and_a_merges_new_columns_out() {
    for job in [overwrite(), upsert()] {
        let lake = written_twice(job.clone());
        lake.set_project(&with_added(job, "ignore"));
        let run = lake.cli(&["--json", "run", "orders", "--dt", FAILING]);
        run.assert_code(0);
        let report = run.json().0.remove(0);
        let ignored = serde_json::json!({"added": [], "missing": [], "ignored": [{"column": ADDED, "type": "string"}], "dropped": []});
        assert_eq!(report.schema_change.as_ref(), Some(&ignored));
        assert!(rows_of(&lake, FAILING).iter().all(|r| !r.contains_key(ADDED)));
    }
}

#[test]
fn by_default_an_inserts_extra_column_is_refused_and_a_merges_star_takes_the_tables_columns_alone() {
    let lake = written_twice(overwrite());
    let before = lake.digest("facts.orders", None);
    lake.set_project(&Project::new().job(overwrite()).edited_sql("orders", "created_at FROM", WITH_ADDED));
    let run = lake.cli(&["--json", "run", "orders", "--dt", FAILING]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    assert!(
        error.contains("INSERT into facts.orders: the query gives 6 column(s), and the table take(s) 5"),
        "{error}"
    );
    assert_eq!(lake.digest("facts.orders", None), before, "nothing committed");

    // As in Spark without schema evolution, `*` sets the target's columns from the source's.
    let lake = written_twice(upsert());
    lake.set_project(&Project::new().job(upsert()).edited_sql("orders", "created_at FROM", WITH_ADDED));
    let run = lake.cli(&["--json", "run", "orders", "--dt", FAILING]);
    run.assert_code(0);
    assert!(run.json().0[0].schema_change.is_none());
    assert!(rows_of(&lake, FAILING).iter().all(|r| !r.contains_key(ADDED)));
}
