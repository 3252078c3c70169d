//! Values, names and types as a Spark user expects them, in one table of cases written by every
//! write mode and by jobs written as statements, locally and on S3: each table read back by
//! lakewriter and by delta-rs Python alike, run twice to the same digest, nullable in every
//! column, and holding the values Spark would write — exact decimal literals (`amount * 1.5`,
//! `1.005` stored as `1.01`), an empty partition string as NULL, column names with capitals,
//! spaces and letters outside ASCII, a zoned timestamp.
//! (An empty string is NULL only in a partition column, as in Spark; elsewhere it is kept.)

use serde_json::Value;

use crate::support::json_lines;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::sql::query_rows;
use crate::support::{Job, Lake, Project, edited};

/// The columns every job writes, from one day of the demo's raw orders: a mixed-case key, an
/// exact decimal product, a decimal literal rounded into `DECIMAL(10,2)` (half up: 1.01), a
/// string that is empty for every fifth order (the partition column of most jobs), a literal (a
/// column that is not nullable in the plan), and a zoned timestamp.
const CASES: &str = r#"order_id AS "OrderId", amount * 1.5 AS "Amount x1.5", CAST(1.005 AS DECIMAL(10,2)) AS "Rounded",
  CASE WHEN order_id % 5 = 0 THEN '' ELSE status END AS "Säle Status", 1 AS "One", created_at AS "Created At""#;

/// The partition column of the jobs whose table is partitioned by a string: `''` there is NULL.
const STRING_PARTITION: &str = "Säle Status";

/// The jobs, each writing `cases.NAME`.
const JOBS: [&str; 8] =
    ["overwrite", "delete_insert", "append", "append_dedup", "merge", "rebuild", "insert_statement", "merge_statement"];

/// Whether `job`'s table is partitioned by [`STRING_PARTITION`].
fn string_partitioned(job: &str) -> bool {
    !["overwrite", "insert_statement", "merge_statement"].contains(&job)
}

/// The project of [`JOBS`], each selecting `cases` (the columns of [`CASES`], or a variant).
fn project(cases: &str) -> Project {
    let day = format!("SELECT {cases}, $dt AS dt FROM raw.orders WHERE dt = $dt");
    let jobs = [
        Job::new("overwrite", "cases.overwrite").sql(&day),
        Job::delete_insert("delete_insert", "cases.delete_insert", "dt = $dt").sql(&day),
        Job::append("append", "cases.append").sql(&day),
        Job::append_dedup("append_dedup", "cases.append_dedup", &["OrderId"]).sql(&day),
        Job::merge("merge", "cases.merge", &["OrderId"], "Created At").sql(&day),
        Job::rebuild("rebuild", "cases.rebuild").sql(format!("SELECT {cases}, dt FROM raw.orders")),
        Job::statement(
            "insert_statement",
            "cases.insert_statement",
            &format!(
                "INSERT OVERWRITE TABLE cases.insert_statement PARTITION (dt = $dt) SELECT {cases} FROM raw.orders \
                 WHERE dt = $dt"
            ),
        ),
        Job::statement(
            "merge_statement",
            "cases.merge_statement",
            &format!(
                "MERGE INTO cases.merge_statement AS t USING (SELECT {cases}, $dt AS dt FROM raw.orders \
                 WHERE dt = $dt) AS s ON t.\"OrderId\" = s.\"OrderId\" \
                 WHEN MATCHED AND s.\"Created At\" > t.\"Created At\" THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
            ),
        ),
    ];
    // Written in DataFusion's dialect (`"Order Id"` a name, `arrow_typeof`): what this checks is
    // how a table is written, as Spark writes one, whatever the SQL's dialect.
    let project = jobs.into_iter().zip(JOBS).fold(Project::new(), |project, (job, name)| {
        project.job(if string_partitioned(name) { job.partition_by(STRING_PARTITION) } else { job })
    });
    project.all_datafusion()
}

const FROM: &str = "2026-09-01";
const TO: &str = "2026-09-02";

/// `lakewriter --json sql -e SQL`: the one row it selects.
fn select_one(lake: &Lake, sql: &str) -> Value {
    let run = lake.cli(&["--json", "sql", "-e", sql]);
    run.assert_code(0);
    query_rows(&json_lines(&run), 1).into_iter().next().unwrap_or_else(|| panic!("no row from {sql}"))
}

/// Writes every job (the dated ones over `FROM..=TO`, the rebuild once).
fn write_all(lake: &Lake) {
    for job in JOBS {
        let run = if job == "rebuild" {
            lake.cli(&["run", job])
        } else {
            lake.cli(&["backfill", job, "--from", FROM, "--to", TO, "--only", "all"])
        };
        run.assert_code(0);
    }
}

/// What every table holds, checked by lakewriter's SQL and delta-rs Python's reading.
fn assert_cases(lake: &Lake, uri: &dyn Fn(&str) -> String) {
    let reader = Reader::new(lake);
    for job in JOBS {
        let table = format!("cases.{job}");
        // lakewriter and delta-rs Python (its table and its pyarrow dataset) read the same rows.
        let select = lake.cli(&["--json", "sql", "-e", &format!("SELECT * FROM {table}")]);
        select.assert_code(0);
        let read = reader.interop_by(&uri(job), &select.stdout, &["deltalake", "pyarrow_dataset"]);
        let rows = lake.digest(&table, None).rows;
        assert_eq!(read["lakewriter"]["rows"], rows, "{table}: lakewriter's SELECT reads every row");
        for by in ["deltalake", "pyarrow_dataset"] {
            assert_eq!(read[by]["digest"], read["lakewriter"]["digest"], "{table}: {by} reads other rows: {read}");
        }
        // Every column is nullable, as Spark's CREATE TABLE AS SELECT makes it.
        for (column, kind, nullable) in reader.schema(&uri(job)) {
            assert!(nullable, "{table}: column `{column}` ({kind}) is NOT NULL");
        }
        let counts = select_one(
            lake,
            &format!(
                r#"SELECT COUNT(*) AS n,
                     SUM(CASE WHEN "Rounded" = 1.01 THEN 1 ELSE 0 END) AS rounded_half_up,
                     SUM(CASE WHEN "Säle Status" IS NULL THEN 1 ELSE 0 END) AS null_status,
                     SUM(CASE WHEN "Säle Status" = '' THEN 1 ELSE 0 END) AS empty_status,
                     SUM(CASE WHEN "OrderId" % 5 = 0 THEN 1 ELSE 0 END) AS every_fifth,
                     MAX(arrow_typeof("Amount x1.5")) AS product
                   FROM {table}"#
            ),
        );
        assert!(counts["n"].as_i64().is_some_and(|n| n > 0), "{table}: {counts}");
        assert_eq!(counts["rounded_half_up"], counts["n"], "{table}: 1.005 into DECIMAL(10,2) is 1.01: {counts}");
        if string_partitioned(job) {
            assert_eq!(counts["null_status"], counts["every_fifth"], "{table}: '' is written as NULL: {counts}");
            assert_eq!(counts["empty_status"], 0, "{table}: no '' is left: {counts}");
        } else {
            // Outside a partition column, '' is a value like any other, as in Spark.
            assert_eq!(counts["empty_status"], counts["every_fifth"], "{table}: '' is kept: {counts}");
            assert_eq!(counts["null_status"], 0, "{table}: {counts}");
        }
        assert_eq!(counts["product"], "Decimal128(15, 3)", "{table}: amount * 1.5 is exact: {counts}");
        // The exact product: for every row, twice the product is three times the raw amount.
        let exact = select_one(
            lake,
            &format!(
                r#"SELECT COUNT(*) AS wrong FROM {table} AS t JOIN raw.orders AS o ON t."OrderId" = o.order_id
                   WHERE t."Amount x1.5" * 2 <> o.amount * 3"#
            ),
        );
        assert_eq!(exact["wrong"], 0, "{table}: amount * 1.5 as Spark computes it");
    }
}

/// Writes every job, checks the tables, runs every job again (the digests unchanged), then runs
/// a later day with a NULL where the first runs wrote a literal: the created columns take it.
fn every_mode(lake: &Lake, uri: &dyn Fn(&str) -> String) {
    lake.set_project(&project(CASES));
    write_all(lake);
    assert_cases(lake, uri);
    let digests: Vec<_> = JOBS.iter().map(|job| lake.digest(&format!("cases.{job}"), None)).collect();
    write_all(lake);
    for (job, before) in JOBS.iter().zip(digests) {
        let after = lake.digest(&format!("cases.{job}"), None);
        assert_eq!(
            (after.rows, &after.digest),
            (before.rows, &before.digest),
            "cases.{job}: a rerun changed the table"
        );
    }
    lake.set_project(&project(&edited(CASES, "1 AS \"One\"", "CAST(NULL AS BIGINT) AS \"One\"")));
    for job in JOBS {
        let run =
            if job == "rebuild" { lake.cli(&["run", job]) } else { lake.cli(&["run", job, "--dt", "2026-09-03"]) };
        run.assert_code(0);
        let written = select_one(lake, &format!(r#"SELECT COUNT(*) AS n FROM cases.{job} WHERE "One" IS NULL"#));
        assert!(written["n"].as_i64().is_some_and(|n| n > 0), "cases.{job}: the NULLs were written: {written}");
    }
}

#[test]
fn every_mode_writes_values_names_and_types_as_spark_does() {
    let lake = Lake::demo();
    let root = lake.root().to_str().expect("utf-8 path").to_owned();
    every_mode(&lake, &|job| format!("{root}/cases/{job}"));
}

#[test]
fn on_s3_every_mode_writes_values_names_and_types_as_spark_does() {
    let s3 = S3::new("spark-semantics");
    s3.lake.prepare_demo();
    every_mode(&s3.lake, &|job| s3.url(&format!("cases/{job}")));
}
