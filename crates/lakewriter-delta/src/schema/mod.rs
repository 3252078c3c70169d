//! What Delta stores for each Arrow type, and comparing a result's schema with its target table's.
//!
//! A result is compared with its table as Delta stores it: [`storage_type`] applies, recursively,
//! what delta-rs does to a schema it writes (views and large types are plain, dictionaries their
//! values, timestamps microseconds, dates days, lists `List`) plus lakewriter's own rules for the
//! types delta-rs would refuse or narrow (unsigned integers are widened, any time zone becomes
//! UTC, other decimals become `Decimal128`). Nullability and the names Arrow gives list items and
//! map entries are not part of a type. Only a real change — another type once stored, a renamed,
//! missing or extra column — is refused: delta-rs would cast where it can, and a silently changed
//! column is a bug to fix, not data to coerce.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, Fields, TimeUnit};
use datafusion::common::Column;
use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder, cast};
use datafusion::prelude::Expr;

use crate::{Error, Result};

mod differences;
mod evolution;

pub use differences::{Difference, column_differences, delta_type_name, differences};
pub use evolution::{ColumnChanges, SchemaColumn, lay_out, replaced};

/// The type Delta stores a column of `data_type` as, or why it cannot store it (with a fix).
pub fn storage_type(data_type: &DataType) -> std::result::Result<DataType, String> {
    use DataType as D;
    Ok(match data_type {
        D::Boolean
        | D::Int8
        | D::Int16
        | D::Int32
        | D::Int64
        | D::Float32
        | D::Float64
        | D::Date32
        | D::Utf8
        | D::Binary => data_type.clone(),
        // Delta has no unsigned integers: the signed type wide enough for every value (a UInt64
        // above 2^63 - 1 fails the write).
        D::UInt8 => D::Int16,
        D::UInt16 => D::Int32,
        D::UInt32 | D::UInt64 => D::Int64,
        D::Float16 => D::Float32,
        D::Utf8View | D::LargeUtf8 => D::Utf8,
        D::BinaryView | D::LargeBinary | D::FixedSizeBinary(_) => D::Binary,
        D::Date64 => D::Date32,
        D::Timestamp(_, None) => D::Timestamp(TimeUnit::Microsecond, None),
        D::Timestamp(_, Some(_)) => D::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        D::Decimal32(p, s) | D::Decimal64(p, s) | D::Decimal128(p, s) | D::Decimal256(p, s) => {
            if *p > 38 || *s < 0 || i16::from(*s) > i16::from(*p) {
                return Err(format!(
                    "Delta decimals have at most 38 digits and a scale from 0 to the precision; cast it, e.g. `CAST(x AS DECIMAL(38, {}))`",
                    s.clamp(&0, &38)
                ));
            }
            D::Decimal128(*p, *s)
        }
        D::Dictionary(_, value) => storage_type(value)?,
        D::RunEndEncoded(_, values) => storage_type(values.data_type())?,
        D::List(item) | D::LargeList(item) | D::ListView(item) | D::LargeListView(item) | D::FixedSizeList(item, _) => {
            D::List(Arc::new(Field::new("element", storage_type(item.data_type())?, item.is_nullable())))
        }
        D::Struct(fields) => D::Struct(storage_fields(fields)?),
        D::Map(entries, _) => {
            let D::Struct(pair) = entries.data_type() else {
                return Err("a map whose entries are not a struct".to_owned());
            };
            D::Map(Arc::new(Field::new("key_value", D::Struct(storage_fields(pair)?), false)), false)
        }
        D::Null => return Err("a bare NULL has no type; give it one, e.g. `CAST(NULL AS VARCHAR)`".to_owned()),
        D::Time32(_) | D::Time64(_) => {
            return Err("Delta has no time-of-day type; cast it, e.g. `CAST(x AS VARCHAR)`".to_owned());
        }
        D::Duration(_) => {
            return Err("Delta has no duration type; cast it to a number, e.g. `CAST(x AS BIGINT)`".to_owned());
        }
        D::Interval(_) => {
            return Err("Delta has no interval type; cast it, e.g. `CAST(x AS VARCHAR)`".to_owned());
        }
        D::Union(..) => {
            return Err("Delta has no union type; pick one type, e.g. `CAST(x AS VARCHAR)`".to_owned());
        }
    })
}

fn storage_fields(fields: &Fields) -> std::result::Result<Fields, String> {
    fields
        .iter()
        .map(|f| Ok(Arc::new(Field::new(f.name(), storage_type(f.data_type())?, f.is_nullable()))))
        .collect::<std::result::Result<Vec<FieldRef>, String>>()
        .map(Fields::from)
}

/// Whether delta-rs would refuse or narrow a column of `data_type` if handed it as it is: such a
/// column is cast to its [`storage_type`] before the write. The other differences (views, large
/// and dictionary types, timestamp units, `Date64`, item names) delta-rs converts itself.
fn needs_cast(data_type: &DataType) -> bool {
    use DataType as D;
    match data_type {
        D::UInt8
        | D::UInt16
        | D::UInt32
        | D::UInt64
        | D::Float16
        | D::FixedSizeBinary(_)
        | D::Decimal32(..)
        | D::Decimal64(..)
        | D::Decimal256(..)
        | D::RunEndEncoded(..)
        | D::ListView(_)
        | D::LargeListView(_) => true,
        D::Timestamp(_, Some(tz)) => !tz.eq_ignore_ascii_case("UTC"),
        D::Dictionary(_, value) => needs_cast(value),
        D::List(item) | D::LargeList(item) | D::FixedSizeList(item, _) => needs_cast(item.data_type()),
        D::Struct(fields) => fields.iter().any(|f| needs_cast(f.data_type())),
        D::Map(entries, _) => needs_cast(entries.data_type()),
        _ => false,
    }
}

/// `plan` with every column Delta can store as delta-rs would write it: columns delta-rs would
/// refuse or narrow are cast to their [`storage_type`], and the columns that hold dates or
/// timestamps are [guarded](crate::dates): a value outside Delta's range fails the write. A
/// column Delta cannot store fails here, before anything is written, naming the column and a
/// cast that fixes it. Every write of rows passes here: a job's result, an INSERT's, the rows of
/// a MERGE that creates its table.
pub fn storable(plan: LogicalPlan, table: &str) -> Result<LogicalPlan> {
    let mut problems = Vec::new();
    let mut changed = false;
    let columns: Vec<Expr> = plan
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::from((qualifier, field)));
            match stored(column.clone(), field) {
                Err(fix) => {
                    problems.push(format!("column `{}` is {}: {fix}", field.name(), field.data_type()));
                    column
                }
                Ok(Some(stored)) => {
                    changed = true;
                    stored.alias(field.name())
                }
                Ok(None) => column,
            }
        })
        .collect();
    if !problems.is_empty() {
        return Err(Error::Unstorable { table: table.to_owned(), columns: problems });
    }
    if !changed {
        return Ok(plan);
    }
    LogicalPlanBuilder::from(plan)
        .project(columns)
        .and_then(LogicalPlanBuilder::build)
        .map_err(|source| Error::Plan { table: table.to_owned(), source: Box::new(source) })
}

/// `column` (of `field`) as [`storable`] writes it: cast where delta-rs would refuse or narrow
/// it, guarded where it holds dates; `None` where it is written as it is, and why where Delta
/// cannot store it.
fn stored(column: Expr, field: &Field) -> std::result::Result<Option<Expr>, String> {
    let stored = storage_type(field.data_type())?;
    let written = if field.data_type() == &DataType::UInt64 {
        Some(checked_bigint(column.clone(), field.name()))
    } else if needs_cast(field.data_type()) {
        Some(cast(column.clone(), stored.clone()))
    } else {
        None
    };
    if crate::dates::holds_dates(&stored) {
        return Ok(Some(crate::dates::guarded(written.unwrap_or(column), field.name())));
    }
    Ok(written)
}

/// `column`, a `UInt64`, as a `BIGINT`: a value above 2^63 - 1 fails the write, naming the
/// column and a cast that stores it.
fn checked_bigint(column: Expr, name: &str) -> Expr {
    let udf = datafusion::logical_expr::ScalarUDF::new_from_impl(CheckedBigint {
        column: name.to_owned(),
        signature: datafusion::logical_expr::Signature::exact(
            vec![DataType::UInt64],
            datafusion::logical_expr::Volatility::Immutable,
        ),
    });
    udf.call(vec![column])
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct CheckedBigint {
    column: String,
    signature: datafusion::logical_expr::Signature,
}

impl datafusion::logical_expr::ScalarUDFImpl for CheckedBigint {
    fn name(&self) -> &'static str {
        "lakewriter_checked_bigint"
    }

    fn signature(&self) -> &datafusion::logical_expr::Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> datafusion::error::Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(
        &self,
        args: datafusion::logical_expr::ScalarFunctionArgs,
    ) -> datafusion::error::Result<datafusion::logical_expr::ColumnarValue> {
        use arrow::array::{Array, AsArray};
        use arrow::datatypes::UInt64Type;
        let arrays = datafusion::logical_expr::ColumnarValue::values_to_arrays(&args.args)?;
        let values = arrays[0].as_primitive::<UInt64Type>();
        if let Some(big) = values.iter().flatten().find(|v| i64::try_from(*v).is_err()) {
            return Err(datafusion::error::DataFusionError::Execution(format!(
                "column `{}` holds {big}, above the greatest BIGINT (2^63 - 1) that Delta stores; cast it, e.g. `CAST({} AS DECIMAL(20, 0))`",
                self.column, self.column
            )));
        }
        let converted = arrow::compute::cast(values as &dyn Array, &DataType::Int64)?;
        Ok(datafusion::logical_expr::ColumnarValue::Array(converted))
    }
}

/// The type a column is compared and digested as: its storage type, with every nested field
/// nullable and list items and map entries under fixed names.
#[must_use]
pub fn comparable_type(data_type: &DataType) -> DataType {
    let stored = storage_type(data_type).unwrap_or_else(|_| data_type.clone());
    let field = |name: &str, t: &DataType| Arc::new(Field::new(name, comparable_type(t), true));
    match &stored {
        DataType::List(item) => DataType::List(field("element", item.data_type())),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(|f| field(f.name(), f.data_type())).collect()),
        DataType::Map(entries, _) => {
            let DataType::Struct(pair) = entries.data_type() else { return stored };
            let pair: Fields = pair
                .iter()
                .enumerate()
                .map(|(i, f)| Arc::new(Field::new(["key", "value"][i.min(1)], comparable_type(f.data_type()), i > 0)))
                .collect();
            DataType::Map(Arc::new(Field::new("key_value", DataType::Struct(pair), false)), false)
        }
        _ => stored,
    }
}

/// Whether a column of type `result` is stored as a column of type `table` is.
#[must_use]
pub fn same_storage(table: &DataType, result: &DataType) -> bool {
    comparable_type(table) == comparable_type(result)
}

#[cfg(test)]
mod tests;

/// `batch`'s columns as `schema`'s, by name, each cast to its type where it differs (a scan reads
/// strings as views, for one); a column `schema` has and `batch` lacks is an error naming it.
pub(crate) fn conform(
    batch: &arrow::array::RecordBatch,
    schema: &arrow::datatypes::SchemaRef,
) -> Result<arrow::array::RecordBatch, arrow::error::ArrowError> {
    let columns = schema
        .fields()
        .iter()
        .map(|field| {
            let column = batch.column_by_name(field.name()).ok_or_else(|| {
                arrow::error::ArrowError::SchemaError(format!("no column `{}` was read", field.name()))
            })?;
            if column.data_type() == field.data_type() {
                Ok(column.clone())
            } else {
                arrow::compute::cast(column, field.data_type())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    arrow::array::RecordBatch::try_new(schema.clone(), columns)
}
