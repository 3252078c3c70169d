//! The walkers of the `nondeterministic`, `order_not_total`, `unbounded_scan` and `float_aggregate` checks: what
//! each finds in a plan, before it is worded as a finding.

use std::collections::{BTreeMap, BTreeSet};

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::listing::ListingTable;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{LogicalPlan, SortExpr, TableScan, Volatility};
use datafusion::prelude::Expr;
use lakewriter_core::{SourceSpec, TableRef};

use super::plan::{column_names, display_expr, display_order, sort_below, unalias, visit, visit_exprs};

/// Functions whose result depends on the clock or on chance, whatever their declared volatility.
const CLOCK_OR_RANDOM: &[&str] = &[
    "now",
    "current_date",
    "current_time",
    "current_timestamp",
    "localtime",
    "localtimestamp",
    "today",
    "random",
    "uuid",
];

/// Window functions whose result depends on the order of rows within a peer group. (`rank`,
/// `dense_rank`, `percent_rank` and `cume_dist` give peers the same value: tie-stable.)
const ORDER_SENSITIVE: &[&str] = &["row_number", "first_value", "last_value", "nth_value", "lag", "lead", "ntile"];

/// The clock-dependent and random function calls of `plan`, as displayed.
pub(super) fn nondeterministic_calls(plan: &LogicalPlan) -> Vec<String> {
    let mut calls = Vec::new();
    visit_exprs(plan, |expr| {
        if let Expr::ScalarFunction(call) = expr {
            let name = call.func.name().to_ascii_lowercase();
            let volatile = call.func.signature().volatility != Volatility::Immutable;
            if volatile || CLOCK_OR_RANDOM.contains(&name.as_str()) {
                calls.push(expr.human_display().to_string());
            }
        }
    });
    calls
}

const NOT_TOTAL: &str = "its sort keys cover no declared unique key of the tables it reads";

/// Order-sensitive window expressions and `LIMIT`s of `plan` whose order is not known to be
/// total: (construct, why).
pub(super) fn unordered(plan: &LogicalPlan, sources: &BTreeMap<TableRef, SourceSpec>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let limit = |fetch: Option<String>, order: &[SortExpr]| {
        let order = if order.is_empty() { String::new() } else { format!("ORDER BY {} ", display_order(order)) };
        format!("{order}LIMIT {}", fetch.unwrap_or_else(|| "ALL".to_owned()))
    };
    visit(plan, |node| match node {
        LogicalPlan::Window(window) => {
            for expr in &window.window_expr {
                let Expr::WindowFunction(function) = unalias(expr) else { continue };
                if !ORDER_SENSITIVE.contains(&function.fun.name().to_ascii_lowercase().as_str()) {
                    continue;
                }
                let params = &function.params;
                let keys = column_names(params.partition_by.iter().chain(params.order_by.iter().map(|s| &s.expr)));
                if !is_total(&keys, &window.input, sources) {
                    let args: Vec<String> = params.args.iter().map(display_expr).collect();
                    let mut over = Vec::new();
                    if !params.partition_by.is_empty() {
                        let partition: Vec<String> = params.partition_by.iter().map(display_expr).collect();
                        over.push(format!("PARTITION BY {}", partition.join(", ")));
                    }
                    if !params.order_by.is_empty() {
                        over.push(format!("ORDER BY {}", display_order(&params.order_by)));
                    }
                    let name = function.fun.name().to_ascii_uppercase();
                    let construct = format!("{name}({}) OVER ({})", args.join(", "), over.join(" "));
                    found
                        .push((construct, NOT_TOTAL.replace("its sort keys", "its PARTITION BY and ORDER BY columns")));
                }
            }
        }
        LogicalPlan::Limit(node) => {
            let fetch = node.fetch.as_deref().map(display_expr);
            match sort_below(&node.input) {
                Some((order, input)) if !is_total(&column_names(order.iter().map(|s| &s.expr)), input, sources) => {
                    found.push((limit(fetch, order), NOT_TOTAL.to_owned()));
                }
                Some(_) => {}
                None => {
                    let why = "it has no ORDER BY".to_owned();
                    found.push((limit(fetch, &[]), why));
                }
            }
        }
        LogicalPlan::Sort(sort)
            if sort.fetch.is_some()
                && !is_total(&column_names(sort.expr.iter().map(|s| &s.expr)), &sort.input, sources) =>
        {
            found.push((limit(sort.fetch.map(|n| n.to_string()), &sort.expr), NOT_TOTAL.to_owned()));
        }
        _ => {}
    });
    found
}

/// Whether ordering by the columns `keys` (with partition columns) is total for the rows of
/// `input`: `keys` cover a declared unique key of a table scanned below, or the group columns
/// of an aggregation below (not in subqueries: their rows are not these rows).
fn is_total(keys: &BTreeSet<String>, input: &LogicalPlan, sources: &BTreeMap<TableRef, SourceSpec>) -> bool {
    let mut total = false;
    // The closure never fails, so neither does the walk.
    let _ = input.apply(|node| {
        match node {
            LogicalPlan::TableScan(scan) => {
                let declared = sources.iter().find(|(table, _)| {
                    scan.table_name.schema() == Some(table.schema()) && scan.table_name.table() == table.table()
                });
                if let Some((_, source)) = declared {
                    total |= source.unique.iter().all(|c| keys.contains(c));
                }
            }
            LogicalPlan::Aggregate(aggregate) if !aggregate.group_expr.is_empty() => {
                let groups = column_names(&aggregate.group_expr);
                total |= groups.len() == aggregate.group_expr.len() && groups.is_subset(keys);
            }
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    });
    total
}

/// Scans of partitioned raw datasets (raw tables, or any listing table) with no filter above them, nor pushed into
/// them, on a partition column: (table, column).
pub(super) fn unbounded_scans(plan: &LogicalPlan) -> Vec<(String, String)> {
    let mut found = Vec::new();
    scans_under_filters(plan, &mut Vec::new(), &mut |scan, filters| {
        let Ok(provider) = source_as_provider(&scan.source) else { return };
        let partitions =
            match (provider.downcast_ref::<crate::raw::RawTable>(), provider.downcast_ref::<ListingTable>()) {
                (Some(raw), _) => raw.partitions(),
                (None, Some(listing)) => listing.options().table_partition_cols.as_slice(),
                (None, None) => return,
            };
        for (column, _) in partitions {
            let filtered = filters
                .iter()
                .copied()
                .chain(&scan.filters)
                .flat_map(split_conjunction)
                .any(|conjunct| conjunct.column_refs().iter().any(|c| &c.name == column));
            if !filtered {
                found.push((scan.table_name.to_string(), column.clone()));
            }
        }
    });
    found
}

/// Calls `f` on every table scan of `plan` with the predicates of the filters above it.
/// A subquery starts with none: the filter that holds it does not filter its rows.
fn scans_under_filters<'a>(plan: &'a LogicalPlan, above: &mut Vec<&'a Expr>, f: &mut impl FnMut(&TableScan, &[&Expr])) {
    let pushed = match plan {
        LogicalPlan::Filter(filter) => {
            above.push(&filter.predicate);
            true
        }
        LogicalPlan::TableScan(scan) => {
            f(scan, above);
            false
        }
        _ => false,
    };
    for input in plan.inputs() {
        scans_under_filters(input, above, f);
    }
    let _ = plan.apply_subqueries(|subquery| {
        scans_under_filters(subquery, &mut Vec::new(), f);
        Ok(TreeNodeRecursion::Continue)
    });
    if pushed {
        above.pop();
    }
}

/// Aggregate functions whose floating-point result depends on the order rows are added in: a
/// sum or average of floats, and the variances and correlations (floats whatever they read).
const FLOAT_SUMS: &[&str] = &["sum", "avg", "mean"];
const FLOAT_MOMENTS: &[&str] = &[
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "var",
    "var_pop",
    "var_samp",
    "var_population",
    "var_sample",
    "variance",
    "covar",
    "covar_pop",
    "covar_samp",
    "corr",
];

/// Rounding functions: their result no longer shows the last bits an order-sensitive sum differs in.
const ROUNDING: &[&str] = &["round", "trunc", "floor", "ceil"];

/// The floating-point columns of `plan`'s result that come from an order-sensitive float
/// aggregate (see [`FLOAT_SUMS`] and [`FLOAT_MOMENTS`]), not rounded or cast to another type on
/// the way: (column, the aggregate as displayed).
pub(super) fn float_aggregates(plan: &LogicalPlan) -> Vec<(String, String)> {
    let fields = plan.schema().fields();
    (0..fields.len())
        .filter(|&i| fields[i].data_type().is_floating())
        .filter_map(|i| Some((fields[i].name().clone(), float_aggregate_of(plan, i)?)))
        .collect()
}

/// The order-sensitive float aggregate the column `index` of `plan` is computed from, if any.
fn float_aggregate_of(plan: &LogicalPlan, index: usize) -> Option<String> {
    match plan {
        LogicalPlan::Projection(projection) => float_source(projection.expr.get(index)?, &projection.input),
        LogicalPlan::Aggregate(aggregate) => {
            let groups = aggregate.group_expr_len().ok()?;
            match index.checked_sub(groups) {
                Some(i) => float_source(aggregate.aggr_expr.get(i)?, &aggregate.input),
                None if groups == aggregate.group_expr.len() => {
                    float_source(&aggregate.group_expr[index], &aggregate.input)
                }
                None => None,
            }
        }
        LogicalPlan::Window(window) => {
            let inputs = window.input.schema().fields().len();
            match index.checked_sub(inputs) {
                Some(i) => float_source(window.window_expr.get(i)?, &window.input),
                None => float_aggregate_of(&window.input, index),
            }
        }
        LogicalPlan::SubqueryAlias(alias) => float_aggregate_of(&alias.input, index),
        LogicalPlan::Union(union) => union.inputs.iter().find_map(|input| float_aggregate_of(input, index)),
        // Nodes that pass their inputs' columns through (filters, sorts, limits, joins).
        other => {
            let (qualifier, field) = other.schema().qualified_field(index);
            let column = datafusion::common::Column::new(qualifier.cloned(), field.name());
            other.inputs().into_iter().find_map(|input| {
                let i = input.schema().index_of_column(&column).ok()?;
                float_aggregate_of(input, i)
            })
        }
    }
}

/// The order-sensitive float aggregate `expr`, over the columns of `input`, is computed from.
fn float_source(expr: &Expr, input: &LogicalPlan) -> Option<String> {
    match expr {
        Expr::Alias(alias) => float_source(&alias.expr, input),
        Expr::Cast(cast) if cast.field.data_type().is_floating() => float_source(&cast.expr, input),
        Expr::TryCast(cast) if cast.field.data_type().is_floating() => float_source(&cast.expr, input),
        Expr::Cast(_) | Expr::TryCast(_) => None,
        Expr::ScalarFunction(call) if ROUNDING.contains(&call.func.name().to_ascii_lowercase().as_str()) => None,
        Expr::AggregateFunction(call) => {
            order_sensitive(call.func.name(), &call.params.args, input).then(|| expr.to_string())
        }
        Expr::WindowFunction(call) => {
            order_sensitive(call.fun.name(), &call.params.args, input).then(|| expr.to_string())
        }
        other => other.column_refs().into_iter().find_map(|column| {
            let i = input.schema().index_of_column(column).ok()?;
            float_aggregate_of(input, i)
        }),
    }
}

/// Whether the aggregate `name` of `args` (over `input`'s columns) gives a float that depends on
/// the order of its rows.
fn order_sensitive(name: &str, args: &[Expr], input: &LogicalPlan) -> bool {
    use datafusion::logical_expr::ExprSchemable as _;
    let name = name.to_ascii_lowercase();
    let float_argument =
        args.first().and_then(|a| a.get_type(input.schema().as_ref()).ok()).is_some_and(|t| t.is_floating());
    FLOAT_MOMENTS.contains(&name.as_str()) || (FLOAT_SUMS.contains(&name.as_str()) && float_argument)
}
