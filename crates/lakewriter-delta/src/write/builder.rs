//! delta-rs's own write of a plan: its builder, with the nullability of what lakewriter writes and
//! the schema mode of a write that adds columns, the column names a MERGE or an UPDATE takes, and
//! a refusal by delta-rs's data checks told in the job's terms.

use std::sync::Arc;

use datafusion::common::Column;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use deltalake::DeltaTable;
use deltalake::delta_datafusion::DeltaColumn;
use deltalake::operations::write::{SchemaMode, WriteBuilder};

use super::target::Target;
use crate::{Error, Result, nullability};

/// The column `name` of a merge's or an update's target, exactly as written: delta-rs's own
/// conversion of a `&str` parses it as SQL (`a.b` a qualified name, a space or a quote not one
/// name).
pub(super) fn column(name: &str) -> DeltaColumn {
    DeltaColumn::from(Column::new_unqualified(name))
}

/// `builder` with the schema mode of a write that adds columns (`adds`): Delta's schema merge,
/// which appends them to the table's schema, nullable, in the write's commit.
pub(super) fn evolving(builder: WriteBuilder, adds: bool) -> WriteBuilder {
    if adds { builder.with_schema_mode(SchemaMode::Merge) } else { builder }
}

/// The number of columns of `plan`'s rows.
pub(super) fn width(plan: &LogicalPlan) -> usize {
    plan.schema().fields().len()
}

/// delta-rs's write of `plan` into `table`, with the nullability of [`nullability::as_written`]:
/// a table it creates — or whose schema it replaces (`replaces_schema`) — nullable but for the
/// job's `not_null` columns.
pub(super) fn builder(
    table: DeltaTable,
    session: &SessionState,
    plan: LogicalPlan,
    target: &Target<'_>,
    replaces_schema: bool,
) -> Result<WriteBuilder> {
    let creates = replaces_schema || table.version().is_none();
    let plan = nullability::as_written(plan, target.not_null, creates)
        .map_err(|source| Error::Plan { table: target.name.to_owned(), source: Box::new(source) })?;
    let builder = table.write(Vec::new()).with_input_plan(plan).with_session_state(Arc::new(session.clone()));
    Ok(if target.partition_columns.is_empty() {
        builder
    } else {
        builder.with_partition_columns(target.partition_columns)
    })
}

/// A write that delta-rs's data checks refused ([`Error::Invalid`]) in the job's terms: the NULLs
/// in the columns that are NOT NULL in the table (the table at the version the write read, unless
/// it `replaces_schema`) or declared so, counted again from `plan` (on the failure path only);
/// where there is no plan to count in, or no NULL there, the refusal names those columns. Any
/// other error is returned as it is.
pub(super) async fn refused(
    session: &SessionState,
    target: &Target<'_>,
    plan: Option<LogicalPlan>,
    replaces_schema: bool,
    error: Error,
) -> Error {
    let Error::Invalid { table, partition, .. } = error else { return error };
    let shape = match target.loaded.shape(target.location, target.read_version).await {
        Ok(shape) => shape.filter(|_| !replaces_schema),
        Err(e) => {
            tracing::debug!(error = %e, "cannot read the table's NOT NULL columns");
            None
        }
    };
    let not_null = nullability::required(shape.as_ref().map(|s| s.schema.as_ref()), target.not_null);
    let nulls = match plan {
        Some(plan) => nullability::null_counts(session, plan, &not_null).await.unwrap_or_else(|e| {
            tracing::debug!(error = %e, "cannot count the NULLs in the NOT NULL columns");
            Vec::new()
        }),
        None => Vec::new(),
    };
    if nulls.is_empty() {
        Error::Invalid { table, partition, not_null }
    } else {
        Error::NullInNotNull { table, partition, nulls }
    }
}
