//! The project file, `lakewriter.toml`: a lakehouse root and its jobs.
//!
//! Parsing is strict: an unknown key, a missing target, an unknown write mode or an ambiguous SQL
//! source is an error that names the file, the job and the key. Nothing here reads files; the
//! caller passes the text and resolves `sql_file`.

mod checks;
mod dialect;
mod job_test;
mod keys;
mod parse;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use url::Url;

use crate::{Error, Result, TableRef};

pub use checks::{Check, CheckKind, CheckOutcome, CheckSeverity, CheckValue, Checks};
pub use dialect::{Dialect, Semantics, TimeZone};
pub use job_test::{Expect, Fixture, Given, Row, TestSpec, Value};
pub use keys::KEYS;

/// The `write` key of a job: how its result is committed to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteMode {
    OverwritePartition,
    Merge,
    DeleteInsert,
    AppendDedup,
    Append,
    Rebuild,
    /// No `write` key: the job's SQL is a statement (`INSERT OVERWRITE … PARTITION`,
    /// `INSERT INTO`, `MERGE INTO`) that decides the write.
    Statement,
}

impl WriteMode {
    /// Every mode, in the order the docs list them (`as_str`'s match, which is exhaustive, is
    /// where a new one is first needed).
    pub const ALL: [Self; 7] = [
        Self::OverwritePartition,
        Self::Merge,
        Self::DeleteInsert,
        Self::AppendDedup,
        Self::Append,
        Self::Rebuild,
        Self::Statement,
    ];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OverwritePartition => "overwrite_partition",
            Self::Merge => "merge",
            Self::DeleteInsert => "delete_insert",
            Self::AppendDedup => "append_dedup",
            Self::Append => "append",
            Self::Rebuild => "rebuild",
            Self::Statement => "statement",
        }
    }
}

impl fmt::Display for WriteMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a `merge` does with several source rows for one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDuplicateKeys {
    /// Keep the row with the greatest `newer_by` (ties: see [`WriteSpec::Merge`]).
    #[default]
    KeepNewest,
    /// Fail the run, naming up to 10 of the duplicated keys.
    Error,
}

/// What a run does with a result whose columns differ from its table's (`on_schema_change`, dbt's
/// names). A column's type never changes: a result with another type than the table's fails the
/// run whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnSchemaChange {
    /// Any difference fails the run, naming each one; nothing is committed.
    #[default]
    Fail,
    /// Columns the table lacks are added (at the end, in the commit of the data); a table column
    /// the result lacks is written as NULL.
    AppendNewColumns,
    /// Columns the table lacks are left out of the write; a table column the result lacks is
    /// written as NULL.
    Ignore,
    /// As [`Self::AppendNewColumns`], and a column the result no longer has is dropped where a
    /// commit leaves no row holding a value of it (a `rebuild`); any other run writes it as NULL, and says so.
    SyncAllColumns,
}

impl OnSchemaChange {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::AppendNewColumns => "append_new_columns",
            Self::Ignore => "ignore",
            Self::SyncAllColumns => "sync_all_columns",
        }
    }
}

impl fmt::Display for OnSchemaChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a run does for a day on which a raw dataset its SQL reads has no file (`on_missing_input`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMissingInput {
    /// The run fails, naming the dataset and the day: a day whose data has not arrived is not
    /// written as a day without rows; `status` and `plan` show it as `no input`.
    #[default]
    Fail,
    /// The run writes what its SQL computes from the other inputs (no rows, where it reads only
    /// that one): for jobs where a day without input is a day without rows.
    Empty,
}

impl OnMissingInput {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::Empty => "empty",
        }
    }
}

impl fmt::Display for OnMissingInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A write mode with its settings, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteSpec {
    /// Replace the partition `partition_by = $dt` (Delta replaceWhere).
    OverwritePartition,
    /// Newer-wins upsert on `key`. The source is deduplicated first: per key the row with the
    /// greatest `newer_by` wins; ties are broken by the greatest value of each other column, in
    /// column order. With `delete_when`, rows matching it become tombstones (`_deleted = true`).
    Merge { key: Vec<String>, newer_by: String, on_duplicate_keys: OnDuplicateKeys, delete_when: Option<String> },
    /// Delete the rows matching `predicate` (SQL over target columns, may use `$dt`) and insert
    /// the result, whose rows must all match it.
    DeleteInsert { predicate: String },
    /// Insert the rows whose `key` is not in the target yet: within `window` of each row's own value
    /// where it has one, else anywhere in the table.
    AppendDedup { key: Vec<String>, window: Option<DedupWindow> },
    /// Append once per (job, partition), guarded by a Delta application transaction.
    Append,
    /// Replace the whole table; runs without a partition.
    Rebuild,
    /// The job's SQL is a statement that decides the write (read by the runner, which knows SQL):
    /// `INSERT OVERWRITE t PARTITION (c = $dt) …` replaces the partition as
    /// `overwrite_partition` does, `INSERT INTO t …` appends once per partition as `append`
    /// does, `MERGE INTO t …` merges as written. It runs for a date.
    Statement,
}

/// `dedup_window`: the target rows an `append_dedup` run checks each row's key against — those
/// whose `column` (a date, or a timestamp read as its date) is within `days` days of the row's own
/// value in it, on either side — so that its cost is bounded by the window, not the table. A key
/// seen only outside the window is appended again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DedupWindow {
    pub days: u32,
    /// The target column the days are counted in: `dedup_window_column`, else `partition_by`.
    pub column: String,
}

impl WriteSpec {
    #[must_use]
    pub fn mode(&self) -> WriteMode {
        match self {
            Self::OverwritePartition => WriteMode::OverwritePartition,
            Self::Merge { .. } => WriteMode::Merge,
            Self::DeleteInsert { .. } => WriteMode::DeleteInsert,
            Self::AppendDedup { .. } => WriteMode::AppendDedup,
            Self::Append => WriteMode::Append,
            Self::Rebuild => WriteMode::Rebuild,
            Self::Statement => WriteMode::Statement,
        }
    }
}

/// Where a job's SQL comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlSource {
    Inline(String),
    /// A file, already resolved against the project file's folder.
    File(PathBuf),
}

/// One job of the project, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub target: TableRef,
    pub write: WriteSpec,
    /// The table's partition column: the slice `overwrite_partition` replaces, and for every
    /// mode the partitioning of a table the job creates.
    pub partition_by: Option<String>,
    pub sql: SqlSource,
    /// `allow_nondeterministic = true`: the job may call clock-dependent or random functions
    /// (`now()`, `random()`, …); the determinism check then lets it run.
    pub allow_nondeterministic: bool,
    /// `not_null = ["col", …]`: the columns the job declares NOT NULL. A table the job creates
    /// has every other column nullable (as Spark's CREATE TABLE AS SELECT makes them), these NOT
    /// NULL; and a run whose result has a NULL in one of them fails before it writes.
    pub not_null: Vec<String>,
    /// `on_schema_change`: what a run does with a result whose columns differ from the table's.
    pub on_schema_change: OnSchemaChange,
    /// `on_missing_input`: what a run does for a day on which a raw dataset it reads has no file.
    pub on_missing_input: OnMissingInput,
    /// The job's `dialect` (else the project's) and the project's `ansi`.
    pub semantics: Semantics,
    /// `[jobs.NAME.checks]`: what each result must satisfy before it is committed.
    pub checks: Checks,
    /// `input_size_warning` (`rebuild`): the input size in bytes past which `status` notes that
    /// each run reads it all.
    pub input_size_warning: Option<u64>,
    /// `cluster_by = ["col", …]` (`merge`, `append_dedup`): the columns the table's files are
    /// sorted by, so that each file holds a narrow range of them; a merge then rewrites only the
    /// files whose range of the first one holds a key of its batch (where that column is part of
    /// the key), and `maintain` re-sorts files whose ranges overlap. Empty: no clustering.
    pub cluster_by: Vec<String>,
    /// `target_file_size` (`merge`, `append_dedup`): the `delta.targetFileSize` of a table the
    /// job creates — the size its files, a merge's and compaction's too, are cut at (delta-rs's
    /// 100 MiB without it). A clustered table of many narrower files lets a merge rewrite less.
    pub target_file_size: Option<u64>,
}

impl JobSpec {
    /// A hash of what decides the job's output besides its inputs: [`JobSpec::fingerprinted`].
    #[must_use]
    pub fn code_fingerprint(&self, sql: &str) -> String {
        crate::stable_hash(self.fingerprinted(sql).as_bytes())
    }

    /// What the code fingerprint hashes: the SQL text with runs of white space folded, the write
    /// settings, and — where the SQL has a number literal with a fraction or an exponent, whose
    /// type they decide — the SQL settings lakewriter plans with ([`crate::SQL_SETTINGS`]).
    /// Editing any of them changes it; SQL without such a literal keeps the fingerprint it had
    /// before the settings existed. `allow_nondeterministic`, the checks, `not_null`,
    /// `on_schema_change` and `on_missing_input` are left out: they permit or stop a commit, they
    /// do not change the rows it writes (`not_null` shapes only a table the job creates, and a run over an existing table
    /// does not change its columns: a fingerprint that counted it would call every partition stale
    /// where no run could make it fresh; `on_schema_change` lets a changed result's columns in,
    /// and the SQL edit that changed them is what makes the partitions stale). `cluster_by` and
    /// `target_file_size` are left out too: they decide where rows are, not which.
    #[must_use]
    pub fn fingerprinted(&self, sql: &str) -> String {
        let folded = sql.split_whitespace().collect::<Vec<_>>().join(" ");
        // An append_dedup without a window keeps the fingerprint it had before windows existed.
        let write = match &self.write {
            WriteSpec::AppendDedup { key, window: None } => format!("AppendDedup {{ key: {key:?} }}"),
            write => format!("{write:?}"),
        };
        let mut settings = format!("{}|{:?}|{write}", self.target, self.partition_by);
        if let Some(semantics) = self.semantics.fingerprinted() {
            settings = format!("{settings}|{semantics}");
        }
        if !has_fractional_literal(sql) {
            return format!("{folded}\n{settings}");
        }
        let dialect: Vec<String> = crate::SQL_SETTINGS.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{folded}\n{settings}\n{}", dialect.join(","))
    }

    /// The logical partition of `dt` in reports and commits: `order_date=2026-09-30` (the job's
    /// `partition_by`) where the job writes the table partition of that day — `overwrite_partition`;
    /// a statement, whose kind its SQL tells (`lakewriter::Job::partition` reads it), is taken for
    /// an `INSERT OVERWRITE … PARTITION` —, else `dt=2026-09-30`; `all` for a run without a date.
    /// Either name is the same day (see [`crate::PartitionKey`]).
    #[must_use]
    pub fn partition_key(&self, dt: Option<chrono::NaiveDate>) -> crate::PartitionKey {
        let writes_the_day = matches!(self.write, WriteSpec::OverwritePartition | WriteSpec::Statement);
        crate::PartitionKey::of(self.partition_by.as_deref().filter(|_| writes_the_day), dt)
    }
}

/// A parsed project file.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The project file this was read from.
    pub file: PathBuf,
    /// The lakehouse root as written: a path (relative to the project file) or a URL.
    pub root: String,
    /// The `[storage]` table: object-store options, values possibly `${VAR}` references.
    pub storage: BTreeMap<String, String>,
    /// `dialect` and `ansi`: the SQL of `lakewriter sql` and of the jobs that set no `dialect`.
    pub semantics: Semantics,
    /// `[engine] url`: where partitions' queries run — `local` or `df://HOST:PORT` — unless
    /// `--engine` or `LAKEWRITER_ENGINE` says otherwise; `None`: not set.
    pub engine: Option<String>,
    pub jobs: BTreeMap<String, JobSpec>,
    /// The `[sources."schema.table"]` tables: what is declared about the tables jobs read.
    pub sources: BTreeMap<TableRef, SourceSpec>,
    /// The `[tests.NAME]` tables: the jobs' tests on fixtures (`lakewriter test`).
    pub tests: BTreeMap<String, TestSpec>,
}

/// What the project file declares about a source table (`[sources."raw.orders"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    /// `unique = ["order_id"]`: these columns together are unique in the table, so an ordering
    /// by all of them is total.
    pub unique: Vec<String>,
}

impl Project {
    /// The job called `name`, or an error that lists the jobs there are.
    pub fn job(&self, name: &str) -> Result<&JobSpec> {
        self.jobs.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.jobs.keys().map(String::as_str).collect();
            Error::Config {
                file: self.file.clone(),
                message: if known.is_empty() {
                    format!("no job `{name}`: the file defines no jobs")
                } else {
                    format!("no job `{name}`; jobs here: {}", known.join(", "))
                },
            }
        })
    }

    /// The lakehouse root as a directory URL. A relative path is taken relative to `base_dir`,
    /// which must be absolute (the project file's folder).
    pub fn root_url(&self, base_dir: &Path) -> Result<Url> {
        root_url(&self.root, base_dir)
            .map_err(|message| Error::Config { file: self.file.clone(), message: format!("key `root`: {message}") })
    }
}

/// A lakehouse root — a path (relative to `base_dir`, which must be absolute) or a URL such as
/// `s3://bucket/prefix` — as a directory URL. The error says what is wrong with it.
pub fn root_url(root: &str, base_dir: &Path) -> Result<Url, String> {
    let root = root.trim();
    let mut url = if root.contains("://") {
        Url::parse(root).map_err(|e| format!("`{root}` is not a valid URL: {e}"))?
    } else {
        let path = base_dir.join(root);
        let url =
            Url::from_directory_path(&path).map_err(|()| format!("`{}` is not an absolute folder", path.display()))?;
        // Parsed again, `.` and `..` segments are resolved.
        Url::parse(url.as_str()).map_err(|e| format!("`{root}` is not a valid folder: {e}"))?
    };
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    Ok(url)
}

/// Whether `s` can name a job or a test: letters, digits, `_` and `-`.
fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Whether `sql` has a number literal with a fraction or an exponent (`1.5`, `1e3`): a `DECIMAL`
/// under [`crate::SQL_SETTINGS`], a `DOUBLE` under DataFusion's defaults. SQL that does not
/// tokenize counts as having one.
fn has_fractional_literal(sql: &str) -> bool {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::tokenizer::{Token, Tokenizer};
    Tokenizer::new(&GenericDialect {}, sql)
        .tokenize()
        .map_or(true, |tokens| tokens.iter().any(|t| matches!(t, Token::Number(n, _) if n.contains(['.', 'e', 'E']))))
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
