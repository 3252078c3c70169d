//! The job the check scenarios check: the guide's `daily_orders` (docs/guide/concepts.md) with columns for checks to
//! fail on, and its rows computed from the raw orders.

use std::collections::BTreeMap;

use arrow::array::{Decimal128Array, Int64Array, StringArray};

pub const JOB: &str = "daily_orders";

pub const TABLE: &str = "analytics.daily_orders";

/// The day written first.
pub const WRITTEN: &str = "2026-09-01";

/// The day the checks fail on: 39 customers, 6 of them with one order, 4 with two.
pub const CHECKED: &str = "2026-09-02";

/// `daily_orders` with columns for checks to fail on: `repeat_orders` is NULL for a customer
/// with one order, `busy` is true from four orders on.
pub const SQL: &str = "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, \
     NULLIF(COUNT(*), 1) AS repeat_orders, MIN(status) AS min_status, COUNT(*) >= 4 AS busy, $dt AS dt \
     FROM raw.orders WHERE dt = $dt GROUP BY customer_id";

/// A row of [`SQL`]'s result, computed from the raw orders.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: i64,
    pub orders: u64,
    /// `revenue` in cents.
    pub cents: i128,
    pub min_status: String,
}

impl Row {
    pub fn repeat_orders(&self) -> Option<u64> {
        (self.orders != 1).then_some(self.orders)
    }

    /// The row as a check's example shows it: `column=value, …`.
    pub fn shown(&self, day: &str) -> String {
        let repeat = self.repeat_orders().map_or_else(|| "NULL".to_owned(), |n| n.to_string());
        format!(
            "customer_id={}, orders={}, revenue={}.{:02}, repeat_orders={repeat}, min_status={}, busy={}, dt={day}",
            self.id,
            self.orders,
            self.cents / 100,
            self.cents % 100,
            self.min_status,
            self.orders >= 4
        )
    }
}

/// The rows of [`SQL`] for `day`: one per customer with an order, by customer id.
pub fn rows(day: &str) -> Vec<Row> {
    let batch = lakewriter_datagen::orders_for(super::day(day));
    let column = |name: &str| batch.column_by_name(name).unwrap_or_else(|| panic!("raw column {name}")).as_any();
    let ids = column("customer_id").downcast_ref::<Int64Array>().expect("Int64 ids");
    let amounts = column("amount").downcast_ref::<Decimal128Array>().expect("decimal amounts");
    let statuses = column("status").downcast_ref::<StringArray>().expect("string statuses");
    let mut by_id: BTreeMap<i64, Row> = BTreeMap::new();
    for i in 0..batch.num_rows() {
        let (id, status) = (ids.value(i), statuses.value(i));
        let row = by_id.entry(id).or_insert_with(|| Row { id, orders: 0, cents: 0, min_status: status.to_owned() });
        row.orders += 1;
        row.cents += amounts.value(i);
        if status < row.min_status.as_str() {
            status.clone_into(&mut row.min_status);
        }
    }
    by_id.into_values().collect()
}
