//! Reading `lakewriter.toml`: the file's raw TOML shape, checked key by key into [`Project`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::checks::RawChecks;
use super::{
    DedupWindow, Dialect, JobSpec, OnDuplicateKeys, OnMissingInput, OnSchemaChange, Project, Semantics, SourceSpec,
    SqlSource, TimeZone, WriteMode, WriteSpec, is_name,
};
use crate::{Error, Result, TableRef};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    unique: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEngine {
    url: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProject {
    root: String,
    dialect: Option<Dialect>,
    ansi: Option<bool>,
    time_zone: Option<TimeZone>,
    #[serde(default)]
    storage: BTreeMap<String, String>,
    engine: Option<RawEngine>,
    #[serde(default)]
    jobs: BTreeMap<String, toml::Value>,
    #[serde(default)]
    sources: BTreeMap<String, toml::Value>,
    #[serde(default)]
    tests: BTreeMap<String, toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    target: String,
    write: Option<WriteMode>,
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
    not_null: Option<Vec<String>>,
    on_schema_change: Option<OnSchemaChange>,
    on_missing_input: Option<OnMissingInput>,
    dialect: Option<Dialect>,
    dedup_window: Option<String>,
    dedup_window_column: Option<String>,
    input_size_warning: Option<String>,
    cluster_by: Option<Vec<String>>,
    target_file_size: Option<String>,
    checks: Option<RawChecks>,
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
            ("dedup_window", self.dedup_window.is_some()),
            ("dedup_window_column", self.dedup_window_column.is_some()),
            ("input_size_warning", self.input_size_warning.is_some()),
            ("cluster_by", self.cluster_by.is_some()),
            ("target_file_size", self.target_file_size.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }

    /// Refuses the settings of another mode than `mode`.
    fn refuse_other_keys(&self, mode: WriteMode) -> Result<(), String> {
        let allowed: &[&str] = match mode {
            WriteMode::Merge => {
                &["key", "newer_by", "on_duplicate_keys", "delete_when", "cluster_by", "target_file_size"]
            }
            WriteMode::DeleteInsert => &["predicate"],
            WriteMode::AppendDedup => &["key", "dedup_window", "dedup_window_column", "cluster_by", "target_file_size"],
            WriteMode::Rebuild => &["input_size_warning"],
            WriteMode::OverwritePartition | WriteMode::Append | WriteMode::Statement => &[],
        };
        if let Some(extra) = self.mode_keys().into_iter().find(|k| !allowed.contains(k)) {
            return Err(match mode {
                WriteMode::Statement => format!(
                    "key `{extra}` needs a `write` mode; without one, the job's SQL is a statement (INSERT OVERWRITE, INSERT INTO, MERGE INTO) that decides the write"
                ),
                _ => format!("key `{extra}` does not apply to write = \"{mode}\""),
            });
        }
        Ok(())
    }

    /// Builds the write spec, refusing missing settings ([`Self::into_spec`] refused the settings
    /// of another mode before any key was read).
    fn write_spec(self) -> Result<WriteSpec, String> {
        let mode = self.mode();
        let missing = |key: &str| format!("missing key `{key}` (required by write = \"{mode}\")");
        let columns = |key: Option<Vec<String>>| -> Result<Vec<String>, String> {
            let key = key.ok_or_else(|| missing("key"))?;
            if key.is_empty() {
                return Err("key `key` is empty: name the business key's columns".into());
            }
            if !key.iter().all(|c| is_column(c)) {
                return Err("key `key`: an empty column name".into());
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
                    return Err("key `newer_by` is empty: name a column".into());
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
            WriteMode::AppendDedup => {
                let window = self.dedup_window()?;
                WriteSpec::AppendDedup { key: columns(self.key)?, window }
            }
            WriteMode::Append => WriteSpec::Append,
            WriteMode::Rebuild => WriteSpec::Rebuild,
            WriteMode::Statement => WriteSpec::Statement,
        })
    }

    /// The `dedup_window` and `dedup_window_column` keys: a number of days (`"7 days"`, or `7d`
    /// and `1w` as `maintain` reads durations), counted in the named column or the partition
    /// column.
    fn dedup_window(&self) -> Result<Option<DedupWindow>, String> {
        let Some(text) = &self.dedup_window else {
            return match self.dedup_window_column {
                Some(_) => Err("key `dedup_window_column` needs `dedup_window`, the number of days it counts".into()),
                None => Ok(None),
            };
        };
        let invalid =
            || format!("key `dedup_window`: `{text}` is not a number of days: write e.g. \"7 days\" (at least one)");
        let days = if let Some((n, "day" | "days")) = text.trim().split_once(' ') {
            n.parse::<u32>().map_err(|_| invalid())?
        } else {
            let duration = crate::maintain::parse_duration(text.trim()).map_err(|_| invalid())?;
            let day = 24 * 3600;
            if !duration.as_secs().is_multiple_of(day) {
                return Err(invalid());
            }
            u32::try_from(duration.as_secs() / day).map_err(|_| invalid())?
        };
        if days == 0 {
            return Err(invalid());
        }
        let column = match (&self.dedup_window_column, &self.partition_by) {
            (Some(c), _) if !is_column(c) => return Err("key `dedup_window_column` is empty: name a column".into()),
            (Some(c), _) | (None, Some(c)) => c.clone(),
            (None, None) => {
                return Err(
                    "key `dedup_window`: name the date column it counts days in: `dedup_window_column`, or `partition_by`".into(),
                );
            }
        };
        Ok(Some(DedupWindow { days, column }))
    }

    /// The `on_schema_change` key. A `rebuild` replaces the table's columns with its result's on
    /// every run, as a full refresh does: it takes `sync_all_columns` (what it does) or nothing.
    fn on_schema_change(&self, mode: WriteMode) -> Result<OnSchemaChange, String> {
        let policy = self.on_schema_change.unwrap_or_default();
        if mode == WriteMode::Rebuild && matches!(policy, OnSchemaChange::AppendNewColumns | OnSchemaChange::Ignore) {
            return Err(format!(
                "key `on_schema_change`: \"{policy}\" does not apply to write = \"rebuild\", which replaces the table's columns with its result's on every run (a full refresh); leave the key out, or set \"sync_all_columns\""
            ));
        }
        Ok(policy)
    }

    /// The job `name`'s spec, its SQL file's path taken from `base` and the settings it does not
    /// set from the project's `semantics`; an error names the key.
    fn into_spec(mut self, name: &str, base: &Path, semantics: Semantics) -> Result<JobSpec, String> {
        let target = TableRef::parse(&self.target).map_err(|e| format!("key `target`: {e}"))?;
        let sql = match (self.sql.take(), self.sql_file.take()) {
            (Some(sql), None) if !sql.trim().is_empty() => SqlSource::Inline(sql),
            (Some(_), None) => return Err("key `sql` is empty".into()),
            (None, Some(path)) => SqlSource::File(base.join(path)),
            (Some(_), Some(_)) => return Err("set either `sql` or `sql_file`, not both".into()),
            (None, None) => return Err("missing key `sql` (or `sql_file`)".into()),
        };
        let partition_by = self.partition_by.clone();
        if partition_by.as_deref().is_some_and(|c| !is_column(c)) {
            return Err("key `partition_by` is empty: name a column".into());
        }
        let allow_nondeterministic = self.allow_nondeterministic;
        let not_null = not_null_columns(self.not_null.take())?;
        let on_schema_change = self.on_schema_change(self.mode())?;
        let on_missing_input = self.on_missing_input.unwrap_or_default();
        let semantics = Semantics { dialect: self.dialect.unwrap_or(semantics.dialect), ..semantics };
        let checks = self.checks.take().unwrap_or_default().checks(is_column)?;
        // Keys of another mode are refused before this mode's own are read.
        self.refuse_other_keys(self.mode())?;
        let input_size_warning = size("input_size_warning", self.input_size_warning.as_deref())?;
        let target_file_size = size("target_file_size", self.target_file_size.as_deref())?;
        let cluster_by = self.cluster_by()?;
        let write = self.write_spec()?;
        Ok(JobSpec {
            name: name.to_owned(),
            target,
            write,
            partition_by,
            sql,
            allow_nondeterministic,
            not_null,
            on_schema_change,
            on_missing_input,
            semantics,
            checks,
            input_size_warning,
            cluster_by,
            target_file_size,
        })
    }

    /// The `cluster_by` key: the columns a keyed write sorts its files by, distinct and not the
    /// partition column (every file holds one value of it already).
    fn cluster_by(&self) -> Result<Vec<String>, String> {
        let Some(columns) = &self.cluster_by else { return Ok(Vec::new()) };
        if columns.is_empty() {
            return Err("key `cluster_by` is empty: name the columns to sort the table's files by".into());
        }
        if !columns.iter().all(|c| is_column(c)) {
            return Err("key `cluster_by`: an empty column name".into());
        }
        if let Some((_, c)) = columns.iter().enumerate().find(|(i, c)| columns[..*i].contains(c)) {
            return Err(format!("key `cluster_by`: `{c}` is named twice"));
        }
        if let Some(c) = columns.iter().find(|c| self.partition_by.as_ref() == Some(*c)) {
            return Err(format!(
                "key `cluster_by`: `{c}` is the partition column; each file holds one value of it already"
            ));
        }
        Ok(columns.clone())
    }

    /// The `write` key; a job without one is written as a statement.
    fn mode(&self) -> WriteMode {
        self.write.unwrap_or(WriteMode::Statement)
    }
}

/// Whether `s` can name a column: any name SQL can give one — quoted, a name keeps its case and
/// may hold spaces, quotes, dots and any letter — but an empty one.
fn is_column(s: &str) -> bool {
    !s.is_empty()
}

/// The `not_null` key: column names, each once.
fn not_null_columns(columns: Option<Vec<String>>) -> Result<Vec<String>, String> {
    let columns = columns.unwrap_or_default();
    for (i, column) in columns.iter().enumerate() {
        if !is_column(column) {
            return Err("key `not_null`: an empty column name".into());
        }
        if columns[..i].contains(column) {
            return Err(format!("key `not_null`: `{column}` is named twice"));
        }
    }
    Ok(columns)
}

/// A size key's value in bytes (`10 GB` as well as `10GB`); `None` where the key is not set.
fn size(key: &str, text: Option<&str>) -> Result<Option<u64>, String> {
    let Some(text) = text else { return Ok(None) };
    let size = crate::maintain::parse_size(&text.split_whitespace().collect::<String>());
    size.map(Some).map_err(|e| format!("key `{key}`: {e}"))
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
        let defaults = Semantics::default();
        let semantics = Semantics {
            dialect: raw.dialect.unwrap_or(defaults.dialect),
            ansi: raw.ansi.unwrap_or(defaults.ansi),
            time_zone: raw.time_zone.unwrap_or(defaults.time_zone),
        };
        let mut jobs = BTreeMap::new();
        for (name, value) in raw.jobs {
            let job_err = |message: String| config_err(format!("job `{name}`: {message}"));
            if !is_name(&name) {
                return Err(job_err("a job name may contain only letters, digits, `_` and `-`".into()));
            }
            let job = RawJob::deserialize(value).map_err(|e| job_err(e.to_string().trim_end().to_owned()))?;
            let job = job.into_spec(&name, base, semantics).map_err(job_err)?;
            jobs.insert(name, job);
        }
        let mut sources = BTreeMap::new();
        for (name, value) in raw.sources {
            let source_err = |message: String| config_err(format!("source `{name}`: {message}"));
            let table = TableRef::parse(&name).map_err(|e| source_err(e.to_string()))?;
            let source = RawSource::deserialize(value).map_err(|e| source_err(e.to_string().trim_end().to_owned()))?;
            if source.unique.is_empty() {
                return Err(source_err("key `unique` is empty: name the columns that are unique together".into()));
            }
            if !source.unique.iter().all(|c| is_column(c)) {
                return Err(source_err("key `unique`: an empty column name".into()));
            }
            sources.insert(table, SourceSpec { unique: source.unique });
        }
        let tests = super::job_test::read(raw.tests, base).map_err(config_err)?;
        let engine = raw.engine.map(|e| e.url);
        Ok(Self {
            file: file.to_path_buf(),
            root: raw.root,
            semantics,
            storage: raw.storage,
            engine,
            jobs,
            sources,
            tests,
        })
    }
}
