//! A job's `on_schema_change` in its runs: the result laid onto the table's columns before it is
//! computed (see `lakewriter_delta::schema::lay_out`), and what that does to the table, in the
//! partition's report.

use datafusion::logical_expr::LogicalPlan;
use lakewriter_core::WriteSpec;
use lakewriter_delta::schema::{ColumnChanges, SchemaColumn, lay_out, replaced};
use lakewriter_delta::state::JobState;

use datafusion::arrow::datatypes::{DataType, Field, Schema};

use crate::Job;
use crate::sql::JobStatement;
use crate::write::{Attempt, Replaces};
use crate::{RunError, Runner};

impl Runner {
    /// The columns of `job`'s table at the version `state` was read at, in order; none where the
    /// job has written no partition.
    pub(crate) async fn table_columns(&self, job: &Job, state: &JobState) -> crate::Result<Vec<SchemaColumn>> {
        if state.partitions.is_empty() {
            return Ok(Vec::new());
        }
        let open_err =
            |source| crate::Error::OpenTable { table: job.spec.target.to_string(), source: Box::new(source) };
        let provider = self.loaded.provider_at(&job.location, state.version).await.map_err(open_err)?;
        Ok(provider.schema().fields().iter().map(|f| SchemaColumn::of(f)).collect())
    }

    /// `plan` laid out as the columns of the table `attempt` read, as its job's `on_schema_change`
    /// says, with what that changes. A `rebuild` replaces the table's columns with its result's
    /// whatever it says (a full refresh): its changes are reported, its plan stays. An INSERT's
    /// rows come laid out by position ([`crate::write::Mode::lay_out`]); a `MERGE INTO` sets the
    /// columns it names itself (`crate::write::merge_into`).
    pub(crate) async fn columns_laid_out(
        &self,
        attempt: &Attempt<'_>,
        plan: LogicalPlan,
    ) -> Result<(LogicalPlan, ColumnChanges), RunError> {
        let job = attempt.run.job;
        let Some(table) = self.columns_at(attempt.table()).await? else { return Ok((plan, ColumnChanges::default())) };
        if job.mode.replaces() == Replaces::Table {
            let changes = replaced(&table, plan.schema().as_arrow());
            return Ok((plan, changes));
        }
        let exempt: &[&str] = match &job.spec.write {
            WriteSpec::Statement if !job.mode.result_is_rows() => return Ok((plan, ColumnChanges::default())),
            WriteSpec::Merge { delete_when: Some(_), .. } => &[lakewriter_compute::keyed::DELETED],
            _ => &[],
        };
        let name = job.spec.target.to_string();
        let partition_by = job.partition_by.as_slice();
        Ok(lay_out(plan, &table, job.spec.on_schema_change, partition_by, exempt, &name)?)
    }

    /// A dry run's note on the columns its write would add: how many of the job's other written
    /// partitions would read them as NULL until each is rerun.
    pub(crate) async fn note_others_lacking(
        &self,
        attempt: &Attempt<'_>,
        report: &mut crate::PartitionReport,
    ) -> Result<(), RunError> {
        let changes = &attempt.columns;
        if changes.added.is_empty() || attempt.run.job.mode.replaces() == Replaces::Table {
            return Ok(());
        }
        let job = &attempt.run.job.spec.name;
        let scope = lakewriter_delta::state::LogScope::FromLastCheckpoint;
        let state = lakewriter_delta::state::read(attempt.location, job, scope).await?;
        let others = state.map_or(0, |s| s.partitions.keys().filter(|p| **p != attempt.run.partition).count());
        let them = if changes.added.len() == 1 { "it" } else { "them" };
        let partitions = if others == 1 { "partition" } else { "partitions" };
        report.note = Some(format!(
            "{}; {others} other written {partitions} will read {them} as NULL until rerun",
            changes.describe()
        ));
        Ok(())
    }
}

/// Whether a run of `job` whose result has `schema` writes a value into its table's column
/// `column`, rather than a NULL for lack of it: a column of the result of that name (or a merge's
/// `_deleted` flag, where it has `delete_when`); for a job written as an INSERT with a list of
/// columns, one it lists; for any other statement, every column (its rows are laid out by
/// position, or its clauses set them).
pub(crate) fn writes_column(job: &Job, column: &str, schema: &datafusion::common::DFSchema) -> bool {
    match &job.statement {
        Some(JobStatement::Overwrite(insert) | JobStatement::Append(insert)) if !insert.columns.is_empty() => {
            insert.columns.iter().any(|c| c == column)
        }
        Some(_) => true,
        None => {
            schema.field_with_unqualified_name(column).is_ok()
                || (column == lakewriter_compute::keyed::DELETED
                    && matches!(job.spec.write, WriteSpec::Merge { delete_when: Some(_), .. }))
        }
    }
}

/// The columns of a result of `schema` that `job`'s run would add to a table of `columns`: none
/// where its `on_schema_change` adds none, or there is no table.
pub(crate) fn new_columns(
    job: &Job,
    columns: &[SchemaColumn],
    schema: &datafusion::common::DFSchema,
) -> Vec<SchemaColumn> {
    use lakewriter_core::OnSchemaChange;
    let adds = matches!(job.spec.on_schema_change, OnSchemaChange::AppendNewColumns | OnSchemaChange::SyncAllColumns);
    if adds { columns_beyond(job, columns, schema) } else { Vec::new() }
}

/// The columns of a result of `schema` beyond a table of `columns` (none where there is no
/// table): what a run adds where its `on_schema_change` lets it, and refuses under `fail`. A job
/// written as a statement adds its INSERT's columns beyond the table's, or the columns its
/// MERGE's clauses set.
pub(crate) fn columns_beyond(
    job: &Job,
    columns: &[SchemaColumn],
    schema: &datafusion::common::DFSchema,
) -> Vec<SchemaColumn> {
    if columns.is_empty() {
        return Vec::new();
    }
    let names: Vec<&str> = columns.iter().map(|c| c.column.as_str()).collect();
    match &job.statement {
        Some(JobStatement::Merge(merge)) => {
            let table =
                Schema::new(columns.iter().map(|c| Field::new(&c.column, DataType::Null, true)).collect::<Vec<_>>());
            crate::sql::column_changes(merge, &table, schema.as_arrow(), job.spec.on_schema_change).added
        }
        Some(JobStatement::Overwrite(insert) | JobStatement::Append(insert)) => {
            let query: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
            let added = crate::sql::added_columns(insert, &names, &query);
            let column = |(i, name): (usize, &String)| SchemaColumn {
                column: name.clone(),
                ..SchemaColumn::of(schema.field(i))
            };
            added.into_iter().filter(|(i, _)| *i < query.len()).map(column).collect()
        }
        None => schema
            .fields()
            .iter()
            .filter(|f| !names.contains(&f.name().as_str()))
            .map(|f| SchemaColumn::of(f))
            .collect(),
    }
}

impl crate::PartitionReport {
    /// The run does `changes` to its table's columns: said in the report, and in its note.
    pub(crate) fn columns_changed(&mut self, changes: &ColumnChanges, policy: lakewriter_core::OnSchemaChange) {
        if changes.is_empty() {
            return;
        }
        self.schema_change = Some(changes.clone());
        let mut note = changes.describe();
        if policy == lakewriter_core::OnSchemaChange::SyncAllColumns && !changes.missing.is_empty() {
            note.push_str(
                "; kept in the table: sync_all_columns drops a column only in a commit that replaces every row (a rebuild), or after a backfill of every written day with --replace-schema",
            );
        }
        self.note = Some(note);
    }
}
