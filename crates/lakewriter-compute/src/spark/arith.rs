//! Spark's arithmetic operators, as its expressions evaluate them (`Add`, `Subtract`, `Multiply`,
//! `Divide`, `IntegralDivide`, `Remainder` in `org.apache.spark.sql.catalyst.expressions`): on
//! operands already cast to one type by [`super::coerce`], with the result type Spark's analyzer
//! gives, and its behaviour on overflow and on a zero divisor in each [`Mode`].

use std::fmt;

use bigdecimal::num_bigint::{BigInt, Sign};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Decimal128Array, Float64Array, PrimitiveArray};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Decimal128Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};

pub use super::decimal::Op;
use super::decimal::{Scaled, aligned, exact};

/// What an operator does where its result does not exist: an overflow, a zero divisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Mode {
    /// ANSI (`spark.sql.ansi.enabled=true`, Spark 4's default): the query fails.
    Ansi,
    /// `spark.sql.ansi.enabled=false`: an integer overflow wraps around (two's complement, as on
    /// the JVM); a decimal overflow and a zero divisor are NULL.
    Legacy,
    /// The `try_` functions: NULL.
    Try,
}

/// One operator of Spark's over two operands of one type, giving `output`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SparkArithmetic {
    pub op: Op,
    pub mode: Mode,
    pub output: DataType,
    /// The expression as written, for errors (`imax + 1`).
    pub shown: String,
    name: String,
    signature: Signature,
}

impl SparkArithmetic {
    #[must_use]
    pub fn new(op: Op, mode: Mode, output: DataType, shown: String) -> Self {
        let name = format!("spark_{op:?}").to_lowercase();
        Self { op, mode, output, shown, name, signature: Signature::any(2, Volatility::Immutable) }
    }
}

impl ScalarUDFImpl for SparkArithmetic {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.output.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let [a, b] = args.args.as_slice() else {
            return exec_err!("{} takes two operands", self.name);
        };
        let (a, b) = (a.to_array(rows)?, b.to_array(rows)?);
        let result: ArrayRef = match &self.output {
            DataType::Int8 => std::sync::Arc::new(self.integral::<Int8Type>(&a, &b)?),
            DataType::Int16 => std::sync::Arc::new(self.integral::<Int16Type>(&a, &b)?),
            DataType::Int32 => std::sync::Arc::new(self.integral::<Int32Type>(&a, &b)?),
            DataType::Int64 if self.op == Op::IntegralDivide && matches!(a.data_type(), DataType::Decimal128(..)) => {
                std::sync::Arc::new(self.decimal_div_integral(&a, &b)?)
            }
            DataType::Int64 => std::sync::Arc::new(self.integral::<Int64Type>(&a, &b)?),
            DataType::Float64 => std::sync::Arc::new(self.double(&a, &b)?),
            DataType::Decimal128(p, s) => std::sync::Arc::new(self.decimal(&a, &b, *p, *s)?),
            other => return exec_err!("{}: no Spark arithmetic giving {other}", self.shown),
        };
        Ok(ColumnarValue::Array(result))
    }
}

/// A Spark type's name, as Spark's errors write it.
pub(crate) fn spark_type_name(t: &DataType) -> String {
    match t {
        DataType::Int8 => "tinyint".into(),
        DataType::Int16 => "smallint".into(),
        DataType::Int32 => "int".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Null => "void".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "binary".into(),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Timestamp(_, None) => "timestamp_ntz".into(),
        other => other.to_string(),
    }
}

/// An integer type's arithmetic, as the JVM's: checked (`Math.addExact`), or wrapping.
trait Integral: Copy + fmt::Display {
    fn checked(self, op: Op, other: Self) -> Option<Self>;
    fn wrapping(self, op: Op, other: Self) -> Self;
    fn is_zero(self) -> bool;
}

macro_rules! integral {
    ($t:ty) => {
        impl Integral for $t {
            fn checked(self, op: Op, other: Self) -> Option<Self> {
                match op {
                    Op::Add => self.checked_add(other),
                    Op::Subtract => self.checked_sub(other),
                    Op::Multiply => self.checked_mul(other),
                    Op::Divide | Op::IntegralDivide => self.checked_div(other),
                    Op::Remainder => self.checked_rem(other),
                }
            }
            fn wrapping(self, op: Op, other: Self) -> Self {
                match op {
                    Op::Add => self.wrapping_add(other),
                    Op::Subtract => self.wrapping_sub(other),
                    Op::Multiply => self.wrapping_mul(other),
                    Op::Divide | Op::IntegralDivide => self.wrapping_div(other),
                    Op::Remainder => self.wrapping_rem(other),
                }
            }
            fn is_zero(self) -> bool {
                self == 0
            }
        }
    };
}
integral!(i8);
integral!(i16);
integral!(i32);
integral!(i64);

impl SparkArithmetic {
    fn overflow(&self, output: &DataType) -> datafusion::error::DataFusionError {
        datafusion::error::DataFusionError::Execution(format!(
            "[ARITHMETIC_OVERFLOW] {} overflow in `{}`: the result is outside {}; use '{}' to tolerate overflow and return NULL instead, or `ansi = false`",
            spark_type_name(output),
            self.shown,
            spark_type_name(output),
            self.op.try_function()
        ))
    }

    fn divide_by_zero(&self) -> datafusion::error::DataFusionError {
        datafusion::error::DataFusionError::Execution(format!(
            "[DIVIDE_BY_ZERO] division by zero in `{}`; use 'try_divide' to tolerate a zero divisor and return NULL instead, or `ansi = false`",
            self.shown
        ))
    }

    fn integral<T>(&self, lhs: &ArrayRef, rhs: &ArrayRef) -> Result<PrimitiveArray<T>>
    where
        T: ArrowPrimitiveType,
        T::Native: Integral,
    {
        let (lhs, rhs) = (lhs.as_primitive::<T>(), rhs.as_primitive::<T>());
        let divides = matches!(self.op, Op::Divide | Op::IntegralDivide | Op::Remainder);
        let mut out = Vec::with_capacity(lhs.len());
        for (x, y) in lhs.iter().zip(rhs.iter()) {
            let (Some(x), Some(y)) = (x, y) else {
                out.push(None);
                continue;
            };
            if divides && y.is_zero() {
                match self.mode {
                    Mode::Ansi => return Err(self.divide_by_zero()),
                    Mode::Legacy | Mode::Try => out.push(None),
                }
                continue;
            }
            // Java's remainder never overflows (`MIN % -1` is 0).
            if self.op == Op::Remainder {
                out.push(Some(x.wrapping(self.op, y)));
                continue;
            }
            out.push(match (x.checked(self.op, y), self.mode) {
                (Some(v), _) => Some(v),
                (None, Mode::Ansi) => return Err(self.overflow(&self.output)),
                (None, Mode::Legacy) => Some(x.wrapping(self.op, y)),
                (None, Mode::Try) => None,
            });
        }
        Ok(out.into_iter().collect())
    }

    fn double(&self, lhs: &ArrayRef, rhs: &ArrayRef) -> Result<Float64Array> {
        let (lhs, rhs) = (lhs.as_primitive::<Float64Type>(), rhs.as_primitive::<Float64Type>());
        let mut out = Vec::with_capacity(lhs.len());
        for (x, y) in lhs.iter().zip(rhs.iter()) {
            let (Some(x), Some(y)) = (x, y) else {
                out.push(None);
                continue;
            };
            let v = match self.op {
                Op::Add => x + y,
                Op::Subtract => x - y,
                Op::Multiply => x * y,
                Op::Divide | Op::Remainder | Op::IntegralDivide if y == 0.0 => match self.mode {
                    Mode::Ansi => return Err(self.divide_by_zero()),
                    Mode::Legacy | Mode::Try => {
                        out.push(None);
                        continue;
                    }
                },
                Op::Divide => x / y,
                // Java's `%` on doubles: the remainder of truncated division, as Rust's.
                Op::Remainder => x % y,
                Op::IntegralDivide => (x / y).trunc(),
            };
            out.push(Some(v));
        }
        Ok(out.into_iter().collect())
    }

    /// Decimal operands, exactly: the exact result rounded half up to the result's scale (a
    /// quotient first to 39 places, as Spark's `Decimal./` does); one that the result's precision
    /// cannot hold is an overflow.
    fn decimal(&self, lhs: &ArrayRef, rhs: &ArrayRef, precision: u8, scale: i8) -> Result<Decimal128Array> {
        let (sa, sb) = (decimal_scale(lhs.data_type()), decimal_scale(rhs.data_type()));
        let (lhs, rhs) = (lhs.as_primitive::<Decimal128Type>(), rhs.as_primitive::<Decimal128Type>());
        let limit = BigInt::from(10).pow(u32::from(precision));
        let mut out = Vec::with_capacity(lhs.len());
        for (x, y) in lhs.iter().zip(rhs.iter()) {
            let (Some(x), Some(y)) = (x, y) else {
                out.push(None);
                continue;
            };
            if matches!(self.op, Op::Divide | Op::Remainder) && y == 0 {
                match self.mode {
                    Mode::Ansi => return Err(self.divide_by_zero()),
                    Mode::Legacy | Mode::Try => {
                        out.push(None);
                        continue;
                    }
                }
            }
            let exact = exact(self.op, Scaled(BigInt::from(x), sa), Scaled(BigInt::from(y), sb));
            let value = exact.rescale(scale);
            if value.0.magnitude() >= limit.magnitude() {
                match self.mode {
                    Mode::Ansi => return Err(self.out_of_range(&value, precision, scale)),
                    Mode::Legacy | Mode::Try => out.push(None),
                }
                continue;
            }
            out.push(Some(i128::try_from(value.0).expect("below 10^38")));
        }
        Ok(Decimal128Array::from(out).with_precision_and_scale(precision, scale)?)
    }

    /// `div` of decimal operands: the quotient truncated to a BIGINT.
    fn decimal_div_integral(&self, lhs: &ArrayRef, rhs: &ArrayRef) -> Result<PrimitiveArray<Int64Type>> {
        let (sa, sb) = (decimal_scale(lhs.data_type()), decimal_scale(rhs.data_type()));
        let (lhs, rhs) = (lhs.as_primitive::<Decimal128Type>(), rhs.as_primitive::<Decimal128Type>());
        let mut out = Vec::with_capacity(lhs.len());
        for (x, y) in lhs.iter().zip(rhs.iter()) {
            let (Some(x), Some(y)) = (x, y) else {
                out.push(None);
                continue;
            };
            if y == 0 {
                match self.mode {
                    Mode::Ansi => return Err(self.divide_by_zero()),
                    Mode::Legacy | Mode::Try => {
                        out.push(None);
                        continue;
                    }
                }
            }
            let (x, y) = aligned(Scaled(BigInt::from(x), sa), Scaled(BigInt::from(y), sb));
            let quotient = x / y;
            match i64::try_from(&quotient) {
                Ok(v) => out.push(Some(v)),
                Err(_) => match self.mode {
                    Mode::Ansi => return Err(self.overflow(&DataType::Int64)),
                    Mode::Legacy => {
                        let low = quotient.to_signed_bytes_le();
                        let mut bytes = [if quotient.sign() == Sign::Minus { 0xff } else { 0 }; 8];
                        for (to, from) in bytes.iter_mut().zip(low) {
                            *to = from;
                        }
                        out.push(Some(i64::from_le_bytes(bytes)));
                    }
                    Mode::Try => out.push(None),
                },
            }
        }
        Ok(out.into_iter().collect())
    }

    fn out_of_range(&self, value: &Scaled, precision: u8, scale: i8) -> datafusion::error::DataFusionError {
        datafusion::error::DataFusionError::Execution(format!(
            "[NUMERIC_VALUE_OUT_OF_RANGE] {value} in `{}` cannot be represented as decimal({precision},{scale}); use '{}' to tolerate overflow and return NULL instead, or `ansi = false`",
            self.shown,
            self.op.try_function()
        ))
    }
}

fn decimal_scale(t: &DataType) -> i8 {
    match t {
        DataType::Decimal128(_, s) => *s,
        _ => 0,
    }
}
