//! `lakewriter sql`: Spark-style statements against the lakehouse, each statement that writes one
//! commit or none. Every expected row is computed here — from the raw data (`lakewriter-datagen`),
//! or written out by hand from the statement's meaning — and compared with the rows the
//! independent reader (delta-rs Python) finds; never taken from what the command printed. The
//! refusals and failures are in `sql_errors.rs`.

use std::collections::BTreeMap;

use arrow::array::{Int64Array, StringArray, TimestampMicrosecondArray};
use serde_json::{Value, json};

use crate::support::checks;
use crate::support::json_lines;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::sql::{OVERWRITE, changes, local_root, pick, query_rows, report, rows, sorted, sql, sql_json, uri};
use crate::support::{Lake, customers_with_orders, daily_orders_rows, edited, lakewriter_with, orders};

/// The day of the issue's two statements.
const DAY: &str = "2026-09-30";

/// The issue's newer-wins merge of a day's customer changes, verbatim.
const MERGE: &str = "MERGE INTO core.customers AS t USING (SELECT * FROM (SELECT *, ROW_NUMBER() OVER \
    (PARTITION BY customer_id ORDER BY updated_at DESC) AS rn FROM raw.customers_batch WHERE dt = '2026-09-30') \
    WHERE rn = 1) AS s ON t.customer_id = s.customer_id WHEN MATCHED AND s.updated_at > t.updated_at THEN \
    UPDATE SET email = s.email, tier = s.tier, updated_at = s.updated_at WHEN NOT MATCHED THEN \
    INSERT (customer_id, email, tier, updated_at) VALUES (s.customer_id, s.email, s.tier, s.updated_at)";

/// Creates `analytics.by_day` with three days, by a dynamic overwrite.
const THREE_DAYS: &str = "INSERT OVERWRITE analytics.by_day PARTITION (dt) SELECT customer_id, COUNT(*) AS orders, \
    SUM(amount) AS revenue, dt FROM raw.orders WHERE dt BETWEEN '2026-09-01' AND '2026-09-03' GROUP BY customer_id, dt";

/// Rows of customers 1 to 10 for the first and last of [`THREE_DAYS`], no PARTITION clause.
const TWO_DAYS: &str = "INSERT OVERWRITE analytics.by_day SELECT customer_id, COUNT(*) AS orders, \
    SUM(amount) AS revenue, dt FROM raw.orders WHERE dt IN ('2026-09-01', '2026-09-03') AND customer_id <= 10 \
    GROUP BY customer_id, dt";

const DAILY: &str = "analytics.daily_orders";
const DAILY_DIR: &str = "analytics/daily_orders";

/// The rows `SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue … WHERE dt = day
/// GROUP BY customer_id` gives for the customers `keep` picks, with `dt`: from the raw orders.
fn daily_rows(day: &str, keep: impl Fn(i64) -> bool) -> Vec<Value> {
    let rows = checks::rows(day).into_iter().filter(|r| keep(r.id));
    let revenue = |cents: i128| format!("{}.{:02}", cents / 100, cents % 100);
    let rows = rows.map(|r| json!({"customer_id": r.id, "orders": r.orders, "revenue": revenue(r.cents), "dt": day}));
    sorted(rows.collect())
}

fn without_dt(rows: Vec<Value>) -> Vec<Value> {
    rows.into_iter()
        .map(|mut row| {
            row.as_object_mut().expect("a row").remove("dt");
            row
        })
        .collect()
}

/// The issue's overwrite for `day`, of the customers `filter` (` AND …`) keeps.
fn overwrite_day(day: &str, filter: &str) -> String {
    let sql = OVERWRITE.replace(DAY, day);
    if filter.is_empty() { sql } else { edited(&sql, " GROUP BY", &format!(" {filter} GROUP BY")) }
}

/// (digest, rows) of a table or one of its days: its content, whatever its version.
fn content(lake: &Lake, table: &str, day: Option<&str>) -> (String, u64) {
    let digest = lake.digest(table, day);
    (digest.digest, digest.rows)
}

/// For each customer of `day`'s raw changes: the time of its latest change (`YYYY-MM-DD
/// HH:MM:SS+00:00`), and the (email, tier) of each change at that time — where several share it,
/// the ROW_NUMBER may pick any of them.
fn latest_changes(day: &str) -> BTreeMap<i64, (String, Vec<(String, String)>)> {
    let batch = lakewriter_datagen::customers_for(crate::support::day(day));
    let column = |name: &str| batch.column_by_name(name).unwrap_or_else(|| panic!("raw column {name}")).as_any();
    let ids = column("customer_id").downcast_ref::<Int64Array>().expect("ids");
    let emails = column("email").downcast_ref::<StringArray>().expect("emails");
    let tiers = column("tier").downcast_ref::<StringArray>().expect("tiers");
    let times = column("updated_at").downcast_ref::<TimestampMicrosecondArray>().expect("times");
    let mut latest: BTreeMap<i64, (i64, Vec<(String, String)>)> = BTreeMap::new();
    for i in 0..batch.num_rows() {
        let change = (emails.value(i).to_owned(), tiers.value(i).to_owned());
        let entry = latest.entry(ids.value(i)).or_insert((times.value(i), Vec::new()));
        if times.value(i) > entry.0 {
            *entry = (times.value(i), Vec::new());
        }
        if times.value(i) == entry.0 {
            entry.1.push(change);
        }
    }
    let shown = |us| chrono::DateTime::from_timestamp_micros(us).expect("a time").format("%Y-%m-%d %H:%M:%S+00:00");
    latest.into_iter().map(|(id, (at, changes))| (id, (shown(at).to_string(), changes))).collect()
}

/// Asserts that `core.customers` holds one row per customer of `day`'s changes: its latest one.
fn assert_latest_customers(lake: &Lake, root: &str, day: &str) {
    let latest = latest_changes(day);
    let table = rows(lake, &uri(root, "core/customers"));
    let ids: Vec<i64> = table.iter().map(|r| r["customer_id"].as_i64().expect("an id")).collect();
    assert_eq!(ids.iter().copied().collect::<std::collections::BTreeSet<_>>().len(), ids.len(), "one row a customer");
    assert_eq!(ids.len(), latest.len(), "a row for each customer of the batch: {table:?}");
    for row in &table {
        let (at, candidates) = &latest[&row["customer_id"].as_i64().expect("an id")];
        let keys: Vec<&String> = row.as_object().expect("a row").keys().collect();
        assert_eq!(keys, ["customer_id", "email", "tier", "updated_at"], "the INSERT's columns only");
        assert_eq!(row["updated_at"], json!(at), "the latest change: {row}");
        let change = (row["email"].as_str().expect("email").to_owned(), row["tier"].as_str().expect("tier").to_owned());
        assert!(candidates.contains(&change), "{row} is not a latest change: {candidates:?}");
    }
}

/// The issue's two statements on a lakehouse with its raw layer only, each run twice: the first
/// run creates the table, the second leaves its content as it was; the MERGE's commits nothing.
fn classic(lake: &Lake, root: &str) {
    let expected = daily_rows(DAY, |_| true);
    let line = report(lake, OVERWRITE, &[]);
    let fields = ["sql", "kind", "table", "committed", "table_version", "rows_written", "partitions"];
    let created = json!({"sql": OVERWRITE, "kind": "insert_overwrite", "table": DAILY, "committed": true,
        "table_version": 0, "rows_written": customers_with_orders(DAY), "partitions": [format!("dt={DAY}")]});
    assert_eq!(pick(&line, &fields), created);
    assert_eq!(rows(lake, &uri(root, DAILY_DIR)), expected);
    let before = lake.digest(DAILY, None);
    let line = report(lake, OVERWRITE, &[]);
    assert_eq!(pick(&line, &["rows_written", "partitions"]), pick(&created, &["rows_written", "partitions"]));
    let after = lake.digest(DAILY, None);
    assert_eq!((&after.digest, after.rows), (&before.digest, before.rows), "the same content");
    assert!(after.version <= before.version + 1, "one commit at most");
    assert_eq!(rows(lake, &uri(root, DAILY_DIR)), expected);

    let customers = latest_changes(DAY).len();
    let line = report(lake, MERGE, &[]);
    let fields = ["sql", "kind", "table", "committed", "table_version", "changes"];
    let merged = json!({"sql": MERGE, "kind": "merge", "table": "core.customers", "committed": true,
        "table_version": 0, "changes": changes(customers, 0, 0)});
    assert_eq!(pick(&line, &fields), merged);
    assert_latest_customers(lake, root, DAY);
    let before = lake.digest("core.customers", None);
    let line = report(lake, MERGE, &[]);
    let unchanged = json!({"sql": MERGE, "kind": "merge", "table": "core.customers", "committed": false,
        "table_version": 0, "changes": changes(0, 0, 0)});
    assert_eq!(pick(&line, &fields), unchanged);
    assert_eq!(lake.digest("core.customers", None), before, "no commit, the same rows");
}

#[test]
fn the_issues_overwrite_and_merge_create_their_tables_and_change_nothing_run_again() {
    let lake = Lake::demo();
    assert!(!lake.root().join("analytics").exists() && !lake.root().join("core").exists(), "no job has run");
    classic(&lake, &local_root(&lake));
    assert_eq!(lake.commit_count("core/customers"), 1, "the second MERGE committed nothing");
    assert!(lake.commit_count(DAILY_DIR) <= 2);
}

/// Three days written by one dynamic overwrite, then two of them replaced by another: the third
/// keeps its rows and its files, the two hold exactly the new rows; run again, nothing changes.
fn dynamic(lake: &Lake, root: &str) {
    let (table, reader) = (uri(root, "analytics/by_day"), Reader::new(lake));
    let all = |day| daily_rows(day, |_| true);
    let few = |day| daily_rows(day, |id| id <= 10);
    let days = ["2026-09-01", "2026-09-02", "2026-09-03"].map(|d| format!("dt={d}"));
    let line = report(lake, THREE_DAYS, &[]);
    assert_eq!(
        pick(&line, &["committed", "partitions", "rows_written"]),
        json!({"committed": true, "partitions": days, "rows_written": daily_orders_rows("2026-09-01", "2026-09-03")})
    );
    assert_eq!(rows(lake, &table), sorted([all("2026-09-01"), all("2026-09-02"), all("2026-09-03")].concat()));
    let kept = || -> Vec<_> {
        reader.tree(root).into_iter().filter(|f| f.0.starts_with("analytics/by_day/dt=2026-09-02/")).collect()
    };
    let (files, day) = (kept(), content(lake, "analytics.by_day", Some("2026-09-02")));
    assert!(!files.is_empty(), "the day has files");

    let line = report(lake, TWO_DAYS, &[]);
    let written = few("2026-09-01").len() + few("2026-09-03").len();
    assert_eq!(
        pick(&line, &["committed", "partitions", "rows_written"]),
        json!({"committed": true, "partitions": [&days[0], &days[2]], "rows_written": written})
    );
    assert_eq!(rows(lake, &table), sorted([few("2026-09-01"), all("2026-09-02"), few("2026-09-03")].concat()));
    assert_eq!(content(lake, "analytics.by_day", Some("2026-09-02")), day, "the day not in the result");
    assert_eq!(kept(), files, "its files untouched");

    // Again, naming the dynamic partition column: the same rows.
    let before = lake.digest("analytics.by_day", None);
    let again = edited(TWO_DAYS, "by_day SELECT", "by_day PARTITION (dt) SELECT");
    assert_eq!(report(lake, &again, &[])["partitions"], json!([&days[0], &days[2]]));
    let after = lake.digest("analytics.by_day", None);
    assert_eq!((&after.digest, after.rows), (&before.digest, before.rows));
    assert!(after.version <= before.version + 1, "one commit at most");
    assert_eq!(kept(), files);
}

#[test]
fn a_dynamic_overwrite_replaces_exactly_the_partitions_of_its_result() {
    let lake = Lake::demo();
    dynamic(&lake, &local_root(&lake));
}

#[test]
fn the_issues_statements_and_a_dynamic_overwrite_run_on_s3() {
    let s3 = S3::new("sql");
    s3.lake.prepare_demo();
    classic(&s3.lake, s3.root());
    dynamic(&s3.lake, s3.root());
    assert!(!s3.lake.root().exists(), "nothing was written locally");
    // The root given with --root, not from the environment.
    let env: Vec<_> = s3.env().into_iter().filter(|(k, _)| *k != "LAKEWRITER_ROOT").collect();
    let project = s3.lake.project_file();
    let args = ["--project", project.to_str().expect("utf-8"), "--root", s3.root(), "--json", "sql", "-e"];
    let count = "SELECT COUNT(*) AS n FROM analytics.daily_orders";
    let run = lakewriter_with(&[&args[..], &[count]].concat(), s3.lake.path(), &env);
    run.assert_code(0);
    assert_eq!(query_rows(&json_lines(&run), 1), [json!({"n": customers_with_orders(DAY)})]);
}

#[test]
fn a_static_overwrite_replaces_its_partition_and_no_other() {
    let lake = Lake::demo();
    let (first, second, third) = ("2026-09-01", "2026-09-02", "2026-09-03");
    for day in [first, second, third] {
        report(&lake, &overwrite_day(day, ""), &[]);
    }
    let others = |lake: &Lake| {
        let files =
            [lake.partition_files(DAILY_DIR, "dt=2026-09-01"), lake.partition_files(DAILY_DIR, "dt=2026-09-03")];
        (content(lake, DAILY, Some(first)), content(lake, DAILY, Some(third)), files)
    };
    let before = others(&lake);
    assert!(before.2.iter().all(|f| !f.is_empty()), "the days have files");
    let few = overwrite_day(second, "AND customer_id <= 10");
    let line = report(&lake, &few, &[]);
    let replaced = json!({"committed": true, "table_version": 3, "partitions": ["dt=2026-09-02"],
        "rows_written": daily_rows(second, |id| id <= 10).len()});
    assert_eq!(pick(&line, &["committed", "table_version", "partitions", "rows_written"]), replaced);
    assert_eq!(others(&lake), before, "the other days' rows and files");
    let expected =
        sorted([daily_rows(first, |_| true), daily_rows(second, |id| id <= 10), daily_rows(third, |_| true)].concat());
    assert_eq!(rows(&lake, &uri(&local_root(&lake), DAILY_DIR)), expected);

    // Again with the count as INT, cast to the table's BIGINT (Spark's store assignment).
    let before_table = lake.digest(DAILY, None);
    report(&lake, &edited(&few, "COUNT(*) AS orders", "CAST(COUNT(*) AS INT) AS orders"), &[]);
    let after = lake.digest(DAILY, None);
    assert_eq!((&after.digest, after.rows), (&before_table.digest, before_table.rows));
    assert!(lake.commit_count(DAILY_DIR) <= 5, "one commit at most");
    assert_eq!(others(&lake), before);
}

#[test]
fn replace_all_makes_an_overwrite_without_partition_replace_the_whole_table() {
    let lake = Lake::demo();
    report(&lake, THREE_DAYS, &[]);
    let one_day = "INSERT OVERWRITE analytics.by_day SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, \
        dt FROM raw.orders WHERE dt = '2026-09-02' GROUP BY customer_id, dt";
    let mut before = None;
    for _ in 0..2 {
        let line = report(&lake, one_day, &["--replace-all"]);
        let whole = json!({"committed": true, "rows_written": customers_with_orders("2026-09-02"), "partitions": []});
        assert_eq!(pick(&line, &["committed", "rows_written", "partitions"]), whole);
        assert_eq!(rows(&lake, &uri(&local_root(&lake), "analytics/by_day")), daily_rows("2026-09-02", |_| true));
        let now = content(&lake, "analytics.by_day", None);
        assert_eq!(before.get_or_insert_with(|| now.clone()), &now, "run again, the same content");
    }
}

#[test]
fn an_overwrite_of_an_unpartitioned_table_replaces_all_of_it() {
    let lake = Lake::demo();
    let totals = |day: &str| {
        format!(
            "INSERT OVERWRITE analytics.totals SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue \
             FROM raw.orders WHERE dt = '{day}' GROUP BY customer_id"
        )
    };
    let table = uri(&local_root(&lake), "analytics/totals");
    report(&lake, &totals("2026-09-01"), &[]);
    assert_eq!(rows(&lake, &table), without_dt(daily_rows("2026-09-01", |_| true)));
    let mut before = None;
    for version in [1, 2] {
        let run = sql(&lake, &["-e", &totals("2026-09-02")]);
        run.assert_code(0);
        let rows_written = customers_with_orders("2026-09-02");
        run.assert_line(&format!(
            "[1/1] insert_overwrite analytics.totals: committed version {version} — {rows_written} rows written"
        ));
        assert_eq!(rows(&lake, &table), without_dt(daily_rows("2026-09-02", |_| true)), "the first day's rows gone");
        let now = content(&lake, "analytics.totals", None);
        assert_eq!(before.get_or_insert_with(|| now.clone()), &now, "run again, the same content");
    }
}

#[test]
fn insert_into_appends_each_time_it_runs_and_warns_so() {
    let lake = Lake::demo();
    let (day, table) = ("2026-09-01", uri(&local_root(&lake), "analytics/order_log"));
    let append = "INSERT INTO analytics.order_log SELECT order_id, customer_id, amount FROM raw.orders \
        WHERE dt = '2026-09-01'";
    let reader = Reader::new(&lake);
    for (times, version) in [(1, 0), (2, 1)] {
        let run = lake.cli(&["--json", "sql", "-e", append]);
        run.assert_code(0);
        let line = json_lines(&run).remove(0);
        let appended =
            json!({"kind": "insert_into", "committed": true, "table_version": version, "rows_written": orders(day)});
        assert_eq!(pick(&line, &["kind", "committed", "table_version", "rows_written"]), appended);
        assert!(run.stderr.contains("INSERT INTO appends: running it again appends the rows again"), "{}", run.stderr);
        let read = reader.read(&table);
        assert_eq!((read.rows, read.distinct_rows), (times * orders(day), orders(day)), "appended {times} time(s)");
    }
    // A column list (the others NULL) and VALUES, whose numbers are cast to the table's types.
    report(&lake, "INSERT INTO analytics.order_log (customer_id, order_id) SELECT 7, 99", &[]);
    report(&lake, "INSERT INTO analytics.order_log VALUES (100, 8, 12.5), (101, 9, 3)", &[]);
    let added: Vec<Value> = rows(&lake, &table).into_iter().filter(|r| r["order_id"].as_i64() < Some(1000)).collect();
    let expected = vec![
        json!({"order_id": 99, "customer_id": 7, "amount": null}),
        json!({"order_id": 100, "customer_id": 8, "amount": "12.50"}),
        json!({"order_id": 101, "customer_id": 9, "amount": "3.00"}),
    ];
    assert_eq!(added, sorted(expected));
    assert_eq!(reader.read(&table).rows, 2 * orders(day) + 3);
}

/// Creates `core.accounts` by a MERGE into a table that does not exist: the first WHEN NOT
/// MATCHED clause whose condition holds decides each row.
const OPEN_ACCOUNTS: &str = "MERGE INTO core.accounts AS t USING (SELECT * FROM (VALUES (1, 'a', 10, 'pending'), \
    (2, 'b', 20, 'pending'), (3, 'c', 30, 'pending'), (4, 'd', 40, 'pending'), (5, 'e', 50, 'pending'), \
    (6, 'f', 60, 'closed')) AS v(id, name, balance, status)) AS s ON t.id = s.id \
    WHEN NOT MATCHED AND s.status = 'closed' THEN INSERT * \
    WHEN NOT MATCHED THEN INSERT (id, name, balance, status) VALUES (s.id, s.name, s.balance, 'open')";

/// The changes merged into `core.accounts`: each row's `action` picks its clause.
const CHANGES: &str = "INSERT OVERWRITE core.changes SELECT * FROM (VALUES (1, 'a2', 5, 'open', 'update'), \
    (2, 'b2', 99, 'vip', 'replace'), (3, 'x', 0, 'open', 'delete'), (4, 'd2', 1, 'open', 'ignore'), \
    (7, 'g', 70, 'new', 'insert'), (8, 'h', 80, 'open', 'upsert'), (9, 'i', 90, 'open', 'skip')) \
    AS v(id, name, balance, status, action)";

/// A MERGE with every kind of clause.
const EVERY_CLAUSE: &str = "MERGE INTO core.accounts AS t USING core.changes AS s ON t.id = s.id \
    WHEN MATCHED AND s.action = 'update' THEN UPDATE SET name = s.name, balance = t.balance + s.balance \
    WHEN MATCHED AND s.action = 'replace' THEN UPDATE SET * \
    WHEN MATCHED AND s.action = 'delete' THEN DELETE \
    WHEN NOT MATCHED AND s.action = 'insert' THEN INSERT (id, name, balance, status) \
    VALUES (s.id, s.name, s.balance, 'created') \
    WHEN NOT MATCHED BY TARGET AND s.action = 'upsert' THEN INSERT * \
    WHEN NOT MATCHED BY SOURCE AND t.status = 'closed' THEN DELETE \
    WHEN NOT MATCHED BY SOURCE THEN UPDATE SET status = 'dormant'";

fn account(id: i64, name: &str, balance: i64, status: &str) -> Value {
    json!({"id": id, "name": name, "balance": balance, "status": status})
}

#[test]
fn a_merge_runs_every_kind_of_clause_as_written() {
    let lake = Lake::demo();
    let accounts = uri(&local_root(&lake), "core/accounts");
    let fields = ["committed", "table_version", "changes"];
    let line = report(&lake, OPEN_ACCOUNTS, &[]);
    assert_eq!(pick(&line, &fields), json!({"committed": true, "table_version": 0, "changes": changes(6, 0, 0)}));
    let opened = ["a", "b", "c", "d", "e"].iter().zip(1..).map(|(name, id)| account(id, name, 10 * id, "open"));
    let opened: Vec<Value> = opened.chain([account(6, "f", 60, "closed")]).collect();
    assert_eq!(rows(&lake, &accounts), sorted(opened));

    report(&lake, CHANGES, &[]);
    let line = report(&lake, EVERY_CLAUSE, &[]);
    // Inserted 7 and 8 (not 9: no clause); updated 1, 2 and 5 (not 4: no clause); deleted 3 and 6.
    assert_eq!(pick(&line, &fields), json!({"committed": true, "table_version": 1, "changes": changes(2, 3, 2)}));
    let merged = sorted(vec![
        account(1, "a2", 15, "open"),
        account(2, "b2", 99, "vip"),
        account(4, "d", 40, "open"),
        account(5, "e", 50, "dormant"),
        account(7, "g", 70, "created"),
        account(8, "h", 80, "open"),
    ]);
    assert_eq!(rows(&lake, &accounts), merged);

    // No clause holds for any row: no commit.
    let nothing = "MERGE INTO core.accounts AS t USING core.changes AS s ON t.id = s.id \
        WHEN MATCHED AND s.action = 'never' THEN DELETE WHEN NOT MATCHED AND s.balance < 0 THEN INSERT *";
    let line = report(&lake, nothing, &[]);
    assert_eq!(pick(&line, &fields), json!({"committed": false, "table_version": 1, "changes": changes(0, 0, 0)}));
    assert_eq!(lake.commit_count("core/accounts"), 2);
    assert_eq!(rows(&lake, &accounts), merged);
}

#[test]
fn delete_and_update_commit_once_and_not_at_all_where_no_row_matches() {
    let lake = Lake::demo();
    for day in ["2026-09-01", "2026-09-02"] {
        report(&lake, &overwrite_day(day, ""), &[]);
    }
    let table = uri(&local_root(&lake), DAILY_DIR);
    let mut expected = [daily_rows("2026-09-01", |_| true), daily_rows("2026-09-02", |_| true)].concat();
    let single = expected.iter().filter(|r| r["orders"] == 1).count();
    expected.retain(|r| r["orders"] != 1);
    let delete = "DELETE FROM analytics.daily_orders WHERE orders = 1";
    let run = sql(&lake, &["-e", delete]);
    run.assert_code(0);
    run.assert_line(&format!(
        "[1/1] delete analytics.daily_orders: committed version 2 — 0 inserted, 0 updated, {single} deleted"
    ));
    assert_eq!(rows(&lake, &table), sorted(expected.clone()));
    let before = lake.digest(DAILY, None);
    let run = sql(&lake, &["-e", delete]);
    run.assert_code(0);
    run.assert_line(
        "[1/1] delete analytics.daily_orders: no new table version (version 2) — 0 inserted, 0 updated, 0 deleted; \
         no row matched: nothing deleted",
    );
    assert_eq!((lake.digest(DAILY, None), lake.commit_count(DAILY_DIR)), (before, 3), "no commit");

    let update = "UPDATE analytics.daily_orders SET revenue = 0 WHERE customer_id <= 5";
    let few = |r: &Value| r["customer_id"].as_i64() <= Some(5);
    let updated = expected.iter().filter(|r| few(r)).count();
    expected.iter_mut().filter(|r| few(r)).for_each(|r| r["revenue"] = json!("0.00"));
    let fields = ["kind", "committed", "table_version", "changes"];
    let line = report(&lake, update, &[]);
    let once = json!({"kind": "update", "committed": true, "table_version": 3, "changes": changes(0, updated, 0)});
    assert_eq!(pick(&line, &fields), once);
    assert_eq!(rows(&lake, &table), sorted(expected));
    let before = content(&lake, DAILY, None);
    report(&lake, update, &[]);
    assert_eq!((content(&lake, DAILY, None), lake.commit_count(DAILY_DIR) <= 5), (before, true), "the same rows");

    let commits = lake.commit_count(DAILY_DIR);
    let none = "UPDATE analytics.daily_orders AS d SET orders = d.orders + 1 WHERE d.customer_id > 1000";
    let line = report(&lake, none, &[]);
    assert_eq!(pick(&line, &["committed", "changes"]), json!({"committed": false, "changes": changes(0, 0, 0)}));
    assert_eq!(lake.commit_count(DAILY_DIR), commits, "no commit");
}

#[test]
fn select_prints_a_table_or_json_rows_and_explain_its_plan_and_both_write_nothing() {
    let lake = Lake::demo();
    let (reader, root) = (Reader::new(&lake), local_root(&lake));
    let tree = reader.tree(&root);
    let query = "SELECT customer_id, COUNT(*) AS orders FROM raw.orders WHERE dt = '2026-09-01' \
        GROUP BY customer_id ORDER BY customer_id LIMIT 3";
    let first: Vec<checks::Row> = checks::rows("2026-09-01").into_iter().take(3).collect();
    let run = sql(&lake, &["-e", query]);
    run.assert_code(0);
    let rule = "+-------------+--------+".to_owned();
    let mut table = vec![rule.clone(), "| customer_id | orders |".to_owned(), rule.clone()];
    table.extend(first.iter().map(|r| format!("| {:<11} | {:<6} |", r.id, r.orders)));
    table.extend([rule, "3 rows".to_owned()]);
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), table);
    let objects: Vec<Value> = first.iter().map(|r| json!({"customer_id": r.id, "orders": r.orders})).collect();
    assert_eq!(query_rows(&sql_json(&lake, query, &[]), 1), objects);

    let run = sql(&lake, &["-e", "SELECT COUNT(*) AS n FROM raw.orders WHERE dt = '2026-09-01'"]);
    run.assert_code(0);
    assert!(run.stdout.contains(&format!("| {} ", orders("2026-09-01"))) && run.stdout.ends_with("+\n1 row\n"));

    let run = sql(&lake, &["-e", &format!("EXPLAIN {query}")]);
    run.assert_code(0);
    for part in ["| logical_plan ", "| physical_plan ", "TableScan: raw.orders"] {
        assert!(run.stdout.contains(part), "no `{part}` in:\n{}", run.stdout);
    }
    assert_eq!(reader.tree(&root), tree, "nothing written");
}

#[test]
fn a_file_of_statements_runs_them_in_order() {
    let lake = Lake::demo();
    let (first, second) = ("2026-09-01", "2026-09-02");
    let file = lake.path().join("load.sql");
    let text = format!(
        "-- two days, a clean-up, a look\n{};\n{};\nDELETE FROM analytics.daily_orders WHERE orders = 1;\n\
         SELECT dt, COUNT(*) AS customers FROM analytics.daily_orders GROUP BY dt ORDER BY dt;\n",
        overwrite_day(first, ""),
        overwrite_day(second, "")
    );
    std::fs::write(&file, text).expect("write the SQL file");
    let run = sql(&lake, &[file.to_str().expect("utf-8 path")]);
    run.assert_code(0);
    let (one, two) = (daily_rows(first, |_| true), daily_rows(second, |_| true));
    let kept = |rows: &[Value]| rows.iter().filter(|r| r["orders"] != 1).count();
    let single = one.len() + two.len() - kept(&one) - kept(&two);
    let written = |n, version, rows: usize, day| {
        format!(
            "[{n}/4] insert_overwrite {DAILY}: committed version {version} — {rows} rows written; replaced dt={day}"
        )
    };
    let rule = "+------------+-----------+";
    let expected = [
        written(1, 0, one.len(), first),
        written(2, 1, two.len(), second),
        format!("[3/4] delete {DAILY}: committed version 2 — 0 inserted, 0 updated, {single} deleted"),
        rule.to_owned(),
        "| dt         | customers |".to_owned(),
        rule.to_owned(),
        format!("| {first} | {:<9} |", kept(&one)),
        format!("| {second} | {:<9} |", kept(&two)),
        rule.to_owned(),
        "2 rows".to_owned(),
    ];
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn dt_binds_as_a_date_in_queries_partition_values_and_predicates() {
    let lake = Lake::demo();
    let load = "INSERT OVERWRITE analytics.per_day PARTITION (dt = $dt) SELECT customer_id, COUNT(*) AS orders, \
        SUM(amount) AS revenue FROM raw.orders WHERE dt = $dt GROUP BY customer_id";
    let run = sql(&lake, &["-e", load]);
    run.assert_code(2);
    assert_eq!(run.error_lines(), ["error: statement 1 of 1 uses $dt: give its value with --dt YYYY-MM-DD"]);
    assert!(!lake.root().join("analytics").exists(), "nothing written");
    // Checked for every statement before the first runs: the first, which needs no date, is not run.
    let run = sql(&lake, &["-e", "INSERT OVERWRITE analytics.undated SELECT 1 AS a; SELECT $dt AS d"]);
    run.assert_code(2);
    assert_eq!(run.error_lines(), ["error: statement 2 of 2 uses $dt: give its value with --dt YYYY-MM-DD"]);
    assert!(!lake.root().join("analytics").exists(), "nothing written");

    let (fifth, sixth) = ("2026-09-05", "2026-09-06");
    for day in [fifth, sixth] {
        let line = report(&lake, load, &["--dt", day]);
        let replaced = json!({"partitions": [format!("dt={day}")], "rows_written": customers_with_orders(day)});
        assert_eq!(pick(&line, &["partitions", "rows_written"]), replaced);
    }
    let table = uri(&local_root(&lake), "analytics/per_day");
    assert_eq!(rows(&lake, &table), sorted([daily_rows(fifth, |_| true), daily_rows(sixth, |_| true)].concat()));
    let types = sql_json(&lake, "SELECT DISTINCT typeof(dt) AS t FROM analytics.per_day", &[]);
    assert_eq!(query_rows(&types, 1), [json!({"t": "date"})], "the partition column is a DATE");

    let before = content(&lake, "analytics.per_day", Some(fifth));
    let delete = "DELETE FROM analytics.per_day WHERE dt = $dt AND orders = 1";
    let single = daily_rows(sixth, |_| true).iter().filter(|r| r["orders"] == 1).count();
    assert_eq!(report(&lake, delete, &["--dt", sixth])["changes"], changes(0, 0, single));
    assert_eq!(content(&lake, "analytics.per_day", Some(fifth)), before, "the other day untouched");
    let count = sql_json(&lake, "SELECT COUNT(*) AS n FROM analytics.per_day WHERE dt = $dt", &["--dt", sixth]);
    assert_eq!(query_rows(&count, 1), [json!({"n": daily_rows(sixth, |_| true).len() - single})]);
}
