//! Spark's SQL types as Arrow types, where DataFusion's reading of the type name differs
//! (`CAST(x AS TIMESTAMP)`, `TIMESTAMP '…'`): Spark's `TIMESTAMP` is an instant, in microseconds,
//! shown in the session time zone; `TIMESTAMP_NTZ` a wall-clock time in microseconds; `DECIMAL`
//! without a precision is `decimal(10,0)`; `BINARY` is bytes.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::Result;
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast::{DataType as SqlType, ExactNumberInfo, TimezoneInfo};

/// The session time zone every timestamp is shown and read in.
pub(crate) const SESSION_TIME_ZONE: &str = "UTC";

/// Spark's `TIMESTAMP`.
pub(crate) fn timestamp() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from(SESSION_TIME_ZONE)))
}

/// The type planner of the `spark` dialect.
#[derive(Debug, Default)]
pub(crate) struct SparkTypes;

impl TypePlanner for SparkTypes {
    #[allow(deprecated, reason = "plan_type_field's default implementation calls this")]
    fn plan_type(&self, sql_type: &SqlType) -> Result<Option<DataType>> {
        Ok(match sql_type {
            SqlType::Timestamp(_, TimezoneInfo::None | TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) => {
                Some(timestamp())
            }
            SqlType::Timestamp(_, TimezoneInfo::WithoutTimeZone) | SqlType::TimestampNtz(_) => {
                Some(DataType::Timestamp(TimeUnit::Microsecond, None))
            }
            SqlType::Custom(name, modifiers) if modifiers.is_empty() => {
                match name.to_string().to_ascii_uppercase().as_str() {
                    "TIMESTAMP_NTZ" => Some(DataType::Timestamp(TimeUnit::Microsecond, None)),
                    "TIMESTAMP_LTZ" => Some(timestamp()),
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
