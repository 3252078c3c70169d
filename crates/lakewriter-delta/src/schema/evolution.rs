//! A result's columns laid onto its table's under a job's `on_schema_change`: the columns a write
//! adds to the table (at the end, nullable, in the commit of its data), the table's columns it
//! writes as NULL, the result's columns it leaves out, and — for a write that replaces every row —
//! the columns it drops. A column never changes its type, and its name is its name as Delta reads
//! it: case aside.

use arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::Column;
use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder, cast};
use datafusion::prelude::{Expr, lit};
use datafusion::scalar::ScalarValue;
use lakewriter_core::OnSchemaChange;
use serde::Serialize;

use super::{delta_type_name, same_storage};
use crate::{Error, Result, nullability};

/// A column, named with its type as Delta names it (`decimal(12,2)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaColumn {
    pub column: String,
    #[serde(rename = "type")]
    pub stored: String,
}

impl SchemaColumn {
    /// `field`, with the type Delta stores it as.
    #[must_use]
    pub fn of(field: &Field) -> Self {
        Self { column: field.name().clone(), stored: delta_type_name(field.data_type()) }
    }
}

impl AsRef<str> for SchemaColumn {
    fn as_ref(&self) -> &str {
        &self.column
    }
}

impl std::fmt::Display for SchemaColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` ({})", self.column, self.stored)
    }
}

/// How a write changes its table's columns. Empty where the result has the table's columns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ColumnChanges {
    /// Columns of the result the table lacks, added at the end of its schema by this commit.
    pub added: Vec<SchemaColumn>,
    /// Columns of the table the result lacks, written as NULL.
    pub missing: Vec<SchemaColumn>,
    /// Columns of the result the table lacks, left out of the write (`ignore`).
    pub ignored: Vec<SchemaColumn>,
    /// Columns of the table this commit drops: it leaves no row holding a value of them.
    pub dropped: Vec<SchemaColumn>,
}

impl ColumnChanges {
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.missing.is_empty() && self.ignored.is_empty() && self.dropped.is_empty()
    }

    /// Whether the commit changes the table's schema.
    #[must_use]
    pub fn changes_schema(&self) -> bool {
        !self.added.is_empty() || !self.dropped.is_empty()
    }

    /// `adds column `discount` (decimal(12,2)); writes `note` (string) as NULL`: what the write
    /// does to the table's columns, in words.
    #[must_use]
    pub fn describe(&self) -> String {
        let list = |columns: &[SchemaColumn]| columns.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        let plural = |columns: &[SchemaColumn]| if columns.len() == 1 { "column" } else { "columns" };
        let mut parts = Vec::new();
        if !self.added.is_empty() {
            parts.push(format!("adds {} {}", plural(&self.added), list(&self.added)));
        }
        if !self.dropped.is_empty() {
            parts.push(format!("drops {} {}", plural(&self.dropped), list(&self.dropped)));
        }
        if !self.missing.is_empty() {
            parts.push(format!("writes {} as NULL (not in the result)", list(&self.missing)));
        }
        if !self.ignored.is_empty() {
            parts.push(format!("leaves out {} (not in the table: on_schema_change = \"ignore\")", list(&self.ignored)));
        }
        parts.join("; ")
    }
}

/// Lays `plan` (a result, of the types Delta stores: see [`super::storable`]) out as the columns
/// of `table` under `policy`, for a write that keeps the table's other rows: the table's columns
/// in its order — one the result lacks as a NULL of its type —, then the columns `policy` adds
/// (nullable, nested fields too); `ignore` leaves those out. `exempt` columns are the mode's own
/// (a merge's `_deleted`, added after this): neither missing nor new. `fail` changes nothing
/// (the write's own check refuses any difference, as it always has).
///
/// Refused whatever the policy, naming the column and the fix: a column of another type than the
/// table's, one whose name differs from a table column's only by case (Delta's names are
/// case-insensitive), and a partition column missing from the result.
pub fn lay_out(
    plan: LogicalPlan,
    table: &Schema,
    policy: OnSchemaChange,
    partition_columns: &[String],
    exempt: &[&str],
    name: &str,
) -> Result<(LogicalPlan, ColumnChanges)> {
    if policy == OnSchemaChange::Fail {
        return Ok((plan, ColumnChanges::default()));
    }
    let result = plan.schema().as_arrow().clone();
    refuse_changes(table, &result, partition_columns, name)?;
    let column = |name: &str| {
        let (qualifier, field) = plan.schema().qualified_field_with_unqualified_name(name).ok()?;
        Some((Expr::Column(Column::from((qualifier, field))), field.clone()))
    };
    let mut changes = ColumnChanges::default();
    let mut columns = Vec::new();
    for field in table.fields().iter().filter(|f| !exempt.contains(&f.name().as_str())) {
        if let Some((expr, _)) = column(field.name()) {
            columns.push(expr);
        } else {
            changes.missing.push(SchemaColumn::of(field));
            columns.push(cast(lit(ScalarValue::Null), field.data_type().clone()).alias(field.name()));
        }
    }
    for field in result.fields().iter().filter(|f| table.field_with_name(f.name()).is_err()) {
        if policy == OnSchemaChange::Ignore {
            changes.ignored.push(SchemaColumn::of(field));
            continue;
        }
        changes.added.push(SchemaColumn::of(field));
        let (expr, field) = column(field.name()).expect("a column of the result");
        columns.push(nullability::relaxed(expr, &field));
    }
    if changes.is_empty() {
        return Ok((plan, changes));
    }
    let laid_out = LogicalPlanBuilder::from(plan)
        .project(columns)
        .and_then(LogicalPlanBuilder::build)
        .map_err(|source| Error::Plan { table: name.to_owned(), source: Box::new(source) })?;
    Ok((laid_out, changes))
}

/// What a write that replaces every row (a `rebuild`) does to the columns of `table`: the
/// result's columns it lacks are added, and its columns the result lacks are dropped.
#[must_use]
pub fn replaced(table: &Schema, result: &Schema) -> ColumnChanges {
    let lacking = |of: &Schema, field: &&std::sync::Arc<Field>| of.field_with_name(field.name()).is_err();
    ColumnChanges {
        added: result.fields().iter().filter(|f| lacking(table, f)).map(|f| SchemaColumn::of(f)).collect(),
        dropped: table.fields().iter().filter(|f| lacking(result, f)).map(|f| SchemaColumn::of(f)).collect(),
        ..ColumnChanges::default()
    }
}

/// The differences no policy lets in: another type, a name that differs only by case, a missing
/// partition column.
fn refuse_changes(table: &Schema, result: &Schema, partition_columns: &[String], name: &str) -> Result<()> {
    let mut refused = Vec::new();
    for field in result.fields() {
        match table.field_with_name(field.name()) {
            Ok(t) if !same_storage(t.data_type(), field.data_type()) => refused.push(type_changed(t, field)),
            Ok(_) => {}
            Err(_) => {
                if let Some(t) = table.fields().iter().find(|t| t.name().eq_ignore_ascii_case(field.name())) {
                    refused.push(format!(
                        "column `{}` of the result differs from the table's `{}` only by case: Delta reads column names case-insensitively, so it cannot be a new column; name it `{}`",
                        field.name(),
                        t.name(),
                        t.name()
                    ));
                }
            }
        }
    }
    for column in partition_columns {
        if result.field_with_name(column).is_err() && table.field_with_name(column).is_ok() {
            refused.push(format!(
                "column `{column}` is the table's partition column and is missing from the result: every row needs its partition"
            ));
        }
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(Error::SchemaMismatch { table: name.to_owned(), differences: refused })
}

/// A column whose type changed, with the fix: a cast in the SQL, or a rebuild.
fn type_changed(table: &Field, result: &Field) -> String {
    let (was, is) = (delta_type_name(table.data_type()), delta_type_name(result.data_type()));
    let column = table.name();
    let cast = match sql_type(table.data_type()) {
        Some(sql) => format!("cast it in the job's SQL (`CAST(… AS {sql}) AS {column}`)"),
        None => format!("cast it to {was} in the job's SQL"),
    };
    format!(
        "column `{column}` is {was} in the table but {is} in the result: a column keeps its type (on_schema_change adds and drops columns, and lakewriter never coerces a value); {cast}, or rebuild the table to give it the new type"
    )
}

/// The SQL name of the type DataFusion casts a value to for a column stored as `data_type`.
fn sql_type(data_type: &DataType) -> Option<String> {
    use DataType as D;
    Some(match data_type {
        D::Boolean => "BOOLEAN".into(),
        D::Int8 => "TINYINT".into(),
        D::Int16 => "SMALLINT".into(),
        D::Int32 => "INT".into(),
        D::Int64 => "BIGINT".into(),
        D::Float32 => "FLOAT".into(),
        D::Float64 => "DOUBLE".into(),
        D::Utf8 => "STRING".into(),
        D::Date32 => "DATE".into(),
        D::Decimal128(p, s) => format!("DECIMAL({p}, {s})"),
        D::Timestamp(_, None) => "TIMESTAMP".into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
