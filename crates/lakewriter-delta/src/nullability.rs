//! Which columns of a table may hold NULL. A table lakewriter creates (or whose schema a rebuild
//! replaces) has every column nullable, nested fields too — as Spark's and Delta's CREATE TABLE AS
//! SELECT make them, whatever a literal, a `COUNT` or a `VALUES` made the result's — except the
//! columns a job declares NOT NULL. A NULL in a NOT NULL column is counted and named.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::common::Column;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::SessionState;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::{
    ColumnarValue, LogicalPlan, LogicalPlanBuilder, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};
use datafusion::prelude::{DataFrame, Expr, lit};

/// How the error of a guard (see [`as_written`]) begins: what tells a write that failed on a NULL
/// in a declared NOT NULL column.
pub(crate) const GUARD_REFUSAL: &str = "lakewriter: a NULL in the NOT NULL column";

/// `data_type` with every nested field nullable (struct fields, list items, map values).
#[must_use]
pub fn nullable_type(data_type: &DataType) -> DataType {
    let relaxed = |f: &FieldRef| Arc::new(Field::new(f.name(), nullable_type(f.data_type()), true));
    match data_type {
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(relaxed).collect()),
        DataType::List(item) => DataType::List(relaxed(item)),
        DataType::LargeList(item) => DataType::LargeList(relaxed(item)),
        DataType::FixedSizeList(item, n) => DataType::FixedSizeList(relaxed(item), *n),
        DataType::Map(entries, sorted) => {
            let DataType::Struct(pair) = entries.data_type() else { return data_type.clone() };
            // A map's keys are never NULL (Arrow and Delta alike); its values may be.
            let pair: Fields =
                pair.iter().enumerate().map(|(i, f)| if i == 0 { f.clone() } else { relaxed(f) }).collect();
            DataType::Map(Arc::new(Field::new(entries.name(), DataType::Struct(pair), false)), *sorted)
        }
        other => other.clone(),
    }
}

/// The top-level columns of `schema` that are NOT NULL.
#[must_use]
pub fn not_null_columns(schema: &Schema) -> Vec<String> {
    schema.fields().iter().filter(|f| !f.is_nullable()).map(|f| f.name().clone()).collect()
}

/// The columns a result must hold no NULL in: the NOT NULL columns of `table` (`None` for a
/// table the write creates, or whose schema it replaces) and the `declared` ones.
#[must_use]
pub fn required(table: Option<&Schema>, declared: &[String]) -> Vec<String> {
    let mut columns = declared.to_vec();
    for column in table.map(not_null_columns).unwrap_or_default() {
        if !columns.contains(&column) {
            columns.push(column);
        }
    }
    columns
}

/// `plan` as it is written into its table. Where the write `creates` the table (or replaces its
/// schema), every column is nullable, nested fields too, except the columns of `not_null`; and
/// the `not_null` columns (the job's declaration) are guarded: NOT NULL in the plan's schema, so
/// in a table it creates, and a NULL there fails the write, naming the column.
pub(crate) fn as_written(plan: LogicalPlan, not_null: &[String], creates: bool) -> DfResult<LogicalPlan> {
    reprojected(plan, |column, field| {
        let name = field.name();
        if not_null.contains(name) {
            return field.is_nullable().then(|| guard(name.clone()).call(vec![column]).alias(name));
        }
        creates.then(|| relaxed(column.clone(), field)).filter(|relaxed| *relaxed != column)
    })
}

/// `plan` with each column as `each` makes it of the column and its field (`None`: as it is);
/// `plan` itself where no column changes.
fn reprojected(plan: LogicalPlan, mut each: impl FnMut(Expr, &Field) -> Option<Expr>) -> DfResult<LogicalPlan> {
    let mut changed = false;
    let columns: Vec<Expr> = plan
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::from((qualifier, field)));
            match each(column.clone(), field) {
                Some(expr) => {
                    changed = true;
                    expr
                }
                None => column,
            }
        })
        .collect();
    if !changed {
        return Ok(plan);
    }
    LogicalPlanBuilder::from(plan).project(columns)?.build()
}

/// `column` (of `field`) as a nullable column, nested fields too, under its own name: a column a
/// write adds to a table, whose earlier rows read it as NULL.
pub(crate) fn relaxed(column: Expr, field: &Field) -> Expr {
    if field.is_nullable() && nullable_type(field.data_type()) == *field.data_type() {
        return column;
    }
    ScalarUDF::new_from_impl(Nullable { signature: Signature::any(1, Volatility::Immutable) })
        .call(vec![column])
        .alias(field.name())
}

/// `plan` with each column `predicate` reads nullable where the table's column (in `table`) is
/// and the plan's is not. delta-rs resolves a replaceWhere's predicate against the plan's columns
/// and simplifies `c IS NULL` to false over a column the plan holds no NULL in: the table's rows
/// where `c` is NULL would not be replaced (`c = $dt OR c IS NULL` would keep them).
pub(crate) fn nullable_where_read(plan: LogicalPlan, table: &Schema, predicate: &Expr) -> DfResult<LogicalPlan> {
    let read: Vec<String> = predicate.column_refs().into_iter().map(|c| c.name.clone()).collect();
    reprojected(plan, |column, field| {
        let nullable_in_table = table.field_with_name(field.name()).is_ok_and(Field::is_nullable);
        (!field.is_nullable() && nullable_in_table && read.contains(field.name())).then(|| relaxed(column, field))
    })
}

/// The NULLs of `plan`'s rows in each of `columns` it has: `(column, rows)` for each column with
/// any, in the order of `columns`. One aggregate over the rows.
pub async fn null_counts(
    session: &SessionState,
    plan: LogicalPlan,
    columns: &[String],
) -> DfResult<Vec<(String, u64)>> {
    let (rows, values) = value_counts(session, plan, columns).await?;
    Ok(values.into_iter().map(|(c, v)| (c, rows - v)).filter(|(_, nulls)| *nulls > 0).collect())
}

/// The number of `plan`'s rows, and the rows holding a value (not NULL) of each of `columns` it
/// has, in the order of `columns`. One aggregate over the rows.
pub async fn value_counts(
    session: &SessionState,
    plan: LogicalPlan,
    columns: &[String],
) -> DfResult<(u64, Vec<(String, u64)>)> {
    let present: Vec<&String> =
        columns.iter().filter(|c| plan.schema().has_column_with_unqualified_name(c.as_str())).collect();
    if present.is_empty() {
        return Ok((0, Vec::new()));
    }
    let column = |name: &str| Expr::Column(Column::new_unqualified(name));
    let mut counts = vec![count(lit(1)).alias("rows")];
    counts.extend(present.iter().enumerate().map(|(i, c)| count(column(c)).alias(format!("c{i}"))));
    let batches = DataFrame::new(session.clone(), plan).aggregate(vec![], counts)?.collect().await?;
    let Some(batch) = batches.first().filter(|b| b.num_rows() == 1) else { return Ok((0, Vec::new())) };
    let value = |i: usize| -> DfResult<u64> {
        let array = arrow::compute::cast(batch.column(i), &DataType::UInt64)?;
        Ok(arrow::array::AsArray::as_primitive::<arrow::datatypes::UInt64Type>(&array).value(0))
    };
    let values = present.into_iter().enumerate().map(|(i, name)| Ok((name.clone(), value(i + 1)?)));
    Ok((value(0)?, values.collect::<DfResult<_>>()?))
}

/// Its argument, as a nullable value (nested fields too).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Nullable {
    signature: Signature,
}

impl ScalarUDFImpl for Nullable {
    fn name(&self) -> &'static str {
        "lakewriter_nullable"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        Ok(nullable_type(&args[0]))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let wanted = args.return_field.data_type().clone();
        let value = args.args.into_iter().next().expect("one argument");
        if value.data_type() == wanted {
            return Ok(value);
        }
        value.cast_to(&wanted, None)
    }
}

/// Its argument, NOT NULL: a NULL fails the query, naming `column`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Guard {
    column: String,
    signature: Signature,
}

/// The name of the guard of a NOT NULL column (see [`as_written`]) in a plan.
pub const GUARD: &str = "lakewriter_not_null";

/// The guard of the NOT NULL column `column`: its argument passes through, and a NULL fails the
/// write, naming the column.
#[must_use]
pub fn guard(column: String) -> ScalarUDF {
    ScalarUDF::new_from_impl(Guard { column, signature: Signature::any(1, Volatility::Immutable) })
}

/// The column `udf` guards, where it is a guard (see [`guard`]): what a plan sent elsewhere
/// carries to make it again.
#[must_use]
pub fn guarded_column(udf: &ScalarUDF) -> Option<&str> {
    udf.inner().downcast_ref::<Guard>().map(|g| g.column.as_str())
}

impl ScalarUDFImpl for Guard {
    fn name(&self) -> &'static str {
        GUARD
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        Ok(args[0].clone())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        Ok(Arc::new(Field::new(&self.column, args.arg_fields[0].data_type().clone(), false)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let value = args.args.into_iter().next().expect("one argument");
        let has_null = match &value {
            ColumnarValue::Array(array) => array.null_count() > 0,
            ColumnarValue::Scalar(scalar) => scalar.is_null(),
        };
        if has_null {
            return Err(DataFusionError::Execution(format!("{GUARD_REFUSAL} `{}`", self.column)));
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_fields_become_nullable_and_map_keys_stay_not_null() {
        let strict = |t: DataType| Arc::new(Field::new("f", t, false));
        let nested = DataType::Struct(
            vec![
                strict(DataType::List(strict(DataType::Int64))),
                strict(DataType::Map(
                    strict(DataType::Struct(
                        vec![Field::new("key", DataType::Utf8, false), Field::new("value", DataType::Int32, false)]
                            .into(),
                    )),
                    false,
                )),
            ]
            .into(),
        );
        let relaxed = nullable_type(&nested);
        let DataType::Struct(fields) = &relaxed else { panic!("a struct") };
        assert!(fields.iter().all(|f| f.is_nullable()));
        let DataType::List(item) = fields[0].data_type() else { panic!("a list") };
        assert!(item.is_nullable());
        let DataType::Map(entries, _) = fields[1].data_type() else { panic!("a map") };
        let DataType::Struct(pair) = entries.data_type() else { panic!("entries") };
        assert_eq!((pair[0].is_nullable(), pair[1].is_nullable()), (false, true));
        assert_eq!(nullable_type(&DataType::Int64), DataType::Int64);
    }
}
