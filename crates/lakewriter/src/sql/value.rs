//! A static partition value (`PARTITION (column = value)`) assigned to its column as Spark's ANSI
//! store assignment does: a number into any number (refused where it does not fit), a string
//! into a number, a boolean or a timestamp where it reads as one, a strict `'YYYY-MM-DD'` into a
//! date, a date into a timestamp, anything into a string. Every other pair is refused — a
//! number into a date above all, which a cast would take for a count of days. An empty string
//! is NULL, as the Delta protocol reads an empty partition value.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use lakewriter_delta::schema::delta_type_name as delta_type;
use lakewriter_delta::values::is_text;

fn text(value: &ScalarValue) -> Option<&str> {
    match value {
        ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => Some(s),
        _ => None,
    }
}

/// `value` as a value of a column of type `to`, or why it is not one (in Delta's type names).
pub(super) fn assigned(value: &ScalarValue, to: &DataType) -> Result<ScalarValue, String> {
    use DataType::{Boolean, Date32, Timestamp};
    let from = value.data_type();
    let assignable = value.is_null()
        || lakewriter_delta::schema::same_storage(to, &from)
        || is_text(to)
        || (from.is_numeric() && to.is_numeric())
        || (is_text(&from) && (to.is_numeric() || matches!(to, Boolean | Timestamp(..))))
        || (matches!(from, Date32) && matches!(to, Timestamp(..)));
    let (from_name, to_name) = (a(&delta_type(&from)), a(&delta_type(to)));
    if let (Some(s), Date32) = (text(value), to) {
        lakewriter_core::parse_date(s).map_err(|_| format!("'{s}' is not a date: write it as 'YYYY-MM-DD'"))?;
    } else if !assignable {
        let hint = if matches!(to, Date32) { ": write the date as 'YYYY-MM-DD'" } else { "" };
        return Err(format!("{from_name} is not assignable to {to_name}, as in Spark{hint}"));
    }
    let assigned = value.cast_to(to).map_err(|_| match text(value) {
        Some(s) => format!("'{s}' does not read as {to_name}"),
        None => format!("{value} is out of the range of {to_name}"),
    })?;
    Ok(empty_as_null(assigned))
}

/// `name` with its indefinite article: "a date", "an integer".
pub(super) fn a(name: &str) -> String {
    if name.starts_with(['a', 'e', 'i', 'o', 'u']) { format!("an {name}") } else { format!("a {name}") }
}

/// `value`, or NULL of its type where it is an empty string.
pub(super) fn empty_as_null(value: ScalarValue) -> ScalarValue {
    match text(&value) {
        Some("") => ScalarValue::try_from(&value.data_type()).unwrap_or(value),
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::TimeUnit;

    fn string(s: &str) -> ScalarValue {
        ScalarValue::Utf8(Some(s.to_owned()))
    }

    #[test]
    fn values_of_another_type_are_refused_as_spark_refuses_them() {
        let date = DataType::Date32;
        let cases = [
            (
                ScalarValue::Int64(Some(20_260_101)),
                &date,
                "a long is not assignable to a date, as in Spark: write the date as 'YYYY-MM-DD'",
            ),
            (string("2026-02-30"), &date, "'2026-02-30' is not a date: write it as 'YYYY-MM-DD'"),
            (string("2026-01-01 10:00:00"), &date, "'2026-01-01 10:00:00' is not a date: write it as 'YYYY-MM-DD'"),
            (string("yesterday"), &date, "'yesterday' is not a date: write it as 'YYYY-MM-DD'"),
            (string("ten"), &DataType::Int32, "'ten' does not read as an integer"),
            (ScalarValue::Int64(Some(3_000_000_000)), &DataType::Int32, "3000000000 is out of the range of an integer"),
            (
                ScalarValue::Boolean(Some(true)),
                &DataType::Int32,
                "a boolean is not assignable to an integer, as in Spark",
            ),
        ];
        for (value, to, expected) in cases {
            assert_eq!(assigned(&value, to), Err(expected.to_owned()), "{value:?} into {to}");
        }
    }

    #[test]
    fn values_spark_assigns_are_cast_to_the_column() {
        let micros = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let cases = [
            (string("2026-01-01"), DataType::Date32, ScalarValue::Date32(Some(20_454))),
            (
                ScalarValue::Date32(Some(20_454)),
                micros.clone(),
                ScalarValue::TimestampMicrosecond(Some(20_454 * 86_400_000_000), Some("UTC".into())),
            ),
            (string("7"), DataType::Int32, ScalarValue::Int32(Some(7))),
            (ScalarValue::Int64(Some(7)), DataType::Utf8, string("7")),
            (ScalarValue::Int64(Some(7)), DataType::Decimal128(10, 2), ScalarValue::Decimal128(Some(700), 10, 2)),
            (
                ScalarValue::Decimal128(Some(1005), 4, 3),
                DataType::Decimal128(10, 2),
                ScalarValue::Decimal128(Some(101), 10, 2),
            ),
            (string(""), DataType::Utf8, ScalarValue::Utf8(None)),
            (ScalarValue::Int64(None), DataType::Date32, ScalarValue::Date32(None)),
        ];
        for (value, to, expected) in cases {
            assert_eq!(assigned(&value, &to), Ok(expected), "{value:?} into {to}");
        }
    }
}
