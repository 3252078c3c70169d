//! `status --json`, read into typed lines: one per partition, then the summary. Every test that
//! reads a partition's state reads it here.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Lake, Run, lines_and_closing};

/// What a checkpoint keeps of a partition's state: partition, state, reasons, when it was
/// written, files scanned.
pub type Kept<'a> = (&'a str, &'a str, &'a [String], Option<&'a str>, u64);

/// One partition line of `status --json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionStatus {
    pub job: String,
    pub partition: String,
    /// The partition's day (`None` for a job without a date, such as a `rebuild`).
    pub dt: Option<String>,
    /// `fresh`, `stale` or `missing`.
    pub state: String,
    /// Why a `stale` partition is stale (`inputs_changed`, `code_changed`, …).
    pub reasons: Vec<String>,
    /// The table version of the last write, where known.
    pub version: Option<u64>,
    pub written_at: Option<String>,
    /// The rows of the last write, where known.
    pub rows: Option<u64>,
    pub run_id: Option<String>,
    /// How long the last write's run took, from its start to its commit, where known.
    pub duration_ms: Option<u64>,
    pub files_scanned: u64,
    /// The stale upstream partitions its plan reads (reason `upstream_stale`).
    pub upstream_stale: Vec<Upstream>,
    /// The columns its rows read as NULL that a rerun fills in: `{"column", "type"}` each.
    pub lacks: Vec<serde_json::Value>,
    /// The raw datasets with no file for the day (state `no_input`).
    pub no_input: Vec<String>,
}

impl PartitionStatus {
    /// The names of the columns it [lacks](Self::lacks).
    pub fn lacking(&self) -> Vec<&str> {
        self.lacks.iter().map(|c| c["column"].as_str().expect("a column name")).collect()
    }
}

/// A partition of an upstream job.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upstream {
    pub job: String,
    pub partition: String,
}

impl PartitionStatus {
    /// The state with its reasons: `fresh`, `missing`, `stale:inputs_changed`, …
    pub fn label(&self) -> String {
        if self.reasons.is_empty() { self.state.clone() } else { format!("{}:{}", self.state, self.reasons.join(",")) }
    }

    /// What a checkpoint keeps of the state: the partition, its state and reasons, when it was
    /// written and the files its plan reads (the version, rows and run id of a write come from its
    /// commit file, read only after the newest checkpoint).
    pub fn kept_by_a_checkpoint(&self) -> Kept<'_> {
        (&self.partition, &self.state, &self.reasons, self.written_at.as_deref(), self.files_scanned)
    }
}

/// The closing line of `status --json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusSummary {
    pub job: String,
    pub target: String,
    /// The version the state was read at; `None` where the table does not exist yet.
    pub table_version: Option<u64>,
    pub checkpoint: Option<u64>,
    pub log: Option<LogLength>,
    /// Only with `--maintenance`.
    pub maintenance: Option<serde_json::Value>,
    /// A `rebuild` job's cost per run.
    pub rebuild: Option<RebuildCost>,
    pub fresh: usize,
    pub stale: usize,
    pub missing: usize,
    pub no_input: usize,
    pub schema_version: u64,
}

/// What each run of a `rebuild` job reads and replaces, in the closing line of `status` and
/// `plan`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RebuildCost {
    /// The files its plan reads now, and their bytes.
    pub files: u64,
    pub bytes: u64,
    /// The table's rows and the bytes of its data files now; `None` where there is no table yet
    /// (or, for the rows, a file without a row count).
    pub rows_replaced: Option<u64>,
    pub bytes_replaced: Option<u64>,
    /// The job's `input_size_warning` in bytes, where the input is past it.
    pub input_size_warning: Option<u64>,
}

/// The length of a table's log.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogLength {
    pub commits_since_checkpoint: u64,
    pub commit_files: u64,
}

/// What `status --json` printed.
#[derive(Debug, Clone)]
pub struct Status {
    pub partitions: Vec<PartitionStatus>,
    pub summary: StatusSummary,
}

impl Status {
    /// The lines of `run`, a `status --json` that exited 0.
    #[track_caller]
    pub fn of(run: &Run) -> Self {
        let (partitions, summary) = lines_and_closing(run, "summary");
        Self { partitions, summary }
    }

    /// The state of each partition, in order.
    pub fn states(&self) -> Vec<&str> {
        self.partitions.iter().map(|p| p.state.as_str()).collect()
    }

    /// Each partition by its day.
    pub fn by_day(&self) -> BTreeMap<String, &PartitionStatus> {
        self.partitions.iter().map(|p| (p.dt.clone().expect("a dated partition"), p)).collect()
    }
}

impl Lake {
    /// `lakewriter --json status ARGS…`, which must exit 0.
    #[track_caller]
    pub fn status(&self, args: &[&str]) -> Status {
        Status::of(&self.cli(&[&["--json", "status"], args].concat()))
    }
}
