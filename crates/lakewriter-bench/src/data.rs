//! The benchmark's raw layer at a named scale: raw orders (one file a day) for the `daily_orders`
//! aggregate, and customer-change batches for the `customers` merge. A day's content depends only
//! on the scale and the date.
//!
//! The skew scale has no orders: a customer table of 5,000,000 rows, clustered by its key, and two
//! batches of 1% of the keys to merge into it — a skewed one (nine changes in ten among the newest
//! tenth of the keys, the tenth anywhere) and a local one (all among the newest tenth).
//!
//! Customer batch 0 is the initial load (every customer once); batch k ≥ 1 holds `changes` rows:
//! `new_per_day` new customers, the rest changes to known ones — one in ten a key already changed
//! earlier in the same batch, one in twenty older than the batch (a late change, which the
//! newer-wins guard must ignore when the table holds a newer version). `updated_at` is distinct
//! within a batch, so the newest change of a key is never a tie and every correct merge agrees.

use std::fmt;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Decimal128Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use chrono::{Days, NaiveDate};
use lakewriter_core::days_since_epoch;
use lakewriter_datagen::{STATUSES, SplitMix64, TIERS, customers_schema, orders_schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::BoxError;

const DAY_US: i64 = 86_400_000_000;

/// A named scale of the raw layer.
pub struct Scale {
    days: u64,
    orders_per_day: u64,
    customers: u64,
    changes_per_day: u64,
    new_per_day: u64,
    first: NaiveDate,
    /// The skew scale's batches: batch 1 skewed, batch 2 local (see the module's header).
    skew: bool,
}

/// The dates of a scale: its orders cover `first..=last`; `merge_one` is the day of the one
/// customer batch after them (none at the history scale).
pub struct Dates {
    first: NaiveDate,
    last: NaiveDate,
    merge_one: Option<NaiveDate>,
}

impl fmt::Display for Dates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let merge_one = self.merge_one.map_or_else(|| "-".to_owned(), |d| d.to_string());
        write!(f, "{} {} {merge_one}", self.first, self.last)
    }
}

impl Scale {
    pub fn named(name: &str) -> Result<Self, BoxError> {
        let jan1 = NaiveDate::from_ymd_opt(2026, 1, 1).ok_or("date")?;
        let (days, orders_per_day, customers, changes_per_day, new_per_day) = match name {
            "small" => (30, 200_000, 50_000, 2_000, 100),
            "medium" => (30, 2_000_000, 500_000, 20_000, 1_000),
            "history" => (3_650, 2_000, 500_000, 0, 0),
            "skew" => (1, 0, 5_000_000, 50_000, 0),
            // One day ten times a medium day (scripts/bench-engine).
            "large" => (1, 20_000_000, 500_000, 0, 0),
            _ => return Err(format!("unknown scale {name:?} (small, medium, history, skew or large)").into()),
        };
        // Every scale but skew ends on 2026-01-30 (skew's three batches start there).
        let first = jan1 + Days::new(30) - Days::new(days);
        let skew = name == "skew";
        Ok(Self { days, orders_per_day, customers, changes_per_day, new_per_day, first, skew })
    }

    fn day(&self, n: u64) -> NaiveDate {
        self.first + Days::new(n)
    }
}

/// Writes the project file and the raw layer of `scale` under `dir` (files that exist are kept).
pub fn write(scale: &Scale, dir: &Path) -> Result<Dates, BoxError> {
    fs::create_dir_all(dir)?;
    if scale.skew {
        return write_skew(scale, dir);
    }
    let merges = scale.changes_per_day > 0;
    fs::write(dir.join("lakewriter.toml"), project(merges))?;
    let raw = dir.join("lake/raw");
    let batches = if merges { scale.days + 1 } else { 0 };
    let threads = std::thread::available_parallelism().map_or(2, std::num::NonZero::get) as u64;
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let raw = &raw;
                s.spawn(move || -> Result<(), BoxError> {
                    for n in (t..scale.days.max(batches)).step_by(usize::try_from(threads)?) {
                        let day = scale.day(n);
                        if n < scale.days {
                            let path = raw.join(format!("orders/dt={day}/part-00000.parquet"));
                            write_new(&path, || orders(scale, day))?;
                        }
                        if n < batches {
                            let path = raw.join(format!("customers_batch/dt={day}/part-00000.parquet"));
                            write_new(&path, || customers(scale, n))?;
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| w.join().map_err(|_| BoxError::from("a writer panicked"))?)
    })?;
    let last = scale.day(scale.days - 1);
    Ok(Dates { first: scale.first, last, merge_one: merges.then(|| scale.day(scale.days)) })
}

/// The skew scale: its three customer batches and a project whose `customers` merge is clustered
/// by the key, in files of 8 MiB. Prints as `first skewed local`, the batches' days.
fn write_skew(scale: &Scale, dir: &Path) -> Result<Dates, BoxError> {
    fs::write(
        dir.join("lakewriter.toml"),
        format!("root = \"lake\"\n{CUSTOMERS}cluster_by = [\"customer_id\"]\ntarget_file_size = \"8 MiB\"\n"),
    )?;
    for n in 0..3 {
        let path = dir.join(format!("lake/raw/customers_batch/dt={}/part-00000.parquet", scale.day(n)));
        write_new(&path, || customers(scale, n))?;
    }
    Ok(Dates { first: scale.day(0), last: scale.day(1), merge_one: Some(scale.day(2)) })
}

/// The `customers` merge job of the scales with customer batches.
const CUSTOMERS: &str = r#"
[jobs.customers]
target = "core.customers"
write = "merge"
key = ["customer_id"]
newer_by = "updated_at"
sql = "SELECT customer_id, email, tier, updated_at, op FROM raw.customers_batch WHERE dt = $dt"
"#;

fn project(merges: bool) -> String {
    let history = !merges;
    let mut project = String::from(
        r#"root = "lake"

[jobs.daily_orders]
target = "analytics.daily_orders"
write = "overwrite_partition"
partition_by = "dt"
sql = """
SELECT customer_id,
       COUNT(*)                                              AS orders,
       SUM(amount)                                           AS revenue,
       SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) AS cancelled,
       $dt                                                   AS dt
FROM raw.orders
WHERE dt = $dt
GROUP BY customer_id
"""
"#,
    );
    if history {
        // Each day's customers not seen within a week of it: the dedup workload.
        project.push_str(
            r#"
[jobs.customers_seen]
target = "analytics.customers_seen"
write = "append_dedup"
key = ["customer_id"]
partition_by = "dt"
dedup_window = "7 days"
sql = "SELECT customer_id, MIN(order_id) AS first_order, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id"
"#,
        );
    }
    if merges {
        project.push_str(CUSTOMERS);
    }
    project
}

/// Writes the batch `make` builds at `path` as Snappy-compressed Parquet, unless the file exists.
fn write_new(path: &Path, make: impl FnOnce() -> RecordBatch) -> Result<(), BoxError> {
    if path.exists() {
        return Ok(());
    }
    let batch = make();
    let dir = path.parent().ok_or("a file path")?;
    fs::create_dir_all(dir)?;
    let tmp = dir.join(".part.tmp");
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut writer = ArrowWriter::try_new(fs::File::create(&tmp)?, batch.schema(), Some(props))?;
    writer.write(&batch)?;
    writer.close()?;
    fs::rename(&tmp, path)?;
    Ok(())
}

fn day_start_us(day: NaiveDate) -> i64 {
    i64::from(days_since_epoch(day)) * DAY_US
}

fn orders(scale: &Scale, day: NaiveDate) -> RecordBatch {
    let day_index = i64::from(days_since_epoch(day));
    let mut rng = SplitMix64(u64::try_from(day_index).unwrap_or(0).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xBE7C);
    let rows = scale.orders_per_day;
    let step = DAY_US / i64::try_from(rows).unwrap_or(1);
    let mut amount = Vec::new();
    let mut status = Vec::new();
    let mut customer_id = Vec::new();
    for _ in 0..rows {
        customer_id.push(1 + to_i64(rng.below(scale.customers)));
        amount.push(500 + i128::from(rng.below(50_000)));
        status.push(STATUSES[usize::try_from(rng.below(4)).unwrap_or(0)]);
    }
    let ids = (0..to_i64(rows)).map(|i| day_index * 10_000_000 + i);
    let created = (0..to_i64(rows)).map(|i| day_start_us(day) + i * step);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(ids)),
        Arc::new(Int64Array::from(customer_id)),
        Arc::new(Decimal128Array::from(amount).with_precision_and_scale(12, 2).expect("valid decimal")),
        Arc::new(StringArray::from(status)),
        Arc::new(TimestampMicrosecondArray::from_iter_values(created).with_timezone("UTC")),
    ];
    RecordBatch::try_new(orders_schema(), columns).expect("columns match the schema")
}

/// Customer batch `n` (0: the initial load).
fn customers(scale: &Scale, n: u64) -> RecordBatch {
    let start = day_start_us(scale.day(n));
    let mut rng = SplitMix64(n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xC0FF_EE00);
    let mut ids: Vec<i64> = Vec::new();
    let mut at: Vec<i64> = Vec::new();
    if n == 0 {
        ids.extend(1..=to_i64(scale.customers));
        at.extend((0..to_i64(scale.customers)).map(|i| start + i));
    } else {
        let known = scale.customers + (n - 1) * scale.new_per_day;
        for i in 0..scale.changes_per_day {
            let newest = known / 10;
            let id = if scale.skew {
                // Batch 1: nine in ten among the newest tenth of the keys; batch 2: all of them.
                if n == 2 || rng.below(10) < 9 { known - newest + 1 + rng.below(newest) } else { 1 + rng.below(known) }
            } else if i < scale.new_per_day {
                known + 1 + i
            } else if i > scale.new_per_day && rng.below(10) == 0 {
                let earlier = rng.below(u64::try_from(ids.len()).unwrap_or(1));
                u64::try_from(ids[usize::try_from(earlier).unwrap_or(0)]).unwrap_or(1)
            } else {
                1 + rng.below(known)
            };
            let late = if rng.below(20) == 0 { 10 * DAY_US } else { 0 };
            ids.push(to_i64(id));
            at.push(start + to_i64(i) * 1_000 - late);
        }
    }
    let email = ids.iter().zip(&at).map(|(id, at)| Some(format!("c{id}.{at}@example.com")));
    let tier = ids.iter().map(|_| Some(TIERS[usize::try_from(rng.below(3)).unwrap_or(0)]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.clone())),
        Arc::new(email.collect::<StringArray>()),
        Arc::new(tier.collect::<StringArray>()),
        Arc::new(TimestampMicrosecondArray::from(at).with_timezone("UTC")),
        Arc::new(StringArray::from(vec!["upsert"; ids.len()])),
    ];
    RecordBatch::try_new(customers_schema(), columns).expect("columns match the schema")
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
