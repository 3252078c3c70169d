//! `maintain`: compaction, checkpoint, vacuum and log clean-up of the tables a project writes,
//! each step a typed [`StepReport`]. The steps themselves are `lakewriter_delta::maintain`'s.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use lakewriter_core::TableRef;
use lakewriter_core::maintain::{DEFAULT_RETENTION, Step, format_duration};
use lakewriter_delta::maintain::{self as delta, PartitionFiles, Settings};
use lakewriter_storage::Location;
use serde::Serialize;

use crate::{Error, Result, Runner, elapsed_ms, error_chain};

/// What `maintain` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaintainOptions {
    /// The steps to run, in [`Step`] order.
    pub steps: BTreeSet<Step>,
    /// Vacuum's retention; default: the table's `delta.deletedFileRetentionDuration` (7 days).
    pub retention: Option<Duration>,
    /// Allows a retention below that default.
    pub force: bool,
    /// Compaction's target file size; default: the table's `delta.targetFileSize` (100 MiB).
    pub target_file_size: Option<u64>,
    /// Say what each step would do; write nothing.
    pub dry_run: bool,
}

impl Default for MaintainOptions {
    fn default() -> Self {
        Self { steps: Step::ALL.into(), retention: None, force: false, target_file_size: None, dry_run: false }
    }
}

/// How one step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Done, or nothing to do (`note` says which).
    Ok,
    /// Not run: the table does not exist yet, or it turns the step off.
    Skipped,
    /// `--dry-run`: what the step would do; nothing written.
    DryRun,
    /// The step failed; `error` says why. A failed compaction committed nothing.
    Failed,
}

/// The typed result of one step on one table: a JSON line of `maintain --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepReport {
    pub table: String,
    pub step: Step,
    pub status: StepStatus,
    /// Whether the step made a table version (compaction's commit, vacuum's two).
    pub committed: bool,
    /// The table's version after the step, where known.
    pub table_version: Option<u64>,
    /// compact: the partitions rewritten (or to rewrite), with their small files.
    pub partitions: Option<Vec<PartitionFiles>>,
    pub files_removed: Option<u64>,
    pub files_added: Option<u64>,
    pub target_file_size: Option<u64>,
    /// vacuum: the data files deleted (or to delete).
    pub files_deleted: Option<u64>,
    /// cleanup: the log files removed (or to remove).
    pub log_files_removed: Option<u64>,
    /// vacuum and cleanup: the retention applied, e.g. `7d`.
    pub retention: Option<String>,
    /// compact: plans made again after a conflict with a concurrent commit.
    pub retries: u32,
    pub duration_ms: u64,
    pub note: Option<String>,
    pub error: Option<String>,
}

impl StepReport {
    fn new(table: &TableRef, step: Step) -> Self {
        Self {
            table: table.to_string(),
            step,
            status: StepStatus::Ok,
            committed: false,
            table_version: None,
            partitions: None,
            files_removed: None,
            files_added: None,
            target_file_size: None,
            files_deleted: None,
            log_files_removed: None,
            retention: None,
            retries: 0,
            duration_ms: 0,
            note: None,
            error: None,
        }
    }
}

/// The counts of a `maintain`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MaintainSummary {
    pub tables: usize,
    pub steps: usize,
    pub ok: usize,
    pub skipped: usize,
    pub failed: usize,
    /// Table versions made (a compaction's one, a vacuum's two).
    pub commits: usize,
    pub files_compacted: u64,
    pub files_deleted: u64,
    pub log_files_removed: u64,
    pub dry_run: bool,
    pub duration_ms: u64,
}

impl MaintainSummary {
    #[must_use]
    pub fn of(reports: &[StepReport], dry_run: bool, started: Instant) -> Self {
        let count = |status| reports.iter().filter(|r| r.status == status).count();
        let tables: BTreeSet<&str> = reports.iter().map(|r| r.table.as_str()).collect();
        let done = |r: &&StepReport| r.status == StepStatus::Ok;
        Self {
            tables: tables.len(),
            steps: reports.len(),
            ok: count(StepStatus::Ok) + count(StepStatus::DryRun),
            skipped: count(StepStatus::Skipped),
            failed: count(StepStatus::Failed),
            commits: reports.iter().filter(|r| r.committed).map(|r| if r.step == Step::Vacuum { 2 } else { 1 }).sum(),
            files_compacted: reports.iter().filter(done).filter_map(|r| r.files_removed).sum(),
            files_deleted: reports.iter().filter(done).filter_map(|r| r.files_deleted).sum(),
            log_files_removed: reports.iter().filter(done).filter_map(|r| r.log_files_removed).sum(),
            dry_run,
            duration_ms: elapsed_ms(started),
        }
    }
}

impl Runner {
    /// The tables `maintain` works on, and whether each must exist: `target`'s — a job's target
    /// table (skipped while the job has not written it), or a `schema.table` of the lakehouse
    /// (which must exist) — or, without one, every table the project's jobs write, each once.
    fn maintenance_tables(&self, target: Option<&str>) -> Result<(Vec<TableRef>, bool)> {
        let project = &self.workspace().project;
        match target {
            None => Ok((
                project.jobs.values().map(|job| job.target.clone()).collect::<BTreeSet<_>>().into_iter().collect(),
                false,
            )),
            Some(name) => match self.workspace().spec(name) {
                Ok(job) => Ok((vec![job.target.clone()], false)),
                // Neither a job nor a table name: the unknown job's error, which lists the jobs.
                Err(unknown) => TableRef::parse(name).map(|table| (vec![table], true)).map_err(|_| unknown),
            },
        }
    }

    /// The `cluster_by` of the job that writes `table` (a `schema.table`), if one names columns:
    /// the order compaction re-sorts the table's files in.
    fn cluster_by(&self, table: &str) -> Vec<String> {
        let jobs = self.workspace().project.jobs.values();
        jobs.filter(|job| job.target.to_string() == table)
            .map(|job| job.cluster_by.clone())
            .find(|c| !c.is_empty())
            .unwrap_or_default()
    }

    /// Runs `options.steps` on `target`'s tables (see `maintenance_tables`) in turn, in
    /// [`Step`] order: one report per table and step. A step that fails is reported and the next
    /// runs (each leaves the table whole). Fails before touching any table where `target` is a
    /// `schema.table` that does not exist, or where vacuum's retention is shorter than a table's
    /// without `force` (a usage error).
    pub async fn maintain(&self, target: Option<&str>, options: &MaintainOptions) -> Result<Vec<StepReport>> {
        let (tables, must_exist) = self.maintenance_tables(target)?;
        let mut found = Vec::new();
        for table in &tables {
            let location = self.workspace().table_location(table)?;
            // A table that cannot be opened fails its steps, not the others' (unless named).
            let settings = match delta::settings(&location).await {
                Ok(None) if must_exist => {
                    let missing = lakewriter_delta::Error::NotATable { url: location.url().clone() };
                    return Err(maintain_error(table, missing));
                }
                Err(source) if must_exist => return Err(maintain_error(table, source)),
                Err(source) => Err(error_chain(&maintain_error(table, source))),
                Ok(settings) => Ok(settings),
            };
            if let Ok(Some(settings)) = &settings
                && options.steps.contains(&Step::Vacuum)
            {
                check_retention(table, settings, options)?;
            }
            found.push((table, location, settings));
        }
        let run_id = crate::run::new_run_id();
        let mut reports = Vec::new();
        for (table, location, settings) in found {
            for &step in &options.steps {
                let mut report = StepReport::new(table, step);
                let started = Instant::now();
                match &settings {
                    Ok(None) => {
                        report.status = StepStatus::Skipped;
                        report.note = Some("no Delta table yet".into());
                    }
                    Ok(Some(settings)) => self.step(&location, settings, options, &run_id, &mut report).await,
                    Err(error) => {
                        report.status = StepStatus::Failed;
                        report.error = Some(error.clone());
                    }
                }
                report.duration_ms = elapsed_ms(started);
                reports.push(report);
            }
        }
        Ok(reports)
    }

    async fn step(
        &self,
        location: &Location,
        settings: &Settings,
        options: &MaintainOptions,
        run_id: &str,
        report: &mut StepReport,
    ) {
        let name = report.table.clone();
        let dry_run = options.dry_run;
        let outcome = match report.step {
            Step::Compact => {
                let cluster_by = self.cluster_by(&name);
                delta::compact(location, &name, options.target_file_size, &cluster_by, dry_run, run_id)
                    .await
                    .map(|c| compacted(report, c, !cluster_by.is_empty()))
            }
            Step::Checkpoint => delta::checkpoint(location, &name, dry_run).await.map(|c| checkpointed(report, c)),
            Step::Vacuum => {
                let retention = options.retention.unwrap_or(settings.deleted_file_retention);
                report.retention = Some(format_duration(retention));
                delta::vacuum(location, &name, retention, options.force, dry_run).await.map(|v| vacuumed(report, &v))
            }
            Step::Cleanup => delta::cleanup(location, &name, dry_run).await.map(|c| cleaned(report, c)),
        };
        if let Err(error) = outcome {
            report.status = StepStatus::Failed;
            report.error = Some(error_chain(&error));
        } else if dry_run && report.status == StepStatus::Ok {
            report.status = StepStatus::DryRun;
        }
    }
}

fn maintain_error(table: &TableRef, source: lakewriter_delta::Error) -> Error {
    Error::OpenTable { table: table.to_string(), source: Box::new(source) }
}

/// Refuses a vacuum retention shorter than the table's `delta.deletedFileRetentionDuration`
/// (Delta's default: 7 days) unless forced.
fn check_retention(table: &TableRef, settings: &Settings, options: &MaintainOptions) -> Result<()> {
    let Some(retention) = options.retention else { return Ok(()) };
    let minimum = settings.deleted_file_retention;
    if options.force || retention >= minimum {
        return Ok(());
    }
    let whose = if minimum == DEFAULT_RETENTION {
        "Delta's default retention (delta.deletedFileRetentionDuration)".to_owned()
    } else {
        format!("the delta.deletedFileRetentionDuration of {table}")
    };
    Err(Error::Usage(format!(
        "--retention {} is shorter than {whose}, {}: vacuum would delete files that a reader of an older version, or a writer still writing, may need; pass --force to allow it",
        format_duration(retention),
        format_duration(minimum)
    )))
}

fn compacted(report: &mut StepReport, c: delta::Compacted, clustered: bool) {
    report.committed = c.version.is_some();
    report.table_version = c.version;
    report.retries = c.retries;
    report.files_removed = Some(c.files_removed);
    report.files_added = Some(c.files_added);
    report.target_file_size = Some(c.target_file_size);
    let files = lakewriter_core::maintain::format_size(c.target_file_size);
    report.note = match (c.partitions.len(), report.committed) {
        (0, _) if clustered => Some(format!(
            "nothing to compact: no partition holds more than one file below {files}, or files whose cluster_by ranges overlap"
        )),
        (0, _) => Some(format!("nothing to compact: no partition holds more than one file below {files}")),
        (n, false) => Some(format!(
            "would rewrite {} file{} of {n} partition{}",
            c.files_removed,
            if c.files_removed == 1 { "" } else { "s" },
            if n == 1 { "" } else { "s" }
        )),
        (_, true) => None,
    };
    report.partitions = Some(c.partitions);
}

fn checkpointed(report: &mut StepReport, c: delta::Checkpointed) {
    report.table_version = Some(c.version);
    report.note = Some(match (c.existed, c.written) {
        (true, _) => format!("version {} has a checkpoint already", c.version),
        (false, true) => format!("checkpoint of version {} written", c.version),
        (false, false) => format!("would write a checkpoint of version {}", c.version),
    });
}

fn vacuumed(report: &mut StepReport, v: &delta::Vacuumed) {
    report.committed = v.version.is_some();
    report.table_version = v.version;
    report.files_deleted = Some(v.files.len() as u64);
    if v.files.is_empty() {
        report.note = Some("no file to delete".into());
    }
}

fn cleaned(report: &mut StepReport, c: delta::Cleaned) {
    report.retention = Some(format_duration(c.retention));
    report.log_files_removed = Some(c.removed);
    if c.disabled {
        report.status = StepStatus::Skipped;
        report.note = Some("the table sets delta.enableExpiredLogCleanup = false".into());
    } else if c.removed == 0 {
        report.note = Some("no expired log file".into());
    }
}
