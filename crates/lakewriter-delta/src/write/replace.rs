//! The writes that replace rows: a replaceWhere of a slice of a table ([`replace_where`]) and a
//! rebuild of the whole table ([`replace_all`]), each lakewriter's own write where it can be
//! ([`own_list`], [`own_new_table`]), else delta-rs's.

use std::sync::Arc;

use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, Expr};
use deltalake::operations::write::SchemaMode;
use deltalake::protocol::SaveMode;

use super::builder::{builder, evolving, refused, width};
use super::commit::{attempt, write_error};
use super::slice::{self, Slice};
use super::target::{Target, check_columns, check_schema};
use crate::state::Committed;
use crate::{Error, Result, nullability};

/// Commits `plan`'s rows as the whole content of the slice `predicate` selects: one commit that
/// removes the rows matching `predicate` and adds the new ones (Delta replaceWhere). Used by
/// `overwrite_partition` (`partition = date`) and `delete_insert` (any predicate). The first write
/// creates the table. A row outside the slice, or a schema that differs from the table's, fails
/// the write before anything is committed; `slice` describes the slice in that error.
pub async fn replace_where(
    session: &SessionState,
    target: Target<'_>,
    plan: LogicalPlan,
    predicate: Expr,
    slice: &str,
) -> Result<Committed> {
    let (checked, check) = (plan.clone(), predicate.clone());
    let outcome = match own_partitions(session, &target, &plan, &predicate).await? {
        Some((over, partitions)) => slice::write(session, &target, plan, over, &Slice::Partitions(partitions)).await,
        None => {
            attempt(&target, Some(width(&plan)), |table, props| async {
                let adds = check_schema(&table, plan.schema().as_arrow(), &target)?;
                let plan = match table.snapshot() {
                    Ok(snapshot) => {
                        nullability::nullable_where_read(plan, &snapshot.snapshot().arrow_schema(), &predicate)
                            .map_err(|source| Error::Plan { table: target.name.to_owned(), source: Box::new(source) })?
                    }
                    Err(_) => plan,
                };
                evolving(builder(table, session, plan, &target, false)?, adds)
                    .with_save_mode(SaveMode::Overwrite)
                    .with_replace_where(predicate)
                    .with_commit_properties(props)
                    .await
                    .map_err(|e| write_error(&target, e))
            })
            .await
        }
    };
    let error = match outcome {
        Err(error) => refused(session, &target, Some(checked.clone()), false, error).await,
        committed => return committed,
    };
    let Error::Invalid { table, partition, not_null } = error else { return Err(error) };
    Err(match rows_outside(session, checked, check).await {
        Ok(0) => Error::Invalid { table, partition, not_null },
        Ok(rows) => Error::OutsideSlice { table, rows, slice: slice.to_owned() },
        Err(e) => {
            tracing::debug!(error = %e, "cannot count the rows outside the slice");
            Error::Invalid { table, partition, not_null }
        }
    })
}

/// The file list of the table `target` names as of the version the run read, where lakewriter's
/// own write ([`slice::write`]) writes it: an existing table whose protocol lakewriter writes and
/// which asks for no check of delta-rs's. `None` for any other, which delta-rs's write makes.
pub(super) async fn own_list(target: &Target<'_>) -> Result<Option<Arc<crate::files::FileList>>> {
    let Some(read_version) = target.read_version else { return Ok(None) };
    let list = target.loaded.list_at(target.location, read_version).await?;
    Ok((!list.guarded && list.unsupported.is_empty()).then_some(list))
}

/// The new table lakewriter's own write creates for `plan`'s rows where the run found none
/// ([`slice::NewTable`]).
pub(super) async fn own_new_table(target: &Target<'_>, plan: &LogicalPlan) -> Result<Option<slice::NewTable>> {
    if target.read_version.is_some() {
        return Ok(None);
    }
    let written = nullability::as_written(plan.clone(), target.not_null, true)
        .map_err(|source| Error::Plan { table: target.name.to_owned(), source: Box::new(source) })?;
    slice::NewTable::of(target, written.schema().as_arrow()).await
}

/// The table and the partitions of a replaceWhere lakewriter writes itself: a `predicate` over
/// partition columns ([`slice::Partitions`]) of a table it creates ([`own_new_table`]) or of an
/// existing one ([`own_list`]) into which the result adds no column.
async fn own_partitions(
    session: &SessionState,
    target: &Target<'_>,
    plan: &LogicalPlan,
    predicate: &Expr,
) -> Result<Option<(slice::Over, slice::Partitions)>> {
    if let Some(new) = own_new_table(target, plan).await? {
        return Ok(slice::Partitions::of(session, predicate, new.shape()).map(|p| (slice::Over::New(new), p)));
    }
    let Some(list) = own_list(target).await? else { return Ok(None) };
    let Some(partitions) = slice::Partitions::of(session, predicate, &list.shape) else { return Ok(None) };
    if check_columns(&list.shape.schema, plan.schema().as_arrow(), target)? {
        return Ok(None);
    }
    Ok(Some((slice::Over::Table(list), partitions)))
}

/// Rows of `plan` that `predicate` does not select (false or NULL): what tells a row outside a
/// replaceWhere slice from another row the table refuses, which delta-rs reports alike. Computed
/// again, on the failure path only.
async fn rows_outside(session: &SessionState, plan: LogicalPlan, predicate: Expr) -> datafusion::error::Result<usize> {
    let outside = datafusion::prelude::not(predicate.clone()).or(predicate.is_null());
    DataFrame::new(session.clone(), plan).filter(outside)?.count().await
}

/// Replaces the whole table — rows, schema and partitioning — with `plan`'s rows (`rebuild`).
///
/// The commit is never rebased: a write without a predicate reads no file Delta's conflict checks
/// look at, so delta-rs would rebase it over a compaction made since `target.read_version` and
/// leave the compacted file, rows the rebuild replaces, beside its own. Any commit since is a
/// conflict, and the run is made again (a rebuild's table has no other writer to lose to).
pub async fn replace_all(session: &SessionState, target: Target<'_>, plan: LogicalPlan) -> Result<Committed> {
    let checked = plan.clone();
    let outcome = match own_rebuild(&target, &plan).await? {
        Some(over) => slice::write(session, &target, plan, over, &Slice::Table).await,
        None => {
            attempt(&target, Some(width(&plan)), |table, props| async {
                builder(table, session, plan, &target, true)?
                    .with_save_mode(SaveMode::Overwrite)
                    .with_schema_mode(SchemaMode::Overwrite)
                    .with_commit_properties(props.with_max_retries(0))
                    .await
                    .map_err(|e| write_error(&target, e))
            })
            .await
        }
    };
    match outcome {
        Err(error) => Err(refused(session, &target, Some(checked), true, error).await),
        committed => committed,
    }
}

/// The table of a rebuild lakewriter writes itself: one it creates ([`own_new_table`]), or an
/// existing one ([`own_list`]) whose columns it leaves as they are — the same names in the same
/// order, each stored as before, NOT NULL where the job declares it and only there — and whose
/// partition columns it keeps.
async fn own_rebuild(target: &Target<'_>, plan: &LogicalPlan) -> Result<Option<slice::Over>> {
    if let Some(new) = own_new_table(target, plan).await? {
        return Ok(Some(slice::Over::New(new)));
    }
    let Some(list) = own_list(target).await? else { return Ok(None) };
    let (table, result) = (&list.shape.schema, plan.schema().as_arrow());
    let same = list.shape.partition_columns == target.partition_columns
        && table.fields().len() == result.fields().len()
        && table
            .fields()
            .iter()
            .zip(result.fields())
            .all(|(t, r)| t.name() == r.name() && t.is_nullable() != target.not_null.contains(t.name()))
        && crate::schema::column_differences(table, result).is_empty();
    Ok(same.then_some(slice::Over::Table(list)))
}
