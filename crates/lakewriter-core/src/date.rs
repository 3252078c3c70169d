//! Logical partition dates: strictly `YYYY-MM-DD`, and inclusive ranges of them.

use chrono::NaiveDate;

use crate::{Error, Result};

/// Parses a logical date. Only the canonical `YYYY-MM-DD` form is accepted (no `2026-9-1`, no
/// times, no time zones), so that a date has exactly one spelling in paths, logs and commits.
pub fn parse_date(value: &str) -> Result<NaiveDate> {
    let invalid = || Error::InvalidDate { value: value.to_owned() };
    let b = value.as_bytes();
    let shape_ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape_ok {
        return Err(invalid());
    }
    NaiveDate::parse_from_str(value, "%Y-%m-%d").map_err(|_| invalid())
}

/// Days since 1970-01-01: Arrow's and Parquet's `DATE` (`Date32`) value of `date`.
#[must_use]
pub fn days_since_epoch(date: NaiveDate) -> i32 {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    i32::try_from((date - epoch).num_days()).unwrap_or(i32::MAX)
}

/// An inclusive range of logical dates, `from` ≤ `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateRange {
    from: NaiveDate,
    to: NaiveDate,
}

impl DateRange {
    /// The most days a range may hold: 100 years of daily partitions. A longer range is almost
    /// always a mistyped year, and would plan or run a partition per day of it.
    pub const MAX_DAYS: usize = 36_525;

    /// The days `from` to `to`, both included; an error where `from` is after `to` or the range
    /// holds more than [`DateRange::MAX_DAYS`] days.
    pub fn new(from: NaiveDate, to: NaiveDate) -> Result<Self> {
        if from > to {
            return Err(Error::InvalidRange { from: from.to_string(), to: to.to_string() });
        }
        let range = Self { from, to };
        if range.len() > Self::MAX_DAYS {
            let (from, to, days) = (from.to_string(), to.to_string(), range.len());
            return Err(Error::RangeTooLong { from, to, days, max: Self::MAX_DAYS });
        }
        Ok(range)
    }

    /// Whether `date` is one of the range's days.
    #[must_use]
    pub fn contains(&self, date: NaiveDate) -> bool {
        (self.from..=self.to).contains(&date)
    }

    #[must_use]
    pub fn from(&self) -> NaiveDate {
        self.from
    }

    #[must_use]
    pub fn to(&self) -> NaiveDate {
        self.to
    }

    /// Every date of the range, in order.
    pub fn days(&self) -> impl Iterator<Item = NaiveDate> + use<> {
        let to = self.to;
        self.from.iter_days().take_while(move |d| *d <= to)
    }

    /// The days of shard `index` of `count` (0 ≤ index < count): a day belongs to shard
    /// `days_since_epoch(day) mod count`. The shards of a range are disjoint and cover it, and a
    /// day's shard does not depend on the range, so workers given overlapping ranges still agree.
    pub fn shard(&self, index: u32, count: u32) -> impl Iterator<Item = NaiveDate> + use<> {
        let count = i64::from(count.max(1));
        let index = i64::from(index);
        self.days().filter(move |d| i64::from(days_since_epoch(*d)).rem_euclid(count) == index)
    }

    #[must_use]
    pub fn len(&self) -> usize {
        usize::try_from((self.to - self.from).num_days()).unwrap_or(0) + 1
    }

    /// Always false: a range holds at least one day.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_canonical_dates_only() {
        assert_eq!(parse_date("2026-09-30").unwrap(), NaiveDate::from_ymd_opt(2026, 9, 30).unwrap());
        for bad in [
            "2026-9-30",
            "2026-09-31",
            "2026-02-29",
            "20260930",
            "2026-09-30T00:00",
            " 2026-09-30",
            "",
            "abcd-ef-gh",
            "+026-09-30",
        ] {
            let err = parse_date(bad).unwrap_err();
            assert!(err.to_string().contains(&format!("`{bad}`")), "{err}");
        }
        assert!(parse_date("2028-02-29").is_ok());
        assert_eq!(days_since_epoch(parse_date("1970-01-02").unwrap()), 1);
        assert_eq!(days_since_epoch(parse_date("2026-09-30").unwrap()), 20_726);
    }

    #[test]
    fn ranges_are_inclusive_and_ordered() {
        let d = |s| parse_date(s).unwrap();
        let r = DateRange::new(d("2026-09-29"), d("2026-10-02")).unwrap();
        let days: Vec<String> = r.days().map(|d| d.to_string()).collect();
        assert_eq!(days, ["2026-09-29", "2026-09-30", "2026-10-01", "2026-10-02"]);
        assert_eq!(r.len(), 4);
        assert_eq!(DateRange::new(d("2026-09-01"), d("2026-09-01")).unwrap().len(), 1);
        let shards: Vec<Vec<NaiveDate>> = (0..3).map(|i| r.shard(i, 3).collect()).collect();
        let mut all: Vec<NaiveDate> = shards.concat();
        all.sort();
        assert_eq!(all, r.days().collect::<Vec<_>>(), "the shards cover the range exactly once");
        assert!(shards.iter().all(|s| !s.is_empty()));
        let wider = DateRange::new(d("2026-09-01"), d("2026-10-31")).unwrap();
        assert!(shards[1].iter().all(|day| wider.shard(1, 3).any(|w| w == *day)), "a day's shard ignores the range");
        assert_eq!(r.shard(0, 1).count(), 4);
        let err = DateRange::new(d("2026-09-02"), d("2026-09-01")).unwrap_err();
        assert_eq!(err.to_string(), "invalid date range: --from 2026-09-02 is after --to 2026-09-01");
        let century = DateRange::new(d("1926-09-02"), d("2026-09-01")).unwrap();
        assert_eq!(century.len(), DateRange::MAX_DAYS);
        let err = DateRange::new(d("0202-09-01"), d("2026-09-30")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "date range too long: --from 0202-09-01 --to 2026-09-30 holds 666233 days, more than 36525 (100 years \
             of daily partitions); check the years, or split the range"
        );
    }
}
