//! Function calls and casts as Spark's analyzer types them, for [`super::coerce`]: `COALESCE`'s
//! operands of one type, `nvl`,
//! `nullif`, `isnan`, `pmod` of doubles and `EXTRACT` as Spark defines them, and each `CAST` that
//! Spark computes otherwise than DataFusion as [`super::cast::SparkCast`].

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, ScalarUDF, TryCast};

use super::arith::Mode;
use super::equality::{nullif, one_type};

/// A function call as Spark's analyzer types it.
pub(super) fn function_call(mut call: ScalarFunction, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match call.name() {
        // COALESCE's, GREATEST's and LEAST's operands have one type, as a CASE's results do.
        "coalesce" | "greatest" | "least" => {
            let (args, changed) = one_type(std::mem::take(&mut call.args), schema)?;
            call.args = args;
            Ok(Transformed::new_transformed(Expr::ScalarFunction(call), changed))
        }
        // `nvl(a, b)` and `ifnull(a, b)` are `coalesce(a, b)`.
        "nvl" | "ifnull" => {
            let (args, _) = one_type(std::mem::take(&mut call.args), schema)?;
            Ok(Transformed::yes(datafusion::functions::core::expr_fn::coalesce(args)))
        }
        "nullif" if call.args.len() == 2 => Ok(nullif(call, schema)),
        // `isnan(NULL)` is false.
        "isnan" if call.args.len() == 1 => {
            let call = Expr::ScalarFunction(call);
            let or_false = datafusion::functions::core::expr_fn::coalesce(vec![
                call,
                Expr::Literal(ScalarValue::Boolean(Some(false)), None),
            ]);
            Ok(Transformed::yes(or_false))
        }
        // `pmod(a, n)` of floating-point numbers: `a % n`, plus `n` where that is below zero (so
        // that -0.0 stays -0.0, as in Spark's `Pmod`).
        "pmod"
            if call.args.len() == 2 && call.args.iter().any(|a| a.get_type(schema).is_ok_and(|t| t.is_floating())) =>
        {
            let [a, n]: [Expr; 2] = std::mem::take(&mut call.args).try_into().expect("two operands");
            let remainder = a % n.clone();
            let below_zero = remainder.clone().lt(Expr::Literal(ScalarValue::Float64(Some(0.0)), None));
            let case =
                datafusion::logical_expr::when(below_zero, (remainder.clone() + n.clone()) % n).otherwise(remainder)?;
            Ok(Transformed::yes(case))
        }
        // `EXTRACT(field FROM x)`, which DataFusion's planner makes its own `date_part`: Spark's.
        "date_part" if call.func.inner().downcast_ref::<super::datetime::DatePart>().is_none() => {
            Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(super::datetime::date_part(), call.args))))
        }
        _ => Ok(Transformed::no(Expr::ScalarFunction(call))),
    }
}

/// `cast`, a `CAST(expr AS to)` (`try_cast` in [`Mode::Try`]): Spark's where it is not DataFusion's.
pub(super) fn spark_cast(cast: Expr, to: DataType, schema: &DFSchema, mode: Mode) -> Result<Transformed<Expr>> {
    let (Expr::Cast(Cast { expr, .. }) | Expr::TryCast(TryCast { expr, .. })) = &cast else {
        return Ok(Transformed::no(cast));
    };
    let from = expr.get_type(schema)?;
    // A constant that fits (an `INT` literal's marker, see `super::syntax`) stays DataFusion's.
    let fitting_literal = super::numcast::handles(&from, &to)
        && matches!(expr.as_ref(), Expr::Literal(v, _) if v.cast_to(&to).is_ok_and(|c| !c.is_null()));
    if fitting_literal || !super::cast::handles(&from, &to) {
        // Without ANSI mode, text that does not read as the type is NULL (Spark's `Cast` in
        // `EvalMode.LEGACY`), as DataFusion's `TRY_CAST` gives.
        if mode == Mode::Legacy
            && matches!(from, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
            && let Expr::Cast(Cast { expr, field }) = cast
        {
            return Ok(Transformed::yes(Expr::TryCast(TryCast::new_from_field(expr, field))));
        }
        return Ok(Transformed::no(cast));
    }
    let shown = format!("CAST({} AS {})", expr.human_display(), super::arith::spark_type_name(&to).to_uppercase());
    let udf = ScalarUDF::new_from_impl(super::cast::SparkCast::new(to, mode).shown(shown));
    Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(Arc::new(udf), vec![expr.as_ref().clone()]))))
}
