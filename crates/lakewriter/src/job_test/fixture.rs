//! A test's fixtures as Arrow: rows written in the project file (typed as TOML types their
//! values, or as the `schema` says), fixture files read by their extension, and the actual rows
//! written back to an expect file (`lakewriter test --update`) so that they read back the same.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::compute::{cast, cast_with_options, concat_batches};
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::common::DFSchema;
use datafusion::logical_expr::{Cast, Expr, TryCast};
use datafusion::prelude::{JsonReadOptions, ParquetReadOptions, SessionContext};
use lakewriter_core::project::{Fixture, Row, Value};

use super::csv;
use super::exact::{self, STRICT};

/// What is wrong with a fixture: the key (below the fixture's own, as `file` or `schema.amount`)
/// and the problem.
pub(super) type Problem = (String, String);

/// Columns with the type `schema` gives them: the Arrow type, and the SQL type as written.
pub(super) type Declared = BTreeMap<String, (DataType, String)>;

/// What a fixture is read for: a given table, whose CSV columns take the types their values
/// have, or expected rows, whose CSV fields stay text until they are compared with the table's
/// values (read as the table's column types, exactly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Given,
    Expected,
}

/// The columns `schema` (column = SQL type) names, with their types.
pub(super) fn declared(ctx: &SessionContext, schema: &BTreeMap<String, String>) -> Result<Declared, Problem> {
    schema
        .iter()
        .map(|(column, sql)| {
            let data_type = sql_type(ctx, sql).map_err(|e| (format!("schema.{column}"), e))?;
            Ok((column.clone(), (data_type, sql.clone())))
        })
        .collect()
}

/// The rows of `fixture`, with the columns `declared` names cast to their types: a value that
/// does not fit (one a `DECIMAL` or an integer cannot hold exactly among them) is a problem.
pub(super) async fn load(
    ctx: &SessionContext,
    fixture: &Fixture,
    declared: &Declared,
    role: Role,
) -> Result<RecordBatch, Problem> {
    match fixture {
        Fixture::Rows(rows) => from_rows(rows, declared).map_err(|e| ("rows".to_owned(), e)),
        Fixture::File(path) => {
            let batch = read_file(ctx, path, declared, role).await.map_err(|e| ("file".to_owned(), e))?;
            typed(batch, declared).map_err(|e| ("schema".to_owned(), format!("{}: {e}", path.display())))
        }
    }
}

/// The Arrow type of the SQL type `sql` (`BIGINT`, `DECIMAL(10,2)`), as DataFusion plans it.
fn sql_type(ctx: &SessionContext, sql: &str) -> Result<DataType, String> {
    let expr = ctx
        .parse_sql_expr(&format!("CAST(NULL AS {sql})"), &DFSchema::empty())
        .map_err(|e| format!("`{sql}` is not a SQL type: {e}"))?;
    match expr {
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field })
            if matches!(*expr, Expr::Literal(..)) =>
        {
            Ok(field.data_type().clone())
        }
        _ => Err(format!("`{sql}` is not a SQL type")),
    }
}

/// A batch of `rows`: a column for every name a row (or `declared`) has, in name order.
fn from_rows(rows: &[Row], declared: &Declared) -> Result<RecordBatch, String> {
    let names: BTreeSet<&String> = rows.iter().flat_map(BTreeMap::keys).chain(declared.keys()).collect();
    let mut fields = Vec::with_capacity(names.len());
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(names.len());
    for name in names {
        let values: Vec<Option<&Value>> = rows.iter().map(|row| row.get(name)).collect();
        let (data_type, sql) = if let Some((data_type, sql)) = declared.get(name) {
            (data_type.clone(), sql.clone())
        } else {
            let data_type = inferred(name, &values)?;
            let sql = sql_name(&data_type).to_owned();
            (data_type, sql)
        };
        // Each value as text, read as the column's type: one path for every type, exact for a
        // DECIMAL written as text ("10.25") and for a float's shortest form.
        let text: ArrayRef = Arc::new(values.iter().map(|v| v.map(text)).collect::<StringArray>());
        let array = exact::cast(&text, &data_type).map_err(|e| format!("column `{name}` does not fit {sql}: {e}"))?;
        fields.push(Field::new(name.as_str(), data_type, true));
        arrays.push(array);
    }
    csv::batch(fields, arrays, rows.len())
}

/// The type of a column from its values: TOML's types as SQL's, integers with floats as DOUBLE.
fn inferred(name: &str, values: &[Option<&Value>]) -> Result<DataType, String> {
    let mut found: Option<(usize, DataType)> = None;
    for (row, value) in values.iter().enumerate() {
        let Some(value) = value else { continue };
        let data_type = type_of(value);
        found = match found {
            None => Some((row, data_type)),
            Some((first, seen)) if seen == data_type => Some((first, seen)),
            Some((first, DataType::Int64 | DataType::Float64))
                if matches!(data_type, DataType::Int64 | DataType::Float64) =>
            {
                Some((first, DataType::Float64))
            }
            Some((first, seen)) => {
                return Err(format!(
                    "column `{name}` holds a {} in row {first} and a {} in row {row}: give it one type with `schema`",
                    sql_name(&seen),
                    sql_name(&data_type)
                ));
            }
        };
    }
    // A column NULL in every row: text, unless `schema` says otherwise.
    Ok(found.map_or(DataType::Utf8, |(_, t)| t))
}

/// The SQL name of a type a value can have.
fn sql_name(data_type: &DataType) -> &'static str {
    match data_type {
        DataType::Boolean => "BOOLEAN",
        DataType::Int64 => "BIGINT",
        DataType::Float64 => "DOUBLE",
        DataType::Date32 => "DATE",
        DataType::Timestamp(_, None) => "TIMESTAMP",
        DataType::Timestamp(_, Some(_)) => "TIMESTAMP (UTC)",
        _ => "VARCHAR",
    }
}

fn type_of(value: &Value) -> DataType {
    match value {
        Value::Bool(_) => DataType::Boolean,
        Value::Integer(_) => DataType::Int64,
        Value::Float(_) => DataType::Float64,
        Value::String(_) => DataType::Utf8,
        Value::Date(_) => DataType::Date32,
        Value::Timestamp(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
        Value::TimestampUtc(_) => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::Bool(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => s.clone(),
        Value::Date(d) => d.to_string(),
        Value::Timestamp(t) | Value::TimestampUtc(t) => t.format("%Y-%m-%dT%H:%M:%S%.f").to_string(),
    }
}

/// The rows of the fixture file at `path`: CSV with a header, JSON Lines or Parquet, by its
/// extension. A CSV column `declared` names, and every CSV column of expected rows, is text.
async fn read_file(ctx: &SessionContext, path: &Path, declared: &Declared, role: Role) -> Result<RecordBatch, String> {
    let display = path.display();
    if !path.is_file() {
        return Err(format!("there is no file {display}"));
    }
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    let dotted = format!(".{extension}");
    let name = path.to_str().ok_or_else(|| format!("{display} is not UTF-8"))?;
    let frame = match extension.as_str() {
        "csv" => return read_csv(path, declared, role).map_err(|e| format!("cannot read {display}: {e}")),
        "json" | "jsonl" | "ndjson" => {
            ctx.read_json(name, JsonReadOptions { file_extension: &dotted, ..Default::default() }).await
        }
        "parquet" => ctx.read_parquet(name, ParquetReadOptions { file_extension: &dotted, ..Default::default() }).await,
        _ => {
            return Err(format!(
                "{display}: a fixture file is CSV (.csv, with a header), JSON Lines (.jsonl, .json) or Parquet (.parquet)"
            ));
        }
    };
    let read = |e: datafusion::error::DataFusionError| format!("cannot read {display}: {e}");
    let frame = frame.map_err(read)?;
    let schema = Arc::new(frame.schema().as_arrow().clone());
    let batches = frame.collect().await.map_err(read)?;
    concat_batches(&schema, &batches).map_err(|e| read(e.into()))
}

/// A CSV file's columns: text, or (for a given table's column `declared` does not name) the type
/// Arrow's CSV reader infers from the values.
fn read_csv(path: &Path, declared: &Declared, role: Role) -> Result<RecordBatch, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let columns = csv::parse(std::str::from_utf8(&bytes).map_err(|e| format!("not UTF-8: {e}"))?)?;
    let inferred = datafusion::arrow::csv::reader::Format::default()
        .with_header(true)
        .infer_schema(std::io::Cursor::new(&bytes), None)
        .map_err(|e| e.to_string())?
        .0;
    let mut fields = Vec::with_capacity(columns.names.len());
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(columns.names.len());
    for ((name, values), field) in columns.names.iter().zip(&columns.values).zip(inferred.fields()) {
        let data_type = field.data_type();
        if role == Role::Expected || declared.contains_key(name) || matches!(data_type, DataType::Utf8 | DataType::Null)
        {
            fields.push(Field::new(name, DataType::Utf8, true));
            arrays.push(Arc::new(values.iter().map(Option::as_deref).collect::<StringArray>()));
            continue;
        }
        // An empty string is no number or date: NULL.
        let text: StringArray = values.iter().map(|v| v.as_deref().filter(|v| !v.is_empty())).collect();
        let typed = cast_with_options(&text, data_type, &STRICT).map_err(|e| format!("column `{name}`: {e}"))?;
        fields.push(Field::new(name, data_type.clone(), true));
        arrays.push(typed);
    }
    csv::batch(fields, arrays, columns.rows)
}

/// `batch` with the columns of `declared` cast to their types.
fn typed(batch: RecordBatch, declared: &Declared) -> Result<RecordBatch, String> {
    if declared.is_empty() {
        return Ok(batch);
    }
    let schema = batch.schema();
    if let Some(name) = declared.keys().find(|n| schema.column_with_name(n).is_none()) {
        return Err(format!("`schema` names the column `{name}`, which the file does not have"));
    }
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut arrays = Vec::with_capacity(schema.fields().len());
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        if let Some((data_type, sql)) = declared.get(field.name()) {
            let cast = exact::cast(array, data_type)
                .map_err(|e| format!("column `{}` does not fit {sql}: {e}", field.name()))?;
            fields.push(Field::new(field.name(), data_type.clone(), true));
            arrays.push(cast);
        } else {
            fields.push(field.as_ref().clone());
            arrays.push(Arc::clone(array));
        }
    }
    csv::batch(fields, arrays, batch.num_rows())
}

/// Writes `batch`'s rows, sorted by every column, to `path` as its extension says, replacing
/// the file, so that [`load`] reads back the same rows: in CSV an empty string is `""` and NULL
/// an empty field; in JSON Lines a NULL is `null` and a decimal a string of its digits.
pub(super) async fn write_file(ctx: &SessionContext, path: &Path, batch: RecordBatch) -> Result<(), String> {
    let display = path.display();
    let failed = |e: &dyn std::fmt::Display| format!("cannot write {display}: {e}");
    let order =
        batch.schema().fields().iter().map(|f| datafusion::prelude::ident(f.name()).sort(true, false)).collect();
    let frame = ctx.read_batch(batch).map_err(|e| failed(&e))?.sort(order).map_err(|e| failed(&e))?;
    let schema = Arc::new(frame.schema().as_arrow().clone());
    let batches = frame.collect().await.map_err(|e| failed(&e))?;
    let sorted = concat_batches(&schema, &batches).map_err(|e| failed(&e))?;
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|e| failed(&e))?;
    }
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    let bytes = match extension.as_str() {
        "csv" => csv::write(&sorted).map_err(|e| format!("cannot write {display}: {e}"))?.into_bytes(),
        "json" | "jsonl" | "ndjson" => json_lines(&sorted).map_err(|e| failed(&e))?,
        "parquet" => return super::lakehouse::write_parquet(path, &sorted),
        _ => return Err(format!("{display}: an expect file is .csv, .jsonl, .json or .parquet")),
    };
    std::fs::write(path, bytes).map_err(|e| failed(&e))
}

/// `batch` as JSON Lines, every column in every line (NULL as `null`) and a decimal as a string of
/// its digits, which a JSON reader would read as a float.
fn json_lines(batch: &RecordBatch) -> Result<Vec<u8>, datafusion::arrow::error::ArrowError> {
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if matches!(
            field.data_type(),
            DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..)
        ) {
            fields.push(Field::new(field.name(), DataType::Utf8, true));
            columns.push(cast(column, &DataType::Utf8)?);
        } else {
            fields.push(field.as_ref().clone());
            columns.push(Arc::clone(column));
        }
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?;
    let mut writer = datafusion::arrow::json::WriterBuilder::new()
        .with_explicit_nulls(true)
        .build::<_, datafusion::arrow::json::writer::LineDelimited>(Vec::new());
    writer.write(&batch)?;
    writer.finish()?;
    Ok(writer.into_inner())
}
