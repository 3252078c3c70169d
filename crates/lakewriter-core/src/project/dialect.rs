//! How a job's SQL is read and what it computes: the `dialect` and `ansi` keys.

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

/// What decides the values a job's SQL computes besides the SQL itself: its dialect and, in
/// Spark's, whether arithmetic is ANSI (`ansi`, Spark 4's default: an overflow, a division by
/// zero or an invalid cast fails the run; `false`: Spark's `spark.sql.ansi.enabled=false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Semantics {
    pub dialect: Dialect,
    pub ansi: bool,
}

impl Default for Semantics {
    fn default() -> Self {
        Self { dialect: Dialect::default(), ansi: true }
    }
}

impl Semantics {
    /// What the code fingerprint adds for these settings: nothing for DataFusion's dialect (so a
    /// job keeps the fingerprint it had before dialects existed), the dialect and its ANSI mode
    /// for Spark's.
    #[must_use]
    pub fn fingerprinted(self) -> Option<String> {
        match self.dialect {
            Dialect::DataFusion => None,
            Dialect::Spark => Some(format!("dialect=spark,ansi={}", self.ansi)),
        }
    }
}
