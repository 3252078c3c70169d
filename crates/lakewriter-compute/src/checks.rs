//! A job's data checks, evaluated on its result before the commit.
//!
//! The result is held in memory (Arrow batches, computed once), so each check is a scan of it:
//! one aggregate counts the failing rows of every row-level check and the rows, each `unique`
//! column set is one grouping, and failing checks then read up to five examples.

use chrono::NaiveDate;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::functions_aggregate::expr_fn::{count, sum};
use datafusion::prelude::{DataFrame, Expr, SessionContext, lit, when};
use lakewriter_core::{Check, CheckKind, CheckOutcome, CheckValue, Checks, Semantics};

use crate::{Error, Materialized, Result, column};

/// Examples a failing check reports.
pub const EXAMPLES: usize = 5;

fn check_err(source: datafusion::error::DataFusionError) -> Error {
    Error::Checks { source: Box::new(source) }
}

/// What is wrong with each check of `checks` against a result of `schema`: a column it does not
/// have, an accepted value that is not of the column's type, a condition that does not parse, is
/// not a condition on one row, or is not a condition at all. Empty where all are sound.
#[must_use]
pub fn problems(
    ctx: &SessionContext,
    semantics: Semantics,
    schema: &DFSchema,
    checks: &Checks,
) -> Vec<(String, String)> {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let missing = |c: &String| {
        (!names.contains(&c.as_str()))
            .then(|| format!("the result has no column `{c}`; its columns: {}", names.join(", ")))
    };
    let mut found = Vec::new();
    for check in &checks.checks {
        let problem = match &check.kind {
            CheckKind::NotNull(c) => missing(c),
            CheckKind::AcceptedValues { column: c, values } => {
                missing(c).or_else(|| typed_values(schema, c, values).err())
            }
            CheckKind::Unique(columns) => columns.iter().find_map(missing),
            CheckKind::Expect(condition) => condition_problem(ctx, semantics, schema, condition),
            CheckKind::RowCount { .. } | CheckKind::ChangeVsPrevious { .. } => None,
        };
        if let Some(problem) = problem {
            found.push((check.name(), problem));
        }
    }
    found
}

/// `values` as literals of `column`'s type in `schema`, or which one is not of that type.
fn typed_values(schema: &DFSchema, column: &str, values: &[CheckValue]) -> std::result::Result<Vec<Expr>, String> {
    let field = schema.field_with_unqualified_name(column).map_err(|e| e.strip_backtrace())?;
    values
        .iter()
        .map(|v| {
            let value = match v {
                CheckValue::Bool(b) => ScalarValue::from(*b),
                CheckValue::Int(i) => ScalarValue::from(*i),
                CheckValue::Float(x) => ScalarValue::from(*x),
                CheckValue::Text(s) => ScalarValue::from(s.as_str()),
            };
            let typed = value.cast_to(field.data_type()).ok().filter(|t| !t.is_null());
            typed
                .map(|t| Expr::Literal(t, None))
                .ok_or_else(|| format!("the value {v} is not a {} (the type of `{column}`)", field.data_type()))
        })
        .collect()
}

/// Why `condition` is not a condition on one row of `schema`, if it is not one. A condition
/// whose type cannot be told before `$dt` is bound is taken as one.
fn condition_problem(ctx: &SessionContext, semantics: Semantics, schema: &DFSchema, condition: &str) -> Option<String> {
    let state = crate::spark::state(ctx.state(), semantics);
    let expr = match crate::expression::sql_expression(&state, condition, schema) {
        Err(e) => return Some(format!("not a valid condition on the result's columns: {}", e.strip_backtrace())),
        Ok(expr) => expr,
    };
    let mut per_group = false;
    let mut placeholder = false;
    let _ = expr.apply(|e| {
        per_group |= matches!(e, Expr::AggregateFunction(_) | Expr::WindowFunction(_));
        placeholder |= matches!(e, Expr::Placeholder(_));
        Ok(TreeNodeRecursion::Continue)
    });
    if per_group {
        return Some(
            "not a condition on one row: it uses an aggregate or window function (use row_count, or a job of its own)"
                .into(),
        );
    }
    match datafusion::logical_expr::ExprSchemable::get_type(&expr, schema) {
        Ok(DataType::Boolean | DataType::Null) => None,
        Err(_) if placeholder => None,
        Err(e) => Some(format!("not a valid condition on the result's columns: {}", e.strip_backtrace())),
        Ok(other) => Some(format!("not a condition: its value is of type {other}, not a boolean")),
    }
}

/// Evaluates `checks` on `result`. `replaced` is the number of rows the write would replace
/// (`change_vs_previous`), `None` where there are none yet; `dt` is bound to `$dt` in `expect`
/// conditions. A check that cannot be evaluated (see [`problems`]) is an error.
pub async fn evaluate(
    ctx: &SessionContext,
    semantics: Semantics,
    result: &Materialized,
    checks: &Checks,
    replaced: Option<u64>,
    dt: Option<NaiveDate>,
) -> Result<Vec<CheckOutcome>> {
    let df = result.dataframe(ctx).map_err(check_err)?;
    if let Some((check, problem)) = problems(ctx, semantics, df.schema(), checks).into_iter().next() {
        return Err(Error::BadCheck { check, problem });
    }
    let rows = result.rows() as u64;
    let conditions = checks.checks.iter().map(|c| failing(ctx, semantics, &df, c, dt)).collect::<Result<Vec<_>>>()?;
    let counts = failing_counts(&df, &conditions).await?;
    let mut outcomes = Vec::with_capacity(checks.checks.len());
    for ((check, condition), failing_rows) in checks.checks.iter().zip(conditions).zip(counts) {
        let outcome = |passed, failing_rows, detail, examples| CheckOutcome {
            name: check.name(),
            passed,
            failing_rows,
            severity: check.severity,
            detail,
            examples,
        };
        outcomes.push(match (&check.kind, condition) {
            (_, Some(condition)) => {
                let examples = if failing_rows > 0 { examples(&df, condition).await? } else { Vec::new() };
                outcome(failing_rows == 0, failing_rows, None, examples)
            }
            (CheckKind::Unique(columns), None) => {
                let (failing_rows, examples) = duplicates(&df, columns).await?;
                outcome(failing_rows == 0, failing_rows, None, examples)
            }
            (CheckKind::RowCount { min, max }, None) => {
                let (passed, detail) = row_count(rows, *min, *max);
                outcome(passed, 0, Some(detail), Vec::new())
            }
            (CheckKind::ChangeVsPrevious { max_row_count_change_pct }, None) => {
                let (passed, detail) = change(rows, replaced, *max_row_count_change_pct);
                outcome(passed, 0, Some(detail), Vec::new())
            }
            (_, None) => unreachable!("every other check has a condition on rows"),
        });
    }
    Ok(outcomes)
}

/// The condition a row fails `check` by, for the checks that look at one row at a time.
fn failing(
    ctx: &SessionContext,
    semantics: Semantics,
    df: &DataFrame,
    check: &Check,
    dt: Option<NaiveDate>,
) -> Result<Option<Expr>> {
    Ok(match &check.kind {
        CheckKind::NotNull(c) => Some(column(c).is_null()),
        CheckKind::AcceptedValues { column: c, values } => {
            let list = typed_values(df.schema(), c, values)
                .map_err(|problem| Error::BadCheck { check: check.name(), problem })?;
            Some(column(c).is_not_null().and(column(c).in_list(list, true)))
        }
        CheckKind::Expect(condition) => {
            Some(crate::query::condition(ctx, semantics, condition, df.schema().as_arrow(), dt)?.is_false())
        }
        CheckKind::Unique(_) | CheckKind::RowCount { .. } | CheckKind::ChangeVsPrevious { .. } => None,
    })
}

/// The rows failing each condition (0 where there is none), in one scan.
async fn failing_counts(df: &DataFrame, conditions: &[Option<Expr>]) -> Result<Vec<u64>> {
    let sums: Vec<Expr> = conditions
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.clone().map(|c| (i, c)))
        .map(|(i, c)| Ok(sum(when(c, lit(1_i64)).otherwise(lit(0_i64))?).alias(format!("f{i}"))))
        .collect::<datafusion::error::Result<_>>()
        .map_err(check_err)?;
    if sums.is_empty() {
        return Ok(vec![0; conditions.len()]);
    }
    let batches = df.clone().aggregate(vec![], sums).map_err(check_err)?.collect().await.map_err(check_err)?;
    Ok((0..conditions.len()).map(|i| crate::rows::first_u64(&batches, &format!("f{i}"))).collect())
}

/// Up to [`EXAMPLES`] rows matching `condition`, the first in column order, each as
/// `column=value, …`.
async fn examples(df: &DataFrame, condition: Expr) -> Result<Vec<String>> {
    let names: Vec<String> = df.schema().fields().iter().map(|f| f.name().clone()).collect();
    let rows = df.clone().filter(condition).map_err(check_err)?;
    crate::rows::first_rows(rows, &names, EXAMPLES).await.map_err(check_err)
}

/// Rows whose `columns` (none NULL) another row shares, and up to [`EXAMPLES`] such keys with
/// how many rows hold each.
async fn duplicates(df: &DataFrame, columns: &[String]) -> Result<(u64, Vec<String>)> {
    let keys: Vec<Expr> = columns.iter().map(|c| column(c)).collect();
    let present = keys.iter().cloned().map(Expr::is_not_null).reduce(Expr::and).unwrap_or(lit(true));
    let groups = df
        .clone()
        .filter(present)
        .and_then(|d| d.aggregate(keys, vec![count(lit(1_i64)).alias("__lw_rows")]))
        .and_then(|d| d.filter(column("__lw_rows").gt(lit(1_i64))))
        .map_err(check_err)?;
    let total = groups
        .clone()
        .aggregate(vec![], vec![sum(column("__lw_rows")).alias("n")])
        .map_err(check_err)?
        .collect()
        .await
        .map_err(check_err)?;
    let failing = crate::rows::first_u64(&total, "n");
    if failing == 0 {
        return Ok((0, Vec::new()));
    }
    let mut shown = columns.to_vec();
    shown.push("__lw_rows".into());
    let examples = crate::rows::first_rows(groups, &shown, EXAMPLES)
        .await
        .map_err(check_err)?
        .into_iter()
        .map(|e| e.replace("__lw_rows=", "rows="))
        .collect();
    Ok((failing, examples))
}

fn row_count(rows: u64, min: Option<u64>, max: Option<u64>) -> (bool, String) {
    let low = min.is_some_and(|m| rows < m);
    let high = max.is_some_and(|m| rows > m);
    let expected = match (min, max) {
        (Some(min), Some(max)) => format!("between {min} and {max}"),
        (Some(min), None) => format!("at least {min}"),
        (None, Some(max)) => format!("at most {max}"),
        (None, None) => "any number".into(),
    };
    (!(low || high), format!("{rows} rows; expected {expected}"))
}

#[allow(clippy::cast_precision_loss)]
fn change(rows: u64, replaced: Option<u64>, max_pct: f64) -> (bool, String) {
    match replaced {
        None | Some(0) => (true, format!("{rows} rows; no rows before it to compare with")),
        Some(before) => {
            let pct = (rows as f64 - before as f64) / before as f64 * 100.0;
            let passed = pct.abs() <= max_pct;
            (passed, format!("{rows} rows against {before} now ({pct:+.1}%); allowed ±{max_pct}%"))
        }
    }
}

#[cfg(test)]
mod tests;
