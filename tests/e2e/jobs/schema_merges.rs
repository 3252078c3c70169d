//! A merge whose run adds a column (`on_schema_change = "append_new_columns"`) writes it in the
//! rows it writes, and only there, as Delta's MERGE does: a matched row that no clause updates —
//! a `merge`'s row that a newer version of its key wrote, a `MERGE INTO`'s row that its clauses'
//! conditions pass over — keeps its values and reads NULL in the column, and so does a row that a
//! `MERGE INTO` clause updates or inserts without setting the column. Locally and on S3.

use serde_json::Value;

use crate::support::modes::uri_of;
use crate::support::place::Place;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{Change, Changes, Job, Lake, Project, changes};

const FIRST: &str = "2026-09-01";
const SECOND: &str = "2026-09-02";

/// The raw columns each job reads, and the column its new code adds after them.
const COLUMNS: &str = "customer_id, email, tier, updated_at";
const ADDED: &str = ", upper(email) AS email_uc";

/// Customers 1, 2 and 4, as of time 200.
const FIRST_CHANGES: [Change<'static>; 3] = [
    (Some(1), "a@one", "gold", Some(200), "upsert"),
    (Some(2), "b@one", "gold", Some(200), "upsert"),
    (Some(4), "d@one", "gold", Some(200), "upsert"),
];

/// An older version of customer 1, newer ones of 2 and 4 (4's tier `email-only`), and two new
/// customers, 3 and 5 (5's tier `email-only`).
const SECOND_CHANGES: [Change<'static>; 5] = [
    (Some(1), "a@two", "gold", Some(100), "upsert"),
    (Some(2), "b@two", "gold", Some(300), "upsert"),
    (Some(3), "c@two", "gold", Some(100), "upsert"),
    (Some(4), "d@two", "email-only", Some(300), "upsert"),
    (Some(5), "e@two", "email-only", Some(100), "upsert"),
];

/// A table's row: its key, `email`, `tier` and `email_uc`.
type Row = (i64, String, String, Value);

fn row(key: i64, email: &str, tier: &str, email_uc: Option<&str>) -> Row {
    (key, email.to_owned(), tier.to_owned(), email_uc.map_or(Value::Null, Value::from))
}

/// `merge` on `customer_id`, newer by `updated_at`.
fn merge(added: &str) -> Job {
    Job::merge("customers", "facts.customers", &["customer_id"], "updated_at")
        .sql(format!("SELECT {COLUMNS}{added} FROM raw.customers_batch WHERE dt = $dt"))
}

/// A MERGE whose clauses leave rows and columns alone: an update of the email alone, a
/// newer-wins update of every column, an insert of the raw columns alone, an insert of all.
fn merge_into(added: &str) -> Job {
    Job::statement(
        "customers",
        "facts.customers",
        &format!(
            "MERGE INTO facts.customers AS t \
             USING (SELECT {COLUMNS}{added} FROM raw.customers_batch WHERE dt = $dt) AS s \
             ON t.customer_id = s.customer_id \
             WHEN MATCHED AND s.tier = 'email-only' THEN UPDATE SET email = s.email \
             WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET * \
             WHEN NOT MATCHED AND s.tier = 'email-only' THEN INSERT ({COLUMNS}) \
               VALUES (s.customer_id, s.email, s.tier, s.updated_at) \
             WHEN NOT MATCHED THEN INSERT *"
        ),
    )
}

/// `job` (given the SQL it adds) run for the first day with the raw columns, then for the second
/// with the column added: its report's counts and the table's rows by key.
fn added_by(place: &Place, job: fn(&str) -> Job) -> (Option<Changes>, Vec<Row>) {
    place.put(&format!("raw/customers_batch/dt={FIRST}/part-0.parquet"), &changes(&FIRST_CHANGES));
    place.put(&format!("raw/customers_batch/dt={SECOND}/part-0.parquet"), &changes(&SECOND_CHANGES));
    let lake = place.lake();
    lake.set_project(&Project::new().job(job("")));
    lake.cli(&["run", "customers", "--dt", FIRST]).assert_code(0);
    lake.set_project(&Project::new().job(job(ADDED).on_schema_change("append_new_columns")));
    let run = lake.cli(&["--json", "run", "customers", "--dt", SECOND]);
    run.assert_code(0);
    let changes = run.json().0.remove(0).changes;
    let mut rows: Vec<Row> = Reader::new(lake)
        .rows(&uri_of(lake, "facts.customers"))
        .into_iter()
        .map(|r| {
            let text = |c: &str| r[c].as_str().unwrap_or_else(|| panic!("{c} of {r:?}")).to_owned();
            (r["customer_id"].as_i64().expect("a key"), text("email"), text("tier"), r["email_uc"].clone())
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    (changes, rows)
}

/// A `merge`: customer 1's row, newer than the source's, is kept as it was, the column NULL.
fn merge_keeps_the_newer_row(place: &Place) {
    let (changes, rows) = added_by(place, merge);
    let counts = Changes { inserted: 2, updated: 2, deleted: 0, unchanged: 1, duplicates_dropped: 0 };
    assert_eq!(changes, Some(counts));
    let expected = vec![
        row(1, "a@one", "gold", None),
        row(2, "b@two", "gold", Some("B@TWO")),
        row(3, "c@two", "gold", Some("C@TWO")),
        row(4, "d@two", "email-only", Some("D@TWO")),
        row(5, "e@two", "email-only", Some("E@TWO")),
    ];
    assert_eq!(rows, expected);
}

/// A `MERGE INTO`: the column is set where an `UPDATE SET *` or `INSERT *` writes a row; customer
/// 1 (no clause holds), 4 (its email alone updated) and 5 (inserted without it) read NULL.
fn merge_into_sets_it_where_its_clauses_do(place: &Place) {
    let (changes, rows) = added_by(place, merge_into);
    assert_eq!(changes, Some(Changes { inserted: 2, updated: 2, deleted: 0, unchanged: 0, duplicates_dropped: 0 }));
    let expected = vec![
        row(1, "a@one", "gold", None),
        row(2, "b@two", "gold", Some("B@TWO")),
        row(3, "c@two", "gold", Some("C@TWO")),
        row(4, "d@two", "gold", None),
        row(5, "e@two", "email-only", None),
    ];
    assert_eq!(rows, expected);
}

#[test]
fn a_merge_adding_a_column_leaves_it_null_in_a_row_of_its_key_that_a_newer_version_wrote() {
    merge_keeps_the_newer_row(&Place::Local(Lake::empty(&[])));
}

#[test]
fn a_merge_into_adding_a_column_sets_it_only_where_a_clause_does() {
    merge_into_sets_it_where_its_clauses_do(&Place::Local(Lake::empty(&[])));
}

#[test]
fn on_s3_a_merge_adding_a_column_sets_it_only_in_the_rows_it_writes() {
    merge_keeps_the_newer_row(&Place::S3(S3::new("merge-adds")));
    merge_into_sets_it_where_its_clauses_do(&Place::S3(S3::new("merge-into-adds")));
}
