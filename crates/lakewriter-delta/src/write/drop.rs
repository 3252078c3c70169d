//! Dropping columns from a table without column mapping, as a whole-table backfill under
//! `sync_all_columns` does once every partition was rewritten without them: a commit of one
//! metadata action, made only where no row holds a value of them.

use std::collections::BTreeMap;

use datafusion::execution::SessionState;
use datafusion::prelude::SessionContext;
use deltalake::kernel::transaction::CommitProperties;
use lakewriter_core::PartitionKey;

use super::record::{commit_actions, metadata_with};
use super::target::Target;
use crate::state::Committed;
use crate::{Error, Result, nullability, state};

/// Drops `columns` from the table at `target.location`, as of `target.read_version`, in one commit
/// not rebased over any other (a commit since the read fails it as a conflict). Delta without
/// column mapping reads a data file's columns by name, so a dropped column's values would stay
/// in the files and come back with a column added again under its name: each column is counted
/// first, and one that any row holds a value of is refused, naming how many. The commit carries
/// the new column count of each of `partitions` (`(partition, columns it was written with)`, so
/// that it still lacks what it lacked), and the table's id, name and settings stay. A partition
/// column is never dropped.
pub async fn drop_columns(
    session: &SessionState,
    target: Target<'_>,
    columns: &[String],
    partitions: &BTreeMap<PartitionKey, usize>,
) -> Result<Committed> {
    let url = target.location.url();
    let open_err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let Some(read_version) = target.read_version else { return Err(Error::NotATable { url: url.clone() }) };
    let (table, _) = target.loaded.table_at(target.location, read_version).await?;
    crate::protocol::check(&table, target.name)?;
    let snapshot = table.snapshot().map_err(open_err)?;
    let schema = snapshot.snapshot().arrow_schema();
    let invalid = |e: String| Error::SchemaMismatch { table: target.name.to_owned(), differences: vec![e] };
    if let Some(c) = columns.iter().find(|c| snapshot.metadata().partition_columns().contains(c)) {
        return Err(invalid(format!("`{c}` is the table's partition column: it is never dropped")));
    }
    let dropped: Vec<usize> = columns.iter().filter_map(|c| schema.index_of(c).ok()).collect();
    let values = holding_values(session, &table, target, columns).await?;
    if !values.is_empty() {
        return Err(Error::ColumnHoldsValues { table: target.name.to_owned(), values });
    }
    let kept: Vec<_> = schema.fields().iter().filter(|f| !columns.contains(f.name())).cloned().collect();
    let metadata = metadata_with(snapshot, kept, target.name)?;
    let now = chrono::Utc::now();
    let job = &target.metadata.job;
    let txns = partitions.iter().map(|(partition, &written)| {
        let before = dropped.iter().filter(|&&i| i < written).count();
        state::columns_txn(job, partition, written - before, now)
    });
    let info = serde_json::json!({
        "job": job,
        "write": "drop_columns",
        "dropped": columns,
        "lakewriter_version": lakewriter_core::VERSION,
        "run_id": target.metadata.run_id,
    });
    let props = CommitProperties::default()
        .with_metadata([("lakewriter".to_owned(), info)])
        .with_max_retries(0)
        .with_create_checkpoint(false)
        .with_cleanup_expired_logs(Some(false));
    let props = txns.fold(props, CommitProperties::with_application_transaction);
    commit_actions(&target, table, read_version, props, vec![metadata]).await
}

/// The rows of `table` holding a value of each of `columns` it has: `(column, rows)` for each
/// with any.
async fn holding_values(
    session: &SessionState,
    table: &deltalake::DeltaTable,
    target: Target<'_>,
    columns: &[String],
) -> Result<Vec<(String, u64)>> {
    let provider = crate::table::provider_of(target.location, table).await?;
    let read = |source| Error::Read { url: target.location.url().clone(), source: Box::new(source) };
    let plan = SessionContext::new_with_state(session.clone()).read_table(provider).map_err(read)?;
    let (_, values) = nullability::value_counts(session, plan.into_unoptimized_plan(), columns).await.map_err(read)?;
    Ok(values.into_iter().filter(|(_, rows)| *rows > 0).collect())
}
