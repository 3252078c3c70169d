use std::fmt;

use chrono::NaiveDate;
use lakewriter_compute::KeyedCounts;
use lakewriter_core::{CheckOutcome, PartitionKey, TableRef, WriteMode};
use lakewriter_delta::MergeCounts;
use serde::{Serialize, Serializer};

/// How one partition run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Done: committed, or (a `merge` or `append_dedup` with nothing new) nothing to commit.
    /// With `rows_written = 0` after `overwrite_partition` the partition is now empty, on purpose.
    Ok,
    /// Not run again: an `append` already committed for this partition.
    Skipped,
    /// Nothing committed; `error` says why.
    Failed,
}

/// The typed result of one [`crate::PartitionRun`]: what a progress bar, a JSON line or an
/// orchestrator needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionReport {
    pub job: String,
    /// The job's target; `None` (`""` in JSON) where the job is unknown.
    #[serde(serialize_with = "or_empty")]
    pub target: Option<TableRef>,
    /// The job's `write` as the project file spells it (`statement` for a job written as one);
    /// `None` (`""` in JSON) where the job is unknown.
    #[serde(serialize_with = "or_empty")]
    pub write: Option<WriteMode>,
    /// The mode the run makes: its `write`, or the mode its statement maps onto.
    #[serde(skip)]
    pub mode: Option<WriteMode>,
    /// `column=value`, e.g. `dt=2026-09-30`, or `all` for a run without a date.
    pub partition: PartitionKey,
    pub dt: Option<NaiveDate>,
    pub status: RunStatus,
    /// Whether this run made a table version.
    pub committed: bool,
    pub rows_written: Option<u64>,
    /// The version this run committed, or the version it found where it had nothing to commit.
    pub table_version: Option<u64>,
    pub files_added: Option<u64>,
    pub files_removed: Option<u64>,
    /// Bytes of the files the commit added and removed (a merge's removed files are the ones it
    /// rewrote).
    pub bytes_added: Option<u64>,
    pub bytes_removed: Option<u64>,
    /// Raw and Delta files the job's physical plan read, after partition pruning.
    pub files_scanned: Option<usize>,
    /// Hash of those files (path, size, modification time, e-tag), as recorded in the commit.
    pub input_fingerprint: Option<String>,
    /// Whether the partition was already fresh before this run: its last write recorded the same
    /// code and inputs. `None` where the run failed before it could tell.
    pub fresh_before: Option<bool>,
    /// `merge` and `append_dedup`: what happened to each source row; a `MERGE INTO`: the rows
    /// it changed.
    pub changes: Option<Changes>,
    /// The job's checks on this partition's result: by kind (not_null, unique, accepted_values,
    /// row_count, expect, change_vs_previous), each kind's as listed (accepted_values by column
    /// name). Empty for a job without checks, or a run that failed before they were evaluated.
    pub checks: Vec<CheckOutcome>,
    /// `--dry-run`: what committing the result would change. Nothing was committed.
    pub dry_run: Option<DryRun>,
    /// What the run does to the table's columns (`on_schema_change`, and a `rebuild`'s new
    /// columns); `None` where the result has the table's columns, or there is no table yet.
    pub schema_change: Option<lakewriter_delta::schema::ColumnChanges>,
    /// Where the partition's query ran, and how its data files were written.
    pub engine: EngineUse,
    /// Attempts beyond the first, after conflicts with concurrent commits.
    pub retries: u32,
    /// Identifies this run in logs and in the commit's metadata; `None` for a run that failed
    /// before it started.
    pub run_id: Option<String>,
    pub duration_ms: u64,
    /// What is worth saying about the run beyond its figures.
    pub note: Option<Note>,
    /// Why the run failed: the run and its error's causes (`run: cause: cause`, in JSON).
    pub error: Option<Failure>,
    /// What the run read and the columns it wrote, for its lineage: only where lineage is emitted.
    #[serde(skip)]
    pub(crate) io: Option<Box<crate::lineage::RunIo>>,
}

/// Where a partition's query ran (`local`, this process, or the URL of a cluster's engine), and
/// how its data files were written: by how many executors (processes), in how many tasks, how
/// many files — `None` where the write's files were not written by lakewriter's own writer of a
/// query's rows (a keyed write, a write delta-rs makes, a run that wrote nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineUse {
    pub url: String,
    pub executors: Option<usize>,
    pub tasks: Option<usize>,
    pub files: Option<usize>,
}

impl Default for EngineUse {
    fn default() -> Self {
        Self { url: "local".to_owned(), executors: None, tasks: None, files: None }
    }
}

impl PartitionReport {
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.status != RunStatus::Failed
    }

    /// A report that says nothing yet but what ran: failed, nothing committed.
    pub(crate) fn blank(job: String, partition: PartitionKey, dt: Option<NaiveDate>) -> Self {
        Self {
            job,
            target: None,
            write: None,
            mode: None,
            partition,
            dt,
            status: RunStatus::Failed,
            committed: false,
            rows_written: None,
            table_version: None,
            files_added: None,
            files_removed: None,
            bytes_added: None,
            bytes_removed: None,
            files_scanned: None,
            input_fingerprint: None,
            fresh_before: None,
            changes: None,
            checks: Vec::new(),
            dry_run: None,
            schema_change: None,
            engine: EngineUse::default(),
            retries: 0,
            run_id: None,
            duration_ms: 0,
            note: None,
            error: None,
            io: None,
        }
    }
}

/// Why a partition run failed: the run, and its error's [`crate::causes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub run: lakewriter_core::PartitionRun,
    pub causes: Vec<String>,
}

impl Failure {
    #[must_use]
    pub fn of(run: &lakewriter_core::PartitionRun, error: &(dyn std::error::Error + 'static)) -> Self {
        Self { run: run.clone(), causes: crate::causes(error) }
    }
}

/// `job dt=…: error: cause: …`, as the error of a report says it.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.run, self.causes.join(": "))
    }
}

impl Serialize for Failure {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// What a write changed, row by row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Changes {
    /// `merge`, `append_dedup`: what happened to each source row.
    Keyed(KeyedCounts),
    /// A job's `MERGE INTO`: the rows it changed, as delta-rs counted them.
    Merge(MergeCounts),
}

impl Changes {
    /// The rows inserted, updated and deleted.
    #[must_use]
    pub fn rows_changed(&self) -> u64 {
        match self {
            Self::Keyed(c) => c.inserted + c.updated + c.deleted,
            Self::Merge(c) => c.inserted + c.updated + c.deleted,
        }
    }
}

/// `value` as its text, `""` where there is none.
#[allow(clippy::ref_option)] // serde's `serialize_with` hands the field over by reference.
fn or_empty<T: Serialize, S: Serializer>(value: &Option<T>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => value.serialize(serializer),
        None => serializer.serialize_str(""),
    }
}

/// What a dry run found committing a partition's result would change. For `merge` and
/// `append_dedup` the rows inserted, updated, deleted and unchanged are the report's `changes`;
/// a merge's rows added and removed are not counted (its changes are by key), and neither gives
/// example rows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DryRun {
    /// Whether the commit would change the partition's rows at all.
    pub changes: bool,
    /// Rows the partition would hold that it does not hold now (as many times as they would be
    /// added: rows are compared as a multiset).
    pub rows_added: Option<u64>,
    /// Rows it holds now that it would no longer hold.
    pub rows_removed: Option<u64>,
    /// Up to `--show N` rows of each, as `column=value, …`.
    pub added_examples: Vec<String>,
    pub removed_examples: Vec<String>,
}

/// The closing line of a run or backfill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub job: String,
    pub partitions: usize,
    pub ok: usize,
    pub skipped: usize,
    pub failed: usize,
    pub rows_written: u64,
    pub table_version: Option<u64>,
    pub duration_ms: u64,
    /// A dry run: how many of its partitions a run would change (nothing was committed).
    pub would_change: Option<usize>,
}

impl Summary {
    #[must_use]
    /// The summary of `reports`; with `dry_run`, of a dry run: `would_change` counts the
    /// partitions whose dry run succeeded and found a change.
    pub fn of(job: &str, reports: &[PartitionReport], duration_ms: u64, dry_run: bool) -> Self {
        let count = |status| reports.iter().filter(|r| r.status == status).count();
        Self {
            job: job.to_owned(),
            partitions: reports.len(),
            ok: count(RunStatus::Ok),
            skipped: count(RunStatus::Skipped),
            failed: count(RunStatus::Failed),
            rows_written: reports.iter().filter_map(|r| r.rows_written).sum(),
            table_version: reports.iter().filter_map(|r| r.table_version).max(),
            duration_ms,
            would_change: dry_run
                .then(|| reports.iter().filter(|r| r.is_ok() && r.dry_run.as_ref().is_some_and(|d| d.changes)).count()),
        }
    }
}

/// The outcome of `lakewriter verify`: the job's write applied twice to a scratch copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    pub job: String,
    pub partition: PartitionKey,
    pub pass: bool,
    pub digest_first: Option<String>,
    pub digest_second: Option<String>,
    /// Rows the second application added and removed (multiset difference).
    pub rows_added: u64,
    pub rows_removed: u64,
    /// Up to five of the rows added and of the rows removed, each as `column=value, …`, the
    /// first in the order of the columns (the same rows each time).
    pub added_examples: Vec<String>,
    pub removed_examples: Vec<String>,
    /// The table's floating-point columns, where the rows that differ differ in them alone (the
    /// same rows in every other column): a float computed in another order on each run (a `SUM`
    /// or `AVG` over `DOUBLE`) is the likely cause. Empty otherwise.
    pub float_columns: Vec<String>,
    pub first: PartitionReport,
    pub second: Option<PartitionReport>,
}

/// What is worth saying about a partition's run beyond its figures: in its text line, and as text
/// in its JSON event (`note`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// An `append` found its partition appended before, and appended nothing.
    AlreadyAppended,
    /// `--force` appended a partition appended before.
    AppendedAgain,
    /// No row to change and no state to record: no new table version.
    NothingToChange {
        /// The partition already was this run's (same code and inputs).
        fresh: bool,
    },
    /// The run committed, though the partition already was this run's.
    WasFresh,
    /// A keyed write or a `MERGE INTO` changed no row and committed only the partition's state;
    /// in a dry run (`dry_run`), would.
    StateAlone { dry_run: bool },
    /// The result's columns differ from the rows it replaces (a `rebuild`'s may): every row is
    /// replaced.
    ColumnsDiffer(Vec<String>),
    /// What the run does to the table's columns; `kept`: columns the result lacks stay in the
    /// table (`sync_all_columns`, in a write that replaces only some rows).
    Columns { changes: lakewriter_delta::schema::ColumnChanges, kept: bool },
    /// A dry run's columns added, which `others` of the job's written partitions would read as
    /// NULL until each is rerun.
    OthersLacking { changes: lakewriter_delta::schema::ColumnChanges, others: usize },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyAppended => {
                f.write_str("already appended; nothing appended. --force appends again and duplicates these rows")
            }
            Self::AppendedAgain => {
                f.write_str("--force: appended again; rows appended before for this partition are now duplicated")
            }
            Self::NothingToChange { fresh: true } => {
                f.write_str("already fresh: nothing to change, no new table version")
            }
            Self::NothingToChange { fresh: false } => f.write_str("nothing to change: no new table version"),
            Self::WasFresh => f.write_str("was already fresh (same code and inputs)"),
            Self::StateAlone { dry_run: false } => {
                f.write_str("no row to change: committed only the partition's new state")
            }
            Self::StateAlone { dry_run: true } => {
                f.write_str("no row to change: a run would commit only the partition's new state")
            }
            Self::ColumnsDiffer(differences) => {
                write!(f, "the columns change ({}): every row is replaced", differences.join("; "))
            }
            Self::Columns { changes, kept } => {
                f.write_str(&changes.describe())?;
                if *kept {
                    f.write_str("; kept in the table: sync_all_columns drops a column only in a commit that replaces every row (a rebuild), or after a backfill of every written day with --replace-schema")?;
                }
                Ok(())
            }
            Self::OthersLacking { changes, others } => {
                let them = if changes.added.len() == 1 { "it" } else { "them" };
                let partitions = if *others == 1 { "partition" } else { "partitions" };
                write!(
                    f,
                    "{}; {others} other written {partitions} will read {them} as NULL until rerun",
                    changes.describe()
                )
            }
        }
    }
}

impl Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
