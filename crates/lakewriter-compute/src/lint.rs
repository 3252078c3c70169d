//! Determinism checks over a job's logical plan (`$dt` still a placeholder): what would make two
//! runs of the same partition write different rows, or make a run fail or grow more costly by
//! itself. Pure: the plan, the job's settings and the declared unique keys in, findings out.
//!
//! - `nondeterministic` (error): a clock-dependent or random function;
//! - `order_not_total` (warning): an order-sensitive window function, or a `LIMIT`, whose order
//!   does not cover a declared unique key, so ties are broken by file or thread order;
//! - `unbounded_scan` (warning): a partitioned raw dataset read with no filter on its partition
//!   column;
//! - `outside_partition` (warning): a job whose write replaces the partition of `$dt` (an
//!   `overwrite_partition`, an `INSERT OVERWRITE … PARTITION`) whose partition column is not
//!   provably `$dt`;
//! - `float_aggregate` (warning): a column of the result computed by a `SUM` or `AVG` of floats
//!   (or a variance, a correlation), whose last bits depend on the order rows are added in.
//!
//! Which rules apply depends on what the job's write does, which the caller says ([`Scope`]) from
//! the mode the job resolves to, however it is written.
//!
//! Columns are matched by name (see docs/guide/lint.md, "Limits", for what that misses).

mod finding;
mod origin;
mod plan;
mod rules;

use std::collections::BTreeMap;

use datafusion::logical_expr::LogicalPlan;
use lakewriter_core::{DedupWindow, JobSpec, SourceSpec, TableRef};

pub use finding::{Finding, Rule, Severity};
use origin::{Origin, origin};
use rules::{float_aggregates, nondeterministic_calls, unbounded_scans, unordered};

/// What a job's write does, as far as the rules care: said by the write mode the job resolves to,
/// so that a job written as a statement and its `write = …` twin are checked alike.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    /// The write reads all history by design (a rebuild): `unbounded_scan` does not apply.
    pub reads_all_history: bool,
    /// The partition column whose `$dt` partition the write replaces: `outside_partition`
    /// checks where its values come from.
    pub day_partition: Option<&'a str>,
    /// An `append_dedup`'s key and `dedup_window`: `dedup_window` checks them.
    pub dedup: Option<(&'a [String], &'a DedupWindow)>,
}

/// Checks `plan`, the logical plan of `job`'s SQL with `$dt` unbound, against the determinism
/// rules that apply to its write (`scope`). `sources` are the unique keys the project declares.
/// With `allow_nondeterministic`, clock and random functions are not reported at all.
#[must_use]
pub fn lint(
    plan: &LogicalPlan,
    job: &JobSpec,
    scope: Scope<'_>,
    sources: &BTreeMap<TableRef, SourceSpec>,
) -> Vec<Finding> {
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
    for (column, aggregate) in float_aggregates(plan) {
        let message = format!(
            "`{column}` is {aggregate}, a floating-point sum whose last bits depend on the order rows are added in (file and thread order), so runs of the same partition can write different values (`verify` and `audit` then find it changed); sum a DECIMAL (e.g. CAST(x AS DECIMAL(18, 2))) or ROUND the result"
        );
        add(Severity::Warning, Rule::FloatAggregate, aggregate, message);
    }
    if !scope.reads_all_history {
        for (table, column) in unbounded_scans(plan) {
            let message = format!(
                "{table} is read with no filter on its partition column `{column}`: the run reads all history and its cost grows every day; add e.g. `WHERE {column} = $dt`"
            );
            add(Severity::Warning, Rule::UnboundedScan, table, message);
        }
    }
    if let Some(column) = scope.day_partition {
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
    if let Some(message) = scope.dedup.and_then(|(key, window)| dedup_window_gap(key, window)) {
        add(Severity::Warning, Rule::DedupWindow, "dedup_window".to_owned(), message);
    }
    findings
}

/// An `append_dedup` window whose key does not hold the column the window counts days in: the
/// same key can then arrive on a later day, and where its earlier row is outside the window it is
/// not looked for, and the key is appended again. A key that holds that column cannot recur on
/// another day, so every duplicate is inside the window.
fn dedup_window_gap(key: &[String], window: &DedupWindow) -> Option<String> {
    if key.contains(&window.column) {
        return None;
    }
    let keys = key.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    let (column, days) = (&window.column, window.days);
    Some(format!(
        "the key ({keys}) does not hold `{column}`, so a key can arrive again on a later day; where its earlier row is more than {days} days away in `{column}`, it is not looked for and the key is appended again (a second row); widen `dedup_window`, or leave it out to check every key the table holds"
    ))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
    use datafusion::catalog::{MemorySchemaProvider, SchemaProvider as _, TableProvider};
    use datafusion::datasource::MemTable;
    use datafusion::datasource::file_format::parquet::ParquetFormat;
    use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
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
    /// by `order_id`, in DataFusion's dialect (whose clock functions the rules are written for;
    /// the `spark` dialect refuses them at planning).
    async fn lint_with(sql: &str, job_keys: &str) -> Vec<Finding> {
        let text = format!(
            "root = \"lake\"\ndialect = \"datafusion\"\n[sources.\"raw.orders\"]\nunique = [\"order_id\"]\n[jobs.j]\ntarget = \"a.t\"\nsql = '''{sql}'''\n{job_keys}\n"
        );
        let project = Project::parse(&text, &PathBuf::from("p.toml")).unwrap();
        let job = &project.jobs["j"];
        let plan = crate::plan_sql(&session(), &crate::Query::text(sql, job.semantics)).await.unwrap();
        lint(&plan, job, scope_of(job), &project.sources)
    }

    /// The scope of a job written with a `write` key, as its mode says it (the modes are the
    /// runner's; `lakewriter`'s own tests check a statement job lints as its twin).
    fn scope_of(job: &JobSpec) -> Scope<'_> {
        use lakewriter_core::WriteSpec;
        Scope {
            reads_all_history: matches!(job.write, WriteSpec::Rebuild),
            day_partition: job.partition_by.as_deref().filter(|_| matches!(job.write, WriteSpec::OverwritePartition)),
            dedup: match &job.write {
                WriteSpec::AppendDedup { key, window: Some(window) } => Some((key.as_slice(), window)),
                _ => None,
            },
        }
    }

    async fn findings(sql: &str) -> Vec<Finding> {
        lint_with(sql, "write = \"overwrite_partition\"\npartition_by = \"dt\"").await
    }

    fn rules(findings: &[Finding]) -> Vec<Rule> {
        findings.iter().map(|f| f.rule).collect()
    }

    const FROM_DAY: &str = "FROM raw.orders WHERE dt = $dt";

    #[tokio::test]
    async fn a_dedup_window_a_key_can_recur_outside_of_is_a_warning() {
        let sql =
            format!("SELECT customer_id, MIN(order_id) AS first_order, $dt AS dt {FROM_DAY} GROUP BY customer_id");
        let dedup =
            |key: &str, extra: &str| format!("write = \"append_dedup\"\nkey = {key}\npartition_by = \"dt\"\n{extra}");
        let found = lint_with(&sql, &dedup("[\"customer_id\"]", "dedup_window = \"7 days\"")).await;
        assert_eq!(rules(&found), vec![Rule::DedupWindow], "{found:?}");
        assert_eq!((found[0].severity, found[0].construct.as_str()), (Severity::Warning, "dedup_window"));
        assert!(
            found[0].message.starts_with(
                "the key (`customer_id`) does not hold `dt`, so a key can arrive again on a later day; where its earlier row is more than 7 days away in `dt`"
            ),
            "{}",
            found[0]
        );
        // The window's own column in the key: a key never recurs on another day.
        assert_eq!(lint_with(&sql, &dedup("[\"dt\", \"customer_id\"]", "dedup_window = \"7 days\"")).await, vec![]);
        // No window: every key the table holds is looked up.
        assert_eq!(lint_with(&sql, &dedup("[\"customer_id\"]", "")).await, vec![]);
    }

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

    #[tokio::test]
    async fn an_order_sensitive_float_aggregate_written_by_the_job_is_a_warning() {
        let daily = |column: &str| format!("SELECT customer_id, {column}, $dt AS dt {FROM_DAY} GROUP BY customer_id");
        let sum = "sum(CAST(raw.orders.amount AS Float64))";
        for (column, construct) in [
            ("SUM(CAST(amount AS DOUBLE)) AS revenue", sum),
            ("AVG(CAST(amount AS FLOAT)) AS mean", "avg(CAST(raw.orders.amount AS Float32))"),
            ("SUM(CAST(amount AS DOUBLE)) / 2 AS half", sum),
            ("STDDEV(amount) AS spread", "stddev(raw.orders.amount)"),
        ] {
            let found = findings(&daily(column)).await;
            assert_eq!(rules(&found), vec![Rule::FloatAggregate], "{column}: {found:?}");
            assert_eq!((found[0].severity, found[0].construct.as_str()), (Severity::Warning, construct), "{column}");
            let name = column.rsplit(' ').next().expect("an alias");
            assert!(
                found[0].message.starts_with(&format!("`{name}` is {construct}, a floating-point sum")),
                "{}",
                found[0]
            );
            assert!(found[0].message.ends_with("sum a DECIMAL (e.g. CAST(x AS DECIMAL(18, 2))) or ROUND the result"));
        }
        // Through a CTE and a join.
        let cte = format!(
            "WITH s AS (SELECT customer_id, SUM(CAST(amount AS DOUBLE)) AS total {FROM_DAY} GROUP BY customer_id) \
             SELECT s.customer_id, s.total, $dt AS dt FROM s JOIN core.customers c ON c.customer_id = s.customer_id"
        );
        assert_eq!(rules(&findings(&cte).await), vec![Rule::FloatAggregate]);
        // Rounded, cast to a DECIMAL, exact (a DECIMAL, an average of integers), order-insensitive
        // (MIN), or not written: nothing to warn about.
        for column in [
            "ROUND(SUM(CAST(amount AS DOUBLE)), 2) AS revenue",
            "CAST(SUM(CAST(amount AS DOUBLE)) AS DECIMAL(18, 2)) AS revenue",
            "SUM(amount) AS revenue",
            "AVG(order_id) AS mean_id",
            "MIN(CAST(amount AS DOUBLE)) AS smallest",
            "COUNT(*) AS orders HAVING SUM(CAST(amount AS DOUBLE)) > 10.0",
        ] {
            let sql = match column.split_once(" HAVING ") {
                Some((column, having)) => format!("{} HAVING {having}", daily(column)),
                None => daily(column),
            };
            assert_eq!(findings(&sql).await, vec![], "{column}");
        }
    }
}
