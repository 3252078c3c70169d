//! lakewriter: idempotent Delta Lake loads, as a library.
//!
//! [`Workspace::load`] reads a project file; [`Runner`] opens the lakehouse catalog once and runs
//! [`PartitionRun`]s — one job for one logical date, one Delta commit — singly or as a bounded
//! parallel backfill, returning a typed [`PartitionReport`] for each. [`digest`] fingerprints a
//! table's content; [`demo`] lays out the sample project. Nothing here prints: the CLI renders
//! the reports.

pub mod demo;

mod catalog;
mod error;
mod lint;
mod report;
mod runner;
mod status;
mod workspace;

pub use error::{Error, Result, error_chain};
pub use lakewriter_compute::{Finding, KeyedCounts, Rule, Severity};
pub use lakewriter_core::{DateRange, JobSpec, PartitionRun, Project, TableRef, WriteMode, WriteSpec, parse_date};
pub use lakewriter_delta::Digest;
pub use report::{PartitionReport, RunStatus, Summary, VerifyReport};
pub use runner::Runner;
pub use status::{Freshness, JobStatus, Only, PartitionStatus, PlannedPartition, StaleReason};
pub use workspace::Workspace;

use chrono::NaiveDate;

/// The content digest of `table` (or of its partition `dt`) in `workspace`'s lakehouse.
pub async fn digest(workspace: &Workspace, table: &TableRef, partition: Option<NaiveDate>) -> Result<Digest> {
    let location = workspace.table_location(table)?;
    lakewriter_delta::digest(&location, partition)
        .await
        .map_err(|source| Error::Digest { table: table.to_string(), source: Box::new(source) })
}
