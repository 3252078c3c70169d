//! The name of a logical partition: `dt=2026-09-30`, or `all` for a run without a date.

use std::fmt;
use std::str::FromStr;

use chrono::NaiveDate;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A logical partition as lakewriter names it in reports, commit metadata and partition-state
/// ids. It is written as `column=YYYY-MM-DD` (`dt=2026-09-30`) or `all`, and read back from that
/// text.
///
/// A day is one partition whatever column names it: keys compare, order and hash by their day
/// alone, and the column only labels it. A job names all its days by one column, and a day
/// recorded under another one — a release before named a day of every mode by the job's
/// `partition_by`, where only `overwrite_partition` writes the table partition of that day — is
/// the same day of that job.
#[derive(Debug, Clone)]
pub enum PartitionKey {
    /// One day of a date-partitioned table.
    Day { column: String, date: NaiveDate },
    /// The whole table: a run without a date (`rebuild`).
    All,
}

impl PartitionKey {
    /// The partition of `dt` in a table partitioned by `column` (`dt` where it has none), or
    /// [`PartitionKey::All`] without a date.
    #[must_use]
    pub fn of(column: Option<&str>, dt: Option<NaiveDate>) -> Self {
        match dt {
            Some(date) => Self::Day { column: column.unwrap_or("dt").to_owned(), date },
            None => Self::All,
        }
    }

    /// The day this partition holds, if it is one.
    #[must_use]
    pub fn date(&self) -> Option<NaiveDate> {
        match self {
            Self::Day { date, .. } => Some(*date),
            Self::All => None,
        }
    }
}

impl PartialEq for PartitionKey {
    fn eq(&self, other: &Self) -> bool {
        self.date() == other.date()
    }
}

impl Eq for PartitionKey {}

impl std::hash::Hash for PartitionKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.date().hash(state);
    }
}

impl PartialOrd for PartitionKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PartitionKey {
    /// Days in order, then `all`.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self.date(), other.date()) {
            (Some(a), Some(b)) => a.cmp(&b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    }
}

impl fmt::Display for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, so that a width (`{:<16}`) lines keys up in text output.
        match self {
            Self::Day { column, date } => f.pad(&format!("{column}={date}")),
            Self::All => f.pad("all"),
        }
    }
}

impl FromStr for PartitionKey {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "all" {
            return Ok(Self::All);
        }
        let invalid = || crate::Error::InvalidPartition { value: s.to_owned() };
        // The date holds no `=`; the column's name may.
        let (column, date) = s.rsplit_once('=').ok_or_else(invalid)?;
        if column.is_empty() {
            return Err(invalid());
        }
        let date = crate::parse_date(date).map_err(|_| invalid())?;
        Ok(Self::Day { column: column.to_owned(), date })
    }
}

impl Serialize for PartitionKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PartitionKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_print_and_parse_back() {
        let day = crate::parse_date("2026-09-30").expect("date");
        let key = PartitionKey::of(Some("order_date"), Some(day));
        assert_eq!(key.to_string(), "order_date=2026-09-30");
        assert_eq!("order_date=2026-09-30".parse::<PartitionKey>().expect("parses"), key);
        assert_eq!(PartitionKey::of(None, Some(day)).to_string(), "dt=2026-09-30");
        assert_eq!(PartitionKey::of(Some("dt"), None), PartitionKey::All);
        assert_eq!("all".parse::<PartitionKey>().expect("parses"), PartitionKey::All);
        assert_eq!(key.date(), Some(day));
        assert_eq!(format!("[{:<6}]", PartitionKey::All), "[all   ]");
        assert_eq!(PartitionKey::All.date(), None);
        for column in ["Order Day", "a=b", "quo\"te/Ünï"] {
            let key = PartitionKey::of(Some(column), Some(day));
            assert_eq!(key.to_string().parse::<PartitionKey>().expect("parses"), key, "{column}");
        }
        for bad in ["", "dt", "=2026-09-30", "dt=2026-13-01", "dt=yesterday", "All"] {
            assert!(bad.parse::<PartitionKey>().is_err(), "{bad:?} is not a partition");
        }
    }

    #[test]
    fn a_day_is_one_partition_whatever_column_names_it() {
        let (first, second) = (crate::parse_date("2026-09-01").ok(), crate::parse_date("2026-09-02").ok());
        let (dt, region) = (PartitionKey::of(None, first), PartitionKey::of(Some("region"), first));
        assert_eq!(dt, region);
        assert_eq!((dt.to_string(), region.to_string()), ("dt=2026-09-01".to_owned(), "region=2026-09-01".to_owned()));
        let mut keys = std::collections::BTreeSet::new();
        for key in [PartitionKey::All, PartitionKey::of(Some("a"), second), region, dt] {
            keys.insert(key); // the first of one day stays
        }
        let listed: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(listed, ["region=2026-09-01", "a=2026-09-02", "all"], "days in order, then all");
        let mut hashed = std::collections::HashSet::new();
        assert!(hashed.insert(PartitionKey::of(Some("a"), second)));
        assert!(!hashed.insert(PartitionKey::of(Some("b"), second)));
    }

    #[test]
    fn keys_serialize_as_their_text() {
        let key = PartitionKey::of(None, crate::parse_date("2026-09-01").ok());
        let json = serde_json::to_string(&key).expect("serializes");
        assert_eq!(json, r#""dt=2026-09-01""#);
        assert_eq!(serde_json::from_str::<PartitionKey>(&json).expect("deserializes"), key);
    }
}
