//! Every Delta reader opens lakewriter's tables: for every write mode, locally and on S3, the
//! table is read by delta-rs Python (`deltalake`), `polars.read_delta` and a pyarrow dataset
//! through delta-rs, and each reader's rows equal lakewriter's own, row for row (one canonical
//! form of each row, digested); after checkpoints too, and with a merge's `_deleted` tombstones.

use serde_json::Value;

use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::sql::query_rows;
use crate::support::{Job, Lake, Project, json_lines};

/// A job of every write mode over the demo's raw layer, and one written as a statement.
fn project() -> Project {
    let orders = "SELECT order_id, customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt";
    Project::new()
        .job(Job::new("overwrite", "interop.overwrite").sql(
            "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt \
             GROUP BY customer_id",
        ))
        .job(
            Job::delete_insert("delete_insert", "interop.delete_insert", "dt = $dt")
                .sql("SELECT order_id, customer_id, amount, status, $dt AS dt FROM raw.orders WHERE dt = $dt"),
        )
        .job(Job::append("append", "interop.append").sql(orders))
        .job(
            Job::append_dedup("append_dedup", "interop.append_dedup", &["order_id"])
                .sql("SELECT order_id, customer_id, amount FROM raw.orders WHERE dt = $dt"),
        )
        .job(Job::rebuild("rebuild", "interop.rebuild").sql(
            "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, MAX(dt) AS last_day FROM raw.orders \
             GROUP BY customer_id",
        ))
        .job(
            Job::merge("merge", "interop.merge", &["customer_id"], "updated_at")
                .delete_when("op = 'delete'")
                .sql("SELECT customer_id, email, tier, updated_at, op FROM raw.customers_batch WHERE dt = $dt"),
        )
        .job(Job::statement(
            "statement",
            "interop.statement",
            "INSERT OVERWRITE TABLE interop.statement PARTITION (dt = $dt) SELECT customer_id, SUM(amount) AS revenue \
             FROM raw.orders WHERE dt = $dt GROUP BY customer_id",
        ))
}

const TABLES: [&str; 7] = ["overwrite", "delete_insert", "append", "append_dedup", "rebuild", "merge", "statement"];

/// Asserts that every reader reads `table` (`schema.table`, at `uri`) as lakewriter does.
fn assert_readers_agree(lake: &Lake, table: &str, uri: &str) -> Value {
    let select = lake.cli(&["--json", "sql", "-e", &format!("SELECT * FROM {table}")]);
    select.assert_code(0);
    let read = Reader::new(lake).interop(uri, &select.stdout);
    let expected = lake.digest(table, None);
    let ours = &read["lakewriter"];
    assert_eq!(ours["rows"], expected.rows, "{table}: lakewriter's SELECT reads every row");
    for reader in ["deltalake", "polars", "pyarrow_dataset"] {
        assert_eq!(read[reader]["rows"], ours["rows"], "{table}: {reader} row count");
        assert_eq!(read[reader]["digest"], ours["digest"], "{table}: {reader} reads other rows than lakewriter");
    }
    read
}

/// Writes every job over five days (the rebuild once), then checks each table with every reader.
fn every_mode(lake: &Lake, uri: &dyn Fn(&str) -> String) {
    for job in TABLES.iter().filter(|j| **j != "rebuild") {
        lake.cli(&["backfill", job, "--from", "2026-09-01", "--to", "2026-09-05"]).assert_code(0);
    }
    lake.cli(&["run", "rebuild"]).assert_code(0);
    for table in TABLES {
        let read = assert_readers_agree(lake, &format!("interop.{table}"), &uri(table));
        if table == "merge" {
            for reader in ["deltalake", "polars", "pyarrow_dataset"] {
                let columns = read[reader]["columns"].as_array().expect("columns");
                assert!(columns.iter().any(|c| c == "_deleted"), "{reader} sees the tombstone column");
            }
        }
    }
}

#[test]
fn every_reader_reads_every_modes_table_as_lakewriter_does() {
    let lake = Lake::demo();
    lake.set_project(&project());
    let root = lake.root().to_str().expect("utf-8 path").to_owned();
    every_mode(&lake, &|table| format!("{root}/interop/{table}"));
    // Tombstones are there to be seen: the demo's batches delete customers.
    let tombstones = lake.cli(&["--json", "sql", "-e", "SELECT customer_id FROM interop.merge WHERE _deleted"]);
    let rows = query_rows(&json_lines(&tombstones), 1);
    assert!(!rows.is_empty(), "the merge table holds tombstones: {}", tombstones.stdout);
}

#[test]
fn every_reader_reads_every_modes_table_as_lakewriter_does_on_s3() {
    let s3 = S3::new("interop");
    s3.lake.prepare_demo();
    s3.lake.set_project(&project());
    every_mode(&s3.lake, &|table| s3.url(&format!("interop/{table}")));
}

#[test]
fn every_reader_reads_a_table_past_its_checkpoints() {
    let lake = Lake::new("2026-01-01", "2026-04-20");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-01-01", "--to", "2026-04-20"]).assert_code(0);
    let log = lake.root().join("analytics/daily_orders/_delta_log");
    assert!(log.join("00000000000000000099.checkpoint.parquet").is_file(), "a checkpoint at version 99");
    assert_eq!(lake.commit_count("analytics/daily_orders"), 110, "110 commits");
    let uri = lake.root().join("analytics/daily_orders");
    assert_readers_agree(&lake, "analytics.daily_orders", uri.to_str().expect("utf-8 path"));
}
