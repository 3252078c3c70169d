//! What Spark's grammar reads otherwise than the SQL parser's Spark dialect, fixed on the parsed
//! statement before it is planned:
//! - a number literal with an exponent (`1e300`, `2.5E-3`) is a `DOUBLE` (Spark's
//!   `DOUBLE_LITERAL`/`EXPONENT_VALUE`), where the parser's decimal reading would make it an
//!   exact decimal (or fail, past 38 digits);
//! - `div` binds as `*` and `/` do, left to right (`10 div 3 + 1` is `(10 div 3) + 1`), where the
//!   parser's Spark dialect reads everything after it as its divisor; and it is planned as the
//!   function `div` (Spark's name of the same operator), which [`super::coerce`] types.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastKind, DataType, ExactNumberInfo, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, Ident, ObjectName, Statement, Value, ValueWithSpan, visit_expressions_mut,
};

/// `statement` as Spark's grammar reads it (see the module's doc).
pub(crate) fn statement(statement: &mut Statement) {
    let _ = visit_expressions_mut(statement, |expr| {
        fix(expr);
        ControlFlow::<()>::Continue(())
    });
}

/// `expr` (and the expressions in it) as Spark's grammar reads it.
pub(crate) fn expression(expr: &mut Expr) {
    let _ = visit_expressions_mut(expr, |e| {
        fix(e);
        ControlFlow::<()>::Continue(())
    });
}

fn fix(expr: &mut Expr) {
    if let Expr::Value(ValueWithSpan { value: Value::Number(text, _), .. }) = expr
        && text.contains(['e', 'E'])
    {
        let literal = Expr::Value(Value::SingleQuotedString(text.clone()).into());
        let double = DataType::Double(ExactNumberInfo::None);
        *expr =
            Expr::Cast { kind: CastKind::Cast, expr: Box::new(literal), data_type: double, array: false, format: None };
        return;
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
            Expr::Function(Function {
                name: ObjectName::from(vec![Ident::new("div")]),
                uses_odbc_syntax: false,
                parameters: FunctionArguments::None,
                args: FunctionArguments::List(FunctionArgumentList {
                    duplicate_treatment: None,
                    args: vec![arg(*left), arg(*right)],
                    clauses: Vec::new(),
                }),
                filter: None,
                null_treatment: None,
                over: None,
                within_group: Vec::new(),
            })
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
