//! A job's data checks (`[jobs.NAME.checks]`): what its result must satisfy before it is
//! committed, and their outcomes. Parsing and naming only; the checks are evaluated by
//! `lakewriter-compute`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The checks of one job, validated. Each check has a name (see [`Check::name`]) by which
/// outcomes report it and `warn` selects it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checks {
    pub checks: Vec<Check>,
}

/// One check and whether a failure blocks the commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub kind: CheckKind,
    pub severity: CheckSeverity,
}

/// What a check asserts about a job's result.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckKind {
    /// No row has NULL in the column.
    NotNull(String),
    /// No two rows share these columns' values (rows with a NULL in them aside, as in SQL).
    Unique(Vec<String>),
    /// Every non-NULL value of the column is one of these.
    AcceptedValues { column: String, values: Vec<CheckValue> },
    /// The result has at least `min` and at most `max` rows.
    RowCount { min: Option<u64>, max: Option<u64> },
    /// A SQL condition no row may make false (NULL passes, as in a SQL `CHECK`).
    Expect(String),
    /// The result's row count differs from the rows it replaces by at most this percentage.
    ChangeVsPrevious { max_row_count_change_pct: f64 },
}

/// A value of `accepted_values`, as written in the project file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum CheckValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl fmt::Display for CheckValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(i) => write!(f, "{i}"),
            Self::Float(x) => write!(f, "{x}"),
            Self::Text(s) => write!(f, "'{s}'"),
        }
    }
}

/// Whether a failing check stops the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckSeverity {
    /// The run fails and nothing is committed.
    Error,
    /// The failure is reported and the commit goes ahead.
    Warn,
}

impl Checks {
    /// Whether a check compares the result with the rows it replaces (`change_vs_previous`).
    #[must_use]
    pub fn compares(&self) -> bool {
        self.checks.iter().any(|c| matches!(c.kind, CheckKind::ChangeVsPrevious { .. }))
    }
}

impl CheckKind {
    /// The kind's name, as `warn` may name every check of a kind.
    #[must_use]
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::NotNull(_) => "not_null",
            Self::Unique(_) => "unique",
            Self::AcceptedValues { .. } => "accepted_values",
            Self::RowCount { .. } => "row_count",
            Self::Expect(_) => "expect",
            Self::ChangeVsPrevious { .. } => "change_vs_previous",
        }
    }
}

impl Check {
    /// The check's name in outcomes and in `warn`: `not_null(customer_id)`, `unique(a, b)`,
    /// `accepted_values(status)`, `row_count`, `expect(revenue >= 0)`, `change_vs_previous`.
    #[must_use]
    pub fn name(&self) -> String {
        let kind = self.kind.kind_name();
        match &self.kind {
            CheckKind::NotNull(column) | CheckKind::AcceptedValues { column, .. } => format!("{kind}({column})"),
            CheckKind::Unique(columns) => format!("{kind}({})", columns.join(", ")),
            CheckKind::Expect(condition) => format!("{kind}({condition})"),
            CheckKind::RowCount { .. } | CheckKind::ChangeVsPrevious { .. } => kind.to_owned(),
        }
    }
}

/// How one check went on one partition's result: in the run's report, and in the commit's
/// `lakewriter` metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckOutcome {
    pub name: String,
    pub passed: bool,
    /// Rows that fail it (0 for `row_count` and `change_vs_previous`, which count the result).
    pub failing_rows: u64,
    pub severity: CheckSeverity,
    /// What was found, where the rows alone do not say it: counts, a change in percent.
    pub detail: Option<String>,
    /// Up to five failing rows (`column=value, …`), or for `unique` the duplicated keys.
    pub examples: Vec<String>,
}

impl fmt::Display for CheckOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "check `{}` failed", self.name)?;
        if self.failing_rows > 0 {
            let s = if self.failing_rows == 1 { "" } else { "s" };
            write!(f, ": {} failing row{s}", self.failing_rows)?;
        }
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        if !self.examples.is_empty() {
            write!(f, "; e.g. {}", self.examples.iter().map(|e| format!("({e})")).collect::<Vec<_>>().join(", "))?;
        }
        Ok(())
    }
}

/// The raw TOML shape of `[jobs.NAME.checks]`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawChecks {
    #[serde(default)]
    not_null: Vec<String>,
    #[serde(default)]
    unique: Vec<Vec<String>>,
    #[serde(default)]
    accepted_values: BTreeMap<String, Vec<CheckValue>>,
    row_count: Option<RawRowCount>,
    #[serde(default)]
    expect: Vec<String>,
    change_vs_previous: Option<RawChange>,
    #[serde(default)]
    warn: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRowCount {
    min: Option<u64>,
    max: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChange {
    max_row_count_change_pct: f64,
}

impl RawChecks {
    /// The checks, validated; the error names the key. What a job's write mode allows is decided
    /// where the mode is resolved (`lakewriter`'s `write` modules).
    pub(super) fn checks(self, is_column: fn(&str) -> bool) -> Result<Checks, String> {
        let column = |key: &str, c: &str| {
            if is_column(c) { Ok(c.to_owned()) } else { Err(format!("checks.{key}: an empty column name")) }
        };
        let mut kinds = Vec::new();
        for c in &self.not_null {
            kinds.push(CheckKind::NotNull(column("not_null", c)?));
        }
        for set in &self.unique {
            if set.is_empty() {
                return Err("checks.unique: an empty column set; name the columns that are unique together".into());
            }
            kinds.push(CheckKind::Unique(set.iter().map(|c| column("unique", c)).collect::<Result<_, _>>()?));
        }
        for (c, values) in self.accepted_values {
            if values.is_empty() {
                return Err(format!("checks.accepted_values: no value listed for `{c}`"));
            }
            kinds.push(CheckKind::AcceptedValues { column: column("accepted_values", &c)?, values });
        }
        if let Some(RawRowCount { min, max }) = self.row_count {
            match (min, max) {
                (None, None) => return Err("checks.row_count: set `min`, `max` or both".into()),
                (Some(min), Some(max)) if min > max => {
                    return Err(format!("checks.row_count: min ({min}) is greater than max ({max})"));
                }
                _ => kinds.push(CheckKind::RowCount { min, max }),
            }
        }
        for condition in self.expect {
            if condition.trim().is_empty() {
                return Err("checks.expect: an empty condition".into());
            }
            kinds.push(CheckKind::Expect(condition));
        }
        if let Some(RawChange { max_row_count_change_pct: pct }) = self.change_vs_previous {
            if !(pct.is_finite() && pct >= 0.0) {
                return Err(format!(
                    "checks.change_vs_previous: max_row_count_change_pct must be 0 or more, not {pct}"
                ));
            }
            kinds.push(CheckKind::ChangeVsPrevious { max_row_count_change_pct: pct });
        }
        let mut checks: Vec<Check> =
            kinds.into_iter().map(|kind| Check { kind, severity: CheckSeverity::Error }).collect();
        for entry in &self.warn {
            warn(&mut checks, entry)?;
        }
        Ok(Checks { checks })
    }
}

/// Makes the checks `entry` names — a kind, or one check's name — warnings.
fn warn(checks: &mut [Check], entry: &str) -> Result<(), String> {
    let mut found = false;
    for check in checks.iter_mut().filter(|c| c.kind.kind_name() == entry || c.name() == entry) {
        check.severity = CheckSeverity::Warn;
        found = true;
    }
    if found {
        return Ok(());
    }
    let names: Vec<String> = checks.iter().map(Check::name).collect();
    Err(format!(
        "checks.warn: `{entry}` names no check of this job (its checks: {})",
        if names.is_empty() { "none".to_owned() } else { names.join(", ") }
    ))
}
