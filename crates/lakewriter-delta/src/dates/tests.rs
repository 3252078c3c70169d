use std::sync::Arc;

use arrow::array::{
    Date32Array, Date64Array, Int64Array, ListArray, StructArray, TimestampMicrosecondArray, TimestampNanosecondArray,
    TimestampSecondArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{Field, Fields, Int32Type};

use super::*;

/// The day before 0001-01-01, in days since 1970-01-01.
const DAY_BEFORE: i32 = -719_163;

/// 0001-01-01 and 9999-12-31 in days since 1970-01-01, as chrono counts them.
#[test]
fn the_range_s_ends_are_the_calendar_s() {
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("a date");
    let days = |y, m, d| (chrono::NaiveDate::from_ymd_opt(y, m, d).expect("a date") - epoch).num_days();
    assert_eq!((days(1, 1, 1), days(9999, 12, 31)), (FIRST_DAY, LAST_DAY));
}

#[test]
fn the_ends_pass_and_a_day_beyond_either_is_named() {
    let ends = Date32Array::from(vec![Some(-719_162), None, Some(2_932_896)]);
    assert_eq!(outside(&ends, "d"), None);
    let before = Date32Array::from(vec![Some(0), Some(-719_163), Some(2_932_897)]);
    let found = outside(&before, "d").expect("outside");
    assert_eq!(
        found.message("d"),
        "column `d` holds 0000-12-31, outside the dates Delta stores (0001-01-01 to 9999-12-31)"
    );
    let after = Date32Array::from(vec![2_932_897]);
    assert_eq!(outside(&after, "d").expect("outside").value, "+10000-01-01");
    let millis = Date64Array::from(vec![(LAST_DAY + 1) * SECONDS_A_DAY * 1_000]);
    assert_eq!(outside(&millis, "d").expect("outside").value, "+10000-01-01");
}

#[test]
fn timestamps_are_checked_in_their_unit_and_shown_as_written() {
    let last = (LAST_DAY + 1) * SECONDS_A_DAY * 1_000_000 - 1;
    let ends = TimestampMicrosecondArray::from(vec![FIRST_DAY * SECONDS_A_DAY * 1_000_000, last]);
    assert_eq!(outside(&ends, "ts"), None);
    let beyond = TimestampMicrosecondArray::from(vec![last + 1]).with_timezone("UTC");
    assert_eq!(
        outside(&beyond, "ts").expect("outside").message("ts"),
        "column `ts` holds +10000-01-01 00:00:00 UTC, outside the timestamps Delta stores (0001-01-01 00:00:00 to \
         9999-12-31 23:59:59.999999 UTC)"
    );
    let before = TimestampSecondArray::from(vec![FIRST_DAY * SECONDS_A_DAY - 1]);
    let found = outside(&before, "ts").expect("outside");
    assert_eq!((found.value.as_str(), found.kind), ("0000-12-31 23:59:59", Kind::Timestamps));
    // Nanoseconds cannot leave the range: an i64 of them spans 1677 to 2262.
    assert_eq!(outside(&TimestampNanosecondArray::from(vec![i64::MIN, i64::MAX]), "ts"), None);
}

#[test]
fn a_nested_value_is_named_by_its_field_and_a_null_struct_hides_its_fields() {
    let fields = Fields::from(vec![Field::new("n", DataType::Int64, true), Field::new("at", DataType::Date32, true)]);
    let columns: Vec<ArrayRef> =
        vec![Arc::new(Int64Array::from(vec![1, 2])), Arc::new(Date32Array::from(vec![0, DAY_BEFORE]))];
    let visible = StructArray::new(fields.clone(), columns.clone(), None);
    assert_eq!(outside(&visible, "st").expect("outside").path, "st.at");
    let hidden = StructArray::new(fields, columns, Some(NullBuffer::from(vec![true, false])));
    assert_eq!(outside(&hidden, "st"), None, "the row whose struct is NULL holds no date");

    let days = Date32Array::from(vec![0, DAY_BEFORE, 1]);
    let item = Arc::new(Field::new("item", DataType::Date32, true));
    let list = ListArray::new(item, arrow::buffer::OffsetBuffer::from_lengths([1, 1, 1]), Arc::new(days), None);
    assert_eq!(outside(&list, "l").expect("outside").path, "l[]");
    assert_eq!(outside(&list.slice(2, 1), "l"), None, "a slice holds its own items only");
}

#[test]
fn a_dictionary_of_dates_is_checked_by_its_values() {
    let keys = arrow::array::PrimitiveArray::<Int32Type>::from(vec![0, 0]);
    let dictionary =
        arrow::array::DictionaryArray::new(keys, Arc::new(Date32Array::from(vec![DAY_BEFORE, 0])) as ArrayRef);
    assert_eq!(outside(&dictionary, "d").expect("outside").value, "0000-12-31");
}

#[test]
fn only_types_holding_dates_are_guarded() {
    let list = DataType::List(Arc::new(Field::new("item", DataType::Timestamp(TimeUnit::Second, None), true)));
    assert!(holds_dates(&list) && holds_dates(&DataType::Date32));
    assert!(
        !holds_dates(&DataType::Utf8)
            && !holds_dates(&DataType::List(Arc::new(Field::new("i", DataType::Int64, true))))
    );
}
