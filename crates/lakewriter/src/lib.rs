//! lakewriter: idempotent Delta Lake loads, as a library.
//!
//! [`Workspace::load`] reads a project file; [`Runner`] opens the lakehouse catalog once,
//! resolves each job once ([`Workspace::load`] → [`Job`], its write mode one module of `write`) and runs [`PartitionRun`]s — one
//! job for one logical date, one Delta commit — singly or as a bounded parallel backfill,
//! returning a typed [`PartitionReport`] for each; [`Runner::maintain`] compacts, checkpoints,
//! vacuums and cleans up the log of the tables the jobs write, a [`StepReport`] per step;
//! [`Runner::overview`] gathers every job's partition states, its table's files and the job graph
//! (what `lakewriter report` draws).
//! [`digest`] fingerprints a table's content.
//! Nothing here prints: the CLI renders the reports.

mod attempt;
mod audit;
mod backfill;
mod catalog;
mod columns;
mod error;
mod graph;
mod job;
mod job_test;
mod lakehouse;
mod lineage;
mod lint;
mod maintain;
mod overview;
mod pipeline;
mod replace_schema;
mod report;
mod reproduce;
mod run;
mod runner;
mod sql;
mod status;
mod upstream;
mod verify;
mod workspace;
mod write;

pub use audit::{AuditSummary, PartitionAudit, Verdict};
pub use backfill::Selection;
pub use error::{Error, Result, RunError, causes, error_chain};
pub use graph::{GraphJob, JobGraph};
pub use job::{Job, PreparedRun};
pub use job_test::{TestCheck, TestCheckName, TestReport, TestStatus};
pub use lakewriter_compute::engine::Engine;
pub use lakewriter_compute::statement::Parsed as ParsedStatement;
pub use lakewriter_compute::{Finding, KeyedCounts, Rule, Severity};
pub use lakewriter_core::maintain::{Step, format_duration, format_size, parse_duration, parse_size};
pub use lakewriter_core::{
    CheckOutcome, CheckSeverity, DateRange, JobSpec, PartitionKey, PartitionRun, Project, TableRef, TestSpec,
    WriteMode, WriteSpec, parse_date, stable_hash,
};
pub use lakewriter_delta::Digest;
pub use lakewriter_delta::MergeCounts;
pub use lakewriter_delta::maintain::{Layout, PartitionFiles};
pub use lakewriter_delta::schema::{ColumnChanges, SchemaColumn};
pub use lineage::{Auth, Lineage, LineageOptions, ParentRun, Transport};
pub use maintain::{MaintainOptions, MaintainSummary, StepReport, StepStatus};
pub use overview::{JobOverview, Overview, Overviewed, Written};
pub use pipeline::{PipelineObserver, PipelineOutcome, Stage};
pub use replace_schema::ColumnsDropped;
pub use report::{Changes, DryRun, EngineUse, Failure, Note, PartitionReport, RunStatus, Summary, VerifyReport};
pub use runner::Runner;
pub use sql::{Executed, JobStatement, SqlOptions, StatementReport};
pub use status::{
    Action, CHECKPOINT_AFTER, Freshness, JobStatus, LogLength, Only, PartitionStatus, PlannedPartition, RebuildCost,
    StaleReason, UpstreamPartition,
};
pub use workspace::{PROJECT_FILE, Workspace};

use std::time::Instant;

use chrono::NaiveDate;

/// The content digest of `table` in `workspace`'s lakehouse.
pub async fn digest(workspace: &Workspace, table: &TableRef) -> Result<Digest> {
    let location = workspace.table_location(table)?;
    lakewriter_delta::digest(&location, None).await.map_err(digest_error(table))
}

/// The content digest of `table`'s partition of day `dt`, and that partition's key (the table's
/// partition column and the day).
pub async fn partition_digest(
    workspace: &Workspace,
    table: &TableRef,
    dt: NaiveDate,
) -> Result<(PartitionKey, Digest)> {
    let location = workspace.table_location(table)?;
    let (column, digest) = lakewriter_delta::partition_digest(&location, lakewriter_compute::date_literal(dt))
        .await
        .map_err(digest_error(table))?;
    Ok((PartitionKey::Day { column, date: dt }, digest))
}

fn digest_error(table: &TableRef) -> impl Fn(lakewriter_delta::Error) -> Error + '_ {
    |source| Error::Digest { table: table.to_string(), source: Box::new(source) }
}

/// Milliseconds since `started`.
#[must_use]
pub fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
