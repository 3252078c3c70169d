//! How a job's SQL is read and what it computes: the `dialect`, `ansi` and `time_zone` keys.

use std::fmt;

use serde::Deserialize;

/// `dialect`: the SQL a job (or `lakewriter sql`) is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Apache DataFusion's SQL, its functions and its type coercion, as DataFusion defines them.
    #[serde(rename = "datafusion")]
    DataFusion,
    /// Spark SQL, the default: Spark's parser rules, its functions (those with a Spark-exact
    /// implementation; the others are refused at planning) and its analyzer's types and coercions.
    #[default]
    Spark,
}

impl Dialect {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DataFusion => "datafusion",
            Self::Spark => "spark",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `time_zone`: the session time zone of Spark's dialect (`spark.sql.session.timeZone`), an IANA
/// zone name. A timestamp is an instant; its date, its text, its fields and its wall-clock time
/// are the session time zone's, and a date as a timestamp is its midnight there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeZone(chrono_tz::Tz);

impl TimeZone {
    pub const UTC: Self = Self(chrono_tz::Tz::UTC);

    /// The zone's IANA name.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

impl std::str::FromStr for TimeZone {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        name.parse::<chrono_tz::Tz>().map(Self).map_err(|_| {
            format!(
                "`time_zone`: `{name}` is not a time zone; write an IANA zone name, such as `UTC` or `Europe/Paris`"
            )
        })
    }
}

impl<'de> Deserialize<'de> for TimeZone {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What decides the values a job's SQL computes besides the SQL itself: its dialect and, in
/// Spark's, whether arithmetic is ANSI (`ansi`, Spark 4's default: an overflow, a division by
/// zero or an invalid cast fails the run; `false`: Spark's `spark.sql.ansi.enabled=false`) and
/// the session time zone (`time_zone`, UTC by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Semantics {
    pub dialect: Dialect,
    pub ansi: bool,
    pub time_zone: TimeZone,
}

impl Default for Semantics {
    fn default() -> Self {
        Self { dialect: Dialect::default(), ansi: true, time_zone: TimeZone::UTC }
    }
}

impl Semantics {
    /// What the code fingerprint adds for these settings: nothing for DataFusion's dialect (so a
    /// job keeps the fingerprint it had before dialects existed), the dialect, its ANSI mode and
    /// a time zone other than UTC (so a job keeps the fingerprint it had before the key) for
    /// Spark's.
    #[must_use]
    pub fn fingerprinted(self) -> Option<String> {
        match self.dialect {
            Dialect::DataFusion => None,
            Dialect::Spark if self.time_zone == TimeZone::UTC => Some(format!("dialect=spark,ansi={}", self.ansi)),
            Dialect::Spark => Some(format!("dialect=spark,ansi={},time_zone={}", self.ansi, self.time_zone)),
        }
    }
}
