//! The range of one column each live data file holds, from the minimum and maximum its `add`
//! statistics record: what lets a merge into a table clustered by that column read and rewrite
//! only the files whose range holds a key of its batch, and what `maintain` reads to find files
//! whose ranges overlap.
//!
//! A recorded bound must be a true bound for that to be safe. It is, for the types read here:
//! integers and dates are recorded exactly, and a string's statistics, where Parquet truncates
//! them (past 64 bytes), keep a prefix as the minimum and a greater string as the maximum. Other
//! types (timestamps, whose maximum is recorded truncated to milliseconds; floats; decimals) give
//! no ranges.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use serde_json::Value;

/// The closed range `[min, max]` of a column in one file.
pub type Range = (ScalarValue, ScalarValue);

/// The order of two bounds or keys of one column (values of one type, never incomparable).
#[must_use]
pub fn order(a: &ScalarValue, b: &ScalarValue) -> std::cmp::Ordering {
    a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal)
}

/// The order clustered files are written in: by the `cluster_by` columns, nulls last.
pub(crate) fn sort_order(cluster_by: &[String]) -> Vec<datafusion::logical_expr::SortExpr> {
    let column = |c: &String| datafusion::prelude::Expr::Column(datafusion::common::Column::new_unqualified(c));
    cluster_by.iter().map(|c| column(c).sort(true, false)).collect()
}

/// The range of `column` (of `data_type`) that a file's statistics (`stats`, their JSON) record.
pub(crate) fn range(stats: &str, column: &str, data_type: &DataType) -> Option<Range> {
    let stats: Value = serde_json::from_str(stats).ok()?;
    let min = bound(stats.get("minValues")?.get(column)?, data_type)?;
    let max = bound(stats.get("maxValues")?.get(column)?, data_type)?;
    Some((min, max))
}

/// A recorded bound as a value of `data_type`, for the types whose bounds are true bounds.
pub(crate) fn bound(value: &Value, data_type: &DataType) -> Option<ScalarValue> {
    let scalar = match data_type {
        t if t.is_integer() => ScalarValue::Int64(Some(value.as_i64()?)),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            ScalarValue::Utf8(Some(value.as_str()?.to_owned()))
        }
        DataType::Date32 => return ScalarValue::try_from_string(value.as_str()?.to_owned(), data_type).ok(),
        _ => return None,
    };
    scalar.cast_to(data_type).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_range_is_read_from_its_statistics_for_the_types_whose_bounds_are_exact() {
        let stats = r#"{"numRecords":3,"minValues":{"id":7,"name":"ann","dt":"2026-09-30","at":"2026-09-30T10:00:00.123Z","x":0.5},
            "maxValues":{"id":42,"name":"zoe","dt":"2026-10-01","at":"2026-09-30T11:00:00.999Z","x":2.5},"nullCount":{"id":0}}"#;
        let range = |column: &str, data_type: DataType| super::range(stats, column, &data_type);
        assert_eq!(range("id", DataType::Int64), Some((ScalarValue::Int64(Some(7)), ScalarValue::Int64(Some(42)))));
        assert_eq!(range("id", DataType::Int32), Some((ScalarValue::Int32(Some(7)), ScalarValue::Int32(Some(42)))));
        assert_eq!(
            range("name", DataType::Utf8),
            Some((ScalarValue::Utf8(Some("ann".into())), ScalarValue::Utf8(Some("zoe".into()))))
        );
        assert_eq!(
            range("dt", DataType::Date32),
            Some((ScalarValue::Date32(Some(20_726)), ScalarValue::Date32(Some(20_727))))
        );
        // A timestamp's maximum is recorded truncated, a float's bounds are not read: no range.
        let micros = DataType::Timestamp(datafusion::arrow::datatypes::TimeUnit::Microsecond, None);
        assert_eq!(range("at", micros), None);
        assert_eq!(range("x", DataType::Float64), None);
        // A column the statistics skip has no range.
        assert_eq!(range("missing", DataType::Int64), None);
        assert_eq!(super::range("{\"numRecords\":0}", "id", &DataType::Int64), None);
    }
}
