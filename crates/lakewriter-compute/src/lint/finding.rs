//! The findings of the determinism checks: their severity, rule and message.

use std::fmt;

use serde::Serialize;

/// How bad a finding is: an error stops a run before it writes; a warning is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    /// `warn` in JSON, as a check's severity is.
    #[serde(rename = "warn")]
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
        })
    }
}

/// The check that found something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    Nondeterministic,
    OrderNotTotal,
    UnboundedScan,
    OutsidePartition,
    /// A float aggregate whose result depends on the order of its rows, written by the job.
    FloatAggregate,
    /// A data check that cannot apply to the job's result (`[jobs.NAME.checks]`), or a `not_null`
    /// column the result does not have.
    Check,
    /// A test of the job (`[tests.NAME]`) that cannot be run as written.
    Test,
    /// An `append_dedup` window a key can recur outside of (its key lacks the window's column).
    DedupWindow,
    /// A function the job's dialect refuses to run (in the `spark` dialect, one it has no
    /// Spark-exact implementation of).
    RefusedFunction,
}

impl Rule {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nondeterministic => "nondeterministic",
            Self::OrderNotTotal => "order_not_total",
            Self::UnboundedScan => "unbounded_scan",
            Self::OutsidePartition => "outside_partition",
            Self::FloatAggregate => "float_aggregate",
            Self::Check => "check",
            Self::Test => "test",
            Self::DedupWindow => "dedup_window",
            Self::RefusedFunction => "refused_function",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding of the determinism checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub rule: Rule,
    pub job: String,
    /// The construct, as displayed: a function call, a window expression, `LIMIT`, a table.
    pub construct: String,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job {}: {}: {}", self.job, self.rule, self.message)
    }
}
