//! A test's fixtures as Arrow: rows written in the project file (typed as TOML types their
//! values, or as the `schema` says), fixture files read by their extension, and the actual rows
//! written back to an expect file (`lakewriter test --update`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions, StringArray};
use datafusion::arrow::compute::{CastOptions, cast_with_options, concat_batches};
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::arrow::util::display::FormatOptions;
use datafusion::common::DFSchema;
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::logical_expr::{Cast, Expr, TryCast};
use datafusion::prelude::{CsvReadOptions, JsonReadOptions, ParquetReadOptions, SessionContext};
use lakewriter_core::project::{Fixture, Row, Value};

/// Casts that fail on a value that does not fit, instead of making it NULL.
pub(super) const STRICT: CastOptions<'static> = CastOptions { safe: false, format_options: FormatOptions::new() };

/// What is wrong with a fixture: the key (below the fixture's own, as `file` or `schema.amount`)
/// and the problem.
pub(super) type Problem = (String, String);

/// The rows of `fixture`, with the columns `schema` names (SQL types) cast to those types.
pub(super) async fn load(
    ctx: &SessionContext,
    fixture: &Fixture,
    schema: &BTreeMap<String, String>,
) -> Result<RecordBatch, Problem> {
    let declared = schema
        .iter()
        .map(|(column, sql)| {
            let data_type = sql_type(ctx, sql).map_err(|e| (format!("schema.{column}"), e))?;
            Ok((column.clone(), (data_type, sql.clone())))
        })
        .collect::<Result<BTreeMap<_, _>, Problem>>()?;
    match fixture {
        Fixture::Rows(rows) => from_rows(rows, &declared).map_err(|e| ("rows".to_owned(), e)),
        Fixture::File(path) => {
            let batch = read_file(ctx, path).await.map_err(|e| ("file".to_owned(), e))?;
            typed(batch, &declared).map_err(|e| ("schema".to_owned(), format!("{}: {e}", path.display())))
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

/// Columns with the type `schema` gives them: the Arrow type, and the SQL type as written.
type Declared = BTreeMap<String, (DataType, String)>;

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
        let text: StringArray = values.iter().map(|v| v.map(text)).collect();
        let array = cast_with_options(&text, &data_type, &STRICT)
            .map_err(|e| format!("column `{name}` does not fit {sql}: {e}"))?;
        fields.push(Field::new(name.as_str(), data_type, true));
        arrays.push(array);
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options).map_err(|e| e.to_string())
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
/// extension.
async fn read_file(ctx: &SessionContext, path: &Path) -> Result<RecordBatch, String> {
    let display = path.display();
    if !path.is_file() {
        return Err(format!("there is no file {display}"));
    }
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    let dotted = format!(".{extension}");
    let name = path.to_str().ok_or_else(|| format!("{display} is not UTF-8"))?;
    let frame = match extension.as_str() {
        "csv" => ctx.read_csv(name, CsvReadOptions::new().has_header(true).file_extension(&dotted)).await,
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
            let cast = cast_with_options(array, data_type, &STRICT)
                .map_err(|e| format!("column `{}` does not fit {sql}: {e}", field.name()))?;
            fields.push(Field::new(field.name(), data_type.clone(), true));
            arrays.push(cast);
        } else {
            fields.push(field.as_ref().clone());
            arrays.push(Arc::clone(array));
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(|e| e.to_string())
}

/// Writes `batch`'s rows, sorted by every column, to `path` as its extension says (as
/// [`load`] reads it back), replacing the file.
pub(super) async fn write_file(ctx: &SessionContext, path: &Path, batch: RecordBatch) -> Result<(), String> {
    let display = path.display();
    let name = path.to_str().ok_or_else(|| format!("{display} is not UTF-8"))?;
    let order =
        batch.schema().fields().iter().map(|f| datafusion::prelude::ident(f.name()).sort(true, false)).collect();
    let write = |e: datafusion::error::DataFusionError| format!("cannot write {display}: {e}");
    let frame = ctx.read_batch(batch).map_err(write)?.sort(order).map_err(write)?;
    let options = DataFrameWriteOptions::new().with_single_file_output(true);
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    match extension.as_str() {
        "csv" => frame.write_csv(name, options, None).await,
        "json" | "jsonl" | "ndjson" => frame.write_json(name, options, None).await,
        "parquet" => frame.write_parquet(name, options, None).await,
        _ => return Err(format!("{display}: an expect file is .csv, .jsonl, .json or .parquet")),
    }
    .map(drop)
    .map_err(write)
}
