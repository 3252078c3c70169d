//! Floating-point keys as Spark's `NormalizeFloatingNumbers` makes them: any NaN the one NaN,
//! -0.0 as 0.0, so that they group, join and match as equal. Used by the `spark` dialect's
//! grouping, join and window keys, and — whatever the dialect — by the keys of `merge` and
//! `append_dedup` (a key is one key however its zero or NaN was written).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float32Array, Float64Array};
use datafusion::arrow::datatypes::{DataType, Float32Type, Float64Type};
use datafusion::common::Result;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};
use datafusion::prelude::Expr;

/// Whether a value of `data_type` is normalized as a key.
#[must_use]
pub fn is_floating(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Float32 | DataType::Float64)
}

/// `array` with every NaN the one NaN and -0.0 as 0.0 where it holds floating-point numbers;
/// any other array as it is.
#[must_use]
pub fn normalized(array: &ArrayRef) -> ArrayRef {
    // x + 0.0 is x for every x but -0.0, which it makes 0.0 (IEEE 754 round to nearest).
    match array.data_type() {
        DataType::Float64 => Arc::new(
            array
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map(|d| if d.is_nan() { f64::NAN } else { d + 0.0 }))
                .collect::<Float64Array>(),
        ),
        DataType::Float32 => Arc::new(
            array
                .as_primitive::<Float32Type>()
                .iter()
                .map(|v| v.map(|f| if f.is_nan() { f32::NAN } else { f + 0.0 }))
                .collect::<Float32Array>(),
        ),
        _ => Arc::clone(array),
    }
}

/// `expr` (a value of `data_type`) as a key: normalized where it is a floating-point number.
#[must_use]
pub fn key(expr: Expr, data_type: &DataType) -> Expr {
    if !is_floating(data_type) {
        return expr;
    }
    let udf = Arc::new(ScalarUDF::new_from_impl(NormalizeFloating::default()));
    Expr::ScalarFunction(ScalarFunction::new_udf(udf, vec![expr]))
}

/// [`normalized`] as a function of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NormalizeFloating {
    signature: Signature,
}

impl Default for NormalizeFloating {
    fn default() -> Self {
        Self { signature: Signature::any(1, Volatility::Immutable) }
    }
}

impl ScalarUDFImpl for NormalizeFloating {
    fn name(&self) -> &'static str {
        "spark_normalize_floating"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(args.first().cloned().unwrap_or(DataType::Float64))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Ok(ColumnarValue::Array(normalized(&args.args[0].to_array(args.number_rows)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nan_is_one_nan_and_negative_zero_is_zero() {
        let other_nan = f64::from_bits(0xFFF8_0000_0000_0001);
        let input: ArrayRef = Arc::new(Float64Array::from(vec![Some(other_nan), Some(-0.0), Some(-1.5), None]));
        let out = normalized(&input);
        let out = out.as_primitive::<Float64Type>();
        assert_eq!(out.value(0).to_bits(), f64::NAN.to_bits());
        assert_eq!(out.value(1).to_bits(), 0.0_f64.to_bits());
        assert_eq!(out.value(2).to_bits(), (-1.5_f64).to_bits());
        assert!(out.is_null(3));
        let floats: ArrayRef = Arc::new(Float32Array::from(vec![-0.0_f32, f32::from_bits(0xFFC0_0001)]));
        let out = normalized(&floats);
        let out = out.as_primitive::<Float32Type>();
        assert_eq!((out.value(0).to_bits(), out.value(1).to_bits()), (0.0_f32.to_bits(), f32::NAN.to_bits()));
    }
}
