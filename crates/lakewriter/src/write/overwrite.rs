//! `overwrite_partition`, and a job written as `INSERT OVERWRITE t PARTITION (c = $dt) …`:
//! replace the partition `column = $dt` (Delta's replaceWhere) with the result, whose rows must
//! all be in it.

use datafusion::arrow::datatypes::Schema;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::Expr;
use lakewriter_compute::statement::Insert;
use lakewriter_core::WriteMode;

use super::{Attempt, Mode, Replaces};
use crate::RunError;

#[derive(Debug)]
pub(crate) struct Overwrite {
    /// The partition column.
    pub column: String,
    /// A job written as `INSERT OVERWRITE`: its statement, whose query is laid out onto the table.
    pub insert: Option<Insert>,
}

#[async_trait::async_trait(?Send)]
impl Mode for Overwrite {
    fn mode(&self) -> WriteMode {
        WriteMode::OverwritePartition
    }

    fn replaces(&self) -> Replaces {
        Replaces::Slice
    }

    fn replaces_the_day(&self) -> bool {
        true
    }

    async fn slice(&self, attempt: &Attempt<'_>, _schema: &Schema) -> Result<(Expr, String), RunError> {
        let Some(dt) = attempt.run.unit.dt else { return Err(attempt.no_date()) };
        let column = &self.column;
        Ok((lakewriter_compute::partition_predicate(column, dt), format!("rows whose `{column}` is not {dt}")))
    }

    async fn lay_out(&self, attempt: &Attempt<'_>, plan: LogicalPlan) -> Result<LogicalPlan, RunError> {
        match &self.insert {
            Some(insert) => attempt.insert_laid_out(insert, plan).await,
            None => Ok(plan),
        }
    }
}
