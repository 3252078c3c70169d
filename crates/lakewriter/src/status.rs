//! Which partitions need a run: the state each write recorded in the table's log, compared with
//! the job's code and the inputs its plan reads now.

use std::sync::Arc;

use chrono::NaiveDate;
use futures::StreamExt;
use lakewriter_compute::Prepared;
use lakewriter_core::{DateRange, InputFile, OnMissingInput, PartitionKey, input_fingerprint};
use lakewriter_delta::schema::SchemaColumn;
use lakewriter_delta::state::{JobState, LogScope};

mod states;

pub use states::{
    Action, CHECKPOINT_AFTER, Freshness, JobStatus, LogLength, Only, PartitionStatus, PlannedPartition, RebuildCost,
    StaleReason, UpstreamPartition,
};

use crate::columns::writes_column;
use crate::upstream::Found;
use crate::write::Replaces;
use crate::{Error, Job, Result, Runner, error_chain};

/// Partitions planned at once by `status` and `plan`.
const CONCURRENT_PLANS: usize = 4;

impl Runner {
    /// The state of `job`'s partitions in `range` (default: the first to the last partition it
    /// wrote): each partition's plan is made, its inputs fingerprinted and compared, with the
    /// code's, to what the last write recorded; with the version, rows and run id of each write,
    /// also of those older than the newest checkpoint while the log keeps their commit files.
    /// Writes nothing.
    pub async fn status(&self, job: &Job, range: Option<DateRange>) -> Result<JobStatus> {
        self.state_of(job, range, true, &Found::default()).await
    }

    /// [`Runner::status`], where the states of upstream partitions in `found` are taken as they
    /// are rather than planned again (`report`, which finds every job's in dependency order).
    pub(crate) async fn status_after(&self, job: &Job, range: Option<DateRange>, found: &Found) -> Result<JobStatus> {
        self.state_of(job, range, true, found).await
    }

    /// [`Runner::status`] without the version, rows and run id of the writes older than the
    /// newest checkpoint (no commit file read for them): what `plan` and `--only` decide by.
    pub async fn freshness(&self, job: &Job, range: Option<DateRange>) -> Result<JobStatus> {
        let status = self.state_of(job, range, false, &Found::default()).await?;
        if status.nothing_written(job, range) {
            return Err(Error::NothingWritten { job: job.spec.name.clone() });
        }
        Ok(status)
    }

    async fn state_of(&self, job: &Job, range: Option<DateRange>, details: bool, found: &Found) -> Result<JobStatus> {
        let recorded = self.recorded(job, LogScope::Whole).await?;
        let table_version = recorded.as_ref().map(|s| s.version);
        let mut state = recorded.unwrap_or_default();
        let days: Vec<Option<NaiveDate>> = if job.dated() {
            // No range, and nothing written: no partition to show.
            range.or_else(|| written_range(&state)).into_iter().flat_map(|range| range.days().map(Some)).collect()
        } else {
            vec![None]
        };
        if details {
            let shown: std::collections::BTreeSet<PartitionKey> = days.iter().map(|dt| job.partition(*dt)).collect();
            lakewriter_delta::state::fill_details(&job.location, &job.spec.name, &mut state, &|p| shown.contains(p))
                .await
                .map_err(|source| Error::State { table: job.spec.target.to_string(), source: Box::new(source) })?;
        }
        let mut planned = self.partition_statuses(job, &state, days).await?;
        self.mark_upstream_stale(job, &mut planned, found).await?;
        let columns = self.table_columns(job, &state).await?;
        let mut adds: Vec<SchemaColumn> = Vec::new();
        for lacks in planned.iter().flat_map(|(p, _)| &p.lacks) {
            if !columns.contains(lacks) && !adds.contains(lacks) {
                adds.push(lacks.clone());
            }
        }
        let refused = self.refused_columns(job, table_version, &columns, planned.first().map(|(p, _)| p)).await;
        let replaces_table = job.mode.replaces() == Replaces::Table;
        let rebuild = match planned.first() {
            Some((_, files)) if replaces_table => Some(self.rebuild_cost(job, files).await?),
            _ => None,
        };
        Ok(JobStatus {
            job: job.spec.name.clone(),
            target: job.spec.target.clone(),
            write: job.spec.write.mode(),
            table_version,
            checkpoint: state.checkpoint,
            log: table_version.map(|_| LogLength::of(&state)),
            partitions: planned.into_iter().map(|(status, _)| status).collect(),
            adds,
            refused,
            rebuild,
        })
    }

    /// How the result of a run of `job` for the partition `first` differs from its table of
    /// `columns` (at `version`) — a column added, dropped or of another type —, where its
    /// `on_schema_change` is `fail` (the default), which refuses any: every run fails, as the
    /// write's own check says. Empty for another policy, a `rebuild` (which replaces the
    /// columns), a table not written yet, or SQL that does not plan (each partition's planning
    /// says why). A job written as a statement: the columns it would add (its columns go to the
    /// table's by position or by its clauses).
    async fn refused_columns(
        &self,
        job: &Job,
        version: Option<u64>,
        columns: &[SchemaColumn],
        first: Option<&PartitionStatus>,
    ) -> Vec<String> {
        use lakewriter_core::OnSchemaChange;
        use lakewriter_delta::schema::Difference;
        let applies = job.spec.on_schema_change == OnSchemaChange::Fail && job.mode.replaces() != Replaces::Table;
        let (true, Some(first), Some(version)) = (applies && !columns.is_empty(), first, version) else {
            return Vec::new();
        };
        let Ok(query) = self.plan(&job.query, first.dt).await else { return Vec::new() };
        let result = query.plan.schema().as_arrow();
        if job.statement.is_some() {
            let beyond = crate::columns::columns_beyond(job, columns, query.plan.schema());
            return beyond
                .iter()
                .map(|c| format!("column `{}` ({}) is not in the table", c.column, c.stored))
                .collect();
        }
        let Ok(table) = self.loaded.columns(&job.location, version).await else { return Vec::new() };
        // A merge's tombstone column is the write's, not the result's.
        let tombstone = |column: &str| column == lakewriter_compute::keyed::DELETED;
        lakewriter_delta::schema::column_differences(&table, result)
            .into_iter()
            .filter(|d| !matches!(d, Difference::Missing { column, .. } | Difference::Extra { column, .. } if tombstone(column)))
            .map(|d| d.to_string())
            .collect()
    }

    /// What each run of the `rebuild` job `job` reads (`files`, its plan's inputs now) and
    /// replaces (the table's rows, from its log's file statistics).
    async fn rebuild_cost(&self, job: &Job, files: &[InputFile]) -> Result<RebuildCost> {
        let bytes = files.iter().map(|f| f.size).sum();
        let table = self.layout(job).await?;
        Ok(RebuildCost {
            files: files.len(),
            bytes,
            rows_replaced: table.as_ref().and_then(|t| t.rows),
            bytes_replaced: table.as_ref().map(|t| t.bytes),
            input_size_warning: job.spec.input_size_warning.filter(|&limit| bytes > limit),
        })
    }

    /// The state of `job`'s partitions of `days`, each with the files its plan reads now.
    pub(crate) async fn partition_statuses(
        &self,
        job: &Job,
        state: &JobState,
        days: Vec<Option<NaiveDate>>,
    ) -> Result<Vec<(PartitionStatus, Vec<InputFile>)>> {
        let columns = self.table_columns(job, state).await?;
        // The SQL is planned once for all the days; where that fails, each day's planning says
        // why, as a run's would.
        let prepared = Prepared::new(self.session(), &job.query).await.ok().map(Arc::new);
        futures::stream::iter(days)
            .map(|dt| self.partition_status(job, state, &columns, prepared.as_ref(), dt))
            .buffered(CONCURRENT_PLANS)
            .collect::<Vec<Result<_>>>()
            .await
            .into_iter()
            .collect()
    }

    /// The data files of `job`'s table and what compaction would rewrite (`status --maintenance`):
    /// opens the table's latest snapshot. `None` where the table does not exist yet.
    pub async fn layout(&self, job: &Job) -> Result<Option<lakewriter_delta::maintain::Layout>> {
        lakewriter_delta::maintain::layout(&job.location, None, &job.spec.cluster_by)
            .await
            .map_err(|source| Error::OpenTable { table: job.spec.target.to_string(), source: Box::new(source) })
    }

    /// The state of `job`'s partition `dt`: its plan's inputs now against what `state` recorded;
    /// with the files the plan reads. `columns` are the table's (see [`PartitionStatus::lacks`]).
    async fn partition_status(
        &self,
        job: &Job,
        state: &JobState,
        columns: &[SchemaColumn],
        prepared: Option<&Arc<Prepared>>,
        dt: Option<NaiveDate>,
    ) -> Result<(PartitionStatus, Vec<InputFile>)> {
        let partition = job.partition(dt);
        let recorded = state.partitions.get(&partition);
        let planned = match prepared {
            Some(prepared) => self.plan_prepared(prepared, dt).await,
            None => self.plan(&job.query, dt).await,
        };
        match planned {
            Ok(query) => {
                let inputs = input_fingerprint(&query.files);
                let mut status =
                    PartitionStatus::of(partition, dt, recorded, &job.code, Some(&inputs), query.files.len());
                if let Some(recorded) = recorded {
                    let schema = query.plan.schema();
                    let lacks = recorded.lacks(columns).into_iter().filter(|c| writes_column(job, &c.column, schema));
                    let adds = crate::columns::new_columns(job, columns, schema);
                    status.lacking(lacks.cloned().chain(adds).collect());
                }
                if !query.no_input.is_empty() && job.spec.on_missing_input == OnMissingInput::Fail {
                    status.without_input(query.no_input);
                }
                Ok((status, query.files))
            }
            Err(e) if e.is_unreadable_input() => {
                tracing::warn!(job = %job.spec.name, %partition, error = %error_chain(&e), "an input cannot be read");
                Ok((PartitionStatus::of(partition, dt, recorded, &job.code, None, 0), Vec::new()))
            }
            Err(source) => {
                Err(Error::PlanPartition { job: job.spec.name.clone(), partition, source: Box::new(source) })
            }
        }
    }
}

/// The first to the last date partition recorded in `state`.
pub(crate) fn written_range(state: &JobState) -> Option<DateRange> {
    let mut dates = state.partitions.keys().filter_map(PartitionKey::date);
    let first = dates.next()?;
    let (from, to) = dates.fold((first, first), |(from, to), d| (from.min(d), to.max(d)));
    DateRange::new(from, to).ok()
}

#[cfg(test)]
mod tests;
