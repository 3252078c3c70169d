//! The `expected_rows` check: a table's rows against the expected ones, as multisets, column
//! order free. Values compare exactly, at the expected value's own precision — a number as an
//! exact decimal (2.5 is not a BIGINT's 2, 15.5049 not a DECIMAL(22,2)'s 15.50), any other value
//! as the table's type where the cast loses nothing —, floating-point values within a tolerance
//! where the test gives one. `expect.schema` holds the table's columns to its types.

use std::collections::{BTreeSet, HashMap};

use datafusion::arrow::array::{Array, ArrayRef, Float64Array, RecordBatch};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::arrow::util::display::FormatOptions;
use lakewriter_delta::schema::{delta_type_name, same_storage};

use super::exact;
use super::fixture::Declared;

/// Rows shown of each side of a difference.
pub(super) const SHOWN: usize = 10;

/// Casts that make a value that does not fit NULL: a value the table's type cannot hold.
const LENIENT: CastOptions<'static> = CastOptions { safe: true, format_options: FormatOptions::new() };

/// What `expected_rows` compares a table with.
pub(super) struct Expectation {
    pub rows: RecordBatch,
    /// How much floating-point values may differ, relative to the larger (absolute below 1).
    pub tolerance: Option<f64>,
    /// `expect.schema`: the columns it names, with the type each must have in the table.
    pub types: Declared,
}

/// Whether `actual` holds exactly the rows expected; the error is the failure's detail: the
/// columns one side has and the other has not, a column of another type than `expect.schema`
/// says, or the rows missing and unexpected. Expected rows without a column (`rows = []`) expect
/// only their number of rows.
pub(super) fn rows(actual: &RecordBatch, expected: &Expectation) -> Result<(), String> {
    if expected.rows.num_columns() == 0 {
        return count(actual, expected.rows.num_rows());
    }
    columns(&actual.schema(), expected)?;
    let floats = expected.tolerance.map(|t| {
        let is_float =
            |a: &ArrayRef| matches!(a.data_type(), DataType::Float16 | DataType::Float32 | DataType::Float64);
        (t, actual.columns().iter().map(is_float).collect::<Vec<_>>())
    });
    let actual_rows = table_rows(actual, floats.as_ref())?;
    let (expected_rows, notes) = expected_rows(actual, &expected.rows, floats.as_ref())?;
    let (missing, unexpected) = unmatched(expected_rows, actual_rows, expected.tolerance);
    if missing.is_empty() && unexpected.is_empty() {
        return Ok(());
    }
    let schema = actual.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let mut lines = described(&names, &missing, &unexpected);
    lines.extend(notes);
    Err(lines.join("\n"))
}

/// Expected rows without a column: the table has that many rows.
fn count(actual: &RecordBatch, rows: usize) -> Result<(), String> {
    if actual.num_rows() == rows {
        return Ok(());
    }
    if rows > 0 {
        return Err(format!("expected {rows} row(s); the table has {}", actual.num_rows()));
    }
    let schema = actual.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let mut lines = vec![format!("expected no rows; the table has {}", actual.num_rows())];
    lines.extend(described(&names, &[], &table_rows(actual, None)?).into_iter().skip(1));
    Err(lines.join("\n"))
}

/// The table's columns against the expected ones: the same names, and the types `expect.schema`
/// gives.
fn columns(actual: &Schema, expected: &Expectation) -> Result<(), String> {
    let names = |s: &Schema| -> BTreeSet<String> { s.fields().iter().map(|f| f.name().clone()).collect() };
    let (have, want) = (names(actual), names(&expected.rows.schema()));
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
    for (name, (data_type, sql)) in &expected.types {
        if let Ok(field) = actual.field_with_name(name)
            && !same_storage(field.data_type(), data_type)
        {
            let is = delta_type_name(field.data_type());
            problems.push(format!("column `{name}` is {is} in the table, not {sql} as `expect.schema` says"));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
}

/// A row: each value as compared (a number in one spelling, NULL as `None`; a float apart where a
/// tolerance applies) and as shown.
#[derive(Debug, Clone)]
struct Rendered {
    key: Vec<Option<String>>,
    floats: Vec<f64>,
    shown: Vec<String>,
    /// False where a value is one the table's column cannot hold: no row of the table matches.
    matchable: bool,
}

/// The columns compared as floats within a tolerance: the tolerance, and which columns.
type Floats = (f64, Vec<bool>);

/// A column as compared: each value's key and text as shown, whether the table's type holds it,
/// and its values as floats where a tolerance applies.
struct Compared {
    keys: Vec<Option<String>>,
    shown: Vec<String>,
    held: Vec<bool>,
    floats: Option<Float64Array>,
}

fn table_rows(actual: &RecordBatch, floats: Option<&Floats>) -> Result<Vec<Rendered>, String> {
    let mut columns = Vec::with_capacity(actual.num_columns());
    for (index, column) in actual.columns().iter().enumerate() {
        let texts = exact::texts(column.as_ref())?;
        let keys = if exact::is_number(column.data_type()) { numbers(&texts) } else { texts.clone() };
        let floats = floats.is_some_and(|(_, is)| is[index]).then(|| f64s(column, column.data_type())).transpose()?;
        let shown = shown(texts, column.data_type());
        columns.push(Compared { keys, held: vec![true; shown.len()], shown, floats });
    }
    Ok(assembled(&columns, actual.num_rows()))
}

/// The expected rows, each value read as the table's column type, and for each column with a
/// value the table's type cannot hold exactly, a line saying so (of its first such value).
fn expected_rows(
    actual: &RecordBatch,
    expected: &RecordBatch,
    floats: Option<&Floats>,
) -> Result<(Vec<Rendered>, Vec<String>), String> {
    let mut columns = Vec::with_capacity(actual.num_columns());
    let mut notes = Vec::new();
    for (index, field) in actual.schema().fields().iter().enumerate() {
        let column = expected.column_by_name(field.name()).expect("the same columns");
        let texts = exact::texts(column.as_ref())?;
        let (keys, held) = keys(column, field.data_type(), &texts)?;
        let shown = shown(texts, column.data_type());
        if let Some(at) = held.iter().position(|h| !h) {
            notes.push(format!(
                "the table's column `{}` is {}, which cannot hold the expected {} exactly",
                field.name(),
                delta_type_name(field.data_type()),
                shown[at]
            ));
        }
        let floats = floats.is_some_and(|(_, is)| is[index]).then(|| f64s(column, field.data_type())).transpose()?;
        columns.push(Compared { keys, shown, held, floats });
    }
    Ok((assembled(&columns, expected.num_rows()), notes))
}

/// The rows of `columns`.
fn assembled(columns: &[Compared], rows: usize) -> Vec<Rendered> {
    (0..rows)
        .map(|row| {
            let mut rendered = Rendered { key: Vec::new(), floats: Vec::new(), shown: Vec::new(), matchable: true };
            for column in columns {
                match &column.floats {
                    // Its place in the key, so that NULLs in different float columns differ.
                    Some(values) if values.is_valid(row) => {
                        rendered.floats.push(values.value(row));
                        rendered.key.push(Some(String::new()));
                    }
                    _ => rendered.key.push(column.keys[row].clone()),
                }
                rendered.shown.push(column.shown[row].clone());
                rendered.matchable &= column.held[row];
            }
            rendered
        })
        .collect()
}

/// Each expected value of `column` as compared with values of the table's type `table`, and
/// whether that type holds it exactly.
fn keys(
    column: &ArrayRef,
    table: &DataType,
    texts: &[Option<String>],
) -> Result<(Vec<Option<String>>, Vec<bool>), String> {
    let own = column.data_type();
    if own == table {
        let keys = if exact::is_number(table) { numbers(texts) } else { texts.to_vec() };
        return Ok((keys, vec![true; texts.len()]));
    }
    let cast = cast_with_options(column, table, &LENIENT).map_err(|e| e.to_string())?;
    let cast_texts = exact::texts(cast.as_ref())?;
    if exact::is_number(table) && (exact::is_number(own) || exact::is_text(own)) {
        // Compared as they are; held where the table's type makes the same number of it.
        let keys = numbers(texts);
        let held = keys.iter().zip(numbers(&cast_texts)).map(|(key, cast)| key.is_none() || cast == *key).collect();
        return Ok((keys, held));
    }
    // Read as the table's type: held where that reads back as it was (but from text, which has
    // many spellings of a value).
    let back = if exact::is_text(own) {
        None
    } else {
        Some(exact::texts(cast_with_options(&cast, own, &LENIENT).map_err(|e| e.to_string())?.as_ref())?)
    };
    let held = (0..texts.len())
        .map(|i| texts[i].is_none() || (cast_texts[i].is_some() && back.as_ref().is_none_or(|b| b[i] == texts[i])))
        .collect();
    let keys = if exact::is_number(table) { numbers(&cast_texts) } else { cast_texts };
    Ok((keys, held))
}

/// Values as a failure shows them: NULL as `NULL`, and text that would read as NULL or as
/// nothing quoted (`'NULL'`, `''`).
fn shown(texts: Vec<Option<String>>, data_type: &DataType) -> Vec<String> {
    let text = exact::is_text(data_type);
    let shown = |t: String| if text && (t.is_empty() || t == "NULL") { format!("'{t}'") } else { t };
    texts.into_iter().map(|t| t.map_or_else(|| "NULL".to_owned(), shown)).collect()
}

/// Numbers' texts in one spelling; text that is no finite number as it is (`NaN`).
fn numbers(texts: &[Option<String>]) -> Vec<Option<String>> {
    texts.iter().map(|t| t.as_deref().map(|t| exact::canonical(t).unwrap_or_else(|| t.to_owned()))).collect()
}

/// `column`'s values as the float type `float` (a `REAL` column's, for one), then as `f64`s.
fn f64s(column: &ArrayRef, float: &DataType) -> Result<Float64Array, String> {
    let cast = |a: &ArrayRef, to: &DataType| cast_with_options(a, to, &LENIENT).map_err(|e| e.to_string());
    let cast = cast(&cast(column, float)?, &DataType::Float64)?;
    Ok(cast.as_any().downcast_ref::<Float64Array>().cloned().unwrap_or_else(|| Float64Array::new_null(column.len())))
}

/// The expected rows no actual row matches, and the actual rows no expected row matches, each
/// row matched once.
fn unmatched(expected: Vec<Rendered>, actual: Vec<Rendered>, tolerance: Option<f64>) -> (Vec<Rendered>, Vec<Rendered>) {
    let mut buckets: HashMap<Vec<Option<String>>, Vec<Rendered>> = HashMap::new();
    for row in actual {
        buckets.entry(row.key.clone()).or_default().push(row);
    }
    let mut missing = Vec::new();
    for row in expected {
        let found = row.matchable.then(|| buckets.get_mut(&row.key)).flatten().and_then(|candidates| {
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

/// The failure's lines: how many rows are missing and unexpected, then up to [`SHOWN`] of each.
fn described(names: &[&str], missing: &[Rendered], unexpected: &[Rendered]) -> Vec<String> {
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
    lines
}
