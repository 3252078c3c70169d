//! Auditing live tables against a reproduction: per partition, equal, or how it differs.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;
use datafusion::prelude::DataFrame;
use lakewriter_core::{DateRange, PartitionKey};
use lakewriter_delta::Digest;
use lakewriter_delta::state::{JobState, LogScope};
use lakewriter_storage::Location;
use serde::Serialize;

use crate::{Error, Job, Result, Runner, Workspace};

/// Example rows shown of each side of a partition that differs.
const EXAMPLES: usize = 3;

/// How a live partition compares with its reproduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Equal,
    Differs,
    /// In the reproduction only.
    MissingHere,
    /// In the live table only.
    MissingThere,
}

/// One partition of an audit. "Added" and "removed" are what the reproduction would change in
/// the live partition: rows it has that the live one lacks, and the reverse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionAudit {
    pub job: String,
    pub partition: PartitionKey,
    pub verdict: Verdict,
    pub rows_here: Option<u64>,
    pub rows_there: Option<u64>,
    pub digest_here: Option<String>,
    pub digest_there: Option<String>,
    pub rows_added: Option<u64>,
    pub rows_removed: Option<u64>,
    pub added_examples: Vec<String>,
    pub removed_examples: Vec<String>,
    /// The live partition was written with other code than the job's current code, which the
    /// reproduction ran: a difference it explains.
    pub code_changed: bool,
    /// The two tables' columns differ (names, types or order): no rows were compared.
    pub schema_changed: bool,
}

/// The closing line of an audit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AuditSummary {
    pub jobs: usize,
    pub partitions: usize,
    pub equal: usize,
    pub differs: usize,
    pub missing_here: usize,
    pub missing_there: usize,
}

impl AuditSummary {
    #[must_use]
    pub fn of(jobs: usize, audits: &[PartitionAudit]) -> Self {
        let count = |v| audits.iter().filter(|a| a.verdict == v).count();
        Self {
            jobs,
            partitions: audits.len(),
            equal: count(Verdict::Equal),
            differs: count(Verdict::Differs),
            missing_here: count(Verdict::MissingHere),
            missing_there: count(Verdict::MissingThere),
        }
    }

    /// Every partition audited is equal.
    #[must_use]
    pub fn all_equal(&self) -> bool {
        self.equal == self.partitions
    }
}

impl PartitionAudit {
    /// The verdict on one partition from its digests here and there.
    fn compare(job: &Job, partition: PartitionKey, here: Option<&Digest>, there: Option<&Digest>) -> Self {
        Self {
            job: job.spec.name.clone(),
            partition,
            verdict: match (here, there) {
                (Some(h), Some(t)) if h.digest == t.digest && h.rows == t.rows => Verdict::Equal,
                (Some(_), Some(_)) => Verdict::Differs,
                (None, _) => Verdict::MissingHere,
                (_, None) => Verdict::MissingThere,
            },
            rows_here: here.map(|d| d.rows),
            rows_there: there.map(|d| d.rows),
            digest_here: here.map(|d| d.digest.clone()),
            digest_there: there.map(|d| d.digest.clone()),
            rows_added: None,
            rows_removed: None,
            added_examples: Vec::new(),
            removed_examples: Vec::new(),
            code_changed: false,
            schema_changed: false,
        }
    }
}

impl Runner {
    /// Compares each partition of `job`'s live table (this runner's) with the same partition of
    /// its table under `there`'s root, by content digest (one scan of each table), restricted to
    /// `range` where given; a partition that differs is diffed row by row. Partitions in neither
    /// table are not listed. A table without a partition column (a `merge` target), a `rebuild`'s
    /// and a table whose partition values are not all days are one partition, `all`, whatever
    /// the range.
    pub async fn audit(&self, job: &Job, there: &Workspace, range: Option<DateRange>) -> Result<Vec<PartitionAudit>> {
        let there_location = there.job(&job.spec.name)?.location.clone();
        let table = job.spec.target.to_string();
        let read_err = |source| Error::Digest { table: table.clone(), source: Box::new(source) };
        let by_day = if job.dated() && job.partition_by.is_some() {
            let here = day_digests(&job.location, range).await.map_err(read_err)?;
            here.zip(day_digests(&there_location, range).await.map_err(read_err)?)
        } else {
            None
        };
        // A table without a partition column, or one whose partition values are not all days:
        // compared whole, as one partition (its key `None`, read without a filter).
        let (here, there_digests) = if let Some(both) = by_day {
            both
        } else {
            let here = whole_digest(&job.location).await.map_err(read_err)?;
            (here, whole_digest(&there_location).await.map_err(read_err)?)
        };
        let column = job.partition_by.as_deref();
        let recorded = self.recorded(job, LogScope::Whole).await?.unwrap_or_default();
        let keys: BTreeSet<Option<NaiveDate>> = here.keys().chain(there_digests.keys()).copied().collect();
        let mut audits = Vec::new();
        for dt in keys.into_iter().filter(|dt| range.is_none_or(|r| dt.is_none_or(|d| r.contains(d)))) {
            // The table's partition of that day (its partition column's own label), which the
            // job's runs of that day are recorded under whatever they are named by.
            let partition = PartitionKey::of(column, dt);
            // A whole table (no partition column) was written by runs of every date it records.
            let code_changed = match dt {
                Some(_) => recorded.partitions.get(&partition).is_some_and(|r| !r.code_matches(&job.code)),
                None => recorded.partitions.values().any(|r| !r.code_matches(&job.code)),
            };
            let mut audit = PartitionAudit::compare(job, partition, here.get(&dt), there_digests.get(&dt));
            audit.code_changed = code_changed;
            if audit.verdict == Verdict::Differs {
                let read = |location| self.partition_frame(location, &table, column, dt);
                let (before, after) = (read(&job.location).await?, read(&there_location).await?);
                let lacks = recorded_lacks(&recorded, &PartitionKey::of(column, dt), before.schema().as_arrow());
                let Some(after) = in_columns_of(&before, after).filter(|_| !lacks) else {
                    // A code edit that changed the columns — or added some this partition's rows
                    // were written without (they read them as NULL): the rows cannot be compared.
                    audit.schema_changed = true;
                    audits.push(audit);
                    continue;
                };
                let diff = lakewriter_compute::diff(before, after, EXAMPLES)
                    .await
                    .map_err(|source| Error::Diff { table: table.clone(), source: Box::new(source) })?;
                audit.rows_added = Some(diff.added);
                audit.rows_removed = Some(diff.removed);
                (audit.added_examples, audit.removed_examples) = (diff.added_examples, diff.removed_examples);
                if diff.added + diff.removed == 0 {
                    // The same rows in the same columns, in another order (a column added to the
                    // live table at its end): the same content.
                    (audit.verdict, audit.rows_added, audit.rows_removed) = (Verdict::Equal, None, None);
                }
            }
            audits.push(audit);
        }
        Ok(audits)
    }

    /// The rows of the partition `dt` (the whole table without one) of the table at `location`.
    async fn partition_frame(
        &self,
        location: &Location,
        table: &str,
        column: Option<&str>,
        dt: Option<NaiveDate>,
    ) -> Result<DataFrame> {
        let open_err = |source| Error::OpenTable { table: table.to_owned(), source: Box::new(source) };
        let provider = lakewriter_delta::table::provider(location).await.map_err(open_err)?;
        let plan_err = |e: datafusion::error::DataFusionError| Error::Diff {
            table: table.to_owned(),
            source: Box::new(lakewriter_compute::Error::Diff { source: Box::new(e) }),
        };
        let df = self.session().read_table(provider).map_err(plan_err)?;
        match (column, dt) {
            (Some(column), Some(dt)) => {
                df.filter(lakewriter_compute::partition_predicate(column, dt)).map_err(plan_err)
            }
            _ => Ok(df),
        }
    }
}

/// The digest of each day of the table at `location` (one scan, of `range`'s days where given);
/// `None` where a partition value is not a day. Empty where there is no table.
async fn day_digests(
    location: &Location,
    range: Option<DateRange>,
) -> lakewriter_delta::Result<Option<BTreeMap<Option<NaiveDate>, Digest>>> {
    let literal = lakewriter_compute::date_literal;
    let between = range.map(|r| (literal(r.from()), literal(r.to())));
    let found = lakewriter_delta::partition_digests(location, between).await?.unwrap_or_default();
    Ok(found.into_iter().map(|(k, d)| Some((Some(k.parse::<NaiveDate>().ok()?), d))).collect())
}

/// The whole table's digest at `location`, as the one partition `all`; empty where there is no
/// table.
async fn whole_digest(location: &Location) -> lakewriter_delta::Result<BTreeMap<Option<NaiveDate>, Digest>> {
    if lakewriter_delta::table::version(location).await?.is_none() {
        return Ok(BTreeMap::new());
    }
    Ok(BTreeMap::from([(None, lakewriter_delta::digest(location, None).await?)]))
}

/// `after` with the columns of `before` in `before`'s order, where it has the same columns (names
/// and stored types, order aside); `None` where they differ.
fn in_columns_of(before: &DataFrame, after: DataFrame) -> Option<DataFrame> {
    let (columns, theirs) = (before.schema().as_arrow(), after.schema().as_arrow());
    if !lakewriter_delta::schema::column_differences(columns, theirs).is_empty() {
        return None;
    }
    let names: Vec<&str> = columns.fields().iter().map(|f| f.name().as_str()).collect();
    after.select_columns(&names).ok()
}

/// Whether the live partition's rows were written before some of `table`'s columns were added.
fn recorded_lacks(recorded: &JobState, partition: &PartitionKey, table: &datafusion::arrow::datatypes::Schema) -> bool {
    let names: Vec<&String> = table.fields().iter().map(|f| f.name()).collect();
    let lacks = |r: &lakewriter_delta::state::Recorded| !r.lacks(&names).is_empty();
    match partition {
        PartitionKey::All => recorded.partitions.values().any(lacks),
        partition @ PartitionKey::Day { .. } => recorded.partitions.get(partition).is_some_and(lacks),
    }
}
