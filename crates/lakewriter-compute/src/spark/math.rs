//! Spark's math functions on `DOUBLE`s where DataFusion's answer differs (`mathExpressions.scala`):
//! `sqrt` of a negative number is NaN (in ANSI mode too), `signum`/`sign` are Java's
//! `Math.signum` (-0.0 and NaN are themselves; a `DOUBLE` for every number), and the logarithms
//! are Java's `StrictMath` ones, fdlibm's (the platform's differ in the last bit of some values),
//! NULL for a number at or below zero: `ln` and `log(x)`, `log10`, `log2` (`ln(x) / ln(2)`) and
//! `log(base, x)` (`ln(x) / ln(base)`), and `cbrt`, fdlibm's too.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, Float64Array};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// The functions of this module.
pub(crate) fn functions() -> Vec<Arc<ScalarUDF>> {
    [
        ("sqrt", Kind::Sqrt),
        ("signum", Kind::Signum),
        ("sign", Kind::Signum),
        ("ln", Kind::Ln),
        ("log", Kind::Log),
        ("log10", Kind::Log10),
        ("log2", Kind::Log2),
        ("cbrt", Kind::Cbrt),
    ]
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
    Ln,
    /// `log(x)`, or `log(base, x)`.
    Log,
    Log10,
    Log2,
    Cbrt,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SparkMath {
    name: &'static str,
    kind: Kind,
    signature: Signature,
}

/// fdlibm's `log10` (`e_log10.c`, which Java's `StrictMath.log10` is): `log(x)` of the mantissa
/// over `ln(10)` plus the exponent times `log10(2)`, in two parts.
#[expect(clippy::many_single_char_names, reason = "fdlibm's names, to read beside e_log10.c")]
fn log10(x: f64) -> f64 {
    const IVLN10: f64 = f64::from_bits(0x3fdb_cb7b_1526_e50e);
    const LOG10_2HI: f64 = f64::from_bits(0x3fd3_4413_509f_6000);
    const LOG10_2LO: f64 = f64::from_bits(0x3d59_fef3_11f1_2b36);
    let (mut x, mut k) = (x, 0_i32);
    let mut high = (x.to_bits() >> 32) as i32;
    if high < 0x0010_0000 {
        // Zero, negative or subnormal.
        if x == 0.0 {
            return f64::NEG_INFINITY;
        }
        if high < 0 {
            return f64::NAN;
        }
        k -= 54;
        x *= 18_014_398_509_481_984.0; // 2^54
        high = (x.to_bits() >> 32) as i32;
    }
    if high >= 0x7ff0_0000 {
        return x + x;
    }
    k += (high >> 20) - 1023;
    let i = i32::from(k < 0);
    let high = (high & 0x000f_ffff) | ((0x3ff - i) << 20);
    let y = f64::from(k + i);
    let x = f64::from_bits((u64::from(high.cast_unsigned()) << 32) | (x.to_bits() & 0xffff_ffff));
    let z = y * LOG10_2LO + IVLN10 * libm::log(x);
    z + y * LOG10_2HI
}

/// fdlibm's `cbrt` (`s_cbrt.c`, which Java's `StrictMath.cbrt` is): a cube root good to 5 bits
/// from the exponent, to 23 bits by a rational approximation, to 53 by one Newton step.
#[expect(clippy::many_single_char_names, reason = "fdlibm's names, to read beside s_cbrt.c")]
fn cbrt(x: f64) -> f64 {
    const B1: u32 = 715_094_163;
    const B2: u32 = 696_219_795;
    const C: f64 = f64::from_bits(0x3fe1_5f15_f15f_15f1); // 19/35
    const D: f64 = f64::from_bits(0xbfe6_91de_2532_c834); // -864/1225
    const E: f64 = f64::from_bits(0x3ff6_a0ea_0ea0_ea0f); // 99/70
    const F: f64 = f64::from_bits(0x3ff9_b6db_6db6_db6e); // 45/28
    const G: f64 = f64::from_bits(0x3fd6_db6d_b6db_6db7); // 5/14
    let high = |v: f64| (v.to_bits() >> 32) as u32;
    let with_high = |v: f64, h: u32| f64::from_bits((u64::from(h) << 32) | (v.to_bits() & 0xffff_ffff));
    let sign = high(x) & 0x8000_0000;
    let hx = high(x) ^ sign;
    if hx >= 0x7ff0_0000 {
        return x + x;
    }
    if x == 0.0 {
        return x;
    }
    let x = with_high(x, hx);
    let mut t = if hx < 0x0010_0000 {
        // Subnormal: scaled by 2^54 first.
        let t = f64::from_bits(0x4350_0000_u64 << 32) * x;
        with_high(t, high(t) / 3 + B2)
    } else {
        f64::from_bits(u64::from(hx / 3 + B1) << 32)
    };
    let r = t * t / x;
    let s = C + r * t;
    t *= G + F / (s + E + D / s);
    t = f64::from_bits(u64::from(high(t) + 1) << 32);
    let s = t * t;
    let r = x / s;
    let w = t + t;
    let r = (r - t) / (w + r);
    t += t * r;
    with_high(t, high(t) | sign)
}

/// A logarithm of Spark's: NULL at or below zero.
fn logarithm(x: f64, log: impl Fn(f64) -> f64) -> Option<f64> {
    if x <= 0.0 { None } else { Some(log(x)) }
}

impl SparkMath {
    fn one(&self, x: f64) -> Option<f64> {
        Some(match self.kind {
            Kind::Ln | Kind::Log => return logarithm(x, libm::log),
            Kind::Log10 => return logarithm(x, log10),
            Kind::Log2 => return logarithm(x, |x| libm::log(x) / libm::log(2.0)),
            Kind::Sqrt => x.sqrt(),
            Kind::Cbrt => cbrt(x),
            // Java's `Math.signum`: ±0.0 and NaN as they are.
            Kind::Signum => {
                if x == 0.0 || x.is_nan() {
                    x
                } else {
                    x.signum()
                }
            }
        })
    }

    /// `log(base, x)`.
    fn two(base: f64, x: f64) -> Option<f64> {
        if base <= 0.0 { None } else { logarithm(x, |x| libm::log(x) / libm::log(base)) }
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
        let arity = if self.kind == Kind::Log { 1..=2 } else { 1..=1 };
        if !arity.contains(&args.len()) {
            return exec_err!("{} takes {arity:?} arguments, not {}", self.name, args.len());
        }
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let doubles = args
            .args
            .iter()
            .map(|a| cast_with_options(&a.to_array(args.number_rows)?, &DataType::Float64, &CastOptions::default()))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let x = doubles[doubles.len() - 1].as_primitive::<Float64Type>();
        let out: Float64Array = match doubles.as_slice() {
            [base, _] => base
                .as_primitive::<Float64Type>()
                .iter()
                .zip(x.iter())
                .map(|(b, x)| b.zip(x).and_then(|(b, x)| Self::two(b, x)))
                .collect(),
            _ => x.iter().map(|v| v.and_then(|v| self.one(v))).collect(),
        };
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
        assert!(math(Kind::Sqrt).one(-1.0).is_some_and(f64::is_nan));
        assert_eq!(math(Kind::Signum).one(-0.0).map(f64::to_bits), Some((-0.0_f64).to_bits()));
        assert_eq!(math(Kind::Signum).one(-7.5).map(f64::to_bits), Some((-1.0_f64).to_bits()));
    }

    #[test]
    fn logarithms_are_null_at_or_below_zero_and_log10_is_exact_on_powers_of_ten() {
        assert_eq!(math(Kind::Ln).one(0.0), None);
        assert_eq!(math(Kind::Log10).one(-1.0), None);
        assert!(math(Kind::Log2).one(f64::NAN).is_some_and(f64::is_nan));
        for (n, x) in [1e-300, 1e-5, 1.0, 1e3, 1e22, 1e300].into_iter().enumerate() {
            let expected = [-300.0, -5.0, 0.0, 3.0, 22.0, 300.0][n];
            assert_eq!(math(Kind::Log10).one(x), Some(expected), "log10({x})");
        }
    }

    /// The bits of `x`, `StrictMath.log(x)` and `StrictMath.log10(x)` in Java 17.
    const JAVA: &[(u64, u64, u64)] = &[
        (0x0000_0000_0000_0001, 0xc087_4385_446d_71c3, 0xc074_34e6_420f_4374),
        (0x3e90_c6f7_a0b5_ed8d, 0xc02e_6752_f96f_46de, 0xc01a_6882_6a13_ef40),
        (0x3fb9_9999_9999_999a, 0xc002_6bb1_bbb5_5515, 0xbff0_0000_0000_0000),
        (0x3fd3_3333_3333_3333, 0xbff3_4378_fcbd_a721, 0xbfe0_bb6c_34d8_1502),
        (0x3fe6_6666_6666_6666, 0xbfd6_d3c3_24e1_3f50, 0xbfc3_d3d3_d21c_cf04),
        (0x3ff8_0000_0000_0000, 0x3fd9_f323_ecbf_984c, 0x3fc6_8a28_8b60_b7fc),
        (0x4000_0000_0000_0000, 0x3fe6_2e42_fefa_39ef, 0x3fd3_4413_509f_79ff),
        (0x4008_0000_0000_0000, 0x3ff1_93ea_7aad_030a, 0x3fde_8927_964f_d5fd),
        (0x401c_0000_0000_0000, 0x3fff_2272_ae32_5a57, 0x3feb_0b0b_0b78_cc3f),
        (0x4025_0000_0000_0000, 0x4002_cf9d_d4b1_2035, 0x3ff0_56ca_9728_7d1f),
        (0x40fe_240c_9fbe_76c9, 0x4027_7281_cad8_a844, 0x4014_5db6_1a28_2512),
        (0x7e37_e43c_8800_759c, 0x4085_9634_47f8_7fb5, 0x4072_c000_0000_0000),
        (0x7fef_ffff_ffff_ffff, 0x4086_2e42_fefa_39ef, 0x4073_4413_509f_79ff),
        (0x0000_0000_0000_26be, 0xc086_f9e7_5a61_3381, 0xc073_f4f4_e7a8_8c85),
    ];

    /// The bits of `x` and `StrictMath.cbrt(x)` in Java 17 (subnormal, negative, -0.0, random bits).
    const JAVA_CBRT: &[(u64, u64)] = &[
        (0x3fb9_9999_9999_999a, 0x3fdd_b4c7_760b_cff3),
        (0x3fd3_3333_3333_3333, 0x3fe5_6bfe_a66e_f78d),
        (0x4000_0000_0000_0000, 0x3ff4_28a2_f98d_728b),
        (0x4008_0000_0000_0000, 0x3ff7_1374_4912_3ef6),
        (0x403b_0000_0000_0000, 0x4008_0000_0000_0000),
        (0x1268_8b70_e62b, 0x2a7a_9d1b_0b5d_7427),
        (0xc020_0000_0000_0000, 0xc000_0000_0000_0000),
        (0x401e_0000_0000_0000, 0x3fff_51a6_2037_e955),
        (0x3fd5_5555_5555_5555, 0x3fe6_3003_fbb4_c375),
        (0x405e_dd2f_1a9f_be77, 0x4013_ead4_f488_ee35),
        (0x8000_0000_0000_0000, 0x8000_0000_0000_0000),
        (0x9bdd_8be4_325f_9b16, 0xb3e8_bb61_5321_2a60),
        (0x1326_c004_812d_82f3, 0x3101_fde5_8cb9_efd1),
        (0xc958_c27a_fa27_59fe, 0xc312_81b5_694e_53d2),
        (0x539f_ae81_222a_73a1, 0x467f_e4be_85a0_fa00),
        (0x13b7_4bc5_1abd_7516, 0x3132_2272_5a9c_6337),
        (0x3327_d2af_4a02_743c, 0x3bad_0095_0ef8_7940),
        (0xe76d_b795_21ae_5e86, 0xcd18_c78c_216c_6292),
        (0x68e4_2fab_60de_a07d, 0x4d95_c853_9f44_c7f7),
        (0xdbb5_1eb3_1358_f66b, 0xc931_8d25_d9b0_108c),
        (0x2590_7c4a_2f11_4f5b, 0x3724_5c50_d8d7_3921),
    ];

    #[test]
    fn cbrt_is_java_strict_maths_to_the_bit() {
        for &(x, cbrt) in JAVA_CBRT {
            assert_eq!(super::cbrt(f64::from_bits(x)).to_bits(), cbrt, "cbrt({:e})", f64::from_bits(x));
        }
    }

    #[test]
    fn logarithms_are_java_strict_maths_to_the_bit() {
        for &(x, ln, log10) in JAVA {
            let x = f64::from_bits(x);
            assert_eq!(libm::log(x).to_bits(), ln, "ln({x:e})");
            assert_eq!(super::log10(x).to_bits(), log10, "log10({x:e})");
        }
        assert_eq!(SparkMath::two(2.0, 8.0), Some(3.0));
        assert_eq!(SparkMath::two(0.0, 8.0), None);
    }
}
