//! Nullability as a Spark user expects it. Every table lakewriter creates — by each write mode,
//! by a job written as a statement, by `lakewriter sql` — is nullable in every column, whatever a
//! literal made the first result's, except the columns a job declares `not_null`; the schema is
//! read back from the log and by delta-rs Python. A NULL in a NOT NULL column fails a run and its
//! dry run alike (exit 1), before anything is written, naming the table, the partition, the column
//! and the rows; a table stricter than its job is not refused for that alone. Locally, and the
//! create / NULL case on the S3 test server.

use std::path::Path;

use arrow::array::{Array, AsArray};
use arrow::datatypes::Int64Type;

use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{Job, Lake, Project, Run, day, orders};

const DAY1: &str = "2026-09-01";
const DAY2: &str = "2026-09-02";

/// A NULL in `code` for every even order id.
const SOME_NULL: &str = "CASE WHEN order_id % 2 = 0 THEN NULL ELSE 'k' END";

/// A job of each way to write a table: its name and SQL, where `{TAG}` and `{CODE}` are the
/// expressions of the columns `tag` and `code`.
const JOBS: [(&str, &str); 8] = [
    ("overwrite_partition", SELECT),
    ("delete_insert", SELECT),
    ("merge", SELECT),
    ("append_dedup", SELECT),
    ("append", SELECT),
    ("rebuild", EVERY_DAY),
    (
        "insert_overwrite",
        "INSERT OVERWRITE TABLE nulls.insert_overwrite PARTITION (dt = $dt) \
         SELECT order_id, created_at, {TAG} AS tag, {CODE} AS code FROM raw.orders WHERE dt = $dt",
    ),
    (
        "merge_into",
        "MERGE INTO nulls.merge_into AS t USING (SELECT order_id, created_at, {TAG} AS tag, {CODE} AS code, $dt AS dt \
         FROM raw.orders WHERE dt = $dt) AS s ON t.order_id = s.order_id WHEN NOT MATCHED THEN INSERT *",
    ),
];

const SELECT: &str =
    "SELECT order_id, created_at, {TAG} AS tag, {CODE} AS code, $dt AS dt FROM raw.orders WHERE dt = $dt";
const EVERY_DAY: &str = "SELECT order_id, created_at, {TAG} AS tag, {CODE} AS code, dt FROM raw.orders";

/// The job of [`JOBS`] named `name`, writing `nulls.<name>` with `tag` and `code` as given.
fn job(name: &str, tag: &str, code: &str) -> Job {
    let (_, sql) = JOBS.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no job {name}"));
    let sql = sql.replace("{TAG}", tag).replace("{CODE}", code);
    let target = format!("nulls.{name}");
    let job = match name {
        "overwrite_partition" => Job::new(name, &target),
        "delete_insert" => Job::delete_insert(name, &target, "dt = $dt"),
        "merge" => Job::merge(name, &target, &["order_id"], "created_at"),
        "append_dedup" => Job::append_dedup(name, &target, &["order_id"]),
        "append" => Job::append(name, &target),
        "rebuild" => Job::rebuild(name, &target),
        _ => return Job::statement(name, &target, &sql),
    };
    job.partition_by("dt").sql(sql)
}

/// The project of [`JOBS`], each writing `nulls.<name>`, with `tag` and `code` as given and
/// `not_null = NOT_NULL`.
fn project(root: &str, tag: &str, code: &str, not_null: &[&str]) -> Project {
    JOBS.iter()
        .fold(Project::new().root(root), |project, (name, _)| project.job(job(name, tag, code).not_null(not_null)))
}

/// `lakewriter --json run NAME` for `day` (`rebuild`: without a date), and `--dry-run`.
fn run(lake: &Lake, name: &str, day: &str, dry: bool) -> Run {
    let mut args = vec!["--json", "run", name];
    if name != "rebuild" {
        args.extend(["--dt", day]);
    }
    if dry {
        args.push("--dry-run");
    }
    lake.cli(&args)
}

/// The columns of the table each job creates, as `(name, Delta type, nullable)`: the same for
/// every job (a MERGE's `INSERT *` takes its source's).
fn created(code_nullable: bool) -> Vec<(String, String, bool)> {
    let mut columns = vec![("order_id", "long", true), ("created_at", "timestamp", true), ("tag", "string", true)];
    columns.push(("code", "string", code_nullable));
    columns.push(("dt", "date", true));
    columns.into_iter().map(|(c, t, n)| (c.to_owned(), t.to_owned(), n)).collect()
}

/// The columns of the table in `dir` as its latest metadata in the log says: `(name, nullable)`.
fn logged(dir: &Path) -> Vec<(String, bool)> {
    let fields = crate::support::logged_fields(dir);
    fields.iter().map(|f| (f["name"].as_str().expect("name").to_owned(), f["nullable"] == true)).collect()
}

/// The orders of `day` whose id is even: the NULLs of [`SOME_NULL`].
fn even_orders(day: &str) -> u64 {
    let batch = lakewriter_datagen::orders_for(self::day(day));
    let ids = batch.column_by_name("order_id").expect("order_id");
    let ids = ids.as_primitive::<Int64Type>();
    (0..ids.len()).filter(|&i| ids.is_valid(i) && ids.value(i) % 2 == 0).count() as u64
}

/// The error of a run of `name` on `day` refused for `rows` NULLs in `code`.
fn refusal(name: &str, day: &str, rows: u64) -> String {
    let (label, result) = if name == "rebuild" {
        ("rebuild (whole table)".to_owned(), "the result".to_owned())
    } else {
        (format!("{name} dt={day}"), format!("the result for dt={day}"))
    };
    format!(
        "{label}: nulls.{name}: {result} has a NULL in column `code` ({rows} rows), NOT NULL in the table; nothing \
         was committed. Where the column must hold a value, make the job's SQL give one (e.g. `COALESCE`) and declare \
         it in the job's `not_null`; where NULL is a value it may hold, make the column nullable: rebuild the table (a \
         `rebuild` job's run replaces its schema), or run `ALTER TABLE nulls.{name} ALTER COLUMN code DROP NOT NULL` \
         in another engine (Spark)"
    )
}

/// The rows `code` is NULL in on `day` in `name`'s result: every day's for `rebuild`.
fn nulls_of(name: &str, day: &str) -> u64 {
    if name == "rebuild" { even_orders(DAY1) + even_orders(DAY2) } else { even_orders(day) }
}

#[track_caller]
fn assert_refused(run: &Run, expected: &str) {
    run.assert_code(1);
    let report = run.json().0.remove(0);
    assert_eq!((report.committed, report.error.as_deref()), (false, Some(expected)));
    assert!(run.stderr.ends_with(&format!("error: {expected}\n")), "{}", run.stderr);
}

#[test]
fn every_way_of_creating_a_table_makes_it_nullable_but_for_declared_columns() {
    let lake = Lake::new(DAY1, DAY2);
    let root = lake.root();
    let reader = Reader::new(&lake);
    lake.set_project(&project("lake", "'x'", "'k'", &["code"]));
    for (name, ..) in JOBS {
        run(&lake, name, DAY1, false).assert_code(0);
        let dir = root.join("nulls").join(name);
        let uri = dir.to_str().expect("utf-8 path");
        assert_eq!(reader.schema(uri), created(false), "{name}: the schema delta-rs Python reads");
        let logged_columns: Vec<(String, bool)> = created(false).into_iter().map(|(c, _, n)| (c, n)).collect();
        assert_eq!(logged(&dir), logged_columns, "{name}: the schema in the log");
    }

    // The declaration gone, the table is stricter than the job: not refused for that alone, and
    // a NULL where the first run's literal could have none is written.
    lake.set_project(&project("lake", "CAST(NULL AS VARCHAR)", "'k'", &[]));
    for (name, ..) in JOBS {
        run(&lake, name, DAY2, false).assert_code(0);
        let uri = root.join("nulls").join(name);
        let rows = Reader::new(&lake).rows(uri.to_str().expect("utf-8 path"));
        let untagged = rows.iter().filter(|r| r["tag"].is_null()).count() as u64;
        let expected = if name == "rebuild" { orders(DAY1) + orders(DAY2) } else { orders(DAY2) };
        assert_eq!(untagged, expected, "{name}: rows without a tag");
        // A rebuild replaces the schema: without the declaration, `code` is nullable now.
        assert_eq!(reader.schema(uri.to_str().expect("utf-8 path")), created(name == "rebuild"), "{name}");
    }

    // `lakewriter sql`: an INSERT and a MERGE into a missing table create it nullable too.
    let statements = [
        "INSERT INTO nulls.sql_insert SELECT order_id, 'x' AS tag FROM raw.orders WHERE dt = DATE '2026-09-01'",
        "MERGE INTO nulls.sql_merge AS t USING (SELECT order_id, 'x' AS tag FROM raw.orders WHERE dt = DATE \
         '2026-09-01') AS s ON t.order_id = s.order_id WHEN NOT MATCHED THEN INSERT *",
        "INSERT INTO nulls.sql_insert VALUES (1, NULL)",
        "MERGE INTO nulls.sql_merge AS t USING (SELECT CAST(1 AS BIGINT) AS order_id, CAST(NULL AS VARCHAR) AS tag) \
         AS s ON t.order_id = s.order_id WHEN NOT MATCHED THEN INSERT *",
    ];
    for statement in statements {
        lake.cli(&["sql", "-e", statement]).assert_code(0);
    }
    for table in ["sql_insert", "sql_merge"] {
        let uri = root.join("nulls").join(table);
        let expected = [("order_id", "long", true), ("tag", "string", true)].map(|(c, t, n)| (c.into(), t.into(), n));
        assert_eq!(reader.schema(uri.to_str().expect("utf-8 path")), expected, "{table}");
    }
}

#[test]
fn a_null_in_a_not_null_column_fails_the_run_and_its_dry_run_alike_naming_it() {
    let lake = Lake::new(DAY1, DAY2);
    lake.set_project(&project("lake", "'x'", "'k'", &["code"]));
    for (name, ..) in JOBS {
        run(&lake, name, DAY1, false).assert_code(0);
    }
    let before: Vec<_> = JOBS.iter().map(|(name, ..)| lake.digest(&format!("nulls.{name}"), None)).collect();
    // Declared, and (the declaration gone) from the table alone.
    for declared in [true, false] {
        let not_null: &[&str] = if declared { &["code"] } else { &[] };
        lake.set_project(&project("lake", "'x'", SOME_NULL, not_null));
        for (name, ..) in JOBS {
            if name == "rebuild" && !declared {
                continue; // A rebuild replaces the schema: without the declaration, nothing refuses a NULL.
            }
            let expected = refusal(name, DAY2, nulls_of(name, DAY2));
            if name == "merge_into" {
                // A MERGE's source is not the rows it writes: the table's own check refuses them.
                let run = run(&lake, name, DAY2, false);
                let error = run.json().0.remove(0).error.unwrap_or_default();
                assert_eq!(
                    error,
                    "merge_into dt=2026-09-02: nulls.merge_into: the result for dt=2026-09-02 has rows the table \
                     refuses: a NULL in one of its NOT NULL columns (`code`), or a value a CHECK constraint of the \
                     table rejects; nothing was committed"
                );
                run.assert_code(1);
                continue;
            }
            assert_refused(&run(&lake, name, DAY2, true), &expected);
            assert_refused(&run(&lake, name, DAY2, false), &expected);
        }
    }
    let after: Vec<_> = JOBS.iter().map(|(name, ..)| lake.digest(&format!("nulls.{name}"), None)).collect();
    assert_eq!(after, before, "no table changed");

    // A declared column the result does not have: `lint` and each run name it.
    let nope = job("overwrite_partition", "'x'", "'k'").not_null(&["nope"]);
    lake.set_project(&project("lake", "'x'", "'k'", &["code"]).job(nope));
    let lint = lake.cli(&["lint"]);
    lint.assert_code(1);
    assert!(
        lint.stdout.contains("job overwrite_partition: check: key `not_null`: the result has no column `nope`"),
        "{}",
        lint.stdout
    );
    let expected = "overwrite_partition dt=2026-09-02: job `overwrite_partition`: key `not_null`: the result has no \
                    column `nope`";
    for dry in [false, true] {
        assert_refused(&run(&lake, "overwrite_partition", DAY2, dry), expected);
    }
}

#[test]
fn on_s3_a_created_table_is_nullable_but_for_declared_columns_and_a_null_there_is_refused() {
    let s3 = S3::new("nulls");
    for d in [DAY1, DAY2] {
        let bytes = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(day(d))).expect("parquet");
        s3.put(&format!("raw/orders/dt={d}/part-00000.parquet"), bytes);
    }
    let (lake, name) = (&s3.lake, "overwrite_partition");
    let uri = s3.url("nulls/overwrite_partition");
    lake.set_project(&project(s3.root(), "'x'", "'k'", &["code"]));
    run(lake, name, DAY1, false).assert_code(0);
    let reader = Reader::new(lake);
    assert_eq!(reader.schema(&uri), created(false));

    lake.set_project(&project(s3.root(), "CAST(NULL AS VARCHAR)", "'k'", &["code"]));
    run(lake, name, DAY2, false).assert_code(0);
    let read = reader.read(&uri);
    assert_eq!((read.version, read.rows), (1, orders(DAY1) + orders(DAY2)));

    lake.set_project(&project(s3.root(), "'x'", SOME_NULL, &["code"]));
    let expected = refusal(name, DAY1, even_orders(DAY1));
    for dry in [true, false] {
        assert_refused(&run(lake, name, DAY1, dry), &expected);
    }
    assert_eq!(reader.read(&uri).version, 1, "nothing committed");
}

#[test]
fn a_delete_when_added_or_removed_since_the_table_was_created_is_named_in_the_run_and_the_dry_run() {
    let lake = Lake::new(DAY1, DAY2);
    let project = |delete_when: bool| {
        let job = Job::merge("orders", "nulls.orders", &["order_id"], "created_at")
            .sql("SELECT order_id, created_at, status FROM raw.orders WHERE dt = $dt");
        Project::new().job(if delete_when { job.delete_when("status = 'cancelled'") } else { job })
    };
    let refused = |difference: &str| {
        format!(
            "orders dt={DAY2}: nulls.orders: the result does not match the table's schema: {difference}; the table's \
             columns do not change: recreate the table (drop it and backfill the job) or write a new target, {}; \
             nothing was committed",
            if difference.contains("was added") { "or take `delete_when` out" } else { "or put `delete_when` back" }
        )
    };
    let added = refused(
        "column `_deleted` (boolean) is not in the table: job `orders`'s `delete_when` was added since the table was \
         created without it (it marks deleted keys in `_deleted`)",
    );
    let removed = refused(
        "column `_deleted` (boolean) is missing from the result: the table was created by a job with `delete_when`, \
         which job `orders` no longer has (its tombstones are rows whose `_deleted` is true)",
    );
    for (first, then, expected) in [(false, true, added), (true, false, removed)] {
        let _ = std::fs::remove_dir_all(lake.root().join("nulls"));
        lake.set_project(&project(first));
        run(&lake, "orders", DAY1, false).assert_code(0);
        lake.set_project(&project(then));
        for dry in [true, false] {
            assert_refused(&run(&lake, "orders", DAY2, dry), &expected);
        }
    }
}
