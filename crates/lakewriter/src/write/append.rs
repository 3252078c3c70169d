//! `append`, and a job written as `INSERT INTO t [PARTITION (c = $dt)] …`: append the result
//! once per partition, guarded by a Delta application transaction; `--force` appends again.

use datafusion::logical_expr::LogicalPlan;
use lakewriter_compute::statement::Insert;
use lakewriter_core::{CheckKind, WriteMode};
use lakewriter_delta::{AppendOutcome, Committed, Target};

use super::{Attempt, Computed, Mode};
use crate::{Note, PartitionReport, RunError};

#[derive(Debug)]
pub(crate) struct Append {
    /// A job written as `INSERT INTO`: its statement, whose query is laid out onto the table.
    pub insert: Option<Insert>,
}

#[async_trait::async_trait(?Send)]
impl Mode for Append {
    fn mode(&self) -> WriteMode {
        WriteMode::Append
    }

    fn refuses(&self, check: &CheckKind) -> Option<String> {
        let what =
            if self.insert.is_some() { "a job written as INSERT INTO (an append)" } else { "write = \"append\"" };
        super::mode::refuses_comparison(check, what)
    }

    fn forceable(&self) -> bool {
        true
    }

    async fn lay_out(&self, attempt: &Attempt<'_>, plan: LogicalPlan) -> Result<LogicalPlan, RunError> {
        match &self.insert {
            Some(insert) => attempt.insert_laid_out(insert, plan).await,
            None => Ok(plan),
        }
    }

    fn already_written(&self, attempt: &Attempt<'_>) -> Option<u64> {
        // Appended before: the state the write would find.
        attempt.read_version.filter(|_| attempt.previous.is_some() && !attempt.run.unit.force)
    }

    async fn commit(
        &self,
        attempt: &Attempt<'_>,
        target: Target<'_>,
        computed: Computed,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let plan = attempt.rows_plan(computed)?;
        let state = attempt.lake.ctx.state();
        let force = attempt.run.unit.force;
        match lakewriter_delta::append_once(&state, target, plan, force).await? {
            AppendOutcome::AlreadyCommitted { version } => {
                report.skipped(version);
                Ok(None)
            }
            AppendOutcome::Committed(committed) => {
                if force && attempt.previous.is_some() {
                    report.note = Some(Note::AppendedAgain);
                }
                Ok(Some(committed))
            }
        }
    }
}
