//! Values as a Spark user writes them: decimal literals exact, a static partition value checked
//! against its column's type, an empty partition string written and read as NULL (the Delta
//! protocol's reading). Every case is read back by lakewriter (`sql --json`) and by delta-rs
//! Python (`reader.rs`) alike, and where it writes, locally and on the S3 test server.

use serde_json::{Value, json};

use crate::support::json_lines;
use crate::support::s3::S3;
use crate::support::sql::{local_root, query_rows, report, rows, sorted, sql, sql_json, uri};
use crate::support::{Job, Lake, Project, Write};

const DAY: &str = "2026-01-01";

/// A lakehouse with `project` and nothing else.
fn local(project: &Project) -> Lake {
    let lake = Lake::empty(&[]);
    lake.set_project(project);
    lake
}

/// An S3 lakehouse with `project` (whose root the environment sets).
fn on_s3(name: &str, project: &Project) -> S3 {
    let s3 = S3::new(name);
    s3.lake.set_project(project);
    s3
}

/// The rows of `query` as `lakewriter --json sql` prints them.
fn select(lake: &Lake, query: &str) -> Vec<Value> {
    query_rows(&sql_json(lake, query, &[]), 1)
}

// A. Static partition values.

/// Creates `s.d` (partitioned by a DATE) and `s.n` (by an INT); refuses a static value of
/// another type for each, writing nothing; takes a string that reads as an INT.
fn static_values(lake: &Lake, root: &str) {
    report(lake, "INSERT OVERWRITE TABLE s.d PARTITION (dt = '2026-01-01') SELECT 1 AS id", &[]);
    report(lake, "INSERT OVERWRITE TABLE s.n PARTITION (n = CAST(1 AS INT)) SELECT 1 AS id", &[]);
    let (dates, numbers) = (uri(root, "s/d"), uri(root, "s/n"));
    let state = || (rows(lake, &dates), rows(lake, &numbers), lake.digest("s.d", None), lake.digest("s.n", None));
    let before = state();
    let date = "`dt` is a date column";
    let refused = [
        (
            "s.d PARTITION (dt = 20260101)",
            format!("{date}: an integer is not assignable to a date, as in Spark: write the date as 'YYYY-MM-DD'"),
        ),
        ("s.d PARTITION (dt = '2026-02-30')", format!("{date}: '2026-02-30' is not a date: write it as 'YYYY-MM-DD'")),
        (
            "s.d PARTITION (dt = '2026-01-02 10:00:00')",
            format!("{date}: '2026-01-02 10:00:00' is not a date: write it as 'YYYY-MM-DD'"),
        ),
        ("s.d PARTITION (dt = 'tomorrow')", format!("{date}: 'tomorrow' is not a date: write it as 'YYYY-MM-DD'")),
        ("s.n PARTITION (n = 'ten')", "`n` is an integer column: 'ten' does not read as an integer".to_owned()),
        (
            "s.n PARTITION (n = 3000000000)",
            "`n` is an integer column: 3000000000 is out of the range of an integer".to_owned(),
        ),
    ];
    for (target, cause) in refused {
        let statement = format!("INSERT OVERWRITE TABLE {target} SELECT 2 AS id");
        let run = sql(lake, &["-e", &statement]);
        run.assert_code(2);
        let partition = &target[target.find("PARTITION").expect("a PARTITION clause")..];
        let cause = format!("  caused by: {partition}: {cause}");
        assert_eq!(run.error_lines().last(), Some(&cause.as_str()), "{statement}:\n{}", run.stderr);
    }
    assert_eq!(state(), before, "nothing written");
    assert_eq!(rows(lake, &dates), [json!({"id": 1, "dt": "2026-01-01"})]);
    assert_eq!(select(lake, "SELECT id, CAST(dt AS VARCHAR) AS dt FROM s.d"), [json!({"id": 1, "dt": "2026-01-01"})]);

    report(lake, "INSERT OVERWRITE TABLE s.n PARTITION (n = '7') SELECT 2 AS id", &[]);
    let expected = [json!({"id": 1, "n": 1}), json!({"id": 2, "n": 7})];
    assert_eq!(rows(lake, &numbers), expected);
    assert_eq!(select(lake, "SELECT id, n FROM s.n ORDER BY id"), expected);
}

#[test]
fn a_static_partition_value_of_another_type_is_refused_as_spark_refuses_it() {
    let lake = local(&Project::new());
    static_values(&lake, &local_root(&lake));
}

#[test]
fn a_static_partition_value_of_another_type_is_refused_on_s3() {
    let s3 = on_s3("values-static", &Project::new());
    static_values(&s3.lake, s3.root());
}

// B. Empty partition strings.

/// Asserts that delta-rs Python and lakewriter both read the rows `expected` (id, r) from `table`
/// (other columns aside).
#[track_caller]
fn agree(lake: &Lake, root: &str, table: &str, expected: &[(i64, Option<&str>)]) {
    let expected = sorted(expected.iter().map(|(id, r)| json!({"id": id, "r": r})).collect());
    let id_and_r = |row: &Value| json!({"id": row["id"], "r": row["r"]});
    let read = rows(lake, &uri(root, &table.replace('.', "/")));
    assert_eq!(sorted(read.iter().map(id_and_r).collect()), expected, "delta-rs Python reads {table}");
    let query = format!("SELECT id, CASE WHEN r IS NULL THEN 'NULL' ELSE '''' || r || '''' END AS r FROM {table}");
    let shown = |r: Option<&str>| r.map_or_else(|| "NULL".to_owned(), |r| format!("'{r}'"));
    let expected: Vec<Value> =
        expected.iter().map(|row| json!({"id": row["id"], "r": shown(row["r"].as_str())})).collect();
    assert_eq!(sorted(select(lake, &query)), sorted(expected), "lakewriter reads {table}");
}

/// Every statement that writes a partition value: a static `''`, a dynamic one (run twice,
/// the second time changing nothing), an append, an UPDATE and a MERGE; then a DELETE of the
/// NULL partition.
fn empty_strings_in_statements(lake: &Lake, root: &str) {
    let line = report(lake, "INSERT OVERWRITE TABLE s.e PARTITION (r = '') SELECT 1 AS id", &[]);
    assert_eq!(line["partitions"], json!(["r=NULL"]));
    agree(lake, root, "s.e", &[(1, None)]);
    let dynamic = "INSERT OVERWRITE TABLE s.e PARTITION (r) SELECT id, r FROM (VALUES (2, ''), (3, 'a')) AS v(id, r)";
    let line = report(lake, dynamic, &[]);
    assert_eq!(line["partitions"], json!(["r=NULL", "r=a"]));
    agree(lake, root, "s.e", &[(2, None), (3, Some("a"))]);
    let before = lake.digest("s.e", None);
    report(lake, dynamic, &[]);
    assert_eq!(lake.digest("s.e", None).digest, before.digest, "the same rows");

    report(lake, "INSERT INTO s.e SELECT 4 AS id, '' AS r", &[]);
    report(lake, "UPDATE s.e SET r = '' WHERE id = 3", &[]);
    let merge = "MERGE INTO s.e AS t USING (SELECT id, r FROM (VALUES (5, ''), (2, 'b')) AS v(id, r)) AS s \
        ON t.id = s.id WHEN MATCHED THEN UPDATE SET r = s.r WHEN NOT MATCHED THEN INSERT *";
    report(lake, merge, &[]);
    agree(lake, root, "s.e", &[(2, Some("b")), (3, None), (4, None), (5, None)]);
    report(lake, "DELETE FROM s.e WHERE r IS NULL", &[]);
    agree(lake, root, "s.e", &[(2, Some("b"))]);
}

/// A job of each mode whose table is partitioned by a string column (all but
/// `overwrite_partition`, whose partition column is its date), each writing `''` into it.
fn partitioned_by_a_string() -> Project {
    let sql = "SELECT id, r, 1 AS v FROM (VALUES (1, ''), (2, 'a')) AS t(id, r)";
    let modes = [
        ("delete_insert", Write::delete_insert("id > 0")),
        ("merge", Write::merge(&["id"], "v")),
        ("append_dedup", Write::append_dedup(&["id"])),
        ("append", Write::Append),
        ("rebuild", Write::Rebuild),
    ];
    modes.into_iter().fold(Project::new(), |project, (name, write)| {
        project.job(Job::with_write(name, &format!("s.{name}"), write).sql(sql).partition_by("r"))
    })
}

/// Each job run twice (the second run changing no row), then the NULL partition deleted.
fn empty_strings_in_jobs(lake: &Lake, root: &str) {
    for job in ["delete_insert", "merge", "append_dedup", "append", "rebuild"] {
        let table = format!("s.{job}");
        let run: &[&str] = if job == "rebuild" { &["run", job] } else { &["run", job, "--dt", DAY] };
        lake.cli(run).assert_code(0);
        agree(lake, root, &table, &[(1, None), (2, Some("a"))]);
        let before = lake.digest(&table, None);
        lake.cli(run).assert_code(0);
        assert_eq!(lake.digest(&table, None).digest, before.digest, "{job}: the same rows");
        report(lake, &format!("DELETE FROM {table} WHERE r IS NULL"), &[]);
        agree(lake, root, &table, &[(2, Some("a"))]);
    }
}

#[test]
fn an_empty_partition_string_is_written_and_read_as_null() {
    let lake = local(&partitioned_by_a_string());
    empty_strings_in_statements(&lake, &local_root(&lake));
    empty_strings_in_jobs(&lake, &local_root(&lake));
}

#[test]
fn an_empty_partition_string_is_written_and_read_as_null_on_s3() {
    let s3 = on_s3("values-empty", &partitioned_by_a_string());
    empty_strings_in_statements(&s3.lake, s3.root());
    empty_strings_in_jobs(&s3.lake, s3.root());
}

// C. Decimal literals.

/// Amounts 0.00 to 9.99 multiplied by 1.5 and stored as DECIMAL(10,2), rounded HALF_UP as Spark
/// rounds them (0.15 → 0.23), and 1.005 inserted as 1.01; a job's literals as exact.
fn exact_decimals(lake: &Lake, root: &str) {
    assert_eq!(select(lake, "SELECT typeof(1.005) AS t"), [json!({"t": "decimal(4,3)"})]);
    report(
        lake,
        "INSERT OVERWRITE TABLE s.m SELECT CAST(value AS INT) AS id, \
         CAST(CAST(value AS DECIMAL(10,2)) / 100 AS DECIMAL(10,2)) AS amt FROM generate_series(0, 999)",
        &[],
    );
    report(lake, "UPDATE s.m SET amt = amt * 1.5", &[]);
    report(lake, "INSERT INTO s.m VALUES (1000, 1.005)", &[]);
    let cents = |c: i64| format!("{}.{:02}", c / 100, c % 100);
    let mut expected: Vec<Value> = (0..1000).map(|c| json!({"id": c, "amt": cents((3 * c + 1) / 2)})).collect();
    expected.push(json!({"id": 1000, "amt": "1.01"}));
    let expected = sorted(expected);
    same_rows(&rows(lake, &uri(root, "s/m")), &expected, "delta-rs Python");
    same_rows(&sorted(select(lake, "SELECT id, CAST(amt AS VARCHAR) AS amt FROM s.m")), &expected, "lakewriter");

    lake.cli(&["run", "literals"]).assert_code(0);
    let expected = [json!({"a": "0.23", "b": "1.005"})];
    assert_eq!(rows(lake, &uri(root, "s/literals")), expected);
    assert_eq!(select(lake, "SELECT CAST(a AS VARCHAR) AS a, CAST(b AS VARCHAR) AS b FROM s.literals"), expected);
}

/// Asserts that `read` (sorted) is `expected`, showing the first rows that differ.
#[track_caller]
fn same_rows(read: &[Value], expected: &[Value], reader: &str) {
    let differ: Vec<(&Value, &Value)> = read.iter().zip(expected).filter(|(r, e)| r != e).take(5).collect();
    assert!(read.len() == expected.len() && differ.is_empty(), "{reader} read (row, expected): {differ:?}");
}

fn literals() -> Project {
    let sql = "SELECT CAST(0.15 * 1.5 AS DECIMAL(10,2)) AS a, 1.005 AS b";
    Project::new().job(Job::rebuild("literals", "s.literals").sql(sql))
}

#[test]
fn decimal_literals_are_exact_and_stored_as_spark_rounds_them() {
    let lake = local(&literals());
    exact_decimals(&lake, &local_root(&lake));
}

#[test]
fn decimal_literals_are_exact_on_s3() {
    let s3 = on_s3("values-decimal", &literals());
    exact_decimals(&s3.lake, s3.root());
}

/// The state of `job`'s day [`DAY`]: `state` and its reasons.
fn day_state(lake: &Lake, job: &str) -> String {
    let run = lake.cli(&["--json", "status", job, "--from", DAY, "--to", DAY]);
    run.assert_code(0);
    let line = json_lines(&run).into_iter().find(|l| l.get("partition").is_some()).expect("the day's line");
    format!("{} {}", line["state"], line["reasons"])
}

/// A day written before decimal literals were exact — as the release before recorded it, with
/// the code fingerprint of the SQL and settings alone — reads as stale, and is run again once.
#[test]
fn a_day_written_with_float_literals_reads_as_stale_once() {
    let sql = "SELECT $dt AS dt, 1.005 AS b";
    let lake = local(&Project::new().job(Job::new("literal", "s.literal").sql(sql)));
    lake.cli(&["run", "literal", "--dt", DAY]).assert_code(0);
    assert_eq!(day_state(&lake, "literal"), r#""fresh" []"#);

    let text = std::fs::read_to_string(lake.project_file()).expect("project file");
    let project = lakewriter_core::Project::parse(&text, &lake.project_file()).expect("project");
    let spec = project.job("literal").expect("job");
    let folded: Vec<&str> = sql.split_whitespace().collect();
    let settings = format!("{}|{:?}|{:?}", spec.target, spec.partition_by, spec.write);
    let old = lakewriter_core::stable_hash(format!("{}\n{settings}", folded.join(" ")).as_bytes());
    let log = lake.root().join("s/literal/_delta_log/00000000000000000000.json");
    let commit = std::fs::read_to_string(&log).expect("commit");
    let new =
        lake.commit_info("s/literal", 0)["lakewriter"]["code_fingerprint"].as_str().expect("fingerprint").to_owned();
    let version = |fp: &str| i64::from_str_radix(&fp[..15], 16).expect("hex").to_string();
    assert_ne!(new, old, "the code fingerprint differs from the one before exact decimal literals");
    let (version_new, version_old) =
        (format!("\"version\":{}", version(&new)), format!("\"version\":{}", version(&old)));
    let rewritten = commit.replace(&new, &old).replace(&version_new, &version_old);
    std::fs::write(&log, rewritten).expect("rewrite commit");

    assert_eq!(day_state(&lake, "literal"), r#""stale" ["code_changed"]"#);
    let backfill = lake.cli(&["--json", "backfill", "literal", "--only", "stale", "--from", DAY, "--to", DAY]);
    backfill.assert_code(0);
    let ran = json_lines(&backfill).iter().filter(|l| l.get("partition").is_some()).count();
    assert_eq!(ran, 1, "{}", backfill.stdout);
    assert_eq!(day_state(&lake, "literal"), r#""fresh" []"#);
    assert_eq!(rows(&lake, &uri(&local_root(&lake), "s/literal")), [json!({"dt": DAY, "b": "1.005"})]);
}
