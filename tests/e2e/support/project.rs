//! The project file, built from typed parts and written with the TOML serializer: every write
//! mode and jobs written as a statement, with `partition_by`, `not_null`,
//! `allow_nondeterministic` and `[jobs.NAME.checks]`, and `[sources]`. A write mode is the
//! parser's [`WriteMode`]; [`WRITE_MODES`] are those a job names with `write = "…"`.

use std::collections::BTreeMap;

use serde::Serialize;

/// A job's write mode: the parser's own type, whose `as_str` is the name `write = "…"` gives.
pub use lakewriter_core::WriteMode;

/// Every mode a job names with `write = "…"` (all but [`WriteMode::Statement`], whose job has no
/// `write` key), in the order the scenarios walk them: the seeded trials pick a mode by index.
pub const WRITE_MODES: [WriteMode; 6] = [
    WriteMode::OverwritePartition,
    WriteMode::DeleteInsert,
    WriteMode::Merge,
    WriteMode::AppendDedup,
    WriteMode::Append,
    WriteMode::Rebuild,
];

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
    /// No `write` key: the job's SQL is a statement (`INSERT OVERWRITE … PARTITION (c = $dt)`,
    /// `INSERT INTO`, `MERGE INTO`).
    Statement,
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

    /// The mode `write = "…"` names; `None` for a statement, which has no `write` key.
    pub fn mode(&self) -> Option<WriteMode> {
        match self {
            Write::OverwritePartition => Some(WriteMode::OverwritePartition),
            Write::DeleteInsert { .. } => Some(WriteMode::DeleteInsert),
            Write::Merge { .. } => Some(WriteMode::Merge),
            Write::AppendDedup { .. } => Some(WriteMode::AppendDedup),
            Write::Append => Some(WriteMode::Append),
            Write::Rebuild => Some(WriteMode::Rebuild),
            Write::Statement => None,
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
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    name: String,
    target: String,
    write: Write,
    partition_by: Option<String>,
    sql: Option<Sql>,
    allow_nondeterministic: bool,
    not_null: Vec<String>,
    on_schema_change: Option<&'static str>,
    on_missing_input: Option<&'static str>,
    /// `dedup_window` and `dedup_window_column`.
    dedup_window: (Option<&'static str>, Option<&'static str>),
    cluster_by: Vec<String>,
    target_file_size: Option<&'static str>,
    checks: Option<Checks>,
    /// `dialect`, where the job names one.
    dialect: Option<&'static str>,
}

impl Job {
    /// A job writing `target` with `write = "overwrite_partition"` and `partition_by = "dt"`, as
    /// the guide's `daily_orders` (docs/guide/concepts.md). Set its SQL with [`Job::sql`] or [`Job::sql_file`].
    pub fn new(name: &str, target: &str) -> Self {
        Self {
            name: name.to_owned(),
            target: target.to_owned(),
            write: Write::OverwritePartition,
            partition_by: Some("dt".to_owned()),
            sql: None,
            allow_nondeterministic: false,
            not_null: Vec::new(),
            on_schema_change: None,
            on_missing_input: None,
            dedup_window: (None, None),
            cluster_by: Vec::new(),
            target_file_size: None,
            checks: None,
            dialect: None,
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

    /// A job written as `statement`: no `write` key, and the statement as its `sql`.
    pub fn statement(name: &str, target: &str, statement: &str) -> Self {
        Self::with_write(name, target, Write::Statement).sql(statement)
    }

    /// `dialect = "datafusion"`: SQL written for Apache DataFusion (its integer `/`, `arrow_cast`,
    /// `now()`), where the default is Spark's.
    #[must_use]
    pub fn datafusion(self) -> Self {
        Self { dialect: Some("datafusion"), ..self }
    }

    /// `not_null = COLUMNS`: the columns the table's schema declares NOT NULL.
    #[must_use]
    pub fn not_null(self, columns: &[&str]) -> Self {
        Self { not_null: columns.iter().map(|&c| c.to_owned()).collect(), ..self }
    }

    /// `on_schema_change = POLICY` (`append_new_columns`, `ignore`, `sync_all_columns`, `fail`).
    #[must_use]
    pub fn on_schema_change(self, policy: &'static str) -> Self {
        Self { on_schema_change: Some(policy), ..self }
    }

    /// `on_missing_input = POLICY` (`fail`, `empty`).
    #[must_use]
    pub fn on_missing_input(self, policy: &'static str) -> Self {
        Self { on_missing_input: Some(policy), ..self }
    }

    /// `dedup_window = WINDOW` (`"7 days"`), and `dedup_window_column = COLUMN` where given.
    #[must_use]
    pub fn dedup_window(self, window: &'static str, column: Option<&'static str>) -> Self {
        Self { dedup_window: (Some(window), column), ..self }
    }

    /// `cluster_by = COLUMNS`.
    #[must_use]
    pub fn cluster_by(self, columns: &[&str]) -> Self {
        Self { cluster_by: columns.iter().map(|&c| c.to_owned()).collect(), ..self }
    }

    /// `target_file_size = SIZE`.
    #[must_use]
    pub fn target_file_size(self, size: &'static str) -> Self {
        Self { target_file_size: Some(size), ..self }
    }

    /// `[jobs.NAME.checks]`.
    #[must_use]
    pub fn checks(self, checks: Checks) -> Self {
        Self { checks: Some(checks), ..self }
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
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The top-level `dialect`, where the project names one.
    dialect: Option<&'static str>,
    root: String,
    storage: BTreeMap<String, String>,
    jobs: BTreeMap<String, Job>,
    sources: BTreeMap<String, Vec<String>>,
    tests: BTreeMap<String, super::job_test::JobTest>,
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

impl Project {
    /// `root = "lake"` and nothing else.
    pub fn new() -> Self {
        let (storage, jobs, sources, tests) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        Self { dialect: None, root: "lake".to_owned(), storage, jobs, sources, tests }
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

    /// `dialect = "datafusion"` at the top: every job and `lakewriter sql` in DataFusion's SQL
    /// (see [`Job::datafusion`]).
    #[must_use]
    pub fn all_datafusion(self) -> Self {
        Self { dialect: Some("datafusion"), ..self }
    }

    /// `[sources."TABLE"]` with `unique = COLUMNS`.
    #[must_use]
    pub fn source_unique(mut self, table: &str, columns: &[&str]) -> Self {
        self.sources.insert(table.to_owned(), columns.iter().map(|&c| c.to_owned()).collect());
        self
    }

    /// `[tests.NAME]`: adds `test`, or replaces the test of that name.
    #[must_use]
    pub fn test(mut self, name: &str, test: super::job_test::JobTest) -> Self {
        self.tests.insert(name.to_owned(), test);
        self
    }

    /// This project with job `name` changed by `change`.
    #[track_caller]
    fn with_job(mut self, name: &str, change: impl FnOnce(Job) -> Job) -> Self {
        let job = self.jobs.remove(name).unwrap_or_else(|| panic!("no job `{name}`"));
        self.job(change(job))
    }

    /// This project with the checks of job `name` set to `checks`.
    #[must_use]
    #[track_caller]
    pub fn with_checks(self, name: &str, checks: Checks) -> Self {
        self.with_job(name, |job| job.checks(checks))
    }

    /// This project with `on_schema_change = POLICY` for job `name`.
    #[must_use]
    #[track_caller]
    pub fn with_schema_change(self, name: &str, policy: &'static str) -> Self {
        self.with_job(name, |job| job.on_schema_change(policy))
    }

    /// This project with `on_missing_input = POLICY` for job `name`.
    #[must_use]
    #[track_caller]
    pub fn with_missing_input(self, name: &str, policy: &'static str) -> Self {
        self.with_job(name, |job| job.on_missing_input(policy))
    }

    /// This project with the one occurrence of `from` in the SQL of job `name` replaced by `to`
    /// (see [`edited`](super::edited)).
    #[must_use]
    #[track_caller]
    pub fn edited_sql(mut self, name: &str, from: &str, to: &str) -> Self {
        let job = self.jobs.get_mut(name).unwrap_or_else(|| panic!("no job `{name}`"));
        match &mut job.sql {
            Some(Sql::Inline(sql)) => *sql = super::edited(sql, from, to),
            other => panic!("job `{name}` has no inline SQL: {other:?}"),
        }
        self
    }

    /// The text of the file.
    pub fn to_toml(&self) -> String {
        let jobs = self.jobs.values().map(|job| (job.name.as_str(), JobTable::of(job))).collect();
        let sources = self.sources.iter().map(|(table, unique)| (table.as_str(), SourceTable { unique })).collect();
        let file = ProjectFile {
            dialect: self.dialect,
            root: &self.root,
            storage: &self.storage,
            jobs,
            sources,
            tests: &self.tests,
        };
        toml::to_string(&file).expect("a project serializes as TOML")
    }
}

/// The file's shape, in the order of its keys.
#[derive(Serialize)]
struct ProjectFile<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    dialect: Option<&'static str>,
    root: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    storage: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    jobs: BTreeMap<&'a str, JobTable<'a>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    sources: BTreeMap<&'a str, SourceTable<'a>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    tests: &'a BTreeMap<String, super::job_test::JobTest>,
}

#[derive(Serialize)]
struct SourceTable<'a> {
    unique: &'a [String],
}

#[derive(Serialize)]
struct JobTable<'a> {
    target: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    write: Option<&'static str>,
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
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    not_null: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    on_schema_change: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    on_missing_input: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dedup_window: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dedup_window_column: Option<&'static str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    cluster_by: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    target_file_size: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dialect: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sql: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sql_file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<&'a Checks>,
}

impl<'a> JobTable<'a> {
    fn of(job: &'a Job) -> Self {
        let mut table = JobTable {
            target: &job.target,
            write: job.write.mode().map(WriteMode::as_str),
            partition_by: job.partition_by.as_deref(),
            key: None,
            newer_by: None,
            on_duplicate_keys: None,
            delete_when: None,
            predicate: None,
            allow_nondeterministic: job.allow_nondeterministic,
            not_null: &job.not_null,
            on_schema_change: job.on_schema_change,
            on_missing_input: job.on_missing_input,
            dedup_window: job.dedup_window.0,
            dedup_window_column: job.dedup_window.1,
            cluster_by: &job.cluster_by,
            target_file_size: job.target_file_size,
            sql: None,
            sql_file: None,
            dialect: job.dialect,
            checks: job.checks.as_ref(),
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
            Write::OverwritePartition | Write::Append | Write::Rebuild | Write::Statement => {}
        }
        match &job.sql {
            Some(Sql::Inline(sql)) => table.sql = Some(sql),
            Some(Sql::File(path)) => table.sql_file = Some(path),
            None => panic!("job `{}` has no SQL: set it with Job::sql or Job::sql_file", job.name),
        }
        table
    }
}

/// A job's `[jobs.NAME.checks]`: each kind of check, and the checks that only warn.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Checks {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_null: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unique: Vec<Vec<String>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    accepted_values: BTreeMap<String, Vec<toml::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    row_count: Option<RowCount>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    expect: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    change_vs_previous: Option<ChangeVsPrevious>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warn: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct RowCount {
    #[serde(skip_serializing_if = "Option::is_none")]
    min: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct ChangeVsPrevious {
    max_row_count_change_pct: f64,
}

impl Checks {
    pub fn new() -> Self {
        Self::default()
    }

    /// `not_null = [.., COLUMN]`.
    #[must_use]
    pub fn not_null(mut self, column: &str) -> Self {
        self.not_null.push(column.to_owned());
        self
    }

    /// `unique = [.., COLUMNS]`: the columns unique together.
    #[must_use]
    pub fn unique(mut self, columns: &[&str]) -> Self {
        self.unique.push(columns.iter().map(|&c| c.to_owned()).collect());
        self
    }

    /// `accepted_values = { COLUMN = VALUES }`.
    #[must_use]
    pub fn accepted_values<V: Into<toml::Value> + Clone>(mut self, column: &str, values: &[V]) -> Self {
        self.accepted_values.insert(column.to_owned(), values.iter().cloned().map(Into::into).collect());
        self
    }

    /// `row_count = { min = MIN, max = MAX }`, each bound where given.
    #[must_use]
    pub fn row_count(self, min: Option<u64>, max: Option<u64>) -> Self {
        Self { row_count: Some(RowCount { min, max }), ..self }
    }

    /// `expect = [.., CONDITION]`.
    #[must_use]
    pub fn expect(mut self, condition: &str) -> Self {
        self.expect.push(condition.to_owned());
        self
    }

    /// `change_vs_previous = { max_row_count_change_pct = PCT }`.
    #[must_use]
    pub fn change_vs_previous(self, max_row_count_change_pct: f64) -> Self {
        Self { change_vs_previous: Some(ChangeVsPrevious { max_row_count_change_pct }), ..self }
    }

    /// `warn = [.., CHECK]`: a check (or a kind of check) that warns rather than blocks.
    #[must_use]
    pub fn warn(mut self, check: &str) -> Self {
        self.warn.push(check.to_owned());
        self
    }
}
