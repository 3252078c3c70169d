//! A job's test in the project file (`[tests.NAME]`), built from typed parts, and the typed view
//! of `lakewriter test --json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Run;

/// `[tests.NAME]`: a job, its dates, the tables it is given and what it must write.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobTest {
    job: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    dt: Option<toml::value::Datetime>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    dates: Vec<toml::value::Datetime>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    given: BTreeMap<String, Fixture>,
    expect: Fixture,
}

/// A given table or an expectation: rows or a file (and a schema), a tolerance, an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
struct Fixture {
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<Vec<toml::Table>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    schema: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tolerance: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Rows written as TOML inline tables, e.g. `{ customer_id = 1, dt = 2026-09-30 }`.
#[track_caller]
pub fn rows(tables: &[&str]) -> Vec<toml::Table> {
    tables
        .iter()
        .map(|t| {
            let mut wrapped: toml::Table = toml::from_str(&format!("row = {t}")).expect("an inline table");
            match wrapped.remove("row") {
                Some(toml::Value::Table(row)) => row,
                other => panic!("not a table: {other:?}"),
            }
        })
        .collect()
}

fn date(text: &str) -> toml::value::Datetime {
    text.parse().unwrap_or_else(|e| panic!("not a TOML date `{text}`: {e}"))
}

impl JobTest {
    /// A test of `job` for the date `dt`, expecting no rows until told otherwise.
    pub fn new(job: &str, dt: &str) -> Self {
        let expect = Fixture { rows: Some(Vec::new()), ..Fixture::default() };
        Self { job: job.to_owned(), dt: Some(date(dt)), dates: Vec::new(), given: BTreeMap::new(), expect }
    }

    /// A test of a job that runs without a date (a `rebuild`).
    pub fn undated(job: &str) -> Self {
        Self { dt: None, ..Self::new(job, "2000-01-01") }
    }

    /// `dates = [...]` instead of `dt`.
    #[must_use]
    pub fn dates(self, dates: &[&str]) -> Self {
        Self { dt: None, dates: dates.iter().map(|d| date(d)).collect(), ..self }
    }

    /// `given."TABLE".rows`.
    #[must_use]
    pub fn given(mut self, table: &str, rows: &[&str]) -> Self {
        self.given.entry(table.to_owned()).or_default().rows = Some(self::rows(rows));
        self
    }

    /// `given."TABLE".file`.
    #[must_use]
    pub fn given_file(mut self, table: &str, file: &str) -> Self {
        self.given.entry(table.to_owned()).or_default().file = Some(file.to_owned());
        self
    }

    /// `given."TABLE".schema.COLUMN = TYPE`.
    #[must_use]
    pub fn given_type(mut self, table: &str, column: &str, sql_type: &str) -> Self {
        self.given.entry(table.to_owned()).or_default().schema.insert(column.to_owned(), sql_type.to_owned());
        self
    }

    /// `expect.rows`.
    #[must_use]
    pub fn expect(self, rows: &[&str]) -> Self {
        Self { expect: Fixture { rows: Some(self::rows(rows)), ..Fixture::default() }, ..self }
    }

    /// `expect.file`.
    #[must_use]
    pub fn expect_file(self, file: &str) -> Self {
        Self { expect: Fixture { file: Some(file.to_owned()), ..Fixture::default() }, ..self }
    }

    /// `expect.schema.COLUMN = TYPE`.
    #[must_use]
    pub fn expect_type(mut self, column: &str, sql_type: &str) -> Self {
        self.expect.schema.insert(column.to_owned(), sql_type.to_owned());
        self
    }

    /// `expect.tolerance`.
    #[must_use]
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.expect.tolerance = Some(tolerance);
        self
    }

    /// `expect.error`.
    #[must_use]
    pub fn expect_error(self, text: &str) -> Self {
        Self { expect: Fixture { error: Some(text.to_owned()), ..Fixture::default() }, ..self }
    }
}

/// A line of `lakewriter test --json`: a test and its checks.
#[derive(Debug, Clone, Deserialize)]
pub struct TestResult {
    pub test: String,
    pub job: String,
    pub status: String,
    pub checks: Vec<TestCheck>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TestCheck {
    pub name: String,
    pub passed: bool,
    pub detail: Option<String>,
}

/// The closing line of `lakewriter test --json`.
#[derive(Debug, Clone, Deserialize)]
pub struct TestSummary {
    pub tests: usize,
    pub passed: usize,
    pub checks: usize,
    pub checks_failed: usize,
}

impl TestResult {
    /// The check `name`, which must have run.
    #[track_caller]
    pub fn check(&self, name: &str) -> &TestCheck {
        self.checks.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no check `{name}` in {self:?}"))
    }

    /// The names of the checks run, in order.
    pub fn names(&self) -> Vec<&str> {
        self.checks.iter().map(|c| c.name.as_str()).collect()
    }
}

/// The tests of a `lakewriter test --json` run, by name, and its summary.
#[track_caller]
pub fn test_results(run: &Run) -> (BTreeMap<String, TestResult>, TestSummary) {
    let mut results = BTreeMap::new();
    let mut summary = None;
    for line in run.stdout.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
        if let Some(s) = value.get("summary") {
            summary = Some(serde_json::from_value(s.clone()).expect("a test summary"));
        } else {
            let result: TestResult =
                serde_json::from_value(value).unwrap_or_else(|e| panic!("a test line: {line}: {e}"));
            results.insert(result.test.clone(), result);
        }
    }
    (results, summary.unwrap_or_else(|| panic!("no summary in:\n{}\n{}", run.stdout, run.stderr)))
}
