use std::path::{Path, PathBuf};

use lakewriter_core::{JobSpec, Project, SqlSource, TableRef};
use url::Url;

use crate::{Error, Result};

/// The default project file name, looked up in the current folder.
pub const PROJECT_FILE: &str = "lakewriter.toml";

/// A project file with its lakehouse root resolved.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub project: Project,
    pub root: Url,
}

impl Workspace {
    /// Reads and validates the project file at `path` (default `./lakewriter.toml`).
    pub fn load(path: Option<&Path>) -> Result<Self> {
        let path = path.map_or_else(|| PathBuf::from(PROJECT_FILE), Path::to_path_buf);
        let text =
            std::fs::read_to_string(&path).map_err(|source| Error::ReadProject { path: path.clone(), source })?;
        let absolute =
            std::path::absolute(&path).map_err(|source| Error::ReadProject { path: path.clone(), source })?;
        let project = Project::parse(&text, &path)?;
        let root = project.root_url(absolute.parent().unwrap_or(Path::new("/")))?;
        Ok(Self { project, root })
    }

    pub fn job(&self, name: &str) -> Result<&JobSpec> {
        Ok(self.project.job(name)?)
    }

    /// Checks that `job` can run with (or without) a date, before anything runs.
    pub fn check_run(&self, job: &JobSpec, dt: Option<chrono::NaiveDate>, force: bool) -> Result<()> {
        let mode = job.write.mode();
        if job.write.needs_partition() && dt.is_none() {
            let why = if mode == lakewriter_core::WriteMode::Append {
                " (an append without a partition could not be made exactly-once)"
            } else {
                ""
            };
            return Err(Error::Usage(format!(
                "job `{}` (write = \"{mode}\") runs for a date: pass --dt YYYY-MM-DD{why}",
                job.name
            )));
        }
        if !job.write.needs_partition() && dt.is_some() {
            return Err(Error::Usage(format!(
                "job `{}` (write = \"{mode}\") rebuilds the whole table: run it without --dt",
                job.name
            )));
        }
        if force && mode != lakewriter_core::WriteMode::Append {
            return Err(Error::Usage(format!(
                "--force applies to write = \"append\" only; job `{}` is {mode}",
                job.name
            )));
        }
        Ok(())
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
    pub fn table_url(&self, table: &TableRef) -> Result<Url> {
        self.root.join(&table.relative_dir()).map_err(|e| {
            Error::Config(lakewriter_core::Error::Config {
                file: self.project.file.clone(),
                message: format!("table {table} has no location under root {}: {e}", self.root),
            })
        })
    }
}
