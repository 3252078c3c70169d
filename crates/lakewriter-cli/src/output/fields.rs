//! What both printers read off the reports: the report fields that are still strings, each
//! compared here and nowhere else, and the figures both formats show (a status's counts, the
//! maintenance due).

use lakewriter::{Freshness, Layout, LogLength, PartitionReport, PartitionStatus, PlannedPartition};
use serde::Serialize;

/// A job written as a SQL statement (its `changes` are delta-rs's MERGE counts: no unchanged or
/// dropped rows).
pub fn is_statement(report: &PartitionReport) -> bool {
    report.write == "statement"
}

/// A job of `write = "overwrite_partition"` (a run of no rows leaves its partition empty).
pub fn is_overwrite_partition(report: &PartitionReport) -> bool {
    report.write == "overwrite_partition"
}

/// A partition `plan` says a backfill would run.
pub fn runs(planned: &PlannedPartition) -> bool {
    planned.action == "run"
}

/// How many partitions of a status are fresh, stale and missing.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct StateCounts {
    pub fresh: usize,
    pub stale: usize,
    pub missing: usize,
}

impl StateCounts {
    pub fn of(partitions: &[PartitionStatus]) -> Self {
        let count = |state| partitions.iter().filter(|p| p.state == state).count();
        Self { fresh: count(Freshness::Fresh), stale: count(Freshness::Stale), missing: count(Freshness::Missing) }
    }
}

/// What `status --maintenance` says of a table: its files, and which steps are due.
#[derive(Serialize)]
pub struct Maintenance<'a> {
    #[serde(flatten)]
    pub layout: &'a Layout,
    /// `compact` where a partition holds several small files, `checkpoint` where
    /// [`lakewriter::CHECKPOINT_AFTER`] commits or more follow the newest checkpoint.
    pub needed: Vec<&'static str>,
}

impl<'a> Maintenance<'a> {
    pub fn of(layout: &'a Layout, log: Option<LogLength>) -> Self {
        let mut needed = Vec::new();
        if !layout.to_compact.is_empty() {
            needed.push("compact");
        }
        if log.is_some_and(|log| log.needs_checkpoint()) {
            needed.push("checkpoint");
        }
        Self { layout, needed }
    }
}
