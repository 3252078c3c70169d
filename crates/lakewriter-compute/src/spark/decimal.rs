//! Exact decimal arithmetic for [`super::arith`]: operands as unscaled integers and scales, the
//! result of `+ - * / %` computed exactly (a quotient to [`DIVISION_SCALE`] places) and rounded
//! half up to the scale of Spark's result type.

use std::fmt;

use bigdecimal::num_bigint::{BigInt, Sign};

use datafusion::arrow::datatypes::DataType;

/// An arithmetic operator of Spark's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Op {
    Add,
    Subtract,
    Multiply,
    /// `/`: fractional division (operands and result DOUBLE or DECIMAL).
    Divide,
    /// `div`: integral division (a BIGINT result).
    IntegralDivide,
    /// `%`.
    Remainder,
}

impl Op {
    /// Spark's `try_` function of the operator, which its ANSI errors name.
    pub(super) fn try_function(self) -> &'static str {
        match self {
            Self::Add => "try_add",
            Self::Subtract => "try_subtract",
            Self::Multiply => "try_multiply",
            Self::Divide | Self::IntegralDivide => "try_divide",
            Self::Remainder => "try_mod",
        }
    }
}

/// The decimal `(precision, scale)` a signed integer type stands for in Spark's decimal rules
/// (`DecimalType.forType`).
pub(super) fn of_integer(t: &DataType) -> Option<(u8, i8)> {
    Some(match t {
        DataType::Int8 => (3, 0),
        DataType::Int16 => (5, 0),
        DataType::Int32 => (10, 0),
        DataType::Int64 => (20, 0),
        _ => return None,
    })
}

/// An exact decimal: an unscaled integer and its scale.
#[derive(Debug, Clone)]
pub(super) struct Scaled(pub(super) BigInt, pub(super) i8);

impl Scaled {
    /// This value at `scale` places, rounded half up (away from zero at a half).
    pub(super) fn rescale(self, scale: i8) -> Self {
        let Scaled(v, s) = self;
        if scale >= s {
            return Scaled(v * pow10(scale - s), scale);
        }
        Scaled(round_half_up(&v, &pow10(s - scale)), scale)
    }
}

impl fmt::Display for Scaled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.0.magnitude().to_string();
        let sign = if self.0.sign() == Sign::Minus { "-" } else { "" };
        let scale = usize::try_from(self.1).unwrap_or(0);
        if scale == 0 {
            return write!(f, "{sign}{digits}");
        }
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (int, frac) = padded.split_at(padded.len() - scale);
        write!(f, "{sign}{int}.{frac}")
    }
}

fn pow10(n: i8) -> BigInt {
    BigInt::from(10).pow(u32::from(n.unsigned_abs()))
}

/// `v / d` rounded half up (`d` > 0).
fn round_half_up(v: &BigInt, d: &BigInt) -> BigInt {
    let (q, r) = (v / d, v % d);
    if r.magnitude() * 2u32 >= *d.magnitude() { if v.sign() == Sign::Minus { q - 1 } else { q + 1 } } else { q }
}

/// Both operands at the greater scale of the two, as unscaled integers.
pub(super) fn aligned(a: Scaled, b: Scaled) -> (BigInt, BigInt) {
    let scale = a.1.max(b.1);
    (a.rescale(scale).0, b.rescale(scale).0)
}

/// The quotient's scale before Spark rounds it to the result type's (`DecimalType.MAX_SCALE + 1`).
const DIVISION_SCALE: i8 = 39;

pub(super) fn exact(op: Op, lhs: Scaled, rhs: Scaled) -> Scaled {
    match op {
        Op::Add | Op::Subtract | Op::Remainder => {
            let scale = lhs.1.max(rhs.1);
            let (x, y) = aligned(lhs, rhs);
            let value = match op {
                Op::Add => x + y,
                Op::Subtract => x - y,
                _ => x % y,
            };
            Scaled(value, scale)
        }
        Op::Multiply => Scaled(lhs.0 * rhs.0, lhs.1 + rhs.1),
        Op::Divide | Op::IntegralDivide => {
            // a/b at DIVISION_SCALE places: (a * 10^(D - sa + sb)) / b, rounded half up.
            let shift = i32::from(DIVISION_SCALE) - i32::from(lhs.1) + i32::from(rhs.1);
            let (num, den) = if shift >= 0 {
                (lhs.0 * BigInt::from(10).pow(shift.unsigned_abs()), rhs.0)
            } else {
                (lhs.0, rhs.0 * BigInt::from(10).pow(shift.unsigned_abs()))
            };
            let negative = (num.sign() == Sign::Minus) != (den.sign() == Sign::Minus);
            let magnitude =
                round_half_up(&BigInt::from(num.magnitude().clone()), &BigInt::from(den.magnitude().clone()));
            Scaled(if negative { -magnitude } else { magnitude }, DIVISION_SCALE)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    /// The exact decimal `text` (`-0.02`).
    fn scaled(text: &str) -> Scaled {
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        Scaled(BigInt::from_str(&format!("{int}{frac}")).expect("digits"), i8::try_from(frac.len()).expect("scale"))
    }

    #[test]
    fn a_quotient_rounds_half_up_at_the_result_scale() {
        let q = exact(Op::Divide, scaled("0.02"), scaled("3")).rescale(6);
        assert_eq!(q.to_string(), "0.006667");
        let q = exact(Op::Divide, scaled("-0.02"), scaled("3")).rescale(6);
        assert_eq!(q.to_string(), "-0.006667");
        assert_eq!(exact(Op::Multiply, scaled("0.15"), scaled("1.5")).rescale(2).to_string(), "0.23");
    }
}

/// Spark's `-x` of a decimal (`UnaryMinus`): Scala's `BigDecimal.unary_-`, which rounds to its
/// `MathContext.DECIMAL128` — 34 significant digits, half even —, so that a value of more digits
/// loses its last ones (`-12345678901234567890.123456789012345678` is
/// `-12345678901234567890.123456789012350000`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Negate {
    signature: datafusion::logical_expr::Signature,
}

impl Negate {
    pub(crate) fn call(operand: datafusion::logical_expr::Expr) -> datafusion::logical_expr::Expr {
        use datafusion::logical_expr::{ScalarUDF, Signature, Volatility};
        let udf = ScalarUDF::new_from_impl(Self { signature: Signature::any(1, Volatility::Immutable) });
        datafusion::logical_expr::Expr::ScalarFunction(datafusion::logical_expr::expr::ScalarFunction::new_udf(
            std::sync::Arc::new(udf),
            vec![operand],
        ))
    }
}

impl datafusion::logical_expr::ScalarUDFImpl for Negate {
    fn name(&self) -> &'static str {
        "negative"
    }

    fn signature(&self) -> &datafusion::logical_expr::Signature {
        &self.signature
    }

    fn return_type(
        &self,
        args: &[datafusion::arrow::datatypes::DataType],
    ) -> datafusion::common::Result<datafusion::arrow::datatypes::DataType> {
        Ok(args[0].clone())
    }

    fn invoke_with_args(
        &self,
        args: datafusion::logical_expr::ScalarFunctionArgs,
    ) -> datafusion::common::Result<datafusion::logical_expr::ColumnarValue> {
        use datafusion::arrow::array::{Array, AsArray, Decimal128Array};
        use datafusion::arrow::datatypes::{DataType, Decimal128Type};
        let input = args.args[0].to_array(args.number_rows)?;
        let DataType::Decimal128(precision, scale) = *input.data_type() else {
            return datafusion::common::exec_err!("a decimal to negate, not {}", input.data_type());
        };
        let negated: Decimal128Array = input.as_primitive::<Decimal128Type>().iter().map(|v| v.map(negated)).collect();
        let negated = negated.with_precision_and_scale(precision, scale)?;
        Ok(datafusion::logical_expr::ColumnarValue::Array(std::sync::Arc::new(negated) as _))
    }
}

/// `-v`, rounded half even to 34 significant digits.
fn negated(v: i128) -> i128 {
    let digits = u32::try_from(v.unsigned_abs().to_string().len()).unwrap_or(39);
    if digits <= 34 {
        return -v;
    }
    let unit = 10_i128.pow(digits - 34);
    let (quotient, rest) = (v / unit, (v % unit).abs());
    let half = unit / 2;
    let up = rest > half || (rest == half && quotient % 2 != 0);
    -((quotient + if up { v.signum() } else { 0 }) * unit)
}

#[cfg(test)]
mod negation {
    #[test]
    fn a_negated_decimal_keeps_34_digits_as_scala_does() {
        let v = 12_345_678_901_234_567_890_123_456_789_012_345_678_i128;
        assert_eq!(super::negated(v), -12_345_678_901_234_567_890_123_456_789_012_350_000_i128);
        assert_eq!(super::negated(-725), 725);
    }
}
