//! A job's columns against its table's, for `status` and `plan`: the columns a run writes, adds
//! or would be refused for (`on_schema_change`), and what a run did to them, in its report. A
//! run lays its result onto the table's columns in its attempt (`crate::write::Attempt`).

use lakewriter_delta::schema::{ColumnChanges, SchemaColumn};
use lakewriter_delta::state::JobState;

use datafusion::arrow::datatypes::{DataType, Field, Schema};

use crate::Job;
use crate::Runner;
use crate::sql::JobStatement;

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
        None => schema.field_with_unqualified_name(column).is_ok() || job.mode.tombstone() == Some(column),
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
        let kept = policy == lakewriter_core::OnSchemaChange::SyncAllColumns && !changes.missing.is_empty();
        self.note = Some(crate::Note::Columns { changes: changes.clone(), kept });
    }
}
