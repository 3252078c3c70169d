//! Spark's `CAST` where DataFusion's gives another value (`Cast` in
//! `org.apache.spark.sql.catalyst.expressions`): a `DOUBLE` or `FLOAT` as text as Java's
//! `Double.toString` and `Float.toString` write it (`1.0E10`, `1.0E-7`, `Infinity`); a timestamp as
//! text `yyyy-MM-dd HH:mm:ss[.ffffff]` in the session time zone, and as its wall-clock time there
//! (a `TIMESTAMP_NTZ`), a date or wall-clock time as the instant it is there; a floating-point
//! number into a `DECIMAL` from its decimal text, rounded half up; a timestamp as a number of
//! seconds and a number of seconds as a timestamp. Where the value does not fit, ANSI mode fails
//! the query and the other modes give NULL.

use std::sync::Arc;

use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::BigInt;
use chrono::NaiveDateTime;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray,
    TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{DataFusionError, Result, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};

use super::arith::{Mode, spark_type_name};

/// Whether Spark's cast from `from` to `to` is [`SparkCast`]'s (else DataFusion's is Spark's, or
/// the corpus lists where it is not).
pub(crate) fn handles(from: &DataType, to: &DataType) -> bool {
    let float = matches!(from, DataType::Float32 | DataType::Float64);
    let timestamp = |t: &DataType| matches!(t, DataType::Timestamp(TimeUnit::Microsecond, _));
    let ours = match to {
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => {
            float || timestamp(from) || matches!(from, DataType::Decimal128(..))
        }
        DataType::Decimal128(..) => float || timestamp(from),
        DataType::Int64 | DataType::Int32 | DataType::Float64 => timestamp(from),
        // Numbers of seconds; dates and wall-clock times, in the zone (DataFusion's cast has no
        // time for a wall-clock time a daylight-saving change skips).
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => {
            matches!(from, DataType::Int32 | DataType::Int64 | DataType::Date32 | DataType::Timestamp(_, None))
        }
        // A timestamp's wall-clock time in its zone (DataFusion's cast keeps its UTC time).
        DataType::Timestamp(TimeUnit::Microsecond, None) => matches!(from, DataType::Timestamp(_, Some(_))),
        _ => false,
    };
    ours || super::numcast::handles(from, to) || super::textcast::handles(from, to)
}

/// Spark's cast of one value to `output`, in `mode` ([`Mode::Try`] for `try_cast`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SparkCast {
    pub output: DataType,
    pub mode: Mode,
    /// The cast as the query wrote it (`CAST(i AS TINYINT)`), for its errors.
    shown: Option<String>,
    signature: Signature,
}

impl SparkCast {
    #[must_use]
    pub fn new(output: DataType, mode: Mode) -> Self {
        Self { output, mode, shown: None, signature: Signature::any(1, Volatility::Immutable) }
    }

    /// This cast, its errors naming it as `shown`.
    #[must_use]
    pub fn shown(self, shown: String) -> Self {
        Self { shown: Some(shown), ..self }
    }

    /// A value the output cannot hold: an error in ANSI mode, else NULL.
    fn unfit(&self, value: &dyn std::fmt::Display, from: &DataType) -> Result<Option<()>> {
        match self.mode {
            Mode::Ansi => Err(self.overflow(value, from)),
            Mode::Legacy | Mode::Try => Ok(None),
        }
    }

    /// `input`, of dates or timestamps, cast to text (a timestamp's wall-clock time in its zone),
    /// to a `TIMESTAMP_NTZ` (the same) or to a `TIMESTAMP` (a date's midnight or a wall-clock time
    /// in the output's zone).
    fn times(&self, input: &ArrayRef) -> Result<ArrayRef> {
        let zone = super::types::zone_of(input.data_type())?;
        let local = |micros: i64| super::zones::local(micros, zone).map(|(t, _)| t);
        Ok(match &self.output {
            DataType::Utf8 => {
                let text = |micros: i64| local(micros).map_or(micros.to_string(), |t| naive_text(&t));
                let micros = input.as_primitive::<TimestampMicrosecondType>();
                Arc::new(micros.iter().map(|v| v.map(text)).collect::<StringArray>())
            }
            DataType::Timestamp(_, None) => {
                let wall = |micros: i64| local(micros).map(|t| t.and_utc().timestamp_micros());
                let micros = input.as_primitive::<TimestampMicrosecondType>();
                Arc::new(micros.iter().map(|v| v.and_then(wall)).collect::<TimestampMicrosecondArray>())
            }
            output => {
                let session = super::types::zone_of(output)?.expect("a zoned output");
                let instants = TimestampMicrosecondArray::from(super::zones::instants(input, session)?);
                Arc::new(instants.with_data_type(output.clone()))
            }
        })
    }

    fn overflow(&self, value: &dyn std::fmt::Display, from: &DataType) -> DataFusionError {
        DataFusionError::Execution(format!(
            "[CAST_OVERFLOW] the value {value} of the type {} cannot be cast to {} due to an overflow; use try_cast to tolerate it and return NULL instead, or `ansi = false`",
            spark_type_name(from),
            spark_type_name(&self.output)
        ))
    }
}

impl ScalarUDFImpl for SparkCast {
    fn name(&self) -> &'static str {
        "spark_cast"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.output.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        // An error names the cast, before its advice (`…due to an overflow in `CAST(i AS
        // TINYINT)`; use try_cast…`).
        self.cast(args).map_err(|e| match (&self.shown, e) {
            (Some(shown), DataFusionError::Execution(message)) => {
                DataFusionError::Execution(match message.split_once("; ") {
                    Some((what, advice)) => format!("{what} in `{shown}`; {advice}"),
                    None => format!("{message} in `{shown}`"),
                })
            }
            (_, e) => e,
        })
    }
}

impl SparkCast {
    fn cast(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let mut input = args.args[0].to_array(args.number_rows)?;
        // A timestamp in microseconds, as Spark holds one.
        if let DataType::Timestamp(unit, zone) = input.data_type()
            && *unit != TimeUnit::Microsecond
        {
            input =
                datafusion::arrow::compute::cast(&input, &DataType::Timestamp(TimeUnit::Microsecond, zone.clone()))?;
        }
        let from = input.data_type().clone();
        if super::numcast::handles(&from, &self.output) {
            let out = super::numcast::cast(&input, &self.output, self.mode, |v| self.overflow(v, &from))?;
            return Ok(ColumnarValue::Array(out));
        }
        if super::textcast::handles(&from, &self.output) {
            return Ok(ColumnarValue::Array(super::textcast::cast(&input, &self.output, self.mode)?));
        }
        let out: ArrayRef = match (&from, &self.output) {
            (DataType::Float64, DataType::Utf8) => Arc::new(
                input.as_primitive::<Float64Type>().iter().map(|v| v.map(java_double)).collect::<StringArray>(),
            ),
            (DataType::Float32, DataType::Utf8) => {
                Arc::new(input.as_primitive::<Float32Type>().iter().map(|v| v.map(java_float)).collect::<StringArray>())
            }
            (DataType::Timestamp(..), DataType::Utf8)
            | (DataType::Timestamp(_, Some(_)), DataType::Timestamp(_, None))
            | (DataType::Date32 | DataType::Timestamp(_, None), DataType::Timestamp(_, Some(_))) => {
                self.times(&input)?
            }
            (DataType::Float64 | DataType::Float32, DataType::Decimal128(..)) => self.decimals_of(&input)?,
            // A timestamp's seconds, exactly: its microseconds as a decimal of scale 6.
            (DataType::Timestamp(..), DataType::Decimal128(..)) => {
                let micros = input.as_primitive::<TimestampMicrosecondType>().iter().map(|m| m.map(i128::from));
                let seconds: ArrayRef = Arc::new(micros.collect::<Decimal128Array>().with_precision_and_scale(38, 6)?);
                super::numcast::cast(&seconds, &self.output, self.mode, |v| self.overflow(v, &from))?
            }
            // Java's `BigDecimal.toString` without ANSI mode (`1E-18`), its plain text in it.
            (DataType::Decimal128(_, scale), DataType::Utf8) => {
                let plain = self.mode != Mode::Legacy;
                let text = |v: i128| if plain { decimal_text(v, *scale) } else { java_decimal(v, *scale) };
                Arc::new(input.as_primitive::<Decimal128Type>().iter().map(|v| v.map(text)).collect::<StringArray>())
            }
            (DataType::Timestamp(_, _), DataType::Int64 | DataType::Int32 | DataType::Float64) => {
                self.seconds_of_timestamps(&input)?
            }
            (DataType::Int32 | DataType::Int64, DataType::Timestamp(_, _)) => self.timestamps_of_seconds(&input)?,
            (
                DataType::Float64 | DataType::Float32 | DataType::Timestamp(..) | DataType::Decimal128(..),
                DataType::Utf8View | DataType::LargeUtf8,
            ) => {
                let text = Self::new(DataType::Utf8, self.mode)
                    .invoke_with_args(ScalarFunctionArgs { args: vec![ColumnarValue::Array(input)], ..args })?;
                datafusion::arrow::compute::cast(&text.to_array(1)?, &self.output)?
            }
            (from, to) => return exec_err!("no Spark cast from {from} to {to} here"),
        };
        Ok(ColumnarValue::Array(out))
    }
    /// Floating-point numbers as the decimal `self.output` is, from their Java text, rounded half up.
    pub(crate) fn decimals_of(&self, input: &ArrayRef) -> Result<ArrayRef> {
        let DataType::Decimal128(precision, scale) = self.output else { unreachable!("a decimal output") };
        let from = input.data_type().clone();
        let doubles: Vec<Option<(f64, String)>> = match &from {
            DataType::Float32 => {
                input.as_primitive::<Float32Type>().iter().map(|v| v.map(|f| (f64::from(f), java_float(f)))).collect()
            }
            _ => input.as_primitive::<Float64Type>().iter().map(|v| v.map(|d| (d, java_double(d)))).collect(),
        };
        let limit = BigInt::from(10).pow(u32::from(precision));
        let mut out = Vec::with_capacity(doubles.len());
        for value in doubles {
            let Some((number, text)) = value else {
                out.push(None);
                continue;
            };
            // A float's NaN and infinities are NULL in every mode; a double's are an error in ANSI.
            if !number.is_finite() {
                if from == DataType::Float64 && self.mode == Mode::Ansi {
                    self.unfit(&text, &from)?;
                }
                out.push(None);
                continue;
            }
            let exact: BigDecimal =
                text.replace('E', "e").parse().map_err(|e| DataFusionError::Execution(format!("{e}")))?;
            let rounded = exact.with_scale_round(i64::from(scale), bigdecimal::RoundingMode::HalfUp);
            let (unscaled, _) = rounded.into_bigint_and_exponent();
            if unscaled.magnitude() >= limit.magnitude() {
                self.unfit(&text, &from)?;
                out.push(None);
                continue;
            }
            out.push(Some(i128::try_from(unscaled).expect("below 10^38")));
        }
        Ok(Arc::new(Decimal128Array::from(out).with_precision_and_scale(precision, scale)?))
    }

    /// A timestamp as seconds: whole seconds (rounded down) as an integer, or fractional ones as a
    /// `DOUBLE`.
    fn seconds_of_timestamps(&self, input: &ArrayRef) -> Result<ArrayRef> {
        let micros = input.as_primitive::<TimestampMicrosecondType>();
        Ok(match &self.output {
            DataType::Float64 => {
                // Spark's `micros / MICROS_PER_SECOND.toDouble`, rounded as the JVM rounds it.
                #[allow(clippy::cast_precision_loss, reason = "a double of the microseconds, as Spark's")]
                let seconds = |m: i64| m as f64 / 1e6;
                Arc::new(micros.iter().map(|v| v.map(seconds)).collect::<Float64Array>()) as ArrayRef
            }
            DataType::Int64 => {
                Arc::new(micros.iter().map(|v| v.map(|m| m.div_euclid(1_000_000))).collect::<Int64Array>())
            }
            _ => {
                let mut out = Vec::with_capacity(micros.len());
                for v in micros {
                    let Some(seconds) = v.map(|m| m.div_euclid(1_000_000)) else {
                        out.push(None);
                        continue;
                    };
                    if let Ok(s) = i32::try_from(seconds) {
                        out.push(Some(s));
                    } else {
                        self.unfit(&seconds, &DataType::Int64)?;
                        out.push(None);
                    }
                }
                Arc::new(out.into_iter().collect::<Int32Array>())
            }
        })
    }

    /// Seconds as a timestamp.
    fn timestamps_of_seconds(&self, input: &ArrayRef) -> Result<ArrayRef> {
        let seconds: Vec<Option<i64>> = match input.data_type() {
            DataType::Int32 => input.as_primitive::<Int32Type>().iter().map(|v| v.map(i64::from)).collect(),
            _ => input.as_primitive::<Int64Type>().iter().collect(),
        };
        let mut out = Vec::with_capacity(seconds.len());
        for s in seconds {
            out.push(match s.map(|s| (s, s.checked_mul(1_000_000))) {
                None => None,
                Some((_, Some(micros))) => Some(micros),
                Some((s, None)) => {
                    self.unfit(&s, input.data_type())?;
                    None
                }
            });
        }
        let DataType::Timestamp(_, zone) = &self.output else { unreachable!("a timestamp output") };
        Ok(Arc::new(TimestampMicrosecondArray::from(out).with_timezone_opt(zone.clone())))
    }
}

/// A wall-clock time as Spark's text: `yyyy-MM-dd HH:mm:ss`, and its fraction without trailing zeros.
fn naive_text(time: &NaiveDateTime) -> String {
    let base = time.format("%Y-%m-%d %H:%M:%S").to_string();
    let fraction = time.and_utc().timestamp_subsec_micros();
    if fraction == 0 {
        return base;
    }
    let digits = format!("{fraction:06}");
    format!("{base}.{}", digits.trim_end_matches('0'))
}

/// A decimal's plain text: its digits with `scale` of them after the point.
fn decimal_text(unscaled: i128, scale: i8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let Ok(scale) = usize::try_from(scale) else { return format!("{sign}{digits}") };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{fraction}")
}

/// Java's `BigDecimal.toString`: the plain text where the exponent of its first digit is -6 or
/// more, else `d.dddE±n`.
fn java_decimal(unscaled: i128, scale: i8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let exponent = i64::try_from(digits.len()).unwrap_or(0) - 1 - i64::from(scale);
    if scale <= 0 || exponent >= -6 {
        return decimal_text(unscaled, scale);
    }
    let sign = if unscaled < 0 { "-" } else { "" };
    let (first, rest) = digits.split_at(1);
    let rest = if rest.is_empty() { String::new() } else { format!(".{rest}") };
    format!("{sign}{first}{rest}E{exponent}")
}

/// Java's `Double.toString`: the shortest digits that tell the value, in plain notation from
/// 10^-3 up to 10^7 (with at least one fractional digit), else as `d.dddE±n`.
pub(crate) fn java_double(d: f64) -> String {
    // The least subnormal, which Java's algorithm writes with two digits.
    if d.abs().to_bits() == 1 {
        return format!("{}4.9E-324", if d < 0.0 { "-" } else { "" });
    }
    java_text(d, &format!("{d:e}"))
}

/// Java's `Float.toString` (as [`java_double`], with a float's shortest digits).
fn java_float(f: f32) -> String {
    java_text(f64::from(f), &format!("{f:e}"))
}

fn java_text(value: f64, scientific: &str) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let (mantissa, exponent) = scientific.split_once('e').expect("Rust's {:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an exponent");
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (1e-3..1e7).contains(&value.abs()) {
        let point = usize::try_from(exponent + 1).unwrap_or(0);
        let (int, fraction) = if exponent >= 0 {
            let padded = format!("{digits:0<point$}");
            let (i, f) = padded.split_at(point);
            (i.to_owned(), f.to_owned())
        } else {
            let zeros = "0".repeat(usize::try_from(-exponent - 1).unwrap_or(0));
            ("0".to_owned(), format!("{zeros}{digits}"))
        };
        let fraction = if fraction.is_empty() { "0".to_owned() } else { fraction };
        return format!("{sign}{int}.{fraction}");
    }
    let (first, rest) = digits.split_at(1);
    let rest = if rest.is_empty() { "0" } else { rest };
    format!("{sign}{first}.{rest}E{exponent}")
}

#[cfg(test)]
mod tests;
