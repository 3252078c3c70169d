//! `merge` and `append_dedup`: a deduplicated source merged on its key — into an existing table
//! by lakewriter in one scan of it ([`merge_in_one_scan`], module `scan`), or by delta-rs's MERGE
//! after the runner classified the source ([`merge`]): a table to create, a source with columns
//! the table lacks, a table that asks for checks of delta-rs's.

mod file_scan;
mod prune;
mod rewrite;
mod scan;
mod source;
mod spec;

use std::sync::Arc;

use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, Expr};
use deltalake::protocol::SaveMode;

use super::added::Arm;
use super::builder::{builder, column, refused};
use super::commit::{attempt, write_error};
use super::target::{Target, check_columns, check_schema};
use crate::Result;
use crate::state::Committed;

pub use rewrite::RowCounts;
pub use scan::Scanned;
pub use spec::MergeSpec;
use spec::{on, qualified};

/// The rows of a table the merge creates: the source's, sorted by `cluster_by` where it names
/// columns.
fn created(source: &DataFrame, cluster_by: &[String]) -> datafusion::error::Result<LogicalPlan> {
    if cluster_by.is_empty() {
        return Ok(source.logical_plan().clone());
    }
    Ok(source.clone().sort(crate::ranges::sort_order(cluster_by))?.logical_plan().clone())
}

/// `source` for a merge that adds columns to `table`: each added column as the merge writes it in
/// the row of its key (see `added`) — the source's value where it inserts, replaces or fills the
/// row, NULL in a row it leaves as it was.
async fn gated(
    session: &SessionState,
    target: &Target<'_>,
    table: &deltalake::DeltaTable,
    source: DataFrame,
    spec: &MergeSpec<'_>,
    columns: &[String],
    on: &Expr,
) -> Result<DataFrame> {
    let err = |e: datafusion::error::DataFusionError| write_error(target, e.into());
    let schema = table.snapshot().map_err(|e| write_error(target, e))?.snapshot().arrow_schema();
    let provider = crate::table::provider_of(target.location, table).await?;
    let from_source = |columns: &mut dyn Iterator<Item = &String>| -> Vec<(String, Expr)> {
        columns.map(|c| (c.clone(), qualified("s", c))).collect()
    };
    let replaced = from_source(&mut columns.iter());
    let newer = spec.newer_by.map(|n| qualified("s", n).gt(qualified("t", n)));
    let filled = spec.fill.map(|(condition, columns)| (condition, from_source(&mut columns.iter())));
    let inserted = from_source(&mut columns.iter());
    let mut arms = Vec::new();
    if let Some(newer) = &newer {
        arms.push(Arm { matched: true, predicate: Some(newer), set: &replaced });
    }
    if let Some((condition, set)) = &filled {
        arms.push(Arm { matched: true, predicate: Some(*condition), set });
    }
    arms.push(Arm { matched: false, predicate: None, set: &inserted });
    super::added::gated(session, source, provider, &schema, ("s", "t"), on, &arms).await.map_err(err)
}

/// Merges `source` (one row per key) into the existing table of `target`, as [`merge`] does, in
/// one scan of the table that also classifies the source: its counts come from that scan. `None`
/// where lakewriter does not make this write itself, and [`merge`] makes it: there is no table yet,
/// the source has columns the table lacks, or the table asks for checks lakewriter's own do not
/// make (see `FileList::guarded`) or for features it does not write with.
pub async fn merge_in_one_scan(
    session: &SessionState,
    target: Target<'_>,
    source: DataFrame,
    spec: MergeSpec<'_>,
) -> Result<Option<Scanned>> {
    let Some(read_version) = target.read_version else { return Ok(None) };
    let list = target.loaded.list_at(target.location, read_version).await?;
    if list.guarded || !list.unsupported.is_empty() {
        return Ok(None);
    }
    if check_columns(&list.shape.schema, source.schema().as_arrow(), &target)? {
        return Ok(None);
    }
    let checked = source.logical_plan().clone();
    match scan::merge(session, &target, source, &spec, list).await {
        Err(error) => Err(refused(session, &target, Some(checked), false, error).await),
        Ok(scanned) => Ok(Some(scanned)),
    }
}

/// Merges `source` (one row per key) into the table in one commit: rows of new keys are
/// inserted; with `newer_by`, an existing row is replaced by the source row only where the
/// source's `newer_by` is strictly greater; with `fill`, an existing row it does not replace has
/// the fill's columns set from the source row where the fill's condition holds. A table that does not exist yet is created with the
/// source's rows. The caller skips sources that change nothing (delta-rs would commit nothing).
///
/// The source was classified against `target.read_version`, the version the merge reads; the
/// commit is never rebased over another (Delta cannot see the classification's read), so any
/// commit since that version fails it as a conflict and the run is made again.
///
/// A source with columns the table lacks, where the target [adds columns](Target::adds_columns),
/// merges with delta-rs's schema merge: the columns are added at the end, nullable, in the merge's
/// commit, set in the rows it inserts, replaces or fills and NULL in a row of its keys it leaves as
/// it was (`gated`). delta-rs writes that commit's metadata whole, with a new table id (its `new_metadata`):
/// readers that track a table by its id (a Spark stream) see a new table.
pub async fn merge(
    session: &SessionState,
    target: Target<'_>,
    source: DataFrame,
    spec: MergeSpec<'_>,
) -> Result<Committed> {
    let columns: Vec<String> = source.schema().fields().iter().map(|f| f.name().clone()).collect();
    let checked = source.logical_plan().clone();
    let outcome = attempt(&target, Some(columns.len()), |table, props| async {
        let props = props.with_max_retries(0);
        let adds = check_schema(&table, source.schema().as_arrow(), &target)?;
        if table.version().is_none() {
            // Creating the table with the source's rows is only right if nobody else created it
            // meanwhile: a create is never retried (see `properties`), so a lost race runs the
            // whole merge again, against the winner's rows.
            let plan = created(&source, spec.cluster_by).map_err(|e| write_error(&target, e.into()))?;
            let mut create = builder(table, session, plan, &target, false)?.with_save_mode(SaveMode::Append);
            if let Some(size) = spec.target_file_size {
                create = create
                    .with_target_file_size(std::num::NonZeroU64::new(size))
                    .with_configuration([("delta.targetFileSize", Some(size.to_string()))]);
            }
            return create.with_commit_properties(props).await.map_err(|e| write_error(&target, e));
        }
        let on = on(&spec, source.schema().as_arrow());
        let err = |e| write_error(&target, e);
        let source = if adds { gated(session, &target, &table, source, &spec, &columns, &on).await? } else { source };
        let mut merge = table
            .merge(source, on)
            .with_source_alias("s")
            .with_target_alias("t")
            .with_session_state(Arc::new(session.clone()))
            .with_merge_schema(adds)
            .with_commit_properties(props);
        if let Some(newer_by) = spec.newer_by {
            merge = merge
                .when_matched_update(|update| {
                    let newer = qualified("s", newer_by).gt(qualified("t", newer_by));
                    columns.iter().fold(update.predicate(newer), |u, c| u.update(column(c), qualified("s", c)))
                })
                .map_err(err)?;
        }
        if let Some((condition, columns)) = spec.fill {
            merge = merge
                .when_matched_update(|update| {
                    let update = update.predicate(condition.clone());
                    columns.iter().fold(update, |u, c| u.update(column(c), qualified("s", c)))
                })
                .map_err(err)?;
        }
        let merge = merge
            .when_not_matched_insert(|insert| columns.iter().fold(insert, |i, c| i.set(column(c), qualified("s", c))))
            .map_err(err)?;
        let (table, _metrics) = merge.await.map_err(err)?;
        Ok(table)
    })
    .await;
    match outcome {
        Err(error) => Err(refused(session, &target, Some(checked), false, error).await),
        committed => committed,
    }
}
