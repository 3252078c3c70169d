//! The project file, `lakewriter.toml`: a lakehouse root and its jobs.
//!
//! Parsing is strict: an unknown key, a missing target, an unknown write mode or an ambiguous SQL
//! source is an error that names the file, the job and the key. Nothing here reads files; the
//! caller passes the text and resolves `sql_file`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use url::Url;

use crate::{Error, Result, TableRef};

/// The `write` key of a job: how its result is committed to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteMode {
    OverwritePartition,
    Merge,
    DeleteInsert,
    AppendDedup,
    Append,
    Rebuild,
}

impl WriteMode {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OverwritePartition => "overwrite_partition",
            Self::Merge => "merge",
            Self::DeleteInsert => "delete_insert",
            Self::AppendDedup => "append_dedup",
            Self::Append => "append",
            Self::Rebuild => "rebuild",
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
    /// Insert the rows whose `key` is not in the target yet.
    AppendDedup { key: Vec<String> },
    /// Append once per (job, partition), guarded by a Delta application transaction.
    Append,
    /// Replace the whole table; runs without a partition.
    Rebuild,
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
        }
    }

    /// Whether a run needs a logical date (`--dt`): every mode but `rebuild`.
    #[must_use]
    pub fn needs_partition(&self) -> bool {
        !matches!(self, Self::Rebuild)
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl JobSpec {
    /// A hash of what decides the job's output besides its inputs: the SQL text with runs of
    /// white space folded, and the write settings. Editing either changes it.
    /// `allow_nondeterministic` is left out: it permits a run, it does not change its output.
    #[must_use]
    pub fn code_fingerprint(&self, sql: &str) -> String {
        let sql: Vec<&str> = sql.split_whitespace().collect();
        let settings = format!("{}|{:?}|{:?}", self.target, self.partition_by, self.write);
        crate::stable_hash(format!("{}\n{settings}", sql.join(" ")).as_bytes())
    }

    /// The logical partition of `dt` in reports and commits: `dt=2026-09-30` (with the job's
    /// `partition_by` column, `dt` where it has none), `all` for a run without a date.
    #[must_use]
    pub fn partition_key(&self, dt: Option<chrono::NaiveDate>) -> crate::PartitionKey {
        crate::PartitionKey::of(self.partition_by.as_deref(), dt)
    }
}

/// A parsed project file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The project file this was read from.
    pub file: PathBuf,
    /// The lakehouse root as written: a path (relative to the project file) or a URL.
    pub root: String,
    /// The `[storage]` table: object-store options, values possibly `${VAR}` references.
    pub storage: BTreeMap<String, String>,
    pub jobs: BTreeMap<String, JobSpec>,
    /// The `[sources."schema.table"]` tables: what is declared about the tables jobs read.
    pub sources: BTreeMap<TableRef, SourceSpec>,
}

/// What the project file declares about a source table (`[sources."raw.orders"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    /// `unique = ["order_id"]`: these columns together are unique in the table, so an ordering
    /// by all of them is total.
    pub unique: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    unique: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProject {
    root: String,
    #[serde(default)]
    storage: BTreeMap<String, String>,
    #[serde(default)]
    jobs: BTreeMap<String, toml::Value>,
    #[serde(default)]
    sources: BTreeMap<String, toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    target: String,
    write: WriteMode,
    partition_by: Option<String>,
    sql: Option<String>,
    sql_file: Option<PathBuf>,
    key: Option<Vec<String>>,
    newer_by: Option<String>,
    on_duplicate_keys: Option<OnDuplicateKeys>,
    delete_when: Option<String>,
    predicate: Option<String>,
    #[serde(default)]
    allow_nondeterministic: bool,
}

impl RawJob {
    /// The mode-specific keys that are set, by name.
    fn mode_keys(&self) -> Vec<&'static str> {
        [
            ("key", self.key.is_some()),
            ("newer_by", self.newer_by.is_some()),
            ("on_duplicate_keys", self.on_duplicate_keys.is_some()),
            ("delete_when", self.delete_when.is_some()),
            ("predicate", self.predicate.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }

    /// Builds the write spec, refusing missing settings and settings of another mode.
    fn write_spec(self) -> Result<WriteSpec, String> {
        let mode = self.write;
        let allowed: &[&str] = match mode {
            WriteMode::Merge => &["key", "newer_by", "on_duplicate_keys", "delete_when"],
            WriteMode::DeleteInsert => &["predicate"],
            WriteMode::AppendDedup => &["key"],
            WriteMode::OverwritePartition | WriteMode::Append | WriteMode::Rebuild => &[],
        };
        if let Some(extra) = self.mode_keys().into_iter().find(|k| !allowed.contains(k)) {
            return Err(format!("key `{extra}` does not apply to write = \"{mode}\""));
        }
        let missing = |key: &str| format!("missing key `{key}` (required by write = \"{mode}\")");
        let columns = |key: Option<Vec<String>>| -> Result<Vec<String>, String> {
            let key = key.ok_or_else(|| missing("key"))?;
            if key.is_empty() {
                return Err("key `key` is empty: name the business key's columns".into());
            }
            if let Some(bad) = key.iter().find(|c| !is_column(c)) {
                return Err(format!("key `key`: `{bad}` is not a column name"));
            }
            Ok(key)
        };
        Ok(match mode {
            WriteMode::OverwritePartition => {
                if self.partition_by.is_none() {
                    return Err(missing("partition_by"));
                }
                WriteSpec::OverwritePartition
            }
            WriteMode::Merge => {
                let key = columns(self.key)?;
                let newer_by = self.newer_by.ok_or_else(|| missing("newer_by"))?;
                if !is_column(&newer_by) {
                    return Err(format!("key `newer_by`: `{newer_by}` is not a column name"));
                }
                if key.contains(&newer_by) {
                    return Err(format!("key `newer_by`: `{newer_by}` is part of the key"));
                }
                let delete_when = match self.delete_when {
                    Some(cond) if cond.trim().is_empty() => return Err("key `delete_when` is empty".into()),
                    other => other,
                };
                WriteSpec::Merge {
                    key,
                    newer_by,
                    on_duplicate_keys: self.on_duplicate_keys.unwrap_or_default(),
                    delete_when,
                }
            }
            WriteMode::DeleteInsert => match self.predicate {
                Some(p) if !p.trim().is_empty() => WriteSpec::DeleteInsert { predicate: p },
                Some(_) => return Err("key `predicate` is empty".into()),
                None => return Err(missing("predicate")),
            },
            WriteMode::AppendDedup => WriteSpec::AppendDedup { key: columns(self.key)? },
            WriteMode::Append => WriteSpec::Append,
            WriteMode::Rebuild => WriteSpec::Rebuild,
        })
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn is_column(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Project {
    /// Parses the text of a project file. `file` names it in errors and anchors relative paths.
    pub fn parse(text: &str, file: &Path) -> Result<Self> {
        let config_err = |message: String| Error::Config { file: file.to_path_buf(), message };
        let raw: RawProject = toml::from_str(text).map_err(|e| config_err(e.to_string().trim_end().to_owned()))?;
        if raw.root.trim().is_empty() {
            return Err(config_err("`root` is empty: set it to a folder or a URL".into()));
        }
        let base = file.parent().unwrap_or(Path::new(""));
        let mut jobs = BTreeMap::new();
        for (name, value) in raw.jobs {
            let job_err = |message: String| config_err(format!("job `{name}`: {message}"));
            if !is_name(&name) {
                return Err(job_err("a job name may contain only letters, digits, `_` and `-`".into()));
            }
            let mut job = RawJob::deserialize(value).map_err(|e| job_err(e.to_string().trim_end().to_owned()))?;
            let target = TableRef::parse(&job.target).map_err(|e| job_err(format!("key `target`: {e}")))?;
            let sql = match (job.sql.take(), job.sql_file.take()) {
                (Some(sql), None) if !sql.trim().is_empty() => SqlSource::Inline(sql),
                (Some(_), None) => return Err(job_err("key `sql` is empty".into())),
                (None, Some(path)) => SqlSource::File(base.join(path)),
                (Some(_), Some(_)) => return Err(job_err("set either `sql` or `sql_file`, not both".into())),
                (None, None) => return Err(job_err("missing key `sql` (or `sql_file`)".into())),
            };
            let partition_by = job.partition_by.clone();
            if let Some(col) = partition_by.as_deref().filter(|c| !is_column(c)) {
                return Err(job_err(format!("key `partition_by`: `{col}` is not a column name")));
            }
            let allow_nondeterministic = job.allow_nondeterministic;
            let write = job.write_spec().map_err(job_err)?;
            jobs.insert(name.clone(), JobSpec { name, target, write, partition_by, sql, allow_nondeterministic });
        }
        let mut sources = BTreeMap::new();
        for (name, value) in raw.sources {
            let source_err = |message: String| config_err(format!("source `{name}`: {message}"));
            let table = TableRef::parse(&name).map_err(|e| source_err(e.to_string()))?;
            let source = RawSource::deserialize(value).map_err(|e| source_err(e.to_string().trim_end().to_owned()))?;
            if source.unique.is_empty() {
                return Err(source_err("key `unique` is empty: name the columns that are unique together".into()));
            }
            if let Some(bad) = source.unique.iter().find(|c| !is_column(c)) {
                return Err(source_err(format!("key `unique`: `{bad}` is not a column name")));
            }
            sources.insert(table, SourceSpec { unique: source.unique });
        }
        Ok(Self { file: file.to_path_buf(), root: raw.root, storage: raw.storage, jobs, sources })
    }

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
        Url::from_directory_path(&path).map_err(|()| format!("`{}` is not an absolute folder", path.display()))?
    };
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
root = "lake"

[jobs.daily_orders]
target = "analytics.daily_orders"
write = "overwrite_partition"
partition_by = "dt"
sql = "SELECT 1 AS x, $dt AS dt"

[jobs.from_file]
target = "analytics.other"
write = "overwrite_partition"
partition_by = "dt"
sql_file = "jobs/other.sql"
"#;

    fn parse(text: &str) -> Result<Project> {
        Project::parse(text, Path::new("/p/lakewriter.toml"))
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_jobs() {
        let p = parse(GOOD).unwrap();
        let job = p.job("daily_orders").unwrap();
        assert_eq!(job.target.to_string(), "analytics.daily_orders");
        assert_eq!(job.write, WriteSpec::OverwritePartition);
        assert_eq!(job.partition_by.as_deref(), Some("dt"));
        assert_eq!(job.partition_key(crate::parse_date("2026-09-30").ok()).to_string(), "dt=2026-09-30");
        assert_eq!(job.partition_key(None), crate::PartitionKey::All);
        assert_eq!(p.job("from_file").unwrap().sql, SqlSource::File("/p/jobs/other.sql".into()));
        assert_eq!(p.root_url(Path::new("/p")).unwrap().as_str(), "file:///p/lake/");
        let abs = parse(&GOOD.replace("\"lake\"", "\"/data/lake\"")).unwrap();
        assert_eq!(abs.root_url(Path::new("/p")).unwrap().as_str(), "file:///data/lake/");
        let s3 = parse(&GOOD.replace("\"lake\"", "\"s3://bucket/prefix\"")).unwrap();
        assert_eq!(s3.root_url(Path::new("/p")).unwrap().as_str(), "s3://bucket/prefix/");
    }

    #[test]
    fn unknown_job_lists_the_known_ones() {
        let e = parse(GOOD).unwrap().job("nope").unwrap_err().to_string();
        assert_eq!(e, "/p/lakewriter.toml: no job `nope`; jobs here: daily_orders, from_file");
    }

    #[test]
    fn config_errors_name_file_job_and_key() {
        let e =
            err(&GOOD.replace("write = \"overwrite_partition\"\npartition_by = \"dt\"\nsql = ", "wirte = 1\nsql = "));
        assert!(e.starts_with("/p/lakewriter.toml: job `daily_orders`:"), "{e}");
        assert!(e.contains("unknown field `wirte`"), "{e}");

        let e = err(&GOOD.replace("target = \"analytics.daily_orders\"\n", ""));
        assert!(e.contains("job `daily_orders`") && e.contains("missing field `target`"), "{e}");

        let e = err(&GOOD.replacen("\"overwrite_partition\"", "\"upsert\"", 1));
        assert!(e.contains("job `daily_orders`") && e.contains("unknown variant `upsert`"), "{e}");

        let e = err(&GOOD.replacen("partition_by = \"dt\"\n", "", 1));
        assert!(e.contains("job `daily_orders`: missing key `partition_by`"), "{e}");

        let e = err(&GOOD.replacen("\"analytics.daily_orders\"", "\"daily_orders\"", 1));
        assert!(e.contains("job `daily_orders`: key `target`: invalid table name `daily_orders`"), "{e}");

        let e = err(&GOOD.replacen("sql = \"SELECT 1 AS x, $dt AS dt\"", "", 1));
        assert!(e.contains("job `daily_orders`: missing key `sql`"), "{e}");

        let e = err(&GOOD.replacen("sql_file = \"jobs/other.sql\"", "sql_file = \"x\"\nsql = \"SELECT 1\"", 1));
        assert!(e.contains("job `from_file`: set either `sql` or `sql_file`"), "{e}");

        let e = err(&format!("colour = 1\n{GOOD}"));
        assert!(e.starts_with("/p/lakewriter.toml: ") && e.contains("unknown field `colour`"), "{e}");

        let e = err("[jobs]\n");
        assert!(e.contains("missing field `root`"), "{e}");
    }

    #[test]
    fn sources_declare_unique_keys_strictly() {
        let p = parse(&format!("{GOOD}\n[sources.\"raw.orders\"]\nunique = [\"order_id\"]\n")).unwrap();
        let orders = TableRef::parse("raw.orders").unwrap();
        assert_eq!(p.sources[&orders], SourceSpec { unique: vec!["order_id".into()] });
        assert!(parse(GOOD).unwrap().sources.is_empty());

        let source = |body: &str| err(&format!("{GOOD}\n[sources.\"raw.orders\"]\n{body}\n"));
        let e = source("unique = []");
        assert!(e.starts_with("/p/lakewriter.toml: source `raw.orders`: key `unique` is empty"), "{e}");
        let e = source("unique = [\"order id\"]");
        assert!(e.contains("source `raw.orders`: key `unique`: `order id` is not a column name"), "{e}");
        let e = source("unique = [\"order_id\"]\nuniq = [\"x\"]");
        assert!(e.contains("source `raw.orders`") && e.contains("unknown field `uniq`"), "{e}");
        let e = source("");
        assert!(e.contains("source `raw.orders`") && e.contains("missing field `unique`"), "{e}");
        let e = err(&format!("{GOOD}\n[sources.orders]\nunique = [\"order_id\"]\n"));
        assert!(e.contains("source `orders`: invalid table name `orders`"), "{e}");
    }

    #[test]
    fn allow_nondeterministic_is_an_optional_bool_outside_the_fingerprint() {
        let p = parse(GOOD).unwrap();
        assert!(!p.job("daily_orders").unwrap().allow_nondeterministic);
        let allowed =
            GOOD.replacen("partition_by = \"dt\"\n", "partition_by = \"dt\"\nallow_nondeterministic = true\n", 1);
        let allowed = parse(&allowed).unwrap();
        let job = allowed.job("daily_orders").unwrap();
        assert!(job.allow_nondeterministic);
        assert_eq!(job.code_fingerprint("SELECT 1"), p.job("daily_orders").unwrap().code_fingerprint("SELECT 1"));
        let e = err(&GOOD.replacen(
            "partition_by = \"dt\"\n",
            "partition_by = \"dt\"\nallow_nondeterministic = \"yes\"\n",
            1,
        ));
        assert!(e.contains("job `daily_orders`") && e.contains("allow_nondeterministic"), "{e}");
    }
}

#[cfg(test)]
mod mode_tests {
    use super::*;

    fn job(body: &str) -> Result<JobSpec> {
        let text = format!("root = \"lake\"\n[jobs.j]\ntarget = \"s.t\"\nsql = \"SELECT 1\"\n{body}");
        Project::parse(&text, Path::new("p.toml")).map(|p| p.jobs["j"].clone())
    }

    fn err(body: &str) -> String {
        job(body).unwrap_err().to_string()
    }

    #[test]
    fn every_mode_parses_with_its_settings() {
        let merge =
            job("write = \"merge\"\nkey = [\"id\"]\nnewer_by = \"updated_at\"\ndelete_when = \"op = 'd'\"").unwrap();
        assert_eq!(
            merge.write,
            WriteSpec::Merge {
                key: vec!["id".into()],
                newer_by: "updated_at".into(),
                on_duplicate_keys: OnDuplicateKeys::KeepNewest,
                delete_when: Some("op = 'd'".into())
            }
        );
        let strict =
            job("write = \"merge\"\nkey = [\"a\", \"b\"]\nnewer_by = \"v\"\non_duplicate_keys = \"error\"").unwrap();
        assert!(matches!(strict.write, WriteSpec::Merge { on_duplicate_keys: OnDuplicateKeys::Error, .. }));
        assert_eq!(
            job("write = \"delete_insert\"\npredicate = \"d = $dt\"").unwrap().write,
            WriteSpec::DeleteInsert { predicate: "d = $dt".into() }
        );
        assert_eq!(
            job("write = \"append_dedup\"\nkey = [\"id\"]").unwrap().write,
            WriteSpec::AppendDedup { key: vec!["id".into()] }
        );
        assert_eq!(job("write = \"append\"").unwrap().write, WriteSpec::Append);
        let rebuild = job("write = \"rebuild\"").unwrap();
        assert_eq!(rebuild.write, WriteSpec::Rebuild);
        assert!(!rebuild.write.needs_partition() && WriteSpec::Append.needs_partition());
    }

    #[test]
    fn mode_settings_are_checked() {
        assert!(
            err("write = \"merge\"\nnewer_by = \"v\"")
                .contains("job `j`: missing key `key` (required by write = \"merge\")")
        );
        assert!(err("write = \"merge\"\nkey = [\"id\"]").contains("missing key `newer_by`"));
        assert!(err("write = \"merge\"\nkey = []\nnewer_by = \"v\"").contains("key `key` is empty"));
        assert!(err("write = \"merge\"\nkey = [\"id\"]\nnewer_by = \"id\"").contains("is part of the key"));
        assert!(
            err("write = \"merge\"\nkey = [\"id\"]\nnewer_by = \"v\"\non_duplicate_keys = \"ignore\"")
                .contains("unknown variant `ignore`")
        );
        assert!(err("write = \"append\"\nkey = [\"id\"]").contains("key `key` does not apply to write = \"append\""));
        assert!(
            err("write = \"rebuild\"\npredicate = \"x\"")
                .contains("key `predicate` does not apply to write = \"rebuild\"")
        );
        assert!(err("write = \"delete_insert\"").contains("missing key `predicate`"));
        assert!(err("write = \"append_dedup\"\nkey = [\"a b\"]").contains("`a b` is not a column name"));
    }
}
