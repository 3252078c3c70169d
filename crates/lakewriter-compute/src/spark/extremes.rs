//! `greatest` and `least` as Spark's (`Greatest`/`Least` in `arithmetic.scala`): NULLs skipped
//! (NULL only where every operand is), operands of one type (Spark's analyzer, see
//! [`super::calls`]), and values ordered as Spark orders them, where DataFusion's order of
//! floating-point numbers differs: NaN is above every number whatever its sign, and -0.0 equals
//! 0.0, so that of equal operands the first is kept (`greatest(-0.0, 0.0)` is -0.0).

use std::cmp::Ordering;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, DynComparator, make_comparator};
use datafusion::arrow::compute::{SortOptions, interleave};
use datafusion::arrow::datatypes::{DataType, Float32Type, Float64Type};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature};

/// `greatest` and `least`.
pub(crate) fn functions() -> Vec<Arc<ScalarUDF>> {
    [
        (datafusion::functions::core::greatest(), Ordering::Greater),
        (datafusion::functions::core::least(), Ordering::Less),
    ]
    .into_iter()
    .map(|(datafusion, wins)| Arc::new(ScalarUDF::new_from_impl(Extreme { datafusion, wins })))
    .collect()
}

/// Spark's `greatest` (`wins` is [`Ordering::Greater`]) or `least`: typed as DataFusion's of the
/// same name (whose operands the dialect's analyzer gives one type first), computed as Spark's.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Extreme {
    datafusion: Arc<ScalarUDF>,
    wins: Ordering,
}

/// Spark's order of two doubles (`SQLOrderingUtil.compareDoubles`): NaN above every number,
/// whatever its sign; numbers by value (so -0.0 equals 0.0).
fn nan_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// How two values of `a` and `b` (rows of one type) compare in Spark's order.
fn comparator(a: &ArrayRef, b: &ArrayRef) -> Result<DynComparator> {
    Ok(match a.data_type() {
        DataType::Float64 => {
            let (a, b) = (a.as_primitive::<Float64Type>().clone(), b.as_primitive::<Float64Type>().clone());
            Box::new(move |i, j| nan_order(a.value(i), b.value(j)))
        }
        DataType::Float32 => {
            let (a, b) = (a.as_primitive::<Float32Type>().clone(), b.as_primitive::<Float32Type>().clone());
            Box::new(move |i, j| nan_order(f64::from(a.value(i)), f64::from(b.value(j))))
        }
        _ => make_comparator(a.as_ref(), b.as_ref(), SortOptions::default())?,
    })
}

impl ScalarUDFImpl for Extreme {
    fn name(&self) -> &str {
        self.datafusion.name()
    }

    fn signature(&self) -> &Signature {
        self.datafusion.signature()
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        self.datafusion.return_type(args)
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        self.datafusion.coerce_types(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let Some(first) = arrays.first() else { return exec_err!("{} needs an operand", self.name()) };
        if let Some(other) = arrays.iter().find(|a| a.data_type() != first.data_type()) {
            return exec_err!(
                "{} of {} and {}: operands of one type expected",
                self.name(),
                first.data_type(),
                other.data_type()
            );
        }
        // Each operand against each before it (`comparators[n][kept]`, `kept < n`): the index of
        // the one kept so far, per row.
        let comparators: Vec<Vec<DynComparator>> = arrays
            .iter()
            .enumerate()
            .map(|(n, a)| arrays[..n].iter().map(|b| comparator(a, b)).collect::<Result<_>>())
            .collect::<Result<_>>()?;
        let picks: Vec<(usize, usize)> = (0..args.number_rows)
            .map(|row| {
                let mut kept = 0;
                for (n, array) in arrays.iter().enumerate().skip(1) {
                    if array.is_valid(row) && (arrays[kept].is_null(row) || comparators[n][kept](row, row) == self.wins)
                    {
                        kept = n;
                    }
                }
                (kept, row)
            })
            .collect();
        let refs: Vec<&dyn Array> = arrays.iter().map(AsRef::as_ref).collect();
        Ok(ColumnarValue::Array(interleave(&refs, &picks)?))
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::nan_order;

    #[test]
    fn nan_is_above_every_number_and_signed_zeros_are_equal() {
        assert_eq!(nan_order(-f64::NAN, f64::INFINITY), Ordering::Greater);
        assert_eq!(nan_order(f64::NAN, -f64::NAN), Ordering::Equal);
        assert_eq!(nan_order(-0.0, 0.0), Ordering::Equal);
        assert_eq!(nan_order(-1.0, 0.0), Ordering::Less);
    }
}
