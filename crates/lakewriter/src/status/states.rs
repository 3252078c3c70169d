//! What `status` and `plan` say: a partition's state and why (`Freshness`, `StaleReason`,
//! `PartitionStatus`), a job's (`JobStatus`, its log's length and a `rebuild`'s cost), and what
//! a backfill would do with each partition (`Only`, `PlannedPartition`).

use std::fmt;

use chrono::{DateTime, NaiveDate, Utc};
use lakewriter_core::{DateRange, PartitionKey};
use lakewriter_delta::schema::SchemaColumn;
use lakewriter_delta::state::{JobState, Recorded};
use serde::Serialize;

use crate::Job;

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
    pub(super) fn without_input(&mut self, tables: Vec<String>) {
        self.state = Freshness::NoInput;
        self.reasons.clear();
        self.no_input = tables;
    }

    /// The partition's rows lack `columns`, columns the job writes now: stale for that, where
    /// there are any.
    pub(super) fn lacking(&mut self, columns: Vec<SchemaColumn>) {
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
    /// How the job's result now differs from its table's columns — a column added, dropped or of
    /// another type —, where its `on_schema_change` is `fail` (the default): every run fails,
    /// naming them.
    pub refused: Vec<String>,
    /// A `rebuild` job's cost per run; `None` for a dated job.
    pub rebuild: Option<RebuildCost>,
}

impl JobStatus {
    /// Where the job's result differs from its table's columns under `on_schema_change = "fail"`
    /// ([`JobStatus::refused`]): that every run fails, why, and what lets the change in.
    #[must_use]
    pub fn refusal(&self) -> Option<String> {
        if self.refused.is_empty() {
            return None;
        }
        Some(format!("every run fails: {}; {}", self.refused.join("; "), crate::error::schema_advice(&self.job)))
    }

    /// Whether this is the state of the dated `job` asked for without a range (its written one),
    /// and it has written no partition: there is none to show.
    pub(crate) fn nothing_written(&self, job: &Job, range: Option<DateRange>) -> bool {
        job.dated() && range.is_none() && self.partitions.is_empty()
    }
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
    pub(super) fn of(state: &JobState) -> Self {
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
