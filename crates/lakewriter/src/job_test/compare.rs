//! The `expected_rows` check: a table's rows against the expected ones, as multisets, column
//! order free, floating-point values within a tolerance where the test gives one.

use std::collections::{BTreeSet, HashMap};

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast_with_options;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use super::fixture::STRICT;

/// Rows shown of each side of a difference.
pub(super) const SHOWN: usize = 10;

/// Whether `actual` holds exactly the rows of `expected`; the error is the failure's detail: the
/// columns one side has and the other has not, or the rows missing and unexpected.
pub(super) fn rows(actual: &RecordBatch, expected: &RecordBatch, tolerance: Option<f64>) -> Result<(), String> {
    let (actual_schema, expected_schema) = (actual.schema(), expected.schema());
    let names = |s: &datafusion::arrow::datatypes::Schema| -> BTreeSet<String> {
        s.fields().iter().map(|f| f.name().clone()).collect()
    };
    let (have, want) = (names(&actual_schema), names(&expected_schema));
    let listed = |set: Vec<&String>| set.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
    let (missing, extra): (Vec<&String>, Vec<&String>) =
        (have.difference(&want).collect(), want.difference(&have).collect());
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("the expected rows have no column {} of the table", listed(missing)));
    }
    if !extra.is_empty() {
        problems.push(format!("the table has no column {} of the expected rows", listed(extra)));
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    // The expected columns in the table's order, read as the table's types.
    let mut columns = Vec::with_capacity(actual.num_columns());
    for field in actual_schema.fields() {
        let (index, _) = expected_schema.column_with_name(field.name()).expect("the same columns");
        let cast = cast_with_options(expected.column(index), field.data_type(), &STRICT).map_err(|e| {
            format!("the expected column `{}` cannot be read as the table's {}: {e}", field.name(), field.data_type())
        })?;
        columns.push(cast);
    }
    let floats = tolerance.map(|t| {
        let is_float =
            |a: &ArrayRef| matches!(a.data_type(), DataType::Float16 | DataType::Float32 | DataType::Float64);
        (t, actual.columns().iter().map(is_float).collect::<Vec<_>>())
    });
    let names: Vec<&str> = actual_schema.fields().iter().map(|f| f.name().as_str()).collect();
    let actual_rows = rendered(actual.columns(), floats.as_ref())?;
    let expected_rows = rendered(&columns, floats.as_ref())?;
    let (missing, unexpected) = unmatched(expected_rows, actual_rows, floats.map(|(t, _)| t));
    if missing.is_empty() && unexpected.is_empty() {
        return Ok(());
    }
    Err(described(&names, &missing, &unexpected))
}

/// A row: its values as text (with the float values apart where a tolerance applies).
#[derive(Debug, Clone)]
struct Rendered {
    key: Vec<String>,
    floats: Vec<f64>,
    shown: Vec<String>,
}

fn rendered(columns: &[ArrayRef], floats: Option<&(f64, Vec<bool>)>) -> Result<Vec<Rendered>, String> {
    let options = FormatOptions::new().with_null("NULL");
    let formatters = columns
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let rows = columns.first().map_or(0, Array::len);
    let as_f64: Vec<Option<ArrayRef>> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            floats
                .filter(|(_, is)| is[i])
                .map(|_| datafusion::arrow::compute::cast(c, &DataType::Float64).map_err(|e| e.to_string()))
                .transpose()
        })
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(rows);
    for row in 0..rows {
        let mut rendered = Rendered { key: Vec::new(), floats: Vec::new(), shown: Vec::new() };
        for (formatter, f64s) in formatters.iter().zip(&as_f64) {
            let text = formatter.value(row).to_string();
            match f64s {
                Some(values) if values.is_valid(row) => {
                    let values = values.as_any().downcast_ref::<datafusion::arrow::array::Float64Array>();
                    rendered.floats.push(values.map_or(f64::NAN, |v| v.value(row)));
                    // Its place in the key, so that NULLs in different float columns differ.
                    rendered.key.push(String::new());
                }
                _ => rendered.key.push(text.clone()),
            }
            rendered.shown.push(text);
        }
        out.push(rendered);
    }
    Ok(out)
}

/// The expected rows no actual row matches, and the actual rows no expected row matches, each
/// row matched once.
fn unmatched(expected: Vec<Rendered>, actual: Vec<Rendered>, tolerance: Option<f64>) -> (Vec<Rendered>, Vec<Rendered>) {
    let mut buckets: HashMap<Vec<String>, Vec<Rendered>> = HashMap::new();
    for row in actual {
        buckets.entry(row.key.clone()).or_default().push(row);
    }
    let mut missing = Vec::new();
    for row in expected {
        let found = buckets.get_mut(&row.key).and_then(|candidates| {
            let at = candidates.iter().position(|c| close(&c.floats, &row.floats, tolerance.unwrap_or(0.0)))?;
            Some(candidates.swap_remove(at))
        });
        if found.is_none() {
            missing.push(row);
        }
    }
    let mut unexpected: Vec<Rendered> = buckets.into_values().flatten().collect();
    unexpected.sort_by(|a, b| a.shown.cmp(&b.shown));
    missing.sort_by(|a, b| a.shown.cmp(&b.shown));
    (missing, unexpected)
}

/// Float values equal within `tolerance`: relative to the larger, absolute below 1.
fn close(a: &[f64], b: &[f64], tolerance: f64) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            // Equal, infinities included; NaN as NaN.
            x.total_cmp(y).is_eq()
                || (x.is_nan() && y.is_nan())
                || (x - y).abs() <= tolerance * x.abs().max(y.abs()).max(1.0)
        })
}

fn described(names: &[&str], missing: &[Rendered], unexpected: &[Rendered]) -> String {
    let row = |r: &Rendered| {
        let cells: Vec<String> = names.iter().zip(&r.shown).map(|(n, v)| format!("{n}={v}")).collect();
        format!("({})", cells.join(", "))
    };
    let mut lines = vec![format!("{} expected row(s) missing, {} row(s) unexpected", missing.len(), unexpected.len())];
    for (label, rows) in [("missing", missing), ("unexpected", unexpected)] {
        lines.extend(rows.iter().take(SHOWN).map(|r| format!("{label}: {}", row(r))));
        if rows.len() > SHOWN {
            lines.push(format!("{label}: … and {} more", rows.len() - SHOWN));
        }
    }
    lines.join("\n")
}
