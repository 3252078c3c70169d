//! `[tests.NAME]`: a job's test on fixtures — the job and its dates, the tables it is given
//! (rows in the file, or a fixture file), and what it must write (rows, a file, or an error).
//! Read strictly, as the rest of the project file; every error names the test and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{NaiveDate, NaiveDateTime};

use crate::TableRef;

/// A test of a job, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct TestSpec {
    pub name: String,
    pub job: String,
    /// The dates the job runs for, in order (`dt`, or `dates`); empty where the test gives none,
    /// as a test of a job that runs without a date (a `rebuild`) does. Whether the job is one, and
    /// is one of the file's, is the test's to say when it runs (`lakewriter test`, `lint`): a test
    /// written wrong fails only itself, never the file.
    pub dates: Vec<NaiveDate>,
    /// The tables the job is given, by name.
    pub given: BTreeMap<TableRef, Given>,
    pub expect: Expect,
}

/// A table a test gives its job.
#[derive(Debug, Clone, PartialEq)]
pub struct Given {
    pub data: Fixture,
    /// `schema = { column = "SQL type" }`: the type of a column where the value's own is not
    /// the one wanted.
    pub schema: BTreeMap<String, String>,
}

/// Rows written in the project file, or a fixture file (CSV with a header, JSON Lines or
/// Parquet, by its extension), resolved against the project file's folder.
#[derive(Debug, Clone, PartialEq)]
pub enum Fixture {
    Rows(Vec<Row>),
    File(PathBuf),
}

/// A row: its values by column; a column the row leaves out is NULL in it.
pub type Row = BTreeMap<String, Value>;

/// A value of a row written in the project file, typed as TOML types it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    /// An integer: `BIGINT`.
    Integer(i64),
    /// A float: `DOUBLE`.
    Float(f64),
    /// A string: `VARCHAR`.
    String(String),
    /// A date: `DATE`.
    Date(NaiveDate),
    /// A date and time without an offset: `TIMESTAMP`.
    Timestamp(NaiveDateTime),
    /// A date and time with an offset, as UTC: `TIMESTAMP` in UTC.
    TimestampUtc(NaiveDateTime),
}

/// What a test expects of its job's run.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// The target holds exactly these rows; floating-point values may differ by `tolerance`
    /// (relative to the larger value, or absolute below 1). `schema` (column = SQL type) reads
    /// those columns' expected values as that type, and the target's columns must be of it.
    Rows { data: Fixture, tolerance: Option<f64>, schema: BTreeMap<String, String> },
    /// A run fails with an error whose text holds this.
    Error(String),
}

// The shapes of a test's tables, read by hand from the `toml::Value` the file parsed into: serde's
// deserializer of a value gives its dates as strings.
struct RawTest {
    job: String,
    dt: Option<toml::Value>,
    dates: Option<Vec<toml::Value>>,
    given: BTreeMap<String, RawGiven>,
    expect: RawExpect,
}

struct RawGiven {
    rows: Option<Vec<toml::Table>>,
    file: Option<PathBuf>,
    schema: Option<BTreeMap<String, String>>,
}

struct RawExpect {
    rows: Option<Vec<toml::Table>>,
    file: Option<PathBuf>,
    schema: Option<BTreeMap<String, String>>,
    tolerance: Option<f64>,
    error: Option<String>,
}

impl RawTest {
    fn read(value: &toml::Value) -> Result<Self, String> {
        let table = fields(value, &["job", "dt", "dates", "given", "expect"])?;
        let given = match table.get("given") {
            None => BTreeMap::new(),
            Some(given) => given
                .as_table()
                .ok_or_else(|| wrong("given", "a table"))?
                .iter()
                .map(|(name, value)| {
                    Ok((name.clone(), RawGiven::read(value).map_err(|e| format!("key `given.\"{name}\"`: {e}"))?))
                })
                .collect::<Result<_, String>>()?,
        };
        let dates = match table.get("dates") {
            None => None,
            Some(toml::Value::Array(dates)) => Some(dates.clone()),
            Some(_) => return Err(wrong("dates", "a list of dates")),
        };
        Ok(Self {
            job: text(table, "job")?.ok_or("missing field `job`")?,
            dt: table.get("dt").cloned(),
            dates,
            given,
            expect: RawExpect::read(table.get("expect").ok_or("missing field `expect`")?)
                .map_err(|e| format!("key `expect`: {e}"))?,
        })
    }
}

impl RawGiven {
    fn read(value: &toml::Value) -> Result<Self, String> {
        let table = fields(value, &["rows", "file", "schema"])?;
        Ok(Self { rows: rows(table)?, file: text(table, "file")?.map(PathBuf::from), schema: schema(table)? })
    }
}

impl RawExpect {
    fn read(value: &toml::Value) -> Result<Self, String> {
        let table = fields(value, &["rows", "file", "schema", "tolerance", "error"])?;
        let tolerance = match table.get("tolerance") {
            None => None,
            Some(toml::Value::Float(t)) => Some(*t),
            #[expect(clippy::cast_precision_loss, reason = "a tolerance written as a whole number")]
            Some(toml::Value::Integer(t)) => Some(*t as f64),
            Some(_) => return Err(wrong("tolerance", "a number")),
        };
        Ok(Self {
            rows: rows(table)?,
            file: text(table, "file")?.map(PathBuf::from),
            schema: schema(table)?,
            tolerance,
            error: text(table, "error")?,
        })
    }
}

/// `value` as a table whose keys are all among `keys`; an unknown key is refused in serde's
/// words, as every other table of the file.
fn fields<'v>(value: &'v toml::Value, keys: &[&str]) -> Result<&'v toml::Table, String> {
    let table = value.as_table().ok_or_else(|| format!("invalid type: {}, expected a table", value.type_str()))?;
    if let Some(unknown) = table.keys().find(|k| !keys.contains(&k.as_str())) {
        let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
        let expected = match quoted.as_slice() {
            [one] => one.clone(),
            [a, b] => format!("{a} or {b}"),
            _ => format!("one of {}", quoted.join(", ")),
        };
        return Err(format!("unknown field `{unknown}`, expected {expected}"));
    }
    Ok(table)
}

fn wrong(key: &str, expected: &str) -> String {
    format!("key `{key}`: expected {expected}")
}

fn text(table: &toml::Table, key: &str) -> Result<Option<String>, String> {
    table.get(key).map(|v| v.as_str().map(str::to_owned).ok_or_else(|| wrong(key, "a string"))).transpose()
}

/// `schema = { column = "SQL type" }`; an empty column name or type is refused.
fn schema(table: &toml::Table) -> Result<Option<BTreeMap<String, String>>, String> {
    let Some(schema) = table.get("schema") else { return Ok(None) };
    let schema = schema.as_table().ok_or_else(|| wrong("schema", "a table of SQL types"))?;
    let mut read = BTreeMap::new();
    for (column, sql) in schema {
        let sql = sql.as_str().ok_or_else(|| wrong(&format!("schema.{column}"), "a SQL type"))?;
        if column.is_empty() || sql.trim().is_empty() {
            return Err(format!("key `schema`: an empty column name or type (`{column}`)"));
        }
        read.insert(column.clone(), sql.to_owned());
    }
    Ok(Some(read))
}

fn rows(table: &toml::Table) -> Result<Option<Vec<toml::Table>>, String> {
    let Some(rows) = table.get("rows") else { return Ok(None) };
    let rows = rows.as_array().ok_or_else(|| wrong("rows", "a list of rows"))?;
    rows.iter()
        .map(|r| r.as_table().cloned().ok_or_else(|| wrong("rows", "a list of rows, each a table")))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// Reads the `[tests.NAME]` tables; `base` is the project file's folder. The error names the
/// test.
pub(super) fn read(tests: BTreeMap<String, toml::Value>, base: &Path) -> Result<BTreeMap<String, TestSpec>, String> {
    let mut read = BTreeMap::new();
    for (name, value) in tests {
        if !super::is_name(&name) {
            return Err(format!("test `{name}`: a test name may contain only letters, digits, `_` and `-`"));
        }
        let spec = parse(&name, &value, base).map_err(|e| format!("test `{name}`: {e}"))?;
        read.insert(name, spec);
    }
    Ok(read)
}

/// Reads the test `name` from `value`. The error is the message, without the test's name.
fn parse(name: &str, value: &toml::Value, base: &Path) -> Result<TestSpec, String> {
    let raw = RawTest::read(value)?;
    if raw.job.trim().is_empty() {
        return Err("key `job` is empty: name a job".into());
    }
    let dates = dates(raw.dt, raw.dates)?;
    let mut given = BTreeMap::new();
    for (table, raw) in raw.given {
        let key = format!("given.\"{table}\"");
        let table = TableRef::parse(&table).map_err(|e| format!("key `{key}`: {e}"))?;
        let data = fixture(raw.rows, raw.file, base).map_err(|(sub, e)| format!("key `{key}{sub}`: {e}"))?;
        given.insert(table, Given { data, schema: raw.schema.unwrap_or_default() });
    }
    let expect = expect(raw.expect, base)?;
    Ok(TestSpec { name: name.to_owned(), job: raw.job, dates, given, expect })
}

/// What a test expects: rows (or a file of them), or an error.
fn expect(raw: RawExpect, base: &Path) -> Result<Expect, String> {
    let Some(error) = raw.error else {
        if let Some(t) = raw.tolerance.filter(|t| !(t.is_finite() && *t >= 0.0)) {
            return Err(format!("key `expect.tolerance`: {t} is not a number of 0 or more"));
        }
        let data = fixture(raw.rows, raw.file, base).map_err(|(sub, e)| format!("key `expect{sub}`: {e}"))?;
        return Ok(Expect::Rows { data, tolerance: raw.tolerance, schema: raw.schema.unwrap_or_default() });
    };
    if raw.rows.is_some() || raw.file.is_some() {
        return Err("key `expect`: set `error`, or `rows` or `file`, not both".into());
    }
    if let Some(key) = [("tolerance", raw.tolerance.is_some()), ("schema", raw.schema.is_some())]
        .into_iter()
        .find_map(|(key, set)| set.then_some(key))
    {
        return Err(format!("key `expect.{key}` applies to expected rows, not to an error"));
    }
    if error.trim().is_empty() {
        return Err("key `expect.error` is empty".into());
    }
    Ok(Expect::Error(error))
}

/// The dates of a test: `dt`, or `dates`, or none.
fn dates(dt: Option<toml::Value>, dates: Option<Vec<toml::Value>>) -> Result<Vec<NaiveDate>, String> {
    match (dt, dates) {
        (Some(_), Some(_)) => Err("set either `dt` or `dates`, not both".into()),
        (Some(dt), None) => Ok(vec![date("dt", &dt)?]),
        (None, Some(dates)) if dates.is_empty() => Err("key `dates` is empty".into()),
        (None, Some(dates)) => dates.iter().map(|d| date("dates", d)).collect(),
        (None, None) => Ok(Vec::new()),
    }
}

fn date(key: &str, value: &toml::Value) -> Result<NaiveDate, String> {
    match value {
        toml::Value::Datetime(toml::value::Datetime { date: Some(d), time: None, offset: None }) => {
            NaiveDate::from_ymd_opt(i32::from(d.year), u32::from(d.month), u32::from(d.day))
                .ok_or_else(|| format!("key `{key}`: `{value}` is not a calendar date"))
        }
        toml::Value::String(text) if crate::parse_date(text).is_ok() => {
            Err(format!("key `{key}`: \"{text}\" is a string: write the date bare, as `{text}`"))
        }
        _ => Err(format!("key `{key}`: `{value}` is not a date; write one as `2026-09-30`")),
    }
}

/// `rows` or `file`; the error is the key below the fixture's (`.rows[0].a`, or none) and what is
/// wrong.
fn fixture(rows: Option<Vec<toml::Table>>, file: Option<PathBuf>, base: &Path) -> Result<Fixture, (String, String)> {
    match (rows, file) {
        (Some(_), Some(_)) => Err((String::new(), "set either `rows` or `file`, not both".into())),
        (None, None) => Err((String::new(), "set `rows` (or `file`)".into())),
        (None, Some(file)) if file.as_os_str().is_empty() => Err((".file".into(), "empty".into())),
        (None, Some(file)) => Ok(Fixture::File(base.join(file))),
        (Some(rows), None) => rows
            .into_iter()
            .enumerate()
            .map(|(i, row)| {
                row.into_iter()
                    .map(|(column, value)| match self::value(value) {
                        Ok(value) => Ok((column, value)),
                        Err(what) => Err((format!(".rows[{i}].{column}"), what)),
                    })
                    .collect()
            })
            .collect::<Result<_, _>>()
            .map(Fixture::Rows),
    }
}

/// A TOML value as a row's value; the error says what it is instead.
fn value(value: toml::Value) -> Result<Value, String> {
    Ok(match value {
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Integer(i) => Value::Integer(i),
        toml::Value::Float(f) => Value::Float(f),
        toml::Value::String(s) => Value::String(s),
        toml::Value::Datetime(d) => datetime(&d)?,
        toml::Value::Array(_) | toml::Value::Table(_) => {
            return Err("a list or a table, where a row holds single values".into());
        }
    })
}

fn datetime(d: &toml::value::Datetime) -> Result<Value, String> {
    let not = || format!("`{d}` is not a date or a date and time");
    let Some(date) = d.date else { return Err(format!("`{d}` is a time of day without a date")) };
    let day =
        NaiveDate::from_ymd_opt(i32::from(date.year), u32::from(date.month), u32::from(date.day)).ok_or_else(not)?;
    let Some(time) = d.time else { return Ok(Value::Date(day)) };
    let at = day
        .and_hms_nano_opt(u32::from(time.hour), u32::from(time.minute), u32::from(time.second), time.nanosecond)
        .ok_or_else(not)?;
    Ok(match d.offset {
        None => Value::Timestamp(at),
        Some(toml::value::Offset::Z) => Value::TimestampUtc(at),
        Some(toml::value::Offset::Custom { minutes }) => {
            Value::TimestampUtc(at - chrono::Duration::minutes(i64::from(minutes)))
        }
    })
}

#[cfg(test)]
mod tests;
