//! String partition values whose folder names and log paths need encoding — a space, `%`, `/`,
//! `=`, `#`, a non-ASCII letter, an emoji — and `''`, which is written as NULL (Spark's reading),
//! in the tables of `merge`, `append_dedup`, `append`, `delete_insert` and `rebuild`, locally and
//! on S3: each day run and run again (the content digest unchanged), verified (locally: `verify`
//! copies a table to a local folder), maintained
//! (compaction, vacuum) and run again, its rows read alike by delta-rs Python, its partition
//! folders named as delta-rs names them. And the other way: a table Spark wrote and one delta-rs
//! wrote, each written into by a keyed job, maintained and read back.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::maintain::maintain;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::sql::{local_root, rows, sorted, uri};
use crate::support::{Job, Lake, Project, Write};

/// The partition values, `id` 1 to 9 in this order.
const VALUES: [&str; 9] = ["us ", "50%", "a/b", "k=v", "#1", "ï", "😀", "", "eu"];
const DAYS: [&str; 2] = ["2026-09-01", "2026-09-02"];
const MODES: [&str; 5] = ["merge", "append_dedup", "append", "delete_insert", "rebuild"];

/// The day of the month of `$dt`, as a BIGINT.
const DAY_OF_MONTH: &str = "CAST(date_part('day', $dt) AS BIGINT)";

/// `VALUES` as a query's table `t(id, region)`.
fn values() -> String {
    let rows: Vec<String> = VALUES.iter().enumerate().map(|(i, v)| format!("({}, '{v}')", i + 1)).collect();
    format!("(VALUES {}) AS t(id, region)", rows.join(", "))
}

/// A value as the table holds it: `''` as NULL.
fn region(value: &str) -> Value {
    if value.is_empty() { Value::Null } else { json!(value) }
}

/// A job per mode, named after it, writing `s.<mode>` partitioned by `region`: every value each
/// day, as new rows (`append_dedup`, `append`, `delete_insert`) or newer ones (`merge`).
fn project() -> Project {
    let values = values();
    let dated = format!("SELECT id, region, $dt AS d FROM {values}");
    let jobs = [
        Job::with_write("merge", "s.merge", Write::merge(&["id"], "v"))
            .sql(format!("SELECT id, region, {DAY_OF_MONTH} AS v FROM {values}")),
        Job::with_write("append_dedup", "s.append_dedup", Write::append_dedup(&["id"]))
            .sql(format!("SELECT id * 100 + {DAY_OF_MONTH} AS id, region FROM {values}")),
        Job::with_write("append", "s.append", Write::Append).sql(dated.clone()),
        Job::with_write("delete_insert", "s.delete_insert", Write::delete_insert("d = $dt")).sql(dated),
        Job::with_write("rebuild", "s.rebuild", Write::Rebuild).sql(format!("SELECT id, region FROM {values}")),
    ];
    jobs.into_iter().fold(Project::new(), |project, job| project.job(job.partition_by("region")))
}

/// The rows of `mode`'s table after both days, as delta-rs Python reads them.
fn expected(mode: &str) -> Vec<Value> {
    let day = |d: &str| d[8..].parse::<i64>().expect("a day of the month");
    let mut rows = Vec::new();
    for (i, value) in (1..).zip(VALUES) {
        match mode {
            "merge" => rows.push(json!({"id": i, "region": region(value), "v": 2})),
            "rebuild" => rows.push(json!({"id": i, "region": region(value)})),
            "append_dedup" => rows.extend(DAYS.map(|d| json!({"id": i * 100 + day(d), "region": region(value)}))),
            _ => rows.extend(DAYS.map(|d| json!({"id": i, "region": region(value), "d": d}))),
        }
    }
    sorted(rows)
}

/// A table's content: lakewriter's digest and rows (not its version).
fn content(lake: &Lake, table: &str) -> (String, u64) {
    let digest = lake.digest(table, None);
    (digest.digest, digest.rows)
}

/// Runs `args` (`run JOB [--dt DAY]`), then again: the second run changes nothing. Each run's
/// report, and `status`, name its partition by its day (`dt=DAY`), whatever the table is
/// partitioned by (`region`), and `status` reads the day fresh.
#[track_caller]
fn run_twice(lake: &Lake, table: &str, args: &[&str]) {
    let day = args.iter().position(|&a| a == "--dt").map(|i| args[i + 1]);
    let label = day.map_or_else(|| "all".to_owned(), |d| format!("dt={d}"));
    let run = |expect: &str| {
        let (reports, _) = lake.cli(&[&["--json"][..], args].concat()).assert_code(0).json();
        let labels: Vec<&str> = reports.iter().map(|r| r.partition.as_str()).collect();
        assert_eq!(labels, [label.as_str()], "{args:?}: {expect}");
    };
    run("the first run");
    let written = content(lake, table);
    run("the run again");
    assert_eq!(content(lake, table), written, "{args:?} again changes nothing");
    if let Some(day) = day {
        let status = lake.status(&[args[1], "--from", day, "--to", day]);
        let shown: Vec<(&str, &str)> =
            status.partitions.iter().map(|p| (p.partition.as_str(), p.state.as_str())).collect();
        assert_eq!(shown, [(label.as_str(), "fresh")], "{args:?}: status");
    }
}

/// Maintains `job`'s table (no retention): its content unchanged, its rows read alike; whether it
/// compacted.
#[track_caller]
fn maintained(lake: &Lake, job: &str, table: &str, dir: &str, expected: &[Value]) -> bool {
    let before = content(lake, table);
    let steps = maintain(lake, &[job, "--retention", "0h", "--force"]);
    assert_eq!(content(lake, table), before, "{job}: maintenance changes no row");
    assert_eq!(rows(lake, dir), expected, "{job}: delta-rs Python reads the rows after maintenance");
    // Spark's checksum files (`.part-….crc`) are hidden files, which no vacuum deletes.
    let left: Vec<String> = Reader::new(lake).unreferenced(dir).into_iter().filter(|f| !f.contains("/.")).collect();
    assert!(left.is_empty(), "{job}: vacuum left unreferenced files: {left:?}");
    steps.iter().any(|s| s.step == "compact" && s.committed)
}

/// Runs `lakewriter verify ARGS…` where the lakehouse is local (verify copies the table to a
/// local scratch folder): it passes.
#[track_caller]
fn verify(lake: &Lake, root: &str, args: &[&str]) {
    if !root.starts_with("s3://") {
        lake.cli(&[&["verify"][..], args].concat()).assert_code(0);
    }
}

/// Each mode's job over both days: run twice, day 1 again after day 2 (keyed modes), verified,
/// read by delta-rs Python, maintained, run again; each table's partition folders named as
/// delta-rs names them.
fn every_mode(lake: &Lake, root: &str) {
    for mode in MODES {
        let (table, dir) = (format!("s.{mode}"), uri(root, &format!("s/{mode}")));
        let runs: Vec<Vec<&str>> = match mode {
            "rebuild" => vec![vec!["run", mode]],
            _ => DAYS.iter().map(|&d| vec!["run", mode, "--dt", d]).collect(),
        };
        for run in &runs {
            run_twice(lake, &table, run);
        }
        if matches!(mode, "merge" | "append_dedup") {
            run_twice(lake, &table, &runs[0]);
        }
        let last = &runs[runs.len() - 1];
        verify(lake, root, &last[1..]);
        assert_eq!(rows(lake, &dir), expected(mode), "{mode}: delta-rs Python reads the rows");
        let compacted = maintained(lake, mode, &table, &dir, &expected(mode));
        assert_eq!(compacted, matches!(mode, "append_dedup" | "append" | "delete_insert"), "{mode}: compacted");
        run_twice(lake, &table, last);
        verify(lake, root, &last[1..]);
    }
    same_folders_as_delta_rs(lake, root);
}

/// The partition folders of `table_dir` (`schema/table`) in the tree of a lakehouse root.
fn folders(tree: &[(String, u64, String, String)], table_dir: &str) -> BTreeSet<String> {
    let prefix = format!("{table_dir}/");
    tree.iter()
        .filter_map(|(path, ..)| path.strip_prefix(&prefix)?.split_once('/').map(|(folder, _)| folder.to_owned()))
        .filter(|folder| folder != "_delta_log")
        .collect()
}

/// delta-rs Python's write of the same values names the same partition folders as lakewriter's
/// tables have — but for `''`, which delta-rs writes as a value of its own (`region=`) and
/// lakewriter as NULL.
fn same_folders_as_delta_rs(lake: &Lake, root: &str) {
    let lines: Vec<String> = (1..).zip(VALUES).map(|(i, v)| json!({"id": i, "region": v}).to_string()).collect();
    let reader = Reader::new(lake);
    reader.write(&uri(root, "s/delta_rs"), "region", &lines.join("\n"));
    let tree = reader.tree(root);
    let by_delta_rs: BTreeSet<String> = folders(&tree, "s/delta_rs")
        .into_iter()
        .map(|f| if f == "region=" { "region=__HIVE_DEFAULT_PARTITION__".to_owned() } else { f })
        .collect();
    assert_eq!(by_delta_rs.len(), VALUES.len(), "{by_delta_rs:?}");
    assert!(by_delta_rs.contains("region=%C3%AF") && by_delta_rs.contains("region=a%2Fb"), "{by_delta_rs:?}");
    for mode in MODES {
        assert_eq!(folders(&tree, &format!("s/{mode}")), by_delta_rs, "{mode}'s partition folders");
    }
}

#[test]
fn partition_values_that_need_encoding_run_again_verify_and_maintain_in_every_mode() {
    let lake = Lake::empty(&[]);
    lake.set_project(&project());
    every_mode(&lake, &local_root(&lake));
}

#[test]
fn partition_values_that_need_encoding_run_again_and_maintain_on_s3() {
    let s3 = S3::new("partition-values");
    s3.lake.set_project(&project());
    every_mode(&s3.lake, s3.root());
}

// The other way: tables other writers made.

/// The Spark table of `data/delta/spark-special-partition` (`x` STRING partition, `y` BIGINT:
/// `A/A` 1, `B B` 2), its files as `(relative path, bytes)`.
fn spark_table() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/delta/spark-special-partition");
    let mut files = Vec::new();
    let mut folders = vec![dir.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("the Spark table's folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(&dir).expect("below the table").to_str().expect("UTF-8").to_owned();
                files.push((relative, std::fs::read(&path).expect("a file of the Spark table")));
            }
        }
    }
    files
}

/// Jobs writing into the tables other writers made: `spark` into Spark's `s.spark` (its
/// partitions `A/A` and `B B`, and a new one), `delta_rs` into delta-rs's `s.delta_rs` (every
/// value), each keyed, adding new keys each day.
fn others_project() -> Project {
    let spark = format!(
        "SELECT x, y FROM (VALUES ('A/A', CAST(1 AS BIGINT)), ('A/A', 10 + {DAY_OF_MONTH}), \
         ('B B', 20 + {DAY_OF_MONTH}), ('ï', 30 + {DAY_OF_MONTH})) AS t(x, y)"
    );
    Project::new()
        .job(Job::with_write("spark", "s.spark", Write::append_dedup(&["y"])).partition_by("x").sql(spark))
        .job(
            Job::with_write("delta_rs", "s.delta_rs", Write::merge(&["id"], "v")).partition_by("region").sql(format!(
                "SELECT id * 100 + {DAY_OF_MONTH} AS id, region, CAST(1 AS BIGINT) AS v FROM {}",
                values()
            )),
        )
}

/// The rows the tables other writers made hold once both jobs ran both days.
fn others_expected(table: &str) -> Vec<Value> {
    let days = [1, 2];
    let rows: Vec<Value> = if table == "spark" {
        let mut rows = vec![json!({"x": "A/A", "y": 1}), json!({"x": "B B", "y": 2})];
        for day in days {
            rows.extend([("A/A", 10), ("B B", 20), ("ï", 30)].map(|(x, y)| json!({"x": x, "y": y + day})));
        }
        rows
    } else {
        let mut rows: Vec<Value> =
            (1..).zip(VALUES).map(|(i, v)| json!({"id": i, "region": region(v), "v": 0})).collect();
        for day in days {
            rows.extend((1..).zip(VALUES).map(|(i, v)| json!({"id": i * 100 + day, "region": region(v), "v": 1})));
        }
        rows
    };
    sorted(rows)
}

/// Spark's table and delta-rs's written into by a keyed job each day, run again, verified,
/// maintained, run again, read alike by delta-rs Python.
fn written_by_others(lake: &Lake, root: &str, put: impl Fn(&str, Vec<u8>)) {
    for (relative, bytes) in spark_table() {
        put(&format!("s/spark/{relative}"), bytes);
    }
    let lines: Vec<String> =
        (1..).zip(VALUES).map(|(i, v)| json!({"id": i, "region": v, "v": 0}).to_string()).collect();
    Reader::new(lake).write(&uri(root, "s/delta_rs"), "region", &lines.join("\n"));
    for job in ["spark", "delta_rs"] {
        let (table, dir) = (format!("s.{job}"), uri(root, &format!("s/{job}")));
        for day in DAYS {
            run_twice(lake, &table, &["run", job, "--dt", day]);
        }
        verify(lake, root, &[job, "--dt", DAYS[1]]);
        assert_eq!(rows(lake, &dir), others_expected(job), "{job}: delta-rs Python reads the rows");
        assert!(maintained(lake, job, &table, &dir, &others_expected(job)), "{job}: compacted");
        run_twice(lake, &table, &["run", job, "--dt", DAYS[1]]);
        verify(lake, root, &[job, "--dt", DAYS[1]]);
    }
}

#[test]
fn tables_spark_and_delta_rs_wrote_with_encoded_partition_folders_are_written_and_maintained() {
    let lake = Lake::empty(&[]);
    lake.set_project(&others_project());
    let root = lake.root();
    written_by_others(&lake, &local_root(&lake), |relative, bytes| {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("folders");
        std::fs::write(path, bytes).expect("a file");
    });
}

#[test]
fn tables_spark_and_delta_rs_wrote_with_encoded_partition_folders_are_written_and_maintained_on_s3() {
    let s3 = S3::new("partition-values-others");
    s3.lake.set_project(&others_project());
    written_by_others(&s3.lake, s3.root(), |relative, bytes| s3.put(relative, bytes));
}

/// A day a release before recorded under the job's `partition_by` (`region=2026-09-01`, the name
/// it gave a day of every mode) is the same day as `dt=2026-09-01`: `status` reads it fresh, an
/// `append` of it is not made again, a `merge` of it changes nothing.
#[test]
fn a_day_recorded_under_the_partition_column_is_the_same_day() {
    let lake = Lake::empty(&[]);
    lake.set_project(&project());
    for job in ["append", "merge"] {
        lake.cli(&["run", job, "--dt", DAYS[0]]).assert_code(0);
        let log = lake.root().join(format!("s/{job}/_delta_log/00000000000000000000.json"));
        let commit = std::fs::read_to_string(&log).expect("the first commit");
        let (now, before) = (format!("dt={}", DAYS[0]), format!("region={}", DAYS[0]));
        assert!(commit.contains(&format!("lakewriter/{job}/{now}/code")), "{commit}");
        std::fs::write(&log, commit.replace(&now, &before)).expect("the commit as a release before wrote it");

        let status = lake.status(&[job, "--from", DAYS[0], "--to", DAYS[0]]);
        let shown: Vec<(&str, &str)> =
            status.partitions.iter().map(|p| (p.partition.as_str(), p.state.as_str())).collect();
        assert_eq!(shown, [(now.as_str(), "fresh")], "{job}");
        let written = content(&lake, &format!("s.{job}"));
        let (reports, _) = lake.cli(&["--json", "run", job, "--dt", DAYS[0]]).assert_code(0).json();
        assert!(!reports[0].committed, "{job}: {:?}", reports[0]);
        assert_eq!(content(&lake, &format!("s.{job}")), written, "{job}: no row appended again");
    }
}
