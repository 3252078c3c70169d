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

/// How a job's result is committed to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteMode {
    /// Replace the partition `partition_by = $dt` in one commit (Delta replaceWhere).
    OverwritePartition,
}

impl WriteMode {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OverwritePartition => "overwrite_partition",
        }
    }
}

impl fmt::Display for WriteMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
    pub write: WriteMode,
    pub partition_by: String,
    pub sql: SqlSource,
}

/// A parsed project file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The project file this was read from.
    pub file: PathBuf,
    /// The lakehouse root as written: a path (relative to the project file) or a URL.
    pub root: String,
    pub jobs: BTreeMap<String, JobSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProject {
    root: String,
    #[serde(default)]
    jobs: BTreeMap<String, toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    target: String,
    write: WriteMode,
    partition_by: Option<String>,
    sql: Option<String>,
    sql_file: Option<PathBuf>,
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
            let job = RawJob::deserialize(value).map_err(|e| job_err(e.to_string().trim_end().to_owned()))?;
            let target = TableRef::parse(&job.target).map_err(|e| job_err(format!("key `target`: {e}")))?;
            let sql = match (job.sql, job.sql_file) {
                (Some(sql), None) if !sql.trim().is_empty() => SqlSource::Inline(sql),
                (Some(_), None) => return Err(job_err("key `sql` is empty".into())),
                (None, Some(path)) => SqlSource::File(base.join(path)),
                (Some(_), Some(_)) => return Err(job_err("set either `sql` or `sql_file`, not both".into())),
                (None, None) => return Err(job_err("missing key `sql` (or `sql_file`)".into())),
            };
            let partition_by = match (job.write, job.partition_by) {
                (_, Some(col)) if is_column(&col) => col,
                (_, Some(col)) => return Err(job_err(format!("key `partition_by`: `{col}` is not a column name"))),
                (WriteMode::OverwritePartition, None) => {
                    return Err(job_err(
                        "missing key `partition_by` (required by write = \"overwrite_partition\")".into(),
                    ));
                }
            };
            jobs.insert(name.clone(), JobSpec { name, target, write: job.write, partition_by, sql });
        }
        Ok(Self { file: file.to_path_buf(), root: raw.root, jobs })
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
        let err =
            |message: String| Error::Config { file: self.file.clone(), message: format!("key `root`: {message}") };
        let root = self.root.trim();
        let mut url = if root.contains("://") {
            Url::parse(root).map_err(|e| err(format!("`{root}` is not a valid URL: {e}")))?
        } else {
            let path = base_dir.join(root);
            Url::from_directory_path(&path)
                .map_err(|()| err(format!("`{}` is not an absolute folder", path.display())))?
        };
        if !url.path().ends_with('/') {
            url.set_path(&format!("{}/", url.path()));
        }
        Ok(url)
    }
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
        assert_eq!(job.write, WriteMode::OverwritePartition);
        assert_eq!(job.partition_by, "dt");
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
}
