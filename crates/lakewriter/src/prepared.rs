//! What a run needs before it plans anything: the job resolved once (its spec, its table's
//! location, its SQL and code fingerprint) and the write it will make for its date.

use chrono::NaiveDate;
use lakewriter_compute::KeyedSpec;
use lakewriter_compute::statement::Merge;
use lakewriter_core::{JobSpec, PartitionKey, PartitionRun, WriteMode, WriteSpec};
use lakewriter_storage::Location;

use crate::sql::JobStatement;
use crate::{Error, Result};

/// A job resolved once per command: looked up, its table located, its SQL read and fingerprinted.
#[derive(Debug, Clone)]
pub struct PreparedJob<'a> {
    pub spec: &'a JobSpec,
    /// Where the job's target table lives.
    pub location: Location,
    pub sql: String,
    /// A job written as a statement: its statement, read once.
    pub statement: Option<JobStatement>,
    /// The SQL a run plans: `sql`, or a statement's query (an INSERT's) or source (a MERGE's).
    pub query: String,
    /// [`JobSpec::code_fingerprint`] of `sql`.
    pub code: String,
    /// Its SQL reads its own target (e.g. the day before): a backfill runs its days one at a
    /// time, in date order, each reading the days before it as committed.
    pub reads_own_target: bool,
}

impl PreparedJob<'_> {
    /// The name of the partition `dt` of this job's target.
    #[must_use]
    pub fn partition(&self, dt: Option<NaiveDate>) -> PartitionKey {
        self.spec.partition_key(dt)
    }

    /// A run of this job for `dt`, its write resolved; a usage error where the job cannot run
    /// with (or without) a date, or with `force`.
    pub fn partition_run(&self, dt: Option<NaiveDate>, force: bool) -> Result<PreparedRun<'_>> {
        Ok(PreparedRun {
            job: self,
            unit: PartitionRun { job: self.spec.name.clone(), dt, force },
            partition: self.partition(dt),
            write: WritePlan::resolve(self.spec, self.statement.as_ref(), dt, force)?,
        })
    }

    /// The write mode the job's runs make: its `write`, or for a job written as a statement the
    /// mode its statement maps onto.
    #[must_use]
    pub fn write_mode(&self) -> WriteMode {
        match &self.statement {
            Some(JobStatement::Overwrite(_)) => WriteMode::OverwritePartition,
            Some(JobStatement::Append(_)) => WriteMode::Append,
            Some(JobStatement::Merge(_)) => WriteMode::Merge,
            None => self.spec.write.mode(),
        }
    }

    /// Fails with a usage error where the job has no date partitions for `command` to go through.
    pub fn require_partitions(&self, command: &str) -> Result<()> {
        if self.spec.write.needs_partition() {
            return Ok(());
        }
        let name = &self.spec.name;
        Err(Error::Usage(format!(
            "job `{name}` (write = \"rebuild\") has no partitions to {command}: use `lakewriter run {name}`"
        )))
    }
}

/// One run of a prepared job: the unit of work with its write resolved, so that its arguments
/// are checked once, before it starts.
#[derive(Debug, Clone)]
pub struct PreparedRun<'a> {
    pub job: &'a PreparedJob<'a>,
    pub unit: PartitionRun,
    pub partition: PartitionKey,
    pub write: WritePlan<'a>,
}

/// A job's write mode resolved with its date: each variant holds what its write needs.
#[derive(Debug, Clone)]
pub enum WritePlan<'a> {
    /// Replace the partition `column = dt` (replaceWhere).
    OverwritePartition { column: &'a str, dt: NaiveDate },
    /// Replace the rows matching `predicate`, `$dt` bound to `dt`.
    DeleteInsert { predicate: &'a str, dt: NaiveDate },
    /// Replace the whole table, schema included.
    Rebuild,
    /// Append once per partition; `force` appends again.
    Append { force: bool },
    /// `merge` or `append_dedup`: a deduplicated, classified source merged on its key.
    Keyed(KeyedSpec<'a>),
    /// A job's `MERGE INTO` statement, run as written.
    Merge(&'a Merge),
}

impl<'a> WritePlan<'a> {
    /// Checks that `job` can run with (or without) the date `dt`, then that `force` applies to
    /// it, and resolves its write. Every error is a usage error naming the job and the fix.
    /// A job written as a statement runs as its `statement` says.
    pub fn resolve(
        job: &'a JobSpec,
        statement: Option<&'a JobStatement>,
        dt: Option<NaiveDate>,
        force: bool,
    ) -> Result<Self> {
        let mode = job.write.mode();
        let needs_date = || {
            let why = if mode == WriteMode::Append {
                " (an append without a partition could not be made exactly-once)"
            } else {
                ""
            };
            Error::Usage(format!("job `{}` (write = \"{mode}\") runs for a date: pass --dt YYYY-MM-DD{why}", job.name))
        };
        let plan = match (&job.write, dt) {
            (WriteSpec::OverwritePartition, Some(dt)) => {
                Self::OverwritePartition { column: job.partition_by.as_deref().unwrap_or("dt"), dt }
            }
            (WriteSpec::DeleteInsert { predicate }, Some(dt)) => Self::DeleteInsert { predicate, dt },
            (WriteSpec::Append, Some(_)) => Self::Append { force },
            (write @ (WriteSpec::Merge { .. } | WriteSpec::AppendDedup { .. }), Some(_)) => {
                match KeyedSpec::of(write) {
                    Some(spec) => Self::Keyed(spec),
                    None => return Err(Error::Usage(format!("job `{}` ({mode}) has no merge key", job.name))),
                }
            }
            (WriteSpec::Statement, Some(dt)) => match statement {
                Some(JobStatement::Overwrite(_)) => {
                    Self::OverwritePartition { column: job.partition_by.as_deref().unwrap_or("dt"), dt }
                }
                Some(JobStatement::Append(_)) => Self::Append { force },
                Some(JobStatement::Merge(merge)) => Self::Merge(merge),
                None => return Err(Error::Usage(format!("job `{}`: its statement was not read", job.name))),
            },
            (WriteSpec::Rebuild, None) => Self::Rebuild,
            (WriteSpec::Rebuild, Some(_)) => {
                return Err(Error::Usage(format!(
                    "job `{}` (write = \"{mode}\") rebuilds the whole table: run it without --dt",
                    job.name
                )));
            }
            (_, None) => return Err(needs_date()),
        };
        if force && !matches!(plan, Self::Append { .. }) {
            let name = &job.name;
            return Err(Error::Usage(format!("--force applies to write = \"append\" only; job `{name}` is {mode}")));
        }
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lakewriter_core::Project;

    fn job(write: &str) -> JobSpec {
        let toml =
            format!("root = \"lake\"\n[jobs.j]\ntarget = \"a.b\"\nsql = \"SELECT 1 AS x, $dt AS dt\"\n{write}\n");
        let project = Project::parse(&toml, std::path::Path::new("/p/lakewriter.toml")).expect("project");
        project.jobs["j"].clone()
    }

    fn day() -> Option<NaiveDate> {
        lakewriter_core::parse_date("2026-09-30").ok()
    }

    #[test]
    fn dated_modes_need_a_date_and_rebuild_refuses_one() {
        let modes = [
            "write = \"overwrite_partition\"\npartition_by = \"dt\"",
            "write = \"delete_insert\"\npredicate = \"dt = $dt\"",
            "write = \"append\"",
            "write = \"merge\"\nkey = [\"x\"]\nnewer_by = \"v\"",
            "write = \"append_dedup\"\nkey = [\"x\"]",
        ];
        for write in modes {
            let job = job(write);
            assert!(WritePlan::resolve(&job, None, day(), false).is_ok(), "{write} with a date");
            let error =
                WritePlan::resolve(&job, None, None, false).expect_err("a dated mode without a date").to_string();
            assert!(error.starts_with("job `j` (write = \""), "{error}");
            assert!(error.contains("runs for a date: pass --dt YYYY-MM-DD"), "{error}");
        }
        let append =
            WritePlan::resolve(&job("write = \"append\""), None, None, false).expect_err("append needs a date");
        assert!(append.to_string().ends_with("(an append without a partition could not be made exactly-once)"));

        let rebuild = job("write = \"rebuild\"");
        assert!(matches!(WritePlan::resolve(&rebuild, None, None, false), Ok(WritePlan::Rebuild)));
        let error = WritePlan::resolve(&rebuild, None, day(), false).expect_err("rebuild with a date").to_string();
        assert_eq!(error, "job `j` (write = \"rebuild\") rebuilds the whole table: run it without --dt");
    }

    #[test]
    fn force_is_for_appends_only_and_errors_are_usage() {
        let append = job("write = \"append\"");
        assert!(matches!(WritePlan::resolve(&append, None, day(), true), Ok(WritePlan::Append { force: true })));
        let merge = job("write = \"merge\"\nkey = [\"x\"]\nnewer_by = \"v\"");
        let error = WritePlan::resolve(&merge, None, day(), true).expect_err("--force on a merge");
        assert_eq!(error.to_string(), "--force applies to write = \"append\" only; job `j` is merge");
        assert!(error.is_usage());
    }

    #[test]
    fn plans_carry_what_their_write_needs() {
        let custom = job("write = \"overwrite_partition\"\npartition_by = \"order_date\"");
        match WritePlan::resolve(&custom, None, day(), false) {
            Ok(WritePlan::OverwritePartition { column, dt }) => assert_eq!((column, Some(dt)), ("order_date", day())),
            other => panic!("expected an overwrite of order_date, got {other:?}"),
        }
        let keyed = job("write = \"append_dedup\"\nkey = [\"x\"]");
        match WritePlan::resolve(&keyed, None, day(), false) {
            Ok(WritePlan::Keyed(spec)) => assert_eq!((spec.key, spec.newer_by), (&["x".to_owned()][..], None)),
            other => panic!("expected a keyed write, got {other:?}"),
        }
    }
}
