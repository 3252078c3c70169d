//! The walker of the `outside_partition` check: where a job's partition column comes from.

use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{BinaryExpr, LogicalPlan, Operator, Union};
use datafusion::prelude::Expr;

use super::plan::{column_names, display_expr, unalias};

/// Where an output column's values come from, as far as the plan tells.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Origin {
    /// `$dt`, or a column a filter constrains to `$dt`.
    Dt,
    /// A constant, as displayed.
    Constant(String),
    /// A column of a scanned table that no filter constrains to `$dt`: `table.column`.
    Unconstrained(String),
    /// Anything else: an expression, an aggregate, a column the plan does not show.
    Unknown,
}

fn is_dt(expr: &Expr) -> bool {
    matches!(unalias(expr), Expr::Placeholder(p) if p.id == "$dt")
}

/// Whether `predicate` has a conjunct `column = $dt` (either way round, casts aside).
fn constrains_to_dt(predicate: &Expr, column: &str) -> bool {
    split_conjunction(predicate).into_iter().any(|conjunct| match conjunct {
        Expr::BinaryExpr(BinaryExpr { left, op: Operator::Eq, right }) => {
            let is_column = |e: &Expr| matches!(unalias(e), Expr::Column(c) if c.name == column);
            (is_column(left) && is_dt(right)) || (is_dt(left) && is_column(right))
        }
        _ => false,
    })
}

/// Where the output column `name` of `plan` comes from.
pub(super) fn origin(plan: &LogicalPlan, name: &str) -> Origin {
    match plan {
        LogicalPlan::Projection(projection) => {
            let Some(index) = projection.schema.fields().iter().position(|f| f.name() == name) else {
                return Origin::Unknown;
            };
            let Some(expr) = projection.expr.get(index) else { return Origin::Unknown };
            match unalias(expr) {
                Expr::Placeholder(p) if p.id == "$dt" => Origin::Dt,
                Expr::Literal(..) => Origin::Constant(display_expr(expr)),
                Expr::Column(column) => origin(&projection.input, &column.name),
                _ => Origin::Unknown,
            }
        }
        LogicalPlan::Filter(filter) => {
            if constrains_to_dt(&filter.predicate, name) {
                Origin::Dt
            } else {
                origin(&filter.input, name)
            }
        }
        LogicalPlan::TableScan(scan) => {
            if scan.filters.iter().any(|f| constrains_to_dt(f, name)) {
                Origin::Dt
            } else if scan.projected_schema.fields().iter().any(|f| f.name() == name) {
                Origin::Unconstrained(format!("{}.{name}", scan.table_name))
            } else {
                Origin::Unknown
            }
        }
        LogicalPlan::Aggregate(aggregate) => {
            if column_names(&aggregate.group_expr).contains(name) {
                origin(&aggregate.input, name)
            } else {
                Origin::Unknown
            }
        }
        LogicalPlan::Join(join) => {
            let side =
                if join.left.schema().fields().iter().any(|f| f.name() == name) { &join.left } else { &join.right };
            origin(side, name)
        }
        LogicalPlan::Union(union) => union_origin(union, name),
        LogicalPlan::SubqueryAlias(_)
        | LogicalPlan::Sort(_)
        | LogicalPlan::Limit(_)
        | LogicalPlan::Distinct(_)
        | LogicalPlan::Window(_)
        | LogicalPlan::Repartition(_) => match plan.inputs().as_slice() {
            [input] => origin(input, name),
            _ => Origin::Unknown,
        },
        _ => Origin::Unknown,
    }
}

/// Where the output column `name` of `union` comes from: the first input's origin that is a
/// constant or an unconstrained column, else unknown where any input's is, else `$dt`.
fn union_origin(union: &Union, name: &str) -> Origin {
    let Some(index) = union.schema.fields().iter().position(|f| f.name() == name) else {
        return Origin::Unknown;
    };
    let mut combined = Origin::Dt;
    for input in &union.inputs {
        let Some(field) = input.schema().fields().get(index) else { return Origin::Unknown };
        match origin(input, field.name()) {
            Origin::Dt => {}
            Origin::Unknown => combined = Origin::Unknown,
            other => return other,
        }
    }
    combined
}
