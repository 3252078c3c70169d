//! Spark's `trunc(date, unit)` and `date_trunc(unit, timestamp)` (`TruncDate`, `TruncTimestamp`,
//! `DateTimeUtils.truncDate`/`truncTimestamp`): a date to the first day of its year, quarter, month
//! or (Monday) week; a timestamp, in the session time zone, down to its year … microsecond, as a
//! `TIMESTAMP` (a `TIMESTAMP_NTZ` and a date too, as Spark casts them). Computed on microseconds
//! and days, so that years 1 to 9999 truncate without a nanosecond timestamp's overflow. A unit
//! Spark does not know gives NULL.

use std::sync::Arc;

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Date32Array, StringArray, TimestampMicrosecondArray};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

use super::types::{epoch_days, from_epoch_days};

/// `trunc` and `date_trunc`, in the session time zone `session`.
pub(crate) fn functions(session: &'static str) -> Vec<Arc<ScalarUDF>> {
    [Trunc::Date, Trunc::Timestamp]
        .into_iter()
        .map(|which| {
            Arc::new(ScalarUDF::new_from_impl(Truncation {
                which,
                session,
                signature: Signature::any(2, Volatility::Immutable),
            }))
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Trunc {
    /// `trunc(date, unit)`.
    Date,
    /// `date_trunc(unit, timestamp)`.
    Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Truncation {
    which: Trunc,
    session: &'static str,
    signature: Signature,
}

/// A unit of truncation, as Spark names them (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
}

impl Unit {
    fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_uppercase().as_str() {
            "YEAR" | "YYYY" | "YY" => Self::Year,
            "QUARTER" => Self::Quarter,
            "MONTH" | "MM" | "MON" => Self::Month,
            "WEEK" => Self::Week,
            "DAY" | "DD" => Self::Day,
            "HOUR" => Self::Hour,
            "MINUTE" => Self::Minute,
            "SECOND" => Self::Second,
            "MILLISECOND" => Self::Millisecond,
            "MICROSECOND" => Self::Microsecond,
            _ => return None,
        })
    }

    /// `date`'s first day of this unit (a unit of a day or less: the date itself).
    fn date(self, date: NaiveDate) -> Option<NaiveDate> {
        match self {
            Self::Year => date.with_ordinal(1),
            Self::Quarter => NaiveDate::from_ymd_opt(date.year(), (date.month0() / 3) * 3 + 1, 1),
            Self::Month => date.with_day(1),
            Self::Week => date.checked_sub_signed(Duration::days(i64::from(date.weekday().num_days_from_monday()))),
            _ => Some(date),
        }
    }

    /// `time` truncated to this unit.
    fn time(self, time: NaiveDateTime) -> Option<NaiveDateTime> {
        let micros = time.and_utc().timestamp_subsec_micros();
        let t = time.time();
        let kept = match self {
            Self::Year | Self::Quarter | Self::Month | Self::Week | Self::Day => {
                return self.date(time.date()).map(|d| d.and_time(NaiveTime::MIN));
            }
            Self::Hour => NaiveTime::from_hms_opt(t.hour(), 0, 0),
            Self::Minute => NaiveTime::from_hms_opt(t.hour(), t.minute(), 0),
            Self::Second => NaiveTime::from_hms_opt(t.hour(), t.minute(), t.second()),
            Self::Millisecond => NaiveTime::from_hms_micro_opt(t.hour(), t.minute(), t.second(), micros / 1000 * 1000),
            Self::Microsecond => Some(t),
        };
        kept.map(|k| time.date().and_time(k))
    }
}

impl ScalarUDFImpl for Truncation {
    fn name(&self) -> &'static str {
        match self.which {
            Trunc::Date => "trunc",
            Trunc::Timestamp => "date_trunc",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.which {
            Trunc::Date => DataType::Date32,
            Trunc::Timestamp => super::types::timestamp(self.session),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (value, unit) = match self.which {
            Trunc::Date => (&args.args[0], &args.args[1]),
            Trunc::Timestamp => (&args.args[1], &args.args[0]),
        };
        let rows = args.number_rows;
        let units = cast_with_options(&unit.to_array(rows)?, &DataType::Utf8, &CastOptions::default())?;
        let units: &StringArray = units.as_string::<i32>();
        let unit_at = |i: usize| units.is_valid(i).then(|| Unit::parse(units.value(i))).flatten();
        let out: ArrayRef = match self.which {
            Trunc::Date => {
                let dates = cast_with_options(&value.to_array(rows)?, &DataType::Date32, &CastOptions::default())?;
                let dates = dates.as_primitive::<datafusion::arrow::datatypes::Date32Type>();
                let truncated = (0..dates.len()).map(|i| {
                    let unit =
                        unit_at(i).filter(|u| matches!(u, Unit::Year | Unit::Quarter | Unit::Month | Unit::Week))?;
                    let date = dates.is_valid(i).then(|| from_epoch_days(dates.value(i))).flatten()?;
                    unit.date(date).map(epoch_days)
                });
                Arc::new(truncated.collect::<Date32Array>())
            }
            Trunc::Timestamp => {
                let zone = super::types::zone(self.session)?;
                // The argument's wall-clock times (a date's midnight, a `TIMESTAMP`'s in the
                // session time zone), truncated there: an instant keeps its offset where the
                // truncated time has it (`ZonedDateTime.truncatedTo`), another is resolved as
                // Spark casts a wall-clock time.
                let input = value.to_array(rows)?;
                let input = match input.data_type() {
                    DataType::Date32 => cast_with_options(
                        &input,
                        &DataType::Timestamp(TimeUnit::Microsecond, None),
                        &CastOptions::default(),
                    )?,
                    DataType::Timestamp(TimeUnit::Microsecond, _) => input,
                    DataType::Timestamp(_, from) => cast_with_options(
                        &input,
                        &DataType::Timestamp(TimeUnit::Microsecond, from.clone()),
                        &CastOptions::default(),
                    )?,
                    other => return exec_err!("date_trunc takes a timestamp, not {other}"),
                };
                let from = super::types::zone_of(input.data_type())?;
                let micros = input.as_primitive::<datafusion::arrow::datatypes::TimestampMicrosecondType>();
                let truncated = (0..micros.len()).map(|i| {
                    let unit = unit_at(i)?;
                    let (local, offset) = super::zones::local(micros.is_valid(i).then(|| micros.value(i))?, from)?;
                    let truncated = unit.time(local)?;
                    let instant = match from {
                        Some(_) => super::zones::instant_preferring(zone, &truncated, offset),
                        None => super::zones::instant(zone, &truncated),
                    };
                    Some(instant?.timestamp_micros())
                });
                Arc::new(truncated.collect::<TimestampMicrosecondArray>().with_timezone(self.session))
            }
        };
        Ok(ColumnarValue::Array(out))
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::Unit;

    #[test]
    fn units_truncate_as_spark_truncates() {
        let date = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(Unit::Quarter.date(date(2026, 8, 17)), Some(date(2026, 7, 1)));
        assert_eq!(Unit::Week.date(date(2026, 3, 29)), Some(date(2026, 3, 23)));
        assert_eq!(Unit::Month.date(date(1, 1, 1)), Some(date(1, 1, 1)));
        let t = date(2026, 3, 29).and_hms_micro_opt(7, 15, 30, 123_456).unwrap();
        assert_eq!(Unit::Millisecond.time(t), Some(date(2026, 3, 29).and_hms_micro_opt(7, 15, 30, 123_000).unwrap()));
        assert_eq!(Unit::Hour.time(t), Some(date(2026, 3, 29).and_hms_opt(7, 0, 0).unwrap()));
        assert_eq!(Unit::parse("mon"), Some(Unit::Month));
        assert_eq!(Unit::parse("decade"), None);
    }
}
