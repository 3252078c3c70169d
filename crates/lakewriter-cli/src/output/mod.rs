//! Rendering: data and JSON Lines on stdout, through one [`Output`] chosen once from `--json`
//! (a [`TextPrinter`] for people, a [`JsonPrinter`] of JSON Lines); logs, progress and errors on
//! stderr ([`stderr`]). Nothing else in the CLI writes stdout.

mod fields;
mod json;
pub mod stderr;
mod text;

use std::io::{self, IsTerminal};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use lakewriter::{
    AuditSummary, Digest, Finding, JobGraph, JobStatus, Layout, MaintainSummary, Only, PartitionAudit, PartitionKey,
    PartitionReport, PlannedPartition, StatementReport, StepReport, Summary, TableRef, TestReport, TestStatus,
    VerifyReport,
};
use serde::Serialize;

use crate::cli::Global;

pub use fields::{JobOverviewLine, Maintenance, OverviewTotals, StateCounts};
pub use json::JsonPrinter;
pub use text::{Style, TextPrinter};

/// What the commands report, one method per kind of thing; each printer renders it in its own
/// format, so that no command asks which format it writes (ripgrep's `grep-printer` is the
/// model). A method writes nothing where its format has nothing to say (text for people only,
/// a progress bar in JSON).
pub trait Output {
    /// A line for people: a heading, what was set up, the next steps. Text only.
    fn say(&mut self, text: &str) -> io::Result<()>;
    /// Output that is no report, written as it is in either format: a shell completion script,
    /// the manual page, a Dagster Pipes message.
    fn verbatim(&mut self, bytes: &[u8]) -> io::Result<()>;

    /// A job's run of `total` partitions starts: a progress bar on stderr (text, on a terminal).
    fn start_progress(&mut self, total: usize, label: &str);
    /// A partition finished: the bar advances; JSON, its line at once.
    fn partition_done(&mut self, report: &PartitionReport) -> io::Result<()>;
    /// The job's partitions are all done: the bar goes.
    fn finish_progress(&mut self);
    /// Whether a failed partition's error, on its line of stdout, is before the user's eyes where
    /// stderr is: both are the same terminal. The `error:` lines on stderr are then left out.
    fn shows_errors(&self) -> bool {
        false
    }
    /// A job's run is done: text, a line per partition (in date order) and the summary; JSON,
    /// the summary line.
    fn job_done(&mut self, reports: &[PartitionReport], summary: &Summary) -> io::Result<()>;
    /// A job a pipeline did not run, and why.
    fn not_run(&mut self, job: &str, reason: &str) -> io::Result<()>;
    /// A job of a pipeline that could not start (its partitions could not be selected).
    fn job_failed(&mut self, job: &str, error: &lakewriter::Error) -> io::Result<()>;
    /// `backfill --replace-schema` dropped the columns its job's result no longer has.
    fn columns_dropped(&mut self, dropped: &lakewriter::ColumnsDropped) -> io::Result<()>;
    /// A pipeline (`backfill`, `reproduce`, the demo) is done: JSON, its closing line.
    fn pipeline_done(&mut self, summary: &PipelineSummary) -> io::Result<()>;
    /// Text: the totals of a keyed backfill's changes (nothing for other modes).
    fn merged(&mut self, reports: &[PartitionReport]) -> io::Result<()>;
    /// The demo's rerun of a day, with the content digests before and after.
    fn rerun(&mut self, rerun: &Rerun<'_>) -> io::Result<()>;
    /// The demo's project and raw layer, laid out; JSON, where `closing` (`demo --no-run`), the
    /// closing line.
    fn demo_laid(&mut self, laid: &DemoLaid, closing: bool) -> io::Result<()>;
    /// `init`: the project written, and the next steps (text).
    fn init_written(&mut self, init: &InitWritten) -> io::Result<()>;
    /// `demo --late D`: the late file delivered.
    fn late_delivered(&mut self, late: &LateDelivered) -> io::Result<()>;

    /// `lakewriter verify`: each application and the verdict.
    fn verdict(&mut self, verdict: &VerifyReport) -> io::Result<()>;
    /// `lakewriter digest`: a table's (or a partition's) content digest.
    fn digest(&mut self, table: &TableRef, partition: Option<&PartitionKey>, digest: &Digest) -> io::Result<()>;
    /// `lakewriter lint`: one finding.
    fn finding(&mut self, finding: &Finding) -> io::Result<()>;
    /// `lakewriter lint`: the counts, last.
    fn lint_counts(&mut self, counts: &LintCounts) -> io::Result<()>;
    /// `lakewriter status`: each partition's state, the counts, the table's log and files.
    fn status(&mut self, status: &JobStatus, layout: Option<&Layout>) -> io::Result<()>;
    /// `lakewriter status` without a job: a line per job, then the totals.
    fn overview(&mut self, jobs: &[JobOverviewLine], totals: &OverviewTotals) -> io::Result<()>;
    /// `lakewriter plan`: what a backfill would do with each partition, and why.
    fn plan(&mut self, status: &JobStatus, planned: &[PlannedPartition], only: Only) -> io::Result<()>;
    /// `lakewriter audit`: one partition's verdict.
    fn partition_audit(&mut self, audit: &PartitionAudit) -> io::Result<()>;
    /// `lakewriter audit`: the counts, last.
    fn audit_summary(&mut self, summary: &AuditSummary) -> io::Result<()>;
    /// `lakewriter graph`: the jobs in dependency order, with what each reads.
    fn graph(&mut self, graph: &JobGraph) -> io::Result<()>;
    /// `lakewriter maintain`: each table's steps and the counts.
    fn maintain(&mut self, reports: &[StepReport], summary: &MaintainSummary) -> io::Result<()>;
    /// `lakewriter report`: where the page was written, and what it counts.
    fn report_written(&mut self, written: &ReportWritten) -> io::Result<()>;

    /// `lakewriter sql`: the rows of the query that is statement `number` (every column of every
    /// row).
    fn rows(&mut self, number: usize, schema: &SchemaRef, batches: &[RecordBatch]) -> io::Result<()>;
    /// `lakewriter sql`: statement `number` of `of`, which wrote (or found nothing to change).
    fn statement(&mut self, number: usize, of: usize, sql: &str, report: &StatementReport) -> io::Result<()>;
    /// `lakewriter sql`: statement `number` of `of` failed. JSON only: the error itself is the
    /// command's, on stderr.
    fn statement_failed(&mut self, number: usize, of: usize, sql: &str, error: &lakewriter::Error) -> io::Result<()>;
    /// `lakewriter sql`: the statements are done, or one failed: JSON, the closing line.
    fn sql_done(&mut self, summary: &SqlSummary) -> io::Result<()>;

    /// `lakewriter test`: a test is done, with each of its checks.
    fn test_done(&mut self, report: &TestReport) -> io::Result<()>;
    /// `lakewriter test`: the counts, last.
    fn tests_done(&mut self, summary: &TestSummary) -> io::Result<()>;
}

/// The printer `--json` asks for, writing stdout.
pub fn printer(global: &Global) -> Box<dyn Output> {
    if global.json {
        return Box::new(JsonPrinter::new(io::stdout()));
    }
    let terminal = io::stdout().is_terminal();
    let style = Style {
        color: global.color.enabled(terminal),
        terminal,
        progress: !global.quiet && !global.no_progress && io::stderr().is_terminal(),
    };
    Box::new(TextPrinter::new(io::stdout(), style))
}

/// The counts of `lakewriter lint`.
#[derive(Debug, Default, Serialize)]
pub struct LintCounts {
    pub jobs: usize,
    pub errors: usize,
    pub warnings: usize,
    /// Jobs that could not be checked: SQL that cannot be read or planned.
    pub unchecked: usize,
    /// Jobs that read a job's table that does not exist yet: checked once it does.
    pub waiting: usize,
}

/// The counts of a pipeline: its jobs, and their partitions.
#[derive(Debug, Default, Serialize)]
pub struct PipelineSummary {
    pub jobs: usize,
    /// Jobs every partition of which succeeded (or that had nothing to run).
    pub ok: usize,
    /// Jobs that failed to start, or a partition of which failed.
    pub failed: usize,
    /// Jobs not run, because a job above them failed or was not run.
    pub not_run: usize,
    pub partitions: usize,
    pub rows_written: u64,
    pub duration_ms: u64,
}

impl PipelineSummary {
    /// The counts of `jobs` jobs of which `failed` failed and `not_run` were not run, which ran
    /// `reports`.
    pub fn of(jobs: usize, failed: usize, not_run: usize, reports: &[PartitionReport], duration_ms: u64) -> Self {
        Self {
            jobs,
            ok: jobs.saturating_sub(failed + not_run),
            failed,
            not_run,
            partitions: reports.len(),
            rows_written: reports.iter().filter_map(|r| r.rows_written).sum(),
            duration_ms,
        }
    }
}

/// What `lakewriter report` wrote: the page, its jobs and their partitions by state.
#[derive(Debug, Serialize)]
pub struct ReportWritten {
    /// The HTML file, as given.
    pub path: String,
    pub jobs: usize,
    /// Jobs shown without partitions: dated jobs that have written none (no range given).
    pub not_written: usize,
    /// Jobs whose state could not be read: shown with the error.
    pub failed: usize,
    /// The partitions of every job, by state.
    #[serde(flatten)]
    pub counts: StateCounts,
}

/// The counts of `lakewriter sql`'s statements.
#[derive(Debug, Default, Serialize)]
pub struct SqlSummary {
    pub statements: usize,
    /// Statements that ran: queries, and statements that wrote or found nothing to change.
    pub ok: usize,
    /// 0 or 1: the first failure stops the rest.
    pub failed: usize,
    /// Statements after a failed one.
    pub not_run: usize,
}

/// The counts of `lakewriter test`: its tests, and their checks.
#[derive(Debug, Default, Serialize)]
pub struct TestSummary {
    pub tests: usize,
    pub passed: usize,
    /// Tests a check of which failed.
    pub failed: usize,
    /// Tests that cannot be run as written.
    pub errors: usize,
    pub checks: usize,
    pub checks_failed: usize,
    pub duration_ms: u64,
}

impl TestSummary {
    pub fn of(reports: &[TestReport], duration_ms: u64) -> Self {
        let count = |status| reports.iter().filter(|r| r.status == status).count();
        let checks = reports.iter().flat_map(|r| &r.checks);
        Self {
            tests: reports.len(),
            passed: count(TestStatus::Passed),
            failed: count(TestStatus::Failed),
            errors: count(TestStatus::Error),
            checks: checks.clone().count(),
            checks_failed: checks.filter(|c| !c.passed).count(),
            duration_ms,
        }
    }
}

/// What `lakewriter demo` laid out: the project file and the raw layer.
#[derive(Debug, Serialize)]
pub struct DemoLaid {
    pub project: String,
    /// Whether the project file was written (else it was there, and kept).
    pub project_written: bool,
    pub root: String,
    pub days: usize,
    pub raw_files_written: usize,
    pub raw_files_kept: usize,
}

/// What `lakewriter init` wrote: the project file, and a week of sample orders.
#[derive(Debug, Serialize)]
pub struct InitWritten {
    pub project: String,
    /// The sample orders' dataset folder (a partition folder `dt=…` per day).
    pub raw: String,
    /// Their first and last day.
    pub from: chrono::NaiveDate,
    pub to: chrono::NaiveDate,
}

/// What `lakewriter demo --late D` did: the late file, delivered (or there already).
#[derive(Debug, Serialize)]
pub struct LateDelivered {
    pub file: String,
    pub root: String,
    pub delivered: bool,
}

/// A demo rerun: one day run again, with the table's digests before and after.
pub struct Rerun<'a> {
    pub job: &'a str,
    pub report: &'a PartitionReport,
    pub before: &'a Digest,
    pub after: &'a Digest,
}

impl Rerun<'_> {
    /// The run succeeded and left the very same rows.
    pub fn unchanged(&self) -> bool {
        self.report.is_ok() && self.before.digest == self.after.digest && self.before.rows == self.after.rows
    }
}
