//! Spark's `CAST` of a number to an integral type or a `DECIMAL` (`Cast.castToByte` …
//! `castToLong`, `castToDecimal`), and between `BOOLEAN` and `DECIMAL`. Where the value fits,
//! Arrow's cast gives Spark's value (integral parts truncated toward zero, decimals rounded half
//! up); where it does not, ANSI mode fails the query (`CAST_OVERFLOW`), `try_cast` gives NULL,
//! and the other modes give what Spark's legacy cast gives: an integral value is Java's
//! narrowing (`(int) aLong` keeps the low bits, `(long) aDouble` saturates, NaN is 0; a
//! `DECIMAL`'s integral part is taken as Java's `BigDecimal.longValue` does), a `DECIMAL` NULL.

use datafusion::arrow::array::{Array, ArrayRef, Int64Array};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};

use super::arith::Mode;

/// Whether the cast from `from` to `to` is this module's.
pub(crate) fn handles(from: &DataType, to: &DataType) -> bool {
    let integral = |t: &DataType| t.is_integer();
    let exact = integral(from) || matches!(from, DataType::Decimal128(..));
    // A signed integer into a type as wide or wider: Arrow's cast, which cannot overflow.
    let widening = from.is_signed_integer() && to.is_integer() && to.primitive_width() >= from.primitive_width();
    match to {
        _ if widening => false,
        t if integral(t) => from != to && (exact || from.is_floating()),
        DataType::Decimal128(..) => from != to && (exact || *from == DataType::Boolean),
        DataType::Boolean => matches!(from, DataType::Decimal128(..)),
        _ => false,
    }
}

/// `input` cast to `to` in `mode`; `unfit` is the error of a value that does not fit in ANSI
/// mode.
pub(crate) fn cast(
    input: &ArrayRef,
    to: &DataType,
    mode: Mode,
    unfit: impl Fn(&ScalarValue) -> datafusion::error::DataFusionError,
) -> Result<ArrayRef> {
    if *to == DataType::Boolean {
        // A DECIMAL is true where it is not zero.
        let zero = ScalarValue::new_zero(input.data_type())?.to_array()?;
        let zero = datafusion::arrow::array::Scalar::new(zero);
        return Ok(std::sync::Arc::new(datafusion::arrow::compute::kernels::cmp::neq(input, &zero)?));
    }
    let input = match input.data_type() {
        DataType::Boolean => &cast_with_options(input, &DataType::Int32, &CastOptions::default())?,
        _ => input,
    };
    let safe = CastOptions { safe: true, ..CastOptions::default() };
    let out = cast_with_options(input, to, &safe)?;
    let unfitting: Vec<usize> = (0..input.len()).filter(|&i| input.is_valid(i) && out.is_null(i)).collect();
    if unfitting.is_empty() || mode == Mode::Try {
        return Ok(out);
    }
    let mut values: Vec<Option<i64>> = Vec::new();
    if to.is_integer() {
        values = cast_with_options(&out, &DataType::Int64, &safe)?
            .as_any()
            .downcast_ref::<Int64Array>()
            .map_or_else(|| vec![None; out.len()], |a| a.iter().collect());
    }
    for i in unfitting {
        let value = ScalarValue::try_from_array(input, i)?;
        match (mode, integral_of(&value, to, mode)) {
            (_, Some(v)) if to.is_integer() => values[i] = Some(v),
            (Mode::Ansi, _) => return Err(unfit(&value)),
            _ => {}
        }
    }
    if !to.is_integer() {
        return Ok(out);
    }
    Ok(cast_with_options(&(std::sync::Arc::new(Int64Array::from(values)) as ArrayRef), to, &safe)?)
}

/// The value Spark casts `value` (one that Arrow's cast to `to` found unfitting) to: ANSI mode
/// takes a floating-point number up to `2^63` to a `BIGINT` (Spark compares it with
/// `Long.MaxValue` as a `DOUBLE`), the legacy mode narrows every number as Java does.
#[allow(clippy::cast_possible_truncation, reason = "Java's narrowing keeps the low bits and saturates a double")]
fn integral_of(value: &ScalarValue, to: &DataType, mode: Mode) -> Option<i64> {
    let bits = |n: i64| -> i64 {
        match to {
            DataType::Int8 => i64::from(n as i8),
            DataType::Int16 => i64::from(n as i16),
            DataType::Int32 => i64::from(n as i32),
            _ => n,
        }
    };
    let float = match value {
        ScalarValue::Float64(Some(d)) => Some(*d),
        ScalarValue::Float32(Some(f)) => Some(f64::from(*f)),
        _ => None,
    };
    if let Some(d) = float {
        #[allow(clippy::cast_precision_loss, reason = "Spark compares with Long.MaxValue as a double")]
        let fits_long = d.floor() <= i64::MAX as f64 && d.ceil() >= i64::MIN as f64;
        return match (mode, to) {
            (Mode::Ansi, DataType::Int64) if fits_long => Some(d as i64),
            (Mode::Ansi, _) => None,
            // Java's `(long) d` and `(int) d` saturate; a narrower type takes the int's low bits.
            (_, DataType::Int64) => Some(d as i64),
            _ => Some(bits(i64::from(d as i32))),
        };
    }
    if mode == Mode::Ansi {
        return None;
    }
    let integral: i128 = match value {
        ScalarValue::Decimal128(Some(v), _, scale) => v / 10_i128.pow(u32::try_from(*scale).ok()?),
        other => match other.cast_to(&DataType::Decimal128(38, 0)).ok()? {
            ScalarValue::Decimal128(Some(v), ..) => v,
            _ => return None,
        },
    };
    // The low 64 bits, then the target's low bits: `BigDecimal.longValue`, `(int) aLong`.
    Some(bits(integral as i64))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Array, Float64Array, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Int8Type, Int32Type, Int64Type};
    use datafusion::error::DataFusionError;

    use super::{Mode, cast};

    fn unfit(_: &datafusion::common::ScalarValue) -> DataFusionError {
        DataFusionError::Execution("overflow".to_owned())
    }

    #[test]
    #[allow(clippy::cast_possible_truncation, reason = "the low bits, as Java keeps them")]
    fn legacy_narrowing_is_javas() {
        let longs: ArrayRef = Arc::new(Int64Array::from(vec![Some(i64::MAX), Some(123_456), None, Some(7)]));
        let ints = cast(&longs, &DataType::Int32, Mode::Legacy, unfit).unwrap();
        let ints: Vec<_> = ints.as_primitive::<Int32Type>().iter().collect();
        assert_eq!(ints, [Some(-1), Some(123_456), None, Some(7)]);
        let bytes = cast(&longs, &DataType::Int8, Mode::Legacy, unfit).unwrap();
        assert_eq!(bytes.as_primitive::<Int8Type>().value(1), 64);

        let doubles: ArrayRef = Arc::new(Float64Array::from(vec![f64::NAN, 1e300, -1e10, 4.7]));
        let longs = cast(&doubles, &DataType::Int64, Mode::Legacy, unfit).unwrap();
        let longs: Vec<_> = longs.as_primitive::<Int64Type>().iter().collect();
        assert_eq!(longs, [Some(0), Some(i64::MAX), Some(-10_000_000_000), Some(4)]);

        let decimals: ArrayRef = Arc::new(
            Decimal128Array::from(vec![99_999_999_999_999_999_999_i128 * 100]).with_precision_and_scale(22, 2).unwrap(),
        );
        let longs = cast(&decimals, &DataType::Int64, Mode::Legacy, unfit).unwrap();
        assert_eq!(longs.as_primitive::<Int64Type>().value(0), 99_999_999_999_999_999_999_i128 as i64);
        let narrow = cast(&decimals, &DataType::Decimal128(10, 2), Mode::Legacy, unfit).unwrap();
        assert!(narrow.is_null(0));
    }

    #[test]
    fn ansi_fails_where_a_value_does_not_fit_and_try_gives_null() {
        let longs: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX]));
        assert!(cast(&longs, &DataType::Int32, Mode::Ansi, unfit).is_err());
        assert!(cast(&longs, &DataType::Int32, Mode::Try, unfit).unwrap().is_null(0));
        // 2^63 as a DOUBLE is not above Long.MaxValue as a DOUBLE: Spark saturates it.
        #[allow(clippy::cast_precision_loss)]
        let edge: ArrayRef = Arc::new(Float64Array::from(vec![i64::MAX as f64]));
        let longs = cast(&edge, &DataType::Int64, Mode::Ansi, unfit).unwrap();
        assert_eq!(longs.as_primitive::<Int64Type>().value(0), i64::MAX);
    }
}
