//! A job written as `MERGE INTO t USING … ON … WHEN …`: the statement run as written into the
//! table at the version the run read, its source planned as the job's query; the columns it adds
//! under the job's `on_schema_change` are its clauses' (see `crate::sql::column_changes`). Its checks would
//! see the source, not the rows it writes, and delta-rs merges only by committing: it has
//! neither checks nor a dry run.

use datafusion::arrow::datatypes::Schema;
use lakewriter_compute::statement::Merge;
use lakewriter_core::{CheckKind, WriteMode};
use lakewriter_delta::{Committed, Target};

use super::{Attempt, Computed, Mode};

use crate::sql::column_changes;
use crate::{PartitionReport, RunError};

#[derive(Debug)]
pub(crate) struct MergeInto {
    pub merge: Merge,
}

#[async_trait::async_trait(?Send)]
impl Mode for MergeInto {
    fn mode(&self) -> WriteMode {
        WriteMode::Merge
    }

    fn commits_side_by_side(&self) -> bool {
        false
    }

    fn depends_on_order(&self) -> bool {
        true
    }

    fn refuses(&self, check: &CheckKind) -> Option<String> {
        super::mode::refuses_comparison(check, "a job written as MERGE INTO")
    }

    fn refuses_dry_run(&self) -> Option<&'static str> {
        Some("a dry run of a job written as MERGE INTO is not supported: delta-rs merges only by committing")
    }

    fn result_is_rows(&self) -> bool {
        false
    }

    async fn commit(
        &self,
        attempt: &Attempt<'_>,
        target: Target<'_>,
        computed: Computed,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let source = datafusion::prelude::DataFrame::new(attempt.lake.ctx.state(), attempt.rows_plan(computed)?);
        let shape = attempt.lake.loaded.shape(target.location, target.read_version).await?;
        let schema = source.schema().as_arrow().clone();
        let policy = attempt.run.job.spec.on_schema_change;
        let changes =
            shape.as_ref().map(|s| column_changes(&self.merge, &s.schema, &schema, policy)).unwrap_or_default();
        let target = Target { adds_columns: !changes.added.is_empty(), ..target };
        let (committed, counts) = attempt
            .lake
            .merge_statement(&self.merge, target, shape.as_ref(), source, attempt.run.unit.dt, &changes)
            .await
            .map_err(RunError::of)?;
        report.changes = Some(crate::Changes::Merge(counts));
        report.columns_changed(&changes, policy);
        if committed.is_some() {
            return Ok(committed);
        }
        let Some(shape) = shape else { return attempt.record_state_alone(target, &schema, report).await };
        // A merge that changes no row still adds its columns, with the partition's state.
        let added = schema.fields().iter().filter(|f| changes.added.iter().any(|c| c.column == *f.name()));
        let fields: Vec<_> = shape.schema.fields().iter().chain(added).cloned().collect();
        attempt.record_state_alone(target, &Schema::new(fields), report).await
    }
}
