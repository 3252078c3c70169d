//! Spark's analyzer on a planned query: the types and operators Spark gives an expression where
//! DataFusion's own coercion gives others. Applied to each plan node's expressions bottom-up,
//! before DataFusion's type coercion (which then finds nothing of these left to change), each
//! rewritten expression keeping its name.
//!
//! The rules, each after the Spark rule it follows (Spark 4.x, `org.apache.spark.sql.catalyst`):
//! - **Arithmetic** (`BinaryArithmetic` and the `ImplicitTypeCasts` of `AnsiTypeCoercion` /
//!   `TypeCoercion`): two integers compute in the wider of their types, a `FLOAT` with an integer
//!   or a `FLOAT` in `FLOAT`, a `DOUBLE` with anything in `DOUBLE`, and a `DECIMAL` with an integer
//!   or a `DECIMAL` by `DecimalPrecision` (below); with a `FLOAT` or `DOUBLE` in `DOUBLE`.
//!   Overflow and a zero divisor as the [`Mode`] says ([`super::arith`]).
//! - **`/`** (`Divide`) is fractional: integers and floats divide as `DOUBLE`s; decimals by
//!   `DecimalPrecision`. **`div`** (`IntegralDivide`) gives a `BIGINT`.
//! - **`DecimalPrecision`** with `spark.sql.decimalOperations.allowPrecisionLoss=true` (the
//!   default): an integer column is a `DECIMAL(3|5|10|20, 0)` by its type, an integer literal
//!   the narrowest decimal that holds it (`DecimalType.fromLiteral`); the result type of
//!   `+ - * / %` as Spark computes it (`resultDecimalType`), adjusted to 38 digits by
//!   `DecimalType.adjustPrecisionScale`; the value rounded half up to its scale.
//! - **Equality and common types** (comparisons, NaN and -0.0, `CASE`'s and `COALESCE`'s types):
//!   [`super::equality`].
//! - **Casts** where Spark's differ from DataFusion's: [`super::cast`].
//! - **Timestamps** of a scan in the session time zone, whatever zone the file names
//!   ([`super::types::in_session_zone`]).

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    BinaryExpr, Cast, Expr, ExprSchemable, LogicalPlan, Operator, ScalarUDF, ScalarUDFImpl,
};

use super::arith::{Mode, Op, SparkArithmetic};
use super::equality::{case_expr, cast, compared, comparison, is_comparison, keys_normalized};
use super::functions::OperatorFunction;

/// The largest precision of a decimal, as Spark's `DecimalType.MAX_PRECISION`.
const MAX_PRECISION: u8 = 38;
/// The least scale a precision-losing adjustment keeps (`DecimalType.MINIMUM_ADJUSTED_SCALE`).
const MINIMUM_ADJUSTED_SCALE: i8 = 6;

/// `plan` with Spark's types and operators (see the module's doc), in `mode` and the session
/// time zone `zone`.
pub(crate) fn plan(plan: LogicalPlan, mode: Mode, zone: &str) -> Result<LogicalPlan> {
    Ok(plan.transform_up_with_subqueries(|node| self::node(node, mode, zone))?.data)
}

/// `expr`, over the columns of `schema`, with Spark's types and operators.
pub(crate) fn expr(expr: Expr, schema: &DFSchema, mode: Mode) -> Result<Expr> {
    Ok(expr.transform_up(|e| rewrite(e, schema, mode))?.data)
}

fn node(node: LogicalPlan, mode: Mode, zone: &str) -> Result<Transformed<LogicalPlan>> {
    let mut schema = merge_schema(&node.inputs());
    if let LogicalPlan::TableScan(scan) = &node {
        schema.merge(&DFSchema::try_from_qualified_schema(scan.table_name.clone(), &scan.source.schema())?);
    }
    let node = super::windows::ranks_as_ints(keys_normalized(node, &schema)?)?;
    let names = NamePreserver::new(&node);
    let rewritten = node.map_expressions(|e| {
        let name = names.save(&e);
        Ok(e.transform_up(|e| rewrite(e, &schema, mode))?.update_data(|e| name.restore(e)))
    })?;
    // A node's schema follows its inputs' too (an aggregate below it now of Spark's type).
    rewritten.map_data(LogicalPlan::recompute_schema)?.transform_data(|plan| super::types::in_session_zone(plan, zone))
}

/// A number type as Spark's arithmetic sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Numeric {
    /// An integer type, by its width in bytes.
    Integral(u8),
    Decimal(u8, i8),
    Float,
    Double,
}

fn numeric(t: &DataType) -> Option<Numeric> {
    Some(match t {
        DataType::Int8 => Numeric::Integral(1),
        DataType::Int16 => Numeric::Integral(2),
        DataType::Int32 => Numeric::Integral(4),
        DataType::Int64 => Numeric::Integral(8),
        DataType::Decimal128(p, s) => Numeric::Decimal(*p, *s),
        DataType::Float32 => Numeric::Float,
        DataType::Float64 => Numeric::Double,
        _ => return None,
    })
}

fn integral_type(width: u8) -> DataType {
    match width {
        1 => DataType::Int8,
        2 => DataType::Int16,
        4 => DataType::Int32,
        _ => DataType::Int64,
    }
}

/// An integer operand as a decimal: a literal by its digits (`DecimalType.fromLiteral`), a column
/// by its type (`DecimalType.forType`).
fn as_decimal(expr: &Expr, width: u8) -> (u8, i8) {
    // A literal is typed by a cast around it (an `INT`'s, see `super::syntax`).
    let literal = match expr {
        Expr::Cast(Cast { expr, .. }) => expr.as_ref(),
        other => other,
    };
    if let Expr::Literal(value, _) = literal
        && let Some(v) = integer_value(value)
    {
        let digits = u8::try_from(v.unsigned_abs().to_string().len()).unwrap_or(MAX_PRECISION);
        return (digits, 0);
    }
    super::decimal::of_integer(&integral_type(width)).expect("a signed integer type")
}

fn integer_value(value: &ScalarValue) -> Option<i64> {
    match value {
        ScalarValue::Int8(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int16(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int32(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int64(Some(v)) => Some(*v),
        _ => None,
    }
}

/// `DecimalType.adjustPrecisionScale`: a result type wider than 38 digits keeps its integer
/// digits and gives up scale, down to [`MINIMUM_ADJUSTED_SCALE`].
fn adjusted(precision: i32, scale: i32) -> (u8, i8) {
    let max = i32::from(MAX_PRECISION);
    if precision <= max {
        return (u8::try_from(precision).unwrap_or(MAX_PRECISION), i8::try_from(scale).unwrap_or(0));
    }
    let int_digits = precision - scale;
    let min_scale = scale.min(i32::from(MINIMUM_ADJUSTED_SCALE));
    let scale = (max - int_digits).max(min_scale);
    (MAX_PRECISION, i8::try_from(scale).unwrap_or(0))
}

/// The result type of `op` over decimals `(p1, s1)` and `(p2, s2)` (`DecimalPrecision`).
fn decimal_result(op: Op, (p1, s1): (u8, i8), (p2, s2): (u8, i8)) -> (u8, i8) {
    let (p1, s1, p2, s2) = (i32::from(p1), i32::from(s1), i32::from(p2), i32::from(s2));
    match op {
        Op::Add | Op::Subtract => {
            let scale = s1.max(s2);
            adjusted((p1 - s1).max(p2 - s2) + scale + 1, scale)
        }
        Op::Multiply => adjusted(p1 + p2 + 1, s1 + s2),
        Op::Divide | Op::IntegralDivide => {
            let scale = 6.max(s1 + p2 + 1);
            adjusted(p1 - s1 + s2 + scale, scale)
        }
        Op::Remainder => {
            let scale = s1.max(s2);
            adjusted((p1 - s1).min(p2 - s2) + scale, scale)
        }
    }
}

fn arithmetic_op(op: Operator) -> Option<Op> {
    Some(match op {
        Operator::Plus => Op::Add,
        Operator::Minus => Op::Subtract,
        Operator::Multiply => Op::Multiply,
        Operator::Divide => Op::Divide,
        Operator::IntegerDivide => Op::IntegralDivide,
        Operator::Modulo => Op::Remainder,
        _ => return None,
    })
}

fn call(op: Op, mode: Mode, output: DataType, shown: String, left: Expr, right: Expr) -> Expr {
    let udf = ScalarUDF::new_from_impl(SparkArithmetic::new(op, mode, output, shown));
    Expr::ScalarFunction(ScalarFunction::new_udf(Arc::new(udf), vec![left, right]))
}

fn rewrite(expr: Expr, schema: &DFSchema, mode: Mode) -> Result<Transformed<Expr>> {
    match expr {
        // `$dt` is a DATE wherever it stands, where the SQL planner takes a placeholder for the
        // type of the other operand (an INTERVAL, in `$dt - INTERVAL '1' DAY`).
        Expr::Placeholder(mut p)
            if p.id == "$dt" && p.field.as_ref().is_none_or(|f| f.data_type() != &DataType::Date32) =>
        {
            p.field = Some(Arc::new(datafusion::arrow::datatypes::Field::new("$dt", DataType::Date32, true)));
            Ok(Transformed::yes(Expr::Placeholder(p)))
        }
        Expr::BinaryExpr(binary) => binary_expr(binary, schema, mode),
        // `-x` of an integer: `0 - x`, so that `-(-128)` as a TINYINT overflows as in Spark.
        Expr::Negative(operand) if matches!(operand.get_type(schema)?, DataType::Decimal128(..)) => {
            Ok(Transformed::yes(super::decimal::Negate::call(*operand)))
        }
        Expr::Negative(operand) if is_integral(&operand.get_type(schema)?) => {
            let t = operand.get_type(schema)?;
            let zero = Expr::Literal(ScalarValue::new_zero(&t)?, None);
            let shown = format!("-{}", operand.human_display());
            Ok(Transformed::yes(self::call(Op::Subtract, mode, t, shown, zero, *operand)))
        }
        // `IN` and `BETWEEN` compare as `=` and `<=` do: a floating-point operand with a decimal
        // one as `DOUBLE`s.
        Expr::InList(mut in_list) => {
            let mut operands = std::mem::take(&mut in_list.list);
            operands.push(*in_list.expr);
            let (mut operands, changed) = compared(operands, schema)?;
            in_list.expr = Box::new(operands.pop().expect("the tested operand"));
            in_list.list = operands;
            Ok(Transformed::new_transformed(Expr::InList(in_list), changed))
        }
        Expr::Between(between) => {
            let operands = vec![*between.expr, *between.low, *between.high];
            let (operands, changed) = compared(operands, schema)?;
            let [expr, low, high]: [Expr; 3] = operands.try_into().expect("three operands");
            let between =
                datafusion::logical_expr::Between::new(Box::new(expr), between.negated, Box::new(low), Box::new(high));
            Ok(Transformed::new_transformed(Expr::Between(between), changed))
        }
        Expr::WindowFunction(window) => super::windows::window_function(window, schema, mode),
        // `SUM` and `AVG` as Spark computes them.
        Expr::AggregateFunction(mut call) => {
            let input = call.params.args.first().map(|a| a.get_type(schema)).transpose()?;
            match input.and_then(|t| super::aggregates::spark(call.func.name(), &t, mode)) {
                Some(spark) => {
                    call.func = spark;
                    Ok(Transformed::yes(Expr::AggregateFunction(call)))
                }
                None => Ok(Transformed::no(Expr::AggregateFunction(call))),
            }
        }
        Expr::Case(case) => case_expr(case, schema),
        Expr::Cast(cast) => {
            let to = cast.field.data_type().clone();
            super::calls::spark_cast(Expr::Cast(cast), to, schema, mode)
        }
        Expr::TryCast(cast) => {
            let to = cast.field.data_type().clone();
            super::calls::spark_cast(Expr::TryCast(cast), to, schema, Mode::Try)
        }
        Expr::ScalarFunction(call) if call.func.inner().downcast_ref::<OperatorFunction>().is_some() => {
            operator_call(call, schema, mode)
        }
        Expr::ScalarFunction(call) => super::calls::function_call(call, schema),
        other => Ok(Transformed::no(other)),
    }
}

/// `div` and the `try_` functions ([`OperatorFunction`]): their operator, in their mode.
fn operator_call(call: ScalarFunction, schema: &DFSchema, mode: Mode) -> Result<Transformed<Expr>> {
    let function = call.func.inner().downcast_ref::<OperatorFunction>().expect("an operator function").clone();
    let [left, right]: [Expr; 2] = call
        .args
        .try_into()
        .map_err(|_| datafusion::error::DataFusionError::Plan(format!("`{}` takes two operands", function.name())))?;
    let binary = BinaryExpr::new(Box::new(left), binary_op(function.op), Box::new(right));
    Ok(Transformed::yes(binary_expr(binary, schema, function.mode.unwrap_or(mode))?.data))
}

fn binary_expr(binary: BinaryExpr, schema: &DFSchema, mode: Mode) -> Result<Transformed<Expr>> {
    let (lt, rt) = (binary.left.get_type(schema)?, binary.right.get_type(schema)?);
    if is_comparison(binary.op) {
        return comparison(binary, (&lt, &rt), schema);
    }
    let (Some(l), Some(r)) = (operand(&lt, &rt), operand(&rt, &lt)) else {
        return Ok(Transformed::no(Expr::BinaryExpr(binary)));
    };
    match arithmetic_op(binary.op) {
        Some(op) => arithmetic(op, binary, (l, r), schema, mode),
        None => Ok(Transformed::no(Expr::BinaryExpr(binary))),
    }
}

fn is_integral(t: &DataType) -> bool {
    matches!(t, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64)
}

/// An operand's number type; a NULL takes the other operand's.
fn operand(t: &DataType, other: &DataType) -> Option<Numeric> {
    match t {
        DataType::Null => numeric(other),
        t => numeric(t),
    }
}

fn arithmetic(
    op: Op,
    binary: BinaryExpr,
    (lhs, rhs): (Numeric, Numeric),
    schema: &DFSchema,
    mode: Mode,
) -> Result<Transformed<Expr>> {
    use Numeric::{Decimal, Double, Float, Integral};
    let shown = format!("{}", Expr::BinaryExpr(binary.clone()).human_display());
    let BinaryExpr { left, right, .. } = binary;
    let decimal_of = |n: Numeric, e: &Expr| match n {
        Decimal(p, s) => (p, s),
        Integral(w) => as_decimal(e, w),
        Float | Double => unreachable!("not a decimal operand"),
    };
    // The type both operands are cast to, and the result's.
    let (operands, output) = match (op, lhs, rhs) {
        (Op::IntegralDivide, Integral(_), Integral(_)) => (DataType::Int64, DataType::Int64),
        (Op::IntegralDivide, Decimal(..), Integral(_) | Decimal(..))
        | (Op::IntegralDivide, Integral(_), Decimal(..)) => {
            let (dl, dr) = (decimal_of(lhs, &left), decimal_of(rhs, &right));
            let left = cast(*left, &DataType::Decimal128(dl.0, dl.1), schema)?;
            let right = cast(*right, &DataType::Decimal128(dr.0, dr.1), schema)?;
            return Ok(Transformed::yes(call(op, mode, DataType::Int64, shown, left, right)));
        }
        (Op::IntegralDivide, ..) => {
            return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr::new(left, binary_op(op), right))));
        }
        (Op::Divide, Integral(_) | Float | Double, Integral(_) | Float | Double)
        | (_, Double, _)
        | (_, _, Double)
        | (_, Decimal(..), Float)
        | (_, Float, Decimal(..)) => (DataType::Float64, DataType::Float64),
        // An integer with a FLOAT: a DOUBLE in ANSI mode (`AnsiTypeCoercion` widens without loss),
        // a FLOAT otherwise.
        (_, Float, Integral(_)) | (_, Integral(_), Float) if mode != Mode::Legacy => {
            (DataType::Float64, DataType::Float64)
        }
        (_, Float, Float | Integral(_)) | (_, Integral(_), Float) => (DataType::Float32, DataType::Float32),
        (_, Integral(wl), Integral(wr)) => {
            let wider = integral_type(wl.max(wr));
            (wider.clone(), wider)
        }
        (_, Decimal(..) | Integral(_), Decimal(..) | Integral(_)) => {
            let (dl, dr) = (decimal_of(lhs, &left), decimal_of(rhs, &right));
            let (precision, scale) = decimal_result(op, dl, dr);
            let left = cast(*left, &DataType::Decimal128(dl.0, dl.1), schema)?;
            let right = cast(*right, &DataType::Decimal128(dr.0, dr.1), schema)?;
            let output = DataType::Decimal128(precision, scale);
            return Ok(Transformed::yes(call(op, mode, output, shown, left, right)));
        }
    };
    let (left, right) = (cast(*left, &operands, schema)?, cast(*right, &operands, schema)?);
    // IEEE arithmetic is Spark's: `+ - *` on floating point stay DataFusion's operators.
    let native =
        matches!(op, Op::Add | Op::Subtract | Op::Multiply) && matches!(output, DataType::Float32 | DataType::Float64);
    if native || output == DataType::Float32 {
        return Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(Box::new(left), binary_op(op), Box::new(right)))));
    }
    Ok(Transformed::yes(call(op, mode, output, shown, left, right)))
}

fn binary_op(op: Op) -> Operator {
    match op {
        Op::Add => Operator::Plus,
        Op::Subtract => Operator::Minus,
        Op::Multiply => Operator::Multiply,
        Op::Divide => Operator::Divide,
        Op::IntegralDivide => Operator::IntegerDivide,
        Op::Remainder => Operator::Modulo,
    }
}

#[cfg(test)]
mod tests {
    use super::{Op, decimal_result};

    /// Spark's result types, as `typeof` gives them in Spark 4.
    #[test]
    fn decimal_result_types_are_sparks() {
        assert_eq!(decimal_result(Op::Divide, (2, 2), (1, 0)), (6, 6));
        assert_eq!(decimal_result(Op::Divide, (10, 2), (10, 2)), (23, 13));
        assert_eq!(decimal_result(Op::Multiply, (38, 18), (10, 2)), (38, 9));
    }
}
