//! `plan --json`, read into typed lines: one per partition, then the closing line. Every test
//! that reads what a backfill would run reads it here.

use serde::Deserialize;

use super::status::RebuildCost;
use super::{Lake, Run, lines_and_closing};

/// One partition line of `plan --json`: what a backfill would do with it, and why.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedPartition {
    pub job: String,
    pub partition: String,
    /// The partition's day (`None` for a job without a date, such as a `rebuild`).
    pub dt: Option<String>,
    /// `run` or `skip`.
    pub action: String,
    /// `fresh`, `stale`, `missing` or `no_input`.
    pub state: String,
    /// Why a `stale` partition is stale (`inputs_changed`, `code_changed`, …).
    pub reasons: Vec<String>,
    pub why: String,
}

/// The closing line of `plan --json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanSummary {
    pub job: String,
    /// The `--only` the plan was made for.
    pub only: String,
    /// Partitions a backfill would run, and skip.
    pub run: usize,
    pub skip: usize,
    /// The columns a run of the job's code now adds to its table: `{"column", "type"}` each.
    pub adds: Vec<serde_json::Value>,
    /// Why every run fails, where the job's result has columns its table lacks.
    pub refused: Option<String>,
    /// A `rebuild` job's cost per run.
    pub rebuild: Option<RebuildCost>,
    pub schema_version: u64,
}

/// What `plan --json` printed.
#[derive(Debug, Clone)]
pub struct Plan {
    pub partitions: Vec<PlannedPartition>,
    pub summary: PlanSummary,
}

impl Plan {
    /// The lines of `run`, a `plan --json` that exited 0.
    #[track_caller]
    pub fn of(run: &Run) -> Self {
        let (partitions, summary) = lines_and_closing(run, "plan");
        Self { partitions, summary }
    }

    /// The partitions a backfill would run, in order.
    pub fn runs(&self) -> Vec<&str> {
        self.partitions.iter().filter(|p| p.action == "run").map(|p| p.partition.as_str()).collect()
    }
}

impl Lake {
    /// `lakewriter --json plan ARGS…`, which must exit 0.
    #[track_caller]
    pub fn plan(&self, args: &[&str]) -> Plan {
        Plan::of(&self.cli(&[&["--json", "plan"], args].concat()))
    }
}
