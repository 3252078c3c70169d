//! The [`Mode`] trait: what a write mode allows, and its part of each run.

use std::fmt;

use datafusion::arrow::datatypes::Schema;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, Expr};
use lakewriter_compute::LintScope;
use lakewriter_core::{CheckKind, DedupWindow, JobSpec, WriteMode};
use lakewriter_delta::schema::Difference;
use lakewriter_delta::{Committed, Target};

use super::attempt::Attempt;
use super::computed::{Computed, Replaces};
use crate::{DryRun, PartitionReport, RunError};

/// A write mode: what it allows, and its part of each run. Every method but [`Mode::mode`] has the
/// behaviour most modes share; a mode that adds rows or changes them by key has its own
/// [`Mode::commit`].
#[async_trait::async_trait(?Send)]
pub(crate) trait Mode: fmt::Debug + Send + Sync {
    /// The mode the job's runs make (a statement's: the mode it maps onto).
    fn mode(&self) -> WriteMode;

    /// Why a job of this mode cannot have `check`, where it cannot (a usage error at load).
    fn refuses(&self, _check: &CheckKind) -> Option<String> {
        None
    }

    /// Whether its runs are for a date (all but `rebuild`).
    fn dated(&self) -> bool {
        true
    }

    /// Whether `--force` applies: an `append` runs once per partition, and `--force` runs it
    /// again.
    fn forceable(&self) -> bool {
        false
    }

    /// Whether runs of several partitions commit side by side, or would only conflict with each
    /// other (they read and rewrite the same rows).
    fn commits_side_by_side(&self) -> bool {
        true
    }

    /// Whether a run fills in the rows it keeps from what the partition's last write lacked (a
    /// keyed write, see `keyed::Keyed::fill`): it then needs the partition's state as of the
    /// version it writes over, not as a backfill read it before its first day.
    fn fills_in(&self) -> bool {
        false
    }

    /// Whether the table may depend on the order its partitions were written in: a keyed write
    /// (a merge, an append deduplicated by key) keeps rows across partitions. `lakewriter test`
    /// replays such a job's dates out of order (`order_independent`).
    fn depends_on_order(&self) -> bool {
        false
    }

    /// Why a dry run of it cannot be made, where it cannot.
    fn refuses_dry_run(&self) -> Option<&'static str> {
        None
    }

    /// Whether its computed result is the rows it writes (a `MERGE INTO`'s is its source): the
    /// checks and the NOT NULL refusal look at the result only where it is.
    fn result_is_rows(&self) -> bool {
        true
    }

    /// The column of its result that marks deleted keys (a merge's `_deleted`, with
    /// `delete_when`): written into the table whatever `on_schema_change` says.
    fn tombstone(&self) -> Option<&'static str> {
        None
    }

    /// A difference between its result's columns and the table's, said for `job`.
    fn explain(&self, _job: &JobSpec, difference: &Difference) -> String {
        difference.to_string()
    }

    /// Whether its write replaces the partition of the run's date (the table partition
    /// `column = $dt`), which then names the run's partition.
    fn replaces_the_day(&self) -> bool {
        false
    }

    /// An `append_dedup`'s key and `dedup_window`.
    fn dedup_window(&self) -> Option<(&[String], &DedupWindow)> {
        None
    }

    /// The lint rules that apply to a job of this mode partitioned by `partition_by` (see
    /// [`lakewriter_compute::lint`]): asked of the mode, never of how the job is written.
    fn lint_scope<'a>(&'a self, partition_by: Option<&'a str>) -> LintScope<'a> {
        LintScope {
            reads_all_history: self.replaces() == Replaces::Table,
            day_partition: partition_by.filter(|_| self.replaces_the_day()),
            dedup: self.dedup_window(),
        }
    }

    /// The rows its write replaces.
    fn replaces(&self) -> Replaces {
        Replaces::Nothing
    }

    /// The slice its write replaces, where it [`Replaces::Slice`], as a filter over `schema` (the
    /// table's columns, or on a first write the result's), and the rows outside it in words; for
    /// the other modes, every row.
    async fn slice(&self, _attempt: &Attempt<'_>, _schema: &Schema) -> Result<(Expr, String), RunError> {
        Ok((datafusion::prelude::lit(true), "no rows".into()))
    }

    /// The planned rows laid out as the table's columns: an `INSERT`'s query onto the table.
    async fn lay_out(&self, _attempt: &Attempt<'_>, plan: LogicalPlan) -> Result<LogicalPlan, RunError> {
        Ok(plan)
    }

    /// The version at which the partition's write is already made, where a run has nothing to
    /// compute (an `append` appended before).
    fn already_written(&self, _attempt: &Attempt<'_>) -> Option<u64> {
        None
    }

    /// Computes the result as the write needs it (see [`Attempt::compute_rows`]).
    async fn compute(&self, attempt: &Attempt<'_>, plan: LogicalPlan) -> Result<Computed, RunError> {
        attempt.compute_rows(plan).await
    }

    /// What committing `computed` would change, against the rows it replaces (`replaced`).
    async fn preview(
        &self,
        attempt: &Attempt<'_>,
        computed: Computed,
        replaced: Option<DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<DryRun, RunError> {
        attempt.preview_rows(computed, replaced, report).await
    }

    /// Commits `computed` over the version the attempt read: `None` where it committed nothing
    /// (the report says why). A mode that replaces a slice replaces it with the result, whose rows
    /// must all be in it (Delta's replaceWhere); one that replaces the table replaces it whole,
    /// its columns included.
    async fn commit(
        &self,
        attempt: &Attempt<'_>,
        target: Target<'_>,
        computed: Computed,
        _report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let plan = attempt.rows_plan(computed)?;
        let state = attempt.lake.ctx.state();
        let committed = match self.replaces() {
            Replaces::Slice => {
                let (predicate, outside) = self.slice(attempt, plan.schema().as_arrow()).await?;
                lakewriter_delta::replace_where(&state, target, plan, predicate, &outside).await?
            }
            Replaces::Table => lakewriter_delta::replace_all(&state, target, plan).await?,
            Replaces::Nothing => {
                let mode = self.mode();
                return Err(RunError::Setup(crate::Error::Usage(format!(
                    "write = \"{mode}\" has no commit of its own"
                ))));
            }
        };
        Ok(Some(committed))
    }
}

/// The refusal of a check that compares a result with the rows it replaces, by a mode that
/// replaces none.
pub(super) fn refuses_comparison(check: &CheckKind, what: &str) -> Option<String> {
    matches!(check, CheckKind::ChangeVsPrevious { .. }).then(|| {
        format!(
            "checks.change_vs_previous is not available for {what}: it compares a result with the rows it replaces, and this mode replaces none (a merge or an append changes rows by key or adds them)"
        )
    })
}
