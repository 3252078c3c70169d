//! Spark's `CAST` of text to an integral type, a `DATE` or a `TIMESTAMP` (`UTF8String.toLong`,
//! `SparkDateTimeUtils.stringToDate` and `stringToTimestamp`): the text is read with whitespace
//! and control characters trimmed from both ends; `12.7` is 12 outside ANSI mode; a date is
//! `[+-]yyyy[y…]`, `yyyy-[m]m` or `yyyy-[m]m-[d]d` followed by nothing or by ` ` or `T` and
//! anything (`try_cast` reads integers as ANSI mode does); a timestamp is such a date, then `[h]h:[m]m[:[s]s[.fraction]]` and a zone (`Z`,
//! `±hh[:mm]`, `UTC±…`, a region such as `Europe/Paris`; none is the session time zone, UTC).
//! Text that does not read as the type fails the query in ANSI mode (`CAST_INVALID_INPUT`) and is
//! NULL in the other modes and in `try_cast`.

use std::sync::Arc;

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Date32Array, Decimal128Array, Int64Array, StringArray, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::{DataFusionError, Result};

use super::arith::{Mode, spark_type_name};

/// Whether the cast from `from` to `to` is this module's.
pub(crate) fn handles(from: &DataType, to: &DataType) -> bool {
    let text = matches!(from, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8);
    text && (to.is_integer()
        || matches!(to, DataType::Date32 | DataType::Timestamp(TimeUnit::Microsecond, _) | DataType::Decimal128(..)))
}

/// `input`, text, cast to `to` in `mode`.
pub(crate) fn cast(input: &ArrayRef, to: &DataType, mode: Mode) -> Result<ArrayRef> {
    let text = cast_with_options(input, &DataType::Utf8, &CastOptions::default())?;
    let text: &StringArray = text.as_string::<i32>();
    if let DataType::Decimal128(precision, scale) = to {
        return decimals(text, (*precision, *scale), mode);
    }
    let session = super::types::zone_of(to)?;
    let read = |s: &str| -> Option<i64> {
        let s = s.trim_matches(|c: char| c.is_whitespace() || c.is_control());
        match to {
            DataType::Date32 => date(s).map(|(d, _)| i64::from(super::types::epoch_days(d))),
            DataType::Timestamp(..) => timestamp(s, session),
            _ => integral(s, mode == Mode::Legacy),
        }
    };
    let mut values = Vec::with_capacity(text.len());
    for value in text {
        let Some(s) = value else {
            values.push(None);
            continue;
        };
        let read = read(s).filter(|&v| fits(v, to));
        if read.is_none() && mode == Mode::Ansi {
            return Err(invalid(s, to));
        }
        values.push(read);
    }
    Ok(match to {
        DataType::Date32 => {
            Arc::new(values.into_iter().map(|v| v.and_then(|d| i32::try_from(d).ok())).collect::<Date32Array>())
        }
        DataType::Timestamp(_, zone) => {
            Arc::new(TimestampMicrosecondArray::from(values).with_timezone_opt(zone.clone()))
        }
        _ => cast_with_options(&(Arc::new(Int64Array::from(values)) as ArrayRef), to, &CastOptions::default())?,
    })
}

/// Text as a `DECIMAL(precision, scale)`: Java's `BigDecimal` of the trimmed text (an exponent
/// allowed, `1e2`), rounded half up.
fn decimals(text: &StringArray, (precision, scale): (u8, i8), mode: Mode) -> Result<ArrayRef> {
    let limit = bigdecimal::num_bigint::BigInt::from(10).pow(u32::from(precision));
    let mut out = Vec::with_capacity(text.len());
    for value in text {
        let Some(s) = value else {
            out.push(None);
            continue;
        };
        let trimmed = s.trim_matches(|c: char| c.is_whitespace() || c.is_control());
        let read = trimmed.parse::<bigdecimal::BigDecimal>().ok().and_then(|d| {
            let (digits, _) =
                d.with_scale_round(i64::from(scale), bigdecimal::RoundingMode::HalfUp).into_bigint_and_exponent();
            (digits.magnitude() < limit.magnitude()).then(|| i128::try_from(digits).ok()).flatten()
        });
        if read.is_none() && mode == Mode::Ansi {
            return Err(invalid(s, &DataType::Decimal128(precision, scale)));
        }
        out.push(read);
    }
    Ok(Arc::new(Decimal128Array::from(out).with_precision_and_scale(precision, scale)?))
}

fn invalid(s: &str, to: &DataType) -> DataFusionError {
    DataFusionError::Execution(format!(
        "[CAST_INVALID_INPUT] the value '{s}' of the type \"STRING\" cannot be cast to \"{}\" because it is malformed; use try_cast to tolerate malformed input and return NULL instead, or `ansi = false`",
        spark_type_name(to).to_uppercase()
    ))
}

fn fits(value: i64, to: &DataType) -> bool {
    match to {
        DataType::Int8 => i8::try_from(value).is_ok(),
        DataType::Int16 => i16::try_from(value).is_ok(),
        DataType::Int32 | DataType::Date32 => i32::try_from(value).is_ok(),
        _ => true,
    }
}

/// `UTF8String.toLong`: a sign, digits, and (where `fraction` is allowed) `.` and digits, which
/// are dropped.
fn integral(s: &str, fraction: bool) -> Option<i64> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, rest) = digits.split_once('.').map_or((digits, None), |(i, r)| (i, Some(r)));
    if rest.is_some_and(|r| !fraction || !r.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    if int.is_empty() && rest.is_none_or(str::is_empty) || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: i64 = 0;
    for b in int.bytes() {
        let digit = i64::from(b - b'0');
        value = value.checked_mul(10)?;
        value = if negative { value.checked_sub(digit)? } else { value.checked_add(digit)? };
    }
    Some(value)
}

/// `stringToDate`'s date, and what follows its ` ` or `T` (none for a bare date).
fn date(s: &str) -> Option<(NaiveDate, Option<&str>)> {
    let (sign, body) = match s.as_bytes().first()? {
        b'-' => (-1, &s[1..]),
        b'+' => (1, &s[1..]),
        _ => (1, s),
    };
    let end = body.find([' ', 'T']).unwrap_or(body.len());
    let (date, rest) = (&body[..end], body.get(end + 1..));
    let segments: Vec<&str> = date.splitn(3, '-').collect();
    let valid = |i: usize, digits: &str| {
        let n = digits.len();
        digits.bytes().all(|b| b.is_ascii_digit()) && if i == 0 { (4..=7).contains(&n) } else { (1..=2).contains(&n) }
    };
    if !segments.iter().enumerate().all(|(i, d)| valid(i, d)) || (segments.len() < 3 && rest.is_some()) {
        return None;
    }
    let number = |i: usize| segments.get(i).map_or(Some(1), |d| d.parse::<u32>().ok());
    let year = sign * i32::try_from(number(0)?).ok()?;
    Some((NaiveDate::from_ymd_opt(year, number(1)?, number(2)?)?, rest))
}

/// `stringToTimestamp`: microseconds since the epoch (`session`: of the instant, in the zone
/// the text names, else in the session time zone; `None`: of the wall-clock time, a
/// `TIMESTAMP_NTZ`, whatever zone the text names).
fn timestamp(s: &str, session: Option<Tz>) -> Option<i64> {
    let (date, rest) = date(s)?;
    let Some(rest) = rest.filter(|r| !r.is_empty()) else {
        let midnight = date.and_time(NaiveTime::MIN);
        return match session {
            Some(session) => Some(super::zones::instant(session, &midnight)?.timestamp_micros()),
            None => Some(midnight.and_utc().timestamp_micros()),
        };
    };
    // The time: digits and `:` and `.`; the zone is what follows.
    let zone_at = rest.find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.')).unwrap_or(rest.len());
    let (time, zone) = rest.split_at(zone_at);
    let (hms, fraction) = time.split_once('.').map_or((time, ""), |(t, f)| (t, f));
    let parts: Vec<&str> = hms.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.is_empty() || p.len() > 2) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 9 || (parts.len() < 3 && !fraction.is_empty())
    {
        return None;
    }
    let micros: u32 = format!("{:0<6}", &fraction[..fraction.len().min(6)]).parse().ok()?;
    let number = |i: usize| parts.get(i).map_or(Some(0), |p| p.parse::<u32>().ok());
    let time = NaiveTime::from_hms_micro_opt(number(0)?, number(1)?, number(2)?, micros)?;
    let local = NaiveDateTime::new(date, time);
    let zone = match zone.trim_start() {
        "" => session,
        "Z" => super::zones::zone("UTC"),
        z => Some(super::zones::zone(z)?),
    };
    match (session, zone) {
        (Some(_), Some(zone)) => Some(super::zones::instant(zone, &local)?.timestamp_micros()),
        _ => Some(local.and_utc().timestamp_micros()),
    }
}

#[cfg(test)]
mod tests {
    use super::{date, integral, timestamp};

    #[test]
    fn integers_read_as_spark_reads_them() {
        assert_eq!(integral("-17.5", true), Some(-17));
        assert_eq!(integral("-17.5", false), None);
        assert_eq!(integral("12345", false), Some(12345));
        assert_eq!(integral("1a", true), None);
        assert_eq!(integral(".", true), None);
        assert_eq!(integral("-9223372036854775808", false), Some(i64::MIN));
        assert_eq!(integral("9223372036854775808", false), None);
    }

    #[test]
    fn dates_and_timestamps_read_as_spark_reads_them() {
        let day = |s: &str| date(s).map(|(d, _)| i64::from(super::super::types::epoch_days(d)));
        assert_eq!(day("2026"), Some(20454));
        assert_eq!(day("2026-3"), Some(20513));
        assert_eq!(day("2026-03-29 anything"), Some(20541));
        assert_eq!(day("20260329"), None);
        assert_eq!(day("2026-03 x"), None);
        assert_eq!(day("12345"), Some(3_789_391));
        assert_eq!(day("2026-02-30"), None);
        let utc = super::super::zones::zone("UTC");
        assert_eq!(timestamp("2026-03-29", utc), Some(1_774_742_400_000_000));
        assert_eq!(timestamp("2026-03-29T01:02:03.5Z", utc), Some(1_774_746_123_500_000));
        assert_eq!(timestamp("2026-03-29 01:02:03+01:00", utc), Some(1_774_742_523_000_000));
        assert_eq!(timestamp("2026-03-29 01:02", utc), Some(1_774_746_120_000_000));
        assert_eq!(timestamp("2026-03-29 1:2:3 Europe/Paris", utc), Some(1_774_742_523_000_000));
        assert_eq!(timestamp("2026-03-29 x", utc), None);
        assert_eq!(timestamp("2026-03-29 01:02:03+01:00", None), Some(1_774_746_123_000_000));
        // Without a zone, in the session's: midnight in Paris is 23:00 UTC in winter.
        assert_eq!(timestamp("2026-01-01", super::super::zones::zone("Europe/Paris")), Some(1_767_222_000_000_000));
    }
}
