//! Values as Delta stores them: Delta's name of a column's type, and empty partition strings.
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

/// The Delta type a column of `data_type` is stored as (`date`, `integer`, `decimal(10,2)`, …), as
/// the table's schema in the log names it; Arrow's name where Delta has none.
#[must_use]
pub fn delta_type(data_type: &DataType) -> String {
    use deltalake::kernel::engine::arrow_conversion::TryFromArrow as _;
    let stored = crate::schema::storage_type(data_type).unwrap_or_else(|_| data_type.clone());
    deltalake::kernel::DataType::try_from_arrow(&stored).map_or_else(|_| data_type.to_string(), |t| t.to_string())
}

fn is_text(data_type: &DataType) -> bool {
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
/// are `schema`'s: `''` as NULL where `column` is a string partition column.
pub(crate) fn assigned(
    column: &str,
    value: Expr,
    partition_columns: &[String],
    schema: &arrow::datatypes::Schema,
) -> Expr {
    let text = schema.field_with_name(column).is_ok_and(|f| is_text(f.data_type()));
    if text && partition_columns.iter().any(|c| c == column) { nullif(value, lit("")) } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::TimeUnit;

    #[test]
    fn delta_types_are_named_as_the_log_names_them() {
        let cases = [
            (DataType::Date32, "date"),
            (DataType::Int32, "integer"),
            (DataType::Int64, "long"),
            (DataType::Utf8View, "string"),
            (DataType::Decimal128(10, 2), "decimal(10,2)"),
            (DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())), "timestamp"),
            (DataType::Timestamp(TimeUnit::Microsecond, None), "timestamp_ntz"),
        ];
        for (arrow, delta) in cases {
            assert_eq!(delta_type(&arrow), delta, "{arrow}");
        }
    }
}
