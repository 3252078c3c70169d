//! Spark's `SUM` and `AVG` (`Sum`, `Average` in `org.apache.spark.sql.catalyst.expressions.
//! aggregate`) where DataFusion's answer differs: the `SUM` of integers is a `BIGINT` that, in
//! ANSI mode, fails on overflow (`ARITHMETIC_OVERFLOW`) and otherwise wraps around; the `SUM` of a
//! `DECIMAL(p, s)` is a `DECIMAL(p + 10, s)` that fails (ANSI) or is NULL where it overflows; the
//! `AVG` of a `DECIMAL(p, s)` is a `DECIMAL(p + 4, s + 4)`, the exact quotient of the sum and
//! the count rounded half up. Any other
//! `AVG` is DataFusion's (a `DOUBLE`, as Spark's).

use std::sync::Arc;

use bigdecimal::num_bigint::BigInt;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Field, FieldRef, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility};

use super::arith::{Mode, Op};
use super::decimal::Scaled;

/// The aggregate Spark computes for the call `name(x)`, `x` of type `input`, where it is not
/// the one planned.
pub(crate) fn spark(name: &str, input: &DataType, mode: Mode) -> Option<Arc<AggregateUDF>> {
    let kind = match (name, input) {
        ("sum", t) if t.is_integer() => Kind::Sum { scale: None },
        ("sum", DataType::Decimal128(p, s)) => Kind::Sum { scale: Some((*p, *s)) },
        ("avg", DataType::Decimal128(p, s)) => Kind::Avg { precision: *p, scale: *s },
        // DataFusion's, which computes a `DOUBLE` as Spark does (and honours FILTER and frames).
        ("avg", _) => return Some(datafusion::functions_aggregate::average::avg_udaf()),
        _ => return None,
    };
    Some(Arc::new(AggregateUDF::new_from_impl(SparkAggregate {
        kind,
        mode,
        signature: Signature::any(1, Volatility::Immutable),
    })))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// `SUM` of integers (`scale` none) or of a `DECIMAL(p, s)`.
    Sum { scale: Option<(u8, i8)> },
    /// `AVG` of a `DECIMAL(precision, scale)`.
    Avg { precision: u8, scale: i8 },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SparkAggregate {
    kind: Kind,
    mode: Mode,
    signature: Signature,
}

fn bounded(precision: u8) -> u8 {
    precision.min(38)
}

impl SparkAggregate {
    /// The type of the running sum.
    fn sum_type(&self) -> DataType {
        match self.kind {
            Kind::Sum { scale: None } => DataType::Int64,
            Kind::Sum { scale: Some((p, s)) } | Kind::Avg { precision: p, scale: s } => {
                DataType::Decimal128(bounded(p + 10), s)
            }
        }
    }
}

impl AggregateUDFImpl for SparkAggregate {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Sum { .. } => "sum",
            Kind::Avg { .. } => "avg",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::Sum { .. } => self.sum_type(),
            Kind::Avg { precision, scale } => DataType::Decimal128(bounded(precision + 4), (scale + 4).min(38)),
        })
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(Running {
            aggregate: self.clone(),
            output: args.return_field.data_type().clone(),
            sum: 0,
            count: 0,
            overflowed: false,
        }))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(format!("{}[sum]", args.name), self.sum_type(), true)),
            Arc::new(Field::new(format!("{}[count]", args.name), DataType::Int64, false)),
            Arc::new(Field::new(format!("{}[overflowed]", args.name), DataType::Boolean, false)),
        ])
    }
}

/// The values of `batch` as unscaled integers (a decimal's) or integers.
fn unscaled(batch: &ArrayRef) -> Result<Vec<Option<i128>>> {
    if let DataType::Decimal128(..) = batch.data_type() {
        return Ok(batch.as_primitive::<Decimal128Type>().iter().collect());
    }
    let longs = cast_with_options(batch, &DataType::Int64, &CastOptions::default())?;
    Ok(longs.as_primitive::<Int64Type>().iter().map(|v| v.map(i128::from)).collect())
}

/// A running sum: unscaled, in an `i128` (an `i64` for integers), with the rows counted and
/// whether it overflowed.
#[derive(Debug)]
struct Running {
    aggregate: SparkAggregate,
    output: DataType,
    sum: i128,
    count: i64,
    overflowed: bool,
}

impl Running {
    fn integral(&self) -> bool {
        matches!(self.aggregate.kind, Kind::Sum { scale: None })
    }

    fn overflow(&self) -> DataFusionError {
        let what = if self.integral() { "long overflow" } else { "decimal overflow" };
        DataFusionError::Execution(format!(
            "[ARITHMETIC_OVERFLOW] {what} in `{}`: the result is outside {}; use 'try_{}' to tolerate overflow and return NULL instead, or `ansi = false`",
            self.aggregate.name(),
            super::arith::spark_type_name(&self.aggregate.sum_type()),
            self.aggregate.name(),
        ))
    }

    /// Adds (`sign` 1) or takes away (-1) `value`.
    fn add(&mut self, value: i128, sign: i64, count: i64) -> Result<()> {
        self.count += sign * count;
        if self.integral() {
            let long = |v: i128| i64::try_from(v).expect("an integral sum and its values are BIGINTs");
            let (sum, value) = (long(self.sum), long(value));
            let next = if sign > 0 { sum.checked_add(value) } else { sum.checked_sub(value) };
            self.sum = i128::from(match (next, self.aggregate.mode) {
                (Some(next), _) => next,
                (None, Mode::Ansi) => return Err(self.overflow()),
                (None, Mode::Legacy) => {
                    if sign > 0 {
                        sum.wrapping_add(value)
                    } else {
                        sum.wrapping_sub(value)
                    }
                }
                (None, Mode::Try) => {
                    self.overflowed = true;
                    0
                }
            });
            return Ok(());
        }
        match value.checked_mul(i128::from(sign)).and_then(|v| self.sum.checked_add(v)) {
            Some(next) => self.sum = next,
            None => self.overflowed = true,
        }
        Ok(())
    }

    /// The values of `batch` (the aggregate's input) as unscaled integers.
    fn update(&mut self, batch: &ArrayRef, sign: i64) -> Result<()> {
        let values = unscaled(batch)?;
        for v in values.into_iter().flatten() {
            self.add(v, sign, 1)?;
        }
        Ok(())
    }

    /// The sum as `DECIMAL(precision, scale)`, or the error (ANSI) or NULL where it does not fit.
    fn fitted(&self, value: Option<i128>, precision: u8, scale: i8) -> Result<ScalarValue> {
        let limit = 10_i128.pow(u32::from(precision));
        match value.filter(|v| v.abs() < limit) {
            Some(v) => Ok(ScalarValue::Decimal128(Some(v), precision, scale)),
            None if self.aggregate.mode == Mode::Ansi => Err(DataFusionError::Execution(format!(
                "[NUMERIC_VALUE_OUT_OF_RANGE] the {} does not fit in decimal({precision},{scale}); use 'try_{}' to tolerate overflow and return NULL instead, or `ansi = false`",
                self.aggregate.name(),
                self.aggregate.name(),
            ))),
            None => Ok(ScalarValue::Decimal128(None, precision, scale)),
        }
    }
}

impl Accumulator for Running {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.update(&values[0], 1)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.update(&values[0], -1)
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let sums = unscaled(&states[0])?;
        let counts = states[1].as_primitive::<Int64Type>();
        let overflowed: &BooleanArray = states[2].as_boolean();
        for (i, sum) in sums.into_iter().enumerate() {
            self.overflowed |= overflowed.value(i);
            self.add(sum.unwrap_or(0), 1, counts.value(i))?;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let sum = match self.aggregate.sum_type() {
            DataType::Decimal128(p, s) => ScalarValue::Decimal128(Some(self.sum), p, s),
            _ => ScalarValue::Int64(Some(i64::try_from(self.sum).expect("an integral sum is a BIGINT"))),
        };
        Ok(vec![sum, ScalarValue::Int64(Some(self.count)), ScalarValue::Boolean(Some(self.overflowed))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let null = ScalarValue::try_from(&self.output)?;
        if self.count == 0 {
            return Ok(null);
        }
        if self.integral() {
            let sum = i64::try_from(self.sum).expect("an integral sum is a BIGINT");
            return Ok(if self.overflowed { null } else { ScalarValue::Int64(Some(sum)) });
        }
        let DataType::Decimal128(sum_precision, sum_scale) = self.aggregate.sum_type() else {
            unreachable!("a decimal sum")
        };
        let sum = if self.overflowed { None } else { Some(self.sum) };
        let sum = self.fitted(sum, sum_precision, sum_scale)?;
        let Kind::Avg { .. } = self.aggregate.kind else { return Ok(sum) };
        let ScalarValue::Decimal128(Some(sum), ..) = sum else { return Ok(null) };
        // The exact quotient of the sum and the count, rounded half up to the average's scale.
        let quotient = super::decimal::exact(
            Op::Divide,
            Scaled(BigInt::from(sum), sum_scale),
            Scaled(BigInt::from(self.count), 0),
        );
        let DataType::Decimal128(precision, scale) = self.output else { unreachable!("a decimal average") };
        self.fitted(i128::try_from(quotient.rescale(scale).0).ok(), precision, scale)
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
