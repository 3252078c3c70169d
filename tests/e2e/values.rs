//! Values as a Spark user writes them: decimal literals exact. Every case is read back by
//! lakewriter (`sql --json`) and by delta-rs Python (`reader.rs`) alike, and where it writes,
//! locally and on the S3 test server.

use serde_json::{Value, json};

use crate::pipeline::json_lines;
use crate::s3::S3;
use crate::sql::{local_root, report, rows, sorted, uri};
use crate::support::{Job, Lake, Project};

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
    let run = lake.cli(&["--json", "sql", "-e", query]);
    run.assert_code(0);
    json_lines(&run)
}

// C. Decimal literals.

/// Amounts 0.00 to 9.99 multiplied by 1.5 and stored as DECIMAL(10,2), rounded HALF_UP as Spark
/// rounds them (0.15 → 0.23), and 1.005 inserted as 1.01; a job's literals as exact.
fn exact_decimals(lake: &Lake, root: &str) {
    assert_eq!(select(lake, "SELECT arrow_typeof(1.005) AS t"), [json!({"t": "Decimal128(4, 3)"})]);
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
