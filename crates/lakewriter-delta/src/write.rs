//! Write strategies. Each one is a single Delta commit, or nothing: delta-rs writes the data
//! files first and commits the log entry last, so a failure at any earlier step leaves the table
//! as it was (unreferenced files, at worst, for `VACUUM`).

use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::common::ScalarValue;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{col, lit};
use deltalake::DeltaTableError;
use deltalake::kernel::transaction::CommitProperties;
use deltalake::protocol::SaveMode;
use lakewriter_core::days_since_epoch;
use serde::Serialize;
use url::Url;

use crate::{Error, Result, table};

/// How often a commit that lost the race for a log version is retried. A retry re-checks Delta's
/// conflict rules against the commits that won (writes to other partitions do not conflict) and
/// costs one small log read, so the bound is generous: with N writers, a commit can lose up to
/// N - 1 times in a row.
const COMMIT_RETRIES: usize = 1_000;

/// What lakewriter records in the `commitInfo` of every commit it makes, under the key
/// `lakewriter`. delta-rs adds `operationMetrics` (rows and files added and removed) beside it.
#[derive(Debug, Clone, Serialize)]
pub struct CommitMetadata {
    pub job: String,
    /// The logical partition, e.g. `dt=2026-09-30`.
    pub partition: String,
    pub write: String,
    pub lakewriter_version: String,
    /// Hash of the job's SQL text.
    pub sql_hash: String,
}

/// The outcome of one committed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    pub version: u64,
    pub rows_written: u64,
    pub files_added: u64,
    pub files_removed: u64,
}

/// Replace one partition of a table with the rows of a plan (Delta `replaceWhere`).
pub struct PartitionOverwrite<'a> {
    pub url: &'a Url,
    /// The table's name, for messages.
    pub table: &'a str,
    pub partition_column: &'a str,
    pub partition: NaiveDate,
    pub plan: LogicalPlan,
    pub metadata: &'a CommitMetadata,
}

/// Commits `plan`'s rows as the whole content of partition `column = partition`: one commit that
/// removes the partition's files and adds the new ones. The first write creates the table,
/// partitioned by `column`. Rows outside the partition, or a schema that differs from the
/// table's, fail the write before anything is committed.
pub async fn overwrite_partition(session: &SessionState, w: PartitionOverwrite<'_>) -> Result<Committed> {
    let PartitionOverwrite { url, table: name, partition_column, partition, plan, metadata } = w;
    let (table, created_dir) = table::open_for_write(url).await?;
    if let Ok(state) = table.snapshot() {
        let differences = crate::schema::differences(&state.snapshot().arrow_schema(), plan.schema().as_arrow());
        if !differences.is_empty() {
            return Err(Error::SchemaMismatch { table: name.to_owned(), differences });
        }
    }
    let metadata = serde_json::to_value(metadata).map_err(|e| Error::Read { url: url.clone(), source: e.into() })?;
    let predicate = col(partition_column).eq(lit(ScalarValue::Date32(Some(days_since_epoch(partition)))));
    let written = table
        .write(Vec::new())
        .with_input_plan(plan)
        .with_session_state(Arc::new(session.clone()))
        .with_save_mode(SaveMode::Overwrite)
        .with_replace_where(predicate)
        .with_partition_columns([partition_column])
        .with_commit_properties(
            CommitProperties::default()
                .with_metadata([("lakewriter".to_owned(), metadata)])
                .with_max_retries(COMMIT_RETRIES),
        )
        .await;
    match written {
        Ok(written) => committed(&written, name).await,
        Err(source) => {
            if let Some(dir) = created_dir {
                // The first write failed: leave no folder behind that could pass for a dataset.
                if !dir.join("_delta_log").exists() {
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
            Err(classify(source, name, partition_column, partition))
        }
    }
}

fn classify(source: DeltaTableError, table: &str, column: &str, partition: NaiveDate) -> Error {
    let text = source.to_string();
    let (table, column, partition) = (table.to_owned(), column.to_owned(), partition.to_string());
    if text.contains("failed validation") {
        Error::OutsidePartition { table, column, partition, source }
    } else {
        Error::Write { table, column, partition, source }
    }
}

#[derive(serde::Deserialize, Default)]
struct OperationMetrics {
    #[serde(default, rename = "num_added_rows")]
    added_rows: u64,
    #[serde(default, rename = "num_added_files")]
    added_files: u64,
    #[serde(default, rename = "num_removed_files")]
    removed_files: u64,
}

/// Reads back the metrics of the commit `table` was just advanced to. The commit file of that
/// exact version is read: with concurrent writers, "the latest commit" may be someone else's.
async fn committed(table: &deltalake::DeltaTable, name: &str) -> Result<Committed> {
    let version = table.version().unwrap_or_default();
    let entry = table.log_store().read_commit_entry(version).await.map_err(|source| Error::CommitInfo {
        table: name.to_owned(),
        version,
        source,
    })?;
    let metrics = entry
        .as_deref()
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .into_iter()
        .flat_map(str::lines)
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|mut action| {
            action.get_mut("commitInfo").and_then(|info| info.get_mut("operationMetrics")).map(serde_json::Value::take)
        })
        .and_then(|m| serde_json::from_value::<OperationMetrics>(m).ok())
        .unwrap_or_default();
    Ok(Committed {
        version,
        rows_written: metrics.added_rows,
        files_added: metrics.added_files,
        files_removed: metrics.removed_files,
    })
}
