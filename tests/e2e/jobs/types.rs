//! Column types: a result may have any Arrow type DataFusion produces that Delta can store. The
//! first run creates the table, and every later run — of any partition, in any mode — succeeds
//! and leaves the content digest as it was. A type Delta cannot store is refused before anything
//! is written, naming the column and a `CAST` that fixes it; a real change of a column (another
//! type after normalisation, a renamed or missing column) is still refused.

use crate::support::{Changes, Job, Lake, Project, Report, Run, Write, edited, orders};

const DAY1: &str = "2026-09-01";
const DAY2: &str = "2026-09-02";

/// One column of each type, as `(name, expression)` over `raw.orders o` (`$dt` is the partition).
/// The unsigned columns hold values above the signed maximum of their width, so that storing
/// them as the signed type of the same width cannot pass unnoticed.
const COLUMNS: &[(&str, &str)] = &[
    // Integers of every width, signed and unsigned.
    ("i8", "arrow_cast(order_id % 100, 'Int8')"),
    ("i16", "arrow_cast(order_id % 30000, 'Int16')"),
    ("i32", "arrow_cast(customer_id, 'Int32')"),
    ("i64", "customer_id"),
    ("u8", "arrow_cast(200 + order_id % 50, 'UInt8')"),
    ("u16", "arrow_cast(60000 + order_id % 1000, 'UInt16')"),
    ("u32", "arrow_cast(4000000000 + order_id % 1000, 'UInt32')"),
    ("u64", "arrow_cast(order_id, 'UInt64') + arrow_cast(9000000000000000000, 'UInt64')"),
    // Floats (Float16: see `a_float16_column_is_stored_or_refused_clearly`).
    ("f32", "arrow_cast(amount, 'Float32')"),
    ("f64", "CAST(amount AS DOUBLE)"),
    // Decimals of several precisions and scales, and of every Arrow width.
    ("dec_5_2", "CAST(amount % 100 AS DECIMAL(5, 2))"),
    ("dec_38_10", "CAST(amount AS DECIMAL(38, 10))"),
    ("dec_1_0", "arrow_cast(order_id % 10, 'Decimal128(1, 0)')"),
    ("dec256", "arrow_cast(amount, 'Decimal256(20, 2)')"),
    ("dec32", "arrow_cast(amount, 'Decimal32(9, 2)')"),
    ("dec64", "arrow_cast(amount, 'Decimal64(18, 2)')"),
    // Strings and binaries: plain, large, view, dictionary, fixed size.
    ("utf8", "arrow_cast(status, 'Utf8')"),
    ("large_utf8", "arrow_cast(status, 'LargeUtf8')"),
    ("utf8_view", "arrow_cast(status, 'Utf8View')"),
    ("dict_utf8", "arrow_cast(status, 'Dictionary(Int32, Utf8)')"),
    ("bin", "arrow_cast(status, 'Binary')"),
    ("large_bin", "arrow_cast(status, 'LargeBinary')"),
    ("bin_view", "arrow_cast(status, 'BinaryView')"),
    (
        "fixed_bin",
        "arrow_cast(arrow_cast(lpad(CAST(order_id % 10000 AS VARCHAR), 4, '0'), 'Binary'), 'FixedSizeBinary(4)')",
    ),
    ("flag", "status = 'cancelled'"),
    // Dates.
    ("date32", "CAST(created_at AS DATE)"),
    ("date64", "arrow_cast(CAST(created_at AS DATE), 'Date64')"),
    // Timestamps in every unit, without and with a time zone, UTC and not.
    ("ts_s", "arrow_cast(created_at, 'Timestamp(Second, None)')"),
    ("ts_ms", "arrow_cast(created_at, 'Timestamp(Millisecond, None)')"),
    ("ts_us", "arrow_cast(created_at, 'Timestamp(Microsecond, None)')"),
    ("ts_ns", "arrow_cast(created_at, 'Timestamp(Nanosecond, None)')"),
    ("ts_s_utc", "arrow_cast(created_at, 'Timestamp(Second, Some(\"UTC\"))')"),
    ("ts_ms_utc", "arrow_cast(created_at, 'Timestamp(Millisecond, Some(\"UTC\"))')"),
    ("ts_us_utc", "created_at"),
    ("ts_ns_utc", "arrow_cast(created_at, 'Timestamp(Nanosecond, Some(\"UTC\"))')"),
    ("ts_s_plus2", "arrow_cast(created_at, 'Timestamp(Second, Some(\"+02:00\"))')"),
    ("ts_ms_plus2", "arrow_cast(created_at, 'Timestamp(Millisecond, Some(\"+02:00\"))')"),
    ("ts_us_paris", "arrow_cast(created_at, 'Timestamp(Microsecond, Some(\"Europe/Paris\"))')"),
    ("ts_ns_paris", "arrow_cast(created_at, 'Timestamp(Nanosecond, Some(\"Europe/Paris\"))')"),
    ("to_ts", "to_timestamp(CAST(created_at AS VARCHAR))"),
    ("cast_ts", "CAST(created_at AS TIMESTAMP)"),
    // Lists: plain, large, fixed size, and from an aggregate.
    ("list_i64", "make_array(order_id, customer_id)"),
    ("list_str", "make_array(status, 'x')"),
    ("large_list", "arrow_cast(make_array(order_id, customer_id), 'LargeList(Int64)')"),
    ("fixed_list", "arrow_cast(make_array(order_id, customer_id), 'FixedSizeList(2, Int64)')"),
    (
        "agg_str",
        "(SELECT array_agg(o2.status ORDER BY o2.order_id) FROM raw.orders o2 \
         WHERE o2.dt = $dt AND o2.customer_id = o.customer_id)",
    ),
    // Structs and maps.
    ("st", "named_struct('status', status, 'amount', amount)"),
    ("map_str", "map(['status'], [status])"),
    ("map_i64", "MAP {'id': order_id}"),
    // Nesting.
    ("list_of_st", "make_array(named_struct('id', order_id, 'status', status))"),
    ("st_with_list", "named_struct('ids', make_array(order_id, customer_id), 'tag', status)"),
    ("map_of_lists", "map(['ids'], [make_array(order_id, customer_id)])"),
    ("list_of_ts", "make_array(CAST(created_at AS TIMESTAMP), to_timestamp(CAST(created_at AS VARCHAR)))"),
    ("list_of_ts_plus2", "make_array(arrow_cast(created_at, 'Timestamp(Millisecond, Some(\"+02:00\"))'))"),
    // Branches of two types: the column is the type both are coerced to (a BIGINT holding values
    // beyond an INT; a DECIMAL wide enough for the DOUBLE), never the first branch's.
    (
        "case_int_bigint",
        "CASE WHEN order_id % 2 = 0 THEN arrow_cast(customer_id, 'Int32') ELSE order_id + 10000000000 END",
    ),
    (
        "case_dec_double",
        "CASE WHEN order_id % 2 = 0 THEN CAST(amount AS DECIMAL(10, 2)) ELSE CAST(amount AS DOUBLE) END",
    ),
];

/// The key of the keyed modes: two orders per key, so that a batch has duplicate keys and the
/// second day's batch updates the first day's keys (the order ids of a day count up from a
/// multiple of 100,000).
const KEY: &str = "CAST(order_id % 1000 / 2 AS BIGINT)";

/// The matrix's SQL: a key `k`, `order_id`, one column per type and `dt`. `dt` is the partition:
/// `$dt`, a date literal, or `o.dt` for every day (rebuild).
fn matrix_sql(dt: &str) -> String {
    let columns: Vec<String> =
        COLUMNS.iter().map(|(name, expr)| format!("  {} AS {name},", expr.replace("$dt", dt))).collect();
    format!(
        "SELECT {KEY} AS k,\n  order_id,\n{}\n  {dt} AS dt\nFROM raw.orders o WHERE o.dt = {dt}",
        columns.join("\n")
    )
}

/// The orders of `day`, and the keys [`KEY`] among them: a day's order ids count up from a
/// multiple of 1,000, so the keys are 0 to (orders - 1) / 2.
fn orders_and_keys(day: &str) -> (u64, u64) {
    let orders = orders(day);
    (orders, orders.div_ceil(2))
}

/// What a keyed run reports of a batch of `orders` rows (`orders` - `keys` duplicates dropped).
fn changes(inserted: u64, updated: u64, unchanged: u64, (orders, keys): (u64, u64)) -> Changes {
    Changes { inserted, updated, deleted: 0, unchanged, duplicates_dropped: orders - keys }
}

fn table(name: &str) -> String {
    format!("types.{name}")
}

/// The jobs of [`MODES`] with a key.
const KEYED: [&str; 2] = ["merged", "append_dedup"];

/// The job of each mode, by name: it writes `types.NAME`, partitioned by `dt`.
const MODES: [&str; 6] = ["overwrite", "merged", "delete_insert", "append_dedup", "append", "rebuild"];

/// The job `mode` (one of [`MODES`]) with its write settings, running `sql`.
fn job(mode: &str, sql: impl Into<String>) -> Job {
    let write = match mode {
        "overwrite" => Write::OverwritePartition,
        "merged" => Write::merge(&["k"], "dt"),
        "delete_insert" => Write::delete_insert("dt = $dt"),
        "append_dedup" => Write::append_dedup(&["k"]),
        "append" => Write::Append,
        "rebuild" => Write::Rebuild,
        other => panic!("not a mode's job: {other}"),
    };
    // In DataFusion's dialect: `arrow_cast` and struct literals make every Arrow type.
    Job::with_write(mode, &table(mode), write).partition_by("dt").sql(sql).datafusion()
}

/// A lake with two days of raw orders and one job, `mode`, over `sql` (for `$dt`; `rebuild`
/// gets `sql` for every day).
fn lake_with(mode: &str, sql: impl Fn(&str) -> String) -> Lake {
    let lake = Lake::new(DAY1, DAY2);
    let sql = if mode == "rebuild" { sql("o.dt") } else { sql("$dt") };
    lake.set_project(&Project::new().job(job(mode, sql)));
    lake
}

/// Runs `job` for `day` (none: without `--dt`) and returns its report, failing on a non-zero exit.
#[track_caller]
fn run(lake: &Lake, job: &str, day: Option<&str>) -> Report {
    let run = run_json(lake, job, day);
    assert_eq!(run.code, 0, "{job} {day:?}: {}", first_error(&run));
    run.json().0.remove(0)
}

/// `lakewriter --json run JOB [--dt DAY]`.
fn run_json(lake: &Lake, job: &str, day: Option<&str>) -> Run {
    let mut args = vec!["--json", "run", job];
    if let Some(day) = day {
        args.extend(["--dt", day]);
    }
    lake.cli(&args)
}

/// The `error` of a run's first report, else its stderr.
fn first_error(run: &Run) -> String {
    run.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v.get("error").and_then(|e| e.as_str().map(str::to_owned)))
        .unwrap_or_else(|| run.stderr.clone())
}

/// Runs `job` for `day`, expecting it to fail with exit code 1; returns the report's error.
#[track_caller]
fn run_failing(lake: &Lake, job: &str, day: Option<&str>) -> String {
    let run = run_json(lake, job, day);
    run.assert_code(1);
    run.json().0.remove(0).error.expect("a failed run reports its error")
}

/// First day (creates the table), second day, first day again: every run succeeds, and the rerun
/// leaves the digest as it was. Returns the reports of the three runs.
fn run_run_rerun(mode: &str) -> [Report; 3] {
    let lake = lake_with(mode, matrix_sql);
    let ((n1, k1), (n2, k2)) = (orders_and_keys(DAY1), orders_and_keys(DAY2));
    // A row an order; a keyed mode keeps a row a key, of both days' keys.
    let (first_rows, table_rows) = if KEYED.contains(&mode) { (k1, k1.max(k2)) } else { (n1, n1 + n2) };
    let first = run(&lake, mode, Some(DAY1));
    assert_eq!((first.committed, first.rows_written), (true, Some(first_rows)), "{first:?}");
    assert_files_hold_logged_types(&lake, mode);
    let second = run(&lake, mode, Some(DAY2));
    let before = lake.digest(&table(mode), None);
    assert_eq!(before.rows, table_rows);
    let rerun = run(&lake, mode, Some(DAY1));
    let after = lake.digest(&table(mode), None);
    assert_eq!((&after.digest, after.rows), (&before.digest, before.rows), "{mode}: the rerun changed the table");
    match mode {
        "overwrite" | "delete_insert" => {
            assert_eq!(rerun.table_version, Some(before.version + 1), "{rerun:?}");
        }
        "merged" | "append_dedup" => {
            assert!(!rerun.committed, "{rerun:?}");
            assert_eq!(after.version, before.version, "no new version");
            // The first day's rows are older than the second's, or the same.
            assert_eq!(rerun.changes, Some(changes(0, 0, k1, (n1, k1))), "{rerun:?}");
        }
        "append" => {
            assert_eq!(rerun.status, "skipped", "{rerun:?}");
            assert_eq!(after.version, before.version, "no new version");
        }
        other => panic!("not a dated mode: {other}"),
    }
    [first, second, rerun]
}

#[test]
fn overwrite_partition_writes_every_type_and_reruns_unchanged() {
    run_run_rerun("overwrite");
}

#[test]
fn merge_writes_every_type_and_reruns_unchanged() {
    let [first, second, _] = run_run_rerun("merged");
    let (day1, day2) = (orders_and_keys(DAY1), orders_and_keys(DAY2));
    let (k1, k2) = (day1.1, day2.1);
    assert_eq!(first.changes, Some(changes(k1, 0, 0, day1)), "the batch was deduplicated over every column");
    // The second day's rows are newer: it updates every key the first day wrote, rows of every type.
    assert_eq!(second.changes, Some(changes(k2.saturating_sub(k1), k1.min(k2), 0, day2)));
}

#[test]
fn delete_insert_writes_every_type_and_reruns_unchanged() {
    run_run_rerun("delete_insert");
}

#[test]
fn append_dedup_writes_every_type_and_reruns_unchanged() {
    let [first, second, _] = run_run_rerun("append_dedup");
    let (day1, day2) = (orders_and_keys(DAY1), orders_and_keys(DAY2));
    let (k1, k2) = (day1.1, day2.1);
    assert_eq!(first.changes, Some(changes(k1, 0, 0, day1)), "the batch was deduplicated over every column");
    // Only the keys the first day did not write are new.
    assert_eq!(second.changes, Some(changes(k2.saturating_sub(k1), 0, k1.min(k2), day2)));
}

#[test]
fn append_writes_every_type_and_reruns_unchanged() {
    run_run_rerun("append");
}

#[test]
fn rebuild_writes_every_type_and_reruns_unchanged() {
    let lake = lake_with("rebuild", matrix_sql);
    let first = run(&lake, "rebuild", None);
    assert_eq!(first.rows_written, Some(orders(DAY1) + orders(DAY2)), "a row an order of every day: {first:?}");
    assert_files_hold_logged_types(&lake, "rebuild");
    let before = lake.digest(&table("rebuild"), None);
    let rerun = run(&lake, "rebuild", None);
    assert_eq!(rerun.table_version, Some(before.version + 1));
    let after = lake.digest(&table("rebuild"), None);
    assert_eq!((after.digest, after.rows), (before.digest, before.rows));
}

/// The Arrow type a Parquet file holds for a numeric Delta type (`None`: not numeric).
fn numeric_arrow_type(delta: &str) -> Option<String> {
    let simple = match delta {
        "byte" => "Int8",
        "short" => "Int16",
        "integer" => "Int32",
        "long" => "Int64",
        "float" => "Float32",
        "double" => "Float64",
        _ => {
            let (p, s) = delta.strip_prefix("decimal(")?.strip_suffix(')')?.split_once(',')?;
            return Some(format!("Decimal128({p}, {s})"));
        }
    };
    Some(simple.to_owned())
}

/// Every data file of `types.MODE` holds each numeric column as the type its Delta schema names:
/// a reader other than lakewriter's (delta-rs Python, Spark) reads the files by that schema, and
/// fails on a column the log calls `integer` whose file holds `Int64` values.
#[track_caller]
fn assert_files_hold_logged_types(lake: &Lake, mode: &str) {
    let dir = lake.root().join("types").join(mode);
    let schema = logged_schema(&dir);
    let mut files = Vec::new();
    parquet_files(&dir, &mut files);
    assert!(!files.is_empty(), "{mode}: no data files in {}", dir.display());
    for file in files {
        let reader = std::fs::File::open(&file).expect("a data file");
        let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(reader).expect("Parquet");
        let held = builder.schema();
        for (name, delta) in &schema {
            let (Some(expected), Ok(field)) = (numeric_arrow_type(delta), held.field_with_name(name)) else { continue };
            assert_eq!(
                format!("{}", field.data_type()),
                expected,
                "{mode}: column {name} is `{delta}` in the log, but {} holds another type",
                file.display()
            );
        }
    }
}

/// The columns of the table in `dir` as its last schema in the log names them: `(name, type)`
/// for the columns of a primitive type.
fn logged_schema(dir: &std::path::Path) -> Vec<(String, String)> {
    let fields = crate::support::logged_fields(dir);
    fields.iter().filter_map(|f| Some((f["name"].as_str()?.to_owned(), f["type"].as_str()?.to_owned()))).collect()
}

fn parquet_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a table folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() && !path.ends_with("_delta_log") {
            parquet_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "parquet") {
            out.push(path);
        }
    }
}

/// How each column's stored value is compared with the result's: both sides cast to this type.
/// Structs and maps are left to the digests.
fn comparable_as(name: &str) -> Option<&'static str> {
    Some(match name {
        "i8" | "i16" | "i32" | "i64" | "case_int_bigint" => "Int64",
        "u8" | "u16" | "u32" | "u64" => "Decimal128(20, 0)",
        "f32" | "f64" | "case_dec_double" => "Float64",
        n if n.starts_with("dec") => "Decimal128(38, 10)",
        "utf8" | "large_utf8" | "utf8_view" | "dict_utf8" => "Utf8",
        "bin" | "large_bin" | "bin_view" | "fixed_bin" => "Binary",
        "flag" => "Boolean",
        "date32" | "date64" => "Date32",
        "ts_s" | "ts_ms" | "ts_us" | "ts_ns" | "to_ts" | "cast_ts" => "Timestamp(Microsecond, None)",
        n if n.starts_with("ts_") => "Timestamp(Microsecond, Some(\"UTC\"))",
        "list_i64" | "large_list" | "fixed_list" => "List(Int64)",
        "list_str" | "agg_str" => "List(Utf8)",
        "list_of_ts" => "List(Timestamp(Microsecond, None))",
        "list_of_ts_plus2" => "List(Timestamp(Microsecond, Some(\"UTC\")))",
        _ => return None,
    })
}

/// A `rebuild` job `check` whose rows are the (order, column) pairs where `types.overwrite` holds
/// another value than the matrix computes for `DAY1`, partitioned by the column's name.
fn check_job() -> Job {
    let expected = matrix_sql(&format!("DATE '{DAY1}'"));
    let selects: Vec<String> = COLUMNS
        .iter()
        .filter_map(|(name, _)| comparable_as(name).map(|t| (name, t)))
        .map(|(name, t)| {
            format!(
                "SELECT w.order_id, '{name}' AS col FROM types.overwrite w JOIN e ON w.order_id = e.order_id \
                 WHERE arrow_cast(w.{name}, '{t}') IS DISTINCT FROM arrow_cast(e.{name}, '{t}')"
            )
        })
        .collect();
    let sql = format!("WITH e AS (\n{expected}\n)\n{}", selects.join("\nUNION ALL\n"));
    Job::rebuild("check", "types.check").partition_by("col").sql(sql).datafusion()
}

#[test]
fn the_stored_values_are_the_results_values() {
    let lake = lake_with("overwrite", matrix_sql);
    run(&lake, "overwrite", Some(DAY1));
    lake.set_project(&Project::new().job(job("overwrite", matrix_sql("$dt"))).job(check_job()));
    let check = run(&lake, "check", None);
    let mut wrong: Vec<String> = std::fs::read_dir(lake.root().join("types/check"))
        .expect("the check table")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_prefix("col=").map(str::to_owned))
        .collect();
    wrong.sort();
    assert!(wrong.is_empty(), "stored values differ from the result's in columns {wrong:?}");
    assert_eq!(check.rows_written, Some(0));
}

/// Types Delta cannot store, as `(column, expression, what the refusal says of the column)`.
const UNSTORABLE: &[(&str, &str, &str)] = &[
    (
        "time_us",
        "arrow_cast(created_at, 'Time64(Microsecond)')",
        "is Time64(µs): Delta has no time-of-day type; cast it, e.g. `CAST(x AS VARCHAR)`",
    ),
    (
        "time_lit",
        "CAST('10:00' AS TIME)",
        "is Time64(ns): Delta has no time-of-day type; cast it, e.g. `CAST(x AS VARCHAR)`",
    ),
    (
        "dur",
        "arrow_cast(order_id % 100, 'Duration(Second)')",
        "is Duration(s): Delta has no duration type; cast it to a number, e.g. `CAST(x AS BIGINT)`",
    ),
    ("ivl", "INTERVAL '1 day'", IVL),
    ("nothing", "NULL", "is Null: a bare NULL has no type; give it one, e.g. `CAST(NULL AS VARCHAR)`"),
    (
        "st_ivl",
        "named_struct('id', order_id, 'wait', INTERVAL '1 day')",
        "is Struct(\"id\": Int64, \"wait\": Interval(MonthDayNano)): Delta has no interval type; cast it, e.g. \
         `CAST(x AS VARCHAR)`",
    ),
];

/// What the refusal of the column `ivl` (`INTERVAL '1 day'`) says of it.
const IVL: &str = "is Interval(MonthDayNano): Delta has no interval type; cast it, e.g. `CAST(x AS VARCHAR)`";

/// How errors name the run of `job` for `day`: `JOB dt=DAY`, or `JOB (whole table)` without one.
fn label(job: &str, day: Option<&str>) -> String {
    day.map_or_else(|| format!("{job} (whole table)"), |day| format!("{job} dt={day}"))
}

/// The error of a run of `job` for `day` refused because Delta cannot store `column`, which
/// `refusal` describes.
fn unstorable(job: &str, day: Option<&str>, column: &str, refusal: &str) -> String {
    format!("{}: types.{job}: Delta cannot store column `{column}` {refusal}; nothing was written", label(job, day))
}

/// The error of a run of `job` for `day` whose result's schema differs from the table's.
fn schema_differs(job: &str, day: &str, difference: &str) -> String {
    format!(
        "{}: types.{job}: the result does not match the table's schema: {difference}; nothing was committed; {}",
        label(job, Some(day)),
        crate::support::schema_advice(job)
    )
}

fn with_column(column: &str, expr: &str) -> impl Fn(&str) -> String {
    let (column, expr) = (column.to_owned(), expr.to_owned());
    move |dt| {
        format!(
            "SELECT {KEY} AS k, order_id, amount, {expr} AS {column}, {dt} AS dt FROM raw.orders o WHERE o.dt = {dt}"
        )
    }
}

fn plain_sql(dt: &str) -> String {
    format!("SELECT {KEY} AS k, order_id, amount, {dt} AS dt FROM raw.orders o WHERE o.dt = {dt}")
}

fn day_of(mode: &str) -> Option<&'static str> {
    (mode != "rebuild").then_some(DAY1)
}

#[test]
fn unstorable_columns_are_refused_before_a_table_is_created() {
    let lake = Lake::new(DAY1, DAY2);
    let project = UNSTORABLE.iter().fold(Project::new(), |project, (column, expr, _)| {
        let name = format!("new_{column}");
        project.job(Job::new(&name, &table(&name)).sql(with_column(column, expr)("$dt")).datafusion())
    });
    lake.set_project(&project);
    for (column, _, refusal) in UNSTORABLE {
        let name = format!("new_{column}");
        let error = run_failing(&lake, &name, Some(DAY1));
        assert_eq!(error, unstorable(&name, Some(DAY1), column, refusal));
        assert!(!lake.root().join("types").join(&name).join("_delta_log").exists(), "{name}: a table was created");
    }
}

#[test]
fn unstorable_columns_are_refused_in_every_mode() {
    let lake = Lake::new(DAY1, DAY2);
    let (column, expr, refusal) = UNSTORABLE[0];
    let project = MODES.iter().fold(Project::new(), |project, mode| {
        let dt = if *mode == "rebuild" { "o.dt" } else { "$dt" };
        project.job(job(mode, with_column(column, expr)(dt)))
    });
    lake.set_project(&project);
    for mode in MODES {
        let error = run_failing(&lake, mode, day_of(mode));
        assert_eq!(error, unstorable(mode, day_of(mode), column, refusal));
        assert!(!lake.root().join("types").join(mode).join("_delta_log").exists(), "{mode}: a table was created");
    }
}

#[test]
fn an_unstorable_column_leaves_an_existing_table_unchanged() {
    // Every unstorable type against an overwrite_partition table, one against each other mode;
    // each run is of a new day, so that every mode has rows to write.
    let lake = Lake::new(DAY1, DAY2);
    let mut cases: Vec<(&str, &str, &str, &str)> =
        UNSTORABLE.iter().map(|(c, e, refusal)| ("overwrite", *c, *e, *refusal)).collect();
    cases.extend(MODES.iter().skip(1).map(|mode| (*mode, "ivl", "INTERVAL '1 day'", IVL)));
    let project = |bad: Option<(&str, &str)>| {
        MODES.iter().fold(Project::new(), |project, mode| {
            let dt = if *mode == "rebuild" { "o.dt" } else { "$dt" };
            let sql = match bad {
                Some((column, expr)) => with_column(column, expr)(dt),
                None => plain_sql(dt),
            };
            project.job(job(mode, sql))
        })
    };
    lake.set_project(&project(None));
    for mode in MODES {
        run(&lake, mode, day_of(mode));
    }
    for (mode, column, expr, refusal) in cases {
        let before = lake.digest(&table(mode), None);
        lake.set_project(&project(Some((column, expr))));
        let day = (mode != "rebuild").then_some(DAY2);
        let error = run_failing(&lake, mode, day);
        assert_eq!(error, unstorable(mode, day, column, refusal));
        assert_eq!(lake.digest(&table(mode), None), before, "{mode} {column}: the table changed");
    }
}

/// `(column, base expression, changed expression, the difference the refusal names)`: real
/// changes, whatever the normalisation.
const REAL_CHANGES: &[(&str, &str, &str, &str)] = &[
    ("n", "order_id", "CAST(order_id AS VARCHAR)", N_CHANGED),
    ("l", "make_array(order_id)", "make_array(CAST(order_id AS VARCHAR))", L_CHANGED),
    (
        "s",
        "named_struct('a', order_id, 'b', status)",
        "named_struct('a', order_id, 'c', status)",
        "column `s` is struct<a:long,b:string> in the table but struct<a:long,c:string> in the result",
    ),
    (
        "s2",
        "named_struct('a', order_id, 'b', status)",
        "named_struct('a', CAST(order_id AS VARCHAR), 'b', status)",
        "column `s2` is struct<a:long,b:string> in the table but struct<a:string,b:string> in the result",
    ),
    ("ts", "created_at", "CAST(created_at AS DATE)", "column `ts` is timestamp in the table but date in the result"),
    (
        "amt",
        "amount",
        "CAST(amount AS DECIMAL(12, 3))",
        "column `amt` is decimal(12,2) in the table but decimal(12,3) in the result",
    ),
    (
        "m",
        "MAP {'a': order_id}",
        "MAP {'a': CAST(order_id AS DOUBLE)}",
        "column `m` is map<string,long> in the table but map<string,double> in the result",
    ),
];

const N_CHANGED: &str = "column `n` is long in the table but string in the result";
const L_CHANGED: &str = "column `l` is array<long> in the table but array<string> in the result";

fn real_change_sql(changed: Option<&str>, dt: &str) -> String {
    let columns: Vec<String> = REAL_CHANGES
        .iter()
        .map(|(column, base, new, _)| format!("{} AS {column}", if changed == Some(*column) { new } else { base }))
        .collect();
    format!(
        "SELECT {KEY} AS k, order_id, {}, status AS extra, {dt} AS dt FROM raw.orders o WHERE o.dt = {dt}",
        columns.join(", ")
    )
}

#[test]
fn a_real_change_of_a_column_is_refused_and_changes_nothing() {
    let lake = lake_with("overwrite", |dt| real_change_sql(None, dt));
    run(&lake, "overwrite", Some(DAY1));
    let before = lake.digest(&table("overwrite"), None);
    let changed_job = |sql: &str| lake.set_project(&Project::new().job(job("overwrite", sql)));
    let mut cases: Vec<(String, &str)> = REAL_CHANGES
        .iter()
        .map(|(column, _, _, difference)| (real_change_sql(Some(column), "$dt"), *difference))
        .collect();
    let base = real_change_sql(None, "$dt");
    cases.push((edited(&base, ", status AS extra", ""), "column `extra` (string) is missing from the result"));
    cases.push((
        edited(&base, "status AS extra", "status AS extra_renamed"),
        "column `extra` (string) is missing from the result and `extra_renamed` (string) in its place is not in the \
         table: it looks like a rename; a table's columns keep their names, so name it `extra` again (`… AS \
         extra`), or give the new name a new table (a rebuild, or a new target)",
    ));
    cases.push((
        edited(&base, "status AS extra", "order_id AS extra_renamed"),
        "column `extra` (string) is missing from the result; column `extra_renamed` (long) is not in the table",
    ));
    for (sql, difference) in cases {
        changed_job(&sql);
        let error = run_failing(&lake, "overwrite", Some(DAY1));
        assert_eq!(error, schema_differs("overwrite", DAY1, difference));
        assert_eq!(lake.digest(&table("overwrite"), None), before, "{difference}: the table changed");
    }
}

#[test]
fn a_real_change_is_refused_in_every_mode() {
    let lake = Lake::new(DAY1, DAY2);
    let dated = || MODES.into_iter().filter(|m| *m != "rebuild");
    let project = |changed: Option<&str>| {
        dated().fold(Project::new(), |project, mode| project.job(job(mode, real_change_sql(changed, "$dt"))))
    };
    lake.set_project(&project(None));
    for mode in dated() {
        run(&lake, mode, Some(DAY1));
    }
    for (changed, difference) in [("n", N_CHANGED), ("l", L_CHANGED)] {
        lake.set_project(&project(Some(changed)));
        for mode in dated() {
            let before = lake.digest(&table(mode), None);
            let error = run_failing(&lake, mode, Some(DAY2));
            assert_eq!(error, schema_differs(mode, DAY2, difference));
            assert_eq!(lake.digest(&table(mode), None), before, "{mode} {changed}: the table changed");
        }
    }
}

/// Writes the single column `(column, expr)` with `overwrite_partition`: it is stored, a second
/// day and a rerun succeed with an unchanged digest, and the stored values compare equal, as
/// `comparable`, to the result's.
fn assert_stored_exactly(column: &str, expr: &str, comparable: &str) {
    let lake = lake_with("overwrite", with_column(column, expr));
    run(&lake, "overwrite", Some(DAY1));
    run(&lake, "overwrite", Some(DAY2));
    let before = lake.digest(&table("overwrite"), None);
    run(&lake, "overwrite", Some(DAY1));
    let after = lake.digest(&table("overwrite"), None);
    assert_eq!((after.digest, after.rows), (before.digest, before.rows));
    let expected = with_column(column, expr)(&format!("DATE '{DAY1}'"));
    let check = format!(
        "WITH e AS ({expected}) SELECT w.order_id, '{column}' AS col FROM types.overwrite w \
         JOIN e ON w.order_id = e.order_id \
         WHERE arrow_cast(w.{column}, '{comparable}') IS DISTINCT FROM arrow_cast(e.{column}, '{comparable}')"
    );
    let overwrite = job("overwrite", with_column(column, expr)("$dt"));
    lake.set_project(&Project::new().job(overwrite).job(Job::rebuild("check", "types.check").sql(check).datafusion()));
    let check = run(&lake, "check", None);
    assert_eq!(check.rows_written, Some(0), "stored values of `{column}` differ from the result's");
}

/// Float16 (`arrow_cast(x, 'Float16')`) has no Delta type of its own; Float (32 bits) holds it
/// exactly, and it is stored so.
#[test]
fn a_float16_column_is_stored_exactly() {
    assert_stored_exactly("half", "arrow_cast(amount % 100, 'Float16')", "Float64");
}

/// A UInt64 above the greatest Delta LONG is refused while the result is written, naming its
/// first such value and a `CAST` that keeps it — never wrapped around into a negative LONG — and
/// no table is created.
#[test]
fn a_uint64_above_the_greatest_long_is_refused_clearly() {
    let lake = lake_with(
        "overwrite",
        with_column("big", "arrow_cast(order_id, 'UInt64') + arrow_cast(18000000000000000000, 'UInt64')"),
    );
    let orders = lakewriter_datagen::orders_for(crate::support::day(DAY1));
    let order_ids = orders.column_by_name("order_id").expect("order_id");
    let first = order_ids.as_any().downcast_ref::<arrow::array::Int64Array>().expect("Int64 order ids").value(0);
    let big = 18_000_000_000_000_000_000_u64 + u64::try_from(first).expect("a positive order id");
    let error = run_failing(&lake, "overwrite", Some(DAY1));
    assert_eq!(
        error,
        format!(
            "overwrite dt={DAY1}: types.overwrite: writing dt={DAY1} failed; nothing was committed: Execution \
             error: column `big` holds {big}, above the greatest BIGINT (2^63 - 1) that Delta stores; cast it, e.g. \
             `CAST(big AS DECIMAL(20, 0))`"
        )
    );
    assert!(!lake.root().join("types/overwrite/_delta_log").exists(), "a table was created");
}

/// A `merge` or `append_dedup` rerun whose rows are all known changes no row, but its result's
/// schema still has to match the table's: a changed column is refused, not recorded as the
/// partition's new state.
#[test]
fn a_real_change_is_refused_even_when_a_keyed_rerun_changes_no_row() {
    let lake = Lake::new(DAY1, DAY2);
    let keyed = ["merged", "append_dedup"];
    let project = |changed: Option<&str>| {
        keyed.iter().fold(Project::new(), |project, mode| project.job(job(mode, real_change_sql(changed, "$dt"))))
    };
    lake.set_project(&project(None));
    for mode in keyed {
        run(&lake, mode, Some(DAY1));
    }
    lake.set_project(&project(Some("n")));
    for mode in keyed {
        let before = lake.digest(&table(mode), None);
        let error = run_failing(&lake, mode, Some(DAY1));
        assert_eq!(error, schema_differs(mode, DAY1, N_CHANGED));
        assert_eq!(lake.digest(&table(mode), None), before, "{mode}: the table changed");
    }
}
