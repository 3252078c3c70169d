//! A job resolved once, when the project loads: its SQL read, its statement (a job without a
//! `write` key) parsed, its write mode ([`crate::write`]) and partition column decided, its checks
//! checked against that mode, its table located and its code fingerprinted. The parsed
//! [`JobSpec`] is kept as written; what resolution decides lives beside it.

use std::path::Path;
use std::sync::Arc;

use chrono::NaiveDate;
use lakewriter_compute::Query;
use lakewriter_core::{JobSpec, PartitionKey, PartitionRun, SqlSource, WriteMode};
use lakewriter_storage::Location;

use crate::sql::JobStatement;
use crate::workspace::table_location;
use crate::write::Mode;
use crate::{Error, Result};

/// A job of the project, resolved.
#[derive(Debug, Clone)]
pub struct Job {
    /// The job as the project file writes it.
    pub spec: JobSpec,
    /// Where the job's target table lives.
    pub location: Location,
    /// Its SQL text.
    pub sql: String,
    /// A job written as a statement: its statement.
    pub statement: Option<JobStatement>,
    /// The query a run plans: `sql`, or a statement's query (an INSERT's) or source (a MERGE's)
    /// as the parser read it.
    pub query: Query,
    /// [`JobSpec::code_fingerprint`] of `sql`.
    pub code: String,
    /// The table's partition column: `partition_by`, or a statement's `PARTITION (column = $dt)`.
    pub partition_by: Option<String>,
    pub(crate) mode: Arc<dyn Mode>,
}

/// Where `spec`'s SQL text `sql` is written, for its errors: its `sql_file`; or the project file
/// `file`, at the line and column its inline text starts at in the job's table (or, not found
/// there verbatim — a string with escapes —, the job's `sql` key, its lines counted from 1).
fn origin(spec: &JobSpec, file: &Path, sql: &str) -> lakewriter_compute::Origin {
    use lakewriter_compute::Origin;
    let at_start = |file: String| Origin { file, line: 1, column: 1 };
    // A file below the current folder as the user would name it from there.
    let shown = |path: &Path| {
        let cwd = std::env::current_dir().ok();
        let relative = cwd.as_deref().and_then(|cwd| path.strip_prefix(cwd).ok());
        relative.unwrap_or(path).display().to_string()
    };
    if let SqlSource::File(path) = &spec.sql {
        return at_start(shown(path));
    }
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let table = text.find(&format!("[jobs.{}]", spec.name)).unwrap_or(0);
    match text[table..].find(sql).map(|found| table + found) {
        Some(start) if !sql.is_empty() => {
            let (line, column) = lakewriter_compute::line_and_column(&text, start);
            Origin { file: shown(file), line, column }
        }
        _ => at_start(format!("{} jobs.{}.sql", shown(file), spec.name)),
    }
}

impl Job {
    /// Resolves `spec` (of the project file `file`), its table under `root`. A check the job's
    /// mode cannot have is a configuration error ([`Error::Config`]) naming `file`.
    pub(crate) fn resolve(spec: &JobSpec, file: &Path, root: &Location) -> Result<Self> {
        let sql = match &spec.sql {
            SqlSource::Inline(sql) => sql.clone(),
            SqlSource::File(path) => std::fs::read_to_string(path).map_err(|source| Error::SqlFile {
                job: spec.name.clone(),
                path: path.clone(),
                source,
            })?,
        };
        let statement = match spec.write {
            lakewriter_core::WriteSpec::Statement => Some(JobStatement::read(spec, &sql)?),
            _ => None,
        };
        let mode = crate::write::resolve(spec, statement.as_ref())
            .ok_or_else(|| Error::Usage(format!("job `{}`: its statement was not read", spec.name)))?;
        if let Some(problem) = spec.checks.checks.iter().find_map(|c| mode.refuses(&c.kind)) {
            let message = format!("job `{}`: {problem}", spec.name);
            return Err(lakewriter_core::Error::Config { file: file.to_path_buf(), message }.into());
        }
        let partition_by = spec
            .partition_by
            .clone()
            .or_else(|| statement.as_ref().and_then(JobStatement::partition_column).map(str::to_owned));
        Ok(Self {
            location: table_location(root, &spec.target, file)?,
            query: statement
                .as_ref()
                .map_or_else(|| Query::text(sql.clone(), spec.semantics), JobStatement::query)
                .written_at(origin(spec, file, &sql)),
            code: spec.code_fingerprint(&sql),
            spec: spec.clone(),
            sql,
            statement,
            partition_by,
            mode,
        })
    }

    /// This job with its table under `root`.
    pub(crate) fn relocated(&self, root: &Location, file: &Path) -> Result<Self> {
        Ok(Self { location: table_location(root, &self.spec.target, file)?, ..self.clone() })
    }

    /// The name of the partition of this job's runs for `dt`: the table partition of that day
    /// (`order_date=2026-09-30`) where the mode writes it — `overwrite_partition`, an `INSERT
    /// OVERWRITE … PARTITION (c = $dt)` —, else `dt=2026-09-30`, since the day's rows may lie in any
    /// of the table's partitions (a `merge` partitioned by `region`); `all` for a run without a
    /// date.
    #[must_use]
    pub fn partition(&self, dt: Option<NaiveDate>) -> PartitionKey {
        PartitionKey::of(self.partition_by.as_deref().filter(|_| self.mode.replaces_the_day()), dt)
    }

    /// The write mode the job's runs make: its `write`, or for a job written as a statement the
    /// mode its statement maps onto.
    #[must_use]
    pub fn write_mode(&self) -> WriteMode {
        self.mode.mode()
    }

    /// Whether its runs are for a date (all but a `rebuild`'s).
    #[must_use]
    pub fn dated(&self) -> bool {
        self.mode.dated()
    }

    /// Partitions in flight in a backfill when none is asked for: the number of CPUs (at least 2)
    /// for the modes whose commits land side by side (partition overwrites, appends), one at a
    /// time for those that read and rewrite the same rows (`merge`, `append_dedup`,
    /// `delete_insert`, a `MERGE INTO`), which would only conflict and retry.
    #[must_use]
    pub fn default_parallelism(&self) -> usize {
        if self.mode.commits_side_by_side() {
            std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
        } else {
            1
        }
    }

    /// Whether its table may depend on the order its dates were written in (a keyed write).
    #[must_use]
    pub fn depends_on_order(&self) -> bool {
        self.mode.depends_on_order()
    }

    /// Whether a partition is written once and then skipped (an `append`, unless `--force`).
    #[must_use]
    pub fn runs_once(&self) -> bool {
        self.mode.forceable()
    }

    /// A run of this job for `dt`; a usage error where the job cannot run with (or without) a
    /// date, or with `force`. Every error names the job and the fix.
    pub fn partition_run(&self, dt: Option<NaiveDate>, force: bool) -> Result<PreparedRun<'_>> {
        let (name, mode) = (&self.spec.name, self.spec.write.mode());
        match (self.mode.dated(), dt) {
            (true, None) => {
                let why = if mode == WriteMode::Append {
                    " (an append without a partition could not be made exactly-once)"
                } else {
                    ""
                };
                return Err(Error::Usage(format!(
                    "job `{name}` (write = \"{mode}\") runs for a date: pass --dt YYYY-MM-DD{why}"
                )));
            }
            (false, Some(_)) => {
                return Err(Error::Usage(format!(
                    "job `{name}` (write = \"{mode}\") rebuilds the whole table: run it without --dt"
                )));
            }
            _ => {}
        }
        if force && !self.mode.forceable() {
            return Err(Error::Usage(format!("--force applies to write = \"append\" only; job `{name}` is {mode}")));
        }
        Ok(PreparedRun {
            job: self,
            unit: PartitionRun { job: name.clone(), dt, force },
            partition: self.partition(dt),
        })
    }

    /// Fails with a usage error where the job has no date partitions for `command` to go through.
    pub fn require_partitions(&self, command: &str) -> Result<()> {
        if self.dated() {
            return Ok(());
        }
        let name = &self.spec.name;
        Err(Error::Usage(format!(
            "job `{name}` (write = \"rebuild\") has no partitions to {command}: use `lakewriter run {name}`"
        )))
    }
}

/// One run of a job: the unit of work, its arguments checked once, before it starts.
#[derive(Debug, Clone)]
pub struct PreparedRun<'a> {
    pub job: &'a Job,
    pub unit: PartitionRun,
    pub partition: PartitionKey,
}

#[cfg(test)]
mod tests;
