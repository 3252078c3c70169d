//! Spark's `round` (half up) and `bround` (half even) (`RoundBase` in
//! `org.apache.spark.sql.catalyst.expressions`): a `DOUBLE` or `FLOAT` is rounded as the decimal
//! Java's `Double.toString` writes it (`round(0.285, 2)` is 0.29), NaN and the infinities stay
//! as they are and -0.0 becomes 0.0; a `DECIMAL(p, s)` is a `DECIMAL(p - s + 1 + min(s, scale),
//! min(s, scale))` (scale 0 where `scale` is negative); an integer keeps its type, rounded to tens,
//! hundreds … where `scale` is negative. The scale is a constant, as Spark requires.

use std::sync::Arc;

use bigdecimal::{BigDecimal, RoundingMode};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Array, Float32Array, Float64Array, Int64Array};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Field, FieldRef, Float32Type, Float64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use super::arith::Mode;
use super::cast::java_double;

/// `round`, `bround`, `ceil` and `floor`, in `mode` (a `DECIMAL` that overflows its type fails in
/// ANSI mode).
pub(crate) fn functions(mode: Mode) -> Vec<Arc<ScalarUDF>> {
    let kinds = [
        ("round", RoundingMode::HalfUp),
        ("bround", RoundingMode::HalfEven),
        ("ceil", RoundingMode::Ceiling),
        ("floor", RoundingMode::Floor),
    ];
    kinds
        .into_iter()
        .map(|(name, rounding)| {
            let round = SparkRound { name, rounding, mode, signature: Signature::variadic_any(Volatility::Immutable) };
            Arc::new(ScalarUDF::new_from_impl(round))
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SparkRound {
    name: &'static str,
    rounding: RoundingMode,
    mode: Mode,
    signature: Signature,
}

/// The result type of rounding `input` to `scale` places.
fn rounded_type(input: &DataType, scale: i64) -> Result<DataType> {
    Ok(match input {
        DataType::Decimal128(p, s) => {
            let (p, s) = (i64::from(*p), i64::from(*s));
            let integral = p - s + 1;
            let (precision, scale) =
                if scale < 0 { (integral.max(1 - scale), 0) } else { (integral + s.min(scale), s.min(scale)) };
            DataType::Decimal128(u8::try_from(precision.min(38)).unwrap_or(38), i8::try_from(scale).unwrap_or(0))
        }
        t if t.is_integer() || t.is_floating() => t.clone(),
        DataType::Null => DataType::Float64,
        other => return plan_err!("round takes a number, not {other}"),
    })
}

/// The scale a call gives as its constant argument (`None`: not a constant).
fn scale_of(arg: Option<&ScalarValue>) -> Result<i64> {
    match arg {
        Some(value) if value.data_type().is_integer() => {
            if let ScalarValue::Int64(Some(scale)) = value.cast_to(&DataType::Int64)? {
                Ok(scale)
            } else {
                plan_err!("round's scale is NULL")
            }
        }
        _ => plan_err!("round's scale must be a constant integer, as in Spark"),
    }
}

impl ScalarUDFImpl for SparkRound {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        datafusion::common::internal_err!("return_field_from_args is used")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        if !(1..=2).contains(&args.arg_fields.len()) {
            return plan_err!("{} takes a number and a scale", self.name);
        }
        let scale = args.scalar_arguments.get(1).map_or(Ok(0), |scale| scale_of(*scale))?;
        let input = args.arg_fields[0].data_type();
        let output = match self.whole(input, args.arg_fields.len()) {
            Some(Whole::Long) => DataType::Int64,
            Some(Whole::Decimal(decimal)) => rounded_type(&decimal, scale)?,
            None => rounded_type(input, scale)?,
        };
        Ok(Arc::new(Field::new(self.name, output, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scale = match args.args.get(1) {
            Some(ColumnarValue::Scalar(value)) => scale_of(Some(value))?,
            Some(ColumnarValue::Array(_)) => return exec_err!("round's scale must be a constant integer"),
            None => 0,
        };
        let input = args.args[0].to_array(args.number_rows)?;
        match self.whole(input.data_type(), args.args.len()) {
            Some(Whole::Long) => return Ok(ColumnarValue::Array(self.longs(&input)?)),
            Some(Whole::Decimal(decimal)) => {
                let decimals = match input.data_type() {
                    t if t.is_floating() => {
                        super::cast::SparkCast::new(decimal.clone(), self.mode).decimals_of(&input)?
                    }
                    _ => cast_with_options(&input, &decimal, &CastOptions::default())?,
                };
                let DataType::Decimal128(_, s) = decimal else { unreachable!("a decimal") };
                let out = self.decimals(&decimals, (s, scale), args.return_field.data_type())?;
                return Ok(ColumnarValue::Array(out));
            }
            None => {}
        }
        let out: ArrayRef = match input.data_type() {
            DataType::Float64 => Arc::new(
                input
                    .as_primitive::<Float64Type>()
                    .iter()
                    .map(|v| v.map(|d| self.double(d, scale)))
                    .collect::<Float64Array>(),
            ),
            DataType::Float32 => Arc::new(
                input
                    .as_primitive::<Float32Type>()
                    .iter()
                    .map(|v| v.map(|f| self.float(f, scale)))
                    .collect::<Float32Array>(),
            ),
            DataType::Decimal128(_, s) => self.decimals(&input, (*s, scale), args.return_field.data_type())?,
            t if t.is_integer() => {
                let longs = cast_with_options(&input, &DataType::Int64, &CastOptions::default())?;
                let mut rounded = Vec::with_capacity(longs.len());
                for n in longs.as_primitive::<datafusion::arrow::datatypes::Int64Type>() {
                    rounded.push(n.map(|n| self.integer(n, scale, t)).transpose()?);
                }
                let rounded = Arc::new(Int64Array::from(rounded)) as ArrayRef;
                cast_with_options(&rounded, t, &CastOptions::default())?
            }
            DataType::Null => Arc::new(Float64Array::new_null(input.len())),
            other => return exec_err!("round takes a number, not {other}"),
        };
        Ok(ColumnarValue::Array(out))
    }
}

/// What `ceil` and `floor` make of a number that is not a decimal.
enum Whole {
    /// `ceil(x)` of a floating-point number or an integer: a `BIGINT`.
    Long,
    /// `ceil(x, scale)` of one: the number as this decimal first (a `DOUBLE` as Spark's
    /// `DoubleDecimal`, `decimal(30,15)`; an integer by its type).
    Decimal(DataType),
}

impl SparkRound {
    fn whole(&self, input: &DataType, arguments: usize) -> Option<Whole> {
        if !matches!(self.rounding, RoundingMode::Ceiling | RoundingMode::Floor) {
            return None;
        }
        let (precision, scale) = match input {
            t if t.is_floating() => (30, 15),
            t => super::decimal::of_integer(t).or_else(|| t.is_integer().then_some((20, 0)))?,
        };
        let decimal = DataType::Decimal128(precision, scale);
        Some(if arguments == 1 { Whole::Long } else { Whole::Decimal(decimal) })
    }

    /// `ceil(x)` or `floor(x)` as a `BIGINT`: a floating-point number beyond one (NaN, the
    /// infinities) fails in ANSI mode and saturates (NaN is 0) without it, as Java's `(long)`.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss, reason = "checked, or Java's saturation")]
    fn longs(&self, input: &ArrayRef) -> Result<ArrayRef> {
        if input.data_type().is_integer() {
            return Ok(cast_with_options(input, &DataType::Int64, &CastOptions::default())?);
        }
        let doubles = cast_with_options(input, &DataType::Float64, &CastOptions::default())?;
        let mut out = Vec::with_capacity(doubles.len());
        for d in doubles.as_primitive::<Float64Type>() {
            let Some(d) = d else {
                out.push(None);
                continue;
            };
            let whole = if self.rounding == RoundingMode::Floor { d.floor() } else { d.ceil() };
            if self.mode == Mode::Ansi && !(whole >= i64::MIN as f64 && whole < i64::MAX as f64) {
                return Err(DataFusionError::Execution(format!(
                    "[ARITHMETIC_OVERFLOW] {}({d}) is not a bigint; `ansi = false` saturates it",
                    self.name
                )));
            }
            out.push(Some(whole as i64));
        }
        Ok(Arc::new(Int64Array::from(out)))
    }

    /// `BigDecimal(d).setScale(scale, mode).toDouble`, where Scala's `BigDecimal(d)` is
    /// `Double.toString`'s decimal.
    fn double(&self, d: f64, scale: i64) -> f64 {
        if !d.is_finite() {
            return d;
        }
        let exact: BigDecimal = java_double(d).replace('E', "e").parse().expect("Java's text of a finite double");
        let rounded = exact.with_scale_round(scale, self.rounding);
        rounded.to_string().parse::<f64>().map_or(d, |r| if r == 0.0 { 0.0 } else { r })
    }

    /// `BigDecimal(f.toDouble).setScale(scale, mode).toFloat`.
    #[allow(clippy::cast_possible_truncation, reason = "Spark's toFloat of the rounded value")]
    fn float(&self, f: f32, scale: i64) -> f32 {
        if f.is_finite() { self.double(f64::from(f), scale) as f32 } else { f }
    }

    /// `BigDecimal(n).setScale(scale, mode)` as the integer type `t`: where it does not fit, an
    /// error in ANSI mode, else its low bits (`intValue`, `longValue`).
    #[allow(clippy::cast_possible_truncation, reason = "Java's intValue keeps the low bits")]
    fn integer(&self, n: i64, scale: i64, t: &DataType) -> Result<i64> {
        if scale >= 0 {
            return Ok(n);
        }
        let rounded = BigDecimal::from(n).with_scale_round(scale, self.rounding).with_scale(0);
        let (digits, _) = rounded.into_bigint_and_exponent();
        let wide = i128::try_from(digits).unwrap_or(i128::MAX);
        let narrowed = match t {
            DataType::Int8 => i64::from(wide as i8),
            DataType::Int16 => i64::from(wide as i16),
            DataType::Int32 => i64::from(wide as i32),
            _ => wide as i64,
        };
        if i128::from(narrowed) != wide && self.mode == Mode::Ansi {
            return Err(DataFusionError::Execution(format!(
                "[ARITHMETIC_OVERFLOW] {}({n}, {scale}) overflows {}; `ansi = false` wraps it around",
                self.name,
                super::arith::spark_type_name(t)
            )));
        }
        Ok(narrowed)
    }

    /// Decimals of scale `from` rounded to `places` (tens, hundreds … where it is negative), as
    /// `output`.
    fn decimals(&self, input: &ArrayRef, (from, places): (i8, i64), output: &DataType) -> Result<ArrayRef> {
        let DataType::Decimal128(precision, scale) = *output else { unreachable!("a decimal's rounding is a decimal") };
        let limit = 10_i128.pow(u32::from(precision));
        let mut out = Vec::with_capacity(input.len());
        for v in input.as_primitive::<Decimal128Type>() {
            let Some(v) = v else {
                out.push(None);
                continue;
            };
            let rounded = BigDecimal::new(v.into(), i64::from(from))
                .with_scale_round(places.min(i64::from(scale)), self.rounding)
                .with_scale(i64::from(scale));
            let (digits, _) = rounded.into_bigint_and_exponent();
            match i128::try_from(digits).ok().filter(|d| d.abs() < limit) {
                Some(d) => out.push(Some(d)),
                None if self.mode == Mode::Ansi => {
                    return Err(DataFusionError::Execution(format!(
                        "[NUMERIC_VALUE_OUT_OF_RANGE] {} of a value does not fit in decimal({precision},{scale}); `ansi = false` makes it NULL",
                        self.name
                    )));
                }
                None => out.push(None),
            }
        }
        Ok(Arc::new(Decimal128Array::from(out).with_precision_and_scale(precision, scale)?))
    }
}

#[cfg(test)]
mod tests {
    use bigdecimal::RoundingMode;
    use datafusion::logical_expr::{Signature, Volatility};

    use super::{Mode, SparkRound};

    fn round(rounding: RoundingMode) -> SparkRound {
        SparkRound {
            name: "round",
            rounding,
            mode: Mode::Ansi,
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }

    #[test]
    fn doubles_round_as_their_decimal_text() {
        let half_up = round(RoundingMode::HalfUp);
        assert_eq!(half_up.double(0.285, 2).to_bits(), 0.29_f64.to_bits());
        assert_eq!(half_up.double(2.5, 0).to_bits(), 3.0_f64.to_bits());
        assert_eq!(half_up.double(-0.0, 0).to_bits(), 0);
        assert_eq!(half_up.double(f64::MAX, 1).to_bits(), f64::MAX.to_bits());
        assert_eq!(round(RoundingMode::HalfEven).double(2.5, 0).to_bits(), 2.0_f64.to_bits());
        let int = datafusion::arrow::datatypes::DataType::Int32;
        assert_eq!(half_up.integer(125, -1, &int).unwrap(), 130);
        assert_eq!(round(RoundingMode::HalfEven).integer(125, -1, &int).unwrap(), 120);
        assert!(half_up.integer(i64::from(i32::MAX), -1, &int).is_err());
    }
}
