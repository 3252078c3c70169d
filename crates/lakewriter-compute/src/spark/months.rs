//! Spark's `months_between(end, start[, round_off])` (`DateTimeUtils.monthsBetween`): whole
//! months where both days of the month are equal or both are the last of their month, else the
//! difference in months plus the difference in days and seconds over a 31-day month; rounded to
//! 8 digits unless `round_off` is false. Dates are their midnight; times are read in the session
//! time zone.

use std::sync::Arc;

use chrono::{Datelike, NaiveDateTime, Timelike};
use datafusion::arrow::array::{Array, AsArray, Float64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, exec_err, plan_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// `months_between`.
pub(crate) fn functions() -> Vec<Arc<ScalarUDF>> {
    vec![Arc::new(ScalarUDF::new_from_impl(MonthsBetween {
        signature: Signature::user_defined(Volatility::Immutable),
    }))]
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct MonthsBetween {
    signature: Signature,
}

/// Java's `Math.round`: the nearest integer, a tie rounded up.
fn java_round(x: f64) -> f64 {
    let floor = x.floor();
    if x - floor >= 0.5 { floor + 1.0 } else { floor }
}

/// The last day of `time`'s month minus its day.
fn days_to_month_end(time: NaiveDateTime) -> i64 {
    let (year, month) = if time.month() == 12 { (time.year() + 1, 1) } else { (time.year(), time.month() + 1) };
    let next = chrono::NaiveDate::from_ymd_opt(year, month, 1).unwrap_or(chrono::NaiveDate::MAX);
    (next - time.date()).num_days() - 1
}

/// `months_between(end, start, round_off)`.
fn months_between(end: NaiveDateTime, start: NaiveDateTime, round_off: bool) -> f64 {
    // Years 0001–9999: every count below fits in 32 bits.
    let months = |t: NaiveDateTime| t.year() * 12 + t.month().cast_signed();
    let month_diff = f64::from(months(end) - months(start));
    if end.day() == start.day() || (days_to_month_end(end) == 0 && days_to_month_end(start) == 0) {
        return month_diff;
    }
    let seconds = |t: NaiveDateTime| (t.day() * 86_400 + t.num_seconds_from_midnight()).cast_signed();
    let diff = month_diff + f64::from(seconds(end) - seconds(start)) / (31.0 * 86_400.0);
    if round_off { java_round(diff * 1e8) / 1e8 } else { diff }
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
                (0 | 1, DataType::Timestamp(..)) => Ok(super::types::timestamp()),
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
        let time = |n: usize| -> Result<Vec<Option<NaiveDateTime>>> {
            match arrays[n].data_type() {
                DataType::Null => Ok(vec![None; args.number_rows]),
                _ => super::datetime::times(&arrays[n]),
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

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").expect("a time")
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
