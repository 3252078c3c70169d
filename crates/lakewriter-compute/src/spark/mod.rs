//! The `spark` dialect: SQL read by Spark's grammar, computed with Spark's functions, types and
//! operators, so that a query gives the answer Apache Spark gives.
//!
//! A session of the dialect ([`session`]) parses with the SQL parser's Spark dialect and holds
//! `datafusion-spark`'s functions and planners over DataFusion's. What it plans is then made
//! Spark's: the parsed statement by [`syntax`], the plan by [`coerce`] (Spark's analyzer rules,
//! its arithmetic in [`arith`]). Both run where a plan is made ([`crate::query`],
//! [`crate::statement`]), so that a plan carries its semantics whatever session later runs it.

mod aggregates;
mod arith;
mod calls;
mod cast;
mod coerce;
mod datetime;
mod decimal;
mod epoch;
mod equality;
mod extremes;
mod functions;
mod math;
mod months;
mod numcast;
mod refused;
mod replaced;
mod round;
mod strings;
mod sums;
mod syntax;
mod textcast;
mod trunc;
mod types;
mod windows;
mod zones;

use std::sync::Arc;

use datafusion::common::{DFSchema, DataFusionError, Result};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::sql::parser::Statement as DFStatement;
use datafusion_spark::SessionStateBuilderSpark;
use lakewriter_core::{Dialect, Semantics};

pub use arith::{Mode, Op, SparkArithmetic};

/// The settings of a session of the `spark` dialect, kept as an extension of its configuration.
#[derive(Debug, Clone, Copy)]
struct Spark {
    mode: Mode,
    /// The session time zone, an IANA name (see [`types`]).
    zone: &'static str,
}

/// A session that plans SQL in `semantics`' dialect, sharing `base`'s catalog, object stores and
/// settings: `base` itself for DataFusion's.
#[must_use]
pub fn session(base: &SessionContext, semantics: Semantics) -> SessionContext {
    match semantics.dialect {
        Dialect::DataFusion => base.clone(),
        Dialect::Spark => SessionContext::new_with_state(state(base.state(), semantics)),
    }
}

/// `state` made a state of `semantics`' dialect: itself for DataFusion's.
pub(crate) fn state(state: SessionState, semantics: Semantics) -> SessionState {
    if semantics.dialect == Dialect::DataFusion {
        return state;
    }
    let mut config: SessionConfig = state.config().clone();
    let options = config.options_mut();
    options.sql_parser.dialect = datafusion::common::config::Dialect::Spark;
    // A number with a fraction is an exact decimal, as Spark's literal.
    options.sql_parser.parse_float_as_decimal = true;
    options.execution.enable_ansi_mode = semantics.ansi;
    // The catalogs are `state`'s, shared: building must not put a new, empty default catalog in
    // place of the one `state`'s tables are in.
    options.catalog.create_default_catalog_and_schema = false;
    // NULL is the least value: first in an ascending order, last in a descending one.
    "nulls_min".clone_into(&mut options.sql_parser.default_null_ordering);
    let mode = if semantics.ansi { Mode::Ansi } else { Mode::Legacy };
    let zone = semantics.time_zone.name();
    // DataFusion's own functions of time (those the dialect runs) in the same zone.
    options.execution.time_zone = Some(zone.to_owned());
    config.set_extension(Arc::new(Spark { mode, zone }));
    let mut builder = SessionStateBuilder::new_from_existing(state)
        .with_config(config)
        .with_spark_features()
        .with_type_planner(Arc::new(types::SparkTypes { zone }));
    let functions = builder.scalar_functions().get_or_insert_with(Vec::new);
    functions.extend(functions::own(zone));
    functions.extend(round::functions(mode));
    functions.extend(epoch::functions(mode, zone));
    builder.build()
}

/// The settings of `state`'s dialect, if it is Spark's.
fn spark(state: &SessionState) -> Option<Spark> {
    state.config().get_extension::<Spark>().map(|spark| *spark)
}

/// The arithmetic mode of `state`'s dialect, if it is Spark's.
fn mode(state: &SessionState) -> Option<Mode> {
    spark(state).map(|spark| spark.mode)
}

/// Whether `state` plans SQL in Spark's dialect.
#[must_use]
pub fn is_spark(state: &SessionState) -> bool {
    mode(state).is_some()
}

/// `statement` as `state`'s dialect reads it.
pub(crate) fn parsed(state: &SessionState, mut statement: DFStatement) -> DFStatement {
    if is_spark(state)
        && let DFStatement::Statement(ast) = &mut statement
    {
        syntax::statement(ast);
    }
    statement
}

/// A statement parsed in the SQL parser's Spark dialect as Spark's grammar reads it.
pub(crate) fn spark_syntax(statement: &mut datafusion::sql::sqlparser::ast::Statement) {
    syntax::statement(statement);
}

/// A parsed SQL expression as it was written, before the dialect typed its literals.
#[must_use]
pub fn as_written(expr: &datafusion::sql::sqlparser::ast::Expr) -> String {
    syntax::as_written(expr)
}

/// A parsed SQL expression as `state`'s dialect reads it.
pub(crate) fn parsed_expr(state: &SessionState, expr: &mut datafusion::sql::sqlparser::ast::Expr) {
    if is_spark(state) {
        syntax::expression(expr);
    }
}

/// A planning error of `state`'s dialect: in Spark's, a function neither DataFusion nor the
/// dialect has is refused as the functions the dialect does not run are ([`functions`]).
pub(crate) fn planning_error(state: &SessionState, error: DataFusionError) -> DataFusionError {
    if !is_spark(state) {
        return error;
    }
    let message = error.strip_backtrace();
    match message.split_once("Invalid function '") {
        Some((_, rest)) => refused::refusal(rest.split('\'').next().unwrap_or_default()),
        None => error,
    }
}

/// `plan` (as the SQL planner made it) with the semantics of `state`'s dialect.
pub(crate) fn analyzed(state: &SessionState, plan: LogicalPlan) -> Result<LogicalPlan> {
    match spark(state) {
        Some(Spark { mode, zone }) => {
            functions::refused(&plan)?;
            coerce::plan(plan, mode, zone)
        }
        None => Ok(plan),
    }
}

/// `plan`, once DataFusion's analyzer has typed it, finished as `state`'s dialect computes it:
/// in Spark's, `typeof` folded to its argument's type (see [`functions::typeof_folded`]).
pub(crate) fn typed(state: &SessionState, plan: LogicalPlan) -> Result<LogicalPlan> {
    if is_spark(state) { functions::typeof_folded(plan) } else { Ok(plan) }
}

/// The functions `statement` calls that `state`'s Spark dialect does not run ([`functions`]), or
/// that no registry of the state holds, by name, sorted and once each.
pub(crate) fn refused_calls(state: &SessionState, statement: &DFStatement) -> Vec<String> {
    use datafusion::sql::sqlparser::ast::Visit;
    let DFStatement::Statement(ast) = statement else { return Vec::new() };
    let mut names = std::collections::BTreeSet::new();
    let _ = ast.visit(&mut functions::Calls(&mut |name: String| {
        // A function is run under its name or any of its aliases, as planning checks it.
        let runs = |canonical: &str, aliases: &[String]| {
            !functions::refused_name(canonical) || aliases.iter().any(|a| !functions::refused_name(a))
        };
        let run = if let Some(f) = state.scalar_functions().get(&name) {
            runs(f.name(), f.aliases())
        } else if let Some(f) = state.aggregate_functions().get(&name) {
            runs(f.name(), f.aliases())
        } else if let Some(f) = state.window_functions().get(&name) {
            runs(f.name(), f.aliases())
        } else {
            false
        };
        if !run {
            names.insert(name);
        }
    }));
    names.into_iter().collect()
}

/// `expr`, over the columns of `schema`, with the semantics of `state`'s dialect.
pub(crate) fn analyzed_expr(state: &SessionState, expr: Expr, schema: &DFSchema) -> Result<Expr> {
    match mode(state) {
        Some(mode) => {
            functions::refused_in(&expr)?;
            // Spark's rules first, then DataFusion's analyzer's, as a plan gets them: an
            // expression handed to a Delta write (a DELETE's or MERGE's condition) is never
            // analyzed after, and delta-rs compares only operands of one type.
            let expr = coerce::expr(expr, schema, mode)?;
            let mut rewriter = datafusion::optimizer::analyzer::type_coercion::TypeCoercionRewriter::new(schema);
            Ok(datafusion::common::tree_node::TreeNode::rewrite(expr, &mut rewriter)?.data)
        }
        None => Ok(expr),
    }
}

#[cfg(test)]
mod tests;
