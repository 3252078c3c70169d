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

use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, TimeUnit};
use datafusion::common::Column;
use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder, cast};
use datafusion::prelude::Expr;

use crate::{Error, Result};

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
/// refuse or narrow are cast to their [`storage_type`]. A column Delta cannot store fails here,
/// before anything is written, naming the column and a cast that fixes it.
pub fn storable(plan: LogicalPlan, table: &str) -> Result<LogicalPlan> {
    let mut problems = Vec::new();
    let mut cast_any = false;
    let columns: Vec<Expr> = plan
        .schema()
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::from((qualifier, field)));
            match storage_type(field.data_type()) {
                Err(fix) => {
                    problems.push(format!("column `{}` is {}: {fix}", field.name(), field.data_type()));
                    column
                }
                Ok(_) if field.data_type() == &DataType::UInt64 => {
                    cast_any = true;
                    checked_bigint(column, field.name()).alias(field.name())
                }
                Ok(stored) if needs_cast(field.data_type()) => {
                    cast_any = true;
                    cast(column, stored).alias(field.name())
                }
                Ok(_) => column,
            }
        })
        .collect();
    if !problems.is_empty() {
        return Err(Error::Unstorable { table: table.to_owned(), columns: problems });
    }
    if !cast_any {
        return Ok(plan);
    }
    LogicalPlanBuilder::from(plan)
        .project(columns)
        .and_then(LogicalPlanBuilder::build)
        .map_err(|source| Error::Plan { table: table.to_owned(), source: Box::new(source) })
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

/// How `result` differs from `table`, one line per column; empty where they match by name and
/// stored type (column order and nullability aside).
#[must_use]
pub fn differences(table: &Schema, result: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    for field in table.fields() {
        match result.field_with_name(field.name()) {
            Err(_) => out.push(format!("column `{}` ({}) is missing from the result", field.name(), field.data_type())),
            Ok(r) if !same_storage(field.data_type(), r.data_type()) => out.push(format!(
                "column `{}` is {} in the table but {} in the result",
                field.name(),
                field.data_type(),
                r.data_type()
            )),
            Ok(_) => {}
        }
    }
    for field in result.fields() {
        if table.field_with_name(field.name()).is_err() {
            out.push(format!("column `{}` ({}) is not in the table", field.name(), field.data_type()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::IntervalUnit;

    fn list(item: DataType, name: &str) -> DataType {
        DataType::List(Arc::new(Field::new(name, item, true)))
    }

    #[test]
    fn names_every_difference_and_ignores_encodings() {
        let table = Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("v", DataType::Decimal128(22, 2), true),
        ]);
        let same = Schema::new(vec![
            Field::new("s", DataType::Utf8View, false),
            Field::new("k", DataType::UInt64, true),
            Field::new("v", DataType::Decimal128(22, 2), true),
        ]);
        assert!(differences(&table, &same).is_empty(), "an unsigned long is stored as a long");
        let other = Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("v", DataType::Utf8, true),
            Field::new("extra", DataType::Int32, true),
        ]);
        assert_eq!(
            differences(&table, &other),
            [
                "column `s` (Utf8) is missing from the result",
                "column `v` is Decimal128(22, 2) in the table but Utf8 in the result",
                "column `extra` (Int32) is not in the table",
            ]
        );
    }

    #[test]
    fn compares_as_delta_stores_recursively() {
        let us_utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let pairs = [
            (us_utc.clone(), DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))),
            (us_utc.clone(), DataType::Timestamp(TimeUnit::Second, Some("Europe/Paris".into()))),
            (DataType::Timestamp(TimeUnit::Microsecond, None), DataType::Timestamp(TimeUnit::Millisecond, None)),
            (list(DataType::Utf8, "element"), list(DataType::Utf8View, "item")),
            (
                list(DataType::Int64, "element"),
                DataType::LargeList(Arc::new(Field::new("item", DataType::Int64, false))),
            ),
            (
                list(DataType::Int64, "element"),
                DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Int64, true)), 2),
            ),
            (DataType::Date32, DataType::Date64),
            (DataType::Int16, DataType::UInt8),
            (DataType::Decimal128(10, 2), DataType::Decimal256(10, 2)),
            (
                DataType::Struct(vec![Field::new("a", list(us_utc.clone(), "element"), true)].into()),
                DataType::Struct(
                    vec![Field::new(
                        "a",
                        list(DataType::Timestamp(TimeUnit::Nanosecond, Some("+02:00".into())), "item"),
                        false,
                    )]
                    .into(),
                ),
            ),
        ];
        for (table, result) in &pairs {
            assert!(same_storage(table, result), "{table} vs {result}");
        }
        let changed = [
            (us_utc.clone(), DataType::Timestamp(TimeUnit::Microsecond, None)),
            (DataType::Int32, DataType::Int64),
            (list(DataType::Int64, "element"), list(DataType::Int32, "element")),
            (
                DataType::Struct(vec![Field::new("a", DataType::Int64, true)].into()),
                DataType::Struct(vec![Field::new("b", DataType::Int64, true)].into()),
            ),
            (DataType::Decimal128(10, 2), DataType::Decimal128(12, 2)),
        ];
        for (table, result) in &changed {
            assert!(!same_storage(table, result), "{table} vs {result} is a real change");
        }
    }

    #[test]
    fn types_delta_cannot_store_name_a_fix() {
        for (data_type, fix) in [
            (DataType::Null, "CAST(NULL AS VARCHAR)"),
            (DataType::Time64(TimeUnit::Nanosecond), "CAST(x AS VARCHAR)"),
            (DataType::Duration(TimeUnit::Second), "CAST(x AS BIGINT)"),
            (DataType::Interval(IntervalUnit::MonthDayNano), "CAST(x AS VARCHAR)"),
            (DataType::Decimal256(50, 4), "CAST(x AS DECIMAL(38, 4))"),
            (list(DataType::Time32(TimeUnit::Second), "item"), "CAST(x AS VARCHAR)"),
        ] {
            let reason = storage_type(&data_type).expect_err("not storable");
            assert!(reason.contains(fix), "{data_type}: {reason}");
        }
    }

    #[test]
    fn only_what_delta_rs_would_refuse_or_narrow_is_cast() {
        assert!(!needs_cast(&DataType::Utf8View));
        assert!(!needs_cast(&DataType::Timestamp(TimeUnit::Nanosecond, None)));
        assert!(!needs_cast(&list(DataType::Utf8View, "item")));
        assert!(needs_cast(&DataType::UInt8));
        assert!(needs_cast(&DataType::Timestamp(TimeUnit::Microsecond, Some("+02:00".into()))));
        assert!(needs_cast(&DataType::Struct(vec![Field::new("u", DataType::UInt32, true)].into())));
    }
}
