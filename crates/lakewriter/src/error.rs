use std::path::PathBuf;
use std::sync::Arc;

/// Errors of the library face. Per-partition failures are not errors here: they are reported in
/// a [`crate::PartitionReport`] (made from a [`RunError`]), so that one failed day never stops a
/// backfill.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read the project file {}", path.display())]
    ReadProject { path: PathBuf, source: std::io::Error },

    #[error("no lakewriter.toml in {} or any folder above it", folder.display())]
    NoProject { folder: PathBuf },

    #[error(transparent)]
    Config(#[from] lakewriter_core::Error),

    /// A job that could not be resolved when the project loaded (see [`crate::Workspace::job`]).
    #[error(transparent)]
    Job(std::sync::Arc<Error>),

    #[error("job `{job}`: cannot read sql_file {}", path.display())]
    SqlFile { job: String, path: PathBuf, source: std::io::Error },

    /// The lakehouse root or its storage options: a configuration error, or the object store
    /// failing to set up (see [`lakewriter_storage::Error::is_config`]).
    #[error("{}: {error}", file.display())]
    ProjectStorage { file: PathBuf, error: lakewriter_storage::Error },

    #[error(transparent)]
    Storage(#[from] lakewriter_storage::Error),

    #[error("cannot open the lakehouse catalog")]
    Catalog { source: lakewriter_compute::Error },

    #[error("cannot read this table's folder")]
    UnreadableTable { source: Arc<lakewriter_compute::Error> },

    #[error("job `{job}`: cannot plan its SQL to check it")]
    Lint { job: String, source: Box<lakewriter_compute::Error> },

    #[error("{}", findings.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Nondeterministic { findings: Vec<lakewriter_compute::Finding> },

    #[error("cannot open Delta table {table}")]
    OpenTable { table: String, source: Box<lakewriter_delta::Error> },

    #[error(
        "{table} has no Delta table yet: it is the target of job `{job}`, which has not written it; run that job first, or backfill it with --downstream"
    )]
    NoTableYet { table: String, job: String },

    #[error(
        "job `{job}` reads its own table {table}, which has no Delta table yet: its first day has no day before to read; seed that day once with SQL that does not read {table} (docs/guide/pipelines.md)"
    )]
    SeedFirstDay { table: String, job: String },

    #[error(
        "no input: {} for {dt}; a day whose data has not arrived is not written as a day without rows (where a day without input is one without rows, set on_missing_input = \"empty\" on job `{job}`)",
        no_input_files(tables)
    )]
    NoInput { job: String, dt: chrono::NaiveDate, tables: Vec<String> },

    #[error("cannot read the partition state of {table}")]
    State { table: String, source: Box<lakewriter_delta::Error> },

    #[error("job `{job}`: cannot plan {partition}")]
    PlanPartition { job: String, partition: lakewriter_core::PartitionKey, source: Box<lakewriter_compute::Error> },

    #[error("cannot compute the digest of {table}")]
    Digest { table: String, source: Box<lakewriter_delta::Error> },

    #[error("cannot compare the two versions of {table} written by verify")]
    Diff { table: String, source: Box<lakewriter_compute::Error> },

    #[error("{0}")]
    Usage(String),

    /// A dated job that has written no partition, asked for its state without a range.
    #[error("job `{job}` has not written any partition yet: pass --from and --to to see which are missing")]
    NothingWritten { job: String },

    #[error("job `{job}`: cannot read which tables its SQL names")]
    GraphSql { job: String, source: Box<lakewriter_compute::Error> },

    #[error("jobs read each other's targets in a cycle: {cycle} (each job reads the target of the one before it)")]
    Cycle { cycle: String },

    #[error("verify copies the target to a local scratch folder; {url} is not local")]
    VerifyNotLocal { url: url::Url },

    #[error("the reproduction in a scratch folder failed: {first}")]
    Reproduction { first: String },

    #[error("job `{job}`: key `not_null`: the result has no column `{column}`")]
    NotNullColumn { job: String, column: String },

    #[error("{table}: the result has {rows} {outside}: a run would fail and commit nothing")]
    WouldWriteOutside { table: String, rows: usize, outside: String },

    /// A statement of `lakewriter sql` that cannot be read or planned: its SQL, a clause
    /// lakewriter does not run, an expression.
    #[error(transparent)]
    Statement(Box<lakewriter_compute::Error>),

    /// A statement's write failed; nothing was committed unless the error says otherwise.
    #[error(transparent)]
    StatementWrite(Box<lakewriter_delta::Error>),

    /// A whole-table backfill's drop of the columns its result no longer has failed; nothing was
    /// committed unless the error says otherwise.
    #[error(transparent)]
    DropColumns(Box<lakewriter_delta::Error>),

    #[error(
        "MERGE INTO {table}: {rows} target row(s) match more than one source row, and a MERGE changes each target row at most once (as in Spark); deduplicate the source (e.g. ROW_NUMBER() … WHERE rn = 1); nothing was committed. E.g. {examples}"
    )]
    MergeDuplicates { table: String, rows: usize, examples: String },

    /// A test (`[tests.NAME]`) that cannot be run as written: the key and what is wrong.
    #[error("key `{key}`: {problem}")]
    TestDefinition { test: String, key: String, problem: String },

    #[error("cannot copy {} to a scratch folder", from.display())]
    Scratch { from: PathBuf, source: std::io::Error },
}

impl Error {
    pub(crate) fn statement(source: lakewriter_compute::Error) -> Self {
        Self::Statement(Box::new(source))
    }

    /// A statement's planning error: SQL that does not plan is the statement's fault (a usage
    /// error), said without the job wording of a job's planning error.
    pub(crate) fn statement_plan(source: lakewriter_compute::Error) -> Self {
        match source {
            lakewriter_compute::Error::Sql { source, at } => Self::statement(lakewriter_compute::Error::Statement {
                problem: match at {
                    Some(at) => format!("the SQL is invalid (at {at}): {source}"),
                    None => format!("the SQL is invalid: {source}"),
                },
            }),
            other => Self::statement(other),
        }
    }

    pub(crate) fn write(source: lakewriter_delta::Error) -> Self {
        Self::StatementWrite(Box::new(source))
    }

    /// True where a table this error's SQL reads is a job's target that has not been written yet
    /// (see [`Error::NoTableYet`]), at any depth of its causes.
    ///
    /// A run of a job whose own table is missing fails as [`Error::SeedFirstDay`] instead:
    /// nothing upstream would write it.
    #[must_use]
    pub fn waits_for_upstream(&self) -> bool {
        ours(self).any(|e| matches!(e, Self::NoTableYet { .. }))
    }

    /// The [`Error::NoTableYet`] naming `job` among the causes of `error`: a job reading its own
    /// table before it exists.
    #[must_use]
    pub fn own_table_missing(error: &(dyn std::error::Error + 'static), job: &str) -> Option<Self> {
        ours(error).find_map(|e| match e {
            Self::NoTableYet { table, job: named } if named == job => {
                Some(Self::SeedFirstDay { table: table.clone(), job: job.to_owned() })
            }
            _ => None,
        })
    }

    /// True for errors in what the user wrote (project file, job names, dates, storage options):
    /// exit code 2. Everything else is a failure of a run or of storage: exit code 1.
    #[must_use]
    pub fn is_usage(&self) -> bool {
        match self {
            Self::Config(_)
            | Self::ReadProject { .. }
            | Self::NoProject { .. }
            | Self::SqlFile { .. }
            | Self::Usage(_)
            | Self::NothingWritten { .. }
            | Self::GraphSql { .. }
            | Self::TestDefinition { .. }
            | Self::Cycle { .. } => true,
            Self::Statement(source) => {
                matches!(
                    **source,
                    lakewriter_compute::Error::Statement { .. }
                        | lakewriter_compute::Error::Expression { .. }
                        | lakewriter_compute::Error::TableNotFound { .. }
                )
            }
            Self::ProjectStorage { error: source, .. } | Self::Storage(source) => source.is_config(),
            Self::Job(error) => error.is_usage(),
            _ => false,
        }
    }
}

/// Why one partition run failed. It becomes the report's `error`; [`RunError::is_retryable`]
/// decides whether the run is planned and run again.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A check of the planned run: a nondeterministic function in its SQL.
    #[error(transparent)]
    Setup(#[from] Error),

    /// Planning or computing the result (raw inputs, SQL, keyed sources).
    #[error(transparent)]
    Compute(#[from] lakewriter_compute::Error),

    /// Reading or writing its Delta table: the storable-type and schema checks, the table's
    /// state, the write and its commit.
    #[error(transparent)]
    Write(#[from] lakewriter_delta::Error),

    /// The result's columns differ from its table's under `on_schema_change = "fail"`: the
    /// mismatch, and what to set or run to let the change in ([`RunError::advised`]).
    #[error("{mismatch}; {advice}")]
    Schema { mismatch: lakewriter_delta::Error, advice: String },

    /// Blocking checks failed on the result: nothing was committed.
    #[error("{}", failed.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Checks { failed: Vec<lakewriter_core::CheckOutcome> },
}

impl RunError {
    /// A statement's error as a run's: its write's and its SQL's errors as their own (a conflict
    /// is then retried), anything else as the run's setup.
    pub(crate) fn of(error: Error) -> Self {
        match error {
            Error::StatementWrite(write) => Self::Write(*write),
            Error::Statement(compute) => Self::Compute(*compute),
            other => Self::Setup(other),
        }
    }

    /// This error, where it is a result whose columns differ from its table's and the job's
    /// `on_schema_change` is `fail` (the default), with what lets the change in: the setting that
    /// adds a column, the one that drops a column with `backfill --replace-schema`.
    #[must_use]
    pub(crate) fn advised(self, job: &lakewriter_core::JobSpec) -> Self {
        use lakewriter_core::{OnSchemaChange, WriteMode};
        // A merge's tombstone column, added or taken out with `delete_when`, is said as such.
        let tombstone = |differences: &[String]| {
            differences.iter().all(|d| d.contains(&format!("`{}`", lakewriter_compute::keyed::DELETED)))
        };
        match self {
            Self::Write(mismatch @ lakewriter_delta::Error::SchemaMismatch { .. })
                if job.on_schema_change == OnSchemaChange::Fail
                    && job.write.mode() != WriteMode::Rebuild
                    && !matches!(&mismatch, lakewriter_delta::Error::SchemaMismatch { differences, .. } if tombstone(differences)) =>
            {
                Self::Schema { mismatch, advice: schema_advice(&job.name) }
            }
            other => other,
        }
    }

    /// True where running the partition again may succeed: its commit conflicted with a
    /// concurrent one (see [`lakewriter_delta::Error::is_conflict`]).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Write(e) if e.is_conflict())
    }
}

/// The causes of `error`, itself first, that are this crate's errors.
fn ours<'e>(error: &'e (dyn std::error::Error + 'static)) -> impl Iterator<Item = &'e Error> {
    std::iter::successors(Some(error), |e| e.source()).filter_map(|e| e.downcast_ref::<Error>())
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The text of `error`, then of each of its causes, each once and without a backtrace (see
/// [`lakewriter_core::causes`]): what a report, stderr and `report`'s page show. A backtrace the
/// error's text carries (the Delta kernel's, with `RUST_BACKTRACE` set) is logged at debug level.
#[must_use]
pub fn causes(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
    log_backtrace(error);
    lakewriter_core::causes(error)
}

/// An error and its [`causes`], joined by `: `.
#[must_use]
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    causes(error).join(": ")
}

fn log_backtrace(error: &(dyn std::error::Error + 'static)) {
    if tracing::enabled!(tracing::Level::DEBUG)
        && let Some(backtrace) = lakewriter_core::backtrace(error)
    {
        tracing::debug!(error = %lakewriter_core::error_chain(error), %backtrace, "where the error was made");
    }
}

/// What lets a change of job `job`'s columns in, where its `on_schema_change` is `fail`.
pub(crate) fn schema_advice(job: &str) -> String {
    format!(
        "job `{job}` keeps its table's columns (on_schema_change = \"fail\", the default): set \
         on_schema_change = \"append_new_columns\" to add a new column (then `lakewriter backfill {job} --from D1 \
         --to D2 --only stale` fills it in on the days written before), or \"sync_all_columns\" to also drop one \
         with `lakewriter backfill {job} --from D1 --to D2 --replace-schema` over every day written; to change a \
         column's type, drop it so and add it back (docs/guide/schema-changes.md)"
    )
}

/// `raw.orders has no file`, `raw.orders and raw.customers have no file`.
fn no_input_files(tables: &[String]) -> String {
    match tables {
        [one] => format!("{one} has no file"),
        [first @ .., last] => format!("{} and {last} have no file", first.join(", ")),
        [] => "no raw dataset is without a file".to_owned(),
    }
}

/// A result's plan or rows that DataFusion failed to build or compute.
pub(crate) fn result_err(source: datafusion::error::DataFusionError) -> lakewriter_compute::Error {
    lakewriter_compute::Error::Result { source: Box::new(source) }
}

/// A comparison of a result with the rows it replaces that DataFusion failed to make.
pub(crate) fn diff_err(source: datafusion::error::DataFusionError) -> lakewriter_compute::Error {
    lakewriter_compute::Error::Diff { source: Box::new(source) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_write_conflicts_are_retried() {
        let partition = lakewriter_core::PartitionKey::All;
        let conflict =
            lakewriter_delta::Error::Conflict { table: "t".into(), partition, source: "a concurrent commit".into() };
        assert!(RunError::from(conflict).is_retryable());
        let mismatch = lakewriter_delta::Error::SchemaMismatch { table: "t".into(), differences: vec!["x".into()] };
        assert!(!RunError::from(mismatch).is_retryable());
        let raw =
            lakewriter_compute::Error::RawFile { table: "raw.o".into(), file: "f".into(), problem: "is empty".into() };
        assert!(!RunError::from(raw).is_retryable());
        assert!(!RunError::from(Error::Usage("bad".into())).is_retryable());
    }

    #[test]
    fn storage_configuration_is_usage_and_storage_failures_are_not() {
        let config = lakewriter_storage::Error::Scheme { url: "ftp://x".into() };
        assert!(Error::from(config).is_usage());
        let secret = lakewriter_storage::Error::SecretInFile { key: "aws_secret_access_key".into() };
        assert!(Error::ProjectStorage { file: "lakewriter.toml".into(), error: secret }.is_usage());
        let url = url::Url::parse("s3://bucket/lake").expect("url");
        let store = lakewriter_storage::Error::Store {
            url,
            source: Box::new(object_store::Error::Generic { store: "S3", source: "unreachable".into() }),
        };
        assert!(!Error::from(store).is_usage());
        assert!(
            !Error::Diff {
                table: "a.b".into(),
                source: Box::new(lakewriter_compute::Error::DuplicateKeys { keys: 1, examples: String::new() })
            }
            .is_usage()
        );
    }
}
