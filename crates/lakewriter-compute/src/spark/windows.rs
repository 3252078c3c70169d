//! Spark's types of the ranking window functions: `row_number`, `rank`, `dense_rank` and `ntile`
//! give an `INT` (`RowNumber`, `Rank`, `DenseRank`, `NTile`), where DataFusion's give an unsigned
//! 64-bit number. A projection of their values (the node above the windows that compute them)
//! casts each to `INT`, keeping its name.

use std::collections::HashSet;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::expr::{NullTreatment, WindowFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan, Projection, WindowFunctionDefinition};

use super::arith::Mode;
use super::equality::{normalized, sort_normalized};

const RANKINGS: [&str; 4] = ["row_number", "rank", "dense_rank", "ntile"];

/// `node`, where it is a projection of ranking window functions' values, with each an `INT`.
pub(super) fn ranks_as_ints(node: LogicalPlan) -> Result<LogicalPlan> {
    let LogicalPlan::Projection(projection) = node else { return Ok(node) };
    let mut ranks = HashSet::new();
    let mut input = projection.input.as_ref();
    while let LogicalPlan::Window(window) = input {
        for expr in &window.window_expr {
            if let Expr::WindowFunction(function) = expr.clone().unalias()
                && let WindowFunctionDefinition::WindowUDF(udwf) = &function.fun
                && RANKINGS.contains(&udwf.name())
            {
                ranks.insert(expr.schema_name().to_string());
            }
        }
        input = window.input.as_ref();
    }
    if ranks.is_empty() {
        return Ok(LogicalPlan::Projection(projection));
    }
    let names = NamePreserver::new_for_projection();
    let exprs = projection
        .expr
        .into_iter()
        .map(|expr| {
            let rank = matches!(expr.clone().unalias(), Expr::Column(c) if ranks.contains(c.name()));
            if !rank {
                return expr;
            }
            let name = names.save(&expr);
            name.restore(Expr::Cast(Cast::new(Box::new(expr.unalias()), DataType::Int32)))
        })
        .collect();
    Ok(LogicalPlan::Projection(Projection::try_new(exprs, projection.input)?))
}

/// A window function as Spark computes it: its partitions grouped and its rows ordered by
/// normalized keys (NaN one value, the greatest; -0.0 as 0.0), `first_value(x, true)` and
/// `last_value(x, true)` skipping NULLs, `SUM` and `AVG` Spark's ([`super::aggregates`]).
pub(super) fn window_function(
    mut window: Box<WindowFunction>,
    schema: &DFSchema,
    mode: Mode,
) -> Result<Transformed<Expr>> {
    let keys = std::mem::take(&mut window.params.partition_by);
    window.params.partition_by = keys.into_iter().map(|key| normalized(key, schema).unalias()).collect();
    let order = std::mem::take(&mut window.params.order_by);
    window.params.order_by = order.into_iter().map(|s| sort_normalized(s, schema)).collect();
    // `first_value(x, true)` and `last_value(x, true)` skip NULLs (`ignoreNulls`).
    if matches!(window.fun.name(), "first_value" | "last_value")
        && let [_, Expr::Literal(ScalarValue::Boolean(Some(ignore)), _)] = window.params.args.as_slice()
    {
        window.params.null_treatment =
            Some(if *ignore { NullTreatment::IgnoreNulls } else { NullTreatment::RespectNulls });
        window.params.args.truncate(1);
    }
    if let WindowFunctionDefinition::AggregateUDF(udaf) = &window.fun
        && let Some(arg) = window.params.args.first()
        && let Some(spark) = super::aggregates::spark(udaf.name(), &arg.get_type(schema)?, mode)
    {
        window.fun = WindowFunctionDefinition::AggregateUDF(spark);
    }
    Ok(Transformed::yes(Expr::WindowFunction(window)))
}
