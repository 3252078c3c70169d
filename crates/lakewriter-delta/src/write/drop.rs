//! Dropping columns from a table without column mapping, as a whole-table backfill under
//! `sync_all_columns` does once every partition was rewritten without them: a commit of one
//! metadata action, made only where no row holds a value of them.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::execution::SessionState;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::prelude::{DataFrame, Expr, SessionContext};
use deltalake::kernel::transaction::{CommitBuilder, CommitProperties};
use deltalake::protocol::{DeltaOperation, SaveMode};
use lakewriter_core::PartitionKey;

use super::commit::{finish, write_error};
use super::{Committed, Target};
use crate::{Error, Result, state};

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
    use deltalake::kernel::MetadataExt;
    use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
    let url = target.location.url();
    let open_err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let Some(read_version) = target.read_version else { return Err(Error::NotATable { url: url.clone() }) };
    let (mut table, _) = target.loaded.table_at(target.location, read_version).await?;
    crate::protocol::check(&table, target.name)?;
    let snapshot = table.snapshot().map_err(open_err)?;
    let schema = snapshot.snapshot().arrow_schema();
    let invalid = |e: String| Error::SchemaMismatch { table: target.name.to_owned(), differences: vec![e] };
    if let Some(c) = columns.iter().find(|c| snapshot.metadata().partition_columns().contains(c)) {
        return Err(invalid(format!("`{c}` is the table's partition column: it is never dropped")));
    }
    let dropped: Vec<usize> = columns.iter().filter_map(|c| schema.index_of(c).ok()).collect();
    let values = value_counts(session, &table, target, columns).await?;
    if !values.is_empty() {
        return Err(Error::ColumnHoldsValues { table: target.name.to_owned(), values });
    }
    let kept: Vec<_> = schema.fields().iter().filter(|f| !columns.contains(f.name())).cloned().collect();
    let kept: deltalake::kernel::StructType =
        (&datafusion::arrow::datatypes::Schema::new(kept)).try_into_kernel().map_err(|e| invalid(e.to_string()))?;
    let metadata = snapshot.metadata().clone().with_schema(&kept).map_err(|e| invalid(e.to_string()))?;
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
    let operation = DeltaOperation::Write { mode: SaveMode::Append, partition_by: None, predicate: None };
    let commit = CommitBuilder::from(props).with_actions(vec![deltalake::kernel::Action::Metadata(metadata)]);
    let outcome = match commit.build(Some(snapshot), table.log_store(), operation).await {
        Ok(commit) => table.load_version(commit.version()).await.map(|()| table).map_err(open_err),
        Err(e) => Err(write_error(&target, e)),
    };
    finish(&target, Some(read_version), outcome).await
}

/// The rows of `table` holding a value of each of `columns` it has: `(column, rows)` for each
/// with any. One aggregate.
async fn value_counts(
    session: &SessionState,
    table: &deltalake::DeltaTable,
    target: Target<'_>,
    columns: &[String],
) -> Result<Vec<(String, u64)>> {
    let provider = crate::table::provider_of(target.location, table).await?;
    let read = |source| Error::Read { url: target.location.url().clone(), source: Box::new(source) };
    let present: Vec<&String> = columns.iter().filter(|c| provider.schema().index_of(c).is_ok()).collect();
    if present.is_empty() {
        return Ok(Vec::new());
    }
    let counts: Vec<Expr> = present
        .iter()
        .enumerate()
        .map(|(i, c)| {
            count(Expr::Column(datafusion::common::Column::new_unqualified(c.as_str()))).alias(format!("c{i}"))
        })
        .collect();
    let context = SessionContext::new_with_state(session.clone());
    let batches = context
        .read_table(Arc::clone(&provider))
        .and_then(|df| df.aggregate(vec![], counts))
        .map(DataFrame::collect)
        .map_err(read)?
        .await
        .map_err(read)?;
    let Some(batch) = batches.first().filter(|b| b.num_rows() == 1) else { return Ok(Vec::new()) };
    let mut values = Vec::new();
    for (i, name) in present.into_iter().enumerate() {
        let array = datafusion::arrow::compute::cast(batch.column(i), &datafusion::arrow::datatypes::DataType::UInt64)
            .map_err(|e| read(e.into()))?;
        let rows = datafusion::arrow::array::AsArray::as_primitive::<datafusion::arrow::datatypes::UInt64Type>(&array)
            .value(0);
        if rows > 0 {
            values.push((name.clone(), rows));
        }
    }
    Ok(values)
}
