//! `delete_insert`: delete the rows matching `predicate` (SQL over the table's columns, `$dt`
//! bound to the run's date) and insert the result, whose rows must all match it — one commit.

use datafusion::arrow::datatypes::Schema;
use datafusion::prelude::Expr;
use lakewriter_core::WriteMode;

use super::{Attempt, Mode, Replaces};
use crate::RunError;

#[derive(Debug)]
pub(crate) struct DeleteInsert {
    pub predicate: String,
}

#[async_trait::async_trait(?Send)]
impl Mode for DeleteInsert {
    fn mode(&self) -> WriteMode {
        WriteMode::DeleteInsert
    }

    fn commits_side_by_side(&self) -> bool {
        false
    }

    fn replaces(&self) -> Replaces {
        Replaces::Slice
    }

    async fn slice(&self, attempt: &Attempt<'_>, schema: &Schema) -> Result<(Expr, String), RunError> {
        let Some(dt) = attempt.run.unit.dt else { return Err(attempt.no_date()) };
        let columns = attempt.columns().await?;
        let schema = columns.as_deref().unwrap_or(schema);
        let predicate = &self.predicate;
        let semantics = attempt.run.job.spec.semantics;
        let condition = lakewriter_compute::condition(attempt.lake.ctx, semantics, predicate, schema, Some(dt))?;
        Ok((condition, format!("rows that do not satisfy the predicate `{predicate}` ($dt = {dt})")))
    }
}
