//! The runner: the lakehouse catalog opened once per command, jobs resolved once, and the state
//! and plans every command starts from. Running ([`crate::run`]), backfilling, `status`, `verify`
//! and `lint` are each in their own module, as `impl Runner` blocks.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;
use lakewriter_compute::{Finding, PartitionQuery, Prepared, Query};
use lakewriter_core::JobSpec;
use lakewriter_delta::state::{JobState, LogScope};
use lakewriter_storage::Location;
use tracing::Instrument as _;

use crate::{Error, Job, Result, Workspace, error_chain};

/// Runs partitions of a workspace's jobs. It lists the lakehouse catalog once (every
/// `<root>/<schema>/<table>/` as `schema.table`, each opened when a plan first names it) and plans
/// each partition in the same session.
pub struct Runner {
    workspace: Workspace,
    /// Where the tables that are no job's target are read: the workspace's root, except in a
    /// reproduction.
    inputs: Location,
    ctx: SessionContext,
    /// The determinism findings of each job checked so far (see `crate::lint`).
    pub(crate) linted: Mutex<BTreeMap<String, Vec<Finding>>>,
    /// The tables this command's writes loaded, for its next writes to bring forward.
    /// The catalog reads Delta tables through them too.
    pub(crate) loaded: Arc<lakewriter_delta::table::LoadedTables>,
    /// `Some(show)` in a dry run: each partition is computed and checked, and compared with what
    /// it would replace (`show` example rows of each side), and nothing is committed.
    pub(crate) dry_run: Option<usize>,
    /// The raw datasets of the catalog, which nothing writes.
    pub(crate) raw_tables: std::collections::BTreeSet<lakewriter_core::TableRef>,
    /// Where each partition run's OpenLineage events go, if anywhere (never in a dry run).
    pub(crate) lineage: Option<crate::Lineage>,
}

impl Runner {
    /// Opens the catalog of `workspace`'s lakehouse root.
    pub async fn open(workspace: Workspace) -> Result<Self> {
        let inputs = workspace.root.clone();
        Self::open_with_inputs(workspace, inputs).await
    }

    /// A runner whose jobs write their targets under `workspace`'s root and read every other
    /// table — the raw layer, Delta tables no job writes — from `inputs`: the runner of a
    /// reproduction, where the jobs' targets are read (by the jobs below them) where they are
    /// reproduced.
    pub async fn open_with_inputs(workspace: Workspace, inputs: Location) -> Result<Self> {
        let ctx = lakewriter_delta::session();
        // What Spark's functions (of the `spark` dialect) do on an overflow, where a plan runs.
        ctx.state_ref().write().config_mut().options_mut().execution.enable_ansi_mode =
            workspace.project.semantics.ansi;
        if let Some(engine) = workspace.engine() {
            let state = ctx.state_ref();
            let mut state = state.write();
            if let Some(partitions) = engine.partitions() {
                state.config_mut().options_mut().execution.target_partitions = partitions.get();
            }
            lakewriter_compute::engine::set_engine(state.config_mut(), engine);
        }
        for root in [&inputs, &workspace.root] {
            ctx.register_object_store(&root.store_url(), root.object_store().map_err(Error::from)?);
        }
        let loaded = Arc::default();
        let raw_tables = register_catalog(&ctx, &workspace, &inputs, &loaded).await?;
        Ok(Self { workspace, inputs, ctx, linted: Mutex::default(), loaded, dry_run: None, raw_tables, lineage: None })
    }

    /// Lists the lakehouse again: for a command that created a table and reads it next.
    pub(crate) async fn refresh_catalog(&self) -> Result<()> {
        register_catalog(&self.ctx, &self.workspace, &self.inputs, &self.loaded).await.map(drop)
    }

    /// This runner, in a dry run: every partition it runs is computed, checked and compared with
    /// the rows its write would replace (up to `show` example rows of each side), and nothing is
    /// committed or written anywhere.
    #[must_use]
    pub fn dry_run(mut self, show: usize) -> Self {
        self.dry_run = Some(show);
        self
    }

    /// This runner, emitting each partition run's OpenLineage events through `lineage` (except in
    /// a dry run, which writes nothing). [`Runner::close_lineage`] delivers what is left.
    #[must_use]
    pub fn with_lineage(mut self, lineage: crate::Lineage) -> Self {
        self.lineage = Some(lineage);
        self
    }

    /// Delivers the lineage events still queued, waiting at most the lineage timeout.
    pub async fn close_lineage(&self) {
        if let Some(lineage) = &self.lineage {
            lineage.close().await;
        }
    }

    /// The session and the tables this command loaded, lent to a write.
    pub(crate) fn lakehouse(&self) -> crate::lakehouse::Lakehouse<'_> {
        crate::lakehouse::Lakehouse { ctx: &self.ctx, loaded: &self.loaded }
    }

    /// The lineage emitter of runs that write: none in a dry run.
    pub(crate) fn lineage(&self) -> Option<&crate::Lineage> {
        self.lineage.as_ref().filter(|_| self.dry_run.is_none())
    }

    /// The tables `job`'s plan reads, where they are, and (given the `files` its plan scans,
    /// relative to the root) how many of their files and bytes it read, and each Delta table's
    /// latest version: what a run's lineage names as its inputs.
    pub(crate) async fn inputs_of(
        &self,
        job: &Job,
        files: Option<&[lakewriter_core::InputFile]>,
    ) -> Vec<crate::lineage::Input> {
        let names = self.tables_read(&job.query).unwrap_or_default();
        let mut inputs = Vec::new();
        for name in names {
            let Ok(table) = lakewriter_core::TableRef::parse(&name) else { continue };
            let target = self.workspace.project.jobs.values().any(|j| j.target == table);
            let root = if target { &self.workspace.root } else { &self.inputs };
            let Ok(location) = root.join(&table.relative_dir()) else { continue };
            let prefix = format!("{}/", table.relative_dir().trim_end_matches('/'));
            let read: Vec<_> = files.unwrap_or_default().iter().filter(|f| f.path.starts_with(&prefix)).collect();
            let version = match files {
                Some(_) if !self.raw_tables.contains(&table) => {
                    self.loaded.latest_version(&location).await.ok().flatten()
                }
                _ => None,
            };
            let (files, bytes) = (read.len() as u64, read.iter().map(|f| f.size).sum());
            inputs.push(crate::lineage::Input { url: location.url().clone(), version, files, bytes });
        }
        inputs
    }

    /// The engine the partitions' queries run on: `None` for this process.
    pub(crate) fn engine(&self) -> Option<Arc<dyn lakewriter_compute::engine::Engine>> {
        lakewriter_compute::engine::engine(self.ctx.state_ref().read().config())
    }

    #[must_use]
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Shares the machine's cores among `parallel` partitions in flight: each partition's query
    /// runs on cores ÷ `parallel` DataFusion partitions (at least one). A backfill that already runs
    /// as many days as there are cores gains nothing from also splitting each day's query across
    /// all of them, and pays for it in repartitioning and two-phase aggregation.
    ///
    /// On an engine, the cores are the cluster's: each query keeps the engine's partitions, or
    /// this machine's count (the tasks of each of its stages).
    pub(crate) fn share_cores(&self, parallel: usize) {
        if self.engine().is_some() {
            return;
        }
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let target_partitions = (cores / parallel.max(1)).max(1);
        self.ctx.state_ref().write().config_mut().options_mut().execution.target_partitions = target_partitions;
    }

    /// The session with the lakehouse catalog registered.
    pub(crate) fn session(&self) -> &SessionContext {
        &self.ctx
    }

    /// The job `name`, resolved when the project loaded (see [`Workspace::job`]).
    pub fn prepare(&self, name: &str) -> Result<&Job> {
        self.workspace.job(name)
    }

    /// Whether `job`'s SQL reads its own target (e.g. the day before): a backfill then runs its
    /// days one at a time, in date order, each reading the days before it as committed. SQL that
    /// cannot be parsed fails each run's planning, which says why.
    pub(crate) fn reads_own_target(&self, job: &Job) -> bool {
        self.tables_read(&job.query).is_ok_and(|tables| tables.contains(&job.spec.target.to_string()))
    }

    /// Plans `query` for `dt`; input paths below the lakehouse root become relative to it.
    pub(crate) async fn plan(
        &self,
        query: &Query,
        dt: Option<NaiveDate>,
    ) -> lakewriter_compute::Result<PartitionQuery> {
        let (ctx, query) = (self.ctx.clone(), query.clone());
        self.plan_in_task(async move { lakewriter_compute::plan_partition(&ctx, &query, dt).await }).await
    }

    /// [`Runner::plan`] of a query prepared once for many dates (`status`, each day's).
    pub(crate) async fn plan_prepared(
        &self,
        prepared: &Arc<Prepared>,
        dt: Option<NaiveDate>,
    ) -> lakewriter_compute::Result<PartitionQuery> {
        let prepared = Arc::clone(prepared);
        self.plan_in_task(async move { prepared.bind(dt).await }).await
    }

    /// The query `planning` plans, its input paths below the lakehouse root made relative to it.
    async fn plan_in_task(
        &self,
        planning: impl Future<Output = lakewriter_compute::Result<PartitionQuery>> + Send + 'static,
    ) -> lakewriter_compute::Result<PartitionQuery> {
        // Planned in a task of its own, so that the plans a command makes at once (`status` of
        // every day, a backfill's partitions) use every core, not the one their caller polls on.
        let planning = tokio::spawn(planning.instrument(tracing::Span::current()));
        let mut query = match planning.await {
            Ok(planned) => planned?,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Only a runtime shutting down cancels a task, and then nothing awaits this one.
            Err(e) => unreachable!("a planning task was cancelled while awaited: {e}"),
        };
        let prefix = |root: &Location| {
            let url_path = root.url().path();
            let path = object_store::path::Path::from_url_path(url_path)
                .map_or_else(|_| url_path.trim_matches('/').to_owned(), |p| p.to_string());
            format!("{path}/")
        };
        let roots = [prefix(&self.inputs), prefix(&self.workspace.root)];
        for file in &mut query.files {
            if let Some(relative) = roots.iter().find_map(|root| file.path.strip_prefix(root.as_str())) {
                file.path = relative.to_owned();
            }
        }
        query.files.sort();
        Ok(query)
    }

    /// The partition state `job` recorded in its target; `None` where the table does not exist.
    pub async fn recorded(&self, job: &Job, scope: LogScope) -> Result<Option<JobState>> {
        self.recorded_at(&job.spec, &job.location, scope).await
    }

    /// The partition state `job` recorded in the table at `location`.
    pub(crate) async fn recorded_at(
        &self,
        job: &JobSpec,
        location: &Location,
        scope: LogScope,
    ) -> Result<Option<JobState>> {
        let started = Instant::now();
        let state = lakewriter_delta::state::read(location, &job.name, scope)
            .await
            .map_err(|source| Error::State { table: job.target.to_string(), source: Box::new(source) })?;
        if let Some(state) = &state {
            tracing::info!(job = %job.name, partitions = state.partitions.len(), version = state.version, checkpoint = ?state.checkpoint, elapsed_ms = crate::elapsed_ms(started), "partition state read from the log");
        }
        Ok(state)
    }

    /// The recorded state before writes, and whether the table exists. A log whose state cannot be
    /// read costs the runs their "already fresh" notes, never the runs themselves.
    pub(crate) async fn state_before_writing(&self, job: &Job) -> (bool, JobState) {
        match self.recorded(job, LogScope::FromLastCheckpoint).await {
            Ok(state) => (state.is_some(), state.unwrap_or_default()),
            Err(e) => {
                tracing::warn!(job = %job.spec.name, error = %error_chain(&e), "running without the recorded partition state");
                let exists = matches!(lakewriter_delta::table::version(&job.location).await, Ok(Some(_)));
                (exists, JobState::default())
            }
        }
    }
}

/// Registers the catalog of `inputs` (and the jobs' targets under `workspace`'s root) in `ctx`;
/// returns the raw datasets.
async fn register_catalog(
    ctx: &SessionContext,
    workspace: &Workspace,
    inputs: &Location,
    loaded: &Arc<lakewriter_delta::table::LoadedTables>,
) -> Result<std::collections::BTreeSet<lakewriter_core::TableRef>> {
    let targets = workspace
        .project
        .jobs
        .values()
        .map(|job| {
            let location = workspace.table_location(&job.target)?;
            Ok(crate::catalog::Target { table: job.target.clone(), location, job: job.name.clone() })
        })
        .collect::<Result<_>>()?;
    crate::catalog::register(ctx, inputs, targets, loaded).await
}

#[cfg(test)]
impl Runner {
    /// A runner of the project file `project`, written to a temporary folder (kept while the
    /// returned handle lives) beside its empty lakehouse root `lake`.
    pub(crate) async fn for_test(project: &str) -> (tempfile::TempDir, Self) {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("lake")).expect("root");
        let file = dir.path().join("lakewriter.toml");
        std::fs::write(&file, project).expect("project file");
        let workspace = Workspace::load(Some(&file), None).expect("workspace");
        (dir, Self::open(workspace).await.expect("runner"))
    }
}
