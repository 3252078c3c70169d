//! `lakewriter sql` refusing and failing: each error with its exit code and message, and nothing
//! committed — the table's digest and commits, or the whole root, as they were. The last test
//! shows a bug of the command (see its comment): it fails until that is fixed.

use std::collections::BTreeSet;

use serde_json::json;

use crate::support::json_lines;
use crate::support::reader::Reader;
use crate::support::sql::{OVERWRITE, changes, local_root, pick, report, rows, sql, uri};
use crate::support::{Lake, Run, edited};

const DAILY: &str = "analytics.daily_orders";
const DAILY_DIR: &str = "analytics/daily_orders";

/// Asserts that `run`'s error is `head…` (e.g. `error: statement 1 of 1 failed: `) and one cause
/// that holds `cause`.
#[track_caller]
fn assert_failed(run: &Run, head: &str, cause: &str) {
    let lines = run.error_lines();
    assert!(
        lines.len() == 2
            && lines[0].starts_with(head)
            && lines[1].starts_with("  caused by: ")
            && lines[1].contains(cause),
        "not `{head}…` caused by `…{cause}…`:\n{}",
        run.stderr
    );
}

/// Asserts that `error` says 12 target rows of `core.dups` match several source rows, and names
/// 10 of them (ids 1 to 12, each matched twice), each once.
#[track_caller]
fn assert_ten_of_twelve(error: &str) {
    let (head, examples) = error.split_once(" E.g. ").unwrap_or_else(|| panic!("no examples: {error}"));
    assert!(head.starts_with("MERGE INTO core.dups: 12 target row(s) match more than one source row"), "{error}");
    assert!(head.ends_with("nothing was committed."), "{error}");
    let mut ids = BTreeSet::new();
    for example in examples.split("; ") {
        let id = example.strip_prefix("id=").and_then(|e| e.strip_suffix(", matching_source_rows=2"));
        let id: i64 = id.and_then(|id| id.parse().ok()).unwrap_or_else(|| panic!("not an example: `{example}`"));
        assert!((1..=12).contains(&id) && ids.insert(id), "id {id}: {error}");
    }
    assert_eq!(ids.len(), 10, "ten examples: {error}");
}

#[test]
fn a_merge_matching_a_target_row_with_several_source_rows_fails_names_ten_and_commits_nothing() {
    let lake = Lake::demo();
    let dups = "INSERT OVERWRITE core.dups SELECT value AS id, CONCAT('name ', CAST(value AS VARCHAR)) AS name \
        FROM generate_series(1, 15)";
    report(&lake, dups, &[]);
    let state = |lake: &Lake| (lake.digest("core.dups", None), lake.commit_count("core/dups"));
    let before = state(&lake);
    // Ids 1 to 12 twice in the source, 13 to 15 once.
    let using = "MERGE INTO core.dups AS t USING (SELECT * FROM core.dups WHERE id <= 12 UNION ALL \
        SELECT * FROM core.dups) AS s ON t.id = s.id";
    for clause in [
        "WHEN MATCHED THEN UPDATE SET name = s.name",
        "WHEN MATCHED THEN UPDATE SET *",
        "WHEN MATCHED AND s.id > 0 THEN DELETE",
        "WHEN MATCHED AND t.id > 100 THEN DELETE WHEN NOT MATCHED THEN INSERT *",
    ] {
        let run = lake.cli(&["--json", "sql", "-e", &format!("{using} {clause}")]);
        run.assert_code(1);
        let lines = json_lines(&run);
        assert_eq!(lines.len(), 2, "the statement's line and the summary: {}", run.stdout);
        assert_eq!(
            pick(&lines[0], &["statement", "of", "status"]),
            json!({"statement": 1, "of": 1, "status": "failed"})
        );
        let error = lines[0]["error"].as_str().expect("an error");
        assert_ten_of_twelve(error);
        assert_failed(&run, "error: statement 1 of 1 failed: MERGE INTO core.dups", error);
        assert_eq!(state(&lake), before, "{clause}: nothing committed");
    }
    // An unconditional DELETE deletes each matched target row once, as Spark allows.
    let line = report(&lake, &format!("{using} WHEN MATCHED THEN DELETE"), &[]);
    assert_eq!(pick(&line, &["committed", "changes"]), json!({"committed": true, "changes": changes(0, 0, 15)}));
    assert_eq!(rows(&lake, &uri(&local_root(&lake), "core/dups")), Vec::<serde_json::Value>::new());
}

#[test]
fn inserts_that_do_not_fit_the_table_are_refused_and_commit_nothing() {
    let lake = Lake::demo();
    report(&lake, OVERWRITE, &[]);
    let state = |lake: &Lake| (lake.digest(DAILY, None), lake.commit_count(DAILY_DIR));
    let before = state(&lake);
    let columns = "customer_id, COUNT(*) AS orders, SUM(amount) AS revenue";
    let cases = [
        (
            edited(OVERWRITE, columns, "customer_id, COUNT(*) AS orders"),
            2,
            "INSERT into analytics.daily_orders: the query gives 2 column(s), and the table take(s) 3: \
             customer_id, orders, revenue",
        ),
        (
            edited(OVERWRITE, columns, "COUNT(*) AS orders, customer_id, SUM(amount) AS revenue"),
            2,
            "the query's column 1 is `orders` but goes to `customer_id`: columns are matched by position",
        ),
        (
            edited(OVERWRITE, columns, "customer_id, MIN(status) AS n, SUM(amount) AS revenue"),
            1,
            "analytics.daily_orders: the result does not match the table's schema: column `orders` is long in the \
             table but string in the result",
        ),
        (
            edited(OVERWRITE, "PARTITION (dt = '2026-09-30')", "PARTITION (customer_id = 1)"),
            2,
            "PARTITION (customer_id): analytics.daily_orders is partitioned by (dt)",
        ),
    ];
    for (statement, code, cause) in cases {
        let run = sql(&lake, &["-e", &statement]);
        run.assert_code(code);
        assert_failed(&run, "error: statement 1 of 1 failed: INSERT OVERWRITE TABLE analytics.daily_orders", cause);
        assert_eq!(state(&lake), before, "nothing committed by {statement}");
    }
}

#[test]
fn statements_lakewriter_does_not_run_are_refused_and_write_nothing() {
    let lake = Lake::demo();
    report(&lake, OVERWRITE, &[]);
    let (reader, root) = (Reader::new(&lake), local_root(&lake));
    let tree = reader.tree(&root);
    let then_create = format!("{OVERWRITE}; CREATE TABLE analytics.x (id INT)");
    // Refused as read, before any statement runs (the first of `then_create` too).
    for (statement, message) in [
        ("CREATE TABLE analytics.x (id INT)", "CREATE TABLE is not supported"),
        (then_create.as_str(), "CREATE TABLE is not supported"),
        ("DROP TABLE analytics.daily_orders", "DROP TABLE is not supported"),
        ("INSERT INTO analytics.x VALUES (1) RETURNING id", "INSERT … RETURNING is not supported"),
        (
            "UPDATE analytics.daily_orders SET orders = c.orders FROM analytics.daily_orders AS c WHERE c.orders = 1",
            "UPDATE … FROM is not supported",
        ),
        ("DELETE FROM analytics.daily_orders USING core.customers AS c WHERE c.tier = 'gold'", "DELETE … USING"),
        ("DELETE FROM orders WHERE customer_id = 1", "name the table `orders` as schema.table"),
        ("SELEC customer_id FROM analytics.daily_orders", "cannot parse the SQL"),
    ] {
        let run = sql(&lake, &["-e", statement]);
        run.assert_code(2);
        let lines = run.error_lines();
        assert!(lines.len() == 1 && lines[0].starts_with(&format!("error: {message}")), "{statement}:\n{}", run.stderr);
    }
    // Refused as they run.
    for (statement, message) in [
        ("INSERT INTO raw.orders SELECT * FROM raw.orders", "raw.orders is a raw dataset"),
        (
            "MERGE INTO raw.customers_batch AS t USING raw.customers_batch AS s ON t.customer_id = s.customer_id \
             WHEN MATCHED THEN DELETE",
            "raw.customers_batch is a raw dataset",
        ),
        ("DELETE FROM analytics.missing WHERE orders = 1", "DELETE: analytics.missing has no Delta table"),
        ("UPDATE analytics.missing SET orders = 0", "UPDATE: analytics.missing has no Delta table"),
    ] {
        let run = sql(&lake, &["-e", statement]);
        run.assert_code(2);
        // The statement as reported: cut after 100 characters.
        assert_failed(
            &run,
            &format!("error: statement 1 of 1 failed: {}", statement.get(..40).unwrap_or(statement)),
            message,
        );
    }
    assert_eq!(reader.tree(&root), tree, "nothing written");
}

#[test]
fn a_failing_statement_stops_the_ones_after_it_and_says_so() {
    let lake = Lake::demo();
    let file = lake.path().join("three.sql");
    let second = "INSERT OVERWRITE analytics.first SELECT 'x' AS a";
    let text = format!(
        "INSERT OVERWRITE analytics.first SELECT 1 AS a;\n{second};\nINSERT INTO analytics.third SELECT 1 AS a;\n"
    );
    std::fs::write(&file, text).expect("write the SQL file");
    let run = sql(&lake, &[file.to_str().expect("utf-8 path")]);
    run.assert_code(1);
    assert_eq!(run.stdout, "[1/3] insert_overwrite analytics.first: committed version 0 — 1 row written\n");
    let head = format!("error: statement 2 of 3 failed; statement 3 not run: {second}");
    assert_failed(&run, &head, "analytics.first: the result does not match the table's schema");
    assert_eq!(run.error_lines()[0], head);
    assert!(!lake.root().join("analytics/third").exists(), "statement 3 did not run");
    assert_eq!(lake.commit_count("analytics/first"), 1);

    // With --json, a refusal in statement 2 of 4: a line for each statement that ran.
    let refused = "INSERT OVERWRITE analytics.first SELECT 1 AS a, 2 AS b";
    let statements = format!(
        "INSERT OVERWRITE analytics.first SELECT 2 AS a; {refused}; INSERT INTO analytics.third SELECT 1 AS a; \
         DELETE FROM analytics.first"
    );
    let run = lake.cli(&["--json", "sql", "-e", &statements]);
    run.assert_code(2);
    let lines = json_lines(&run);
    let ok = json!({"statement": 1, "of": 4, "status": "ok", "committed": true, "table_version": 1});
    assert_eq!(pick(&lines[0], &["statement", "of", "status", "committed", "table_version"]), ok);
    let cause = "INSERT into analytics.first: the query gives 2 column(s), and the table take(s) 1: a";
    let failed = json!({"statement": 2, "of": 4, "sql": refused, "status": "failed", "error": cause});
    let closing = json!({"summary": {"statements": 4, "ok": 1, "failed": 1, "not_run": 2, "schema_version": 4}});
    assert_eq!(lines[1..], [failed, closing]);
    assert_eq!(
        run.error_lines(),
        [
            format!("error: statement 2 of 4 failed; statements 3 to 4 not run: {refused}"),
            format!("  caused by: {cause}")
        ]
    );
    assert!(!lake.root().join("analytics/third").exists(), "statement 3 did not run");
    assert_eq!(rows(&lake, &uri(&local_root(&lake), "analytics/first")), [json!({"a": 2})], "nor statement 4");
}

/// The catalog is read when the command starts; a table that an earlier statement of the same
/// run creates is added to it, so a later statement reads it (at b0e6a7f it was not: `table
/// 'datafusion.staging.batch' not found`; fixed by c5d140d).
#[test]
fn a_table_created_by_a_statement_is_read_by_the_statements_after_it() {
    let lake = Lake::demo();
    let statements = "INSERT OVERWRITE staging.batch SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, name); \
        MERGE INTO core.people AS t USING staging.batch AS s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *; \
        SELECT COUNT(*) AS n FROM staging.batch";
    let run = lake.cli(&["--json", "sql", "-e", statements]);
    run.assert_code(0);
    let lines = json_lines(&run);
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    assert_eq!(pick(&lines[1], &["status", "changes"]), json!({"status": "ok", "changes": changes(2, 0, 0)}));
    assert_eq!(lines[2], json!({"statement": 3, "row": {"n": 2}}));
    let people = rows(&lake, &uri(&local_root(&lake), "core/people"));
    assert_eq!(people, [json!({"id": 1, "name": "a"}), json!({"id": 2, "name": "b"})]);
}

/// BUG in the command (reported, not fixed here): a statement is reported — in the `sql` of its
/// JSON line, and after `error: statement N of M failed: ` — with lakewriter's own rewrite of
/// Spark's `UPDATE SET *` and `INSERT *` (`UPDATE SET __lakewriter_all = __lakewriter_all`,
/// `INSERT ROW`), not as it was written. Fails until that is fixed.
#[test]
fn a_merge_with_stars_is_reported_as_written() {
    let lake = Lake::demo();
    report(&lake, "INSERT OVERWRITE core.people SELECT * FROM (VALUES (1, 'a')) AS v(id, name)", &[]);
    let merge = "MERGE INTO core.people AS t USING core.people AS s ON t.id = s.id \
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *";
    let line = report(&lake, merge, &[]);
    assert_eq!(line["sql"], merge);
}
