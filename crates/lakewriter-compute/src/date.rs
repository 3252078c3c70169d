//! Logical dates as DataFusion values: a `DATE` literal, the filter on a date partition column, and
//! the value of `$dt` — a query's parameter, bound in an expression.

use std::collections::HashMap;

use chrono::NaiveDate;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{ParamValues, ScalarValue};
use datafusion::prelude::{Expr, lit};
use lakewriter_core::days_since_epoch;

/// `date` as a `DATE` (`Date32`) value.
#[must_use]
pub fn date_literal(date: NaiveDate) -> ScalarValue {
    ScalarValue::Date32(Some(days_since_epoch(date)))
}

/// `column = DATE 'date'`: the rows of one partition of a table partitioned by the date `column`.
#[must_use]
pub fn partition_predicate(column: &str, date: NaiveDate) -> Expr {
    crate::column(column).eq(lit(date_literal(date)))
}

/// `dt` as the value of the parameter `$dt`.
pub(crate) fn dt_param(dt: NaiveDate) -> ParamValues {
    ParamValues::Map(HashMap::from([("dt".to_owned(), date_literal(dt).into())]))
}

/// `expr` with `$dt` bound to `dt`.
pub(crate) fn bound(expr: Expr, dt: Option<NaiveDate>) -> datafusion::error::Result<Expr> {
    let Some(dt) = dt else { return Ok(expr) };
    let params = dt_param(dt);
    Ok(expr
        .transform(|e| match e {
            Expr::Placeholder(p) => {
                params.get_placeholders_with_values(&p.id).map(|v| Transformed::yes(Expr::Literal(v.value, None)))
            }
            other => Ok(Transformed::no(other)),
        })?
        .data)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Date32Array, RecordBatch};
    use datafusion::logical_expr::{BinaryExpr, Operator};
    use datafusion::prelude::SessionContext;
    use lakewriter_core::parse_date;

    use super::*;

    fn day(s: &str) -> NaiveDate {
        parse_date(s).unwrap()
    }

    #[test]
    fn a_date_is_its_days_since_the_epoch() {
        assert_eq!(date_literal(day("1970-01-01")), ScalarValue::Date32(Some(0)));
        assert_eq!(date_literal(day("2026-09-30")), ScalarValue::Date32(Some(20_726)));
        assert_eq!(date_literal(day("1969-12-31")), ScalarValue::Date32(Some(-1)));
    }

    #[test]
    fn the_predicate_compares_the_column_to_the_date() {
        let Expr::BinaryExpr(BinaryExpr { left, op, right }) = partition_predicate("dt", day("2026-09-30")) else {
            panic!("not a comparison");
        };
        assert_eq!(op, Operator::Eq);
        assert!(matches!(*left, Expr::Column(ref c) if c.name == "dt" && c.relation.is_none()), "{left}");
        assert!(matches!(*right, Expr::Literal(ScalarValue::Date32(Some(20_726)), None)), "{right}");
    }

    #[tokio::test]
    async fn the_predicate_keeps_the_rows_of_its_date() {
        let days = Date32Array::from(vec![20_725, 20_726, 20_726, 20_727]);
        let batch = RecordBatch::try_from_iter([("dt", Arc::new(days) as _)]).unwrap();
        let df = SessionContext::new().read_batch(batch).unwrap();
        let kept = df.filter(partition_predicate("dt", day("2026-09-30"))).unwrap().count().await.unwrap();
        assert_eq!(kept, 2);
    }
}
