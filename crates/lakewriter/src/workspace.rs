use std::path::{Path, PathBuf};

use lakewriter_core::{JobSpec, Project, SqlSource, TableRef, WriteSpec};
use lakewriter_storage::Location;

use crate::{Error, Result};

/// The default project file name, looked up in the current folder.
pub const PROJECT_FILE: &str = "lakewriter.toml";

/// A project file with its lakehouse root resolved.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub project: Project,
    /// The lakehouse root with its storage options.
    pub root: Location,
}

impl Workspace {
    /// Reads and validates the project file at `path` (default `./lakewriter.toml`). `root`, where
    /// given (`--root` or `LAKEWRITER_ROOT`), replaces the file's root: a path relative to the
    /// current folder, or a URL.
    pub fn load(path: Option<&Path>, root: Option<&str>) -> Result<Self> {
        let path = path.map_or_else(|| PathBuf::from(PROJECT_FILE), Path::to_path_buf);
        let text =
            std::fs::read_to_string(&path).map_err(|source| Error::ReadProject { path: path.clone(), source })?;
        let absolute =
            std::path::absolute(&path).map_err(|source| Error::ReadProject { path: path.clone(), source })?;
        let mut project = Project::parse(&text, &path)?;
        statement_partitions(&mut project);
        let url = match root {
            Some(root) => root_url(root, "--root")?,
            None => project.root_url(absolute.parent().unwrap_or(Path::new("/")))?,
        };
        let root = located(&project, url)?;
        Ok(Self { project, root })
    }

    /// The same project over the lakehouse root `root` (a path relative to the current folder, or
    /// a URL), with the same storage options; `flag` names where `root` came from, for errors.
    pub fn with_root(&self, root: &str, flag: &str) -> Result<Self> {
        Ok(Self { project: self.project.clone(), root: located(&self.project, root_url(root, flag)?)? })
    }

    /// [`Workspace::with_root`] for a reproduction's root (`reproduce --into`, `audit
    /// --against`): refused, a usage error, where `root` is this workspace's root, or inside it,
    /// or holds it — a reproduction there would write into the live lakehouse, or be read as part
    /// of it, and an audit against it would compare the live tables with themselves. Roots are
    /// compared as resolved: `..` removed, a local path through its symbolic links, `s3a://` as
    /// `s3://`.
    pub fn reproduction_root(&self, root: &str, flag: &str) -> Result<Self> {
        let there = self.with_root(root, flag)?;
        let (live, other) = (resolved(self.root.url()), resolved(there.root.url()));
        if live.starts_with(&other) || other.starts_with(&live) {
            return Err(Error::Usage(format!(
                "{flag} {}: the reproduction's root must be apart from the project's root {} (neither inside the other)",
                there.root.url(),
                self.root.url()
            )));
        }
        Ok(there)
    }

    pub fn job(&self, name: &str) -> Result<&JobSpec> {
        Ok(self.project.job(name)?)
    }

    /// The SQL text of `job`.
    pub fn sql(&self, job: &JobSpec) -> Result<String> {
        match &job.sql {
            SqlSource::Inline(sql) => Ok(sql.clone()),
            SqlSource::File(path) => std::fs::read_to_string(path).map_err(|source| Error::SqlFile {
                job: job.name.clone(),
                path: path.clone(),
                source,
            }),
        }
    }

    /// Where `table` lives: `<root>/<schema>/<table>/`.
    pub fn table_location(&self, table: &TableRef) -> Result<Location> {
        self.root
            .join(&table.relative_dir())
            .map_err(|error| Error::ProjectStorage { file: self.project.file.clone(), error })
    }
}

/// `root` as a URL: a path relative to the current folder, or a URL.
fn root_url(root: &str, flag: &str) -> Result<url::Url> {
    let cwd = std::env::current_dir().map_err(|e| Error::Usage(format!("{flag}: {e}")))?;
    lakewriter_core::root_url(root, &cwd).map_err(|message| Error::Usage(format!("{flag}: {message}")))
}

/// A root URL's scheme and path segments, resolved (see [`Workspace::reproduction_root`]).
fn resolved(root: &url::Url) -> Vec<String> {
    // `.` and `..` segments are resolved already (`lakewriter_core::root_url`).
    let root = root.as_str();
    let (scheme, rest) = root.split_once("://").unwrap_or(("", root));
    let scheme = if scheme == "s3a" { "s3" } else { scheme };
    let mut path = PathBuf::from(rest);
    if scheme == "file" {
        // The nearest folder that exists, through its links, then the rest as written.
        let existing = path.ancestors().find(|a| a.exists()).map(Path::to_path_buf);
        if let Some((real, tail)) =
            existing.and_then(|a| Some((a.canonicalize().ok()?, path.strip_prefix(&a).ok()?.to_path_buf())))
        {
            path = real.join(tail);
        }
    }
    std::iter::once(scheme.to_owned())
        .chain(path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()))
        .filter(|c| !c.is_empty() && c != "/")
        .collect()
}

/// The root `url` with `project`'s storage options.
fn located(project: &Project, url: url::Url) -> Result<Location> {
    let storage_err = |error| Error::ProjectStorage { file: project.file.clone(), error };
    let env = |key: &str| std::env::var(key).ok();
    let options = lakewriter_storage::resolve_options(&project.storage, env).map_err(storage_err)?;
    Location::new(url, options, env).map_err(storage_err)
}

/// A job written as a statement is partitioned by its statement's `PARTITION (column = $dt)`
/// where the project file sets no `partition_by`. A statement that cannot be read is left to the
/// job's own commands, which say why.
fn statement_partitions(project: &mut Project) {
    for job in project.jobs.values_mut().filter(|j| j.write == WriteSpec::Statement && j.partition_by.is_none()) {
        let sql = match &job.sql {
            SqlSource::Inline(sql) => sql.clone(),
            SqlSource::File(path) => match std::fs::read_to_string(path) {
                Ok(sql) => sql,
                Err(_) => continue,
            },
        };
        if let Ok(statement) = crate::sql::JobStatement::read(job, &sql) {
            job.partition_by = statement.partition_column().map(str::to_owned);
        }
    }
}
