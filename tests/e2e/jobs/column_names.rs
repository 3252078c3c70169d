//! Column names as SQL gives them in quotes — capitals (`Tier`, `OrderId`), spaces, quotes,
//! letters outside ASCII — in every write mode and in a job written as a statement: as `key`,
//! `newer_by` and `partition_by`, in checks, dry runs, backfill, `verify`, `status` and digests,
//! and in `lakewriter sql`; every table read by delta-rs Python as lakewriter reads it, locally
//! and on S3.

use serde_json::{Value, json};

use crate::support::json_lines;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::sql::query_rows;
use crate::support::{Checks, Job, Lake, Project, customers_with_orders, orders};

/// `overwrite`, partitioned by a name with a space, with a check of every kind.
fn overwrite() -> Job {
    Job::new("overwrite", "names.overwrite")
        .partition_by("Order Day")
        .sql(
            r#"SELECT customer_id AS "OrderId", COUNT(*) AS "Name With Space", SUM(amount) AS "quo""te",
  MAX(status) AS "Ünïcode", $dt AS "Order Day" FROM raw.orders WHERE dt = $dt GROUP BY customer_id"#,
        )
        .checks(
            Checks::new()
                .not_null("OrderId")
                .not_null("Order Day")
                .unique(&["OrderId"])
                .unique(&["OrderId", "Ünïcode"])
                .accepted_values("Ünïcode", &["placed", "shipped", "delivered", "cancelled"])
                .expect(r#""quo""te" >= 0 AND "Name With Space" > 0"#)
                .change_vs_previous(100.0),
        )
}

/// A job of every mode over the demo's raw layer, each named like its table (`names.JOB`),
/// their columns named only in quotes. `overwrite`, `delete_insert`, `append` and `statement`
/// are partitioned by such names.
fn project() -> Project {
    let overwrite = overwrite();
    let merge = Job::merge("merge", "names.merge", &["Customer Id"], "Updated At")
        .delete_when(r#""Op.Code" = 'delete'"#)
        .sql(
            r#"SELECT customer_id AS "Customer Id", email AS "quo""te", tier AS "Tier", updated_at AS "Updated At",
  op AS "Op.Code" FROM raw.customers_batch WHERE dt = $dt"#,
        )
        .checks(
            Checks::new()
                .not_null("Tier")
                .not_null("quo\"te")
                .unique(&["Customer Id"])
                .accepted_values("Tier", &["bronze", "silver", "gold"]),
        );
    let delete_insert = Job::delete_insert("delete_insert", "names.delete_insert", r#""Day" = $dt"#)
        .partition_by("Day")
        .sql(
            r#"SELECT order_id AS "OrderId", amount AS "Ünïcode", status AS "quo""te", $dt AS "Day"
  FROM raw.orders WHERE dt = $dt"#,
        )
        .checks(Checks::new().unique(&["OrderId"]));
    let append_dedup = Job::append_dedup("append_dedup", "names.append_dedup", &["OrderId", "Name With Space"])
        .sql(
            r#"SELECT order_id AS "OrderId", customer_id AS "Name With Space", amount AS "Ünïcode"
  FROM raw.orders WHERE dt = $dt"#,
        )
        .checks(Checks::new().not_null("Name With Space"));
    let append = Job::append("append", "names.append")
        .partition_by(r#"Ünï "Day""#)
        .sql(
            r#"SELECT order_id AS "OrderId", amount AS "quo""te", $dt AS "Ünï ""Day""" FROM raw.orders WHERE dt = $dt"#,
        )
        .checks(Checks::new().not_null(r#"Ünï "Day""#));
    let rebuild = Job::rebuild("rebuild", "names.rebuild")
        .sql(
            r#"SELECT customer_id AS "Customer Id", COUNT(*) AS "Name With Space", MAX(dt) AS "Last Day"
  FROM raw.orders GROUP BY customer_id"#,
        )
        .checks(Checks::new().unique(&["Customer Id"]));
    let statement = Job::statement(
        "statement",
        "names.statement",
        r#"INSERT OVERWRITE TABLE names.statement PARTITION ("Day" = $dt)
  SELECT customer_id AS "OrderId", SUM(amount) AS "quo""te" FROM raw.orders WHERE dt = $dt GROUP BY customer_id"#,
    )
    .checks(Checks::new().not_null("OrderId"));
    // In DataFusion's dialect, whose quoted names are `"…"` (Spark's are backticks: see the
    // `lakewriter sql` test below).
    [overwrite, merge, delete_insert, append_dedup, append, rebuild, statement]
        .into_iter()
        .fold(Project::new(), Project::job)
        .all_datafusion()
}

const FROM: &str = "2026-09-01";
const TO: &str = "2026-09-02";

/// Each dated job and its partition column (`None`: not partitioned).
const DATED: [(&str, Option<&str>); 6] = [
    ("overwrite", Some("Order Day")),
    ("merge", None),
    ("delete_insert", Some("Day")),
    ("append_dedup", None),
    ("append", Some("Ünï \"Day\"")),
    ("statement", Some("Day")),
];

fn lake_with_names(lake: &Lake) {
    lake.set_project(&project());
}

/// `lakewriter --json ARGS…`, which must exit with `code`: its JSON lines.
fn json(lake: &Lake, args: &[&str], code: i32) -> Vec<Value> {
    let run = lake.cli(&[&["--json"][..], args].concat());
    run.assert_code(code);
    json_lines(&run)
}

/// What a run of `job` that is not its first says: `skipped` for an append (its partition is
/// appended), else `ok`.
fn status_again(job: &str) -> &'static str {
    if job == "append" { "skipped" } else { "ok" }
}

/// A dry run of `job` for `day` (the rebuild: without a date): its report, whose status must be
/// `status`, and which commits nothing.
fn dry_run(lake: &Lake, job: &str, day: Option<&str>, status: &str) -> Value {
    let mut args = vec!["run", job, "--dry-run", "--show", "2"];
    args.extend(day.iter().flat_map(|d| ["--dt", *d]));
    let report = json(lake, &args, 0).remove(0);
    assert_eq!(report["status"], status, "{job}: {report}");
    assert_eq!(report["committed"], false, "{job}: {report}");
    report
}

/// `verify` of `job` for `day`: both runs on a copy leave the same table.
fn assert_verified(lake: &Lake, job: &str, day: Option<&str>) {
    let mut args = vec!["verify", job];
    args.extend(day.iter().flat_map(|d| ["--dt", *d]));
    let verified = json(lake, &args, 0).remove(0);
    assert_eq!(verified["pass"], true, "{job}: {verified}");
    assert_eq!(verified["digest_first"], verified["digest_second"], "{job}: {verified}");
}

/// Every check of `report` ran and passed.
fn assert_checks_passed(report: &Value, job: &str) {
    let checks = report["checks"].as_array().unwrap_or_else(|| panic!("{job}: no checks: {report}"));
    assert!(!checks.is_empty() && checks.iter().all(|c| c["passed"] == true), "{job}: {report}");
}

/// Every Delta reader but polars on S3 reads `table` (at `uri`) as lakewriter does: the same rows,
/// each in one canonical form. (polars reads a partition's folder from the log's path as it is
/// written there, URI-encoded: on S3 it takes `Order%20Day` for the column's name and fails.)
fn assert_read_alike(lake: &Lake, table: &str, uri: &str) {
    let on_s3 = uri.starts_with("s3://");
    let readers: &[&str] =
        if on_s3 { &["deltalake", "pyarrow_dataset"] } else { &["deltalake", "polars", "pyarrow_dataset"] };
    let select = lake.cli(&["--json", "sql", "-e", &format!("SELECT * FROM {table}")]);
    select.assert_code(0);
    let read = Reader::new(lake).interop_by(uri, &select.stdout, readers);
    let ours = &read["lakewriter"];
    assert_eq!(ours["rows"], lake.digest(table, None).rows, "{table}: lakewriter's SELECT reads every row");
    for reader in readers {
        assert_eq!(read[reader]["rows"], ours["rows"], "{table}: {reader} row count");
        assert_eq!(read[reader]["digest"], ours["digest"], "{table}: {reader} reads other rows than lakewriter");
    }
}

/// The rows lakewriter gives for `query`.
fn select(lake: &Lake, query: &str) -> Vec<Value> {
    query_rows(&json(lake, &["sql", "-e", query], 0), 1)
}

/// What a job's table holds after [`FROM`]..=[`TO`], from the raw layer.
fn expected_rows(lake: &Lake, job: &str) -> u64 {
    let both = |f: fn(&str) -> u64| f(FROM) + f(TO);
    match job {
        "overwrite" | "statement" => both(customers_with_orders),
        "delete_insert" | "append_dedup" | "append" => both(orders),
        "merge" => {
            let query = format!(
                "SELECT COUNT(DISTINCT customer_id) AS n FROM raw.customers_batch WHERE dt BETWEEN '{FROM}' AND '{TO}'"
            );
            select(lake, &query)[0]["n"].as_u64().expect("a count")
        }
        other => panic!("no dated job {other}"),
    }
}

/// Each dated job: lint, a dry run before its first write, a backfill, the same days again (the
/// content unchanged, a dry run that finds nothing to change), `verify`, `status` and the
/// partitions' digests; the rebuild run twice; then every table read by delta-rs Python. (`verify`
/// copies a table to a local folder: not on S3.)
fn every_mode(lake: &Lake, jobs: &[&str], uri: &dyn Fn(&str) -> String) {
    lake.cli(&["lint"]).assert_code(0);
    for &(job, partition) in DATED.iter().filter(|(j, _)| jobs.contains(j)) {
        let table = format!("names.{job}");
        let first = dry_run(lake, job, Some(FROM), "ok");
        assert_eq!(first["dry_run"]["changes"], true, "{job}: {first}");
        let backfill = json(lake, &["backfill", job, "--from", FROM, "--to", TO], 0);
        for report in backfill.iter().filter(|r| r.get("partition").is_some()) {
            assert_eq!(report["status"], "ok", "{job}: {report}");
            assert_checks_passed(report, job);
        }
        let written = lake.digest(&table, None);
        assert_eq!(written.rows, expected_rows(lake, job), "{job}");
        for day in [FROM, TO] {
            let again = json(lake, &["run", job, "--dt", day], 0).remove(0);
            assert_eq!(again["status"], status_again(job), "{job} again: {again}");
            assert_eq!(
                lake.digest(&table, None).digest,
                written.digest,
                "{job}: running {day} again changed the table"
            );
            let dry = dry_run(lake, job, Some(day), status_again(job));
            assert_ne!(dry["dry_run"]["changes"], true, "{job}: a dry run of {day} after its run: {dry}");
        }
        if !uri(job).starts_with("s3://") {
            assert_verified(lake, job, Some(TO));
        }
        let status = lake.status(&[job, "--from", FROM, "--to", TO]);
        let shown: Vec<(&str, &str)> =
            status.partitions.iter().map(|p| (p.partition.as_str(), p.state.as_str())).collect();
        // A day is named by the table's partition column where the job writes that partition
        // (`overwrite_partition`, `INSERT OVERWRITE … PARTITION`), else by `dt`.
        let column = partition.filter(|_| matches!(job, "overwrite" | "statement")).unwrap_or("dt");
        let expected = [FROM, TO].map(|d| format!("{column}={d}"));
        assert_eq!(shown, [(expected[0].as_str(), "fresh"), (expected[1].as_str(), "fresh")], "{job}: {status:?}");
        if partition.is_some() {
            let days = lake.digest(&table, Some(FROM)).rows + lake.digest(&table, Some(TO)).rows;
            assert_eq!(days, written.rows, "{job}: the partitions' digests cover the table");
        }
        assert_read_alike(lake, &table, &uri(job));
    }
    if jobs.contains(&"rebuild") {
        dry_run(lake, "rebuild", None, "ok");
        lake.cli(&["run", "rebuild"]).assert_code(0);
        let written = lake.digest("names.rebuild", None);
        assert!(written.rows > 0);
        lake.cli(&["run", "rebuild"]).assert_code(0);
        assert_eq!(
            lake.digest("names.rebuild", None).digest,
            written.digest,
            "rebuild: the second run changed the table"
        );
        assert_verified(lake, "rebuild", None);
        assert_read_alike(lake, "names.rebuild", &uri("rebuild"));
    }
}

#[test]
fn every_mode_writes_columns_of_any_name_and_runs_again_to_the_same_table() {
    let lake = Lake::demo();
    lake_with_names(&lake);
    let root = lake.root().to_str().expect("utf-8 path").to_owned();
    let all: Vec<&str> = DATED.iter().map(|(j, _)| *j).chain(["rebuild"]).collect();
    every_mode(&lake, &all, &|job| format!("{root}/names/{job}"));
    // The partitioned overwrite holds what its query gives, name for name and value for value.
    let query = |from: &str| {
        format!(
            r#"SELECT "OrderId", "Name With Space", "quo""te", "Ünïcode" FROM {from} WHERE "Order Day" = DATE '{TO}' ORDER BY "OrderId""#
        )
    };
    let raw = r#"(SELECT customer_id AS "OrderId", COUNT(*) AS "Name With Space", SUM(amount) AS "quo""te", MAX(status) AS "Ünïcode", dt AS "Order Day" FROM raw.orders GROUP BY customer_id, dt)"#;
    let written = select(&lake, &query("names.overwrite"));
    assert_eq!(written.len() as u64, customers_with_orders(TO));
    assert_eq!(written, select(&lake, &query(raw)));
    // An edit by hand in a partition of a mixed-case column: `audit` finds it and shows the row.
    let first = select(&lake, &format!("SELECT MIN(customer_id) AS id FROM raw.orders WHERE dt = '{TO}'"));
    let customer = first[0]["id"].as_i64().expect("a customer");
    let predicate = format!(r#""Day" = '{TO}' AND "OrderId" = {customer}"#);
    assert_eq!(Reader::new(&lake).delete(&predicate, &format!("{root}/names/statement")), 1);
    let run = lake.cli(&["--json", "audit", "statement", "--scratch", "--from", TO, "--to", TO]);
    run.assert_code(1);
    let audited = json_lines(&run);
    assert!(audited.len() == 2, "a partition line and the summary: {}{}", run.stdout, run.stderr);
    assert_eq!((&audited[0]["partition"], &audited[0]["verdict"]), (&json!(format!("Day={TO}")), &json!("differs")));
    assert_eq!((&audited[0]["rows_added"], &audited[0]["rows_removed"]), (&json!(1), &json!(0)), "{audited:?}");
    let example = audited[0]["added_examples"][0].as_str().expect("the row deleted by hand");
    assert!(example.starts_with(&format!("OrderId={customer}, quo\"te=")), "{example}");
    // Partition folders are named as written (the log's paths URI-encode them, as Delta says).
    for folder in [format!("names/overwrite/Order Day={TO}"), format!("names/append/Ünï \"Day\"={TO}")] {
        assert!(lake.root().join(&folder).is_dir(), "no folder {folder}");
    }
}

#[test]
fn a_merge_and_partitioned_writes_with_columns_of_any_name_on_s3() {
    let s3 = S3::new("names");
    s3.lake.prepare_demo();
    lake_with_names(&s3.lake);
    every_mode(&s3.lake, &["overwrite", "merge", "append"], &|job| s3.url(&format!("names/{job}")));
}

/// `lakewriter sql`: an INSERT OVERWRITE creating a table partitioned by a mixed-case column, a
/// MERGE and an INSERT of one static partition, names quoted as Spark quotes them (backticks); run
/// twice, the same rows, read alike by delta-rs.
#[test]
fn sql_statements_write_columns_of_any_name() {
    let lake = Lake::demo();
    let columns = r#"AS v(`Customer Id`, `Tier`, `quo"te`, `OrderDay`)"#;
    let script = format!(
        r#"INSERT OVERWRITE TABLE names.sql PARTITION (`OrderDay`)
  SELECT * FROM (VALUES (1, 'gold', 'a', DATE '{FROM}'), (2, 'silver', 'b', DATE '{TO}')) {columns};
MERGE INTO names.sql AS t
  USING (SELECT * FROM (VALUES (1, 'platinum', 'c', DATE '{FROM}'), (3, 'bronze', 'd', DATE '2026-09-03')) {columns}) AS s
  ON t.`Customer Id` = s.`Customer Id`
  WHEN MATCHED AND s.`Tier` <> t.`Tier` THEN UPDATE SET `Tier` = s.`Tier`, `quo"te` = s.`quo"te`
  WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE TABLE names.sql PARTITION (`OrderDay` = DATE '{TO}') SELECT 2, 'gold', 'e';
"#
    );
    std::fs::write(lake.path().join("names.sql"), &script).expect("the SQL file");
    let expected = [
        json!({"Customer Id": 1, "Tier": "platinum", "quo\"te": "c", "OrderDay": FROM}),
        json!({"Customer Id": 2, "Tier": "gold", "quo\"te": "e", "OrderDay": TO}),
        json!({"Customer Id": 3, "Tier": "bronze", "quo\"te": "d", "OrderDay": "2026-09-03"}),
    ];
    let uri = lake.root().join("names/sql").to_str().expect("utf-8 path").to_owned();
    let mut digests = Vec::new();
    for _ in 0..2 {
        let reports = json(&lake, &["sql", "names.sql"], 0);
        assert_eq!(reports.len(), 4, "three statements and the summary: {reports:?}");
        let rows = select(&lake, "SELECT * FROM names.sql ORDER BY `Customer Id`");
        assert_eq!(rows, expected);
        assert_eq!(crate::support::sql::rows(&lake, &uri), crate::support::sql::sorted(expected.to_vec()));
        digests.push(lake.digest("names.sql", None).digest);
    }
    assert_eq!(digests[0], digests[1], "the statements run again leave the same table");
    assert_read_alike(&lake, "names.sql", &uri);
}
