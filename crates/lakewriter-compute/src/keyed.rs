//! Keyed sources for `merge` and `append_dedup`: validated, deduplicated, classified.
//!
//! A keyed source is one batch (a day's changes), so it is held in memory; the target is only
//! scanned, for the key, `newer_by` and `_deleted` columns, with DataFusion's join pruning.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{Column, JoinType, ScalarValue, TableReference};
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::functions_window::expr_fn::row_number;
use datafusion::logical_expr::{ExprFunctionExt, LogicalPlan, Operator, SortExpr, binary_expr};
use std::ops::Not;

use datafusion::prelude::{DataFrame, Expr, SessionContext, coalesce, lit, when};

use lakewriter_core::Semantics;

use crate::rows::{describe_rows, first_u64};
use crate::{Error, Materialized, Result, column};

/// The tombstone column a `merge` with `delete_when` adds to its target.
pub const DELETED: &str = "_deleted";
const ROW_NUMBER: &str = "__lakewriter_row_number";
const ROWS: &str = "__lakewriter_rows";

/// How a keyed source is read.
#[derive(Debug, Clone)]
pub struct KeyedSpec<'a> {
    pub key: &'a [String],
    /// `merge`: the column whose greatest value wins. `None` for `append_dedup`.
    pub newer_by: Option<&'a str>,
    /// `merge`: a SQL condition on a source row that makes it a delete.
    pub delete_when: Option<&'a str>,
    /// The dialect `delete_when` is written in.
    pub semantics: Semantics,
    /// Fail on duplicate keys instead of keeping one row per key.
    pub duplicates_are_errors: bool,
    /// The condition ([`fill_condition`]) under which a target row the source does not replace
    /// has columns the table added since it was written filled in from its source row.
    pub fill: Option<&'a Expr>,
    /// The target rows a key is looked for in (a filter over the target's columns, qualified by
    /// `t`: the partitions of the source's keys, `append_dedup`'s `dedup_window`); `None`, the
    /// whole table.
    pub scope: Option<&'a Expr>,
    /// What a target row of a source row's key must also meet to match it, a condition over `t`
    /// and `s` (`append_dedup`'s `dedup_window` over a column); `None`, the key alone.
    pub matches: Option<&'a Expr>,
}

/// A validated, deduplicated keyed source.
#[derive(Debug, Clone)]
pub struct KeyedSource {
    /// One row per key.
    pub held: Materialized,
    /// Source rows dropped because another row of the same key won.
    pub duplicates_dropped: usize,
}

impl KeyedSource {
    /// The source's rows as a DataFrame (of its schema also where it has no row).
    pub fn dataframe(&self, ctx: &SessionContext) -> Result<DataFrame> {
        self.held.dataframe(ctx).map_err(plan_err)
    }

    /// The distinct values of the source's column `name`.
    pub async fn distinct_values(&self, ctx: &SessionContext, name: &str) -> Result<Vec<ScalarValue>> {
        let batches =
            self.dataframe(ctx)?.select(vec![column(name)]).and_then(DataFrame::distinct).map_err(plan_err)?;
        let mut values = Vec::new();
        for batch in batches.collect().await.map_err(plan_err)? {
            for row in 0..batch.num_rows() {
                values.push(ScalarValue::try_from_array(batch.column(0), row).map_err(plan_err)?);
            }
        }
        Ok(values)
    }
}

/// What applying a keyed source to its target will do, row by row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct KeyedCounts {
    /// New keys.
    pub inserted: u64,
    /// Existing keys whose row the source replaces (`merge`: the source's `newer_by` is greater),
    /// or fills in: the same row, written before columns it has were added (see
    /// [`fill_condition`]).
    pub updated: u64,
    /// Deletes applied: tombstones written over older rows, or for keys not seen yet.
    pub deleted: u64,
    /// Source rows that change nothing: existing keys that are not older than the source
    /// (`merge`), or that exist at all (`append_dedup`).
    pub unchanged: u64,
    pub duplicates_dropped: u64,
}

impl KeyedCounts {
    /// Whether applying the source changes the target at all.
    #[must_use]
    pub fn changes_anything(&self) -> bool {
        self.inserted + self.updated + self.deleted > 0
    }
}

/// The column `name` of the side `relation` (`s`, `t`) of a join.
fn qualified(relation: &str, name: &str) -> Expr {
    Expr::Column(Column::new(Some(TableReference::bare(relation)), name))
}

/// The key column `name` of `schema` (of the side `relation` of a join, where given) as it is
/// compared: normalized where it is a floating-point number (see [`crate::floating`]), keeping
/// its name.
fn key_of(relation: Option<&str>, name: &str, schema: &Schema) -> Expr {
    let expr = match relation {
        Some(relation) => qualified(relation, name),
        None => column(name),
    };
    match schema.field_with_name(name) {
        Ok(field) if crate::floating::is_floating(field.data_type()) => {
            crate::floating::key(expr, field.data_type()).alias(name)
        }
        _ => expr,
    }
}

fn plan_err(source: datafusion::error::DataFusionError) -> Error {
    Error::Keyed { source: Box::new(source) }
}

async fn count_rows(df: DataFrame) -> Result<usize> {
    df.count().await.map_err(plan_err)
}

/// Reads `plan` as a keyed source: adds the tombstone flag, refuses NULL keys and NULL
/// `newer_by`, and keeps one row per key — the greatest `newer_by`; on a tie a delete wins, then
/// the greatest value of each remaining column in column order, so the winner never depends on
/// file or thread order.
pub async fn prepare(ctx: &SessionContext, plan: LogicalPlan, spec: &KeyedSpec<'_>) -> Result<KeyedSource> {
    let df = with_tombstone(DataFrame::new(ctx.state(), plan), spec)?;
    let all = Materialized::collect(df).await.map_err(plan_err)?;
    let (schema, rows) = (all.schema.clone(), all.rows());
    let source = all.dataframe(ctx).map_err(plan_err)?;
    refuse_null_keys(&source, spec).await?;
    // A key's floating-point columns normalized: every NaN one key, -0.0 the key 0.0.
    let key_exprs: Vec<Expr> = spec.key.iter().map(|k| key_of(None, k, &schema)).collect();
    refuse_duplicate_keys(&source, spec, &key_exprs).await?;

    // Keep the winner of each key.
    let numbered = row_number()
        .partition_by(key_exprs.into_iter().map(Expr::unalias).collect())
        .order_by(winner_order(&schema, spec))
        .build()
        .map_err(plan_err)?
        .alias(ROW_NUMBER);
    let winners = source
        .window(vec![numbered])
        .map_err(plan_err)?
        .filter(column(ROW_NUMBER).eq(lit(1_u64)))
        .map_err(plan_err)?
        .drop_columns(&[ROW_NUMBER])
        .map_err(plan_err)?;
    let held = Materialized::collect(winners).await.map_err(plan_err)?;
    let duplicates_dropped = rows - held.rows();
    Ok(KeyedSource { held, duplicates_dropped })
}

/// `df` with the tombstone flag of `delete_when` added, after checking that the key and
/// `newer_by` columns exist and that the flag's name is free.
fn with_tombstone(mut df: DataFrame, spec: &KeyedSpec<'_>) -> Result<DataFrame> {
    let names: Vec<String> = df.schema().fields().iter().map(|f| f.name().clone()).collect();
    for needed in spec.key.iter().map(String::as_str).chain(spec.newer_by) {
        if !names.iter().any(|n| n == needed) {
            return Err(Error::MissingColumn { column: needed.to_owned(), columns: names.join(", ") });
        }
    }
    if let Some(condition) = spec.delete_when {
        if names.iter().any(|n| n == DELETED) {
            return Err(Error::ReservedColumn { column: DELETED.to_owned() });
        }
        let state = crate::spark::state(df.clone().into_parts().0, spec.semantics);
        let flag = crate::expression::sql_expression(&state, condition, df.schema())
            .map_err(|source| Error::DeleteWhen { source: Box::new(source) })?;
        df = df.with_column(DELETED, coalesce(vec![flag, lit(false)])).map_err(plan_err)?;
    }
    Ok(df)
}

/// Fails where a row has a NULL key or `newer_by`: bad input, named with examples.
async fn refuse_null_keys(source: &DataFrame, spec: &KeyedSpec<'_>) -> Result<()> {
    let nullable: Vec<&str> = spec.key.iter().map(String::as_str).chain(spec.newer_by).collect();
    let any_null = nullable.iter().map(|c| column(c).is_null()).reduce(Expr::or).unwrap_or(lit(false));
    let nulls = source.clone().filter(any_null).map_err(plan_err)?;
    let null_rows = nulls.clone().collect().await.map_err(plan_err)?;
    let null_count: usize = null_rows.iter().map(RecordBatch::num_rows).sum();
    if null_count > 0 {
        let shown: Vec<String> = nullable.iter().map(|c| (*c).to_owned()).collect();
        return Err(Error::NullKeys {
            count: null_count,
            columns: shown.join(", "),
            examples: describe_rows(&null_rows, &shown, 3).join("; "),
        });
    }
    Ok(())
}

/// Fails where a key appears more than once and the spec makes that an error (else [`prepare`]
/// keeps the winner of each key).
async fn refuse_duplicate_keys(source: &DataFrame, spec: &KeyedSpec<'_>, key_exprs: &[Expr]) -> Result<()> {
    let duplicated = source
        .clone()
        .aggregate(key_exprs.to_vec(), vec![count(lit(1)).alias(ROWS)])
        .map_err(plan_err)?
        .filter(column(ROWS).gt(lit(1_i64)))
        .map_err(plan_err)?;
    let duplicated_keys = count_rows(duplicated.clone()).await?;
    if duplicated_keys > 0 && spec.duplicates_are_errors {
        let sorted =
            duplicated.sort(spec.key.iter().map(|k| column(k).sort(true, true)).collect()).map_err(plan_err)?;
        let examples = sorted.limit(0, Some(10)).map_err(plan_err)?.collect().await.map_err(plan_err)?;
        return Err(Error::DuplicateKeys {
            keys: duplicated_keys,
            examples: describe_rows(&examples, spec.key, 10).join("; "),
        });
    }
    Ok(())
}

/// The order in which the rows of one key compete, the winner first: the greatest `newer_by`,
/// then a delete, then the greatest value of each remaining column in column order.
fn winner_order(schema: &SchemaRef, spec: &KeyedSpec<'_>) -> Vec<SortExpr> {
    let mut order = Vec::new();
    if let Some(newer_by) = spec.newer_by {
        order.push(column(newer_by).sort(false, false));
    }
    if spec.delete_when.is_some() {
        order.push(column(DELETED).sort(false, false));
    }
    for name in schema.fields().iter().map(|f| f.name()) {
        if !spec.key.contains(name) && Some(name.as_str()) != spec.newer_by && name != DELETED {
            order.push(column(name).sort(false, false));
        }
    }
    order
}

/// When a source row (`s`) fills in a target row (`t`) of its key that it does not replace: the
/// target row has NULL in every one of `fills` the table has (columns added since the row was
/// written, or by this write), the source has a value in one of them, and every other column
/// but the key holds the same in both (`IS NOT DISTINCT FROM`) — the same row, written before
/// the column existed. `None` where the source has none of `fills`.
#[must_use]
pub fn fill_condition(source: &Schema, table: &Schema, key: &[String], fills: &[String]) -> Option<Expr> {
    let in_table = |name: &str| table.field_with_name(name).is_ok();
    let fills: Vec<&String> = fills.iter().filter(|c| source.field_with_name(c).is_ok()).collect();
    let some_in_source = fills.iter().map(|c| qualified("s", c).is_not_null()).reduce(Expr::or)?;
    let empty_in_table = fills.iter().filter(|c| in_table(c)).map(|c| qualified("t", c).is_null());
    let same_elsewhere = source
        .fields()
        .iter()
        .map(|f| f.name())
        .filter(|name| !key.contains(name) && !fills.contains(name) && in_table(name))
        .map(|name| binary_expr(qualified("t", name), Operator::IsNotDistinctFrom, qualified("s", name)));
    Some(empty_in_table.chain(same_elsewhere).fold(some_in_source, Expr::and))
}

/// Classifies each row of `source` against `target` (absent: every key is new).
pub async fn classify(
    ctx: &SessionContext,
    source: &KeyedSource,
    target: Option<Arc<dyn TableProvider>>,
    spec: &KeyedSpec<'_>,
) -> Result<KeyedCounts> {
    let mut counts = KeyedCounts { duplicates_dropped: source.duplicates_dropped as u64, ..KeyedCounts::default() };
    let s = source.dataframe(ctx)?.alias("s").map_err(plan_err)?;
    let is_delete = if spec.delete_when.is_some() { qualified("s", DELETED) } else { lit(false) };
    let Some(target) = target else {
        let deleted = count_rows(s.filter(is_delete).map_err(plan_err)?).await? as u64;
        counts.inserted = source.held.rows() as u64 - deleted;
        counts.deleted = deleted;
        return Ok(counts);
    };
    let mut wanted: Vec<Expr> = spec.key.iter().map(|k| column(k)).collect();
    if let Some(newer_by) = spec.newer_by {
        wanted.push(column(newer_by));
    }
    for c in spec.matches.iter().flat_map(|m| m.column_refs()) {
        if c.relation.as_ref().is_some_and(|r| r.table() == "t") && !wanted.contains(&column(&c.name)) {
            wanted.push(column(&c.name));
        }
    }
    if spec.fill.is_some() {
        // A fill compares every column.
        wanted = target.schema().fields().iter().map(|f| column(f.name())).collect();
    }
    let mut t = ctx.read_table(target).and_then(|t| t.alias("t")).map_err(plan_err)?;
    if let Some(scope) = spec.scope {
        t = t.filter(scope.clone()).map_err(plan_err)?;
    }
    let t = t.select(wanted).map_err(plan_err)?.alias("t").map_err(plan_err)?;
    let (s_schema, t_schema) = (s.schema().as_arrow(), t.schema().as_arrow());
    let mut on: Vec<Expr> = spec
        .key
        .iter()
        .map(|k| key_of(Some("s"), k, s_schema).unalias().eq(key_of(Some("t"), k, t_schema).unalias()))
        .collect();
    on.extend(spec.matches.cloned());
    let joined = s.join_on(t, JoinType::Left, on).map_err(plan_err)?;
    let matched = qualified("t", &spec.key[0]).is_not_null();
    let wins = match spec.newer_by {
        Some(n) => matched.clone().and(qualified("s", n).gt(qualified("t", n))),
        None => lit(false),
    };
    let fills = matched.clone().and(wins.clone().not()).and(spec.fill.cloned().unwrap_or_else(|| lit(false)));
    let one_if = |cond: Expr| when(cond, lit(1_i64)).otherwise(lit(0_i64)).map_err(plan_err);
    let sums = vec![
        sum(one_if(matched.clone().not().and(is_delete.clone().not()))?).alias("inserted"),
        sum(one_if(wins.clone().and(is_delete.clone().not()).or(fills.clone()))?).alias("updated"),
        sum(one_if(is_delete.and(matched.clone().not().or(wins.clone())))?).alias("deleted"),
        sum(one_if(matched.and(wins.not()).and(fills.not()))?).alias("unchanged"),
    ];
    let totals = joined.aggregate(vec![], sums).map_err(plan_err)?.collect().await.map_err(plan_err)?;
    let value = |name: &str| first_u64(&totals, name);
    counts.inserted = value("inserted");
    counts.updated = value("updated");
    counts.deleted = value("deleted");
    counts.unchanged = value("unchanged");
    Ok(counts)
}

#[cfg(test)]
mod tests;
