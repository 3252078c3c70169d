//! What Spark's grammar reads otherwise than the SQL parser's Spark dialect, fixed on the parsed
//! statement before it is planned:
//! - a number literal with an exponent (`1e300`, `2.5E-3`) is a `DOUBLE` (Spark's
//!   `DOUBLE_LITERAL`/`EXPONENT_VALUE`), where the parser's decimal reading would make it an
//!   exact decimal (or fail, past 38 digits);
//! - `div` binds as `*` and `/` do, left to right (`10 div 3 + 1` is `(10 div 3) + 1`), where the
//!   parser's Spark dialect reads everything after it as its divisor; and it is planned as the
//!   function `div` (Spark's name of the same operator), which [`super::coerce`] types;
//! - an integer literal that fits in 32 bits is an `INT` (where the planner makes every one a
//!   `BIGINT`), but where it is a position or a count (`GROUP BY 1`, `LIMIT 10`);
//! - a function Spark defines as another expression is that expression ([`super::replaced`]).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::dialect::SparkSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastKind, CeilFloorKind, DataType, ExactNumberInfo, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, GroupByExpr, Ident, LimitClause, ObjectName, OrderBy, OrderByKind, Query,
    SetExpr, SetOperator, SetQuantifier, Statement, TableFactor, TableFunctionArgs, UnaryOperator, Value,
    ValueWithSpan, VisitMut, VisitorMut, WindowFrameBound, WindowType,
};

/// `statement` as Spark's grammar reads it (see the module's doc).
pub(crate) fn statement(statement: &mut Statement) {
    let _ = statement.visit(&mut Spark);
}

/// `expr` (and the expressions in it) as Spark's grammar reads it.
pub(crate) fn expression(expr: &mut Expr) {
    let _ = expr.visit(&mut Spark);
}

/// `expr` as it was written: each integer literal [`fix`] typed as an `INT` the number it was.
pub(crate) fn as_written(expr: &Expr) -> String {
    let mut expr = expr.clone();
    let _ = datafusion::sql::sqlparser::ast::visit_expressions_mut(&mut expr, |e| {
        unwrap_int(e);
        ControlFlow::<()>::Continue(())
    });
    expr.to_string()
}

/// The number literals in `expr` typed as Spark types them (and nothing else of Spark's grammar).
fn literals(expr: &mut Expr) {
    let _ = datafusion::sql::sqlparser::ast::visit_expressions_mut(expr, |e| {
        number(e);
        ControlFlow::<()>::Continue(())
    });
}

/// The type an integer literal that fits in 32 bits is cast to: Spark's `INT`, spelled so that no
/// cast a query writes is taken for one (see [`Spark::post_visit_query`]).
const INT_LITERAL: DataType = DataType::Int32;

struct Spark;

impl VisitorMut for Spark {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        fix(expr);
        ControlFlow::Continue(())
    }

    /// A table function's arguments (`generate_series(1, 15)`) stay numbers: its own signature
    /// types them.
    fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { args: Some(TableFunctionArgs { args, .. }), .. } = factor {
            for arg in args {
                if let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg {
                    unwrap_int(e);
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The numbers that are positions (`GROUP BY 1`, `ORDER BY 2`) or counts (`LIMIT 10`) stay
    /// numbers.
    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        refuse_multiset_operations(query.body.as_mut());
        if let Some(OrderBy { kind: OrderByKind::Expressions(items), .. }) = &mut query.order_by {
            for item in items.iter_mut() {
                unwrap_int(&mut item.expr);
            }
        }
        if let SetExpr::Select(select) = query.body.as_mut()
            && let GroupByExpr::Expressions(items, _) = &mut select.group_by
        {
            items.iter_mut().for_each(unwrap_int);
        }
        match &mut query.limit_clause {
            Some(LimitClause::LimitOffset { limit, offset, .. }) => {
                limit.iter_mut().for_each(unwrap_int);
                if let Some(offset) = offset {
                    unwrap_int(&mut offset.value);
                }
            }
            Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
                unwrap_int(offset);
                unwrap_int(limit);
            }
            None => {}
        }
        ControlFlow::Continue(())
    }
}

/// `EXCEPT ALL` and `INTERSECT ALL`, which DataFusion computes as a set operation (without each
/// row's count, where Spark keeps `m - n` and `min(m, n)` of a row), as a call of a function of
/// their name: planning refuses it as the dialect refuses a function it has no Spark-exact
/// implementation of.
fn refuse_multiset_operations(body: &mut SetExpr) {
    if let SetExpr::SetOperation { op, set_quantifier: SetQuantifier::All, left, right } = body {
        let name = match op {
            SetOperator::Except | SetOperator::Minus => "except_all",
            SetOperator::Intersect => "intersect_all",
            SetOperator::Union => {
                refuse_multiset_operations(left);
                refuse_multiset_operations(right);
                return;
            }
        };
        let sql = format!("SELECT {name}()");
        let parsed = Parser::parse_sql(&SparkSqlDialect {}, &sql).expect("a call parses");
        if let Some(Statement::Query(query)) = parsed.into_iter().next() {
            *body = *query.body;
        }
    }
}

/// The call `name(args)`.
fn call(name: &str, args: Vec<FunctionArg>) -> Expr {
    Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList { duplicate_treatment: None, args, clauses: Vec::new() }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

/// An integer literal [`fix`] typed as an `INT`, as the number it was.
fn unwrap_int(expr: &mut Expr) {
    if let Expr::Cast { expr: inner, data_type: INT_LITERAL, .. } = expr
        && matches!(inner.as_ref(), Expr::Value(ValueWithSpan { value: Value::Number(..), .. }))
    {
        *expr = inner.as_ref().clone();
    }
}

/// A number literal typed as Spark types it (see the module's doc); whether `expr` was one.
fn number(expr: &mut Expr) -> bool {
    if let Expr::Value(ValueWithSpan { value: Value::Number(text, _), .. }) = expr
        && text.contains(['e', 'E'])
    {
        let literal = Expr::Value(Value::SingleQuotedString(text.clone()).into());
        let double = DataType::Double(ExactNumberInfo::None);
        *expr =
            Expr::Cast { kind: CastKind::Cast, expr: Box::new(literal), data_type: double, array: false, format: None };
        return true;
    }
    if let Expr::Value(ValueWithSpan { value: Value::Number(text, false), .. }) = expr
        && text.parse::<i32>().is_ok()
    {
        let literal = expr.clone();
        *expr = Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(literal),
            data_type: INT_LITERAL,
            array: false,
            format: None,
        };
        return true;
    }
    // An integer beyond a BIGINT is a DECIMAL of its digits (Spark's `BigDecimal` literal).
    if let Expr::Value(ValueWithSpan { value: Value::Number(text, false), .. }) = expr
        && !text.contains(['.', 'e', 'E'])
        && text.parse::<i64>().is_err()
        && text.len() <= 38
    {
        let literal = Expr::Value(Value::SingleQuotedString(text.clone()).into());
        let digits = u64::try_from(text.len()).unwrap_or(38);
        let decimal = DataType::Decimal(ExactNumberInfo::PrecisionAndScale(digits, 0));
        *expr = Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(literal),
            data_type: decimal,
            array: false,
            format: None,
        };
        return true;
    }
    false
}

fn fix(expr: &mut Expr) {
    if number(expr) {
        return;
    }
    // A replacement's own literals typed, then the call's arguments (typed already) put in it.
    if let Some((mut template, args)) = super::replaced::replacement(expr) {
        literals(&mut template);
        *expr = super::replaced::filled(template, &args);
        return;
    }
    // A negative number is one literal (`-2147483648` is an `INT`), as Spark's parser reads it.
    if let Expr::UnaryOp { op: UnaryOperator::Minus, expr: operand } = expr {
        unwrap_int(operand);
        if let Expr::Value(ValueWithSpan { value: Value::Number(text, false), span }) = operand.as_ref()
            && !text.contains(['.', 'e', 'E'])
        {
            *expr = Expr::Value(ValueWithSpan { value: Value::Number(format!("-{text}"), false), span: *span });
            fix(expr);
        }
        return;
    }
    // An interval's count and a window frame's offset stay numbers.
    if let Expr::Interval(interval) = expr {
        unwrap_int(&mut interval.value);
        return;
    }
    if let Expr::Function(Function { over: Some(WindowType::WindowSpec(spec)), .. }) = expr
        && let Some(frame) = &mut spec.window_frame
    {
        for bound in std::iter::once(&mut frame.start_bound).chain(frame.end_bound.as_mut()) {
            if let WindowFrameBound::Preceding(Some(offset)) | WindowFrameBound::Following(Some(offset)) = bound {
                unwrap_int(offset);
            }
        }
    }
    // `x RLIKE p` (`REGEXP`) is `regexp_like(x, p)`: a match anywhere in `x`, as Java's `find`.
    if let Expr::RLike { negated, expr: operand, pattern, .. } = expr {
        let args = [operand.as_ref(), pattern.as_ref()].map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e.clone())));
        let call = call("regexp_like", args.into());
        let negated = *negated;
        *expr = if negated { Expr::UnaryOp { op: UnaryOperator::Not, expr: Box::new(call) } } else { call };
        return;
    }
    // `CEIL(x, scale)` and `FLOOR(x, scale)`: the functions, which take a scale as `round` does.
    let name = if matches!(expr, Expr::Ceil { .. }) { "ceil" } else { "floor" };
    if let Expr::Ceil { expr: operand, field: CeilFloorKind::Scale(scale) }
    | Expr::Floor { expr: operand, field: CeilFloorKind::Scale(scale) } = expr
    {
        let args = [operand.as_ref().clone(), Expr::Value(scale.clone())];
        *expr = call(name, args.into_iter().map(|a| FunctionArg::Unnamed(FunctionArgExpr::Expr(a))).collect());
        return;
    }
    // `round`'s and `bround`'s scale stays a number: their result type is read from it.
    if let Expr::Function(Function { name, args: FunctionArguments::List(list), .. }) = expr
        && ["round", "bround", "ceil", "floor"].iter().any(|f| name.to_string().eq_ignore_ascii_case(f))
        && let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(scale))) = list.args.get_mut(1)
    {
        unwrap_int(scale);
    }
    if matches!(expr, Expr::BinaryOp { op: BinaryOperator::MyIntegerDivide, .. }) {
        let taken = std::mem::replace(expr, Expr::Value(Value::Null.into()));
        *expr = as_function(reassociate(taken));
    }
}

/// Each `a div b` in `expr` as the call `div(a, b)` (the visit reaches the operators
/// reassociation moved below the top one only through this).
fn as_function(expr: Expr) -> Expr {
    match expr {
        Expr::BinaryOp { left, op: BinaryOperator::MyIntegerDivide, right } => {
            let arg = |e: Expr| FunctionArg::Unnamed(FunctionArgExpr::Expr(as_function(e)));
            call("div", vec![arg(*left), arg(*right)])
        }
        Expr::BinaryOp { left, op, right } => {
            Expr::BinaryOp { left: Box::new(as_function(*left)), op, right: Box::new(as_function(*right)) }
        }
        Expr::IsNull(inner) => Expr::IsNull(Box::new(as_function(*inner))),
        Expr::IsNotNull(inner) => Expr::IsNotNull(Box::new(as_function(*inner))),
        other => other,
    }
}

/// `a div <right>`, where the parser read everything after `div` as `right`: `div` applied to
/// the leftmost operand of `right` that binds tighter, the rest of `right` around it.
fn reassociate(expr: Expr) -> Expr {
    let Expr::BinaryOp { left, op: BinaryOperator::MyIntegerDivide, right } = expr else { return expr };
    match *right {
        // Every binary operator binds as loosely as `div` or looser in Spark's grammar.
        Expr::BinaryOp { left: inner, op, right: rest } => Expr::BinaryOp {
            left: Box::new(reassociate(Expr::BinaryOp { left, op: BinaryOperator::MyIntegerDivide, right: inner })),
            op,
            right: rest,
        },
        Expr::IsNull(inner) => Expr::IsNull(Box::new(reassociate(Expr::BinaryOp {
            left,
            op: BinaryOperator::MyIntegerDivide,
            right: inner,
        }))),
        Expr::IsNotNull(inner) => Expr::IsNotNull(Box::new(reassociate(Expr::BinaryOp {
            left,
            op: BinaryOperator::MyIntegerDivide,
            right: inner,
        }))),
        right => Expr::BinaryOp { left, op: BinaryOperator::MyIntegerDivide, right: Box::new(right) },
    }
}
