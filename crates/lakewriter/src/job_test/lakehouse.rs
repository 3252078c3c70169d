//! A test's scratch lakehouse: a temporary folder holding the tables the test gives its job —
//! a raw table as a Parquet dataset laid out as the raw layer is, a job's table as a Delta table
//! — and a runner over it. The project's own root is never read or written.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::NaiveDate;
use datafusion::arrow::array::{RecordBatch, UInt32Array};
use datafusion::arrow::compute::take_record_batch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::parquet::arrow::ArrowWriter;
use lakewriter_core::{PartitionRun, TableRef};
use lakewriter_delta::{Digest, FixtureFiles};

use crate::{Error, Job, PartitionReport, Result, Runner, Workspace};

/// The raw layer's partition column: a given raw table's `dt` column becomes `dt=…` folders.
const RAW_PARTITION: &str = "dt";

/// A table a test gives its job, read.
pub(super) struct GivenTable {
    pub table: TableRef,
    pub rows: RecordBatch,
    /// For a job's table (written as Delta), its partition columns; `None` for a raw table.
    pub delta: Option<Vec<String>>,
}

/// How the given rows are laid out, and how the job reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// A file per raw partition (or table), read as a run reads.
    AsWritten,
    /// Every row in a file of its own, the files listed in the order of the rows or (`reversed`)
    /// in the reverse order, read in `partitions` DataFusion partitions, a row at a time: what a
    /// result must not depend on.
    RowPerFile { reversed: bool, partitions: usize },
}

impl Layout {
    /// The reads the `deterministic` check compares with the one as written: in reverse order in
    /// several partitions (threads interleave the rows), and in one partition in each order (rows
    /// that tie meet in the order they were read).
    pub const SHAKEN: [Self; 3] = [
        Self::RowPerFile { reversed: true, partitions: 4 },
        Self::RowPerFile { reversed: true, partitions: 1 },
        Self::RowPerFile { reversed: false, partitions: 1 },
    ];
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AsWritten => f.write_str("as written"),
            Self::RowPerFile { reversed, partitions } => write!(
                f,
                "with every row in a file of its own, {} order, in {partitions} partition(s), a row at a time",
                if *reversed { "in reverse" } else { "in" }
            ),
        }
    }
}

pub(super) struct Lakehouse {
    pub runner: Runner,
    /// Removed when the lakehouse is dropped.
    _dir: tempfile::TempDir,
}

impl Lakehouse {
    /// A scratch lakehouse holding `given`, laid out as `layout` says, with `workspace`'s jobs.
    /// A table whose rows cannot be laid out (a raw row without its `dt`, rows Delta refuses) is
    /// a [`Given::Problem`].
    pub async fn new(workspace: &Workspace, given: &[GivenTable], layout: Layout) -> Result<Self, Given> {
        let dir = tempfile::Builder::new()
            .prefix("lakewriter-test-")
            .tempdir()
            .map_err(|source| Error::Scratch { from: std::env::temp_dir(), source })?;
        let scratch = workspace.scratch(dir.path())?;
        for table in given {
            let folder = dir.path().join(table.table.relative_dir());
            match &table.delta {
                None => write_raw(&folder, &table.rows, layout)
                    .map_err(|problem| Given::Problem(table.table.clone(), problem))?,
                Some(partitions) => {
                    let files = match layout {
                        Layout::AsWritten => FixtureFiles::Few,
                        Layout::RowPerFile { reversed, .. } => FixtureFiles::RowPerFile { reversed },
                    };
                    let location = scratch.table_location(&table.table)?;
                    // Rows Delta cannot hold as given (a type it does not store) are the test's to fix.
                    lakewriter_delta::create_fixture(&location, table.rows.clone(), partitions, files)
                        .await
                        .map_err(|e| Given::Problem(table.table.clone(), crate::error_chain(&e)))?;
                }
            }
        }
        let runner = Runner::open(scratch).await?;
        if let Layout::RowPerFile { partitions, .. } = layout {
            let state = runner.session().state_ref();
            let mut state = state.write();
            let execution = &mut state.config_mut().options_mut().execution;
            execution.target_partitions = partitions;
            if let Ok(one_row) = datafusion::config::ConfigNonZeroUsize::try_new(1) {
                execution.batch_size = one_row;
            }
        }
        Ok(Self { runner, _dir: dir })
    }

    /// Runs `job` for each of `dates` in order (once without a date where there are none); the
    /// first failure, as "the run for dt=…: error".
    pub async fn run(&self, job: &Job, dates: &[NaiveDate]) -> std::result::Result<(), String> {
        let dates: Vec<Option<NaiveDate>> =
            if dates.is_empty() { vec![None] } else { dates.iter().copied().map(Some).collect() };
        for dt in dates {
            let report = self.runner.run(&PartitionRun { job: job.spec.name.clone(), dt, force: false }).await;
            if let Some(error) = failure(&report) {
                return Err(error);
            }
        }
        Ok(())
    }

    /// The content digest of `job`'s table at `version`, or its latest.
    pub async fn digest(&self, job: &Job, version: Option<u64>) -> Result<Digest> {
        let location = self.runner.workspace().table_location(&job.spec.target)?;
        match version {
            Some(version) => lakewriter_delta::digest_at(&location, version).await,
            None => lakewriter_delta::digest(&location, None).await,
        }
        .map_err(|source| Error::Digest { table: job.spec.target.to_string(), source: Box::new(source) })
    }

    /// The rows of `job`'s table at `version`, or its latest.
    pub async fn rows(&self, job: &Job, version: Option<u64>) -> Result<datafusion::prelude::DataFrame> {
        let location = self.runner.workspace().table_location(&job.spec.target)?;
        let provider = match version {
            Some(version) => lakewriter_delta::table::provider_at(&location, version).await,
            None => lakewriter_delta::table::provider(&location).await,
        }
        .map_err(|source| Error::OpenTable { table: job.spec.target.to_string(), source: Box::new(source) })?;
        self.runner.session().read_table(provider).map_err(|e| read_error(job, e))
    }
}

/// An error reading `job`'s table in a scratch lakehouse.
pub(super) fn read_error(job: &Job, error: datafusion::error::DataFusionError) -> Error {
    let source = Box::new(lakewriter_compute::Error::Diff { source: Box::new(error) });
    Error::Diff { table: job.spec.target.to_string(), source }
}

/// A scratch lakehouse that could not be made: a given table whose rows cannot be laid out (the
/// table, and what is wrong), or another error.
pub(super) enum Given {
    Problem(TableRef, String),
    Other(Error),
}

impl From<Error> for Given {
    fn from(error: Error) -> Self {
        Self::Other(error)
    }
}

/// A run's failure as text: the partition and the error.
fn failure(report: &PartitionReport) -> Option<String> {
    report.error.as_ref().map(|error| format!("the run for {} failed: {error}", report.partition))
}

/// What keeps `rows` from being laid out as a raw dataset: a row without a `dt`, where the
/// table has that column.
pub(super) fn unlaid(rows: &RecordBatch) -> Option<String> {
    let column = rows.column_by_name(RAW_PARTITION)?;
    let row = (0..rows.num_rows()).find(|&row| column.is_null(row))?;
    Some(format!("row {row} has no `{RAW_PARTITION}`, the raw layer's partition folder"))
}

/// Writes `rows` as the raw Parquet dataset at `folder`, its `dt` column (if any) as `dt=…`
/// folders.
fn write_raw(folder: &Path, rows: &RecordBatch, layout: Layout) -> std::result::Result<(), String> {
    if let Some(problem) = unlaid(rows) {
        return Err(problem);
    }
    let mut partitions: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut data = rows.clone();
    if let Ok(index) = rows.schema().index_of(RAW_PARTITION) {
        let column = rows.column(index);
        let formatter = ArrayFormatter::try_new(column.as_ref(), &FormatOptions::new()).map_err(|e| e.to_string())?;
        for row in 0..rows.num_rows() {
            let folder = format!("{RAW_PARTITION}={}", formatter.value(row));
            partitions.entry(folder).or_default().push(u32::try_from(row).map_err(|e| e.to_string())?);
        }
        data.remove_column(index);
    } else {
        let all = (0..rows.num_rows()).map(u32::try_from).collect::<std::result::Result<_, _>>();
        partitions.insert(String::new(), all.map_err(|e| e.to_string())?);
    }
    let total = rows.num_rows();
    for (partition, indices) in partitions {
        let dir = folder.join(partition);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let files: Vec<(String, Vec<u32>)> = match layout {
            Layout::AsWritten => vec![("part-00000.parquet".to_owned(), indices)],
            // Named for the order a scan lists them in: by path.
            Layout::RowPerFile { reversed, .. } => indices
                .into_iter()
                .map(|i| {
                    let at = if reversed { total - 1 - i as usize } else { i as usize };
                    (format!("part-{at:05}.parquet"), vec![i])
                })
                .collect(),
        };
        for (name, indices) in files {
            let part = take_record_batch(&data, &UInt32Array::from(indices)).map_err(|e| e.to_string())?;
            write_parquet(&dir.join(name), &part)?;
        }
    }
    Ok(())
}

pub(super) fn write_parquet(path: &Path, batch: &RecordBatch) -> std::result::Result<(), String> {
    let failed = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(|e| failed(&e))?;
    let mut writer = ArrowWriter::try_new(file, batch.schema(), None).map_err(|e| failed(&e))?;
    writer.write(batch).map_err(|e| failed(&e))?;
    writer.close().map(drop).map_err(|e| failed(&e))
}
