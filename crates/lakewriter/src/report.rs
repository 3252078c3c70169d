use chrono::NaiveDate;
use serde::Serialize;

/// How one partition run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Committed. With `rows_written = 0` the partition is now empty, on purpose.
    Ok,
    /// Nothing committed; `error` says why.
    Failed,
}

/// The typed result of one [`crate::PartitionRun`]: what a progress bar, a JSON line or an
/// orchestrator needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionReport {
    pub job: String,
    pub target: String,
    /// `column=value`, e.g. `dt=2026-09-30`.
    pub partition: String,
    pub dt: NaiveDate,
    pub status: RunStatus,
    pub rows_written: Option<u64>,
    pub table_version: Option<u64>,
    pub files_added: Option<u64>,
    pub files_removed: Option<u64>,
    /// Raw and Delta files the job's physical plan read, after partition pruning.
    pub files_scanned: Option<usize>,
    pub duration_ms: u64,
    pub error: Option<String>,
}

impl PartitionReport {
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.status == RunStatus::Ok
    }
}

/// The closing line of a run or backfill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub job: String,
    pub partitions: usize,
    pub ok: usize,
    pub failed: usize,
    pub rows_written: u64,
    pub table_version: Option<u64>,
    pub duration_ms: u64,
}

impl Summary {
    #[must_use]
    pub fn of(job: &str, reports: &[PartitionReport], duration_ms: u64) -> Self {
        let ok = reports.iter().filter(|r| r.is_ok()).count();
        Self {
            job: job.to_owned(),
            partitions: reports.len(),
            ok,
            failed: reports.len() - ok,
            rows_written: reports.iter().filter_map(|r| r.rows_written).sum(),
            table_version: reports.iter().filter_map(|r| r.table_version).max(),
            duration_ms,
        }
    }
}
