//! `lakewriter sql` runs and their `--json` reports, and the rows of a table as the independent
//! reader reads them.

use serde_json::{Value, json};

use super::reader::Reader;
use super::{Lake, Run, json_lines};

/// The partition overwrite, verbatim.
pub const OVERWRITE: &str = "INSERT OVERWRITE TABLE analytics.daily_orders PARTITION (dt = '2026-09-30') \
    SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue FROM raw.orders WHERE dt = '2026-09-30' \
    GROUP BY customer_id";

/// Runs `lakewriter sql ARGS…`.
pub fn sql(lake: &Lake, args: &[&str]) -> Run {
    lake.cli(&[&["sql"][..], args].concat())
}

/// Runs `lakewriter --json sql -e STATEMENTS ARGS…`, which must succeed: its JSON lines but the
/// closing summary, which must say that every statement ran.
pub fn sql_json(lake: &Lake, statements: &str, args: &[&str]) -> Vec<Value> {
    let run = lake.cli(&[&["--json", "sql", "-e", statements][..], args].concat());
    run.assert_code(0);
    let mut lines = json_lines(&run);
    let summary = lines.pop().unwrap_or_else(|| panic!("no closing line:\n{}", run.stdout));
    let ran = &summary["summary"];
    assert_eq!((&ran["ok"], &ran["failed"], &ran["not_run"]), (&ran["statements"], &0.into(), &0.into()), "{summary}");
    lines
}

/// The rows a query (statement `number`) printed among `lines`, unwrapped.
pub fn query_rows(lines: &[Value], number: usize) -> Vec<Value> {
    lines.iter().filter(|l| l["statement"] == number && l.get("row").is_some()).map(|l| l["row"].clone()).collect()
}

/// The `--json` report of `statement`, run alone, which must succeed.
pub fn report(lake: &Lake, statement: &str, args: &[&str]) -> Value {
    let mut lines = sql_json(lake, statement, args);
    assert_eq!(lines.len(), 1, "one report: {lines:?}");
    let line = lines.remove(0);
    assert_eq!(pick(&line, &["statement", "of", "status"]), json!({"statement": 1, "of": 1, "status": "ok"}));
    line
}

/// The fields `keys` of a report, as one object (a missing field is null).
pub fn pick(line: &Value, keys: &[&str]) -> Value {
    keys.iter().map(|&k| (k.to_owned(), line.get(k).cloned().unwrap_or(Value::Null))).collect()
}

pub fn changes(inserted: usize, updated: usize, deleted: usize) -> Value {
    json!({"inserted": inserted, "updated": updated, "deleted": deleted})
}

/// The URI of the table folder `dir` (`schema/table`) below the lakehouse root `root`.
pub fn uri(root: &str, dir: &str) -> String {
    format!("{}/{dir}", root.trim_end_matches('/'))
}

pub fn local_root(lake: &Lake) -> String {
    lake.root().to_str().expect("utf-8 path").to_owned()
}

/// The rows of the table at `uri` as the independent reader reads them, sorted.
pub fn rows(lake: &Lake, uri: &str) -> Vec<Value> {
    sorted(Reader::new(lake).rows(uri).into_iter().map(Value::Object).collect())
}

pub fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(ToString::to_string);
    rows
}
