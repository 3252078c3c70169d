//! Helpers over logical plans and expressions for the checks: walks, columns, and expressions
//! displayed as written.

use std::collections::BTreeSet;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{LogicalPlan, SortExpr};
use datafusion::prelude::Expr;

/// Calls `f` on every node of `plan`, subqueries included.
pub(super) fn visit(plan: &LogicalPlan, mut f: impl FnMut(&LogicalPlan)) {
    // The closure never fails, so neither does the walk.
    let _ = plan.apply_with_subqueries(|node| {
        f(node);
        Ok(TreeNodeRecursion::Continue)
    });
}

/// Calls `f` on every expression of every node of `plan`, nested ones included.
pub(super) fn visit_exprs(plan: &LogicalPlan, mut f: impl FnMut(&Expr)) {
    visit(plan, |node| {
        let _ = node.apply_expressions(|expr| {
            expr.apply(|e| {
                f(e);
                Ok(TreeNodeRecursion::Continue)
            })
        });
    });
}

/// `expr` without the aliases and casts around it.
pub(super) fn unalias(expr: &Expr) -> &Expr {
    match expr {
        Expr::Alias(alias) => unalias(&alias.expr),
        Expr::Cast(cast) => unalias(&cast.expr),
        Expr::TryCast(cast) => unalias(&cast.expr),
        other => other,
    }
}

/// The names of the plain columns among `exprs`.
pub(super) fn column_names<'a>(exprs: impl IntoIterator<Item = &'a Expr>) -> BTreeSet<String> {
    exprs
        .into_iter()
        .filter_map(|e| match unalias(e) {
            Expr::Column(c) => Some(c.name.clone()),
            _ => None,
        })
        .collect()
}

/// An expression as written, roughly: a plain column by its name, a date literal as `DATE '…'`.
pub(super) fn display_expr(expr: &Expr) -> String {
    match expr {
        Expr::Column(c) => c.name.clone(),
        Expr::Literal(ScalarValue::Date32(Some(_)), _) => format!("DATE '{}'", expr.human_display()),
        Expr::Literal(ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)), _) => format!("'{s}'"),
        Expr::Cast(cast) if cast.field.data_type() == &DataType::Date32 && matches!(*cast.expr, Expr::Literal(..)) => {
            format!("DATE {}", display_expr(&cast.expr))
        }
        Expr::Alias(alias) => display_expr(&alias.expr),
        other => other.human_display().to_string(),
    }
}

pub(super) fn display_order(order: &[SortExpr]) -> String {
    let keys: Vec<String> =
        order.iter().map(|s| format!("{}{}", display_expr(&s.expr), if s.asc { "" } else { " DESC" })).collect();
    keys.join(", ")
}

/// The sort (its keys and input) a `LIMIT` takes its rows from, looking through projections
/// and aliases.
pub(super) fn sort_below(plan: &LogicalPlan) -> Option<(&[SortExpr], &LogicalPlan)> {
    match plan {
        LogicalPlan::Sort(sort) => Some((&sort.expr, &sort.input)),
        LogicalPlan::Projection(p) => sort_below(&p.input),
        LogicalPlan::SubqueryAlias(a) => sort_below(&a.input),
        _ => None,
    }
}
