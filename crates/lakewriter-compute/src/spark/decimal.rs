//! Exact decimal arithmetic for [`super::arith`]: operands as unscaled integers and scales, the
//! result of `+ - * / %` computed exactly (a quotient to [`DIVISION_SCALE`] places) and rounded
//! half up to the scale of Spark's result type.

use std::fmt;

use bigdecimal::num_bigint::{BigInt, Sign};

use super::arith::Op;

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
