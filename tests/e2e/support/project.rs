//! The project file, built from typed parts and written with the TOML serializer.

use std::collections::BTreeMap;

use serde::Serialize;

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
