//! What a run of the binary returned, typed views of its `--json` lines, and the one reading of JSON
//! Lines: [`parse_lines`] (any text, as values or typed lines), [`json_lines`] (a run's stdout) and
//! [`lines_and_closing`] (a command's lines and its tagged closing line).

use std::process::Output;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What a run of the binary returned.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(output: &Output) -> Self {
        Self {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// The JSON lines of one job's `run` or `backfill`: partition reports, then the summary (and
    /// for a backfill the pipeline's closing line, left out).
    pub fn json(&self) -> (Vec<Report>, Summary) {
        let mut reports = Vec::new();
        let mut summary = None;
        for line in self.stdout.lines() {
            let value: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
            if value.get("pipeline").is_some() || value.get("columns_dropped").is_some() {
                continue;
            }
            if let Some(s) = value.get("summary") {
                summary = Some(serde_json::from_value(s.clone()).expect("summary shape"));
            } else {
                reports.push(serde_json::from_value(value).unwrap_or_else(|e| panic!("report shape: {line}: {e}")));
            }
        }
        (reports, summary.unwrap_or_else(|| panic!("no summary line in {}", self.stdout)))
    }

    /// Asserts that stdout has the line `line`.
    #[track_caller]
    pub fn assert_line(&self, line: &str) {
        assert!(self.stdout.lines().any(|l| l == line), "no line `{line}` in:\n{}", self.stdout);
    }

    /// Asserts that stdout has a line that starts with `start`: a line that ends with a duration.
    #[track_caller]
    pub fn assert_line_starts(&self, start: &str) {
        assert!(self.stdout.lines().any(|l| l.starts_with(start)), "no line starting `{start}` in:\n{}", self.stdout);
    }

    /// The lines of stderr from its `error: ` line on (logs come before it).
    pub fn error_lines(&self) -> Vec<&str> {
        self.stderr.lines().skip_while(|l| !l.starts_with("error: ")).collect()
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit code\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

#[derive(Debug, Deserialize)]
pub struct Report {
    pub job: String,
    pub partition: String,
    pub status: String,
    pub committed: bool,
    pub changes: Option<Changes>,
    pub note: Option<String>,
    pub rows_written: Option<u64>,
    pub table_version: Option<u64>,
    pub files_scanned: Option<usize>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub files_added: Option<u64>,
    #[serde(default)]
    pub files_removed: Option<u64>,
    #[serde(default)]
    pub bytes_added: Option<u64>,
    #[serde(default)]
    pub bytes_removed: Option<u64>,
    /// Attempts beyond the first, after conflicts with concurrent commits.
    pub retries: u32,
    pub error: Option<String>,
    /// The job's checks on the partition's result (`[]` for a job without checks).
    #[serde(default)]
    pub checks: Vec<CheckOutcome>,
    /// What the run did to the table's columns (`on_schema_change`).
    #[serde(default)]
    pub schema_change: Option<serde_json::Value>,
    /// Where the query ran, and how the data files were written.
    #[serde(default)]
    pub engine: Option<EngineUse>,
}

/// A partition report's `engine`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct EngineUse {
    pub url: String,
    pub executors: Option<usize>,
    pub tasks: Option<usize>,
    pub files: Option<usize>,
}

/// One check's outcome in a partition report.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct CheckOutcome {
    pub name: String,
    pub passed: bool,
    pub failing_rows: u64,
    /// `error` (a failure blocks the commit) or `warn`.
    pub severity: String,
    pub detail: Option<String>,
    #[serde(default)]
    pub examples: Vec<String>,
}

/// A report's `changes`: a keyed write's counts, or a `MERGE INTO` job's (inserted, updated and
/// deleted only: `unchanged` and `duplicates_dropped` read as 0; the events schema holds each
/// shape whole).
#[derive(Debug, Deserialize, PartialEq, Eq)]
pub struct Changes {
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    #[serde(default)]
    pub unchanged: u64,
    #[serde(default)]
    pub duplicates_dropped: u64,
}

#[derive(Debug, Deserialize)]
pub struct Summary {
    pub partitions: usize,
    pub ok: usize,
    pub skipped: usize,
    pub failed: usize,
    pub rows_written: u64,
    pub table_version: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Digest {
    pub rows: u64,
    pub digest: String,
    pub version: u64,
}

/// Each line of `text` — stdout, stderr's JSON logs, a JSON Lines file, a Delta commit — read as a
/// `T` (a [`Value`], or a typed line).
#[track_caller]
pub fn parse_lines<T: DeserializeOwned>(text: &str) -> Vec<T> {
    text.lines().map(parse_line).collect()
}

#[track_caller]
fn parse_line<T: DeserializeOwned>(line: &str) -> T {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line of its kind: {line}: {e}"))
}

/// Every JSON line of `run`'s stdout.
#[track_caller]
pub fn json_lines(run: &Run) -> Vec<Value> {
    parse_lines(&run.stdout)
}

/// The lines of a `--json` run that exited 0 and closed with `{"TAG": {…}}`: the lines before it
/// as `L`s, and the object under `tag` as a `C`.
#[track_caller]
pub fn lines_and_closing<L: DeserializeOwned, C: DeserializeOwned>(run: &Run, tag: &str) -> (Vec<L>, C) {
    run.assert_code(0);
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    let last = lines.pop().unwrap_or_else(|| panic!("no closing line in:\n{}", run.stdout));
    let mut line: Value = parse_line(last);
    let closing = line.get_mut(tag).unwrap_or_else(|| panic!("the last line is not a closing `{tag}`: {last}")).take();
    let closing = serde_json::from_value(closing).unwrap_or_else(|e| panic!("the closing line: {last}: {e}"));
    (lines.into_iter().map(parse_line).collect(), closing)
}
