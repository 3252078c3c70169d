//! Values as Delta stores them: empty partition strings (and, through [`crate::dates`], dates
//! and timestamps inside Delta's range in assignments).
//!
//! The Delta protocol reads an empty partition value as NULL (so do delta-rs, Spark and every
//! other reader), so a partition column cannot hold `''`. Spark writes `''` in a string partition
//! column as NULL; every write lakewriter makes does the same, before its rows are computed (a
//! job's result, an INSERT's, a MERGE or UPDATE assignment), so that what it checks, compares,
//! replaces and commits is what a reader reads back.

use arrow::datatypes::DataType;
use datafusion::common::Column;
use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder};
use datafusion::prelude::{Expr, lit, nullif};

use crate::{Error, Result};

/// Whether `data_type` is a string type (plain, large or view).
#[must_use]
pub fn is_text(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// `plan` with `''` as NULL in each of its string columns among `partition_columns` (a table's
/// partition columns); `plan` itself where it has none.
pub fn empty_partitions_as_null(plan: LogicalPlan, partition_columns: &[String], table: &str) -> Result<LogicalPlan> {
    let text = |name: &String| plan.schema().field_with_unqualified_name(name).is_ok_and(|f| is_text(f.data_type()));
    if !partition_columns.iter().any(text) {
        return Ok(plan);
    }
    let columns: Vec<Expr> = plan
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::from((qualifier, field)));
            if is_text(field.data_type()) && partition_columns.contains(field.name()) {
                nullif(column, lit("")).alias(field.name())
            } else {
                column
            }
        })
        .collect();
    LogicalPlanBuilder::from(plan)
        .project(columns)
        .and_then(LogicalPlanBuilder::build)
        .map_err(|source| Error::Plan { table: table.to_owned(), source: Box::new(source) })
}

/// `value` assigned to `column` of a table partitioned by `partition_columns` whose column types
/// are `schema`'s: `''` as NULL where `column` is a string partition column, and
/// [guarded](crate::dates) where the column holds dates or timestamps (or is one the assignment
/// adds) — the rows a MERGE or an UPDATE writes pass no other check.
pub(crate) fn assigned(
    column: &str,
    value: Expr,
    partition_columns: &[String],
    schema: &arrow::datatypes::Schema,
) -> Expr {
    let field = schema.field_with_name(column).ok();
    let text = field.is_some_and(|f| is_text(f.data_type()));
    let value = if text && partition_columns.iter().any(|c| c == column) { nullif(value, lit("")) } else { value };
    if field.is_none_or(|f| crate::dates::holds_dates(f.data_type())) {
        crate::dates::guarded(value, column)
    } else {
        value
    }
}
