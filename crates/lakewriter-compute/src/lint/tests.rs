//! Unit tests of the determinism rules, over plans of small SQL jobs.

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
    let sql = format!("SELECT customer_id, MIN(order_id) AS first_order, $dt AS dt {FROM_DAY} GROUP BY customer_id");
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
        format!("SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY {order}) AS n, dt {FROM_DAY}")
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
