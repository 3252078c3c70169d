//! `backfill --replace-schema`: a backfill of every partition a job has written that, under
//! `sync_all_columns`, ends by dropping the columns its result no longer has. Each day is
//! rewritten with them as NULL, one commit each as always; then one commit drops them, once no
//! row holds a value of them (see `lakewriter_delta::drop_columns`). Killed in between, the table
//! keeps the columns, NULL, and the same command run again drops them.

use std::collections::BTreeMap;

use lakewriter_core::{DateRange, OnSchemaChange, PartitionKey};
use lakewriter_delta::CommitMetadata;
use lakewriter_delta::schema::SchemaColumn;
use lakewriter_delta::state::LogScope;
use serde::Serialize;

use crate::write::Replaces;
use crate::{Error, Job, PartitionReport, Result, RunStatus, Runner};

/// The columns a whole-table backfill dropped.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnsDropped {
    pub job: String,
    pub table: String,
    /// The version of the commit that dropped them.
    pub table_version: u64,
    pub dropped: Vec<SchemaColumn>,
}

impl Runner {
    /// Refuses `backfill --replace-schema` for `job` over `range` before any day runs, where the
    /// backfill could not drop a column: the job does not ask for it (`sync_all_columns`), its
    /// mode keeps rows a rerun does not replace (only a mode that replaces each day's rows leaves
    /// a dropped column NULL everywhere), or it has written partitions outside `range`.
    pub async fn check_replace_schema(&self, job: &Job, range: DateRange) -> Result<()> {
        let name = &job.spec.name;
        let refuse = |why: String| Err(Error::Usage(format!("backfill --replace-schema {name}: {why}")));
        if job.spec.on_schema_change != OnSchemaChange::SyncAllColumns {
            return refuse(format!(
                "it drops the columns the job's result no longer has, which on_schema_change = \"sync_all_columns\" asks for; the job has \"{}\"",
                job.spec.on_schema_change
            ));
        }
        if job.mode.replaces() != Replaces::Slice {
            return refuse(format!(
                "write = \"{}\" keeps the rows a rerun does not replace, which hold the columns' values; only a mode that replaces each day's rows (overwrite_partition, delete_insert, INSERT OVERWRITE) leaves a dropped column NULL in every row (a rebuild drops it in its run)",
                job.spec.write.mode()
            ));
        }
        let state = self.recorded(job, LogScope::FromLastCheckpoint).await?.unwrap_or_default();
        let outside: Vec<String> = state
            .partitions
            .keys()
            .filter(|p| p.date().is_none_or(|d| !range.contains(d)))
            .map(ToString::to_string)
            .collect();
        if let Some(first) = outside.first() {
            return refuse(format!(
                "{} written partition(s) are outside {}..{} (the first: {first}): the range must cover every partition the job has written, so that none keeps a value of a dropped column",
                outside.len(),
                range.from(),
                range.to()
            ));
        }
        Ok(())
    }

    /// After the backfill of [`Self::check_replace_schema`] (`reports`, one per day), drops the
    /// table columns the days' results lacked, in one commit over the version the job's state is
    /// read at now: `None` where a day failed (nothing is dropped), in a dry run, or where there
    /// is nothing to drop.
    pub async fn replace_schema(&self, job: &Job, reports: &[PartitionReport]) -> Result<Option<ColumnsDropped>> {
        if reports.is_empty() || reports.iter().any(|r| r.status == RunStatus::Failed) {
            return Ok(None);
        }
        let mut columns: Vec<SchemaColumn> = Vec::new();
        for missing in reports.iter().filter_map(|r| r.schema_change.as_ref()).flat_map(|c| &c.missing) {
            if !columns.contains(missing) {
                columns.push(missing.clone());
            }
        }
        if columns.is_empty() || self.dry_run.is_some() {
            return Ok(None);
        }
        let table = job.spec.target.to_string();
        let state = self.recorded(job, LogScope::FromLastCheckpoint).await?.unwrap_or_default();
        let width = self.table_columns(job, &state).await?.len();
        let partitions: BTreeMap<PartitionKey, usize> = state
            .partitions
            .iter()
            .map(|(p, r)| (p.clone(), r.columns.and_then(|n| usize::try_from(n).ok()).unwrap_or(width)))
            .collect();
        let metadata = CommitMetadata {
            job: job.spec.name.clone(),
            partition: PartitionKey::All,
            write: "drop_columns".to_owned(),
            lakewriter_version: lakewriter_core::VERSION.to_owned(),
            sql_hash: String::new(),
            code_fingerprint: job.code.clone(),
            input_fingerprint: String::new(),
            inputs: None,
            run_id: crate::run::new_run_id(),
            started_at: None,
            forced: false,
            checks: Vec::new(),
            unwritten: Vec::new(),
        };
        let target = self.target_of(job, &table, &metadata, Some(state.version));
        let names: Vec<String> = columns.iter().map(|c| c.column.clone()).collect();
        let state_session = self.session().state();
        let committed = lakewriter_delta::drop_columns(&state_session, target, &names, &partitions)
            .await
            .map_err(|e| Error::DropColumns(Box::new(e)))?;
        Ok(Some(ColumnsDropped {
            job: job.spec.name.clone(),
            table,
            table_version: committed.version,
            dropped: columns,
        }))
    }
}
