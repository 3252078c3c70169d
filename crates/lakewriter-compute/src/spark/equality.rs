//! Spark's equality and common types, applied by [`super::coerce`]: floating-point numbers
//! compare, group and join as Spark's `NormalizeFloatingNumbers` and `SQLOrderingUtil` make them
//! (every NaN one NaN, equal to itself and the greatest value; -0.0 equal to 0.0), in `=` and the
//! other comparisons, `IN`, `BETWEEN`, `CASE x WHEN`, `nullif`, `GROUP BY`, `DISTINCT`, join keys
//! and window partitions; a `DOUBLE` or `FLOAT` with a `DECIMAL` is a `DOUBLE`
//! (`findWiderTypeForDecimal`, `findWiderCommonType`) where they are compared and where they are
//! the results of one `CASE` or the operands of `COALESCE`, `GREATEST` and `LEAST`; a date
//! compared with a timestamp is a timestamp.

use std::sync::Arc;

use crate::floating::is_floating;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{Case, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{
    Aggregate, BinaryExpr, Distinct, Expr, ExprSchemable, LogicalPlan, Operator, SortExpr, Union,
};

/// `node` with its floating-point grouping and join keys normalized, as Spark's
/// `NormalizeFloatingNumbers` does: every NaN one NaN, -0.0 as 0.0, so that they group and match
/// as equal (a group's key is the normalized value; a join's output keeps the values it read).
pub(super) fn keys_normalized(node: LogicalPlan, schema: &DFSchema) -> Result<LogicalPlan> {
    Ok(match node {
        LogicalPlan::Aggregate(aggregate) => {
            let group = aggregate.group_expr.into_iter().map(|e| normalized(e, schema)).collect();
            let aggregates: Result<Vec<Expr>> =
                aggregate.aggr_expr.into_iter().map(|e| compared_arguments(e, schema)).collect();
            LogicalPlan::Aggregate(Aggregate::try_new(aggregate.input, group, aggregates?)?)
        }
        LogicalPlan::Union(union) => union_of_one_type(union)?,
        // An order puts NaN last (the greatest value) and -0.0 with 0.0.
        LogicalPlan::Sort(mut sort) => {
            sort.expr = sort.expr.into_iter().map(|s| sort_normalized(s, schema)).collect();
            LogicalPlan::Sort(sort)
        }
        // `SELECT DISTINCT` groups by every column (as DataFusion's optimizer plans it anyway).
        LogicalPlan::Distinct(Distinct::All(input)) if has_floats(input.schema()) => {
            let columns = input.schema().columns().into_iter().map(Expr::Column);
            let group = columns.map(|e| normalized(e, input.schema())).collect();
            LogicalPlan::Aggregate(Aggregate::try_new(input, group, Vec::new())?)
        }
        LogicalPlan::Join(mut join) => {
            join.on = join
                .on
                .into_iter()
                .map(|(left, right)| (normalized(left, schema), normalized(right, schema)))
                .collect();
            LogicalPlan::Join(join)
        }
        other => other,
    })
}

/// The type Spark gives a column holding values of each of `types` where DataFusion's differs
/// (`findWiderCommonType`): a floating-point number and a decimal are `DOUBLE`s, a date and a
/// timestamp timestamps, decimals and integers the decimal wide enough for each.
fn wider(types: &[&DataType]) -> Option<DataType> {
    let any = |f: &dyn Fn(&DataType) -> bool| types.iter().any(|t| f(t));
    let decimal = |t: &DataType| matches!(t, DataType::Decimal128(..));
    if any(&|t| matches!(t, DataType::Float32 | DataType::Float64)) && any(&decimal) {
        return Some(DataType::Float64);
    }
    if any(&|t| *t == DataType::Date32) && any(&|t| matches!(t, DataType::Timestamp(..))) {
        // A `TIMESTAMP` in its zone (the session time zone, in a plan of the dialect).
        let zone = types.iter().find_map(|t| match t {
            DataType::Timestamp(_, Some(zone)) => Some(Arc::clone(zone)),
            _ => None,
        });
        return Some(DataType::Timestamp(datafusion::arrow::datatypes::TimeUnit::Microsecond, zone));
    }
    if !any(&decimal) {
        return None;
    }
    let digits = |t: &DataType| {
        let (p, s) = match t {
            DataType::Decimal128(p, s) => (*p, *s),
            other => super::decimal::of_integer(other)?,
        };
        Some((i32::from(p), i32::from(s)))
    };
    let numbers: Vec<(i32, i32)> =
        types.iter().filter(|t| ***t != DataType::Null).map(|t| digits(t)).collect::<Option<_>>()?;
    let scale = numbers.iter().map(|(_, s)| *s).max().unwrap_or(0);
    let range = numbers.iter().map(|(p, s)| p - s).max().unwrap_or(0);
    Some(DataType::Decimal128(u8::try_from((range + scale).min(38)).unwrap_or(38), i8::try_from(scale).unwrap_or(0)))
}

/// A `UNION` whose columns are of one type each, Spark's [`wider`] one where it has one: each
/// input whose column is of another type is projected as that type, keeping its names.
fn union_of_one_type(union: Union) -> Result<LogicalPlan> {
    let width = union.schema.fields().len();
    let targets: Vec<Option<DataType>> = (0..width)
        .map(|i| wider(&union.inputs.iter().map(|input| input.schema().field(i).data_type()).collect::<Vec<_>>()))
        .collect();
    if targets.iter().all(Option::is_none) {
        return Ok(LogicalPlan::Union(union));
    }
    let mut inputs = Vec::with_capacity(union.inputs.len());
    for input in union.inputs {
        let exprs: Vec<Expr> = input
            .schema()
            .iter()
            .zip(&targets)
            .map(|((qualifier, field), target)| {
                let column = Expr::Column(datafusion::common::Column::from((qualifier, field)));
                match target {
                    Some(t) if t != field.data_type() => {
                        Expr::Cast(datafusion::logical_expr::Cast::new(Box::new(column), t.clone())).alias(field.name())
                    }
                    _ => column,
                }
            })
            .collect();
        inputs.push(Arc::new(LogicalPlan::Projection(datafusion::logical_expr::Projection::try_new(exprs, input)?)));
    }
    Ok(LogicalPlan::Union(Union::try_new_with_loose_types(inputs)?))
}

/// `expr` cast to `to`, where it is of another type.
pub(super) fn cast(expr: Expr, to: &DataType, schema: &DFSchema) -> Result<Expr> {
    if expr.get_type(schema)? == *to {
        return Ok(expr);
    }
    Ok(Expr::Cast(datafusion::logical_expr::Cast::new(Box::new(expr), to.clone())))
}

/// An order by `sort`'s key, normalized where it is a floating-point number.
pub(super) fn sort_normalized(sort: SortExpr, schema: &DFSchema) -> SortExpr {
    SortExpr { expr: normalize_call(sort.expr, schema), ..sort }
}

/// `expr` with every NaN the one positive NaN, where it is a floating-point number (so that NaN is
/// the greatest value in DataFusion's total order, as in Spark's).
fn nan_normalized(expr: Expr, schema: &DFSchema) -> Expr {
    let nan = match expr.get_type(schema) {
        Ok(DataType::Float64) => ScalarValue::Float64(Some(f64::NAN)),
        Ok(DataType::Float32) => ScalarValue::Float32(Some(f32::NAN)),
        _ => return expr,
    };
    let is_nan = datafusion::functions::math::expr_fn::isnan(expr.clone());
    datafusion::logical_expr::when(is_nan, Expr::Literal(nan, None)).otherwise(expr.clone()).unwrap_or(expr)
}

/// An aggregate whose answer compares its arguments' values — `MIN`, `MAX`, and any `DISTINCT`
/// one (`COUNT(DISTINCT d)`) — with its floating-point arguments normalized, keeping its name.
fn compared_arguments(aggregate: Expr, schema: &DFSchema) -> Result<Expr> {
    let name = NamePreserver::new_for_projection().save(&aggregate);
    let rewritten = aggregate.transform_up(|e| match e {
        Expr::AggregateFunction(mut call) if call.params.distinct || matches!(call.func.name(), "min" | "max") => {
            let args = std::mem::take(&mut call.params.args);
            // `MIN` and `MAX` keep -0.0 (it equals 0.0, the first seen is kept): only NaN is one.
            let distinct = call.params.distinct;
            let normalized = |a| if distinct { normalize_call(a, schema) } else { nan_normalized(a, schema) };
            call.params.args = args.into_iter().map(normalized).collect();
            Ok(Transformed::yes(Expr::AggregateFunction(call)))
        }
        other => Ok(Transformed::no(other)),
    })?;
    Ok(if rewritten.transformed { name.restore(rewritten.data) } else { rewritten.data })
}

/// `operands` compared with each other: where one is a floating-point number and another a
/// decimal, each of those as a `DOUBLE` (`findWiderTypeForDecimal`); and whether that changed them.
pub(super) fn as_doubles(operands: Vec<Expr>, schema: &DFSchema) -> Result<(Vec<Expr>, bool)> {
    let types = operands.iter().map(|e| e.get_type(schema)).collect::<Result<Vec<_>>>()?;
    let floating = types.iter().any(|t| matches!(t, DataType::Float32 | DataType::Float64));
    let decimal = types.iter().any(|t| matches!(t, DataType::Decimal128(..)));
    if !(floating && decimal) {
        return Ok((operands, false));
    }
    let doubles = operands
        .into_iter()
        .zip(types)
        .map(|(e, t)| match t {
            DataType::Float32 | DataType::Decimal128(..) => cast(e, &DataType::Float64, schema),
            _ => Ok(e),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((doubles, true))
}

/// The results of one `CASE`, or the operands of `COALESCE`, `GREATEST` or `LEAST`, of one type
/// (`findWiderCommonType`): with a floating-point one and a decimal one, `DOUBLE`s ([`as_doubles`]);
/// with decimals and integers, the decimal wide enough for each (`DecimalPrecision.
/// widerDecimalType`, an integer being a `DECIMAL(3|5|10|20, 0)` by its type).
pub(super) fn one_type(operands: Vec<Expr>, schema: &DFSchema) -> Result<(Vec<Expr>, bool)> {
    let (operands, doubles) = as_doubles(operands, schema)?;
    let types = operands.iter().map(|e| e.get_type(schema)).collect::<Result<Vec<_>>>()?;
    let target = wider(&types.iter().collect::<Vec<_>>()).filter(|_| !doubles);
    let Some(wider) = target.filter(|t| matches!(t, DataType::Decimal128(..))) else { return Ok((operands, doubles)) };
    let changed = types.iter().any(|t| *t != wider && *t != DataType::Null);
    let operands = operands.into_iter().map(|e| cast(e, &wider, schema)).collect::<Result<Vec<_>>>()?;
    Ok((operands, changed))
}

/// `operands` compared with each other (`IN`, `BETWEEN`): as [`as_doubles`], then each
/// floating-point one normalized (see [`comparison`]).
pub(super) fn compared(operands: Vec<Expr>, schema: &DFSchema) -> Result<(Vec<Expr>, bool)> {
    let (operands, cast) = as_doubles(operands, schema)?;
    let floating = operands.iter().any(|e| e.get_type(schema).is_ok_and(|t| is_floating(&t)));
    if !floating {
        return Ok((operands, cast));
    }
    let normalized = operands.into_iter().map(|e| normalize_call(e, schema)).collect();
    Ok((normalized, true))
}

fn has_floats(schema: &DFSchema) -> bool {
    schema.fields().iter().any(|f| matches!(f.data_type(), DataType::Float32 | DataType::Float64))
}

/// `expr`, keeping its name, with its value normalized where it is a floating-point number.
pub(super) fn normalized(expr: Expr, schema: &DFSchema) -> Expr {
    if matches!(expr, Expr::GroupingSet(_)) {
        return expr;
    }
    let name = NamePreserver::new_for_projection().save(&expr);
    name.restore(normalize_call(expr, schema))
}

/// `expr` normalized where it is a floating-point number: every NaN one NaN, -0.0 as 0.0.
pub(super) fn normalize_call(expr: Expr, schema: &DFSchema) -> Expr {
    match expr.get_type(schema) {
        Ok(data_type) => crate::floating::key(expr, &data_type),
        Err(_) => expr,
    }
}

/// A CASE (an IF): `CASE x WHEN v …` compares as `=` does (NaN is NaN, -0.0 is 0.0); its
/// results have one type, a floating-point one with a decimal one all `DOUBLE`s
/// (`findWiderCommonType`).
pub(super) fn case_expr(mut case: Case, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let mut floating = false;
    if let Some(base) = case.expr.take() {
        floating = is_floating(&base.get_type(schema)?);
        case.expr = Some(Box::new(if floating { normalize_call(*base, schema) } else { *base }));
        if floating {
            for (when, _) in &mut case.when_then_expr {
                let value = std::mem::replace(when.as_mut(), Expr::Literal(ScalarValue::Null, None));
                **when = normalize_call(value, schema);
            }
        }
    }
    let mut results: Vec<Expr> = case.when_then_expr.iter().map(|(_, then)| then.as_ref().clone()).collect();
    results.extend(case.else_expr.as_deref().cloned());
    let (mut results, changed) = one_type(results, schema)?;
    if changed {
        if case.else_expr.is_some() {
            case.else_expr = results.pop().map(Box::new);
        }
        for ((_, then), result) in case.when_then_expr.iter_mut().zip(results) {
            **then = result;
        }
    }
    Ok(Transformed::new_transformed(Expr::Case(case), changed || floating))
}

/// `nullif(a, b)` is `CASE WHEN a = b THEN NULL ELSE a END`, `=` as Spark compares.
pub(super) fn nullif(call: ScalarFunction, schema: &DFSchema) -> Transformed<Expr> {
    let floating = call.args.iter().any(|a| a.get_type(schema).is_ok_and(|t| is_floating(&t)));
    if !floating {
        return Transformed::no(Expr::ScalarFunction(call));
    }
    let [a, b]: [Expr; 2] = call.args.try_into().expect("two operands");
    let equal =
        BinaryExpr::new(Box::new(normalize_call(a.clone(), schema)), Operator::Eq, Box::new(normalize_call(b, schema)));
    let null = Box::new(Expr::Literal(ScalarValue::Null, None));
    let case = Case::new(None, vec![(Box::new(Expr::BinaryExpr(equal)), null)], Some(Box::new(a)));
    Transformed::yes(Expr::Case(case))
}

pub(super) fn is_comparison(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

/// A comparison as Spark's: a date against a timestamp as timestamps (in microseconds); a
/// floating-point number against a decimal as `DOUBLE`s (`findWiderTypeForDecimal`); and
/// floating-point numbers normalized, so that NaN equals NaN and is the greatest value, and -0.0
/// equals 0.0 (Spark's `SQLOrderingUtil`).
pub(super) fn comparison(
    binary: BinaryExpr,
    (lt, rt): (&DataType, &DataType),
    schema: &DFSchema,
) -> Result<Transformed<Expr>> {
    let BinaryExpr { left, op, right } = binary;
    let (left, right) = match (lt, rt) {
        (DataType::Date32, DataType::Timestamp(..)) => (cast(*left, rt, schema)?, *right),
        (DataType::Timestamp(..), DataType::Date32) => (*left, cast(*right, lt, schema)?),
        // Decimals whose common type would need more than 38 digits compare as `DOUBLE`s.
        (DataType::Decimal128(p1, s1), DataType::Decimal128(p2, s2))
            if i16::from(*p1 - s1.unsigned_abs()).max(i16::from(*p2 - s2.unsigned_abs())) + i16::from(*s1.max(s2))
                > 38 =>
        {
            (cast(*left, &DataType::Float64, schema)?, cast(*right, &DataType::Float64, schema)?)
        }
        (lt, rt) if !(is_floating(lt) || is_floating(rt)) => {
            return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr::new(left, op, right))));
        }
        _ => {
            let (mut operands, _) = as_doubles(vec![*left, *right], schema)?;
            let right = normalize_call(operands.pop().expect("two operands"), schema);
            let left = normalize_call(operands.pop().expect("two operands"), schema);
            (left, right)
        }
    };
    Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(Box::new(left), op, Box::new(right)))))
}
