//! Spark's math functions on `DOUBLE`s where DataFusion's answer differs (`mathExpressions.scala`):
//! `sqrt` of a negative number is NaN (in ANSI mode too), and `signum`/`sign` are Java's
//! `Math.signum` (-0.0 and NaN are themselves; a `DOUBLE` for every number). The logarithms stay
//! refused: Java's `StrictMath.log` (fdlibm) and the platform's differ in the last bit of some
//! values.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, Float64Array};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// The functions of this module.
pub(crate) fn functions() -> Vec<Arc<ScalarUDF>> {
    [("sqrt", Kind::Sqrt), ("signum", Kind::Signum), ("sign", Kind::Signum)]
        .into_iter()
        .map(|(name, kind)| {
            let signature = Signature::variadic_any(Volatility::Immutable);
            Arc::new(ScalarUDF::new_from_impl(SparkMath { name, kind, signature }))
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Sqrt,
    Signum,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SparkMath {
    name: &'static str,
    kind: Kind,
    signature: Signature,
}

impl SparkMath {
    fn one(&self, x: f64) -> f64 {
        match self.kind {
            Kind::Sqrt => x.sqrt(),
            // Java's `Math.signum`: ±0.0 and NaN as they are.
            Kind::Signum => {
                if x == 0.0 || x.is_nan() {
                    x
                } else {
                    x.signum()
                }
            }
        }
    }
}

impl ScalarUDFImpl for SparkMath {
    fn name(&self) -> &'static str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        if args.len() != 1 {
            return exec_err!("{} takes one argument, not {}", self.name, args.len());
        }
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let x =
            cast_with_options(&args.args[0].to_array(args.number_rows)?, &DataType::Float64, &CastOptions::default())?;
        let out: Float64Array = x.as_primitive::<Float64Type>().iter().map(|v| v.map(|v| self.one(v))).collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, SparkMath};

    fn math(kind: Kind) -> SparkMath {
        let signature =
            datafusion::logical_expr::Signature::variadic_any(datafusion::logical_expr::Volatility::Immutable);
        SparkMath { name: "f", kind, signature }
    }

    #[test]
    fn sqrt_of_a_negative_number_is_nan_and_signum_keeps_signed_zero() {
        assert!(math(Kind::Sqrt).one(-1.0).is_nan());
        assert_eq!(math(Kind::Signum).one(-0.0).to_bits(), (-0.0_f64).to_bits());
        assert_eq!(math(Kind::Signum).one(-7.5).to_bits(), (-1.0_f64).to_bits());
    }
}
