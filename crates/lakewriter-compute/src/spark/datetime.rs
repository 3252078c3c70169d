//! Spark's date and time functions that read a value's fields, in the session time zone:
//! `date_format` with Java `DateTimeFormatter` patterns, and the fields (`year`, `month`, `day`,
//! `dayofmonth`, `dayofweek`, `dayofyear`, `quarter`, `weekofyear`, `hour`, `minute`, `second`),
//! on the proleptic Gregorian calendar Spark 3 and later use.

use std::sync::Arc;

use chrono::{Datelike, Duration, NaiveDateTime, Timelike};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Int32Array, StringArray, TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes as arrow_schema;
use datafusion::arrow::datatypes::{DataType, Date32Type, TimeUnit, TimestampMicrosecondType};
use datafusion::common::{Result, ScalarValue, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// The functions of this module.
pub(crate) fn functions(session: &'static str) -> Vec<Arc<ScalarUDF>> {
    let fields = [
        "year",
        "month",
        "day",
        "dayofmonth",
        "dayofweek",
        "dayofyear",
        "quarter",
        "weekofyear",
        "hour",
        "minute",
        "second",
    ];
    let mut all: Vec<Arc<ScalarUDF>> =
        fields.into_iter().map(|name| Arc::new(ScalarUDF::new_from_impl(Field::new(name)))).collect();
    all.push(Arc::new(ScalarUDF::new_from_impl(DateFormat {
        session,
        signature: Signature::any(2, Volatility::Immutable),
    })));
    all.push(date_part());
    all
}

/// Spark's `date_part`, which `EXTRACT` is planned as too (see `super::coerce`).
pub(crate) fn date_part() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(DatePart { signature: Signature::any(2, Volatility::Immutable) }))
}

/// `date_part(field, value)` and `EXTRACT(field FROM value)`: the [`Field`] Spark's name (or one
/// of its synonyms) says; `SECOND` with its fraction, a `decimal(8,6)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct DatePart {
    signature: Signature,
}

/// The field `name` (Spark's `DatePart.parseExtractField`) as a [`Field`]'s name.
fn extract_field(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_uppercase().as_str() {
        "YEAR" | "Y" | "YEARS" | "YR" | "YRS" => "year",
        "YEAROFWEEK" => "yearofweek",
        "QUARTER" | "QTR" => "quarter",
        "MONTH" | "MON" | "MONS" | "MONTHS" => "month",
        "WEEK" | "W" | "WEEKS" => "weekofyear",
        "DAY" | "D" | "DAYS" => "day",
        "DAYOFWEEK" | "DOW" => "dayofweek",
        "DAYOFWEEK_ISO" | "DOW_ISO" => "dayofweek_iso",
        "DOY" => "dayofyear",
        "HOUR" | "H" | "HOURS" | "HR" | "HRS" => "hour",
        "MINUTE" | "M" | "MIN" | "MINS" | "MINUTES" => "minute",
        "SECOND" | "S" | "SEC" | "SECONDS" | "SECS" => "second_fraction",
        _ => return None,
    })
}

fn part_of(value: Option<&ScalarValue>) -> Result<&'static str> {
    if let Some(ScalarValue::Utf8(Some(f)) | ScalarValue::Utf8View(Some(f)) | ScalarValue::LargeUtf8(Some(f))) = value {
        extract_field(f).map_or_else(|| exec_err!("`{f}` is not a field Spark extracts"), Ok)
    } else {
        exec_err!("date_part's field must be a constant string")
    }
}

impl ScalarUDFImpl for DatePart {
    fn name(&self) -> &'static str {
        "date_part"
    }

    fn aliases(&self) -> &[String] {
        &[]
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        datafusion::common::internal_err!("return_field_from_args is used")
    }

    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> Result<arrow_schema::FieldRef> {
        let field = part_of(args.scalar_arguments.first().copied().flatten())?;
        let output = if field == "second_fraction" { DataType::Decimal128(8, 6) } else { DataType::Int32 };
        Ok(Arc::new(arrow_schema::Field::new(self.name(), output, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let constant = match &args.args[0] {
            ColumnarValue::Scalar(value) => Some(value),
            ColumnarValue::Array(_) => None,
        };
        let field = part_of(constant)?;
        let input = args.args[1].to_array(args.number_rows)?;
        let times = times(&input)?;
        let out: ArrayRef = if field == "second_fraction" {
            let micros = |t: &NaiveDateTime| i128::from(t.second()) * 1_000_000 + i128::from(t.nanosecond() / 1000);
            let values: Decimal128Array = times.iter().map(|t| t.as_ref().map(micros)).collect();
            Arc::new(values.with_precision_and_scale(8, 6)?)
        } else {
            let field = Field::new(field);
            Arc::new(times.iter().map(|t| t.as_ref().map(|t| field.of(t))).collect::<Int32Array>())
        };
        Ok(ColumnarValue::Array(out))
    }
}

/// The values of a date or timestamp column as wall-clock times: a timestamp's in the zone its
/// type names (the session time zone's, in a plan of the dialect), a date's midnight.
pub(crate) fn times(array: &ArrayRef) -> Result<Vec<Option<NaiveDateTime>>> {
    Ok(times_with_offsets(array)?.into_iter().map(|t| t.map(|(t, _)| t)).collect())
}

/// [`times`], each with its zone's offset from UTC then (zero where there is no zone).
fn times_with_offsets(array: &ArrayRef) -> Result<Vec<Option<(NaiveDateTime, Duration)>>> {
    Ok(match array.data_type() {
        DataType::Date32 => array
            .as_primitive::<Date32Type>()
            .iter()
            .map(|d| {
                d.and_then(super::types::from_epoch_days)
                    .map(|d| (d.and_time(chrono::NaiveTime::MIN), Duration::zero()))
            })
            .collect(),
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            let zone = super::types::zone_of(array.data_type())?;
            let micros = array.as_primitive::<TimestampMicrosecondType>();
            micros.iter().map(|m| m.and_then(|m| super::zones::local(m, zone))).collect()
        }
        other => return exec_err!("a date or a timestamp, not {other}"),
    })
}

/// A field of a date or timestamp.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Field {
    name: &'static str,
    signature: Signature,
}

impl Field {
    fn new(name: &'static str) -> Self {
        Self { name, signature: Signature::any(1, Volatility::Immutable) }
    }

    fn of(&self, t: &NaiveDateTime) -> i32 {
        let small = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
        match self.name {
            "year" => t.year(),
            "month" => small(t.month()),
            "day" | "dayofmonth" => small(t.day()),
            // Spark's dayofweek: 1 for Sunday to 7 for Saturday.
            "dayofweek" => small(t.weekday().num_days_from_sunday()) + 1,
            "dayofyear" => small(t.ordinal()),
            "quarter" => small((t.month() - 1) / 3 + 1),
            "weekofyear" => small(t.iso_week().week()),
            "yearofweek" => t.iso_week().year(),
            "dayofweek_iso" => small(t.weekday().number_from_monday()),
            "hour" => small(t.hour()),
            "minute" => small(t.minute()),
            _ => small(t.second()),
        }
    }
}

impl ScalarUDFImpl for Field {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int32)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let input = args.args[0].to_array(args.number_rows)?;
        let values: Int32Array = times(&input)?.iter().map(|t| t.as_ref().map(|t| self.of(t))).collect();
        Ok(ColumnarValue::Array(Arc::new(values)))
    }
}

/// `date_format(value, pattern)`: the value written with a Java `DateTimeFormatter` pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct DateFormat {
    /// The session time zone, a date's (its midnight there, as Spark casts it).
    session: &'static str,
    signature: Signature,
}

impl ScalarUDFImpl for DateFormat {
    fn name(&self) -> &'static str {
        "date_format"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let pattern = match &args.args[1] {
            ColumnarValue::Scalar(
                ScalarValue::Utf8(Some(p)) | ScalarValue::Utf8View(Some(p)) | ScalarValue::LargeUtf8(Some(p)),
            ) => p.clone(),
            _ => return exec_err!("date_format's pattern must be a constant string"),
        };
        let pattern = Pattern::parse(&pattern)?;
        let input = args.args[0].to_array(args.number_rows)?;
        let input = match input.data_type() {
            DataType::Date32 => {
                let midnights = super::zones::instants(&input, super::types::zone(self.session)?)?;
                Arc::new(TimestampMicrosecondArray::from(midnights).with_timezone(self.session))
            }
            _ => input,
        };
        let zoned = matches!(input.data_type(), DataType::Timestamp(_, Some(_)));
        let values: StringArray = times_with_offsets(&input)?
            .iter()
            .map(|t| t.as_ref().map(|(t, offset)| pattern.format(t, zoned.then_some(*offset))))
            .collect();
        Ok(ColumnarValue::Array(Arc::new(values)))
    }
}

/// A parsed `DateTimeFormatter` pattern: runs of one letter, and literal text.
#[derive(Debug)]
pub(crate) struct Pattern(Vec<Part>);

#[derive(Debug)]
enum Part {
    Letter(char, usize),
    Text(String),
}

impl Pattern {
    pub(crate) fn parse(pattern: &str) -> Result<Self> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' {
                // 'text', where '' is a quote.
                let mut text = String::new();
                i += 1;
                while i < chars.len() {
                    if chars[i] == '\'' {
                        if chars.get(i + 1) == Some(&'\'') {
                            text.push('\'');
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    text.push(chars[i]);
                    i += 1;
                }
                i += 1;
                parts.push(Part::Text(if text.is_empty() { "'".to_owned() } else { text }));
                continue;
            }
            if c.is_ascii_alphabetic() {
                if !"GyMdDEaHhmsSQXZ".contains(c) {
                    return exec_err!("the pattern letter `{c}` has no Spark-exact implementation here");
                }
                let run = chars[i..].iter().take_while(|&&x| x == c).count();
                if matches!(c, 'X' | 'Z') && run > 3 {
                    return exec_err!(
                        "the pattern `{}` has no Spark-exact implementation here",
                        c.to_string().repeat(run)
                    );
                }
                parts.push(Part::Letter(c, run));
                i += run;
                continue;
            }
            parts.push(Part::Text(c.to_string()));
            i += 1;
        }
        Ok(Self(parts))
    }

    /// `t` as the pattern writes it; `offset`: its zone's offset from UTC then, `None` for a
    /// wall-clock time of no zone.
    pub(crate) fn format(&self, t: &NaiveDateTime, offset: Option<Duration>) -> String {
        let mut out = String::new();
        for part in &self.0 {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Letter(c, n) => out.push_str(&letter(*c, *n, t, offset)),
            }
        }
        out
    }
}

fn padded(value: impl std::fmt::Display, width: usize) -> String {
    format!("{value:0>width$}")
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// An offset from UTC as `X` (`n` 1: `+01`, `+0530`; 2: `+0100`; 3: `+01:00`) and `Z`
/// (`+0100`) write it.
fn offset_text(offset: Duration, n: usize) -> String {
    let seconds = offset.num_seconds();
    let sign = if seconds < 0 { '-' } else { '+' };
    let (hours, minutes) = (seconds.abs() / 3600, seconds.abs() % 3600 / 60);
    match n {
        1 if minutes == 0 => format!("{sign}{hours:02}"),
        3 => format!("{sign}{hours:02}:{minutes:02}"),
        _ => format!("{sign}{hours:02}{minutes:02}"),
    }
}

fn letter(c: char, n: usize, t: &NaiveDateTime, offset: Option<Duration>) -> String {
    let month = MONTHS[t.month0() as usize];
    let day = DAYS[t.weekday().num_days_from_monday() as usize];
    match c {
        'G' => if n <= 3 { "AD" } else { "Anno Domini" }.to_owned(),
        'y' if n == 2 => padded(t.year().rem_euclid(100), 2),
        'y' if t.year() > 9999 && n >= 4 => format!("+{}", t.year()),
        'y' => padded(t.year(), n),
        'M' if n >= 4 => month.to_owned(),
        'M' if n == 3 => month[..3].to_owned(),
        'M' => padded(t.month(), n),
        'd' => padded(t.day(), n),
        'D' => padded(t.ordinal(), n),
        'E' if n >= 4 => day.to_owned(),
        'E' => day[..3].to_owned(),
        'a' => if t.hour() < 12 { "AM" } else { "PM" }.to_owned(),
        'H' => padded(t.hour(), n),
        'h' => padded(if t.hour().is_multiple_of(12) { 12 } else { t.hour() % 12 }, n),
        'm' => padded(t.minute(), n),
        's' => padded(t.second(), n),
        'S' => padded(t.nanosecond() / 1000, 6).chars().chain(std::iter::repeat('0')).take(n).collect(),
        'Q' => padded((t.month() - 1) / 3 + 1, n),
        // `X` writes a zero offset `Z`, and nothing for a time of no zone; `Z` writes `+0000`.
        'X' => match offset {
            Some(offset) if offset.is_zero() => "Z".to_owned(),
            Some(offset) => offset_text(offset, n),
            None => String::new(),
        },
        _ => offset_text(offset.unwrap_or_default(), 2),
    }
}

#[cfg(test)]
mod tests;
