//! Spark's functions between dates and times and numbers of seconds, in the session time zone:
//! `unix_timestamp(t)` (rounded toward zero, as Spark's `ToTimestamp` divides), `unix_seconds`,
//! `unix_millis` and `unix_date` (rounded down), `from_unixtime(s[, pattern])` (Java
//! `DateTimeFormatter` patterns, `yyyy-MM-dd HH:mm:ss` without one), `timestamp_seconds`,
//! `timestamp_millis` and `timestamp_micros` of an integer, and `make_date(y, m, d)`, which fails
//! on a day that does not exist in ANSI mode and is NULL without it. `unix_timestamp` of text is
//! refused: it parses with a pattern.

use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Date32Array, Int64Array, StringArray, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

use super::arith::Mode;

/// The functions of this module, in `mode` and the session time zone `session`.
pub(crate) fn functions(mode: Mode, session: &'static str) -> Vec<Arc<ScalarUDF>> {
    [
        ("unix_timestamp", Kind::TruncatedSeconds),
        ("unix_seconds", Kind::Seconds),
        ("unix_millis", Kind::Millis),
        ("unix_date", Kind::Days),
        ("from_unixtime", Kind::FromSeconds),
        ("timestamp_seconds", Kind::Timestamp(1_000_000)),
        ("timestamp_millis", Kind::Timestamp(1_000)),
        ("timestamp_micros", Kind::Timestamp(1)),
        ("make_date", Kind::MakeDate),
    ]
    .into_iter()
    .map(|(name, kind)| {
        let signature = Signature::variadic_any(Volatility::Immutable);
        Arc::new(ScalarUDF::new_from_impl(Epoch { name, kind, mode, session, signature }))
    })
    .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// Whole seconds, rounded toward zero.
    TruncatedSeconds,
    /// Whole seconds, rounded down.
    Seconds,
    Millis,
    Days,
    FromSeconds,
    /// A number of units (this many microseconds each) as a timestamp.
    Timestamp(i64),
    MakeDate,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Epoch {
    name: &'static str,
    kind: Kind,
    mode: Mode,
    session: &'static str,
    signature: Signature,
}

impl ScalarUDFImpl for Epoch {
    fn name(&self) -> &'static str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        let arity = match self.kind {
            Kind::FromSeconds => 1..=2,
            Kind::MakeDate => 3..=3,
            _ => 1..=1,
        };
        if !arity.contains(&args.len()) {
            // `unix_timestamp(text, pattern)` parses text: not Spark-exact here.
            return Err(super::refused::refusal(self.name));
        }
        let time = matches!(args[0], DataType::Timestamp(..) | DataType::Date32 | DataType::Null);
        let number = args[0].is_integer() || args[0] == DataType::Null;
        Ok(match self.kind {
            Kind::TruncatedSeconds | Kind::Seconds | Kind::Millis if time => DataType::Int64,
            Kind::Days if matches!(args[0], DataType::Date32 | DataType::Null) => DataType::Int32,
            Kind::FromSeconds if number => DataType::Utf8,
            Kind::Timestamp(_) if number => super::types::timestamp(self.session),
            Kind::MakeDate if args.iter().all(|t| t.is_integer() || *t == DataType::Null) => DataType::Date32,
            // Any other argument (text to parse, a fraction of a second): not Spark-exact here.
            _ => return Err(super::refused::refusal(self.name)),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let first = args.args[0].to_array(rows)?;
        let session = super::types::zone(self.session)?;
        let microseconds = |array: &ArrayRef| super::zones::instants(array, session);
        let out: ArrayRef = match self.kind {
            Kind::TruncatedSeconds => {
                Arc::new(microseconds(&first)?.into_iter().map(|m| m.map(|m| m / 1_000_000)).collect::<Int64Array>())
            }
            Kind::Seconds | Kind::Millis => {
                let micros = microseconds(&first)?;
                let unit = if self.kind == Kind::Seconds { 1_000_000 } else { 1_000 };
                Arc::new(micros.into_iter().map(|m| m.map(|m| m.div_euclid(unit))).collect::<Int64Array>())
            }
            Kind::Days => cast_with_options(&first, &DataType::Int32, &CastOptions::default())?,
            Kind::FromSeconds => {
                let pattern = match args.args.get(1) {
                    Some(ColumnarValue::Scalar(ScalarValue::Utf8(Some(p)) | ScalarValue::Utf8View(Some(p)))) => {
                        p.clone()
                    }
                    Some(_) => return exec_err!("from_unixtime's pattern must be a constant string"),
                    None => "yyyy-MM-dd HH:mm:ss".to_owned(),
                };
                let pattern = super::datetime::Pattern::parse(&pattern)?;
                let seconds = longs(&first)?;
                let text = |s: i64| {
                    let (time, offset) = super::zones::local(s.checked_mul(1_000_000)?, Some(session))?;
                    Some(pattern.format(&time, Some(offset)))
                };
                Arc::new(seconds.iter().map(|s| s.and_then(text)).collect::<StringArray>())
            }
            Kind::Timestamp(unit) => {
                let mut out = Vec::with_capacity(rows);
                for n in &longs(&first)? {
                    out.push(match n.map(|n| n.checked_mul(unit)) {
                        Some(None) if self.mode == Mode::Ansi => {
                            return Err(DataFusionError::Execution(format!(
                                "[ARITHMETIC_OVERFLOW] {}: the value does not fit a timestamp; `ansi = false` makes it NULL",
                                self.name
                            )));
                        }
                        other => other.flatten(),
                    });
                }
                Arc::new(TimestampMicrosecondArray::from(out).with_timezone(self.session))
            }
            Kind::MakeDate => self.make_date(&args.args, rows)?,
        };
        Ok(ColumnarValue::Array(out))
    }
}

impl Epoch {
    fn make_date(&self, args: &[ColumnarValue], rows: usize) -> Result<ArrayRef> {
        let parts = args.iter().map(|a| longs(&a.to_array(rows)?)).collect::<Result<Vec<_>>>()?;
        let mut out = Vec::with_capacity(rows);
        for i in 0..rows {
            if parts.iter().any(|p| p.is_null(i)) {
                out.push(None);
                continue;
            }
            let [y, m, d] = [0, 1, 2].map(|p| parts[p].value(i));
            let date = i32::try_from(y)
                .ok()
                .and_then(|y| NaiveDate::from_ymd_opt(y, u32::try_from(m).ok()?, u32::try_from(d).ok()?));
            match date {
                Some(date) => out.push(Some(super::types::epoch_days(date))),
                None if self.mode == Mode::Ansi => {
                    return Err(DataFusionError::Execution(format!(
                        "[DATETIME_FIELD_OUT_OF_BOUNDS] make_date({y}, {m}, {d}) is not a date; `ansi = false` makes it NULL"
                    )));
                }
                None => out.push(None),
            }
        }
        Ok(Arc::new(Date32Array::from(out)))
    }
}

fn longs(array: &ArrayRef) -> Result<Int64Array> {
    Ok(cast_with_options(array, &DataType::Int64, &CastOptions::default())?.as_primitive::<Int64Type>().clone())
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_count_days_from_the_epoch() {
        assert_eq!(super::super::types::epoch_days(chrono::NaiveDate::from_ymd_opt(2026, 3, 29).unwrap()), 20_541);
        assert_eq!(super::super::types::epoch_days(chrono::NaiveDate::from_ymd_opt(1969, 12, 31).unwrap()), -1);
    }
}
