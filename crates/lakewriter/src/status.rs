//! Which partitions need a run: the state each write recorded in the table's log, compared with
//! the job's code and the inputs its plan reads now.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use futures::StreamExt;
use lakewriter_compute::Prepared;
use lakewriter_core::{DateRange, InputFile, OnMissingInput, PartitionKey, WriteMode, input_fingerprint};
use lakewriter_delta::schema::SchemaColumn;
use lakewriter_delta::state::{JobState, LogScope, Recorded};
use serde::Serialize;

use crate::columns::writes_column;
use crate::upstream::Found;
use crate::{Error, Job, Result, Runner, error_chain};

/// Partitions planned at once by `status` and `plan`.
const CONCURRENT_PLANS: usize = 4;

impl Runner {
    /// The state of `job`'s partitions in `range` (default: the first to the last partition it
    /// wrote): each partition's plan is made, its inputs fingerprinted and compared, with the
    /// code's, to what the last write recorded; with the version, rows and run id of each write,
    /// also of those older than the newest checkpoint while the log keeps their commit files.
    /// Writes nothing.
    pub async fn status(&self, job: &Job, range: Option<DateRange>) -> Result<JobStatus> {
        self.state_of(job, range, true, &Found::default()).await
    }

    /// [`Runner::status`], where the states of upstream partitions in `found` are taken as they
    /// are rather than planned again (`report`, which finds every job's in dependency order).
    pub(crate) async fn status_after(&self, job: &Job, range: Option<DateRange>, found: &Found) -> Result<JobStatus> {
        self.state_of(job, range, true, found).await
    }

    /// [`Runner::status`] without the version, rows and run id of the writes older than the
    /// newest checkpoint (no commit file read for them): what `plan` and `--only` decide by.
    pub async fn freshness(&self, job: &Job, range: Option<DateRange>) -> Result<JobStatus> {
        self.state_of(job, range, false, &Found::default()).await
    }

    async fn state_of(&self, job: &Job, range: Option<DateRange>, details: bool, found: &Found) -> Result<JobStatus> {
        let recorded = self.recorded(job, LogScope::Whole).await?;
        let table_version = recorded.as_ref().map(|s| s.version);
        let mut state = recorded.unwrap_or_default();
        let days: Vec<Option<NaiveDate>> = if job.dated() {
            let range = match range {
                Some(range) => range,
                None => written_range(&state).ok_or_else(|| Error::NothingWritten { job: job.spec.name.clone() })?,
            };
            range.days().map(Some).collect()
        } else {
            vec![None]
        };
        if details {
            let shown: std::collections::BTreeSet<PartitionKey> = days.iter().map(|dt| job.partition(*dt)).collect();
            lakewriter_delta::state::fill_details(&job.location, &job.spec.name, &mut state, &|p| shown.contains(p))
                .await
                .map_err(|source| Error::State { table: job.spec.target.to_string(), source: Box::new(source) })?;
        }
        let mut planned = self.partition_statuses(job, &state, days).await?;
        self.mark_upstream_stale(job, &mut planned, found).await?;
        let columns = self.table_columns(job, &state).await?;
        let mut adds: Vec<SchemaColumn> = Vec::new();
        for lacks in planned.iter().flat_map(|(p, _)| &p.lacks) {
            if !columns.contains(lacks) && !adds.contains(lacks) {
                adds.push(lacks.clone());
            }
        }
        let rebuild = match (job.spec.write.mode(), planned.first()) {
            (WriteMode::Rebuild, Some((_, files))) => Some(self.rebuild_cost(job, files).await?),
            _ => None,
        };
        Ok(JobStatus {
            job: job.spec.name.clone(),
            target: job.spec.target.clone(),
            write: job.spec.write.mode(),
            table_version,
            checkpoint: state.checkpoint,
            log: table_version.map(|_| LogLength::of(&state)),
            partitions: planned.into_iter().map(|(status, _)| status).collect(),
            adds,
            rebuild,
        })
    }

    /// What each run of the `rebuild` job `job` reads (`files`, its plan's inputs now) and
    /// replaces (the table's rows, from its log's file statistics).
    async fn rebuild_cost(&self, job: &Job, files: &[InputFile]) -> Result<RebuildCost> {
        let bytes = files.iter().map(|f| f.size).sum();
        let table = self.layout(job).await?;
        Ok(RebuildCost {
            files: files.len(),
            bytes,
            rows_replaced: table.as_ref().and_then(|t| t.rows),
            bytes_replaced: table.as_ref().map(|t| t.bytes),
            input_size_warning: job.spec.input_size_warning.filter(|&limit| bytes > limit),
        })
    }

    /// The state of `job`'s partitions of `days`, each with the files its plan reads now.
    pub(crate) async fn partition_statuses(
        &self,
        job: &Job,
        state: &JobState,
        days: Vec<Option<NaiveDate>>,
    ) -> Result<Vec<(PartitionStatus, Vec<InputFile>)>> {
        let columns = self.table_columns(job, state).await?;
        // The SQL is planned once for all the days; where that fails, each day's planning says
        // why, as a run's would.
        let prepared = Prepared::new(self.session(), &job.query).await.ok().map(Arc::new);
        futures::stream::iter(days)
            .map(|dt| self.partition_status(job, state, &columns, prepared.as_ref(), dt))
            .buffered(CONCURRENT_PLANS)
            .collect::<Vec<Result<_>>>()
            .await
            .into_iter()
            .collect()
    }

    /// The data files of `job`'s table and what compaction would rewrite (`status --maintenance`):
    /// opens the table's latest snapshot. `None` where the table does not exist yet.
    pub async fn layout(&self, job: &Job) -> Result<Option<lakewriter_delta::maintain::Layout>> {
        lakewriter_delta::maintain::layout(&job.location, None, &job.spec.cluster_by)
            .await
            .map_err(|source| Error::OpenTable { table: job.spec.target.to_string(), source: Box::new(source) })
    }

    /// The state of `job`'s partition `dt`: its plan's inputs now against what `state` recorded;
    /// with the files the plan reads. `columns` are the table's (see [`PartitionStatus::lacks`]).
    async fn partition_status(
        &self,
        job: &Job,
        state: &JobState,
        columns: &[SchemaColumn],
        prepared: Option<&Arc<Prepared>>,
        dt: Option<NaiveDate>,
    ) -> Result<(PartitionStatus, Vec<InputFile>)> {
        let partition = job.partition(dt);
        let recorded = state.partitions.get(&partition);
        let planned = match prepared {
            Some(prepared) => self.plan_prepared(prepared, dt).await,
            None => self.plan(&job.query, dt).await,
        };
        match planned {
            Ok(query) => {
                let inputs = input_fingerprint(&query.files);
                let mut status =
                    PartitionStatus::of(partition, dt, recorded, &job.code, Some(&inputs), query.files.len());
                if let Some(recorded) = recorded {
                    let schema = query.plan.schema();
                    let lacks = recorded.lacks(columns).into_iter().filter(|c| writes_column(job, &c.column, schema));
                    let adds = crate::columns::new_columns(job, columns, schema);
                    status.lacking(lacks.cloned().chain(adds).collect());
                }
                if !query.no_input.is_empty() && job.spec.on_missing_input == OnMissingInput::Fail {
                    status.without_input(query.no_input);
                }
                Ok((status, query.files))
            }
            Err(e) if e.is_unreadable_input() => {
                tracing::warn!(job = %job.spec.name, %partition, error = %error_chain(&e), "an input cannot be read");
                Ok((PartitionStatus::of(partition, dt, recorded, &job.code, None, 0), Vec::new()))
            }
            Err(source) => {
                Err(Error::PlanPartition { job: job.spec.name.clone(), partition, source: Box::new(source) })
            }
        }
    }
}

/// The first to the last date partition recorded in `state`.
pub(crate) fn written_range(state: &JobState) -> Option<DateRange> {
    let mut dates = state.partitions.keys().filter_map(PartitionKey::date);
    let first = dates.next()?;
    let (from, to) = dates.fold((first, first), |(from, to), d| (from.min(d), to.max(d)));
    DateRange::new(from, to).ok()
}

/// Whether a partition's last write still stands for the job's code and inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Freshness {
    /// Written with the current code from the current inputs: a run would reproduce it.
    Fresh,
    /// Written, but the code or the inputs changed since; `reasons` says which.
    Stale,
    /// Never written by this job.
    Missing,
    /// A raw dataset the job reads has no file for the day (`no_input` names them), and the job's
    /// `on_missing_input` is `fail`: a run of it fails — its data has not arrived —, whatever
    /// was written before.
    NoInput,
}

impl Freshness {
    /// Every state, in the order reports list them.
    pub const ALL: [Self; 4] = [Self::Fresh, Self::Stale, Self::Missing, Self::NoInput];

    /// The state as `--json` spells it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fresh => "fresh",
            Self::Stale => "stale",
            Self::Missing => "missing",
            Self::NoInput => "no_input",
        }
    }
}

/// Why a partition is stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StaleReason {
    /// Files the plan reads were added, removed or changed since the write (late data).
    InputsChanged,
    /// The job's SQL or write settings changed since the write.
    CodeChanged,
    /// A raw file or folder the plan would read cannot be read (a run fails, naming it).
    InputsUnreadable,
    /// A partition of an upstream job it read is stale (`upstream_stale` names it): its rows
    /// were computed from rows that a rerun upstream will change.
    UpstreamStale,
    /// Its rows lack a column the job writes now (`lacks` names them): added to the table since
    /// they were written, or written as NULL by code whose result did not have it, or left out
    /// under `on_schema_change = "ignore"`. A rerun fills it in.
    LacksColumn,
}

impl fmt::Display for StaleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InputsChanged => "inputs changed",
            Self::CodeChanged => "code changed",
            Self::InputsUnreadable => "inputs unreadable",
            Self::UpstreamStale => "upstream stale",
            Self::LacksColumn => "lacks column",
        })
    }
}

/// One partition's state, as `lakewriter status` and `plan` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionStatus {
    pub partition: PartitionKey,
    pub dt: Option<NaiveDate>,
    pub state: Freshness,
    pub reasons: Vec<StaleReason>,
    /// The last write: its table version and row count (known while its commit is newer than
    /// the table's newest checkpoint) and its time.
    pub version: Option<u64>,
    pub written_at: Option<DateTime<Utc>>,
    pub rows: Option<u64>,
    /// The run id of the last write, known with its version.
    pub run_id: Option<String>,
    /// How long the run of the last write took, from its start to its commit: known with its
    /// version where its commit records the run's start (commits made before lakewriter recorded
    /// it have none).
    pub duration_ms: Option<u64>,
    /// Files the job's plan reads for this partition now.
    pub files_scanned: usize,
    /// The stale partitions of upstream jobs its plan reads (reason `upstream_stale`).
    pub upstream_stale: Vec<UpstreamPartition>,
    /// The columns the job writes now that this partition's rows read as NULL — added since it
    /// was written, or written as NULL by code whose result lacked them — and the columns a run
    /// of the job's code now would add (`on_schema_change`): what a rerun fills in (reason
    /// `lacks_column`).
    pub lacks: Vec<SchemaColumn>,
    /// The raw datasets the job reads that have no file for the day (state `no_input`).
    pub no_input: Vec<String>,
}

/// A partition of another job's table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct UpstreamPartition {
    pub job: String,
    pub partition: PartitionKey,
}

impl PartitionStatus {
    /// Compares what was recorded for the partition with the job's code and inputs now
    /// (`input_fingerprint` is `None` where an input the plan would read cannot be read).
    #[must_use]
    pub fn of(
        partition: PartitionKey,
        dt: Option<NaiveDate>,
        recorded: Option<&Recorded>,
        code_fingerprint: &str,
        input_fingerprint: Option<&str>,
        files_scanned: usize,
    ) -> Self {
        let mut reasons = Vec::new();
        let state = match recorded {
            None => Freshness::Missing,
            Some(r) => {
                match input_fingerprint {
                    None => reasons.push(StaleReason::InputsUnreadable),
                    Some(inputs) if !r.inputs_match(inputs) => reasons.push(StaleReason::InputsChanged),
                    Some(_) => {}
                }
                if !r.code_matches(code_fingerprint) {
                    reasons.push(StaleReason::CodeChanged);
                }
                if reasons.is_empty() { Freshness::Fresh } else { Freshness::Stale }
            }
        };
        Self {
            partition,
            dt,
            state,
            reasons,
            version: recorded.and_then(|r| r.version),
            written_at: recorded.and_then(|r| r.written_at),
            rows: recorded.and_then(|r| r.rows),
            run_id: recorded.and_then(|r| r.run_id.clone()),
            duration_ms: recorded.and_then(|r| r.duration_ms),
            files_scanned,
            upstream_stale: Vec::new(),
            lacks: Vec::new(),
            no_input: Vec::new(),
        }
    }

    /// The raw datasets `tables` have no file for the partition's day: a run of it fails.
    fn without_input(&mut self, tables: Vec<String>) {
        self.state = Freshness::NoInput;
        self.reasons.clear();
        self.no_input = tables;
    }

    /// The partition's rows lack `columns`, columns the job writes now: stale for that, where
    /// there are any.
    fn lacking(&mut self, columns: Vec<SchemaColumn>) {
        if !columns.is_empty() {
            self.state = Freshness::Stale;
            self.reasons.push(StaleReason::LacksColumn);
        }
        self.lacks = columns;
    }

    /// `fresh`, `missing`, `stale: inputs changed, code changed`.
    #[must_use]
    pub fn label(&self) -> String {
        match self.state {
            Freshness::Fresh => "fresh".into(),
            Freshness::Missing => "missing".into(),
            Freshness::NoInput => format!("no input ({})", self.no_input.join(", ")),
            Freshness::Stale => {
                let reasons: Vec<String> = self
                    .reasons
                    .iter()
                    .map(|r| match r {
                        StaleReason::UpstreamStale => {
                            let named: Vec<String> =
                                self.upstream_stale.iter().map(|u| format!("{} {}", u.job, u.partition)).collect();
                            format!("{r} ({})", named.join(", "))
                        }
                        other => other.to_string(),
                    })
                    .collect();
                format!("stale: {}", reasons.join(", "))
            }
        }
    }
}

/// The state of a job's partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobStatus {
    pub job: String,
    pub target: lakewriter_core::TableRef,
    /// The job's `write` as the project file spells it.
    pub write: lakewriter_core::WriteMode,
    /// The table version the state was read at; `None` where the table does not exist yet.
    pub table_version: Option<u64>,
    /// The newest checkpoint the state was read from.
    pub checkpoint: Option<u64>,
    /// The length of the table's log; `None` where the table does not exist yet.
    pub log: Option<LogLength>,
    pub partitions: Vec<PartitionStatus>,
    /// The columns a run of the job's code now would add to its table (`on_schema_change`).
    pub adds: Vec<SchemaColumn>,
    /// A `rebuild` job's cost per run; `None` for a dated job.
    pub rebuild: Option<RebuildCost>,
}

/// What each run of a `rebuild` job costs: it reads every input and replaces every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RebuildCost {
    /// The files its plan reads now, and their bytes.
    pub files: usize,
    pub bytes: u64,
    /// The table's rows now (`None`: no table yet, or a file without a row count), which a run
    /// replaces, and the bytes of its data files.
    pub rows_replaced: Option<u64>,
    pub bytes_replaced: Option<u64>,
    /// The job's `input_size_warning`, where the input is past it; else `None`.
    pub input_size_warning: Option<u64>,
}

/// Commits after the newest checkpoint from which `status` says a checkpoint is due: each is a
/// file that every reader of the table reads, and `maintain` writes the checkpoint.
pub const CHECKPOINT_AFTER: u64 = 10;

/// The length of a table's log, from the listing the partition state is read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LogLength {
    /// Commits after the newest checkpoint (all of them where there is none).
    pub commits_since_checkpoint: u64,
    /// Commit files the log holds; log clean-up removes those older than the log retention.
    pub commit_files: usize,
}

impl LogLength {
    fn of(state: &JobState) -> Self {
        let since = state.checkpoint.map_or(state.version + 1, |c| state.version - c);
        Self { commits_since_checkpoint: since, commit_files: state.commit_files }
    }

    /// Whether a checkpoint is due: [`CHECKPOINT_AFTER`] commits or more since the newest.
    #[must_use]
    pub fn needs_checkpoint(&self) -> bool {
        self.commits_since_checkpoint >= CHECKPOINT_AFTER
    }
}

/// Which partitions a backfill runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Only {
    /// Partitions never written.
    Missing,
    /// Partitions never written, or whose code or inputs changed since.
    Stale,
    /// Every partition of the range: a rerun is always safe.
    #[default]
    All,
}

impl Only {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Stale => "stale",
            Self::All => "all",
        }
    }

    #[must_use]
    pub fn selects(self, status: &PartitionStatus) -> bool {
        match self {
            Self::All => true,
            Self::Stale => status.state != Freshness::Fresh,
            Self::Missing => {
                status.state == Freshness::Missing
                    || (status.state == Freshness::NoInput && status.written_at.is_none())
            }
        }
    }
}

/// Whether a backfill would run a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Run,
    Skip,
}

/// What `plan` says a backfill would do with one partition, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedPartition {
    pub partition: PartitionKey,
    pub dt: Option<NaiveDate>,
    pub action: Action,
    pub state: Freshness,
    pub reasons: Vec<StaleReason>,
    pub why: String,
}

impl PlannedPartition {
    #[must_use]
    pub fn of(status: &PartitionStatus, only: Only, job: &crate::Job) -> Self {
        let run = only.selects(status);
        let why = match (run, status.state) {
            (true, Freshness::Missing) => "never written".to_owned(),
            (true, Freshness::NoInput) => format!("{}: a run fails (on_missing_input = \"fail\")", status.label()),
            (true, Freshness::Stale) if job.runs_once() => {
                format!("{} (an append runs once: it skips unless --force)", status.label())
            }
            (true, Freshness::Stale) if !status.lacks.is_empty() => {
                let lacks: Vec<String> = status.lacks.iter().map(|c| format!("`{}`", c.column)).collect();
                format!("{}; fills {}", status.label(), lacks.join(", "))
            }
            (true, Freshness::Stale) => status.label(),
            (true, Freshness::Fresh) => "fresh: a rerun reproduces the same content (--only all)".to_owned(),
            (false, _) => format!("{} (--only {})", status.label(), only.as_str()),
        };
        Self {
            partition: status.partition.clone(),
            dt: status.dt,
            action: if run { Action::Run } else { Action::Skip },
            state: status.state,
            reasons: status.reasons.clone(),
            why,
        }
    }
}

#[cfg(test)]
mod tests;
