//! The raw layer every cell reads: `raw.events`, four days of a few rows each, chosen so that each
//! way of matching rows meets its cases — an update, a stale replay and a tie within a day and
//! across days (`merge`), a delete before and after its key's upsert, a key moving to another
//! partition, the same event delivered again within and beyond a window and late events 3 to 8
//! days before their day (`append_dedup`'s windows), a row twice in one file, and every region
//! a partition folder name must encode: a space, `%` (and `%C3%AF`, which decoded twice would read
//! as `ï`), `/`, `=`, `#`, `ï`, an emoji, and `''`.

use std::sync::Arc;

use arrow::array::{Date32Array, Decimal128Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use chrono::NaiveDate;

use crate::support::place::Place;

/// The days, in date order.
pub const DAYS: [&str; 4] = ["2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04"];

/// One raw event: `event_id`, `region`, `event_date`, `updated_at` (UTC, to the minute), `op`
/// and `amount`, in whole units (a `DECIMAL(10,2)`).
type Event = (i64, &'static str, &'static str, &'static str, &'static str, i128);

/// Each day's file, as [`DAYS`] orders them.
const EVENTS: [&[Event]; 4] = [
    &[
        (1, "us east", "2026-09-01", "2026-09-01 08:00", "upsert", 10),
        (2, "50%", "2026-09-01", "2026-09-01 08:00", "upsert", 20),
        (3, "ï", "2026-09-01", "2026-09-01 08:00", "upsert", 30),
        (4, "🦀", "2026-09-01", "2026-09-01 09:00", "upsert", 40),
        (5, "", "2026-09-01", "2026-09-01 09:00", "upsert", 50),
        // A tie within the day: the greater region wins.
        (6, "a/b", "2026-09-01", "2026-09-01 10:00", "upsert", 60),
        (6, "k=v", "2026-09-01", "2026-09-01 10:00", "upsert", 61),
        // A tie of an upsert and a delete: a merge keeps the delete.
        (7, "#1", "2026-09-01", "2026-09-01 11:00", "upsert", 70),
        (7, "#1", "2026-09-01", "2026-09-01 11:00", "delete", 70),
        // Late: 3 days before its day; delivered again on the 4th.
        (8, "%C3%AF", "2026-08-29", "2026-09-01 07:00", "upsert", 80),
        (12, "k=v", "2026-09-01", "2026-09-01 12:00", "upsert", 120),
    ],
    &[
        (1, "us east", "2026-09-01", "2026-09-02 08:00", "upsert", 11),
        // Older than the 1st's row: never wins.
        (2, "50%", "2026-09-01", "2026-09-01 07:00", "upsert", 19),
        // Newer, in another region: the key moves partitions.
        (3, "#1", "2026-09-01", "2026-09-02 09:00", "upsert", 31),
        (9, "ï", "2026-09-02", "2026-09-02 08:00", "upsert", 90),
        // Delivered again a day later: within a 2-day window of its first day.
        (12, "k=v", "2026-09-01", "2026-09-01 12:00", "upsert", 120),
        // Late: 5 days before its day.
        (13, "🦀", "2026-08-28", "2026-09-02 10:00", "upsert", 130),
        // A delete before its key's (older) upsert arrives.
        (14, "", "2026-09-02", "2026-09-02 10:00", "delete", 140),
    ],
    &[
        (4, "🦀", "2026-09-01", "2026-09-03 09:00", "delete", 40),
        (10, "", "2026-09-03", "2026-09-03 08:00", "upsert", 100),
        // As new as the 1st's row, with another amount: the day written first keeps its row.
        (2, "50%", "2026-09-01", "2026-09-01 08:00", "upsert", 21),
        // The same id, its event_date 6 days after the 2nd's.
        (13, "🦀", "2026-09-03", "2026-09-03 10:00", "upsert", 131),
        (14, "", "2026-09-01", "2026-09-01 12:00", "upsert", 141),
        (15, "us east", "2026-09-03", "2026-09-03 11:00", "upsert", 150),
    ],
    &[
        // Delivered again 3 days after its first day: beyond a 2-day window of days, within one
        // of its event_date.
        (8, "%C3%AF", "2026-08-29", "2026-09-01 07:00", "upsert", 80),
        // Late: 8 days before its day.
        (11, "a/b", "2026-08-27", "2026-09-04 07:00", "upsert", 110),
        (15, "us east", "2026-09-03", "2026-09-04 09:00", "upsert", 151),
        // The same row twice in one file.
        (16, "ï", "2026-09-04", "2026-09-04 09:00", "upsert", 160),
        (16, "ï", "2026-09-04", "2026-09-04 09:00", "upsert", 160),
    ],
];

/// Where the raw files are below the root, and below the local copy DuckDB reads.
pub const RAW: &str = "raw/events";

/// Writes each day's file to `place` (locally, or below its S3 prefix), and — for DuckDB — to the
/// local root of its project folder (on S3, a copy of the same bytes).
pub fn write(place: &Place) {
    for (day, events) in DAYS.iter().zip(EVENTS) {
        let relative = format!("{RAW}/dt={day}/part-00000.parquet");
        let batch = batch(events);
        place.put(&relative, &batch);
        if let Place::S3(s3) = place {
            lakewriter_datagen::write_parquet(&s3.lake.root().join(&relative), &batch).expect("a local copy");
        }
    }
}

fn batch(events: &[Event]) -> RecordBatch {
    let date = |s: &str| {
        let day = NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("a date");
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("the epoch");
        i32::try_from((day - epoch).num_days()).expect("days since 1970")
    };
    let micros = |s: &str| {
        let time = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").expect("a time");
        time.and_utc().timestamp_micros()
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("event_id", DataType::Int64, true),
        Field::new("region", DataType::Utf8, true),
        Field::new("event_date", DataType::Date32, true),
        Field::new("updated_at", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true),
        Field::new("op", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(10, 2), true),
    ]));
    let amounts = events.iter().map(|e| e.5 * 100).collect::<Decimal128Array>();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(events.iter().map(|e| e.0).collect::<Int64Array>()),
            Arc::new(events.iter().map(|e| Some(e.1)).collect::<StringArray>()),
            Arc::new(Date32Array::from_iter_values(events.iter().map(|e| date(e.2)))),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(events.iter().map(|e| micros(e.3))).with_timezone("UTC"),
            ),
            Arc::new(events.iter().map(|e| Some(e.4)).collect::<StringArray>()),
            Arc::new(amounts.with_precision_and_scale(10, 2).expect("DECIMAL(10,2)")),
        ],
    )
    .expect("a batch of events")
}
