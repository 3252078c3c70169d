//! Finding tables and columns: `SHOW TABLES [IN schema]` and `DESCRIBE table` in `lakewriter sql`;
//! a table not found named as written with the nearest tables; every SQL error naming where it is
//! (the job's `sql_file` or the project file, line and column).

use serde_json::{Value, json};

use crate::support::{Lake, edited, json_lines};

/// The rows of `lakewriter --json sql -e SQL`, which must succeed.
fn rows(lake: &Lake, sql: &str) -> Vec<Value> {
    let run = lake.cli(&["--json", "sql", "-e", sql]);
    run.assert_code(0);
    json_lines(&run).into_iter().filter_map(|l| l.get("row").cloned()).collect()
}

#[test]
fn show_tables_lists_the_lakehouse_and_describe_a_table_s_columns_and_properties() {
    let lake = Lake::demo();
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]).assert_code(0);
    let row = |schema: &str, table: &str, kind: &str, job: Option<&str>| json!({"schema": schema, "table": table, "kind": kind, "job": job});
    assert_eq!(
        rows(&lake, "SHOW TABLES"),
        [
            row("analytics", "daily_orders", "delta", Some("daily_orders")),
            row("analytics", "weekly_revenue", "none yet", Some("weekly_revenue")),
            row("core", "customers", "none yet", Some("customers")),
            row("raw", "customers_batch", "raw", None),
            row("raw", "orders", "raw", None),
        ]
    );
    assert_eq!(rows(&lake, "show tables in raw").len(), 2);
    assert_eq!(rows(&lake, "SHOW TABLES FROM analytics").len(), 2);
    let unknown = lake.cli(&["sql", "-e", "SHOW TABLES IN nope"]);
    unknown.assert_code(2);
    assert!(unknown.stderr.contains("no schema `nope`; schemas: analytics, core, raw"), "{}", unknown.stderr);

    let column = |name: &str, kind: &str, nullable: bool, partition: bool| json!({"column": name, "type": kind, "nullable": nullable, "partition": partition});
    assert_eq!(
        rows(&lake, "DESCRIBE analytics.daily_orders"),
        [
            column("customer_id", "long", true, false),
            column("orders", "long", true, false),
            column("revenue", "decimal(22,2)", true, false),
            column("cancelled", "long", true, false),
            column("dt", "date", true, true),
        ]
    );
    // Spark's spelling, and a raw dataset: its partition column is the folder's.
    assert_eq!(rows(&lake, "DESCRIBE TABLE analytics.daily_orders"), rows(&lake, "desc analytics.daily_orders"));
    let raw = rows(&lake, "DESCRIBE raw.orders");
    assert_eq!(raw.last(), Some(&column("dt", "date", false, true)), "{raw:?}");
    assert_eq!(raw[2], column("amount", "decimal(12,2)", true, false));
}

#[test]
fn describe_shows_a_table_s_properties_and_names_a_table_it_cannot_find() {
    let lake = Lake::demo();
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-01"]).assert_code(0);
    // A table's properties follow its columns, as Spark's DESCRIBE TABLE EXTENDED lays them out.
    let set =
        "ALTER TABLE analytics.daily_orders SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 60 days')";
    let refused = lake.cli(&["sql", "-e", set]);
    assert_eq!(refused.code, 2, "ALTER TABLE is not a statement lakewriter runs: {}", refused.stderr);
    add_property(&lake, "analytics/daily_orders", "delta.logRetentionDuration", "interval 60 days");
    let described = rows(&lake, "DESCRIBE analytics.daily_orders");
    let properties = &described[5..];
    assert_eq!(
        properties,
        [
            json!({"column": "# Table Properties", "type": null, "nullable": null, "partition": null}),
            json!({"column": "delta.logRetentionDuration", "type": "interval 60 days", "nullable": null, "partition": null}),
        ]
    );

    let missing = lake.cli(&["sql", "-e", "DESCRIBE analytics.daily_order"]);
    missing.assert_code(2);
    assert!(
        missing.stderr.contains("table `analytics.daily_order` not found; did you mean analytics.daily_orders?"),
        "{}",
        missing.stderr
    );
    let unwritten = lake.cli(&["sql", "-e", "DESCRIBE core.customers"]);
    unwritten.assert_code(2);
    assert!(
        unwritten.stderr.contains("no table yet: job `customers` creates it with its first run"),
        "{}",
        unwritten.stderr
    );
}

/// Adds the property `key` = `value` to the table in `dir` (below the root) by a metadata commit,
/// as another writer (Spark's `ALTER TABLE … SET TBLPROPERTIES`) makes one.
fn add_property(lake: &Lake, dir: &str, key: &str, value: &str) {
    let log = lake.root().join(dir).join("_delta_log");
    let mut versions: Vec<u64> = std::fs::read_dir(&log)
        .expect("the log")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json")?.parse().ok())
        .collect();
    versions.sort_unstable();
    let last = *versions.last().expect("a commit");
    let metadata = (0..=last)
        .rev()
        .find_map(|v| {
            let text = std::fs::read_to_string(log.join(format!("{v:020}.json"))).ok()?;
            text.lines().find_map(|l| serde_json::from_str::<Value>(l).ok()?.get("metaData").cloned())
        })
        .expect("the table's metadata");
    let mut metadata = metadata;
    metadata["configuration"][key] = Value::from(value);
    let commit = format!("{}\n", json!({"metaData": metadata}));
    std::fs::write(log.join(format!("{:020}.json", last + 1)), commit).expect("a metadata commit");
}

#[test]
fn a_table_not_found_names_the_nearest_and_sql_errors_say_where_they_are() {
    let lake = Lake::demo();
    let failed = lake.cli(&["sql", "-e", "SELECT *\nFROM raw.ordrs"]);
    failed.assert_code(2);
    assert!(!failed.stderr.contains("datafusion."), "no catalog prefix: {}", failed.stderr);
    assert!(
        failed.stderr.contains("table `raw.ordrs` not found (at line 2, column 6); did you mean raw.orders?"),
        "{}",
        failed.stderr
    );
    let far = lake.cli(&["sql", "-e", "SELECT * FROM warehouse.inventory"]);
    assert!(
        far.stderr.contains("the lakehouse has 5 table(s): `lakewriter sql -e \"SHOW TABLES\"` lists them"),
        "{}",
        far.stderr
    );

    // A job's inline SQL: the project file's line and column of the name.
    let project = std::fs::read_to_string(lake.project_file()).expect("the demo's project");
    let line = project.lines().position(|l| l == "FROM raw.orders").expect("daily_orders' FROM line") + 1;
    lake.set_project_text(&edited(&project, "FROM raw.orders\nWHERE dt = $dt", "FROM raw.order\nWHERE dt = $dt"));
    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let at = format!("table `raw.order` not found (at lakewriter.toml:{line}:6); did you mean raw.orders?");
    assert!(run.stderr.contains(&at), "{at}\n{}", run.stderr);

    // A job's sql_file: the file's line and column, of a column as of a table.
    std::fs::create_dir_all(lake.path().join("sql")).expect("sql folder");
    std::fs::write(lake.path().join("sql/daily.sql"), "SELECT customer_id,\n       SUM(amountt) AS revenue,\n       $dt AS dt\nFROM raw.orders WHERE dt = $dt GROUP BY customer_id\n").expect("sql file");
    let job = "\n[jobs.from_file]\ntarget = \"analytics.from_file\"\nwrite = \"overwrite_partition\"\npartition_by = \"dt\"\nsql_file = \"sql/daily.sql\"\n";
    lake.set_project_text(&format!("{project}{job}"));
    let run = lake.cli(&["run", "from_file", "--dt", "2026-09-01"]);
    run.assert_code(1);
    assert!(run.stderr.contains("the job's SQL is invalid (at sql/daily.sql:2:12): "), "{}", run.stderr);
    assert!(run.stderr.contains("No field named amountt"), "{}", run.stderr);
    // A syntax error: the parser's position.
    std::fs::write(
        lake.path().join("sql/daily.sql"),
        "SELECT customer_id,\n  COUNT(* AS orders, $dt AS dt\nFROM raw.orders WHERE dt = $dt GROUP BY customer_id\n",
    )
    .expect("sql file");
    let run = lake.cli(&["plan", "from_file", "--from", "2026-09-01", "--to", "2026-09-01"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("(at sql/daily.sql:2:11)"), "{}", run.stderr);
}
