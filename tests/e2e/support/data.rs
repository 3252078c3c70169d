//! The raw data the tests run on, and what the guide's `daily_orders` (docs/guide/concepts.md) computes from it.

use chrono::NaiveDate;
use lakewriter_core::{DateRange, parse_date};

use super::{Job, Project};

pub const DAILY_ORDERS_SQL: &str = "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt \
     FROM raw.orders WHERE dt = $dt GROUP BY customer_id";

pub fn day(s: &str) -> NaiveDate {
    parse_date(s).expect("test date")
}

/// The days `from..=to`.
pub fn days(from: &str, to: &str) -> impl Iterator<Item = NaiveDate> {
    DateRange::new(day(from), day(to)).expect("range").days()
}

/// The raw orders of `day`, as [`Lake::new`] and the demo write them.
pub fn orders(day: &str) -> u64 {
    lakewriter_datagen::orders_for(self::day(day)).num_rows() as u64
}

/// The customers with an order on `day`: the rows [`DAILY_ORDERS_SQL`] (and the demo's
/// `daily_orders`) writes for it.
pub fn customers_with_orders(day: &str) -> u64 {
    distinct_customers(&[lakewriter_datagen::orders_for(self::day(day))])
}

/// The rows [`DAILY_ORDERS_SQL`] writes for every day of `from..=to`.
pub fn daily_orders_rows(from: &str, to: &str) -> u64 {
    days(from, to).map(|d| customers_with_orders(&d.to_string())).sum()
}

/// The distinct values of the column `customer_id` of `batches`.
pub fn distinct_customers(batches: &[arrow::array::RecordBatch]) -> u64 {
    let ids: std::collections::BTreeSet<i64> = batches
        .iter()
        .flat_map(|batch| {
            let column = batch.column_by_name("customer_id").expect("a customer_id column");
            let ids = column.as_any().downcast_ref::<arrow::array::Int64Array>().expect("Int64 customer ids");
            ids.values().to_vec()
        })
        .collect();
    ids.len() as u64
}

/// The README's project: the job `daily_orders` (`overwrite_partition` by `dt`) writing
/// `analytics.daily_orders` with `sql`.
pub fn daily_orders(sql: &str) -> Project {
    Project::new().job(Job::new("daily_orders", "analytics.daily_orders").sql(sql))
}

/// `text` with its one occurrence of `from` replaced by `to`; panics unless `from` occurs
/// exactly once, so that an edit never silently does nothing.
#[track_caller]
pub fn edited(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` occurs once in:\n{text}");
    text.replacen(from, to, 1)
}

/// What the refusal of a change of `job`'s columns under `on_schema_change = "fail"` ends with,
/// after `; `: the settings and the command that let the change in.
pub fn schema_advice(job: &str) -> String {
    format!(
        "job `{job}` keeps its table's columns (on_schema_change = \"fail\", the default): set on_schema_change = \
         \"append_new_columns\" to add a new column (then `lakewriter backfill {job} --from D1 --to D2 --only stale` \
         fills it in on the days written before), or \"sync_all_columns\" to also drop one with `lakewriter backfill \
         {job} --from D1 --to D2 --replace-schema` over every day written; to change a column's type, drop it so and \
         add it back (docs/guide/schema-changes.md)"
    )
}
