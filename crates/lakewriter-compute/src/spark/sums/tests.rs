use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Int64Array};
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Int64Type};
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};

use super::{Mode, SparkSum, Total, Totals};
use datafusion::logical_expr::AggregateUDFImpl;
use datafusion::logical_expr::function::StateFieldsArgs;

#[test]
fn a_total_counts_its_wraps() {
    let mut total = i64::MAX;
    assert_eq!((total.add(1), total), (1, i64::MIN));
    assert_eq!((total.sub(1), total), (-1, i64::MAX));
    assert_eq!((total.add(i64::MIN), total.add(i64::MIN), total), (0, -1, i64::MAX), "MAX + 2 MIN = MAX - 2^64");
    assert_eq!((total.sub(i64::MIN), total), (1, -1));
    assert_eq!((total.sub(1), total), (0, -2));
}

fn longs(values: &[Option<i64>]) -> ArrayRef {
    Arc::new(values.iter().copied().collect::<Int64Array>())
}

/// Two partial aggregations of groups 0 and 1, one of them each row a state of its own
/// (`convert_to_state`, with a filter), merged into a final one.
fn merged(mode: Mode) -> datafusion::common::Result<ArrayRef> {
    let sum = SparkSum::new(DataType::Int64, mode);
    let mut first = Totals::<Int64Type>::new(sum.clone());
    // Group 0 goes above BIGINT and comes back; group 1 goes above it.
    first.update_batch(&[longs(&[Some(i64::MAX), Some(i64::MAX), None])], &[0, 1, 1], None, 2)?;
    let second = Totals::<Int64Type>::new(sum.clone());
    let filter = BooleanArray::from(vec![Some(true), Some(true), Some(false), None]);
    let rows = second.convert_to_state(&[longs(&[Some(5), Some(1), Some(-7), Some(-9)])], Some(&filter))?;
    let mut last = Totals::<Int64Type>::new(sum);
    last.merge_batch(&first.state(EmitTo::All)?, &[0, 1], 2)?;
    last.merge_batch(&rows, &[0, 1, 0, 0], 2)?;
    last.merge_batch(&[longs(&[Some(i64::MIN)]), longs(&[Some(0)])], &[0], 2)?;
    last.evaluate(EmitTo::All)
}

#[test]
fn grouped_totals_are_exact_across_partial_aggregations() -> datafusion::common::Result<()> {
    // Group 0: MAX + 5 + MIN = 4; group 1: MAX + 1 (outside BIGINT).
    let legacy = merged(Mode::Legacy)?;
    assert_eq!(legacy.as_primitive::<Int64Type>().iter().collect::<Vec<_>>(), [Some(4), Some(i64::MIN)]);
    let error = merged(Mode::Ansi).expect_err("group 1 overflows").to_string();
    assert!(error.contains("ARITHMETIC_OVERFLOW"), "{error}");
    Ok(())
}

#[test]
fn a_group_without_a_value_sums_to_null() -> datafusion::common::Result<()> {
    let mut totals = Totals::<Int64Type>::new(SparkSum::new(DataType::Int32, Mode::Ansi));
    totals.update_batch(&[longs(&[None, Some(2)])], &[0, 1], None, 2)?;
    let sums = totals.evaluate(EmitTo::All)?;
    assert_eq!((sums.is_null(0), sums.as_primitive::<Int64Type>().value(1)), (true, 2));
    Ok(())
}

#[test]
fn the_first_groups_emitted_leave_the_others_carries() -> datafusion::common::Result<()> {
    let mut totals = Totals::<Int64Type>::new(SparkSum::new(DataType::Int64, Mode::Ansi));
    totals.update_batch(&[longs(&[Some(1), Some(i64::MAX), Some(i64::MAX), Some(1)])], &[0, 1, 2, 2], None, 3)?;
    let first = totals.evaluate(EmitTo::First(2))?;
    assert_eq!(first.as_primitive::<Int64Type>().values(), &[1, i64::MAX]);
    let error = totals.evaluate(EmitTo::All).expect_err("group 2 overflowed").to_string();
    assert!(error.contains("ARITHMETIC_OVERFLOW"), "{error}");
    Ok(())
}

#[test]
fn rows_as_states_are_of_the_states_types() -> datafusion::common::Result<()> {
    let input = DataType::Decimal128(12, 2);
    let sum = SparkSum::new(input.clone(), Mode::Ansi);
    let amounts: ArrayRef = Arc::new(Decimal128Array::from(vec![Some(150), None]).with_precision_and_scale(12, 2)?);
    let states = Totals::<Decimal128Type>::new(sum.clone()).convert_to_state(&[amounts], None)?;
    let input_field = Arc::new(datafusion::arrow::datatypes::Field::new("amount", input, true));
    let args = StateFieldsArgs {
        name: "sum",
        input_fields: &[input_field],
        return_field: Arc::new(datafusion::arrow::datatypes::Field::new("sum", DataType::Decimal128(22, 2), true)),
        ordering_fields: &[],
        is_distinct: false,
    };
    let types: Vec<DataType> = sum.state_fields(args)?.iter().map(|f| f.data_type().clone()).collect();
    assert_eq!(states.iter().map(|s| s.data_type().clone()).collect::<Vec<_>>(), types);
    Ok(())
}
