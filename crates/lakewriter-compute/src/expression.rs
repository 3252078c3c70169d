//! Expressions written as SQL text — the conditions a project file holds: a check's, a merge's
//! `delete_when` — planned over the columns they may name in a session's dialect.

use chrono::NaiveDate;
use datafusion::common::DFSchema;
use datafusion::execution::SessionState;
use datafusion::prelude::{Expr, SessionContext};
use lakewriter_core::Semantics;

use crate::{Error, Result};

/// Plans `sql`, an expression over the columns of `schema` (qualified or not) in `semantics`'
/// dialect, with `$dt` bound to `dt` as a `DATE` value.
pub(crate) fn expression_text(
    ctx: &SessionContext,
    semantics: Semantics,
    sql: &str,
    schema: &DFSchema,
    dt: Option<NaiveDate>,
) -> Result<Expr> {
    let err = |source| Error::Expression { expression: sql.to_owned(), source: Box::new(source) };
    let state = crate::spark::session(ctx, semantics).state();
    crate::date::bound(sql_expression(&state, sql, schema).map_err(err)?, dt).map_err(err)
}

/// Plans `sql`, an expression over the columns of `schema`, in `state`'s dialect.
pub(crate) fn sql_expression(state: &SessionState, sql: &str, schema: &DFSchema) -> datafusion::error::Result<Expr> {
    let dialect = state.config().options().sql_parser.dialect;
    let mut ast = state.sql_to_expr(sql, &dialect)?;
    crate::spark::parsed_expr(state, &mut ast);
    let with_alias = datafusion::sql::sqlparser::ast::ExprWithAlias { expr: ast, alias: None };
    let expr = state
        .create_logical_expr_from_sql_expr(with_alias, schema)
        .map_err(|e| crate::spark::planning_error(state, e))?;
    crate::spark::analyzed_expr(state, expr, schema)
}
