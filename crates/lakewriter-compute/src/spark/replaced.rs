//! Spark's functions that Spark itself defines as another expression (its `RuntimeReplaceable`
//! expressions, `nvl2` as `IF(IS NOT NULL …)`, `to_date(x)` as `CAST(x AS DATE)`), replaced by
//! that expression on the parsed statement, so that they compute what the expression does in the
//! dialect. Each replacement is the one Spark's source gives the function (`nullExpressions.scala`,
//! `stringExpressions.scala`, `datetimeExpressions.scala`).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::LazyLock;

use datafusion::sql::sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::SparkSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// Each function (its name and number of arguments) and the expression Spark replaces it by,
/// its arguments written `_1`, `_2`, ….
const REPLACED: &[(&str, usize, &str)] = &[
    // nullExpressions.scala
    ("nvl2", 3, "CASE WHEN _1 IS NOT NULL THEN _2 ELSE _3 END"),
    ("zeroifnull", 1, "nvl(_1, 0)"),
    ("nullifzero", 1, "nullif(_1, 0)"),
    ("isnull", 1, "_1 IS NULL"),
    ("isnotnull", 1, "_1 IS NOT NULL"),
    // stringExpressions.scala
    ("ucase", 1, "upper(_1)"),
    ("lcase", 1, "lower(_1)"),
    ("startswith", 2, "starts_with(_1, _2)"),
    ("endswith", 2, "ends_with(_1, _2)"),
    ("right", 2, "CASE WHEN _1 IS NULL THEN NULL WHEN _2 <= 0 THEN '' ELSE substring(_1, -_2, _2) END"),
    ("locate", 2, "instr(_2, _1)"),
    // `StringLocate`: 0 for a NULL or a non-positive start, 1 for the empty string.
    (
        "locate",
        3,
        "CASE WHEN _3 IS NULL THEN 0 WHEN _1 IS NULL OR _2 IS NULL THEN NULL WHEN _3 < 1 THEN 0 WHEN _1 = '' THEN 1 \
         WHEN instr(substring(_2, _3), _1) = 0 THEN 0 ELSE instr(substring(_2, _3), _1) + _3 - 1 END",
    ),
    // datetimeExpressions.scala: without a pattern, text is read as a cast reads it.
    ("to_date", 1, "CAST(_1 AS DATE)"),
    ("to_timestamp", 1, "CAST(_1 AS TIMESTAMP)"),
    ("try_to_timestamp", 1, "TRY_CAST(_1 AS TIMESTAMP)"),
    ("date_from_unix_date", 1, "date_add(DATE'1970-01-01', _1)"),
];

/// The replacements as parsed, by name and arity.
static TEMPLATES: LazyLock<HashMap<(&'static str, usize), Expr>> = LazyLock::new(|| {
    REPLACED
        .iter()
        .map(|&(name, arity, sql)| {
            let mut parser = Parser::new(&SparkSqlDialect {}).try_with_sql(sql).expect("a replacement tokenizes");
            ((name, arity), parser.parse_expr().expect("a replacement parses"))
        })
        .collect()
});

/// Spark's replacement of `expr`, if it is a call of one of [`REPLACED`]'s functions (plain
/// calls only: not a window or an aggregate's `FILTER`): the replacing expression as parsed, and
/// the call's arguments, which [`filled`] puts in it.
pub(super) fn replacement(expr: &Expr) -> Option<(Expr, Vec<Expr>)> {
    let Expr::Function(Function { name, args: FunctionArguments::List(list), over: None, filter: None, .. }) = expr
    else {
        return None;
    };
    let name = super::functions::called(name)?;
    let args: Option<Vec<Expr>> = list
        .args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect();
    let args = args?;
    let template = TEMPLATES.get(&(name.as_str(), args.len()))?.clone();
    Some((template, args))
}

/// `template` with the arguments in place of `_1`, `_2`, ….
pub(super) fn filled(mut template: Expr, args: &[Expr]) -> Expr {
    let _ = template.visit(&mut Arguments(args));
    Expr::Nested(Box::new(template))
}

/// Puts the arguments in place of `_1`, `_2`, ….
struct Arguments<'a>(&'a [Expr]);

impl VisitorMut for Arguments<'_> {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if let Expr::Identifier(Ident { value, .. }) = expr
            && let Some(n) = value.strip_prefix('_').and_then(|n| n.parse::<usize>().ok())
            && let Some(arg) = n.checked_sub(1).and_then(|i| self.0.get(i))
        {
            *expr = arg.clone();
        }
        ControlFlow::Continue(())
    }
}
