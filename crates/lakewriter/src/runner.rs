use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use datafusion::common::DFSchema;
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use lakewriter_compute::{KeyedSpec, keyed};
use lakewriter_core::{JobSpec, PartitionRun, WriteSpec, input_fingerprint, stable_hash};
use lakewriter_delta::state::{JobState, Recorded};
use lakewriter_delta::{AppendOutcome, CommitMetadata, Committed, MergeSpec, Target};
use lakewriter_storage::Location;
use url::Url;

use crate::status::{JobStatus, PartitionStatus};
use crate::{DateRange, Error, PartitionReport, Result, RunStatus, VerifyReport, Workspace, error_chain};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How often a partition whose commit conflicted with a concurrent one is planned and run again.
const CONFLICT_ATTEMPTS: u32 = 8;

/// Partitions planned at once by `status` and `plan`.
const CONCURRENT_PLANS: usize = 4;

/// Runs partitions of a workspace's jobs. It lists the lakehouse catalog once (every
/// `<root>/<schema>/<table>/` as `schema.table`, each opened when a plan first names it) and plans
/// each partition in the same session.
pub struct Runner {
    workspace: Workspace,
    ctx: SessionContext,
    /// The determinism findings of each job checked so far (see `crate::lint`).
    pub(crate) linted: std::sync::Mutex<std::collections::BTreeMap<String, Vec<lakewriter_compute::Finding>>>,
}

impl Runner {
    /// Opens the catalog of `workspace`'s lakehouse root.
    pub async fn open(workspace: Workspace) -> Result<Self> {
        let ctx = lakewriter_delta::session();
        let store = workspace.root.object_store().map_err(|e| Error::Usage(e.to_string()))?;
        ctx.register_object_store(&workspace.root.store_url(), store);
        let targets = workspace.project.jobs.values().map(|job| &job.target).collect();
        crate::catalog::register(&ctx, &workspace.root, &targets).await?;
        Ok(Self { workspace, ctx, linted: std::sync::Mutex::default() })
    }

    #[must_use]
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The session with the lakehouse catalog registered.
    pub(crate) fn session(&self) -> &SessionContext {
        &self.ctx
    }

    /// Runs one partition into the job's target: plan, write, one commit (or none). Never panics
    /// on bad input and never returns early: a failure is a report with `status = failed`, and
    /// nothing committed.
    pub async fn run(&self, unit: &PartitionRun) -> PartitionReport {
        let started = Instant::now();
        let setup =
            self.workspace.job(&unit.job).and_then(|job| Ok((job, self.workspace.table_location(&job.target)?)));
        match setup {
            Ok((job, location)) => {
                let (_, state) = self.state_before_writing(job, &location).await;
                self.run_into(unit, &location, state.partitions.get(&job.partition_label(unit.dt))).await
            }
            Err(e) => self.failed(unit, started, &e),
        }
    }

    /// The recorded state before writes, and whether the table exists. A log whose state cannot be
    /// read costs the runs their "already fresh" notes, never the runs themselves.
    async fn state_before_writing(&self, job: &JobSpec, location: &Location) -> (bool, JobState) {
        match self.recorded_at(job, location).await {
            Ok(state) => (state.is_some(), state.unwrap_or_default()),
            Err(e) => {
                tracing::warn!(job = %job.name, error = %error_chain(&e), "running without the recorded partition state");
                let exists = matches!(lakewriter_delta::table::version(location).await, Ok(Some(_)));
                (exists, JobState::default())
            }
        }
    }

    /// Plans `sql` for `dt`; input paths below the lakehouse root become relative to it.
    async fn plan(
        &self,
        sql: &str,
        dt: Option<NaiveDate>,
    ) -> std::result::Result<lakewriter_compute::PartitionQuery, lakewriter_compute::Error> {
        let mut query = lakewriter_compute::plan_partition(&self.ctx, sql, dt).await?;
        let root = object_store::path::Path::from_url_path(self.workspace.root.url().path())
            .map_or_else(|_| self.workspace.root.url().path().trim_matches('/').to_owned(), |p| p.to_string());
        let root = format!("{root}/");
        for file in &mut query.files {
            if let Some(relative) = file.path.strip_prefix(&root) {
                file.path = relative.to_owned();
            }
        }
        query.files.sort();
        Ok(query)
    }

    /// The partition state `job` recorded in its target; `None` where the table does not exist.
    pub async fn recorded(&self, job: &JobSpec) -> Result<Option<JobState>> {
        self.recorded_at(job, &self.workspace.table_location(&job.target)?).await
    }

    /// The partition state `job` recorded in the table at `location`.
    async fn recorded_at(&self, job: &JobSpec, location: &Location) -> Result<Option<JobState>> {
        let started = Instant::now();
        let state = lakewriter_delta::state::read(location, &job.name)
            .await
            .map_err(|source| Error::State { table: job.target.to_string(), source: Box::new(source) })?;
        if let Some(state) = &state {
            tracing::info!(job = %job.name, partitions = state.partitions.len(), version = state.version, checkpoint = ?state.checkpoint, elapsed_ms = elapsed_ms(started), "partition state read from the log");
        }
        Ok(state)
    }

    /// The state of `job`'s partitions in `range` (default: the first to the last partition it
    /// wrote): each partition's plan is made, its inputs fingerprinted and compared, with the
    /// code's, to what the last write recorded. Writes nothing.
    pub async fn status(&self, job: &JobSpec, range: Option<DateRange>) -> Result<JobStatus> {
        let recorded = self.recorded(job).await?;
        let table_version = recorded.as_ref().map(|s| s.version);
        let state = recorded.unwrap_or_default();
        let sql = self.workspace.sql(job)?;
        let code = job.code_fingerprint(&sql);
        let days: Vec<Option<NaiveDate>> = if job.write.needs_partition() {
            let range = match range {
                Some(range) => range,
                None => written_range(&state).ok_or_else(|| {
                    Error::Usage(format!(
                        "job `{}` has not written any partition yet: pass --from and --to to see which are missing",
                        job.name
                    ))
                })?,
            };
            range.days().map(Some).collect()
        } else {
            vec![None]
        };
        let statuses = futures::stream::iter(days)
            .map(|dt| {
                let (sql, code, state) = (&sql, &code, &state);
                async move {
                    let partition = job.partition_label(dt);
                    let recorded = state.partitions.get(&partition);
                    match self.plan(sql, dt).await {
                        Ok(query) => {
                            let inputs = input_fingerprint(&query.files);
                            Ok(PartitionStatus::of(partition, dt, recorded, code, Some(&inputs), query.files.len()))
                        }
                        Err(e) if e.is_unreadable_input() => {
                            tracing::warn!(job = %job.name, %partition, error = %error_chain(&e), "an input cannot be read");
                            Ok(PartitionStatus::of(partition, dt, recorded, code, None, 0))
                        }
                        Err(source) => {
                            Err(Error::PlanPartition { job: job.name.clone(), partition, source: Box::new(source) })
                        }
                    }
                }
            })
            .buffered(CONCURRENT_PLANS)
            .collect::<Vec<Result<PartitionStatus>>>()
            .await;
        Ok(JobStatus {
            job: job.name.clone(),
            target: job.target.to_string(),
            write: job.write.mode().to_string(),
            table_version,
            checkpoint: state.checkpoint,
            partitions: statuses.into_iter().collect::<Result<_>>()?,
        })
    }

    fn blank_report(&self, unit: &PartitionRun) -> PartitionReport {
        let job = self.workspace.job(&unit.job).ok();
        PartitionReport {
            job: unit.job.clone(),
            target: job.map(|j| j.target.to_string()).unwrap_or_default(),
            write: job.map(|j| j.write.mode().to_string()).unwrap_or_default(),
            partition: job.map_or_else(
                || unit.dt.map_or_else(|| "all".to_owned(), |dt| format!("dt={dt}")),
                |j| j.partition_label(unit.dt),
            ),
            dt: unit.dt,
            status: RunStatus::Failed,
            committed: false,
            rows_written: None,
            table_version: None,
            files_added: None,
            files_removed: None,
            files_scanned: None,
            input_fingerprint: None,
            fresh_before: None,
            changes: None,
            retries: 0,
            run_id: String::new(),
            duration_ms: 0,
            note: None,
            error: None,
        }
    }

    fn failed(
        &self,
        unit: &PartitionRun,
        started: Instant,
        error: &(dyn std::error::Error + 'static),
    ) -> PartitionReport {
        let mut report = self.blank_report(unit);
        report.error = Some(format!("{unit}: {}", error_chain(error)));
        report.duration_ms = elapsed_ms(started);
        report
    }

    /// Runs one partition into the table at `location`, retrying the whole run (plan and write) when
    /// its commit conflicted with a concurrent one. `previous` is the partition's recorded state;
    /// a retry reads it again, since the concurrent writer may have recorded it.
    async fn run_into(&self, unit: &PartitionRun, location: &Location, previous: Option<&Recorded>) -> PartitionReport {
        let started = Instant::now();
        let run_id = new_run_id(unit);
        let mut attempt = 0;
        let mut previous = previous.cloned();
        loop {
            let mut report = self.blank_report(unit);
            let outcome = match self.workspace.job(&unit.job) {
                Ok(job) => {
                    if attempt > 0 {
                        let (_, state) = self.state_before_writing(job, location).await;
                        previous = state.partitions.get(&job.partition_label(unit.dt)).cloned();
                    }
                    self.execute(job, unit, location, &run_id, previous.as_ref(), &mut report).await
                }
                Err(e) => Err(Box::new(e) as BoxError),
            };
            report.retries = attempt;
            report.run_id.clone_from(&run_id);
            match outcome {
                Ok(()) => {
                    report.duration_ms = elapsed_ms(started);
                    tracing::info!(partition = %unit, status = ?report.status, rows = ?report.rows_written, version = ?report.table_version, "done");
                    return report;
                }
                Err(e) if attempt + 1 < CONFLICT_ATTEMPTS && is_conflict(e.as_ref()) => {
                    attempt += 1;
                    let pause = backoff(attempt, unit);
                    tracing::info!(partition = %unit, attempt, ?pause, "conflict with a concurrent commit; running again");
                    tokio::time::sleep(pause).await;
                }
                Err(e) => {
                    let mut report = self.failed(unit, started, e.as_ref());
                    report.retries = attempt;
                    report.run_id = run_id;
                    tracing::info!(partition = %unit, error = report.error.as_deref(), "failed; nothing committed");
                    return report;
                }
            }
        }
    }

    async fn execute(
        &self,
        job: &JobSpec,
        unit: &PartitionRun,
        location: &Location,
        run_id: &str,
        previous: Option<&Recorded>,
        report: &mut PartitionReport,
    ) -> std::result::Result<(), BoxError> {
        self.workspace.check_run(job, unit.dt, unit.force)?;
        let sql = self.workspace.sql(job)?;
        let mut query = self.plan(&sql, unit.dt).await?;
        self.check_determinism(job, &query.plan).await?;
        query.plan = lakewriter_delta::schema::storable(query.plan, &job.target.to_string())?;
        let inputs = input_fingerprint(&query.files);
        let code = job.code_fingerprint(&sql);
        let fresh = previous.is_some_and(|r| r.is_fresh(&code, &inputs));
        report.fresh_before = Some(fresh);
        report.files_scanned = Some(query.files.len());
        report.input_fingerprint = Some(inputs.clone());
        let metadata = CommitMetadata {
            job: job.name.clone(),
            partition: report.partition.clone(),
            write: job.write.mode().to_string(),
            lakewriter_version: lakewriter_core::VERSION.to_owned(),
            sql_hash: stable_hash(sql.as_bytes()),
            code_fingerprint: code,
            input_fingerprint: inputs,
            inputs: (query.files.len() <= CommitMetadata::MAX_LISTED_INPUTS).then(|| query.files.clone()),
            run_id: run_id.to_owned(),
            forced: unit.force,
        };
        let name = job.target.to_string();
        let target =
            Target { location, name: &name, partition_column: job.partition_by.as_deref(), metadata: &metadata };
        let state = self.ctx.state();
        let committed = match (&job.write, unit.dt) {
            (WriteSpec::OverwritePartition, Some(dt)) => {
                let column = job.partition_by.as_deref().unwrap_or("dt");
                let predicate = lakewriter_delta::partition_predicate(column, dt);
                let slice = format!("rows whose `{column}` is not {dt}");
                lakewriter_delta::replace_where(&state, target, query.plan, predicate, &slice).await?
            }
            (WriteSpec::DeleteInsert { predicate }, dt) => {
                let schema = match lakewriter_delta::table::arrow_schema(location).await? {
                    Some(schema) => DFSchema::try_from(schema.as_ref().clone())?,
                    None => query.plan.schema().as_ref().clone(),
                };
                let condition = lakewriter_compute::condition(&self.ctx, predicate, &schema, dt)?;
                let slice = format!(
                    "rows that do not satisfy the predicate `{predicate}` ($dt = {})",
                    dt.map_or("-".into(), |d| d.to_string())
                );
                lakewriter_delta::replace_where(&state, target, query.plan, condition, &slice).await?
            }
            (WriteSpec::Rebuild, _) => lakewriter_delta::replace_all(&state, target, query.plan).await?,
            (WriteSpec::Append, _) => match lakewriter_delta::append_once(&state, target, query.plan, unit.force)
                .await?
            {
                AppendOutcome::AlreadyCommitted { version } => {
                    report.status = RunStatus::Skipped;
                    report.table_version = Some(version);
                    report.note = Some(
                        "already appended; nothing appended. --force appends again and duplicates these rows".into(),
                    );
                    return Ok(());
                }
                AppendOutcome::Committed(committed) => {
                    if unit.force {
                        report.note = Some(
                            "--force: appended again; rows appended before for this partition are now duplicated"
                                .into(),
                        );
                    }
                    committed
                }
            },
            (WriteSpec::Merge { .. } | WriteSpec::AppendDedup { .. }, _) => {
                let spec = KeyedSpec::of(&job.write).ok_or("a keyed write mode has a keyed source")?;
                match self.apply_keyed(target, query.plan, &spec, fresh, report).await? {
                    Some(committed) => committed,
                    None => return Ok(()),
                }
            }
            (WriteSpec::OverwritePartition, None) => unreachable!("check_run requires a date"),
        };
        report.status = RunStatus::Ok;
        report.committed = true;
        if fresh && report.note.is_none() {
            report.note = Some("was already fresh (same code and inputs)".into());
        }
        report.rows_written = report.changes.map(|c| c.inserted + c.updated + c.deleted).or(committed.rows_written);
        report.table_version = Some(committed.version);
        report.files_added = committed.files_added;
        report.files_removed = committed.files_removed;
        Ok(())
    }

    /// `merge` and `append_dedup`: prepare and classify the source, then merge it unless it
    /// changes nothing. A source that changes no row commits nothing (`None`) where the
    /// partition was `fresh`, and otherwise only the partition's new state, so that it reads as
    /// fresh from then on.
    async fn apply_keyed(
        &self,
        target: Target<'_>,
        plan: datafusion::logical_expr::LogicalPlan,
        spec: &KeyedSpec<'_>,
        fresh: bool,
        report: &mut PartitionReport,
    ) -> std::result::Result<Option<Committed>, BoxError> {
        let source = keyed::prepare(&self.ctx, plan, spec).await?;
        let (current, provider) = lakewriter_delta::table::current(target.location).await?.unzip();
        let counts = keyed::classify(&self.ctx, &source, provider, spec).await?;
        report.changes = Some(counts);
        if !counts.changes_anything() {
            // A concurrent run may have recorded this very state since this run read it.
            let fresh = fresh || recorded_fresh(target.metadata, target.location).await;
            if let (false, Some(read_version)) = (fresh, current) {
                let committed = lakewriter_delta::record_state(target, read_version, &source.schema).await?;
                report.note = Some("no row to change: committed only the partition's new state".into());
                return Ok(Some(committed));
            }
            report.status = RunStatus::Ok;
            report.rows_written = Some(0);
            report.table_version = current;
            report.note = Some(if fresh {
                "already fresh: nothing to change, no new table version".into()
            } else {
                "nothing to change: no new table version".into()
            });
            return Ok(None);
        }
        let df = self.ctx.read_batches(source.batches)?;
        let merge = MergeSpec { key: spec.key, newer_by: spec.newer_by, read_version: current };
        Ok(Some(lakewriter_delta::merge(&self.ctx.state(), target, df, merge).await?))
    }

    /// Runs `job` for every day of `days`, at most `parallel` partitions at once, and calls
    /// `observe` as each finishes. A failed day does not stop the others. Where the target table
    /// does not exist yet, days run one at a time until one commit has created it, so that
    /// parallel writers never race to create a table. Returns the reports sorted by date.
    pub async fn backfill(
        &self,
        job: &JobSpec,
        days: impl IntoIterator<Item = NaiveDate>,
        parallel: usize,
        mut observe: impl FnMut(&PartitionReport),
    ) -> Vec<PartitionReport> {
        let mut days = days.into_iter();
        let mut reports = Vec::new();
        let location = match self.workspace.table_location(&job.target) {
            Ok(location) => location,
            Err(e) => {
                for dt in days {
                    let report = self.failed(&PartitionRun::new(&job.name, dt), Instant::now(), &e);
                    observe(&report);
                    reports.push(report);
                }
                return reports;
            }
        };
        let (exists, state) = self.state_before_writing(job, &location).await;
        let run = |dt: NaiveDate| {
            let (location, state) = (&location, &state);
            async move {
                let previous = state.partitions.get(&job.partition_label(Some(dt)));
                self.run_into(&PartitionRun::new(&job.name, dt), location, previous).await
            }
        };
        if !exists {
            for dt in days.by_ref() {
                let report = run(dt).await;
                observe(&report);
                let created = report.committed;
                reports.push(report);
                if created {
                    break;
                }
            }
        }
        let mut running = futures::stream::iter(days).map(run).buffer_unordered(parallel.max(1));
        while let Some(report) = running.next().await {
            observe(&report);
            reports.push(report);
        }
        reports.sort_by_key(|r| r.dt);
        reports
    }

    /// Applies `unit`'s write twice to a scratch copy of its target (never the target itself) and
    /// compares the content digests after the first and the second application.
    pub async fn verify(&self, unit: &PartitionRun) -> Result<VerifyReport> {
        let job = self.workspace.job(&unit.job)?;
        self.workspace.check_run(job, unit.dt, unit.force)?;
        let target = self.workspace.table_location(&job.target)?;
        let url = target.url().clone();
        let scratch = tempfile::Builder::new()
            .prefix("lakewriter-verify-")
            .tempdir()
            .map_err(|source| Error::Scratch { from: std::env::temp_dir(), source })?;
        let scratch_dir = scratch.path().join("table");
        let source_dir = url
            .to_file_path()
            .ok()
            .filter(|_| target.is_local())
            .ok_or_else(|| Error::VerifyNotLocal { url: url.clone() })?;
        if source_dir.exists() {
            copy_dir(&source_dir, &scratch_dir)
                .map_err(|source| Error::Scratch { from: source_dir.clone(), source })?;
        }
        let scratch_url =
            Url::from_directory_path(&scratch_dir).map_err(|()| Error::VerifyNotLocal { url: url.clone() })?;
        let scratch_location =
            Location::new(scratch_url, HashMap::new(), |_| None).map_err(|e| Error::Usage(e.to_string()))?;
        let digest = |location: Location| async move {
            lakewriter_delta::digest(&location, None)
                .await
                .map_err(|source| Error::Digest { table: job.target.to_string(), source: Box::new(source) })
        };

        let label = job.partition_label(unit.dt);
        let first = {
            let (_, state) = self.state_before_writing(job, &scratch_location).await;
            self.run_into(unit, &scratch_location, state.partitions.get(&label)).await
        };
        let mut report = VerifyReport {
            job: job.name.clone(),
            partition: first.partition.clone(),
            pass: false,
            digest_first: None,
            digest_second: None,
            rows_added: 0,
            rows_removed: 0,
            first,
            second: None,
        };
        if !report.first.is_ok() {
            return Ok(report);
        }
        let d1 = digest(scratch_location.clone()).await?;
        let second = {
            let (_, state) = self.state_before_writing(job, &scratch_location).await;
            self.run_into(unit, &scratch_location, state.partitions.get(&label)).await
        };
        let ok = second.is_ok();
        report.second = Some(second);
        if !ok {
            return Ok(report);
        }
        let d2 = digest(scratch_location.clone()).await?;
        report.pass = d1.digest == d2.digest && d1.rows == d2.rows;
        if !report.pass {
            let open = |v| lakewriter_delta::table::provider_at(&scratch_location, v);
            let (before, after) = (open(d1.version).await, open(d2.version).await);
            let (before, after) = before
                .and_then(|b| after.map(|a| (b, a)))
                .map_err(|source| Error::Digest { table: job.target.to_string(), source: Box::new(source) })?;
            let (added, removed) =
                lakewriter_compute::diff(&self.ctx, before, after).await.map_err(|source| Error::Catalog { source })?;
            report.rows_added = added;
            report.rows_removed = removed;
        }
        report.digest_first = Some(d1.digest);
        report.digest_second = Some(d2.digest);
        Ok(report)
    }
}

/// Whether the log records `metadata`'s code and inputs for its partition now.
async fn recorded_fresh(metadata: &CommitMetadata, location: &Location) -> bool {
    matches!(
        lakewriter_delta::state::read(location, &metadata.job).await,
        Ok(Some(state)) if state
            .partitions
            .get(&metadata.partition)
            .is_some_and(|r| r.is_fresh(&metadata.code_fingerprint, &metadata.input_fingerprint))
    )
}

/// The first to the last date partition recorded in `state`.
fn written_range(state: &JobState) -> Option<DateRange> {
    let dates: Vec<NaiveDate> = state
        .partitions
        .keys()
        .filter_map(|p| p.split_once('=').and_then(|(_, d)| lakewriter_core::parse_date(d).ok()))
        .collect();
    DateRange::new(*dates.iter().min()?, *dates.iter().max()?).ok()
}

/// A run id: unique enough to tell runs apart in logs and commit history.
fn new_run_id(unit: &PartitionRun) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    stable_hash(format!("{unit}/{now}/{}", std::process::id()).as_bytes())[..16].to_owned()
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn is_conflict(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.downcast_ref::<lakewriter_delta::Error>().is_some_and(lakewriter_delta::Error::is_conflict) {
            return true;
        }
        current = e.source();
    }
    false
}

/// Exponential backoff with jitter derived from the unit, so concurrent losers spread out.
fn backoff(attempt: u32, unit: &PartitionRun) -> Duration {
    let base = 50u64 << attempt.min(6);
    let seed = stable_hash(format!("{unit}/{attempt}/{:?}", std::time::SystemTime::now()).as_bytes());
    let jitter = u64::from_str_radix(&seed[..4], 16).unwrap_or(0) % base;
    Duration::from_millis(base + jitter)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
