//! lakewriter-datagen: deterministic sample raw data.
//!
//! [`sample_files`] are the raw files of one day of the sample lakehouse — orders, and a batch of
//! customer changes — laid out the way an ingestion tool would, under `raw/<dataset>/dt=YYYY-MM-DD/`;
//! [`write_orders`] writes the orders of a range of days to a local folder, for tests. The content of a day depends only on the date,
//! never on the clock or the machine, so every demo, test and benchmark sees the same bytes.
//!
//! Raw data is immutable: a file that already exists is left alone, never rewritten.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Decimal128Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use chrono::NaiveDate;
use lakewriter_core::{DateRange, days_since_epoch};
use parquet::arrow::ArrowWriter;

/// Errors while writing sample data.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot write sample file {}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("cannot encode sample file {}", path.display())]
    Parquet { path: PathBuf, source: parquet::errors::ParquetError },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What [`write_orders`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    pub files_written: usize,
    pub files_kept: usize,
    pub rows_written: usize,
}

/// The order statuses of the raw layer.
pub const STATUSES: [&str; 4] = ["placed", "shipped", "delivered", "cancelled"];

/// SplitMix64: a tiny, fixed pseudo-random sequence, seeded per day.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The schema of a raw orders file. `dt` is not stored in the file: it is the folder.
#[must_use]
pub fn orders_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("order_id", DataType::Int64, false),
        Field::new("customer_id", DataType::Int64, false),
        Field::new("amount", DataType::Decimal128(12, 2), false),
        Field::new("status", DataType::Utf8, false),
        Field::new("created_at", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), false),
    ]))
}

/// The orders of one day: 80 to 159 orders from 40 customers, amounts 5.00 to 504.99.
#[must_use]
pub fn orders_for(day: NaiveDate) -> RecordBatch {
    orders(day, 0, 80)
}

/// Orders of `day` delivered late, in a file of their own: 5 to 84 more orders, with order ids of
/// their own (from `day`'s number × 100,000 + 50,000).
#[must_use]
pub fn late_orders_for(day: NaiveDate) -> RecordBatch {
    orders(day, 50_000, 5)
}

/// `min` to `min + 79` orders of `day`, numbered from `day`'s number × 100,000 + `first`.
fn orders(day: NaiveDate, first: i64, min: u64) -> RecordBatch {
    let day_index = i64::from(days_since_epoch(day));
    let seed = u64::try_from(day_index + first).unwrap_or(0).wrapping_mul(0x2545_F491_4F6C_DD1D);
    let mut rng = SplitMix64(seed);
    let n = min + rng.below(80);
    let day_start_us = day_index * 86_400 * 1_000_000;
    let mut order_id = Vec::new();
    let mut customer_id = Vec::new();
    let mut amount = Vec::new();
    let mut status = Vec::new();
    let mut created_at = Vec::new();
    let mut second_of_day: i64 = 0;
    for i in 0..n {
        order_id.push(day_index * 100_000 + first + i64::try_from(i).unwrap_or(0));
        customer_id.push(1 + i64::try_from(rng.below(40)).unwrap_or(0));
        amount.push(500 + i128::from(rng.below(50_000)));
        status.push(STATUSES[usize::try_from(rng.below(4)).unwrap_or(0)]);
        second_of_day = (second_of_day + 1 + i64::try_from(rng.below(900)).unwrap_or(0)).min(86_399);
        created_at.push(day_start_us + second_of_day * 1_000_000);
    }
    let columns: Vec<Arc<dyn arrow::array::Array>> = vec![
        Arc::new(Int64Array::from(order_id)),
        Arc::new(Int64Array::from(customer_id)),
        Arc::new(Decimal128Array::from(amount).with_precision_and_scale(12, 2).expect("valid decimal")),
        Arc::new(StringArray::from(status)),
        Arc::new(TimestampMicrosecondArray::from(created_at).with_timezone("UTC")),
    ];
    RecordBatch::try_new(orders_schema(), columns).expect("columns match the schema")
}

/// The raw files of `day` for the sample datasets, as (path below the lakehouse root, rows):
/// `raw/orders/dt=…/part-00000.parquet`, and the customer changes split over
/// `raw/customers_batch/dt=…/part-0000{0,1}.parquet` (so readers meet them in no given order).
#[must_use]
pub fn sample_files(day: NaiveDate) -> Vec<(String, RecordBatch)> {
    let customers = customers_for(day);
    let half = customers.num_rows() / 2;
    vec![
        (format!("raw/orders/dt={day}/part-00000.parquet"), orders_for(day)),
        (format!("raw/customers_batch/dt={day}/part-00000.parquet"), customers.slice(0, half)),
        (
            format!("raw/customers_batch/dt={day}/part-00001.parquet"),
            customers.slice(half, customers.num_rows() - half),
        ),
    ]
}

/// The file that holds `day`'s orders below `root`.
#[must_use]
pub fn orders_path(root: &Path, day: NaiveDate) -> PathBuf {
    root.join("raw").join("orders").join(format!("dt={day}")).join("part-00000.parquet")
}

/// Writes the raw orders of every day of `days` below `root` (a local lakehouse root). Files
/// that exist are kept as they are. Each file appears whole or not at all (write, then rename).
pub fn write_orders(root: &Path, days: DateRange) -> Result<Written> {
    let mut written = Written::default();
    for day in days.days() {
        let path = orders_path(root, day);
        if path.exists() {
            written.files_kept += 1;
            continue;
        }
        let batch = orders_for(day);
        write_parquet(&path, &batch)?;
        written.files_written += 1;
        written.rows_written += batch.num_rows();
    }
    Ok(written)
}

/// The schema of a raw customer-change batch. `op` is `upsert` or `delete`.
#[must_use]
pub fn customers_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("customer_id", DataType::Int64, false),
        Field::new("email", DataType::Utf8, false),
        Field::new("tier", DataType::Utf8, false),
        Field::new("updated_at", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), false),
        Field::new("op", DataType::Utf8, false),
    ]))
}

/// The customer tiers of the raw layer.
pub const TIERS: [&str; 3] = ["bronze", "silver", "gold"];

/// One day's batch of customer changes, as a CDC feed delivers it: 20 to 39 changes to customers
/// 1..=60, about one in twenty a delete, with repeated keys — some at a later time, some at the
/// very same `updated_at` (a tie) with another tier.
#[must_use]
pub fn customers_for(day: NaiveDate) -> RecordBatch {
    let day_index = i64::from(days_since_epoch(day));
    let mut rng = SplitMix64(u64::try_from(day_index).unwrap_or(0).wrapping_mul(0x9E37_79B9) ^ 0xC0FF_EE00);
    let day_start_us = day_index * 86_400 * 1_000_000;
    let n = 20 + rng.below(20);
    let (mut id, mut email, mut tier, mut updated_at, mut op) = (vec![], vec![], vec![], vec![], vec![]);
    for i in 0..n {
        let repeat = i > 0 && rng.below(4) == 0;
        let (customer, at) = if repeat {
            // The same key again: a tie (same time) half of the time, else a later change.
            let j = usize::try_from(rng.below(u64::try_from(id.len()).unwrap_or(1))).unwrap_or(0);
            let later = if rng.below(2) == 0 { 0 } else { 1 + i64::try_from(rng.below(3_600)).unwrap_or(0) };
            (id[j], updated_at[j] + later * 1_000_000)
        } else {
            (
                1 + i64::try_from(rng.below(60)).unwrap_or(0),
                day_start_us + i64::try_from(rng.below(80_000)).unwrap_or(0) * 1_000_000,
            )
        };
        let version = rng.below(1_000);
        id.push(customer);
        email.push(format!("customer{customer}.{version}@example.com"));
        tier.push(TIERS[usize::try_from(rng.below(3)).unwrap_or(0)]);
        updated_at.push(at);
        op.push(if rng.below(20) == 0 { "delete" } else { "upsert" });
    }
    let columns: Vec<Arc<dyn arrow::array::Array>> = vec![
        Arc::new(Int64Array::from(id)),
        Arc::new(StringArray::from(email)),
        Arc::new(StringArray::from(tier)),
        Arc::new(TimestampMicrosecondArray::from(updated_at).with_timezone("UTC")),
        Arc::new(StringArray::from(op)),
    ];
    RecordBatch::try_new(customers_schema(), columns).expect("columns match the schema")
}

/// `batch` encoded as a Parquet file.
pub fn parquet_bytes(batch: &RecordBatch) -> Result<Vec<u8>, parquet::errors::ParquetError> {
    let mut bytes = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), None)?;
    writer.write(batch)?;
    writer.close()?;
    Ok(bytes)
}

/// Writes `batch` as a Parquet file at `path`, atomically (temporary file, then rename).
pub fn write_parquet(path: &Path, batch: &RecordBatch) -> Result<()> {
    let io_err = |source| Error::Io { path: path.to_path_buf(), source };
    let bytes = parquet_bytes(batch).map_err(|source| Error::Parquet { path: path.to_path_buf(), source })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io_err)?;
    let tmp = dir.join(format!(".{}.tmp", path.file_name().and_then(|n| n.to_str()).unwrap_or("part")));
    fs::write(&tmp, bytes).map_err(io_err)?;
    fs::rename(&tmp, path).map_err(io_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lakewriter_core::parse_date;

    #[test]
    fn a_day_is_always_the_same_data() {
        let day = parse_date("2026-09-30").unwrap();
        assert_eq!(orders_for(day), orders_for(day));
        assert_ne!(orders_for(day), orders_for(parse_date("2026-09-29").unwrap()));
        let batch = orders_for(day);
        assert!((80..160).contains(&batch.num_rows()));
    }

    #[test]
    fn customer_batches_repeat_keys_with_ties() {
        let mut ties = 0;
        let mut repeats = 0;
        for day in ["2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04"] {
            let batch = customers_for(parse_date(day).unwrap());
            assert_eq!(batch, customers_for(parse_date(day).unwrap()));
            let ids = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let at = batch.column(3).as_any().downcast_ref::<TimestampMicrosecondArray>().unwrap();
            for i in 0..batch.num_rows() {
                for j in 0..i {
                    if ids.value(i) == ids.value(j) {
                        repeats += 1;
                        ties += usize::from(at.value(i) == at.value(j));
                    }
                }
            }
        }
        assert!(repeats > 0 && ties > 0, "repeats {repeats}, ties {ties}");
    }

    #[test]
    fn existing_files_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let days = DateRange::new(parse_date("2026-09-01").unwrap(), parse_date("2026-09-03").unwrap()).unwrap();
        let first = write_orders(dir.path(), days).unwrap();
        assert_eq!((first.files_written, first.files_kept), (3, 0));
        let path = orders_path(dir.path(), parse_date("2026-09-02").unwrap());
        let before = fs::read(&path).unwrap();
        let again = write_orders(dir.path(), days).unwrap();
        assert_eq!((again.files_written, again.files_kept, again.rows_written), (0, 3, 0));
        assert_eq!(fs::read(&path).unwrap(), before);
        assert!(path.to_string_lossy().ends_with("raw/orders/dt=2026-09-02/part-00000.parquet"));
    }
}
