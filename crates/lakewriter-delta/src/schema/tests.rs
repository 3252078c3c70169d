//! Stored types, the casts to them and the schema differences.

use super::*;
use arrow::datatypes::{IntervalUnit, Schema};

fn list(item: DataType, name: &str) -> DataType {
    DataType::List(Arc::new(Field::new(name, item, true)))
}

#[test]
fn names_every_difference_and_ignores_encodings() {
    let table = Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("v", DataType::Decimal128(22, 2), true),
    ]);
    let same = Schema::new(vec![
        Field::new("s", DataType::Utf8View, false),
        Field::new("k", DataType::UInt64, true),
        Field::new("v", DataType::Decimal128(22, 2), true),
    ]);
    assert!(differences(&table, &same).is_empty(), "an unsigned long is stored as a long");
    let other = Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("v", DataType::Utf8, true),
        Field::new("extra", DataType::Int32, true),
    ]);
    assert_eq!(
        differences(&table, &other),
        [
            "column `s` (string) is missing from the result",
            "column `v` is decimal(22,2) in the table but string in the result",
            "column `extra` (integer) is not in the table",
        ]
    );
}

#[test]
fn a_column_missing_where_another_of_its_type_is_new_reads_as_a_rename() {
    let table = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("n", DataType::Int32, true),
    ]);
    let result = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("full_name", DataType::Utf8View, true),
        Field::new("m", DataType::Int64, true),
    ]);
    assert_eq!(
        differences(&table, &result),
        [
            "column `name` (string) is missing from the result and `full_name` (string) in its place is not in \
             the table: it looks like a rename; a table's columns keep their names, so name it `name` again \
             (`… AS name`), or give the new name a new table (a rebuild, or a new target)",
            "column `n` (integer) is missing from the result",
            "column `m` (long) is not in the table",
        ]
    );
}

#[test]
fn types_are_named_as_delta_names_them() {
    let item = |t: DataType| Arc::new(Field::new("item", t, true));
    for (data_type, name) in [
        (DataType::Utf8View, "string"),
        (DataType::Int32, "integer"),
        (DataType::UInt32, "long"),
        (DataType::Int8, "byte"),
        (DataType::Float64, "double"),
        (DataType::Decimal128(10, 2), "decimal(10,2)"),
        (DataType::Timestamp(TimeUnit::Nanosecond, Some("+02:00".into())), "timestamp"),
        (DataType::Timestamp(TimeUnit::Microsecond, None), "timestamp_ntz"),
        (DataType::Date32, "date"),
        (DataType::List(item(DataType::Utf8View)), "array<string>"),
        (
            DataType::Struct(
                vec![Field::new("a", DataType::Int32, true), Field::new("b", DataType::LargeUtf8, true)].into(),
            ),
            "struct<a:integer,b:string>",
        ),
        (DataType::Time64(TimeUnit::Nanosecond), "Time64(ns)"),
    ] {
        assert_eq!(delta_type_name(&data_type), name, "{data_type}");
    }
}

#[test]
fn compares_as_delta_stores_recursively() {
    let us_utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let pairs = [
        (us_utc.clone(), DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))),
        (us_utc.clone(), DataType::Timestamp(TimeUnit::Second, Some("Europe/Paris".into()))),
        (DataType::Timestamp(TimeUnit::Microsecond, None), DataType::Timestamp(TimeUnit::Millisecond, None)),
        (list(DataType::Utf8, "element"), list(DataType::Utf8View, "item")),
        (list(DataType::Int64, "element"), DataType::LargeList(Arc::new(Field::new("item", DataType::Int64, false)))),
        (
            list(DataType::Int64, "element"),
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Int64, true)), 2),
        ),
        (DataType::Date32, DataType::Date64),
        (DataType::Int16, DataType::UInt8),
        (DataType::Decimal128(10, 2), DataType::Decimal256(10, 2)),
        (
            DataType::Struct(vec![Field::new("a", list(us_utc.clone(), "element"), true)].into()),
            DataType::Struct(
                vec![Field::new(
                    "a",
                    list(DataType::Timestamp(TimeUnit::Nanosecond, Some("+02:00".into())), "item"),
                    false,
                )]
                .into(),
            ),
        ),
    ];
    for (table, result) in &pairs {
        assert!(same_storage(table, result), "{table} vs {result}");
    }
    let changed = [
        (us_utc.clone(), DataType::Timestamp(TimeUnit::Microsecond, None)),
        (DataType::Int32, DataType::Int64),
        (list(DataType::Int64, "element"), list(DataType::Int32, "element")),
        (
            DataType::Struct(vec![Field::new("a", DataType::Int64, true)].into()),
            DataType::Struct(vec![Field::new("b", DataType::Int64, true)].into()),
        ),
        (DataType::Decimal128(10, 2), DataType::Decimal128(12, 2)),
    ];
    for (table, result) in &changed {
        assert!(!same_storage(table, result), "{table} vs {result} is a real change");
    }
}

#[test]
fn types_delta_cannot_store_name_a_fix() {
    for (data_type, fix) in [
        (DataType::Null, "CAST(NULL AS VARCHAR)"),
        (DataType::Time64(TimeUnit::Nanosecond), "CAST(x AS VARCHAR)"),
        (DataType::Duration(TimeUnit::Second), "CAST(x AS BIGINT)"),
        (DataType::Interval(IntervalUnit::MonthDayNano), "CAST(x AS VARCHAR)"),
        (DataType::Decimal256(50, 4), "CAST(x AS DECIMAL(38, 4))"),
        (list(DataType::Time32(TimeUnit::Second), "item"), "CAST(x AS VARCHAR)"),
    ] {
        let reason = storage_type(&data_type).expect_err("not storable");
        assert!(reason.contains(fix), "{data_type}: {reason}");
    }
}

#[test]
fn only_what_delta_rs_would_refuse_or_narrow_is_cast() {
    assert!(!needs_cast(&DataType::Utf8View));
    assert!(!needs_cast(&DataType::Timestamp(TimeUnit::Nanosecond, None)));
    assert!(!needs_cast(&list(DataType::Utf8View, "item")));
    assert!(needs_cast(&DataType::UInt8));
    assert!(needs_cast(&DataType::Timestamp(TimeUnit::Microsecond, Some("+02:00".into()))));
    assert!(needs_cast(&DataType::Struct(vec![Field::new("u", DataType::UInt32, true)].into())));
}
