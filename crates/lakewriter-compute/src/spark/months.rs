//! Spark's `months_between(end, start[, round_off])` (`DateTimeUtils.monthsBetween`): whole
//! months where both days of the month are equal or both are the last of their month, else the
//! difference in months plus the difference in days and seconds over a 31-day month; rounded to
//! 8 digits unless `round_off` is false. Dates are their midnight; times are read in the session
//! time zone.

use std::sync::Arc;

use chrono::{Datelike, NaiveDate, NaiveTime, Timelike};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, TimestampMicrosecondType};
use datafusion::common::{Result, exec_err, plan_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// `months_between`, in the session time zone `session`.
pub(crate) fn functions(session: &'static str) -> Vec<Arc<ScalarUDF>> {
    vec![Arc::new(ScalarUDF::new_from_impl(MonthsBetween {
        session,
        signature: Signature::user_defined(Volatility::Immutable),
    }))]
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct MonthsBetween {
    session: &'static str,
    signature: Signature,
}

/// Java's `Math.round`: the nearest integer, a tie rounded up.
fn java_round(x: f64) -> f64 {
    let floor = x.floor();
    if x - floor >= 0.5 { floor + 1.0 } else { floor }
}

/// The last day of `date`'s month minus its day.
fn days_to_month_end(date: NaiveDate) -> i64 {
    let (year, month) = if date.month() == 12 { (date.year() + 1, 1) } else { (date.year(), date.month() + 1) };
    let next = NaiveDate::from_ymd_opt(year, month, 1).unwrap_or(NaiveDate::MAX);
    (next - date).num_days() - 1
}

/// A time as `months_between` reads it: its date, and the seconds since that day began.
type DayTime = (NaiveDate, i64);

/// `months_between(end, start, round_off)`.
fn months_between((end, end_seconds): DayTime, (start, start_seconds): DayTime, round_off: bool) -> f64 {
    // Years 0001–9999: every count below fits in 32 bits.
    let months = |d: NaiveDate| d.year() * 12 + d.month().cast_signed();
    let month_diff = f64::from(months(end) - months(start));
    if end.day() == start.day() || (days_to_month_end(end) == 0 && days_to_month_end(start) == 0) {
        return month_diff;
    }
    let seconds = |d: NaiveDate, s: i64| i64::from(d.day()) * 86_400 + s;
    let seconds = i32::try_from(seconds(end, end_seconds) - seconds(start, start_seconds))
        .expect("two times of a month's days are less than 2^31 seconds apart");
    let diff = month_diff + f64::from(seconds) / (31.0 * 86_400.0);
    if round_off { java_round(diff * 1e8) / 1e8 } else { diff }
}

/// The times of a date or timestamp column as [`DayTime`]s: a timestamp's date in its zone
/// and the seconds elapsed there since its day began (`DateTimeUtils.monthsBetween` counts
/// them on the instant: a day a daylight-saving change shortens has fewer); a date's midnight,
/// a wall-clock time's date and time of day.
fn day_times(array: &ArrayRef) -> Result<Vec<Option<DayTime>>> {
    let Some(zone) = super::types::zone_of(array.data_type())? else {
        let times = super::datetime::times(array)?;
        return Ok(times
            .into_iter()
            .map(|t| t.map(|t| (t.date(), i64::from(t.num_seconds_from_midnight()))))
            .collect());
    };
    let micros = array.as_primitive::<TimestampMicrosecondType>();
    let day_time = |micros: i64| {
        let (local, _) = super::zones::local(micros, Some(zone))?;
        let began = super::zones::instant(zone, &local.date().and_time(NaiveTime::MIN))?.timestamp_micros();
        Some((local.date(), (micros - began) / 1_000_000))
    };
    Ok(micros.iter().map(|m| m.and_then(day_time)).collect())
}

impl ScalarUDFImpl for MonthsBetween {
    fn name(&self) -> &'static str {
        "months_between"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        if !(2..=3).contains(&args.len()) {
            return plan_err!("months_between takes 2 or 3 arguments, not {}", args.len());
        }
        args.iter()
            .enumerate()
            .map(|(n, t)| match (n, t) {
                (0 | 1, DataType::Date32 | DataType::Null) => Ok(t.clone()),
                (0 | 1, DataType::Timestamp(..)) => Ok(super::types::timestamp(self.session)),
                (2, DataType::Boolean | DataType::Null) => Ok(DataType::Boolean),
                _ => plan_err!("months_between takes two dates or timestamps and a boolean, not {t} at {}", n + 1),
            })
            .collect()
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let time = |n: usize| -> Result<Vec<Option<DayTime>>> {
            match arrays[n].data_type() {
                DataType::Null => Ok(vec![None; args.number_rows]),
                _ => day_times(&arrays[n]),
            }
        };
        let (end, start) = (time(0)?, time(1)?);
        let round_off = match arrays.get(2) {
            None => vec![Some(true); args.number_rows],
            Some(flag) => cast(flag, &DataType::Boolean)?.as_boolean().iter().collect(),
        };
        if end.len() != start.len() || end.len() != round_off.len() {
            return exec_err!("months_between: arguments of different lengths");
        }
        let out: Float64Array =
            (0..end.len()).map(|i| Some(months_between(end[i]?, start[i]?, round_off[i]?))).collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDateTime;

    use super::{java_round, months_between};

    fn at(text: &str) -> (chrono::NaiveDate, i64) {
        let t = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").expect("a time");
        (t.date(), i64::from(chrono::Timelike::num_seconds_from_midnight(&t)))
    }

    #[test]
    fn months_between_counts_whole_months_at_equal_or_last_days_and_31_day_months_else() {
        let months = |end, start, round_off| months_between(at(end), at(start), round_off).to_bits();
        assert_eq!(months("2026-03-31 00:00:00", "2026-02-28 10:00:00", true), 1.0_f64.to_bits());
        // Spark's own examples.
        assert_eq!(months("1997-02-28 10:30:00", "1996-10-30 00:00:00", true), 3.949_596_77_f64.to_bits());
        assert_eq!(months("1997-02-28 10:30:00", "1996-10-30 00:00:00", false), 3.949_596_774_193_548_5_f64.to_bits());
        assert_eq!(java_round(-2.5).to_bits(), (-2.0_f64).to_bits());
        assert_eq!(java_round(2.5).to_bits(), 3.0_f64.to_bits());
    }
}
