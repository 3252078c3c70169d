use std::path::{Path, PathBuf};

use lakewriter_core::{JobSpec, Project, SqlSource, TableRef};
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
        let project = Project::parse(&text, &path)?;
        let url = match root {
            Some(root) => {
                let cwd =
                    std::env::current_dir().map_err(|source| Error::ReadProject { path: path.clone(), source })?;
                lakewriter_core::root_url(root, &cwd).map_err(|message| Error::Usage(format!("--root: {message}")))?
            }
            None => project.root_url(absolute.parent().unwrap_or(Path::new("/")))?,
        };
        let storage_err = |error| Error::ProjectStorage { file: path.clone(), error };
        let env = |key: &str| std::env::var(key).ok();
        let options = lakewriter_storage::resolve_options(&project.storage, env).map_err(storage_err)?;
        let root = Location::new(url, options, env).map_err(storage_err)?;
        Ok(Self { project, root })
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
