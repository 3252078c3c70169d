//! Determinism checks over a job's logical plan (`$dt` still a placeholder): what would make two
//! runs of the same partition write different rows, or make a run fail or grow more costly by
//! itself. Pure: the plan, the job's settings and the declared unique keys in, findings out.
//!
//! - `nondeterministic` (error): a clock-dependent or random function;
//! - `order_not_total` (warning): an order-sensitive window function, or a `LIMIT`, whose order
//!   does not cover a declared unique key, so ties are broken by file or thread order;
//! - `unbounded_scan` (warning): a partitioned raw dataset read with no filter on its partition
//!   column;
//! - `outside_partition` (warning): an `overwrite_partition` job whose partition column is not
//!   provably `$dt`.
//!
//! Columns are matched by name (see the README for what that misses).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::listing::ListingTable;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{BinaryExpr, LogicalPlan, Operator, SortExpr, TableScan, Volatility};
use datafusion::prelude::Expr;
use lakewriter_core::{JobSpec, SourceSpec, TableRef, WriteSpec};
use serde::Serialize;

/// How bad a finding is: an error stops a run before it writes; a warning is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
        })
    }
}

/// The check that found something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    Nondeterministic,
    OrderNotTotal,
    UnboundedScan,
    OutsidePartition,
}

impl Rule {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nondeterministic => "nondeterministic",
            Self::OrderNotTotal => "order_not_total",
            Self::UnboundedScan => "unbounded_scan",
            Self::OutsidePartition => "outside_partition",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding of the determinism checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub rule: Rule,
    pub job: String,
    /// The construct, as displayed: a function call, a window expression, `LIMIT`, a table.
    pub construct: String,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job {}: {}: {}", self.job, self.rule, self.message)
    }
}

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

/// Checks `plan`, the logical plan of `job`'s SQL with `$dt` unbound, against the determinism
/// rules. `sources` are the unique keys the project declares. With `allow_nondeterministic`,
/// clock and random functions are not reported at all.
#[must_use]
pub fn lint(plan: &LogicalPlan, job: &JobSpec, sources: &BTreeMap<TableRef, SourceSpec>) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut add = |severity, rule, construct: String, message: String| {
        let finding = Finding { severity, rule, job: job.name.clone(), construct, message };
        if !findings.contains(&finding) {
            findings.push(finding);
        }
    };
    if !job.allow_nondeterministic {
        for function in nondeterministic_calls(plan) {
            let message = format!(
                "{function} differs between runs of the same partition; compute from $dt and the data instead, or set `allow_nondeterministic = true` on job `{}` to allow it",
                job.name
            );
            add(Severity::Error, Rule::Nondeterministic, function, message);
        }
    }
    for (construct, why) in unordered(plan, sources) {
        let message = format!(
            "{construct}: {why}, so rows that tie come in file and thread order and the rows it keeps or the numbers it gives can differ between runs; order by a unique key as well, or declare the source's key with [sources.\"schema.table\"] unique = [...]"
        );
        add(Severity::Warning, Rule::OrderNotTotal, construct, message);
    }
    if !matches!(job.write, WriteSpec::Rebuild) {
        for (table, column) in unbounded_scans(plan) {
            let message = format!(
                "{table} is read with no filter on its partition column `{column}`: the run reads all history and its cost grows every day; add e.g. `WHERE {column} = $dt`"
            );
            add(Severity::Warning, Rule::UnboundedScan, table, message);
        }
    }
    if let (WriteSpec::OverwritePartition, Some(column)) = (&job.write, job.partition_by.as_deref()) {
        let message = match origin(plan, column) {
            Origin::Dt | Origin::Unknown => None,
            Origin::Constant(constant) => Some((
                constant.clone(),
                format!(
                    "the partition column `{column}` is the constant {constant}, not $dt: a run for any other date writes outside its partition and fails (nothing is committed)"
                ),
            )),
            Origin::Unconstrained(source) => Some((
                source.clone(),
                format!(
                    "the partition column `{column}` comes from {source}, which no filter constrains to $dt: rows of other dates make the run fail (nothing is committed); add e.g. `WHERE {column} = $dt`"
                ),
            )),
        };
        if let Some((construct, message)) = message {
            add(Severity::Warning, Rule::OutsidePartition, construct, message);
        }
    }
    findings
}

/// Calls `f` on every node of `plan`, subqueries included.
fn visit(plan: &LogicalPlan, mut f: impl FnMut(&LogicalPlan)) {
    // The closure never fails, so neither does the walk.
    let _ = plan.apply_with_subqueries(|node| {
        f(node);
        Ok(TreeNodeRecursion::Continue)
    });
}

/// Calls `f` on every expression of every node of `plan`, nested ones included.
fn visit_exprs(plan: &LogicalPlan, mut f: impl FnMut(&Expr)) {
    visit(plan, |node| {
        let _ = node.apply_expressions(|expr| {
            expr.apply(|e| {
                f(e);
                Ok(TreeNodeRecursion::Continue)
            })
        });
    });
}

/// The clock-dependent and random function calls of `plan`, as displayed.
fn nondeterministic_calls(plan: &LogicalPlan) -> Vec<String> {
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

fn unalias(expr: &Expr) -> &Expr {
    match expr {
        Expr::Alias(alias) => unalias(&alias.expr),
        Expr::Cast(cast) => unalias(&cast.expr),
        Expr::TryCast(cast) => unalias(&cast.expr),
        other => other,
    }
}

/// The names of the plain columns among `exprs`.
fn column_names<'a>(exprs: impl IntoIterator<Item = &'a Expr>) -> BTreeSet<String> {
    exprs
        .into_iter()
        .filter_map(|e| match unalias(e) {
            Expr::Column(c) => Some(c.name.clone()),
            _ => None,
        })
        .collect()
}

const NOT_TOTAL: &str = "its sort keys cover no declared unique key of the tables it reads";

/// Order-sensitive window expressions and `LIMIT`s of `plan` whose order is not known to be
/// total: (construct, why).
fn unordered(plan: &LogicalPlan, sources: &BTreeMap<TableRef, SourceSpec>) -> Vec<(String, String)> {
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

/// An expression as written, roughly: a plain column by its name, a date literal as `DATE '…'`.
fn display_expr(expr: &Expr) -> String {
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

fn display_order(order: &[SortExpr]) -> String {
    let keys: Vec<String> =
        order.iter().map(|s| format!("{}{}", display_expr(&s.expr), if s.asc { "" } else { " DESC" })).collect();
    keys.join(", ")
}

/// The sort (its keys and input) a `LIMIT` takes its rows from, looking through projections
/// and aliases.
fn sort_below(plan: &LogicalPlan) -> Option<(&[SortExpr], &LogicalPlan)> {
    match plan {
        LogicalPlan::Sort(sort) => Some((&sort.expr, &sort.input)),
        LogicalPlan::Projection(p) => sort_below(&p.input),
        LogicalPlan::SubqueryAlias(a) => sort_below(&a.input),
        _ => None,
    }
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
fn unbounded_scans(plan: &LogicalPlan) -> Vec<(String, String)> {
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

/// Where an output column's values come from, as far as the plan tells.
#[derive(Debug, PartialEq, Eq)]
enum Origin {
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
fn origin(plan: &LogicalPlan, name: &str) -> Origin {
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
        LogicalPlan::Union(union) => {
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use datafusion::arrow::datatypes::{Field, Schema, TimeUnit};
    use datafusion::catalog::{MemorySchemaProvider, SchemaProvider as _, TableProvider};
    use datafusion::datasource::MemTable;
    use datafusion::datasource::file_format::parquet::ParquetFormat;
    use datafusion::datasource::listing::{ListingOptions, ListingTableConfig, ListingTableUrl};
    use datafusion::prelude::SessionContext;
    use lakewriter_core::Project;

    use super::*;

    /// A session with `raw.orders` (partitioned by `dt`, like a raw dataset) and `core.customers`
    /// (not partitioned).
    fn session() -> SessionContext {
        let ctx = SessionContext::new();
        let file_schema = Arc::new(Schema::new(vec![
            Field::new("order_id", DataType::Int64, false),
            Field::new("customer_id", DataType::Int64, false),
            Field::new("amount", DataType::Decimal128(12, 2), false),
            Field::new("updated_at", DataType::Timestamp(TimeUnit::Microsecond, None), false),
            Field::new("order_date", DataType::Date32, false),
        ]));
        let options = ListingOptions::new(Arc::new(ParquetFormat::default()))
            .with_file_extension(".parquet")
            .with_table_partition_cols(vec![("dt".to_owned(), DataType::Date32)]);
        let url = ListingTableUrl::parse("file:///nowhere/raw/orders/").unwrap();
        let config = ListingTableConfig::new(url).with_listing_options(options).with_schema(file_schema);
        let orders = ListingTable::try_new(config).unwrap();
        register(&ctx, "raw", "orders", Arc::new(orders));
        let customers = Schema::new(vec![
            Field::new("customer_id", DataType::Int64, false),
            Field::new("tier", DataType::Utf8, false),
            Field::new("dt", DataType::Date32, false),
        ]);
        let customers = MemTable::try_new(Arc::new(customers), vec![vec![]]).unwrap();
        register(&ctx, "core", "customers", Arc::new(customers));
        ctx
    }

    fn register(ctx: &SessionContext, schema: &str, table: &str, provider: Arc<dyn TableProvider>) {
        let tables = Arc::new(MemorySchemaProvider::new());
        tables.register_table(table.to_owned(), provider).unwrap();
        crate::catalog::register_schema(ctx, schema, tables).unwrap();
    }

    /// Lints `sql` as job `j` written with `write`, in a project declaring `raw.orders` unique
    /// by `order_id`.
    async fn lint_with(sql: &str, job_keys: &str) -> Vec<Finding> {
        let text = format!(
            "root = \"lake\"\n[sources.\"raw.orders\"]\nunique = [\"order_id\"]\n[jobs.j]\ntarget = \"a.t\"\nsql = '''{sql}'''\n{job_keys}\n"
        );
        let project = Project::parse(&text, &PathBuf::from("p.toml")).unwrap();
        let plan = crate::plan_sql(&session(), sql).await.unwrap();
        lint(&plan, &project.jobs["j"], &project.sources)
    }

    async fn findings(sql: &str) -> Vec<Finding> {
        lint_with(sql, "write = \"overwrite_partition\"\npartition_by = \"dt\"").await
    }

    fn rules(findings: &[Finding]) -> Vec<Rule> {
        findings.iter().map(|f| f.rule).collect()
    }

    const FROM_DAY: &str = "FROM raw.orders WHERE dt = $dt";

    #[tokio::test]
    async fn clean_daily_aggregate_has_no_findings() {
        let found =
            findings(&format!("SELECT customer_id, SUM(amount) AS revenue, $dt AS dt {FROM_DAY} GROUP BY customer_id"))
                .await;
        assert_eq!(found, vec![]);
    }

    #[tokio::test]
    async fn clock_and_random_functions_are_errors_unless_allowed() {
        for (call, shown) in
            [("now()", "now()"), ("current_date", "current_date()"), ("random()", "random()"), ("uuid()", "uuid()")]
        {
            let found = findings(&format!("SELECT order_id, {call} AS at, dt {FROM_DAY}")).await;
            assert_eq!(rules(&found), vec![Rule::Nondeterministic], "{call}: {found:?}");
            let f = &found[0];
            assert_eq!((f.severity, f.construct.as_str(), f.job.as_str()), (Severity::Error, shown, "j"), "{f:?}");
            assert!(f.message.contains("allow_nondeterministic = true") && f.message.contains("job `j`"), "{f}");
            assert!(f.to_string().starts_with(&format!("job j: nondeterministic: {shown}")), "{f}");
        }
        // In a subquery too.
        let found = findings(&format!("SELECT order_id, dt {FROM_DAY} AND order_id IN (SELECT order_id FROM raw.orders WHERE dt = $dt AND updated_at < now())")).await;
        assert_eq!(rules(&found), vec![Rule::Nondeterministic], "{found:?}");

        let allowed = lint_with(
            &format!("SELECT order_id, now() AS at, dt {FROM_DAY}"),
            "write = \"overwrite_partition\"\npartition_by = \"dt\"\nallow_nondeterministic = true",
        )
        .await;
        assert_eq!(allowed, vec![]);
    }

    #[tokio::test]
    async fn date_functions_of_constants_and_dt_are_deterministic() {
        let found = findings(&format!(
            "SELECT order_id, to_date('2026-01-01') AS d0, $dt + INTERVAL '1 day' AS d1, date_trunc('month', updated_at) AS m, dt {FROM_DAY} AND order_date >= $dt - INTERVAL '7 days'"
        ))
        .await;
        assert_eq!(found, vec![]);
    }

    #[tokio::test]
    async fn order_sensitive_windows_need_a_unique_key() {
        let window = |order: &str| {
            format!(
                "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY {order}) AS n, dt {FROM_DAY}"
            )
        };
        let found = findings(&window("updated_at")).await;
        assert_eq!(rules(&found), vec![Rule::OrderNotTotal], "{found:?}");
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(found[0].construct, "ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY updated_at)");
        assert_eq!(findings(&window("updated_at, order_id")).await, vec![]);
        // Tie-stable rankings are not order-sensitive.
        let rank =
            format!("SELECT order_id, RANK() OVER (PARTITION BY customer_id ORDER BY updated_at) AS n, dt {FROM_DAY}");
        assert_eq!(findings(&rank).await, vec![]);
        let lag = format!("SELECT order_id, LAG(amount) OVER (ORDER BY customer_id) AS prev, dt {FROM_DAY}");
        assert_eq!(rules(&findings(&lag).await), vec![Rule::OrderNotTotal]);
    }

    #[tokio::test]
    async fn limit_needs_an_order_by_a_unique_key() {
        let limit = |order: &str| format!("SELECT order_id, amount, dt {FROM_DAY} {order} LIMIT 10");
        let found = findings(&limit("")).await;
        assert_eq!(rules(&found), vec![Rule::OrderNotTotal], "{found:?}");
        assert_eq!(found[0].construct, "LIMIT 10");
        assert!(found[0].message.contains("no ORDER BY"), "{}", found[0]);
        let found = findings(&limit("ORDER BY amount DESC")).await;
        assert_eq!(rules(&found), vec![Rule::OrderNotTotal]);
        assert_eq!(found[0].construct, "ORDER BY amount DESC LIMIT 10");
        assert_eq!(findings(&limit("ORDER BY amount DESC, order_id")).await, vec![]);
        // The group columns of an aggregation are unique in its result.
        let top = format!(
            "SELECT customer_id, SUM(amount) AS revenue, $dt AS dt {FROM_DAY} GROUP BY customer_id ORDER BY revenue DESC, customer_id LIMIT 5"
        );
        assert_eq!(findings(&top).await, vec![]);
    }

    #[tokio::test]
    async fn a_partitioned_raw_scan_needs_a_filter_on_its_partition_column() {
        let found = findings("SELECT order_id, $dt AS dt FROM raw.orders").await;
        assert_eq!(rules(&found), vec![Rule::UnboundedScan], "{found:?}");
        assert_eq!(found[0].construct, "raw.orders");
        assert!(found[0].message.contains("reads all history"), "{}", found[0]);
        assert_eq!(findings(&format!("SELECT order_id, $dt AS dt {FROM_DAY}")).await, vec![]);
        // The filter may be outside a subquery or CTE.
        let cte = "WITH o AS (SELECT * FROM raw.orders) SELECT order_id, dt FROM o WHERE dt = $dt";
        assert_eq!(findings(cte).await, vec![]);
        // A table that is not a partitioned raw dataset is not reported.
        assert_eq!(findings("SELECT customer_id, $dt AS dt FROM core.customers").await, vec![]);
        // A rebuild reads everything by design.
        assert_eq!(lint_with("SELECT order_id FROM raw.orders", "write = \"rebuild\"").await, vec![]);
    }

    #[tokio::test]
    async fn the_partition_column_must_be_dt() {
        assert_eq!(findings("SELECT order_id, $dt AS dt FROM raw.orders WHERE dt = $dt").await, vec![]);
        let found = findings("SELECT order_id, DATE '2026-01-01' AS dt FROM raw.orders WHERE dt = $dt").await;
        assert_eq!(rules(&found), vec![Rule::OutsidePartition], "{found:?}");
        assert!(found[0].message.contains("constant"), "{}", found[0]);
        assert_eq!(found[0].construct, "DATE '2026-01-01'");
        // A source column: constrained to $dt, or not.
        assert_eq!(
            findings("SELECT order_id, order_date AS dt FROM raw.orders WHERE dt = $dt AND order_date = $dt").await,
            vec![]
        );
        let found = findings("SELECT order_id, order_date AS dt FROM raw.orders WHERE dt = $dt").await;
        assert_eq!(rules(&found), vec![Rule::OutsidePartition], "{found:?}");
        assert_eq!(found[0].construct, "raw.orders.order_date");
        // Another write mode does not own a partition.
        let merge = lint_with(
            "SELECT order_id, DATE '2026-01-01' AS dt, updated_at FROM raw.orders WHERE dt = $dt",
            "write = \"merge\"\nkey = [\"order_id\"]\nnewer_by = \"updated_at\"",
        )
        .await;
        assert_eq!(merge, vec![]);
    }
}
