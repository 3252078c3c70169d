//! Planning a job's SQL for one logical date.

use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::datatypes::Schema;
use datafusion::common::DFSchema;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::SessionState;
use datafusion::execution::context::SQLOptions;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{DataFrame, Expr, SessionContext};
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast;
use lakewriter_core::{InputFile, Semantics};

use crate::date::dt_param;
use crate::located::Origin;
use crate::rows::{first_rows, first_u64};
use crate::{Error, Result, column};

/// A job's SQL planned for one date.
#[derive(Debug, Clone)]
pub struct PartitionQuery {
    /// The logical plan with `$dt` replaced by its value, ready to stream into a writer.
    pub plan: LogicalPlan,
    /// The files the physical plan scans after partition pruning, sorted.
    pub files: Vec<InputFile>,
    /// The raw datasets the plan reads that have no file for its date (`schema.table`, sorted);
    /// none for a plan without a date.
    pub no_input: Vec<String>,
}

/// Job SQL may only be a query: DDL, DML and statements such as `SET` are refused, so a job
/// cannot change anything by itself.
fn read_only() -> SQLOptions {
    SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false)
}

/// A query to plan, read-only, with `$dt` bound: a job's SQL, or a statement's query (an
/// INSERT's, a MERGE's source, a `lakewriter sql` SELECT or EXPLAIN), in its dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    source: Source,
    /// The dialect it is read and computed in.
    pub semantics: Semantics,
    /// Where its text is written, for its errors ([`Query::written_at`]).
    origin: Option<Box<Origin>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// SQL text (a job with a `write` mode, a MERGE's source table): parsed where it is planned,
    /// so that its syntax errors are its plan's.
    Text(String),
    /// A statement as the parser read it: planned from its AST, never printed back to SQL.
    Parsed(Box<ast::Statement>),
}

impl Query {
    /// SQL text in `semantics`' dialect.
    #[must_use]
    pub fn text(sql: impl Into<String>, semantics: Semantics) -> Self {
        Self { source: Source::Text(sql.into()), semantics, origin: None }
    }

    /// A statement the parser read in `semantics`' dialect.
    #[must_use]
    pub fn parsed(statement: ast::Statement, semantics: Semantics) -> Self {
        Self { source: Source::Parsed(Box::new(statement)), semantics, origin: None }
    }

    /// This query, its text written at `origin`: its errors name the file, line and column.
    #[must_use]
    pub fn written_at(self, origin: Origin) -> Self {
        Self { origin: Some(Box::new(origin)), ..self }
    }

    /// `source`, an error reading or planning it in `state`, with where it is in its text.
    fn error(&self, state: &SessionState, source: datafusion::error::DataFusionError) -> Error {
        let text = match &self.source {
            Source::Text(sql) => Some(sql.as_str()),
            Source::Parsed(_) => None,
        };
        crate::located::sql_error(state, text, self.origin.as_deref(), source)
    }

    /// The session that plans it: `ctx`'s, in the query's dialect.
    fn session(&self, ctx: &SessionContext) -> SessionContext {
        crate::spark::session(ctx, self.semantics)
    }

    /// The statement DataFusion plans: the text parsed in the session's dialect, or the AST.
    fn statement(&self, state: &SessionState) -> datafusion::error::Result<DFStatement> {
        let statement = match &self.source {
            // Spark's grammar as `lakewriter sql` and statement jobs read it (its literals).
            Source::Text(sql) if crate::spark::is_spark(state) => {
                let mut statements = crate::parser::spark_statements(sql)?;
                match (statements.pop(), statements.is_empty()) {
                    (Some(statement), true) => DFStatement::Statement(Box::new(statement)),
                    _ => return datafusion::common::plan_err!("a query is one statement"),
                }
            }
            Source::Text(sql) => {
                let dialect = state.config().options().sql_parser.dialect;
                state.sql_to_statement(sql, &dialect)?
            }
            Source::Parsed(statement) => DFStatement::Statement(statement.clone()),
        };
        Ok(crate::spark::parsed(state, statement))
    }

    /// The query planned (read-only: see [`read_only`], so never a statement that would run as
    /// it is planned) in its dialect, as a data frame of the session `ctx`.
    async fn dataframe(&self, ctx: &SessionContext) -> Result<DataFrame> {
        let state = self.session(ctx).state();
        let err = |e| self.error(&state, e);
        let statement = self.statement(&state).map_err(err)?;
        let planned = state.statement_to_plan(statement).await;
        let plan = planned.map_err(|e| err(crate::spark::planning_error(&state, e)))?;
        let plan = crate::spark::analyzed(&state, plan).map_err(err)?;
        read_only().verify_plan(&plan).map_err(err)?;
        Ok(DataFrame::new(state, plan))
    }
}

impl std::fmt::Display for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Source::Text(sql) => f.write_str(sql),
            Source::Parsed(statement) => statement.fmt(f),
        }
    }
}

/// Plans `query` (read-only, like [`plan_partition`]) without binding `$dt`: the logical plan as
/// written, with `$dt` still a placeholder, for the determinism checks.
pub async fn plan_sql(ctx: &SessionContext, query: &Query) -> Result<LogicalPlan> {
    Ok(query.dataframe(ctx).await?.into_unoptimized_plan())
}

/// The tables `query` reads, as `(schema, table)`: DataFusion's own resolution of the
/// statement's table references — the list its planner looks the tables up by — without planning
/// it, so that it works before any of them exists. Common table expressions are not tables; a
/// name without a schema has `None`.
pub fn table_references(ctx: &SessionContext, query: &Query) -> Result<Vec<(Option<String>, String)>> {
    let state = query.session(ctx).state();
    let err = |source| query.error(&state, source);
    let statement = query.statement(&state).map_err(err)?;
    let references = state.resolve_table_references(&statement).map_err(err)?;
    Ok(references.into_iter().map(|r| (r.schema().map(str::to_owned), r.table().to_owned())).collect())
}

/// The functions `query` calls that its dialect refuses to run — in the `spark` dialect, those it
/// has no Spark-exact implementation of (see [`crate::spark`]) —, by name, sorted; none in
/// DataFusion's. Read from the parsed statement, so that every one is named, where planning stops
/// at the first.
pub fn refused_functions(ctx: &SessionContext, query: &Query) -> Result<Vec<String>> {
    let state = query.session(ctx).state();
    if !crate::spark::is_spark(&state) {
        return Ok(Vec::new());
    }
    let statement = query.statement(&state).map_err(|source| query.error(&state, source))?;
    Ok(crate::spark::refused_calls(&state, &statement))
}

/// Plans `query` with `$dt` bound to `dt` as a typed `DATE` value (`None`: a run without a date,
/// in which `$dt` is an error). Only a query is accepted (see [`read_only`]). The plan reads the
/// raw files this planning listed, however often it is executed ([`crate::raw::pinned_scans`]).
pub async fn plan_partition(ctx: &SessionContext, query: &Query, dt: Option<NaiveDate>) -> Result<PartitionQuery> {
    Prepared::new(ctx, query).await?.bind(dt).await
}

/// A query planned with `$dt` unbound, to be bound to one date after another: the SQL is parsed,
/// its tables looked up (a Delta table at its version then) and its plan made once; each
/// [`Prepared::bind`] is what [`plan_partition`] does for its date from there on — the raw files
/// are listed for each. What `status` plans its days from.
#[derive(Debug, Clone)]
pub struct Prepared(DataFrame);

impl Prepared {
    /// `query` planned (read-only) in the session `ctx`, `$dt` still unbound.
    pub async fn new(ctx: &SessionContext, query: &Query) -> Result<Self> {
        Ok(Self(query.dataframe(ctx).await?))
    }

    /// The query with `$dt` bound to `dt`, planned physically to list the files it reads.
    pub async fn bind(&self, dt: Option<NaiveDate>) -> Result<PartitionQuery> {
        let param = dt.map_or_else(|| "a run without --dt".to_owned(), |dt| format!("$dt = {dt}"));
        let plan_err = |source| Error::Plan { param: param.clone(), source: Box::new(source) };
        let df = match dt {
            Some(dt) => self.0.clone().with_param_values(dt_param(dt)).map_err(plan_err)?,
            None => self.0.clone(),
        };
        // The files this planning lists are the ones the plan reads when it runs.
        let (state, bound) = df.into_parts();
        // Typed by DataFusion's analyzer once `$dt` is a value, so that the schema is the rows'
        // (unanalyzed, a CASE has its first branch's type: an `integer` column of `Int64` values).
        let bound = state.analyzer().execute_and_check(bound, state.config_options(), |_, _| {}).map_err(plan_err)?;
        let bound = crate::spark::typed(&state, bound).map_err(plan_err)?;
        let plan = crate::raw::pinned_scans(bound).map_err(plan_err)?;
        let plan = crate::engine::distributed(plan, &state);
        let df = DataFrame::new(state, plan.clone());
        let physical = df.create_physical_plan().await.map_err(|e| match crate::located::unwrap_input_error(e) {
            Ok(input) => input,
            Err(other) => plan_err(other),
        })?;
        let mut files = Vec::new();
        collect_files(&physical, &mut files);
        files.sort();
        files.dedup();
        let no_input = if dt.is_some() { crate::raw::without_files(&plan) } else { Vec::new() };
        Ok(PartitionQuery { plan, files, no_input })
    }
}

fn collect_files(plan: &Arc<dyn ExecutionPlan>, out: &mut Vec<InputFile>) {
    if let Some(source) = plan.downcast_ref::<DataSourceExec>()
        && let Some(config) = source.data_source().downcast_ref::<FileScanConfig>()
    {
        let local = config.object_store_url.as_str().starts_with("file://");
        for group in &config.file_groups {
            out.extend(group.files().iter().map(|f| input_file(&f.object_meta, local)));
        }
    }
    for child in plan.children() {
        collect_files(child, out);
    }
}

/// What identifies an input file's content. On a local disk that is its size and modification
/// time to the second, not the e-tag object_store derives from the inode: a copy of the lakehouse
/// (`cp -a`, `rsync -a`) keeps its fingerprints. Elsewhere (S3) the e-tag follows the content.
fn input_file(meta: &object_store::ObjectMeta, local: bool) -> InputFile {
    use chrono::SubsecRound;
    InputFile {
        path: meta.location.to_string(),
        size: meta.size,
        modified: Some(if local { meta.last_modified.trunc_subsecs(0) } else { meta.last_modified }.to_rfc3339()),
        e_tag: if local { None } else { meta.e_tag.clone() },
    }
}

/// Parses `sql`, a condition over the columns of `schema` in `semantics`' dialect, with `$dt`
/// bound to `dt`.
pub fn condition(
    ctx: &SessionContext,
    semantics: Semantics,
    sql: &str,
    schema: &Schema,
    dt: Option<NaiveDate>,
) -> Result<Expr> {
    let schema = DFSchema::try_from(schema.clone()).map_err(|source| Error::Predicate { source: Box::new(source) })?;
    crate::expression::expression_text(ctx, semantics, sql, &schema, dt).map_err(|e| match e {
        Error::Expression { source, .. } => Error::Predicate { source },
        other => other,
    })
}

/// How two sets of rows differ, counted as multisets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowDiff {
    /// Rows of `after` not in `before` (a row twice in `after` and once in `before` is one).
    pub added: u64,
    /// Rows of `before` not in `after`.
    pub removed: u64,
    /// A few of the added rows, each as `column=value, …`.
    pub added_examples: Vec<String>,
    /// A few of the removed rows.
    pub removed_examples: Vec<String>,
}

/// How the rows of `after` differ from those of `before` (same columns), with up to `examples`
/// rows of each side. Memory holds the distinct rows of both, with their counts.
pub async fn diff(before: DataFrame, after: DataFrame, examples: usize) -> Result<RowDiff> {
    use datafusion::functions_aggregate::expr_fn::sum;
    use datafusion::prelude::{lit, when};

    let err = |source| Error::Diff { source: Box::new(source) };
    let side = |df: DataFrame, in_before: i64| {
        df.with_column("__lw_before", lit(in_before)).and_then(|df| df.with_column("__lw_after", lit(1 - in_before)))
    };
    let a = side(before, 1).map_err(err)?;
    let names: Vec<String> =
        a.schema().fields().iter().map(|f| f.name().clone()).filter(|n| !n.starts_with("__lw_")).collect();
    let columns: Vec<Expr> = names.iter().map(|n| column(n)).collect();
    let counted = a
        .union(side(after, 0).map_err(err)?)
        .and_then(|df| {
            df.aggregate(
                columns,
                vec![sum(column("__lw_before")).alias("__lw_b"), sum(column("__lw_after")).alias("__lw_a")],
            )
        })
        .map_err(err)?
        .cache()
        .await
        .map_err(err)?;
    let excess = |x: &str, y: &str| when(column(x).gt(column(y)), column(x) - column(y)).otherwise(lit(0_i64));
    let totals = counted
        .clone()
        .aggregate(
            vec![],
            vec![
                sum(excess("__lw_a", "__lw_b").map_err(err)?).alias("added"),
                sum(excess("__lw_b", "__lw_a").map_err(err)?).alias("removed"),
            ],
        )
        .map_err(err)?
        .collect()
        .await
        .map_err(err)?;
    let (added_examples, removed_examples) = if examples == 0 {
        (Vec::new(), Vec::new())
    } else {
        (
            sample(&counted, "__lw_a", "__lw_b", &names, examples).await?,
            sample(&counted, "__lw_b", "__lw_a", &names, examples).await?,
        )
    };
    Ok(RowDiff {
        added: first_u64(&totals, "added"),
        removed: first_u64(&totals, "removed"),
        added_examples,
        removed_examples,
    })
}

/// Up to `examples` rows of `counted` (distinct rows with their counts `__lw_a` and `__lw_b`) whose count
/// `x` exceeds `y`, over the columns `names`.
async fn sample(counted: &DataFrame, x: &str, y: &str, names: &[String], examples: usize) -> Result<Vec<String>> {
    let err = |source| Error::Diff { source: Box::new(source) };
    let rows = counted.clone().filter(column(x).gt(column(y))).map_err(err)?;
    first_rows(rows, names, examples).await.map_err(err)
}

#[cfg(test)]
mod tests {
    use datafusion::prelude::SessionContext;

    /// Columns SQL names only in quotes, or named like the diff's own counts (`a`, `b`), are
    /// compared as any other.
    #[tokio::test]
    async fn rows_of_columns_of_any_name_are_compared() {
        let ctx = SessionContext::new();
        let rows = |sql: &'static str| {
            let ctx = ctx.clone();
            async move { ctx.sql(sql).await.expect("plans") }
        };
        let before = rows(r#"SELECT * FROM (VALUES (1, 'x', 10), (2, 'y', 20)) AS t("OrderId", "quo""te", a)"#).await;
        let after = rows(r#"SELECT * FROM (VALUES (1, 'x', 10), (3, 'z', 30)) AS t("OrderId", "quo""te", a)"#).await;
        let diff = super::diff(before, after, 5).await.expect("a diff");
        assert_eq!((diff.added, diff.removed), (1, 1));
        assert_eq!(diff.added_examples, ["OrderId=3, quo\"te=z, a=30"]);
        assert_eq!(diff.removed_examples, ["OrderId=2, quo\"te=y, a=20"]);
    }

    /// The SQL functions jobs write — string, regex, unicode, date and time, hashes, encodings,
    /// arrays and structs — are in the build (DataFusion's default features, which deltalake-core
    /// turns on; a build without them would fail jobs at planning).
    #[tokio::test]
    async fn the_sql_functions_jobs_use_are_built_in() {
        let sql = "SELECT upper('a'), concat_ws('-', 'a', 'b'), split_part('a,b', ',', 2), lpad('7', 3, '0'), \
                   regexp_replace('a1', '[0-9]', 'x'), regexp_like('a1', '^a'), character_length('é'), \
                   substr('abc', 2), date_trunc('month', TIMESTAMP '2026-09-30 10:00:00'), \
                   to_date('2026-09-30'), date_part('dow', DATE '2026-09-30'), to_char(DATE '2026-09-30', '%Y'), \
                   md5('a'), sha256('a'), encode('a', 'hex'), array_length(make_array(1, 2)), \
                   array_has(make_array(1, 2), 2), named_struct('k', 1)";
        let batches = SessionContext::new().sql(sql).await.expect("plans").collect().await.expect("runs");
        assert_eq!(batches.iter().map(datafusion::arrow::array::RecordBatch::num_rows).sum::<usize>(), 1);
    }
}
