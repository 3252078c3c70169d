//! lakewriter-compute: everything lakewriter asks of DataFusion.
//!
//! - [`catalog`]: finds every `<root>/<schema>/<table>/` and makes raw Parquet datasets
//!   queryable as `schema.table`, with hive partition folders as typed columns;
//! - [`raw`]: raw Parquet datasets, opened from their newest partition (cost flat in history)
//!   and read only after the files a scan reads are checked;
//! - [`query`]: plans a job's SQL for one logical date, `$dt` bound as a typed `DATE` parameter,
//!   read-only, and lists the raw files its physical plan scans; binds `$dt` in conditions;
//! - [`lint`]: the determinism checks over a job's logical plan (clock and random functions,
//!   orders that are not total, scans of all history, a partition column that is not `$dt`);
//! - [`checks`]: a job's data checks, evaluated on its result held in memory;
//! - [`statement`]: Spark-style statements (`INSERT OVERWRITE … PARTITION`, `INSERT INTO`,
//!   `MERGE INTO`, `DELETE`, `UPDATE`) and queries, read and classified; their expressions
//!   planned with `$dt` bound;
//! - [`floating`]: floating-point keys normalized as Spark's (every NaN one NaN, -0.0 as 0.0);
//! - [`keyed`]: validates, deduplicates and classifies the keyed sources of `merge` and
//!   `append_dedup`;
//! - [`date_literal`] and [`partition_predicate`]: a logical date as a `DATE` value, and as the
//!   filter on a date partition column (and as `$dt`'s value, bound in an expression);
//! - `parser`: SQL text read into the parser's statements, in DataFusion's grammar or Spark's;
//! - `expression`: expressions written as SQL text (a project file's conditions) planned over the
//!   columns they may name;
//! - [`first_rows`]: a few rows of a result as `column=value, …`, the same rows each time (with
//!   the count of a one-row aggregate, in `rows`);
//! - [`spark`]: the `spark` dialect — Spark's grammar, functions, types and operators;
//! - [`engine`]: where a partition's query runs — here, or on a cluster that executes physical
//!   plans (an [`engine::Engine`]);
//! - [`column`]: a column by its name as written (never parsed as SQL, so never folded to
//!   lower case).
//!
//! It does not import deltalake: the caller supplies the session and registers Delta tables.

pub mod catalog;
pub mod checks;
pub mod engine;
pub mod floating;
pub mod keyed;
pub mod lint;
pub mod query;
pub mod raw;
pub mod spark;
pub mod statement;

mod column;
mod date;
mod error;
mod expression;
mod held;
mod located;
mod parser;
mod rows;

pub use catalog::{TableEntry, TableKind};
pub use column::column;
pub use date::{date_literal, partition_predicate};
pub use error::{Error, Result};
pub use held::{Materialized, spawned};
pub use keyed::{KeyedCounts, KeyedSource, KeyedSpec};
pub use lint::{Finding, Rule, Scope as LintScope, Severity, lint};
pub use located::{Origin, catalog_tables, line_and_column, nearest_tables};
pub use query::{
    PartitionQuery, Prepared, Query, RowDiff, condition, diff, plan_partition, plan_sql, refused_functions,
    table_references,
};
pub use rows::first_rows;
