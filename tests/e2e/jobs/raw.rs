//! The raw layer: a run depends only on the files it reads. A bad file in another day changes
//! nothing; a bad file in the day it reads fails it, naming the file, with nothing committed.
//! Folders that are not partitions change no column's type. Files of every Parquet codec are read.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::support::PartitionStatus;
use crate::support::{Lake, customers_with_orders, daily_orders, day};

const TABLE: &str = "analytics.daily_orders";
const TABLE_DIR: &str = "analytics/daily_orders";

/// A Parquet file of orders whose `amount` is a string: drift no reader can undo.
fn drifted_orders() -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("order_id", DataType::Int64, false),
        Field::new("customer_id", DataType::Int64, false),
        Field::new("amount", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(Int64Array::from(vec![7, 7])),
            Arc::new(StringArray::from(vec!["12.50", "n/a"])),
        ],
    )
    .expect("batch");
    lakewriter_datagen::parquet_bytes(&batch).expect("parquet")
}

/// A valid orders file for `dt`, cut in half.
fn truncated_orders(dt: &str) -> Vec<u8> {
    let bytes = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(day(dt))).expect("parquet");
    bytes[..bytes.len() / 2].to_vec()
}

/// What a run says is wrong with a bad raw file, given the URL of the dataset's newest file (which
/// sets its schema).
type Problem = fn(&str) -> String;

/// What a run says of a raw file that is not Parquet, or only the start of one.
const UNREADABLE: &str =
    "is not a readable Parquet file: Parquet error: Parquet error: Invalid Parquet file. Corrupt footer";

/// The URL of `file` below `raw/orders/`, as errors name it.
fn raw_url(lake: &Lake, file: &str) -> String {
    format!("file://{}/raw/orders/{file}", lake.root().display())
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn a_bad_file_fails_only_the_runs_that_read_it_and_names_it() {
    let kinds: [(&str, Vec<u8>, Problem); 4] = [
        ("corrupt", b"this is not parquet at all, just text".to_vec(), |_| UNREADABLE.to_owned()),
        ("truncated", truncated_orders("2026-09-02"), |_| UNREADABLE.to_owned()),
        ("empty", Vec::new(), |_| "is empty (0 bytes), not a Parquet file".to_owned()),
        ("drifted", drifted_orders(), |newest| {
            format!(
                "has column `amount` as Utf8View, which cannot be read as the dataset's Decimal128(12, 2) (as its \
                 newest readable file {newest} has it)"
            )
        }),
    ];
    for (kind, bytes, problem) in kinds {
        let lake = Lake::new("2026-09-01", "2026-09-03");
        lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-03"]).assert_code(0);
        write(&lake.root().join(format!("raw/orders/dt=2026-09-02/{kind}.parquet")), &bytes);

        // Other days, before and after it, run as if the file were not there.
        for dt in ["2026-09-01", "2026-09-03"] {
            let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", dt]).assert_code(0).json();
            assert_eq!(reports[0].status, "ok", "{kind}: {reports:?}");
            assert_eq!(reports[0].files_scanned, Some(1), "{kind}");
        }
        let before = lake.digest(TABLE, None);
        let commits = lake.commit_count(TABLE_DIR);

        // `status` shows the day as stale, its inputs unreadable; the others fresh.
        let status = lake.status(&["daily_orders"]);
        let labels: Vec<String> = status.partitions[..3].iter().map(PartitionStatus::label).collect();
        assert_eq!(labels, ["fresh", "stale:inputs_unreadable", "fresh"], "{kind}: {status:?}");

        // The day that holds it fails, naming the file and what is wrong with it.
        let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-02"]);
        run.assert_code(1);
        let error = run.json().0.remove(0).error.expect("an error");
        let problem = problem(&raw_url(&lake, "dt=2026-09-03/part-00000.parquet"));
        let file = raw_url(&lake, &format!("dt=2026-09-02/{kind}.parquet"));
        assert_eq!(error, format!("daily_orders dt=2026-09-02: raw file {file} of raw.orders {problem}"), "{kind}");
        assert_eq!(lake.commit_count(TABLE_DIR), commits, "{kind}: nothing committed");
        assert_eq!(lake.digest(TABLE, None), before, "{kind}");
    }
}

#[test]
fn an_unreadable_newest_file_leaves_the_schema_to_the_files_before_it() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    write(&lake.root().join("raw/orders/dt=2026-09-03/part-00000.parquet"), b"garbage");
    write(&lake.root().join("raw/orders/dt=2026-09-04/part-00000.parquet"), b"");
    let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0).json();
    assert_eq!(reports[0].status, "ok");
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-04"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    let file = raw_url(&lake, "dt=2026-09-04/part-00000.parquet");
    assert_eq!(
        error,
        format!("daily_orders dt=2026-09-04: raw file {file} of raw.orders is empty (0 bytes), not a Parquet file")
    );
}

#[test]
fn the_newest_partition_sets_the_layout_and_the_schema_and_errors_say_so() {
    // A nested folder in the newest day: older days' files lie outside the layout it sets. DataFusion
    // would skip them without a word (an empty partition); the run fails, naming one.
    let lake = Lake::new("2026-09-01", "2026-09-02");
    let valid = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(day("2026-09-03"))).expect("parquet");
    write(&lake.root().join("raw/orders/dt=2026-09-03/attempt=2/part-00000.parquet"), &valid);
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    let file = raw_url(&lake, "dt=2026-09-01/part-00000.parquet");
    assert_eq!(
        error,
        format!(
            "daily_orders dt=2026-09-01: raw file {file} of raw.orders lies outside the dataset's partition folders \
             `dt=…/attempt=…/` (as its newest partition has them), so it would not be read"
        )
    );

    // A type changed for good in the newest file: the older files are the ones that differ, and
    // the error names the file that set the type.
    let lake = Lake::new("2026-09-01", "2026-09-02");
    write(&lake.root().join("raw/orders/dt=2026-09-03/part-00000.parquet"), &drifted_orders());
    lake.set_project(&daily_orders("SELECT order_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt"));
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    let (file, newest) =
        (raw_url(&lake, "dt=2026-09-01/part-00000.parquet"), raw_url(&lake, "dt=2026-09-03/part-00000.parquet"));
    assert_eq!(
        error,
        format!(
            "daily_orders dt=2026-09-01: raw file {file} of raw.orders has column `amount` as Decimal128(12, 2), \
             which cannot be read as the dataset's Utf8View (as its newest readable file {newest} has it)"
        )
    );
}

#[test]
fn columns_added_later_read_as_null_in_older_days() {
    // Day 2's file has a column day 1's lacks; the dataset has it (from the newest file).
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let orders = lakewriter_datagen::orders_for(day("2026-09-02"));
    // Its columns are nullable where day 1's are not: nullability is not a type.
    let mut fields: Vec<Field> =
        orders.schema().fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect();
    fields.push(Field::new("channel", DataType::Utf8, true));
    let mut columns = orders.columns().to_vec();
    columns.push(Arc::new(StringArray::from(vec![Some("web"); orders.num_rows()])));
    let wider = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("batch");
    lakewriter_datagen::write_parquet(&lake.root().join("raw/orders/dt=2026-09-02/part-00000.parquet"), &wider)
        .expect("write");
    lake.set_project(&daily_orders("SELECT order_id, channel, $dt AS dt FROM raw.orders WHERE dt = $dt"));
    for (dt, rows) in [
        ("2026-09-01", lakewriter_datagen::orders_for(day("2026-09-01")).num_rows()),
        ("2026-09-02", orders.num_rows()),
    ] {
        let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", dt]).assert_code(0).json();
        assert_eq!((reports[0].status.as_str(), reports[0].rows_written), ("ok", Some(rows as u64)), "{reports:?}");
    }
    // The older day's rows have no channel: counting them per value tells NULL from "web".
    lake.set_project(&daily_orders(
        "SELECT order_id, channel, $dt AS dt FROM raw.orders WHERE dt = $dt AND channel IS NULL",
    ));
    let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0).json();
    assert_eq!(reports[0].rows_written, Some(lakewriter_datagen::orders_for(day("2026-09-01")).num_rows() as u64));
}

#[test]
fn folders_that_are_not_partitions_change_nothing() {
    let plain = Lake::new("2026-09-01", "2026-09-02");
    let messy = Lake::new("2026-09-01", "2026-09-02");
    let valid = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(day("2026-09-05"))).expect("parquet");
    for folder in ["dt=2026-13-45", "_tmp", ".staging", "dt=2026-09-01/_temporary", "notes"] {
        write(&messy.root().join("raw/orders").join(folder).join("part-00000.parquet"), &valid);
    }
    for lake in [&plain, &messy] {
        lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]).assert_code(0);
    }
    assert_eq!(messy.digest(TABLE, None).digest, plain.digest(TABLE, None).digest, "dt is still a DATE, same rows");

    // A query that reads across days would read the bad folder: it fails, naming it.
    messy.set_project(&daily_orders(
        "SELECT COUNT(*) AS orders, $dt AS dt FROM raw.orders WHERE dt BETWEEN $dt - INTERVAL '1 day' AND $dt",
    ));
    let run = messy.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-02"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    assert_eq!(
        error,
        "daily_orders dt=2026-09-02: raw.orders: the folder `dt=2026-13-45` is not a partition (dt holds dates), and \
         this query lists every dt folder (its filter does not pin one dt); move the folder out of the dataset, or \
         read one dt (`dt = $dt`)"
    );
}

#[test]
fn raw_files_of_every_parquet_codec_are_read() {
    // Other tools compress what they write: Spark snappy, polars zstd, others gzip, LZ4 or brotli.
    let codecs = [
        Compression::SNAPPY,
        Compression::ZSTD(ZstdLevel::default()),
        Compression::GZIP(GzipLevel::default()),
        Compression::LZ4_RAW,
        Compression::LZ4,
        Compression::BROTLI(BrotliLevel::default()),
        Compression::UNCOMPRESSED,
    ];
    let lake = Lake::new("2026-09-01", "2026-09-07");
    for (i, codec) in codecs.into_iter().enumerate() {
        let dt = format!("2026-09-{:02}", i + 1);
        let orders = lakewriter_datagen::orders_for(day(&dt));
        let properties = WriterProperties::builder().set_compression(codec).build();
        let mut bytes = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut bytes, orders.schema(), Some(properties)).expect("writer");
        writer.write(&orders).expect("write");
        writer.close().expect("close");
        write(&lake.root().join(format!("raw/orders/dt={dt}/part-00000.parquet")), &bytes);
    }
    let (reports, _) = lake
        .cli(&["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-07"])
        .assert_code(0)
        .json();
    assert_eq!(reports.len(), codecs.len());
    for report in reports {
        let dt = report.partition.trim_start_matches("dt=");
        assert_eq!(
            (report.status.as_str(), report.rows_written),
            ("ok", Some(customers_with_orders(dt))),
            "{report:?}"
        );
    }
}
