//! `--dry-run`: every write mode computes, checks and compares its partition, and commits
//! nothing. The counts it prints are checked against an independent recomputation — the table's
//! rows as delta-rs Python reads them before and after the same run made for real — and the whole
//! root (every file and folder, its bytes and times) is unchanged by it; locally and on S3.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::support::json_lines;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{Checks, Job, Lake, Project};

type Row = Map<String, Value>;

/// A job of every mode over the demo's raw layer.
fn project() -> Project {
    let daily = "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt \
                 GROUP BY customer_id";
    let orders = "SELECT order_id, customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt";
    Project::new()
        .job(
            Job::new("overwrite", "dry.overwrite")
                .sql(daily)
                .checks(Checks::new().unique(&["customer_id"]).row_count(Some(1), None)),
        )
        .job(Job::delete_insert("delete_insert", "dry.delete_insert", "dt = $dt").sql(daily))
        .job(Job::append("append", "dry.append").sql(orders))
        .job(
            Job::append_dedup("append_dedup", "dry.append_dedup", &["order_id"])
                .sql("SELECT order_id, customer_id, amount FROM raw.orders WHERE dt = $dt"),
        )
        .job(
            Job::rebuild("rebuild", "dry.rebuild").sql(
                "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue FROM raw.orders GROUP BY customer_id",
            ),
        )
        .job(
            Job::merge("merge", "dry.merge", &["customer_id"], "updated_at")
                .delete_when("op = 'delete'")
                .sql("SELECT customer_id, email, tier, updated_at, op FROM raw.customers_batch WHERE dt = $dt"),
        )
}

/// The day every dated table is written for, then given late orders.
const WRITTEN: &str = "2026-09-10";
/// A day no table holds yet (merge: a batch not applied yet).
const NEW: &str = "2026-09-11";
const SHOW: usize = 3;
/// The dry runs against missing tables: each job's first run.
const FIRSTS: [(&str, Option<&str>); 6] = [
    ("overwrite", Some(WRITTEN)),
    ("delete_insert", Some(WRITTEN)),
    ("append", Some(WRITTEN)),
    ("append_dedup", Some(WRITTEN)),
    ("rebuild", None),
    ("merge", Some("2026-09-08")),
];

#[test]
fn dry_runs_count_what_the_run_then_does_and_change_nothing() {
    let lake = Lake::demo();
    lake.set_project(&project());
    let root = lake.root().to_str().expect("utf-8 path").to_owned();
    dry_runs(&lake, &|table| format!("{root}/dry/{table}"), &root);
}

#[test]
fn dry_runs_count_what_the_run_then_does_and_change_nothing_on_s3() {
    let s3 = S3::new("dry-run");
    s3.lake.prepare_demo();
    s3.lake.set_project(&project());
    dry_runs(&s3.lake, &|table| s3.url(&format!("dry/{table}")), s3.root());
}

/// Writes each table, delivers late orders for [`WRITTEN`], then for each job and day: a dry run
/// (the root unchanged by it), the run made for real, and the dry run's counts against the rows
/// the reader finds before and after.
fn dry_runs(lake: &Lake, uri: &dyn Fn(&str) -> String, root: &str) {
    let reader = Reader::new(lake);
    // Against tables that do not exist yet: no folder created.
    let tree = reader.tree(root);
    let firsts: Vec<(&str, Value)> = FIRSTS.iter().map(|&(job, day)| (job, dry_run(lake, job, day, "ok"))).collect();
    assert_eq!(reader.tree(root), tree, "a dry run against a missing table created something");
    for args in [
        &["backfill", "merge", "--from", "2026-09-08", "--to", WRITTEN][..],
        &["run", "rebuild"],
        &["backfill", "overwrite", "--from", "2026-09-09", "--to", WRITTEN],
    ] {
        lake.cli(args).assert_code(0);
    }
    for job in ["delete_insert", "append", "append_dedup"] {
        lake.cli(&["run", job, "--dt", WRITTEN]).assert_code(0);
    }
    assert_first_runs(&reader, uri, &firsts);
    lake.run_demo(&["--late", WRITTEN]).assert_code(0);

    for (job, day) in [
        ("overwrite", Some(WRITTEN)),
        ("overwrite", Some(NEW)),
        ("delete_insert", Some(WRITTEN)),
        ("append", Some(WRITTEN)),
        ("append", Some(NEW)),
        ("append_dedup", Some(WRITTEN)),
        ("rebuild", None),
        ("merge", Some(NEW)),
    ] {
        let label = format!("{job} {day:?}");
        let table = uri(job);
        let before = reader.rows(&table);
        let tree = reader.tree(root);
        // An `append` of a partition appended before is skipped, in a dry run as in a run.
        let status = if (job, day) == ("append", Some(WRITTEN)) { "skipped" } else { "ok" };
        let report = dry_run(lake, job, day, status);
        assert_eq!(reader.tree(root), tree, "{label}: the dry run changed something under the root");
        let mut args = vec!["run", job];
        args.extend(day.iter().flat_map(|d| ["--dt", d]));
        lake.cli(&args).assert_code(0);
        let after = reader.rows(&table);
        if job == "merge" {
            assert_merge_counts(&report, &before, &after, day.expect("a merge's day"), &label);
        } else {
            // A keyed write's dry run counts its rows, and shows none.
            assert_diff(&report, &before, &after, &label, job != "append_dedup");
        }
    }

    // A backfill's dry run: one report per day, the summary's count of days that would change.
    lake.run_demo(&["--late", "2026-09-09"]).assert_code(0);
    let tree = reader.tree(root);
    let run = lake.cli(&["--json", "backfill", "overwrite", "--from", "2026-09-08", "--to", WRITTEN, "--dry-run"]);
    run.assert_code(0);
    assert_eq!(reader.tree(root), tree, "the backfill's dry run changed something under the root");
    let lines = json_lines(&run);
    let changes: Vec<bool> = lines[..3].iter().map(|r| r["dry_run"]["changes"].as_bool().expect("changes")).collect();
    assert_eq!(changes, [true, true, false], "09-08 never written, 09-09 given late orders, 09-10 as written");
    assert_eq!(lines[3]["summary"]["would_change"], 2);
}

/// The dry runs of [`FIRSTS`] against missing tables, against the tables their first runs wrote:
/// every row added (a merge: every key new).
#[track_caller]
fn assert_first_runs(reader: &Reader<'_>, uri: &dyn Fn(&str) -> String, firsts: &[(&str, Value)]) {
    for (job, report) in firsts {
        let rows = reader.rows(&uri(job));
        let written = rows.iter().filter(|r| !r.contains_key("dt") || r["dt"] == WRITTEN).count() as u64;
        let dry = &report["dry_run"];
        assert_eq!(dry["changes"].as_bool(), Some(true), "{job}: {report}");
        if *job == "merge" {
            assert_eq!(report["changes"]["updated"], 0, "{job}: every key is new to a missing table: {report}");
        } else {
            let counts = (dry["rows_added"].as_u64(), dry["rows_removed"].as_u64());
            assert_eq!(counts, (Some(written), Some(0)), "{job}: the rows its first run wrote: {report}");
        }
    }
}

/// `lakewriter --json run JOB [--dt DAY] --dry-run --show 3`: its report, of status `status`.
fn dry_run(lake: &Lake, job: &str, day: Option<&str>, status: &str) -> Value {
    let mut args = vec!["--json", "run", job, "--dry-run", "--show", "3"];
    args.extend(day.iter().flat_map(|d| ["--dt", d]));
    let run = lake.cli(&args);
    run.assert_code(0);
    let lines = json_lines(&run);
    let report = lines[0].clone();
    assert_eq!(report["status"], status, "{report}");
    assert_eq!(report["committed"].as_bool(), Some(false), "{report}");
    assert_eq!(lines[1]["summary"]["rows_written"], 0, "{}", lines[1]);
    report
}

/// The rows of `after` not in `before`, and of `before` not in `after`, as multisets.
fn multiset_diff(before: &[Row], after: &[Row]) -> (Vec<Row>, Vec<Row>) {
    let mut counts: BTreeMap<String, (i64, &Row)> = BTreeMap::new();
    for row in after {
        counts.entry(Value::Object(row.clone()).to_string()).or_insert((0, row)).0 += 1;
    }
    for row in before {
        counts.entry(Value::Object(row.clone()).to_string()).or_insert((0, row)).0 -= 1;
    }
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    for (n, row) in counts.into_values() {
        let side = if n > 0 { &mut added } else { &mut removed };
        side.extend(std::iter::repeat_n(row.clone(), usize::try_from(n.unsigned_abs()).expect("a count")));
    }
    (added, removed)
}

/// The dry run's rows added and removed, and its examples (where it `shows` any), against the
/// table before and after.
#[track_caller]
fn assert_diff(report: &Value, before: &[Row], after: &[Row], label: &str, shown: bool) {
    let (added, removed) = multiset_diff(before, after);
    let dry = &report["dry_run"];
    assert_eq!(dry["rows_added"].as_u64(), Some(added.len() as u64), "{label}: rows added: {report}");
    assert_eq!(dry["rows_removed"].as_u64(), Some(removed.len() as u64), "{label}: rows removed: {report}");
    assert_eq!(dry["changes"].as_bool(), Some(!(added.is_empty() && removed.is_empty())), "{label}: {report}");
    for (key, rows) in [("added_examples", &added), ("removed_examples", &removed)] {
        let examples: Vec<&str> =
            dry[key].as_array().map_or(Vec::new(), |a| a.iter().filter_map(Value::as_str).collect());
        let expected = if shown { rows.len().min(SHOW) } else { 0 };
        assert_eq!(examples.len(), expected, "{label}: {key}: {report}");
        for example in examples {
            assert!(rows.iter().any(|row| shows(example, row)), "{label}: {key}: `{example}` is none of {rows:?}");
        }
    }
}

/// Whether `example` (`column=value, …`) holds exactly `row`'s values.
fn shows(example: &str, row: &Row) -> bool {
    let cells: BTreeSet<(String, String)> = example
        .split(", ")
        .filter_map(|cell| cell.split_once('=').map(|(c, v)| (c.to_owned(), v.to_owned())))
        .collect();
    let values: BTreeSet<(String, String)> =
        row.iter().map(|(c, v)| (c.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned))).collect();
    cells == values
}

/// A merge's dry-run counts against the table by key: a key new to the table is an insert (a
/// delete where its row is a tombstone), a key whose row changed an update (a delete where it
/// became a tombstone), and every other key of the day's deduplicated batch unchanged.
#[track_caller]
fn assert_merge_counts(report: &Value, before: &[Row], after: &[Row], day: &str, label: &str) {
    let by_key = |rows: &[Row]| -> BTreeMap<i64, Row> {
        rows.iter().map(|r| (r["customer_id"].as_i64().expect("customer_id"), r.clone())).collect()
    };
    let (before, after) = (by_key(before), by_key(after));
    let tombstone = |row: &Row| row["_deleted"].as_bool() == Some(true);
    let (mut inserted, mut updated, mut deleted) = (0, 0, 0);
    for (key, row) in &after {
        match before.get(key) {
            None if tombstone(row) => deleted += 1,
            None => inserted += 1,
            Some(old) if old == row => {}
            Some(old) if tombstone(row) && !tombstone(old) => deleted += 1,
            Some(_) => updated += 1,
        }
    }
    let batch = lakewriter_datagen::customers_for(crate::support::day(day));
    let ids = batch.column(0).as_any().downcast_ref::<arrow::array::Int64Array>().expect("customer_id");
    let keys = ids.iter().flatten().collect::<BTreeSet<i64>>().len();
    let changes = &report["changes"];
    let expected = serde_json::json!({
        "inserted": inserted, "updated": updated, "deleted": deleted,
        "unchanged": keys - inserted - updated - deleted,
    });
    let counts: Map<String, Value> = ["inserted", "updated", "deleted", "unchanged"]
        .iter()
        .map(|k| ((*k).to_owned(), changes[*k].clone()))
        .collect();
    assert_eq!(Value::Object(counts), expected, "{label}: {report}");
    assert_eq!(report["dry_run"]["changes"].as_bool(), Some(inserted + updated + deleted > 0), "{label}");
    assert!(inserted + updated > 0, "{label}: a day's batch changes the table: {report}");
}

/// A dry run fails where the run would, and still writes nothing: rows outside the partition, a
/// blocking check (its diff shown all the same).
#[test]
fn a_dry_run_fails_where_the_run_would() {
    let lake = Lake::demo();
    lake.set_project(&project());
    lake.cli(&["run", "overwrite", "--dt", WRITTEN]).assert_code(0);
    let root = lake.root().to_str().expect("utf-8 path").to_owned();
    let reader = Reader::new(&lake);
    let tree = reader.tree(&root);

    let outside = project()
        .edited_sql("overwrite", "SUM(amount) AS revenue, $dt AS dt", "SUM(amount) AS revenue, dt")
        .edited_sql("overwrite", "WHERE dt = $dt GROUP BY customer_id", "WHERE dt >= $dt GROUP BY customer_id, dt");
    lake.set_project(&outside);
    let run = lake.cli(&["--json", "run", "overwrite", "--dt", WRITTEN, "--dry-run"]);
    run.assert_code(1);
    let report = &json_lines(&run)[0];
    let error = report["error"].as_str().expect("an error");
    assert!(
        error.contains("dry.overwrite: the result has ")
            && error.contains(" rows whose `dt` is not 2026-09-10: a run would fail and commit nothing"),
        "{error}"
    );

    let checked = project().with_checks("overwrite", Checks::new().unique(&["customer_id"]).row_count(None, Some(5)));
    lake.set_project(&checked);
    let run = lake.cli(&["--json", "run", "overwrite", "--dt", NEW, "--dry-run"]);
    run.assert_code(1);
    let report = &json_lines(&run)[0];
    assert_eq!(report["status"], "failed", "{report}");
    let error = report["error"].as_str().expect("an error");
    assert!(error.contains("check `row_count` failed: "), "{error}");
    assert!(error.contains("rows; expected at most 5"), "{error}");
    let added = report["dry_run"]["rows_added"].as_u64().expect("the diff, shown all the same");
    assert!(added > 5, "{report}");
    assert_eq!(report["dry_run"]["rows_removed"], 0, "{report}");
    assert_eq!(reader.tree(&root), tree, "a failed dry run changed something under the root");
}
