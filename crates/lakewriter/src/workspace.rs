use std::path::{Path, PathBuf};

use std::collections::BTreeMap;
use std::sync::Arc;

use lakewriter_core::{JobSpec, Project, TableRef};
use lakewriter_storage::Location;

use crate::{Error, Job, Result};

/// The project file's name, looked up in the current folder and the folders above it.
pub const PROJECT_FILE: &str = "lakewriter.toml";

/// A project file with its lakehouse root and its jobs resolved.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The project file as parsed.
    pub project: Project,
    /// The lakehouse root with its storage options.
    pub root: Location,
    /// Each job resolved (see [`Job`]), or why it could not be: a job whose SQL file cannot be
    /// read or whose statement is not one a job can be is an error of that job's commands only.
    jobs: BTreeMap<String, Result<Job, Arc<Error>>>,
    /// The engine its partitions' queries run on (see [`Workspace::on_engine`]); `None`: this
    /// process.
    engine: Option<Arc<dyn lakewriter_compute::engine::Engine>>,
    /// The warnings about the project's jobs said so far (lint findings), shared by every copy of
    /// this workspace (a test's scratch lakehouse, a reproduction's root): each is said once per
    /// command, however many runners meet it.
    said: Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
}

impl Workspace {
    /// Reads and validates the project file at `path` (default `./lakewriter.toml`). `root`, where
    /// given (`--root` or `LAKEWRITER_ROOT`), replaces the file's root: a path relative to the
    /// current folder, or a URL.
    pub fn load(path: Option<&Path>, root: Option<&str>) -> Result<Self> {
        let (project, folder) = read(path)?;
        let url = match root {
            Some(root) => root_url(root, "--root")?,
            None => project.root_url(&folder)?,
        };
        let root = located(&project, url)?;
        Self::resolved(project, root)
    }

    /// The project file at `path` (default `./lakewriter.toml`) without its lakehouse: the root
    /// is the file's folder, never read, and the storage options are neither resolved nor
    /// needed. For `lakewriter test`, whose jobs run in scratch lakehouses ([`Workspace::scratch`]),
    /// so that it needs no credentials.
    pub fn load_without_root(path: Option<&Path>) -> Result<Self> {
        let (project, folder) = read(path)?;
        let url = url::Url::from_directory_path(&folder)
            .map_err(|()| Error::Usage(format!("{} is not an absolute folder", folder.display())))?;
        let root = Location::new(url, std::collections::HashMap::new(), |_| None)?;
        Self::resolved(project, root)
    }

    /// This workspace with its partitions' queries computed on `engine` (a cluster; `None`: this
    /// process), in every runner opened over it or over a copy of it elsewhere (a reproduction's
    /// root, a test's scratch lakehouse).
    #[must_use]
    pub fn on_engine(self, engine: Option<Arc<dyn lakewriter_compute::engine::Engine>>) -> Self {
        Self { engine, ..self }
    }

    /// Whether `warning` is said for the first time in this command (see [`Workspace::said`]).
    pub(crate) fn first_time(&self, warning: &str) -> bool {
        self.said.lock().map_or(true, |mut said| said.insert(warning.to_owned()))
    }

    /// The engine its partitions' queries run on, `None` for this process.
    pub(crate) fn engine(&self) -> Option<Arc<dyn lakewriter_compute::engine::Engine>> {
        self.engine.clone()
    }

    /// The project's `[storage]` options, resolved (`${VAR}` references read): what an engine's
    /// processes reach the lakehouse with.
    pub fn storage_options(&self) -> Result<std::collections::HashMap<String, String>> {
        let env = |key: &str| std::env::var(key).ok();
        lakewriter_storage::resolve_options(&self.project.storage, env)
            .map_err(|error| Error::ProjectStorage { file: self.project.file.clone(), error })
    }

    /// `project` over `root`, each job resolved.
    fn resolved(project: Project, root: Location) -> Result<Self> {
        let mut jobs = BTreeMap::new();
        for (name, spec) in &project.jobs {
            match Job::resolve(spec, &project.file, &root) {
                // What the project file says wrong of a job (a check its mode cannot have) is the
                // file's error, as the parser's own.
                Err(e @ Error::Config(_)) => return Err(e),
                resolved => jobs.insert(name.clone(), resolved.map_err(Arc::new)),
            };
        }
        Ok(Self { project, root, jobs, engine: None, said: Arc::default() })
    }

    /// The same project over the lakehouse root `root` (a path relative to the current folder, or
    /// a URL), with the same storage options; `flag` names where `root` came from, for errors.
    pub fn with_root(&self, root: &str, flag: &str) -> Result<Self> {
        Ok(self.relocated(located(&self.project, root_url(root, flag)?)?))
    }

    /// The same project over the local folder `dir` (which must be absolute), without the
    /// project's storage options: a scratch lakehouse (`lakewriter test`).
    pub fn scratch(&self, dir: &Path) -> Result<Self> {
        let url = url::Url::from_directory_path(dir)
            .map_err(|()| Error::Usage(format!("the scratch folder {} is not an absolute path", dir.display())))?;
        Ok(self.relocated(Location::new(url, std::collections::HashMap::new(), |_| None)?))
    }

    /// The same project over `root`.
    fn relocated(&self, root: Location) -> Self {
        let file = &self.project.file;
        let jobs = self
            .jobs
            .iter()
            .map(|(name, job)| {
                let job = match job {
                    Ok(job) => job.relocated(&root, file).map_err(Arc::new),
                    Err(e) => Err(Arc::clone(e)),
                };
                (name.clone(), job)
            })
            .collect();
        Self { project: self.project.clone(), root, jobs, engine: self.engine.clone(), said: Arc::clone(&self.said) }
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

    /// The job `name` as the project file writes it.
    pub fn spec(&self, name: &str) -> Result<&JobSpec> {
        Ok(self.project.job(name)?)
    }

    /// The job `name`, resolved; an error where there is no such job or it could not be resolved
    /// (its SQL file, its statement, its table's location).
    pub fn job(&self, name: &str) -> Result<&Job> {
        let spec = self.spec(name)?;
        match self.jobs.get(&spec.name) {
            Some(Ok(job)) => Ok(job),
            Some(Err(e)) => Err(Error::Job(Arc::clone(e))),
            None => Err(Error::Usage(format!("job `{name}` was not resolved"))),
        }
    }

    /// The jobs, resolved, in name order (those that could not be, left out).
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values().filter_map(|j| j.as_ref().ok())
    }

    /// Where `table` lives: `<root>/<schema>/<table>/`.
    pub fn table_location(&self, table: &TableRef) -> Result<Location> {
        table_location(&self.root, table, &self.project.file)
    }
}

/// The project file a command reads: `path` where given — a file, or a folder holding
/// `lakewriter.toml` — else the nearest `lakewriter.toml` in the current folder or the folders
/// above it, as git and cargo find theirs (`lakewriter.toml` itself where it is in the current
/// folder, so that messages name it as the user would).
pub(crate) fn project_file(path: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = path {
        return Ok(if path.is_dir() { path.join(PROJECT_FILE) } else { path.to_path_buf() });
    }
    let cwd =
        std::env::current_dir().map_err(|source| Error::ReadProject { path: PathBuf::from(PROJECT_FILE), source })?;
    let nearest = cwd.ancestors().map(|folder| folder.join(PROJECT_FILE)).find(|file| file.is_file());
    match nearest {
        Some(file) if file.parent() == Some(cwd.as_path()) => Ok(PathBuf::from(PROJECT_FILE)),
        Some(file) => Ok(file),
        None => Err(Error::NoProject { folder: cwd }),
    }
}

/// The project file at `path` (see [`project_file`]), parsed, and its folder (absolute).
fn read(path: Option<&Path>) -> Result<(Project, PathBuf)> {
    let path = project_file(path)?;
    let text = std::fs::read_to_string(&path).map_err(|source| Error::ReadProject { path: path.clone(), source })?;
    let absolute = std::path::absolute(&path).map_err(|source| Error::ReadProject { path: path.clone(), source })?;
    let project = Project::parse(&text, &path)?;
    Ok((project, absolute.parent().unwrap_or(Path::new("/")).to_path_buf()))
}

/// Where `table` lives under `root`: `<root>/<schema>/<table>/`; an error names the project
/// file, whose root and storage options it comes from.
pub(crate) fn table_location(root: &Location, table: &TableRef, file: &Path) -> Result<Location> {
    root.join(&table.relative_dir()).map_err(|error| Error::ProjectStorage { file: file.to_path_buf(), error })
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
