//! The JSON lines: each a serde type whose [`Event`] implementation gives its [`Shape`] —
//! tagged or not, with the `schema_version` or not; no line is told apart by a string.
//! `schema/events.schema.json` pins their shape.

use lakewriter::{
    AuditSummary, Digest, Finding, GraphJob, LogLength, MaintainSummary, Only, PartitionAudit, PartitionReport,
    StepReport, Summary, VerifyReport,
};
use serde::Serialize;

use crate::output::fields::{Maintenance, StateCounts};
use crate::output::{LintCounts, PipelineSummary, SqlSummary};

/// The version of the JSON Lines events (`schema/events.schema.json`), in every command's closing
/// line: a change that removes or renames a field, or changes its meaning, increments it.
pub const SCHEMA_VERSION: u32 = 4;

/// How a JSON line is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Its fields: one of a command's lines before the closing one (a partition, a finding).
    Item,
    /// Its fields and the [`SCHEMA_VERSION`]: a command's only line.
    Only,
    /// `{"<tag>": {<its fields>, "schema_version": …}}`: a command's closing line, told apart
    /// from the lines before it by its tag.
    Closing(&'static str),
    /// `{"<tag>": {<its fields>}}`: a line told apart by its tag that closes nothing.
    Tagged(&'static str),
}

/// A line of `--json` output: a serde type, and its [`Shape`].
pub trait Event: Serialize {
    const SHAPE: Shape = Shape::Item;
}

impl Event for PartitionReport {}
impl Event for Finding {}
impl Event for PartitionAudit {}
impl Event for GraphJob {}
impl Event for StepReport {}
impl Event for lakewriter::TestReport {}
impl<T: Serialize> Event for StatementLine<'_, T> {}
impl Event for RerunLine<'_> {}
impl<T: Serialize> Event for JobLine<'_, T> {}

impl Event for VerifyReport {
    const SHAPE: Shape = Shape::Only;
}

impl Event for DigestLine<'_> {
    const SHAPE: Shape = Shape::Only;
}

impl Event for crate::output::ReportWritten {
    const SHAPE: Shape = Shape::Only;
}

impl Event for Summary {
    const SHAPE: Shape = Shape::Closing("summary");
}

impl Event for LintCounts {
    const SHAPE: Shape = Shape::Closing("summary");
}

impl Event for StatusSummary<'_> {
    const SHAPE: Shape = Shape::Closing("summary");
}

impl Event for crate::output::JobOverviewLine {}

impl Event for crate::output::DemoLaid {
    const SHAPE: Shape = Shape::Closing("demo");
}

impl Event for crate::output::InitWritten {
    const SHAPE: Shape = Shape::Closing("init");
}

impl Event for crate::output::LateDelivered {
    const SHAPE: Shape = Shape::Closing("late");
}

impl Event for crate::output::OverviewTotals {
    const SHAPE: Shape = Shape::Closing("overview");
}

impl Event for PlanSummary<'_> {
    const SHAPE: Shape = Shape::Closing("plan");
}

impl Event for AuditSummary {
    const SHAPE: Shape = Shape::Closing("summary");
}

impl Event for GraphSummary {
    const SHAPE: Shape = Shape::Closing("summary");
}

impl Event for MaintainSummary {
    const SHAPE: Shape = Shape::Closing("summary");
}

impl Event for PipelineSummary {
    const SHAPE: Shape = Shape::Closing("pipeline");
}

impl Event for SqlSummary {
    const SHAPE: Shape = Shape::Closing("summary");
}

impl Event for crate::output::TestSummary {
    const SHAPE: Shape = Shape::Closing("summary");
}

impl Event for NotRun<'_> {
    const SHAPE: Shape = Shape::Tagged("not_run");
}

impl Event for JobFailed<'_> {
    const SHAPE: Shape = Shape::Tagged("job_failed");
}

impl Event for lakewriter::ColumnsDropped {
    const SHAPE: Shape = Shape::Tagged("columns_dropped");
}

/// `value`'s fields and `schema_version`.
#[derive(Serialize)]
pub struct Versioned<'a, T: Serialize> {
    #[serde(flatten)]
    pub value: &'a T,
    pub schema_version: u32,
}

/// A JSON line of one job's: `{"job": …, <the fields of line>}`.
#[derive(Serialize)]
pub struct JobLine<'a, T: Serialize> {
    pub job: &'a str,
    #[serde(flatten)]
    pub line: &'a T,
}

/// The line of `lakewriter digest`.
#[derive(Serialize)]
pub struct DigestLine<'a> {
    pub table: String,
    pub partition: Option<&'a lakewriter::PartitionKey>,
    #[serde(flatten)]
    pub digest: &'a Digest,
}

/// The closing line of `lakewriter status`.
#[derive(Serialize)]
pub struct StatusSummary<'a> {
    pub job: &'a str,
    pub target: &'a lakewriter::TableRef,
    pub table_version: Option<u64>,
    pub checkpoint: Option<u64>,
    pub log: Option<LogLength>,
    pub maintenance: Option<Maintenance<'a>>,
    /// A `rebuild` job's cost per run.
    pub rebuild: Option<lakewriter::RebuildCost>,
    #[serde(flatten)]
    pub counts: StateCounts,
}

/// The closing line of `lakewriter plan`.
#[derive(Serialize)]
pub struct PlanSummary<'a> {
    pub job: &'a str,
    pub only: Only,
    pub run: usize,
    pub skip: usize,
    /// The columns a run of the job's code now adds to its table (`on_schema_change`).
    pub adds: &'a [lakewriter::SchemaColumn],
    /// Why every run fails, where the job's result has columns its table lacks and its
    /// `on_schema_change` is `fail` ([`lakewriter::JobStatus::refusal`]).
    pub refused: Option<String>,
    /// A `rebuild` job's cost per run.
    pub rebuild: Option<lakewriter::RebuildCost>,
}

/// The closing line of `lakewriter graph`.
#[derive(Serialize)]
pub struct GraphSummary {
    pub jobs: usize,
    /// Pairs (upstream job, downstream job).
    pub edges: usize,
}

/// A job a pipeline backfill did not run, and why.
#[derive(Serialize)]
pub struct NotRun<'a> {
    pub job: &'a str,
    pub reason: &'a str,
}

/// A job of a pipeline that could not start, and why.
#[derive(Serialize)]
pub struct JobFailed<'a> {
    pub job: &'a str,
    pub error: String,
}

/// The line of a statement of `lakewriter sql`: its number, text and status, then `outcome`'s
/// fields — a [`lakewriter::StatementReport`] where it wrote (`ok`), a [`StatementError`] where it failed.
#[derive(Serialize)]
pub struct StatementLine<'a, T: Serialize> {
    pub statement: usize,
    pub of: usize,
    pub sql: &'a str,
    pub status: &'static str,
    #[serde(flatten)]
    pub outcome: T,
}

/// Why a statement of `lakewriter sql` failed.
#[derive(Serialize)]
pub struct StatementError {
    pub error: String,
}

/// The line of the demo's rerun check.
#[derive(Serialize)]
pub struct RerunLine<'a> {
    pub job: &'a str,
    pub rerun: String,
    pub digest_before: &'a str,
    pub digest_after: &'a str,
    pub unchanged: bool,
}
