//! A newcomer's first hour, as the README tells it ("Your own project in five minutes"), with raw
//! data of their own: `init`, their Parquet files laid out as `raw/<table>/dt=…/`, a job of their
//! own over them, a range, a rerun, a code change and its stale days, a broken query and its error
//! — each step's outcome computed here from the data, never taken from what was printed.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Date32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use serde_json::Value;

use crate::support::{json_lines, lakewriter};

const DAYS: [&str; 3] = ["2026-03-01", "2026-03-02", "2026-03-03"];

/// A day's sales of their own shop: `(store, product, units)`, made up per day.
fn sales(day_index: i64) -> Vec<(String, String, i64)> {
    (0..12)
        .map(|i| {
            (
                format!("store-{}", i % 3),
                ["tea", "coffee", "cocoa"][usize::try_from(i % 3).unwrap_or(0)].to_owned(),
                (i + 1) * (day_index + 1),
            )
        })
        .collect()
}

/// Their Parquet file of a day's sales, as they would have it: the day in a column too.
fn sales_file(day: &str, rows: &[(String, String, i64)]) -> RecordBatch {
    let date = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").expect("a date");
    let days = i32::try_from((date - chrono::NaiveDate::default()).num_days()).expect("days");
    let schema = Arc::new(Schema::new(vec![
        Field::new("store", DataType::Utf8, false),
        Field::new("product", DataType::Utf8, false),
        Field::new("units", DataType::Int64, false),
        Field::new("sold_on", DataType::Date32, false),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>())),
            Arc::new(StringArray::from(rows.iter().map(|r| r.1.as_str()).collect::<Vec<_>>())),
            Arc::new(rows.iter().map(|r| r.2).collect::<Int64Array>()),
            Arc::new(Date32Array::from(vec![days; rows.len()])),
        ],
    )
    .expect("a batch")
}

/// Units per store of a day, counting the products `keep` keeps.
fn units_per_store(rows: &[(String, String, i64)], keep: impl Fn(&str) -> bool) -> BTreeMap<String, i64> {
    let mut per = BTreeMap::new();
    for (store, _, units) in rows.iter().filter(|r| keep(&r.1)) {
        *per.entry(store.clone()).or_insert(0) += units;
    }
    per
}

/// The rows of `store_units` for `day`, as `lakewriter sql` reads them.
fn written(dir: &std::path::Path, day: &str) -> BTreeMap<String, i64> {
    let sql = format!("SELECT store, units FROM analytics.store_units WHERE dt = DATE '{day}'");
    let run = lakewriter(&["--json", "sql", "-e", &sql], dir);
    run.assert_code(0);
    json_lines(&run)
        .iter()
        .filter_map(|l| Some((l["row"]["store"].as_str()?.to_owned(), l["row"]["units"].as_i64()?)))
        .collect()
}

/// `(fresh, stale, missing)` of `job` in `status` without a job.
fn states(dir: &std::path::Path, job: &str) -> (u64, u64, u64) {
    let run = lakewriter(&["--json", "status"], dir);
    let lines = json_lines(&run);
    let line: &Value = lines.iter().find(|l| l["job"] == job).unwrap_or_else(|| panic!("{job}: {lines:?}"));
    let count = |k: &str| line[k].as_u64().unwrap_or_else(|| panic!("{k}: {line}"));
    (count("fresh"), count("stale"), count("missing"))
}

#[test]
fn a_newcomer_starts_a_project_over_their_own_raw_data_and_fixes_it_day_by_day() {
    let dir = tempfile::tempdir().expect("temp dir");
    // `init`: a project of their own.
    lakewriter(&["init", "shop"], dir.path()).assert_code(0);
    let shop = dir.path().join("shop");

    // Their raw data, laid out as the README says: raw/<table>/dt=YYYY-MM-DD/*.parquet.
    let by_day: Vec<Vec<(String, String, i64)>> = (0..3).map(sales).collect();
    for (day, rows) in DAYS.iter().zip(&by_day) {
        let file = shop.join(format!("lake/raw/sales/dt={day}/part-0.parquet"));
        lakewriter_datagen::write_parquet(&file, &sales_file(day, rows)).expect("their file");
    }
    let tables = lakewriter(&["--json", "sql", "-e", "SHOW TABLES IN raw"], &shop);
    tables.assert_code(0);
    let names: Vec<String> =
        json_lines(&tables).iter().filter_map(|l| l["row"]["table"].as_str().map(str::to_owned)).collect();
    assert_eq!(names, ["orders", "sales"], "init's sample orders and their sales");

    // A job of their own, its SQL in a file of its own.
    let project = shop.join("lakewriter.toml");
    let mut text = std::fs::read_to_string(&project).expect("the project file");
    text.push_str("\n[jobs.store_units]\ntarget = \"analytics.store_units\"\nwrite = \"overwrite_partition\"\npartition_by = \"dt\"\nsql_file = \"sql/store_units.sql\"\n");
    std::fs::write(&project, text).expect("add the job");
    std::fs::create_dir_all(shop.join("sql")).expect("sql folder");
    let sql = |filter: &str| {
        format!(
            "SELECT store, SUM(units) AS units, $dt AS dt\nFROM raw.sales\nWHERE dt = $dt{filter}\nGROUP BY store\n"
        )
    };
    std::fs::write(shop.join("sql/store_units.sql"), sql("")).expect("the job's SQL");

    // A range: every day written, each as their data says.
    let backfill = lakewriter(&["backfill", "store_units", "--from", DAYS[0], "--to", DAYS[2]], &shop);
    backfill.assert_code(0);
    for (day, rows) in DAYS.iter().zip(&by_day) {
        assert_eq!(written(&shop, day), units_per_store(rows, |_| true), "{day}");
    }
    assert_eq!(states(&shop, "store_units"), (3, 0, 0));

    // A rerun of a day leaves the very same rows, and the day fresh.
    let digest = |dir: &std::path::Path| {
        let run = lakewriter(&["--json", "digest", "analytics.store_units"], dir);
        run.assert_code(0);
        json_lines(&run)[0]["digest"].clone()
    };
    let before = digest(&shop);
    lakewriter(&["run", "store_units", "--dt", DAYS[1]], &shop).assert_code(0);
    assert_eq!(digest(&shop), before);

    // A code change: every day it wrote is stale; rerunning the stale days writes the new rows.
    std::fs::write(shop.join("sql/store_units.sql"), sql(" AND product <> 'cocoa'")).expect("edit the SQL");
    assert_eq!(states(&shop, "store_units"), (0, 3, 0));
    let stale = lakewriter(&["backfill", "store_units", "--from", DAYS[0], "--to", DAYS[2], "--only", "stale"], &shop);
    stale.assert_code(0);
    for (day, rows) in DAYS.iter().zip(&by_day) {
        assert_eq!(written(&shop, day), units_per_store(rows, |p| p != "cocoa"), "{day}");
    }
    assert_eq!(states(&shop, "store_units"), (3, 0, 0));

    // A broken query: the run fails naming the file, line and column and the table meant, and
    // commits nothing; `status` shows what the table holds with the error.
    let fixed = digest(&shop);
    std::fs::write(shop.join("sql/store_units.sql"), sql("").replace("raw.sales", "raw.sale")).expect("a typo");
    let run = lakewriter(&["run", "store_units", "--dt", DAYS[2]], &shop);
    run.assert_code(1);
    let error = "table `raw.sale` not found (at sql/store_units.sql:2:6); did you mean raw.sales?";
    assert!(run.stdout.contains(error) && run.stderr.contains(error), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(digest(&shop), fixed, "nothing committed");
    let status = lakewriter(&["--json", "status"], &shop);
    status.assert_code(1);
    let lines = json_lines(&status);
    let line = lines.iter().find(|l| l["job"] == "store_units").expect("the job's line");
    assert_eq!((&line["failed"], &line["written"]), (&3.into(), &true.into()), "{line}");
}
