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
