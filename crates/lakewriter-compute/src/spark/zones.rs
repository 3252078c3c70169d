//! Spark's `from_utc_timestamp(ts, zone)` and `to_utc_timestamp(ts, zone)` (`FromUTCTimestamp`,
//! `ToUTCTimestamp`): a timestamp's instant as the wall-clock time of `zone`, and a wall-clock time
//! in `zone` as its instant, both shown in the session time zone. Also the wall-clock times of
//! instants in a zone, and the instants of dates and wall-clock times in the session time zone, for
//! the other functions of time. A wall-clock time a daylight-saving change skips is moved forward
//! by the gap, one it repeats is the earlier of the two (`java.time.ZonedDateTime.ofLocal`).
//! Computed on microseconds with the IANA rules for years 1 to 9999.

use std::str::FromStr;
use std::sync::Arc;

use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone};
use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray, TimestampMicrosecondArray};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Date32Type, TimeUnit, TimestampMicrosecondType};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// `from_utc_timestamp` and `to_utc_timestamp`, their results in the session time zone `session`.
pub(crate) fn functions(session: &'static str) -> Vec<Arc<ScalarUDF>> {
    [true, false]
        .into_iter()
        .map(|from_utc| {
            let signature = Signature::any(2, Volatility::Immutable);
            Arc::new(ScalarUDF::new_from_impl(Shift { from_utc, session, signature }))
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Shift {
    /// `from_utc_timestamp` (else `to_utc_timestamp`).
    from_utc: bool,
    session: &'static str,
    signature: Signature,
}

/// A zone as Spark names one: a region (`Europe/Paris`), an offset (`+05:30`), `UTC`, `GMT+1`.
pub(crate) fn zone(name: &str) -> Option<Tz> {
    let offset = ["UTC", "GMT", "UT"].iter().find_map(|p| name.strip_prefix(p));
    let name = match offset {
        Some("") => "+00:00".to_owned(),
        Some(offset) => normalized_offset(offset),
        None => normalized_offset(name),
    };
    Tz::from_str(&name).ok()
}

/// `±h`, `±hh`, `±hhmm` and `±h:mm` as `±hh:mm`; anything else as it is.
fn normalized_offset(zone: &str) -> String {
    let Some(sign) = zone.chars().next().filter(|c| *c == '+' || *c == '-') else { return zone.to_owned() };
    let body = &zone[1..];
    let (hours, minutes) = match body.split_once(':') {
        Some((h, m)) => (h, m),
        None if body.len() > 2 => body.split_at(body.len() - 2),
        None => (body, "00"),
    };
    format!("{sign}{hours:0>2}:{minutes:0>2}")
}

/// The last year the zone tables hold transitions of; later years follow the rules then in force
/// (as Java's `ZoneRules` extends them).
const LAST_TABLED_YEAR: i32 = 2037;

/// `time` in a year up to [`LAST_TABLED_YEAR`] whose calendar is `time`'s own (the same weekday on
/// 1 January, leap alike), so that a rule such as "the last Sunday of March" falls on its day.
fn tabled(time: NaiveDateTime) -> NaiveDateTime {
    let year = time.year();
    if year <= LAST_TABLED_YEAR {
        return time;
    }
    let first = |y: i32| NaiveDate::from_ymd_opt(y, 1, 1).map(|d| (d.weekday(), d.leap_year()));
    (LAST_TABLED_YEAR - 27..=LAST_TABLED_YEAR)
        .rev()
        .find(|y| first(*y) == first(year))
        .and_then(|y| time.with_year(y))
        .unwrap_or(time)
}

/// The offset from UTC of `zone` at the instant `utc`.
fn offset_at(zone: Tz, utc: &NaiveDateTime) -> Duration {
    Duration::seconds(i64::from(zone.offset_from_utc_datetime(&tabled(*utc)).fix().local_minus_utc()))
}

/// The instant the wall-clock time `local` is in `zone`, as Java's `ZonedDateTime.ofLocal`
/// finds it.
pub(crate) fn instant(zone: Tz, local: &NaiveDateTime) -> Option<DateTime<chrono::Utc>> {
    let tabled_local = tabled(*local);
    let tabled_instant = tabled_instant(zone, &tabled_local)?;
    Some((*local - (tabled_local - tabled_instant.naive_utc())).and_utc())
}

/// The instant the wall-clock time `local` is in `zone`, keeping the offset `preferred` where it
/// is one of the time's (in an overlap), as Java's `ZonedDateTime.ofLocal` with a preferred
/// offset (`truncatedTo` keeps the offset of the time it truncates).
pub(crate) fn instant_preferring(
    zone: Tz,
    local: &NaiveDateTime,
    preferred: Duration,
) -> Option<DateTime<chrono::Utc>> {
    let candidate = *local - preferred;
    if offset_at(zone, &candidate) == preferred {
        return Some(candidate.and_utc());
    }
    instant(zone, local)
}

/// The wall-clock time of `micros` (microseconds since the epoch) in `zone`, and the zone's
/// offset then: the time itself, offset zero, where there is no zone (a `TIMESTAMP_NTZ`).
pub(crate) fn local(micros: i64, zone: Option<Tz>) -> Option<(NaiveDateTime, Duration)> {
    let utc = DateTime::from_timestamp_micros(micros)?.naive_utc();
    let offset = zone.map_or(Duration::zero(), |zone| offset_at(zone, &utc));
    Some((utc + offset, offset))
}

/// The instants of the values of `array` as Spark casts them to a `TIMESTAMP` in the session
/// time zone `session`: a date at its midnight there, a `TIMESTAMP_NTZ` at its wall-clock time
/// there (a time a daylight-saving change skips moves forward by the gap, one it repeats is
/// the earlier), a `TIMESTAMP` as it is; microseconds since the epoch.
pub(crate) fn instants(array: &ArrayRef, session: Tz) -> Result<Vec<Option<i64>>> {
    let in_session = |local: Option<NaiveDateTime>| Some(instant(session, &local?)?.timestamp_micros());
    Ok(match array.data_type() {
        DataType::Date32 => array
            .as_primitive::<Date32Type>()
            .iter()
            .map(|d| in_session(d.and_then(super::types::from_epoch_days).map(|d| d.and_time(NaiveTime::MIN))))
            .collect(),
        DataType::Timestamp(_, zone) => {
            let micros =
                cast_with_options(array, &DataType::Timestamp(TimeUnit::Microsecond, None), &CastOptions::default())?;
            let micros = micros.as_primitive::<TimestampMicrosecondType>();
            match zone {
                Some(_) => micros.iter().collect(),
                None => micros
                    .iter()
                    .map(|m| in_session(m.and_then(DateTime::from_timestamp_micros).map(|t| t.naive_utc())))
                    .collect(),
            }
        }
        other => return Err(DataFusionError::Execution(format!("a date or a timestamp, not {other}"))),
    })
}

fn tabled_instant(zone: Tz, local: &NaiveDateTime) -> Option<DateTime<chrono::Utc>> {
    match zone.from_local_datetime(local) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => Some(t.with_timezone(&chrono::Utc)),
        // In a gap: the offset before it, which moves the time forward by the gap.
        LocalResult::None => {
            let before = zone.from_local_datetime(&(*local - Duration::hours(3))).earliest()?;
            let offset = before.offset().fix();
            Some((*local - Duration::seconds(i64::from(offset.local_minus_utc()))).and_utc())
        }
    }
}

impl ScalarUDFImpl for Shift {
    fn name(&self) -> &'static str {
        if self.from_utc { "from_utc_timestamp" } else { "to_utc_timestamp" }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(super::types::timestamp(self.session))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        // The argument as a `TIMESTAMP` of the session, as Spark casts it (text read as a
        // wall-clock time there).
        let input = args.args[0].to_array(rows)?;
        let input = match input.data_type() {
            DataType::Date32 | DataType::Timestamp(..) => input,
            _ => cast_with_options(&input, &DataType::Timestamp(TimeUnit::Microsecond, None), &CastOptions::default())?,
        };
        let session = super::types::zone(self.session)?;
        let times = TimestampMicrosecondArray::from(instants(&input, session)?);
        let zones = cast_with_options(&args.args[1].to_array(rows)?, &DataType::Utf8, &CastOptions::default())?;
        let zones: &StringArray = zones.as_string::<i32>();
        let mut out = Vec::with_capacity(rows);
        for i in 0..rows {
            if times.is_null(i) || zones.is_null(i) {
                out.push(None);
                continue;
            }
            let name = zones.value(i);
            let zone = zone(name).ok_or_else(|| {
                DataFusionError::Execution(format!("[INVALID_TIMEZONE] `{name}` is not a time zone Spark reads"))
            })?;
            let Some(time) = DateTime::from_timestamp_micros(times.value(i)) else {
                out.push(None);
                continue;
            };
            let shifted = if self.from_utc {
                Some(time.naive_utc() + offset_at(zone, &time.naive_utc()))
            } else {
                instant(zone, &time.naive_utc()).map(|t| t.naive_utc())
            };
            out.push(shifted.map(|t| t.and_utc().timestamp_micros()));
        }
        let out: ArrayRef = Arc::new(TimestampMicrosecondArray::from(out).with_timezone(self.session));
        Ok(ColumnarValue::Array(out))
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::{instant, zone};

    #[test]
    fn a_skipped_time_moves_forward_and_a_repeated_one_is_the_earlier() {
        let paris = zone("Europe/Paris").unwrap();
        let local = |m, d, h, min| NaiveDate::from_ymd_opt(2026, m, d).unwrap().and_hms_opt(h, min, 0).unwrap();
        assert_eq!(instant(paris, &local(3, 29, 2, 30)).unwrap().timestamp(), 1_774_747_800);
        assert_eq!(instant(paris, &local(10, 25, 2, 30)).unwrap().timestamp(), 1_792_888_200);
        assert!(zone("GMT+1").is_some());
        // Summer time in 2262, by the rules in force after the tables end.
        let summer = NaiveDate::from_ymd_opt(2262, 4, 11).unwrap().and_hms_opt(0, 0, 0).unwrap();
        assert_eq!(super::offset_at(paris, &summer), chrono::Duration::hours(2));
        assert!(zone("Mars/Olympus").is_none());
    }
}
