//! A lakehouse in a temporary folder, its project file built from typed parts, and typed views
//! of the binary's output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chrono::NaiveDate;
use lakewriter_core::{DateRange, parse_date};
use serde::{Deserialize, Serialize};

mod logs;

pub use logs::{LogLine, log_lines};

pub const DAILY_ORDERS_SQL: &str = "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt \
     FROM raw.orders WHERE dt = $dt GROUP BY customer_id";

pub fn day(s: &str) -> NaiveDate {
    parse_date(s).expect("test date")
}

/// The days `from..=to`.
pub fn days(from: &str, to: &str) -> impl Iterator<Item = NaiveDate> {
    DateRange::new(day(from), day(to)).expect("range").days()
}

/// The raw orders of `day`, as [`Lake::new`] and the demo write them.
pub fn orders(day: &str) -> u64 {
    lakewriter_datagen::orders_for(self::day(day)).num_rows() as u64
}

/// The customers with an order on `day`: the rows [`DAILY_ORDERS_SQL`] (and the demo's
/// `daily_orders`) writes for it.
pub fn customers_with_orders(day: &str) -> u64 {
    distinct_customers(&[lakewriter_datagen::orders_for(self::day(day))])
}

/// The rows [`DAILY_ORDERS_SQL`] writes for every day of `from..=to`.
pub fn daily_orders_rows(from: &str, to: &str) -> u64 {
    days(from, to).map(|d| customers_with_orders(&d.to_string())).sum()
}

/// The distinct values of the column `customer_id` of `batches`.
pub fn distinct_customers(batches: &[arrow::array::RecordBatch]) -> u64 {
    let ids: std::collections::BTreeSet<i64> = batches
        .iter()
        .flat_map(|batch| {
            let column = batch.column_by_name("customer_id").expect("a customer_id column");
            let ids = column.as_any().downcast_ref::<arrow::array::Int64Array>().expect("Int64 customer ids");
            ids.values().to_vec()
        })
        .collect();
    ids.len() as u64
}

/// The README's project: the job `daily_orders` (`overwrite_partition` by `dt`) writing
/// `analytics.daily_orders` with `sql`.
pub fn daily_orders(sql: &str) -> Project {
    Project::new().job(Job::new("daily_orders", "analytics.daily_orders").sql(sql))
}

/// `text` with its one occurrence of `from` replaced by `to`; panics unless `from` occurs
/// exactly once, so that an edit never silently does nothing.
#[track_caller]
pub fn edited(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` occurs once in:\n{text}");
    text.replacen(from, to, 1)
}

/// A project folder: its `lakewriter.toml`, and a `lake/` root (or the root that `env` sets).
pub struct Lake {
    dir: tempfile::TempDir,
    /// Added to the environment of every run of the binary.
    env: Vec<(String, String)>,
}

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

    /// The JSON lines of stdout: partition reports, then the summary.
    pub fn json(&self) -> (Vec<Report>, Summary) {
        let mut reports = Vec::new();
        let mut summary = None;
        for line in self.stdout.lines() {
            let value: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
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
    /// Attempts beyond the first, after conflicts with concurrent commits.
    pub retries: u32,
    pub error: Option<String>,
    /// The job's checks on the partition's result (`[]` for a job without checks).
    #[serde(default)]
    pub checks: Vec<CheckOutcome>,
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

#[derive(Debug, Deserialize, PartialEq, Eq)]
pub struct Changes {
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    pub unchanged: u64,
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

#[derive(Debug, Deserialize, PartialEq, Eq)]
pub struct Digest {
    pub rows: u64,
    pub digest: String,
    pub version: u64,
}

impl Lake {
    /// Raw orders for `from..=to`, and the README's project ([`daily_orders`]).
    pub fn new(from: &str, to: &str) -> Self {
        let lake = Self::empty(&[]);
        let days = DateRange::new(day(from), day(to)).expect("range");
        lakewriter_datagen::write_orders(&lake.root(), days).expect("raw data");
        lake.set_project(&daily_orders(DAILY_ORDERS_SQL));
        lake
    }

    /// An empty folder: no project file, no raw data. `env` is added to every run.
    pub fn empty(env: &[(&str, &str)]) -> Self {
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Self { dir: tempfile::tempdir().expect("temp dir"), env }
    }

    /// The sample project of `lakewriter demo` and its raw layer (orders and customer changes of
    /// September 2026), nothing run.
    pub fn demo() -> Self {
        let lake = Self::empty(&[]);
        lake.prepare_demo();
        lake
    }

    /// Lays out the sample project and raw layer here (`demo --no-run`).
    pub fn prepare_demo(&self) {
        self.run_demo(&["--no-run"]).assert_code(0);
    }

    /// Runs `lakewriter --color never demo <this folder> ARGS…`.
    pub fn run_demo(&self, args: &[&str]) -> Run {
        let dir = self.path().to_str().expect("utf-8 path");
        let all = [&["--color", "never", "demo", dir], args].concat();
        Run::from(&command(&all, self.path(), &self.env()).output().expect("run lakewriter"))
    }

    /// The variables added to every run.
    pub fn env(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn root(&self) -> PathBuf {
        self.path().join("lake")
    }

    pub fn project_file(&self) -> PathBuf {
        self.path().join("lakewriter.toml")
    }

    /// Writes `project` as the project file.
    pub fn set_project(&self, project: &Project) {
        self.set_project_text(&project.to_toml());
    }

    /// Writes `text` as the project file: for files a [`Project`] cannot express, such as
    /// invalid ones.
    pub fn set_project_text(&self, text: &str) {
        std::fs::write(self.project_file(), text).expect("write project");
    }

    /// The binary with `--project <this> --color never ARGS…`, not started.
    pub fn command(&self, args: &[&str]) -> Command {
        let project = self.project_file();
        let all = [&["--project", project.to_str().expect("utf-8 path"), "--color", "never"], args].concat();
        command(&all, self.path(), &self.env())
    }

    /// Runs `lakewriter --project <this> --color never ARGS…`.
    pub fn cli(&self, args: &[&str]) -> Run {
        Run::from(&self.command(args).output().expect("run lakewriter"))
    }

    pub fn digest(&self, table: &str, partition: Option<&str>) -> Digest {
        let mut args = vec!["--json", "digest", table];
        if let Some(p) = partition {
            args.extend(["--partition", p]);
        }
        let run = self.cli(&args);
        run.assert_code(0);
        serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("digest JSON: {}: {e}", run.stdout))
    }

    /// The files of one partition folder of a table, sorted, with their sizes.
    pub fn partition_files(&self, table_dir: &str, partition: &str) -> Vec<(String, u64)> {
        let dir = self.root().join(table_dir).join(partition);
        let mut files: Vec<(String, u64)> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .map(|e| e.expect("dir entry"))
                    .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().expect("metadata").len()))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// The Delta log's commit files (`*.json`) of a table.
    pub fn commit_count(&self, table_dir: &str) -> usize {
        std::fs::read_dir(self.root().join(table_dir).join("_delta_log")).map_or(0, |entries| {
            entries.filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".json"))).count()
        })
    }

    /// The `commitInfo` of commit `version`.
    pub fn commit_info(&self, table_dir: &str, version: u64) -> serde_json::Value {
        let path = self.root().join(table_dir).join("_delta_log").join(format!("{version:020}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("log line"))
            .find_map(|mut a| a.get_mut("commitInfo").map(serde_json::Value::take))
            .expect("commitInfo in commit")
    }
}

/// One raw customer change: (customer_id, email, tier, updated_at as seconds, op).
pub type Change<'a> = (Option<i64>, &'a str, &'a str, Option<i64>, &'a str);

impl Lake {
    /// Writes `rows` as the raw file `raw/customers_batch/dt=<day>/<file>`.
    pub fn write_changes(&self, day: &str, file: &str, rows: &[Change<'_>]) {
        use arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
        use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
        use std::sync::Arc;
        let schema = Arc::new(Schema::new(vec![
            Field::new("customer_id", DataType::Int64, true),
            Field::new("email", DataType::Utf8, false),
            Field::new("tier", DataType::Utf8, false),
            Field::new("updated_at", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true),
            Field::new("op", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(rows.iter().map(|r| r.0).collect::<Int64Array>()),
                Arc::new(rows.iter().map(|r| Some(r.1)).collect::<StringArray>()),
                Arc::new(rows.iter().map(|r| Some(r.2)).collect::<StringArray>()),
                Arc::new(
                    rows.iter()
                        .map(|r| r.3.map(|s| s * 1_000_000))
                        .collect::<TimestampMicrosecondArray>()
                        .with_timezone("UTC"),
                ),
                Arc::new(rows.iter().map(|r| Some(r.4)).collect::<StringArray>()),
            ],
        )
        .expect("batch");
        let path = self.root().join("raw/customers_batch").join(format!("dt={day}")).join(file);
        lakewriter_datagen::write_parquet(&path, &batch).expect("write changes");
    }
}

/// The binary with `args` in `cwd`, with no log filter, backtrace setting (errors would carry
/// backtraces), project or root from the caller's environment, and `env` added.
pub fn command(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lakewriter"));
    command
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .env_remove("LAKEWRITER_PROJECT")
        .env_remove("LAKEWRITER_ROOT");
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

/// Runs the binary with `args` in `cwd` (see [`command`]).
pub fn lakewriter(args: &[&str], cwd: &Path) -> Run {
    lakewriter_with(args, cwd, &[])
}

/// Runs the binary with `args` in `cwd` and `env` added.
pub fn lakewriter_with(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    Run::from(&command(args, cwd, env).output().expect("run lakewriter"))
}

/// Waits for a spawned run.
pub fn finish(child: std::process::Child) -> Run {
    Run::from(&child.wait_with_output().expect("wait for lakewriter"))
}

// The project file, from typed parts.

/// A write mode, as the project file names it in `write = "…"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    OverwritePartition,
    DeleteInsert,
    Merge,
    AppendDedup,
    Append,
    Rebuild,
}

impl Mode {
    /// Every write mode.
    pub const ALL: [Mode; 6] =
        [Mode::OverwritePartition, Mode::DeleteInsert, Mode::Merge, Mode::AppendDedup, Mode::Append, Mode::Rebuild];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::OverwritePartition => "overwrite_partition",
            Mode::DeleteInsert => "delete_insert",
            Mode::Merge => "merge",
            Mode::AppendDedup => "append_dedup",
            Mode::Append => "append",
            Mode::Rebuild => "rebuild",
        }
    }
}

/// A job's write mode with its settings (`key`, `newer_by`, `predicate`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    OverwritePartition,
    DeleteInsert {
        predicate: String,
    },
    Merge {
        key: Vec<String>,
        newer_by: String,
        /// `on_duplicate_keys = "error"`; unset, the file leaves the key out (keep the newest).
        duplicate_keys_are_errors: bool,
        delete_when: Option<String>,
    },
    AppendDedup {
        key: Vec<String>,
    },
    Append,
    Rebuild,
}

impl Write {
    /// `write = "merge"` on `key`, newer rows by `newer_by`.
    pub fn merge(key: &[&str], newer_by: &str) -> Self {
        Write::Merge {
            key: key.iter().map(|&c| c.to_owned()).collect(),
            newer_by: newer_by.to_owned(),
            duplicate_keys_are_errors: false,
            delete_when: None,
        }
    }

    /// `write = "delete_insert"` with `predicate`.
    pub fn delete_insert(predicate: &str) -> Self {
        Write::DeleteInsert { predicate: predicate.to_owned() }
    }

    /// `write = "append_dedup"` on `key`.
    pub fn append_dedup(key: &[&str]) -> Self {
        Write::AppendDedup { key: key.iter().map(|&c| c.to_owned()).collect() }
    }

    pub fn mode(&self) -> Mode {
        match self {
            Write::OverwritePartition => Mode::OverwritePartition,
            Write::DeleteInsert { .. } => Mode::DeleteInsert,
            Write::Merge { .. } => Mode::Merge,
            Write::AppendDedup { .. } => Mode::AppendDedup,
            Write::Append => Mode::Append,
            Write::Rebuild => Mode::Rebuild,
        }
    }
}

/// Where a job's SQL comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sql {
    Inline(String),
    /// `sql_file`, relative to the project file.
    File(String),
}

/// One `[jobs.NAME]` table of a [`Project`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    name: String,
    target: String,
    write: Write,
    partition_by: Option<String>,
    sql: Option<Sql>,
    allow_nondeterministic: bool,
}

impl Job {
    /// A job writing `target` with `write = "overwrite_partition"` and `partition_by = "dt"`, as
    /// the README's `daily_orders`. Set its SQL with [`Job::sql`] or [`Job::sql_file`].
    pub fn new(name: &str, target: &str) -> Self {
        Self {
            name: name.to_owned(),
            target: target.to_owned(),
            write: Write::OverwritePartition,
            partition_by: Some("dt".to_owned()),
            sql: None,
            allow_nondeterministic: false,
        }
    }

    /// A job of any mode, without `partition_by`.
    pub fn with_write(name: &str, target: &str, write: Write) -> Self {
        Self { write, partition_by: None, ..Self::new(name, target) }
    }

    /// `write = "merge"` on `key`, newer rows by `newer_by`; without `partition_by`.
    pub fn merge(name: &str, target: &str, key: &[&str], newer_by: &str) -> Self {
        Self::with_write(name, target, Write::merge(key, newer_by))
    }

    /// `write = "delete_insert"` with `predicate`; without `partition_by`.
    pub fn delete_insert(name: &str, target: &str, predicate: &str) -> Self {
        Self::with_write(name, target, Write::delete_insert(predicate))
    }

    /// `write = "append_dedup"` on `key`; without `partition_by`.
    pub fn append_dedup(name: &str, target: &str, key: &[&str]) -> Self {
        Self::with_write(name, target, Write::append_dedup(key))
    }

    /// `write = "append"`; without `partition_by`.
    pub fn append(name: &str, target: &str) -> Self {
        Self::with_write(name, target, Write::Append)
    }

    /// `write = "rebuild"`; without `partition_by`.
    pub fn rebuild(name: &str, target: &str) -> Self {
        Self::with_write(name, target, Write::Rebuild)
    }

    pub fn mode(&self) -> Mode {
        self.write.mode()
    }

    #[must_use]
    pub fn sql(self, sql: impl Into<String>) -> Self {
        Self { sql: Some(Sql::Inline(sql.into())), ..self }
    }

    /// `sql_file = PATH`, relative to the project file.
    #[must_use]
    pub fn sql_file(self, path: &str) -> Self {
        Self { sql: Some(Sql::File(path.to_owned())), ..self }
    }

    #[must_use]
    pub fn partition_by(self, column: &str) -> Self {
        Self { partition_by: Some(column.to_owned()), ..self }
    }

    /// `allow_nondeterministic = true`.
    #[must_use]
    pub fn allow_nondeterministic(self) -> Self {
        Self { allow_nondeterministic: true, ..self }
    }

    /// `delete_when = CONDITION` of a `merge`.
    #[must_use]
    pub fn delete_when(mut self, condition: &str) -> Self {
        match &mut self.write {
            Write::Merge { delete_when, .. } => *delete_when = Some(condition.to_owned()),
            other => panic!("delete_when is a merge setting, not one of {other:?}"),
        }
        self
    }

    /// `on_duplicate_keys = "error"` of a `merge`.
    #[must_use]
    pub fn duplicate_keys_are_errors(mut self) -> Self {
        match &mut self.write {
            Write::Merge { duplicate_keys_are_errors, .. } => *duplicate_keys_are_errors = true,
            other => panic!("on_duplicate_keys is a merge setting, not one of {other:?}"),
        }
        self
    }
}

/// A `lakewriter.toml`, built from typed parts and written with the TOML serializer. A changed
/// project is a new value: `project.clone().job(changed)` replaces the job of that name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    root: String,
    storage: BTreeMap<String, String>,
    jobs: BTreeMap<String, Job>,
    sources: BTreeMap<String, Vec<String>>,
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

impl Project {
    /// `root = "lake"` and nothing else.
    pub fn new() -> Self {
        Self { root: "lake".to_owned(), storage: BTreeMap::new(), jobs: BTreeMap::new(), sources: BTreeMap::new() }
    }

    /// `root = ROOT`: a folder relative to the project file, or a URL.
    #[must_use]
    pub fn root(self, root: &str) -> Self {
        Self { root: root.to_owned(), ..self }
    }

    /// `KEY = VALUE` in `[storage]`.
    #[must_use]
    pub fn storage(mut self, key: &str, value: &str) -> Self {
        self.storage.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Adds `job`, or replaces the job of its name.
    #[must_use]
    pub fn job(mut self, job: Job) -> Self {
        self.jobs.insert(job.name.clone(), job);
        self
    }

    /// `[sources."TABLE"]` with `unique = COLUMNS`.
    #[must_use]
    pub fn source_unique(mut self, table: &str, columns: &[&str]) -> Self {
        self.sources.insert(table.to_owned(), columns.iter().map(|&c| c.to_owned()).collect());
        self
    }

    /// The text of the file.
    pub fn to_toml(&self) -> String {
        let jobs = self.jobs.values().map(|job| (job.name.as_str(), JobTable::of(job))).collect();
        let sources = self.sources.iter().map(|(table, unique)| (table.as_str(), SourceTable { unique })).collect();
        let file = ProjectFile { root: &self.root, storage: &self.storage, jobs, sources };
        toml::to_string(&file).expect("a project serializes as TOML")
    }
}

/// The file's shape, in the order of its keys.
#[derive(Serialize)]
struct ProjectFile<'a> {
    root: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    storage: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    jobs: BTreeMap<&'a str, JobTable<'a>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    sources: BTreeMap<&'a str, SourceTable<'a>>,
}

#[derive(Serialize)]
struct SourceTable<'a> {
    unique: &'a [String],
}

#[derive(Serialize)]
struct JobTable<'a> {
    target: &'a str,
    write: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition_by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    newer_by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    on_duplicate_keys: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delete_when: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    predicate: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    allow_nondeterministic: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    sql: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sql_file: Option<&'a str>,
}

impl<'a> JobTable<'a> {
    fn of(job: &'a Job) -> Self {
        let mut table = JobTable {
            target: &job.target,
            write: job.mode().as_str(),
            partition_by: job.partition_by.as_deref(),
            key: None,
            newer_by: None,
            on_duplicate_keys: None,
            delete_when: None,
            predicate: None,
            allow_nondeterministic: job.allow_nondeterministic,
            sql: None,
            sql_file: None,
        };
        match &job.write {
            Write::Merge { key, newer_by, duplicate_keys_are_errors, delete_when } => {
                table.key = Some(key);
                table.newer_by = Some(newer_by);
                table.on_duplicate_keys = duplicate_keys_are_errors.then_some("error");
                table.delete_when = delete_when.as_deref();
            }
            Write::DeleteInsert { predicate } => table.predicate = Some(predicate),
            Write::AppendDedup { key } => table.key = Some(key),
            Write::OverwritePartition | Write::Append | Write::Rebuild => {}
        }
        match &job.sql {
            Some(Sql::Inline(sql)) => table.sql = Some(sql),
            Some(Sql::File(path)) => table.sql_file = Some(path),
            None => panic!("job `{}` has no SQL: set it with Job::sql or Job::sql_file", job.name),
        }
        table
    }
}
