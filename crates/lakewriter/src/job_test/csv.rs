//! CSV fixture and expect files, read and written here because Arrow's reader reads an empty
//! string as NULL: an empty field is NULL and a quoted empty field (`""`) the empty string, as in
//! PostgreSQL's and DuckDB's CSV. A file has a header; fields are separated by commas and quoted
//! with `"` (a quote within doubled).

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::{DataType, Field, Schema};

use super::exact;

/// A CSV file's columns: each name and its fields as text, NULL as `None`.
pub(super) struct Columns {
    pub names: Vec<String>,
    pub values: Vec<Vec<Option<String>>>,
    pub rows: usize,
}

/// The columns of the CSV `text`; the error names the line.
pub(super) fn parse(text: &str) -> Result<Columns, String> {
    let mut records = records(text.strip_prefix('\u{feff}').unwrap_or(text))?.into_iter();
    let Some((_, header)) = records.next() else { return Err("the file is empty: a CSV file has a header".into()) };
    let names = header
        .into_iter()
        .enumerate()
        .map(|(i, name)| name.filter(|n| !n.is_empty()).ok_or_else(|| format!("line 1: column {} has no name", i + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut values = vec![Vec::new(); names.len()];
    let mut rows = 0;
    for (line, record) in records {
        // A blank line, where a row has more than one field.
        if record == [None] && names.len() > 1 {
            continue;
        }
        if record.len() != names.len() {
            return Err(format!("line {line} has {} field(s), the header {}", record.len(), names.len()));
        }
        for (column, field) in values.iter_mut().zip(record) {
            column.push(field);
        }
        rows += 1;
    }
    Ok(Columns { names, values, rows })
}

/// A record's fields, NULL as `None`.
type Record = Vec<Option<String>>;

/// The records of `text`, each with the line it starts on.
fn records(text: &str) -> Result<Vec<(usize, Record)>, String> {
    let mut records = Vec::new();
    let mut chars = text.chars().peekable();
    let (mut line, mut start, mut record) = (1, 1, Vec::new());
    loop {
        let field = if chars.next_if_eq(&'"').is_some() {
            let mut value = String::new();
            loop {
                match chars.next() {
                    None => return Err(format!("line {start}: a quoted field is not closed")),
                    Some('"') if chars.next_if_eq(&'"').is_none() => break,
                    Some(c) => {
                        line += usize::from(c == '\n');
                        value.push(c);
                    }
                }
            }
            Some(value)
        } else {
            let mut value = String::new();
            while let Some(c) = chars.next_if(|c| !matches!(c, ',' | '\n' | '\r')) {
                value.push(c);
            }
            Some(value).filter(|v| !v.is_empty())
        };
        record.push(field);
        match chars.next() {
            Some(',') => {}
            Some(end @ ('\r' | '\n')) => {
                if end == '\r' {
                    chars.next_if_eq(&'\n');
                }
                records.push((start, std::mem::take(&mut record)));
                line += 1;
                start = line;
            }
            None => {
                // The text after the last line break, where there is any.
                if record != [None] {
                    records.push((start, record));
                }
                return Ok(records);
            }
            Some(c) => {
                return Err(format!("line {line}: `{c}` after a quoted field, where a comma or a line break goes"));
            }
        }
    }
}

/// `batch` as CSV, with a header; the error names a column CSV cannot hold.
pub(super) fn write(batch: &RecordBatch) -> Result<String, String> {
    let schema = batch.schema();
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        if field.data_type().is_nested()
            || matches!(
                field.data_type(),
                DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_)
            )
        {
            return Err(format!(
                "column `{}` is {}, which a CSV file does not hold: write the expect file as .jsonl or .parquet",
                field.name(),
                field.data_type()
            ));
        }
        columns.push((exact::is_text(field.data_type()), exact::texts(array.as_ref())?));
    }
    let line = |fields: Vec<String>| fields.join(",") + "\n";
    let mut out = line(schema.fields().iter().map(|f| quoted(f.name(), true)).collect());
    for row in 0..batch.num_rows() {
        out.push_str(&line(
            columns
                .iter()
                .map(|(text, values)| values[row].as_deref().map_or_else(String::new, |v| quoted(v, *text)))
                .collect(),
        ));
    }
    Ok(out)
}

/// `value` as a field: quoted where it must be, and where it is text and empty (else NULL).
fn quoted(value: &str, text: bool) -> String {
    if (text && value.is_empty()) || value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

/// A batch of `columns` (as many rows as `rows`, even with no column).
pub(super) fn batch(fields: Vec<Field>, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch, String> {
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::{Record, parse, records};

    fn fields(text: &str) -> Vec<Record> {
        records(text).expect("CSV").into_iter().map(|(_, r)| r).collect()
    }

    fn row(fields: &[Option<&str>]) -> Record {
        fields.iter().map(|f| f.map(str::to_owned)).collect()
    }

    #[test]
    fn an_empty_field_is_null_and_a_quoted_empty_field_the_empty_string() {
        assert_eq!(
            fields("a,b,c\n1,,\"\"\n"),
            [row(&[Some("a"), Some("b"), Some("c")]), row(&[Some("1"), None, Some("")])]
        );
    }

    #[test]
    fn quoted_fields_hold_commas_quotes_and_line_breaks() {
        assert_eq!(
            fields("\"a,\"\"b\"\"\",\"x\ny\"\r\n2,3"),
            [row(&[Some("a,\"b\""), Some("x\ny")]), row(&[Some("2"), Some("3")])]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let error = |text: &str| parse(text).err().unwrap_or_default();
        assert_eq!(error("a,b\n1,2\n3\n"), "line 3 has 1 field(s), the header 2");
        assert_eq!(error("a,b\n1,\"2\n"), "line 2: a quoted field is not closed");
        assert_eq!(error("a,b\n1,\"2\"x\n"), "line 2: `x` after a quoted field, where a comma or a line break goes");
        assert_eq!(error("a,\n"), "line 1: column 2 has no name");
        assert_eq!(error(""), "the file is empty: a CSV file has a header");
    }

    #[test]
    fn a_blank_line_is_skipped_where_a_row_has_several_fields_and_null_where_it_has_one() {
        assert_eq!(parse("a,b\n1,2\n\n3,4\n").expect("CSV").rows, 2);
        let one = parse("a\n1\n\n2\n").expect("CSV");
        assert_eq!(one.values, [row(&[Some("1"), None, Some("2")])]);
    }
}
