//! An append once per (job, partition) ([`append_once`]): lakewriter's own write where it can be,
//! else delta-rs's, and an append found made before.

use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use deltalake::protocol::SaveMode;

use super::builder::{builder, evolving, refused, width};
use super::commit::{attempt_or_skip, transaction_version, write_error};
use super::replace::{own_list, own_new_table};
use super::slice::{self, Slice};
use super::target::{Target, check_columns, check_schema};
use crate::Result;
use crate::state::{self, Committed};

/// The outcome of an `append` that may have been committed before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendOutcome {
    Committed(Committed),
    /// This (job, partition) was appended before; the table is at `version`.
    AlreadyCommitted {
        version: u64,
    },
}

/// Appends `plan`'s rows once per (job, partition): a second call appends nothing, unless `force`,
/// which appends again. The partition state every commit records (see [`crate::state`]) is what
/// marks a partition appended, under any name of its day (see `PartitionKey`); it is read from the
/// log as it is before the write, and for delta-rs's write (where a column is added or the table
/// is guarded) again from the snapshot the write goes over. Concurrent appends of one partition
/// write the same application transaction, which Delta refuses for all but one of them.
pub async fn append_once(
    session: &SessionState,
    target: Target<'_>,
    plan: LogicalPlan,
    force: bool,
) -> Result<AppendOutcome> {
    let over = if let Some(new) = own_new_table(&target, &plan).await? {
        slice::Over::New(new)
    } else if let Some(list) = own_list(&target).await? {
        if !force && let Some(version) = appended(&target).await? {
            return Ok(AppendOutcome::AlreadyCommitted { version });
        }
        if check_columns(&list.shape.schema, plan.schema().as_arrow(), &target)? {
            return append_with_delta_rs(session, target, plan, force).await;
        }
        slice::Over::Table(list)
    } else {
        if !force && let Some(version) = appended(&target).await? {
            return Ok(AppendOutcome::AlreadyCommitted { version });
        }
        return append_with_delta_rs(session, target, plan, force).await;
    };
    let checked = plan.clone();
    match slice::write(session, &target, plan, over, &Slice::Nothing).await {
        Ok(committed) => Ok(AppendOutcome::Committed(committed)),
        Err(error) => Err(refused(session, &target, Some(checked), false, error).await),
    }
}

/// [`append_once`] by delta-rs's write, once [`appended`] found the partition not appended (under
/// any name of its day, see `PartitionKey`): the snapshot each attempt writes over is asked again,
/// for this run's name of it, since a concurrent append commits under that name.
async fn append_with_delta_rs(
    session: &SessionState,
    target: Target<'_>,
    plan: LogicalPlan,
    force: bool,
) -> Result<AppendOutcome> {
    let checked = plan.clone();
    let marker = state::written_marker(&target.metadata.job, &target.metadata.partition);
    let mut already = None;
    let committed = attempt_or_skip(&target, Some(width(&plan)), |table, props| async {
        if let (Some(version), false) = (table.version(), force)
            && transaction_version(&table, &marker, target.location).await?.is_some()
        {
            already = Some(AppendOutcome::AlreadyCommitted { version });
            return Ok(None);
        }
        let adds = check_schema(&table, plan.schema().as_arrow(), &target)?;
        evolving(builder(table, session, plan, &target, false)?, adds)
            .with_save_mode(SaveMode::Append)
            .with_commit_properties(props)
            .await
            .map(Some)
            .map_err(|e| write_error(&target, e))
    })
    .await;
    match (already, committed) {
        (Some(outcome), _) => Ok(outcome),
        (None, Err(error)) => Err(refused(session, &target, Some(checked), false, error).await),
        (None, Ok(committed)) => Ok(AppendOutcome::Committed(committed.expect("an append not skipped has committed"))),
    }
}

/// The table's version where its partition state records `target`'s partition written: an append
/// made before, by a run this one did not see (one that committed after this run read the state).
/// Read from the log as it is now; a commit that wins a version after this read is checked by
/// the commit itself (see [`own::commit`]).
async fn appended(target: &Target<'_>) -> Result<Option<u64>> {
    let state = state::read(target.location, &target.metadata.job, state::LogScope::FromLastCheckpoint).await?;
    Ok(state.filter(|s| s.partitions.contains_key(&target.metadata.partition)).map(|s| s.version))
}
