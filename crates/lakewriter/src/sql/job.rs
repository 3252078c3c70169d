//! Jobs written as a statement (no `write` key): the statement read once, checked against the
//! job, and mapped onto the write it makes — `INSERT OVERWRITE t PARTITION (c = $dt) …` replaces
//! the partition as `overwrite_partition` does, `INSERT INTO t …` appends once per partition as
//! `append` does, `MERGE INTO t …` merges as written. Everything else a job has (partition state,
//! `status`, `plan`, `backfill --only stale`, `verify`, `lint`) goes through the same paths as
//! for a write mode, with the statement's query as the job's query.

use lakewriter_compute::Query;
use lakewriter_compute::statement::{Insert, Merge, Statement, Write};
use lakewriter_core::JobSpec;

use crate::{Error, Result};

/// The statement of a job written as one.
#[derive(Debug, Clone)]
pub enum JobStatement {
    /// `INSERT OVERWRITE t PARTITION (column = $dt) SELECT …`.
    Overwrite(Insert),
    /// `INSERT INTO t [PARTITION (column = $dt)] SELECT …`.
    Append(Insert),
    /// `MERGE INTO t USING … ON … WHEN …`.
    Merge(Merge),
}

impl JobStatement {
    /// Reads `job`'s SQL, `sql`, as its statement: one of the three forms above, writing the
    /// job's target, for the job's partition column. Every refusal names the job and the fix.
    pub(crate) fn read(job: &JobSpec, sql: &str) -> Result<Self> {
        let refuse = |problem: String| Err(Error::Usage(format!("job `{}`: {problem}", job.name)));
        let parsed = lakewriter_compute::statement::parse(sql, job.semantics)
            .map_err(|e| Error::Usage(format!("job `{}`: {e}", job.name)))?;
        let [parsed] = parsed.as_slice() else {
            return refuse("its SQL holds several statements; a job's SQL is one statement".into());
        };
        if parsed.statement.target().is_some_and(|t| *t != job.target) {
            let table = parsed.statement.target().map(ToString::to_string).unwrap_or_default();
            return refuse(format!("its statement writes {table}, but its target is {}", job.target));
        }
        let statement = match &parsed.statement {
            Statement::Write(Write::Insert(insert)) if insert.overwrite => Self::Overwrite(insert.clone()),
            Statement::Write(Write::Insert(insert)) => Self::Append(insert.clone()),
            Statement::Write(Write::Merge(merge)) => Self::Merge(merge.clone()),
            other => {
                let what = match other {
                    Statement::Write(Write::Delete { .. }) => "a DELETE",
                    Statement::Write(Write::Update { .. }) => "an UPDATE",
                    _ => "a query",
                };
                return refuse(format!(
                    "its SQL is {what}; without a `write` mode, a job's SQL is INSERT OVERWRITE … PARTITION (column = $dt), INSERT INTO or MERGE INTO (or give it a `write` mode and a SELECT)",
                ));
            }
        };
        let column = statement.partition_column();
        let static_dt =
            |insert: &Insert| insert.partition.iter().all(lakewriter_compute::statement::PartitionColumn::is_dt);
        match &statement {
            Self::Overwrite(insert) if insert.partition.len() != 1 || !static_dt(insert) => {
                return refuse(
                    "a job's INSERT OVERWRITE replaces one partition, its run's: write PARTITION (column = $dt)".into(),
                );
            }
            Self::Append(insert) if insert.partition.len() > 1 || !static_dt(insert) => {
                return refuse(
                    "a job's INSERT INTO names at most its run's partition: PARTITION (column = $dt)".into(),
                );
            }
            _ => {}
        }
        if let (Some(column), Some(partition_by)) = (column, &job.partition_by)
            && column != partition_by
        {
            return refuse(format!(
                "its statement's partition column is `{column}`, but partition_by is `{partition_by}`"
            ));
        }
        Ok(statement)
    }

    /// The query a run plans for its inputs and its rows: the INSERT's or the MERGE's source.
    #[must_use]
    pub fn query(&self) -> Query {
        match self {
            Self::Overwrite(insert) | Self::Append(insert) => insert.query.clone(),
            Self::Merge(merge) => super::merge::source_query(merge),
        }
    }

    /// The partition column the statement names (`PARTITION (column = $dt)`).
    #[must_use]
    pub fn partition_column(&self) -> Option<&str> {
        match self {
            Self::Overwrite(insert) | Self::Append(insert) => insert.partition.first().map(|p| p.column.as_str()),
            Self::Merge(_) => None,
        }
    }

    /// The INSERT whose query's columns are laid out onto the table's.
    #[must_use]
    pub fn insert(&self) -> Option<&Insert> {
        match self {
            Self::Overwrite(insert) | Self::Append(insert) => Some(insert),
            Self::Merge(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::JobStatement;
    use lakewriter_core::{JobSpec, Project};

    fn job(extra: &str, sql: &str) -> JobSpec {
        let toml = format!("root = \"lake\"\n[jobs.j]\ntarget = \"a.t\"\nsql = \"\"\"{sql}\"\"\"\n{extra}\n");
        Project::parse(&toml, std::path::Path::new("/p/lakewriter.toml")).expect("project").jobs["j"].clone()
    }

    fn refusal(extra: &str, sql: &str) -> String {
        let job = job(extra, sql);
        JobStatement::read(&job, sql).expect_err(sql).to_string()
    }

    #[test]
    fn each_form_maps_onto_its_write_with_its_query_and_partition_column() {
        let sql = "INSERT OVERWRITE TABLE a.t PARTITION (day = $dt) SELECT k, COUNT(*) AS n FROM raw.o WHERE dt = $dt GROUP BY k";
        let statement = JobStatement::read(&job("", sql), sql).expect("an overwrite");
        assert!(matches!(statement, JobStatement::Overwrite(_)));
        assert_eq!(statement.partition_column(), Some("day"));
        assert_eq!(statement.query().to_string(), "SELECT k, COUNT(*) AS n FROM raw.o WHERE dt = $dt GROUP BY k");
        let sql = "INSERT INTO a.t SELECT k FROM raw.o WHERE dt = $dt";
        let statement = JobStatement::read(&job("", sql), sql).expect("an append");
        assert!(matches!(statement, JobStatement::Append(_)) && statement.partition_column().is_none());
        let sql = "MERGE INTO a.t USING raw.s ON t.k = s.k WHEN NOT MATCHED THEN INSERT *";
        let statement = JobStatement::read(&job("", sql), sql).expect("a merge");
        assert!(matches!(statement, JobStatement::Merge(_)));
        assert_eq!(statement.query().to_string(), "SELECT * FROM raw.s");
    }

    #[test]
    fn what_a_job_cannot_be_written_as_is_refused_naming_the_job() {
        for (extra, sql, expected) in [
            ("", "DELETE FROM a.t WHERE dt = $dt", "its SQL is a DELETE; without a `write` mode"),
            ("", "SELECT 1 AS x", "its SQL is a query; without"),
            ("", "INSERT INTO a.other SELECT 1", "its statement writes a.other, but its target is a.t"),
            ("", "INSERT OVERWRITE a.t PARTITION (dt) SELECT 1, $dt", "replaces one partition, its run's"),
            ("", "INSERT OVERWRITE a.t SELECT 1", "replaces one partition, its run's"),
            ("", "INSERT OVERWRITE a.t PARTITION (dt = '2026-09-30') SELECT 1", "replaces one partition"),
            ("", "INSERT INTO a.t SELECT 1; INSERT INTO a.t SELECT 2", "several statements"),
            ("partition_by = \"day\"", "INSERT OVERWRITE a.t PARTITION (dt = $dt) SELECT 1", "partition_by is `day`"),
        ] {
            let message = refusal(extra, sql);
            assert!(message.starts_with("job `j`: "), "{sql}: {message}");
            assert!(message.contains(expected), "{sql}: {message}");
        }
    }
}
