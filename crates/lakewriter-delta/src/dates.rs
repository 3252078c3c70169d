//! Dates and timestamps as Delta stores them: from 0001-01-01 to 9999-12-31, and from 0001-01-01
//! 00:00:00 to 9999-12-31 23:59:59.999999 — the protocol's ranges, which Spark keeps to and
//! delta-rs Python reads (a table with a date of year 0 fails to read as a whole). Arrow holds
//! values far beyond them (`DATE '0001-01-01' - INTERVAL '1 day'` is year 0), so every column a
//! write takes whose type holds dates or timestamps, nested in structs, lists and maps too, passes
//! [`guarded`]: each batch's smallest and greatest value (Arrow's `min` and `max` kernels, not a
//! loop over the rows) checked against the range, and one outside fails the write before anything
//! is committed, naming the column, the nested field and the value.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, make_array};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, FieldRef, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::Expr;

/// The name of the guard (see [`guarded`]) in a plan.
pub const IN_RANGE: &str = "lakewriter_in_range";

/// 0001-01-01 and 9999-12-31, in days since 1970-01-01.
const FIRST_DAY: i64 = -719_162;
const LAST_DAY: i64 = 2_932_896;
const SECONDS_A_DAY: i64 = 86_400;

/// Whether a column of `data_type` holds dates or timestamps, at any depth.
#[must_use]
pub fn holds_dates(data_type: &DataType) -> bool {
    use DataType as D;
    match data_type {
        D::Date32 | D::Date64 | D::Timestamp(..) => true,
        D::List(item)
        | D::LargeList(item)
        | D::FixedSizeList(item, _)
        | D::ListView(item)
        | D::LargeListView(item)
        | D::Map(item, _) => holds_dates(item.data_type()),
        D::Struct(fields) => fields.iter().any(|f| holds_dates(f.data_type())),
        D::Dictionary(_, value) => holds_dates(value),
        D::RunEndEncoded(_, values) => holds_dates(values.data_type()),
        _ => false,
    }
}

/// `value`, written to the column `column`, failing the write where it holds a date or timestamp
/// outside Delta's range.
#[must_use]
pub fn guarded(value: Expr, column: &str) -> Expr {
    in_range(column.to_owned()).call(vec![value])
}

/// The guard of the column `column` (see [`guarded`]).
#[must_use]
pub fn in_range(column: String) -> ScalarUDF {
    ScalarUDF::new_from_impl(InRange { column, signature: Signature::any(1, Volatility::Immutable) })
}

/// The column `udf` guards, where it is a guard (see [`guarded`]): what a plan sent elsewhere
/// carries to make it again.
#[must_use]
pub fn guarded_column(udf: &ScalarUDF) -> Option<&str> {
    udf.inner().downcast_ref::<InRange>().map(|g| g.column.as_str())
}

/// Its argument, unchanged; a date or timestamp outside Delta's range fails the query, naming
/// `column`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct InRange {
    column: String,
    signature: Signature,
}

impl ScalarUDFImpl for InRange {
    fn name(&self) -> &'static str {
        IN_RANGE
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        Ok(args[0].clone())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        Ok(Arc::new(args.arg_fields[0].as_ref().clone().with_name(&self.column)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let value = args.args.into_iter().next().expect("one argument");
        let array = match &value {
            ColumnarValue::Array(array) => Arc::clone(array),
            ColumnarValue::Scalar(scalar) => scalar.to_array()?,
        };
        match outside(array.as_ref(), &self.column) {
            Some(found) => Err(DataFusionError::Execution(found.message(&self.column))),
            None => Ok(value),
        }
    }
}

/// A value outside the range, and where it is.
#[derive(Debug, PartialEq, Eq)]
struct Outside {
    /// The column, or the nested field (`s.at`, `l[]`, `m.value`), that holds it.
    path: String,
    value: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dates,
    Timestamps,
    /// Timestamps with a time zone: instants, shown in UTC.
    Instants,
}

impl Outside {
    fn message(&self, column: &str) -> String {
        let at = if self.path == column { String::new() } else { format!(" in `{}`", self.path) };
        let (kind, range) = match self.kind {
            Kind::Dates => ("dates", "0001-01-01 to 9999-12-31"),
            Kind::Timestamps => ("timestamps", "0001-01-01 00:00:00 to 9999-12-31 23:59:59.999999"),
            Kind::Instants => ("timestamps", "0001-01-01 00:00:00 to 9999-12-31 23:59:59.999999 UTC"),
        };
        format!("column `{column}` holds {}{at}, outside the {kind} Delta stores ({range})", self.value)
    }
}

/// The first value of `array` (the column or nested field `path`) outside the range, if any.
fn outside(array: &dyn Array, path: &str) -> Option<Outside> {
    use DataType as D;
    match array.data_type() {
        D::Date32 => {
            let day = smallest_or_greatest::<Date32Type>(array, (FIRST_DAY, LAST_DAY))?;
            Some(Outside { path: path.to_owned(), value: text(day * SECONDS_A_DAY, 0, Kind::Dates), kind: Kind::Dates })
        }
        D::Date64 => instant::<Date64Type>(array, 1_000, Kind::Dates, path),
        D::Timestamp(unit, zone) => {
            let kind = if zone.is_some() { Kind::Instants } else { Kind::Timestamps };
            match unit {
                TimeUnit::Second => instant::<TimestampSecondType>(array, 1, kind, path),
                TimeUnit::Millisecond => instant::<TimestampMillisecondType>(array, 1_000, kind, path),
                TimeUnit::Microsecond => instant::<TimestampMicrosecondType>(array, 1_000_000, kind, path),
                TimeUnit::Nanosecond => instant::<TimestampNanosecondType>(array, 1_000_000_000, kind, path),
            }
        }
        D::Struct(fields) => {
            let parent = array.as_struct();
            fields.iter().zip(parent.columns()).find_map(|(field, column)| {
                outside(under(column, parent.nulls())?.as_ref(), &format!("{path}.{}", field.name()))
            })
        }
        D::List(_) => {
            let list = array.as_list::<i32>();
            let offsets = (list.value_offsets()[0].into(), list.value_offsets()[list.len()].into());
            outside(items(list.values(), offsets)?.as_ref(), &format!("{path}[]"))
        }
        D::LargeList(_) => {
            let list = array.as_list::<i64>();
            let offsets = (list.value_offsets()[0], list.value_offsets()[list.len()]);
            outside(items(list.values(), offsets)?.as_ref(), &format!("{path}[]"))
        }
        D::FixedSizeList(..) => outside(array.as_fixed_size_list().values().as_ref(), &format!("{path}[]")),
        D::Map(..) => {
            let map = array.as_map();
            let offsets = (map.value_offsets()[0].into(), map.value_offsets()[map.len()].into());
            let entries: ArrayRef = Arc::new(map.entries().clone());
            outside(items(&entries, offsets)?.as_ref(), path)
        }
        D::Dictionary(_, value) => outside(arrow::compute::cast(array, value).ok()?.as_ref(), path),
        _ => None,
    }
}

/// The first value of `array`, of instants `per_second` to a second from 1970-01-01, outside the
/// range, as a `kind`.
fn instant<T>(array: &dyn Array, per_second: i64, kind: Kind, path: &str) -> Option<Outside>
where
    T: arrow::datatypes::ArrowNumericType,
    T::Native: Into<i64>,
{
    let first = (FIRST_DAY * SECONDS_A_DAY).saturating_mul(per_second);
    let last = ((LAST_DAY + 1) * SECONDS_A_DAY).checked_mul(per_second).map_or(i64::MAX, |end| end - 1);
    let value = smallest_or_greatest::<T>(array, (first, last))?;
    let nanos = value.rem_euclid(per_second) * (1_000_000_000 / per_second);
    Some(Outside { path: path.to_owned(), value: text(value.div_euclid(per_second), nanos, kind), kind })
}

/// The items of a list (or the entries of a map) whose `values` its offsets `first..last` take.
fn items(values: &ArrayRef, (first, last): (i64, i64)) -> Option<ArrayRef> {
    Some(values.slice(usize::try_from(first).ok()?, usize::try_from(last - first).ok()?))
}

/// `column`, a child of a struct whose rows `parent` marks NULL, with those rows NULL too: the
/// values under a NULL struct are not the struct's.
fn under(column: &ArrayRef, parent: Option<&NullBuffer>) -> Option<ArrayRef> {
    let Some(parent) = parent else { return Some(Arc::clone(column)) };
    let nulls = NullBuffer::union(Some(parent), column.nulls());
    column.to_data().into_builder().nulls(nulls).build().ok().map(make_array)
}

/// The smallest value of `array` where it is below `low`, else its greatest where that is above
/// `high`.
fn smallest_or_greatest<T>(array: &dyn Array, (low, high): (i64, i64)) -> Option<i64>
where
    T: arrow::datatypes::ArrowNumericType,
    T::Native: Into<i64>,
{
    let values = array.as_primitive::<T>();
    let smallest: i64 = arrow::compute::min(values)?.into();
    if smallest < low {
        return Some(smallest);
    }
    let greatest: i64 = arrow::compute::max(values)?.into();
    (greatest > high).then_some(greatest)
}

/// A value `seconds` (and `nanos`) from 1970-01-01 00:00:00 as a date, a timestamp or an instant
/// (UTC); a value beyond any calendar date chrono knows as its number of seconds.
fn text(seconds: i64, nanos: i64, kind: Kind) -> String {
    let Some(at) = u32::try_from(nanos).ok().and_then(|n| chrono::DateTime::from_timestamp(seconds, n)) else {
        return format!("{seconds} seconds from 1970-01-01");
    };
    match kind {
        Kind::Dates => at.date_naive().to_string(),
        Kind::Timestamps => at.naive_utc().to_string(),
        Kind::Instants => at.to_string(),
    }
}

#[cfg(test)]
mod tests;
