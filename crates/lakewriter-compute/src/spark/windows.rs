//! Spark's types of the ranking window functions: `row_number`, `rank`, `dense_rank` and `ntile`
//! give an `INT` (`RowNumber`, `Rank`, `DenseRank`, `NTile`), where DataFusion's give an unsigned
//! 64-bit number. A projection of their values (the node above the windows that compute them)
//! casts each to `INT`, keeping its name.

use std::collections::HashSet;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Cast, Expr, LogicalPlan, Projection, WindowFunctionDefinition};

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
