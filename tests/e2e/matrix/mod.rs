//! The write-mode matrix: every way a job writes — each write mode, and the statements that map
//! onto one — with each option that changes how rows are matched or written (`cells.rs`: a
//! partition column of strings that folder names must encode, `dedup_window` with and without
//! `dedup_window_column`, `cluster_by`, `on_schema_change` with a column added before and after a
//! run of the old code). Every cell is run day by day, its stale days run again, every day rerun
//! and (locally) verified, and run in another order of days; its table is read by delta-rs Python
//! and compared, row for row, with what DuckDB computes from the raw files with SQL of its own.
//! One project holds every cell's job, so each step is one `backfill --all` (`walk.rs`); the raw
//! events (`events.rs`) are a few rows chosen to meet each way of matching rows.

mod cells;
mod events;
mod walk;

use walk::{IN_ORDER, OUT_OF_ORDER, Walk};

/// The day `verify` applies each job's write for: its file holds late events and a row twice.
const VERIFIED: &str = events::DAYS[3];

#[test]
fn every_cell_run_in_order_then_rerun_and_verified_holds_what_duckdb_computes() {
    let mut walk = Walk::new("matrix", false);
    walk.run(&IN_ORDER);
    walk.rerun(&IN_ORDER);
    walk.verify(VERIFIED);
    walk.finish();
}

#[test]
fn every_cell_run_out_of_order_holds_what_duckdb_computes() {
    let mut walk = Walk::new("matrix", false);
    walk.run(&OUT_OF_ORDER);
    walk.finish();
}

#[test]
fn on_s3_every_cell_run_in_order_then_rerun_holds_what_duckdb_computes() {
    let mut walk = Walk::new("matrix-in-order", true);
    walk.run(&IN_ORDER);
    walk.rerun(&IN_ORDER);
    walk.finish();
}

#[test]
fn on_s3_every_cell_run_out_of_order_holds_what_duckdb_computes() {
    let mut walk = Walk::new("matrix-out-of-order", true);
    walk.run(&OUT_OF_ORDER);
    walk.finish();
}
