//! Spark's SQL types as Arrow types, where DataFusion's reading of the type name differs
//! (`CAST(x AS TIMESTAMP)`, `TIMESTAMP '…'`): Spark's `TIMESTAMP` is an instant, in microseconds,
//! shown in the session time zone; `TIMESTAMP_NTZ` a wall-clock time in microseconds; `DECIMAL`
//! without a precision is `decimal(10,0)`; `BINARY` is bytes.
//!
//! A `TIMESTAMP` of a plan is an Arrow timestamp whose zone is the session time zone: the type
//! planner's, every function's that makes one, and a scan's, whatever zone its file names
//! ([`in_session_zone`]). So DataFusion's casts (to a date, to a `TIMESTAMP_NTZ`, of a date)
//! and comparisons with a date follow the session time zone, and a function that reads a
//! timestamp's wall-clock time ([`super::zones::local`]) finds the zone in its argument's type.

use std::sync::Arc;

use chrono::{Datelike, NaiveDate};
use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, Result, exec_datafusion_err};
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::logical_expr::{Expr, LogicalPlan, Projection, cast};
use datafusion::sql::sqlparser::ast::{DataType as SqlType, ExactNumberInfo, TimezoneInfo};

/// `date` as days since 1970-01-01 (a `DATE`'s value).
pub(crate) fn epoch_days(date: NaiveDate) -> i32 {
    date.num_days_from_ce() - 719_163
}

/// The date `days` after 1970-01-01.
pub(crate) fn from_epoch_days(days: i32) -> Option<NaiveDate> {
    NaiveDate::from_num_days_from_ce_opt(days.checked_add(719_163)?)
}

/// Spark's `TIMESTAMP` in the session time zone `zone`.
pub(crate) fn timestamp(zone: &str) -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from(zone)))
}

/// The zone named `name` (the session time zone, or a timestamp type's).
pub(crate) fn zone(name: &str) -> Result<Tz> {
    name.parse().map_err(|_| exec_datafusion_err!("`{name}` is not a time zone"))
}

/// The zone a timestamp type names: `None` for a wall-clock time (`TIMESTAMP_NTZ`).
pub(crate) fn zone_of(t: &DataType) -> Result<Option<Tz>> {
    match t {
        DataType::Timestamp(_, Some(name)) => Ok(Some(zone(name)?)),
        _ => Ok(None),
    }
}

/// The type planner of the `spark` dialect, in the session time zone `zone`.
#[derive(Debug)]
pub(crate) struct SparkTypes {
    pub(crate) zone: &'static str,
}

impl TypePlanner for SparkTypes {
    #[allow(deprecated, reason = "plan_type_field's default implementation calls this")]
    fn plan_type(&self, sql_type: &SqlType) -> Result<Option<DataType>> {
        Ok(match sql_type {
            SqlType::Timestamp(_, TimezoneInfo::None | TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) => {
                Some(timestamp(self.zone))
            }
            SqlType::Timestamp(_, TimezoneInfo::WithoutTimeZone) | SqlType::TimestampNtz(_) => {
                Some(DataType::Timestamp(TimeUnit::Microsecond, None))
            }
            SqlType::Custom(name, modifiers) if modifiers.is_empty() => {
                match name.to_string().to_ascii_uppercase().as_str() {
                    "TIMESTAMP_NTZ" => Some(DataType::Timestamp(TimeUnit::Microsecond, None)),
                    "TIMESTAMP_LTZ" => Some(timestamp(self.zone)),
                    _ => None,
                }
            }
            SqlType::Decimal(ExactNumberInfo::None)
            | SqlType::Dec(ExactNumberInfo::None)
            | SqlType::Numeric(ExactNumberInfo::None) => Some(DataType::Decimal128(10, 0)),
            // The type of an integer literal (`super::syntax`).
            SqlType::Int32 => Some(DataType::Int32),
            SqlType::Binary(_) | SqlType::Varbinary(_) | SqlType::Bytea | SqlType::Blob(_) => Some(DataType::Binary),
            _ => None,
        })
    }
}

/// `plan`, where it is a scan of zoned timestamps in another zone than the session's (`zone`), under a
/// projection that reads them in the session's. Spark's `TIMESTAMP` is an instant: a Parquet
/// file stores it in UTC, and the zone its Arrow schema names (pyarrow keeps the zone a column
/// had) changes no value. DataFusion's casts and its comparisons with a date follow that zone,
/// so a timestamp of a `Europe/Paris` column would be another date, another wall-clock time
/// and another `$dt` day than the same instant in a UTC column. The values stay as they are.
pub(crate) fn in_session_zone(plan: LogicalPlan, session: &str) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::TableScan(scan) = &plan else { return Ok(Transformed::no(plan)) };
    let utc = |zone: &str| matches!(zone, "UTC" | "+00:00" | "Z");
    let session = |t: &DataType| match t {
        DataType::Timestamp(unit, Some(zone)) if zone.as_ref() != session && !(utc(zone) && utc(session)) => {
            Some(DataType::Timestamp(*unit, Some(Arc::from(session))))
        }
        _ => None,
    };
    let schema = Arc::clone(&scan.projected_schema);
    if !schema.fields().iter().any(|f| session(f.data_type()).is_some()) {
        return Ok(Transformed::no(plan));
    }
    let columns = schema.iter().map(|(qualifier, field)| {
        let column = Expr::Column(Column::from((qualifier, field)));
        match session(field.data_type()) {
            Some(t) => cast(column, t).alias_qualified(qualifier.cloned(), field.name()),
            None => column,
        }
    });
    Ok(Transformed::yes(LogicalPlan::Projection(Projection::try_new(columns.collect(), Arc::new(plan))?)))
}
