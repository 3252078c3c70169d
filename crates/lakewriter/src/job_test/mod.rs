//! `lakewriter test`: a job's tests on fixtures (`[tests.NAME]`), each run in scratch lakehouses
//! by the real runner and write path, and each of its checks reported on its own:
//! `expected_rows` (or `expected_error`), `idempotent`, `deterministic` and, for a job whose
//! table depends on the order its dates were written in, `order_independent`.

mod compare;
mod csv;
mod definition;
mod exact;
mod fixture;
mod lakehouse;

use std::time::Instant;

use datafusion::arrow::array::RecordBatch;
use lakewriter_core::TestSpec;
use serde::Serialize;

use crate::{Error, Job, Result, Workspace, elapsed_ms};
use definition::{Expected, definition, reads_given};
use lakehouse::{Given, GivenTable, Lakehouse, Layout};

/// A check of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestCheckName {
    /// The job's table holds exactly the expected rows after its dates ran in order.
    ExpectedRows,
    /// A run fails with the expected error.
    ExpectedError,
    /// Running the last date again leaves the table's content digest unchanged.
    Idempotent,
    /// The same table when the given rows are each in a file of their own, listed in reverse,
    /// read in several partitions a row at a time.
    Deterministic,
    /// The dates replayed in reverse order, and the whole list replayed again, leave the same
    /// table (a keyed write with several dates).
    OrderIndependent,
}

impl TestCheckName {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ExpectedRows => "expected_rows",
            Self::ExpectedError => "expected_error",
            Self::Idempotent => "idempotent",
            Self::Deterministic => "deterministic",
            Self::OrderIndependent => "order_independent",
        }
    }
}

/// The outcome of a check.
#[derive(Debug, Clone, Serialize)]
pub struct TestCheck {
    pub name: TestCheckName,
    pub passed: bool,
    /// Why it failed: the rows missing and unexpected, the rows that differ, the error.
    pub detail: Option<String>,
}

/// A test's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    /// Every check passed.
    Passed,
    /// A check failed.
    Failed,
    /// The test cannot be run as written (exit code 2): `error` says why.
    Error,
}

/// A test's report.
#[derive(Debug, Clone, Serialize)]
pub struct TestReport {
    pub test: String,
    pub job: String,
    pub status: TestStatus,
    /// The checks run, in order.
    pub checks: Vec<TestCheck>,
    /// Why the test cannot be run as written, naming the key.
    pub error: Option<String>,
    pub duration_ms: u64,
}

impl TestReport {
    fn new(test: &TestSpec) -> Self {
        Self {
            test: test.name.clone(),
            job: test.job.clone(),
            status: TestStatus::Passed,
            checks: Vec::new(),
            error: None,
            duration_ms: 0,
        }
    }

    fn check(&mut self, name: TestCheckName, outcome: Outcome) {
        let passed = outcome.is_ok();
        if !passed {
            self.status = TestStatus::Failed;
        }
        self.checks.push(TestCheck { name, passed, detail: outcome.err() });
    }
}

impl Workspace {
    /// Runs `test` in scratch lakehouses: a report of its checks, or (with status `error`) why
    /// it cannot be run as written. With `update`, the rows the job wrote replace the test's
    /// expect file (`expect.file`, which need not exist yet), and `expected_rows` says so.
    pub async fn run_test(&self, test: &TestSpec, update: bool) -> TestReport {
        let started = Instant::now();
        let mut report = TestReport::new(test);
        if let Err(error) = self.checked(test, update, &mut report).await {
            // A test written wrong cannot be run (exit 2); anything else failed it.
            report.status = if error.is_usage() { TestStatus::Error } else { TestStatus::Failed };
            report.error = Some(crate::error_chain(&error));
        }
        report.duration_ms = elapsed_ms(started);
        report
    }

    async fn checked(&self, test: &TestSpec, update: bool, report: &mut TestReport) -> Result<()> {
        let (job, given, expected) = self.definition(test, update).await?;
        let ctx = lakewriter_delta::session();
        let base = self.lakehouse(test, &given, Layout::AsWritten).await?;
        reads_given(test, job, &base.runner)?;
        let first = base.run(job, &test.dates).await;
        if let Expected::Error(text) = expected {
            report.check(TestCheckName::ExpectedError, expected_error(first, text));
            return Ok(());
        }
        if let Err(error) = first {
            report.check(TestCheckName::ExpectedRows, Err(error));
            return Ok(());
        }
        let after = base.digest(job, None).await?;
        let actual = collect(job, base.rows(job, None).await?).await?;
        match expected {
            Expected::Rows(expected) => {
                report.check(TestCheckName::ExpectedRows, compare::rows(&actual, &expected));
            }
            Expected::Update(path) => {
                fixture::write_file(&ctx, path, actual).await.map_err(|e| definition(test, "expect.file", e))?;
                let detail = Some(format!("updated {}", path.display()));
                report.checks.push(TestCheck { name: TestCheckName::ExpectedRows, passed: true, detail });
            }
            Expected::Error(_) => unreachable!("an expected error returned above"),
        }
        let first = FirstPass { workspace: self, job, test, given: &given, base, after };
        report.check(TestCheckName::Idempotent, first.idempotent().await?);
        report.check(TestCheckName::Deterministic, first.deterministic().await?);
        if test.dates.len() > 1 && job.depends_on_order() {
            report.check(TestCheckName::OrderIndependent, first.order_independent().await?);
        }
        Ok(())
    }

    async fn lakehouse(&self, test: &TestSpec, given: &[GivenTable], layout: Layout) -> Result<Lakehouse> {
        Lakehouse::new(self, given, layout).await.map_err(|e| match e {
            Given::Problem(table, problem) => definition(test, &format!("given.\"{table}\""), problem),
            Given::Other(error) => error,
        })
    }
}

/// A check's outcome: passed, or the detail of its failure.
type Outcome = std::result::Result<(), String>;

/// A test's dates run in order on its given rows as written: what the checks after
/// `expected_rows` start from.
struct FirstPass<'a> {
    workspace: &'a Workspace,
    job: &'a Job,
    test: &'a TestSpec,
    given: &'a [GivenTable],
    /// The lakehouse the dates ran in.
    base: Lakehouse,
    /// The job's table there after them.
    after: lakewriter_delta::Digest,
}

impl FirstPass<'_> {
    /// `job`'s table in the first lakehouse after the dates ran in order, called `label`.
    fn as_run(&self, label: &'static str) -> Side<'_> {
        (&self.base, Some(self.after.version), label)
    }

    /// `idempotent`: the last date (or the run without a date) run again in the first lakehouse.
    async fn idempotent(&self) -> Result<Outcome> {
        let last: Vec<_> = self.test.dates.last().copied().into_iter().collect();
        if let Err(error) = self.base.run(self.job, &last).await {
            return Ok(Err(error));
        }
        same(self.as_run("after the first run"), (&self.base, None, "after the rerun"), self.job).await
    }

    /// `deterministic`: the dates run with the given rows read as each of [`Layout::SHAKEN`]
    /// says, each leaving the table the rows as written left.
    async fn deterministic(&self) -> Result<Outcome> {
        for layout in Layout::SHAKEN {
            let shaken = self.workspace.lakehouse(self.test, self.given, layout).await?;
            let outcome = match shaken.run(self.job, &self.test.dates).await {
                Err(error) => Err(error),
                Ok(()) => same(self.as_run("as written"), (&shaken, None, "read so"), self.job).await?,
            };
            if let Err(detail) = outcome {
                return Ok(Err(format!("read {layout}: {detail}")));
            }
        }
        Ok(Ok(()))
    }

    /// `order_independent`: the dates in reverse order in a new lakehouse, and the whole list
    /// again in the first one, each leave the table the dates in order left.
    async fn order_independent(&self) -> Result<Outcome> {
        let (job, dates) = (self.job, &self.test.dates);
        let reversed = self.workspace.lakehouse(self.test, self.given, Layout::AsWritten).await?;
        let backwards: Vec<_> = dates.iter().rev().copied().collect();
        if let Err(error) = reversed.run(job, &backwards).await {
            return Ok(Err(format!("in reverse order, {error}")));
        }
        if let Err(detail) = same(self.as_run("in order"), (&reversed, None, "in reverse order"), job).await? {
            return Ok(Err(format!("the dates in reverse order leave another table: {detail}")));
        }
        let before = self.base.digest(job, None).await?;
        if let Err(error) = self.base.run(job, dates).await {
            return Ok(Err(format!("replayed, {error}")));
        }
        Ok(same((&self.base, Some(before.version), "once"), (&self.base, None, "replayed"), job)
            .await?
            .map_err(|detail| format!("the dates replayed a second time change the table: {detail}")))
    }
}

/// `expected_error`: a run failed, and its error holds `text`.
fn expected_error(outcome: Outcome, text: &str) -> Outcome {
    match outcome {
        Err(error) if error.contains(text) => Ok(()),
        Err(error) => Err(format!("a run failed, but not with `{text}`: {error}")),
        Ok(()) => Err(format!("every run succeeded; expected a failure with `{text}`")),
    }
}

/// One side of a comparison: `job`'s table in a lakehouse at a version (or its latest), and what
/// the rows there are called.
type Side<'a> = (&'a Lakehouse, Option<u64>, &'static str);

/// Whether `job`'s table has the same content digest on side `a` and on side `b`; a failure names
/// the rows that differ.
async fn same(a: Side<'_>, b: Side<'_>, job: &Job) -> Result<Outcome> {
    let ((a, version_a, label_a), (b, version_b, label_b)) = (a, b);
    let (one, other) = (a.digest(job, version_a).await?, b.digest(job, version_b).await?);
    if one.digest == other.digest && one.rows == other.rows {
        return Ok(Ok(()));
    }
    let table = job.spec.target.to_string();
    let diff_error = |source| Error::Diff { table: table.clone(), source: Box::new(source) };
    let diff = lakewriter_compute::diff(a.rows(job, version_a).await?, b.rows(job, version_b).await?, compare::SHOWN)
        .await
        .map_err(diff_error)?;
    let mut lines = vec![format!(
        "the content digests differ ({} and {} rows): {} row(s) only {label_a}, {} only {label_b}",
        one.rows, other.rows, diff.removed, diff.added
    )];
    lines.extend(diff.removed_examples.iter().map(|r| format!("{label_a}: ({r})")));
    lines.extend(diff.added_examples.iter().map(|r| format!("{label_b}: ({r})")));
    Ok(Err(lines.join("\n")))
}

async fn collect(job: &Job, frame: datafusion::prelude::DataFrame) -> Result<RecordBatch> {
    let schema = std::sync::Arc::new(frame.schema().as_arrow().clone());
    let read = |e: datafusion::error::DataFusionError| lakehouse::read_error(job, e);
    let batches = frame.collect().await.map_err(read)?;
    datafusion::arrow::compute::concat_batches(&schema, &batches).map_err(|e| read(e.into()))
}
