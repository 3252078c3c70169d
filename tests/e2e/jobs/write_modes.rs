//! `merge`, `delete_insert`, `append_dedup`, `append`, `rebuild`, and `lakewriter verify`.

use crate::support::{Change, Changes, Job, Lake, Project, day, orders};

const CUSTOMERS: &str = "core.customers";
const CUSTOMERS_SQL: &str = "SELECT customer_id, email, tier, updated_at, op FROM raw.customers_batch WHERE dt = $dt";

/// `customers`: each day's customer changes merged into `core.customers`, deletes as tombstones.
fn customers() -> Job {
    Job::merge("customers", CUSTOMERS, &["customer_id"], "updated_at").delete_when("op = 'delete'").sql(CUSTOMERS_SQL)
}

fn merge_project() -> Project {
    Project::new().job(customers())
}

fn up<'a>(id: i64, email: &'a str, tier: &'a str, at: i64) -> Change<'a> {
    (Some(id), email, tier, Some(at), "upsert")
}

fn delete(id: i64, at: i64) -> Change<'static> {
    (Some(id), "gone@example.com", "none", Some(at), "delete")
}

/// A lake with only the given customer change files: (day, file, rows).
fn changes_lake(project: &Project, files: &[(&str, &str, Vec<Change<'_>>)]) -> Lake {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    for (day, file, rows) in files {
        lake.write_changes(day, file, rows);
    }
    lake.set_project(project);
    lake
}

fn run_day(lake: &Lake, job: &str, day: &str) -> crate::support::Report {
    lake.cli(&["--json", "run", job, "--dt", day]).assert_code(0).json().0.remove(0)
}

#[test]
fn merge_replays_and_late_batches_change_nothing() {
    let files = vec![
        ("2026-09-01", "part-0.parquet", vec![up(1, "a1@x", "gold", 100), up(2, "b1@x", "silver", 100)]),
        ("2026-09-02", "part-0.parquet", vec![up(1, "a2@x", "gold", 200), up(3, "c2@x", "bronze", 200)]),
    ];
    let in_order = changes_lake(&merge_project(), &files);
    let first = run_day(&in_order, "customers", "2026-09-01");
    assert_eq!(first.changes.as_ref().map(|c| (c.inserted, c.updated)), Some((2, 0)));
    let second = run_day(&in_order, "customers", "2026-09-02");
    let c = second.changes.as_ref().expect("changes");
    assert_eq!((c.inserted, c.updated, c.deleted, c.unchanged), (1, 1, 0, 0));
    let after = in_order.digest(CUSTOMERS, None);
    assert_eq!(after.rows, 3);

    // The same batch again, then the older batch after the newer one: no change, no new version.
    for (day, unchanged) in [("2026-09-02", 2), ("2026-09-01", 2)] {
        let replay = run_day(&in_order, "customers", day);
        assert!(!replay.committed, "{replay:?}");
        assert_eq!(
            replay.changes.as_ref().map(|c| (c.inserted + c.updated + c.deleted, c.unchanged)),
            Some((0, unchanged))
        );
        assert_eq!(replay.table_version, Some(after.version));
        assert_eq!(in_order.digest(CUSTOMERS, None), after);
    }

    // Out of order from the start: the same table.
    let reversed = changes_lake(&merge_project(), &files);
    run_day(&reversed, "customers", "2026-09-02");
    let late = run_day(&reversed, "customers", "2026-09-01");
    assert_eq!(late.changes.as_ref().map(|c| (c.inserted, c.updated, c.unchanged)), Some((1, 0, 1)));
    let other = reversed.digest(CUSTOMERS, None);
    assert_eq!((other.digest, other.rows), (after.digest, after.rows));
}

#[test]
fn merge_keeps_one_winner_per_key_whatever_the_file_order() {
    // Key 1: a tie on updated_at (100) broken by the greater email; key 2: the newer row.
    let part_a = vec![up(1, "x1@x", "gold", 100), up(1, "x2@x", "silver", 100), up(2, "y1@x", "gold", 50)];
    let part_b = vec![up(2, "y2@x", "bronze", 60), up(1, "x0@x", "gold", 90)];
    let reversed = |rows: &Vec<Change<'static>>| rows.iter().rev().copied().collect::<Vec<_>>();
    let a = changes_lake(
        &merge_project(),
        &[("2026-09-01", "part-0.parquet", part_a.clone()), ("2026-09-01", "part-1.parquet", part_b.clone())],
    );
    let b = changes_lake(
        &merge_project(),
        &[("2026-09-01", "part-0.parquet", reversed(&part_b)), ("2026-09-01", "part-1.parquet", reversed(&part_a))],
    );
    let winners = changes_lake(
        &merge_project(),
        &[("2026-09-01", "part-0.parquet", vec![up(1, "x2@x", "silver", 100), up(2, "y2@x", "bronze", 60)])],
    );

    let report = run_day(&a, "customers", "2026-09-01");
    assert_eq!(report.changes.as_ref().map(|c| (c.inserted, c.duplicates_dropped)), Some((2, 3)));
    run_day(&b, "customers", "2026-09-01");
    run_day(&winners, "customers", "2026-09-01");
    let expected = winners.digest(CUSTOMERS, None);
    assert_eq!(a.digest(CUSTOMERS, None).digest, expected.digest);
    assert_eq!(b.digest(CUSTOMERS, None).digest, expected.digest);

    // on_duplicate_keys = "error": the duplicated keys are named, nothing is written.
    let strict = changes_lake(
        &Project::new().job(customers().duplicate_keys_are_errors()),
        &[("2026-09-01", "part-0.parquet", part_a), ("2026-09-01", "part-1.parquet", part_b)],
    );
    let run = strict.cli(&["--json", "run", "customers", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("error");
    assert_eq!(
        error,
        "customers dt=2026-09-01: 2 key(s) appear more than once in the source (on_duplicate_keys = \"error\"); \
         e.g. customer_id=1; customer_id=2"
    );
    assert!(!strict.root().join("core").exists(), "no table was created");
}

#[test]
fn merge_refuses_null_keys_and_versions() {
    let lake = changes_lake(
        &merge_project(),
        &[(
            "2026-09-01",
            "part-0.parquet",
            vec![
                (None, "n@x", "gold", Some(1), "upsert"),
                (Some(2), "m@x", "gold", None, "upsert"),
                up(3, "ok@x", "gold", 5),
            ],
        )],
    );
    let run = lake.cli(&["--json", "run", "customers", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("error");
    assert_eq!(
        error,
        "customers dt=2026-09-01: 2 source row(s) have a NULL in customer_id, updated_at; e.g. customer_id=NULL, \
         updated_at=1970-01-01T00:00:01Z; customer_id=2, updated_at=NULL"
    );
    assert!(!lake.root().join("core").exists(), "nothing committed");
}

#[test]
fn a_delete_is_not_undone_by_an_older_upsert() {
    let files = vec![
        ("2026-09-01", "part-0.parquet", vec![up(1, "a@x", "gold", 100), up(2, "b@x", "gold", 100)]),
        ("2026-09-02", "part-0.parquet", vec![delete(1, 300)]),
        ("2026-09-03", "part-0.parquet", vec![up(1, "late@x", "silver", 200)]),
    ];
    let lake = changes_lake(&merge_project(), &files);
    run_day(&lake, "customers", "2026-09-01");
    let deleted = run_day(&lake, "customers", "2026-09-02");
    assert_eq!(deleted.changes.as_ref().map(|c| (c.deleted, c.updated)), Some((1, 0)));
    let after_delete = lake.digest(CUSTOMERS, None);
    let older_upsert = run_day(&lake, "customers", "2026-09-03");
    assert_eq!(older_upsert.changes.as_ref().map(|c| c.unchanged), Some(1));
    assert_eq!(older_upsert.rows_written, Some(0), "no row changes");
    let digest = lake.digest(CUSTOMERS, None);
    assert_eq!((&digest.digest, digest.rows), (&after_delete.digest, after_delete.rows), "the tombstone stands");
    // The run committed the partition's state only (so it reads as fresh); once fresh, a rerun
    // that changes nothing commits nothing.
    assert!(older_upsert.committed);
    let again = run_day(&lake, "customers", "2026-09-03");
    assert!(!again.committed && again.table_version == older_upsert.table_version, "{again:?}");

    // The delete arriving first leaves a tombstone that the older changes cannot pass.
    let reversed = changes_lake(&merge_project(), &files);
    for day in ["2026-09-02", "2026-09-03", "2026-09-01"] {
        run_day(&reversed, "customers", day);
    }
    assert_eq!(reversed.digest(CUSTOMERS, None).digest, after_delete.digest);
}

/// Four jobs over `raw.orders`, one per mode: `log` (append), `seen` (append_dedup), `by_day`
/// (delete_insert, on `order_date` of an unpartitioned table) and `totals` (rebuild).
fn orders_project() -> Project {
    Project::new()
        .job(
            Job::append("log", "events.orders_log")
                .sql("SELECT order_id, customer_id, amount, dt FROM raw.orders WHERE dt = $dt"),
        )
        .job(Job::append_dedup("seen", "events.orders_seen", &["order_id"]).sql(
            "SELECT order_id, customer_id, amount, dt FROM raw.orders WHERE dt <= $dt\n\
             UNION ALL\n\
             SELECT order_id, customer_id, amount, dt FROM raw.orders WHERE dt = $dt AND customer_id < 10",
        ))
        .job(Job::delete_insert("by_day", "analytics.orders_by_day", "order_date = $dt").sql(
            "SELECT dt AS order_date, customer_id, COUNT(*) AS orders FROM raw.orders WHERE dt = $dt \
             GROUP BY dt, customer_id",
        ))
        .job(
            Job::rebuild("totals", "analytics.customer_totals").sql(
                "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue FROM raw.orders GROUP BY customer_id",
            ),
        )
}

fn orders_lake() -> Lake {
    let lake = Lake::new("2026-09-01", "2026-09-03");
    lake.set_project(&orders_project());
    lake
}

#[test]
fn append_is_exactly_once_per_partition_unless_forced() {
    let lake = orders_lake();
    let first = run_day(&lake, "log", "2026-09-01");
    let rows = orders("2026-09-01");
    assert_eq!((first.committed, first.rows_written), (true, Some(rows)), "{first:?}");
    let before = lake.digest("events.orders_log", None);

    let run = lake.cli(&["--json", "run", "log", "--dt", "2026-09-01"]);
    run.assert_code(0);
    let (reports, summary) = run.json();
    assert_eq!((reports[0].status.as_str(), summary.skipped), ("skipped", 1));
    assert_eq!(
        reports[0].note.as_deref(),
        Some("already appended; nothing appended. --force appends again and duplicates these rows")
    );
    assert_eq!(lake.digest("events.orders_log", None), before);

    let forced = lake.cli(&["--json", "run", "log", "--dt", "2026-09-01", "--force"]).assert_code(0).json().0.remove(0);
    assert_eq!(forced.rows_written, Some(rows));
    assert_eq!(
        forced.note.as_deref(),
        Some("--force: appended again; rows appended before for this partition are now duplicated")
    );
    assert_eq!(lake.digest("events.orders_log", None).rows, 2 * rows);

    let run = lake.cli(&["run", "log"]);
    run.assert_code(2);
    assert_eq!(
        run.stderr,
        "error: job `log` (write = \"append\") runs for a date: pass --dt YYYY-MM-DD (an append without a partition \
         could not be made exactly-once)\n"
    );
    let run = lake.cli(&["run", "seen", "--dt", "2026-09-01", "--force"]);
    run.assert_code(2);
    assert_eq!(run.stderr, "error: --force applies to write = \"append\" only; job `seen` is append_dedup\n");
}

/// The orders of `day` that `seen` reads twice: those of customers 1 to 9.
fn twice(day: &str) -> u64 {
    let orders = lakewriter_datagen::orders_for(self::day(day));
    let customers = orders.column_by_name("customer_id").expect("customer_id");
    let customers = customers.as_any().downcast_ref::<arrow::array::Int64Array>().expect("Int64 customer ids");
    customers.values().iter().filter(|&&c| c < 10).count() as u64
}

#[test]
fn append_dedup_inserts_only_new_keys() {
    let lake = orders_lake();
    // `seen` reads the orders up to the day, and the day's orders of customers 1 to 9 a second time.
    let first = run_day(&lake, "seen", "2026-09-01");
    let (day1, day2) = (orders("2026-09-01"), orders("2026-09-02"));
    let c1 = Changes { inserted: day1, updated: 0, deleted: 0, unchanged: 0, duplicates_dropped: twice("2026-09-01") };
    assert_eq!(first.changes, Some(c1));
    let second = run_day(&lake, "seen", "2026-09-02");
    let c2 =
        Changes { inserted: day2, updated: 0, deleted: 0, unchanged: day1, duplicates_dropped: twice("2026-09-02") };
    assert_eq!(second.changes, Some(c2), "the first day's keys are skipped");
    let before = lake.digest("events.orders_seen", None);
    assert_eq!(before.rows, day1 + day2);

    let again = run_day(&lake, "seen", "2026-09-02");
    assert!(!again.committed);
    assert_eq!(again.table_version, Some(before.version));
    assert_eq!(lake.digest("events.orders_seen", None), before);
}

#[test]
fn delete_insert_replaces_its_slice_of_an_unpartitioned_table() {
    let lake = orders_lake();
    lake.cli(&["backfill", "by_day", "--from", "2026-09-01", "--to", "2026-09-03"]).assert_code(0);
    assert!(!lake.root().join("analytics/orders_by_day/order_date=2026-09-01").exists(), "not partitioned");
    let before = lake.digest("analytics.orders_by_day", None);
    let again = run_day(&lake, "by_day", "2026-09-02");
    assert_eq!(again.table_version, Some(before.version + 1));
    let after = lake.digest("analytics.orders_by_day", None);
    assert_eq!((after.digest, after.rows), (before.digest.clone(), before.rows));
}

#[test]
fn rebuild_replaces_the_whole_table_and_runs_without_a_date() {
    let lake = orders_lake();
    let first = lake.cli(&["--json", "run", "totals"]).assert_code(0).json().0.remove(0);
    assert_eq!(first.partition, "all");
    let before = lake.digest("analytics.customer_totals", None);
    lake.cli(&["run", "totals"]).assert_code(0);
    let after = lake.digest("analytics.customer_totals", None);
    assert_eq!((after.digest, after.rows, after.version), (before.digest, before.rows, before.version + 1));

    let run = lake.cli(&["run", "totals", "--dt", "2026-09-01"]);
    run.assert_code(2);
    assert_eq!(run.stderr, "error: job `totals` (write = \"rebuild\") rebuilds the whole table: run it without --dt\n");
    let run = lake.cli(&["backfill", "totals", "--from", "2026-09-01", "--to", "2026-09-02"]);
    run.assert_code(2);
    assert_eq!(
        run.stderr,
        "error: job `totals` (write = \"rebuild\") has no partitions to backfill: use `lakewriter run totals`\n"
    );
}

#[test]
fn verify_passes_every_idempotent_mode_and_fails_bare_append() {
    let lake = orders_lake();
    lake.write_changes(
        "2026-09-01",
        "part-0.parquet",
        &[up(1, "a@x", "gold", 1), up(1, "b@x", "gold", 1), delete(2, 3)],
    );
    let daily = Job::new("daily", "analytics.daily")
        .sql("SELECT customer_id, COUNT(*) AS orders, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id");
    lake.set_project(&orders_project().job(daily).job(customers()));
    // An existing target, so that verify works on a copy of real history.
    lake.cli(&["run", "log", "--dt", "2026-09-01"]).assert_code(0);
    let log_commits = lake.commit_count("events/orders_log");

    let digests: Vec<String> = PASSING.iter().map(|&(job, day, _)| verified_digest(&lake, job, day)).collect();
    // The second application of a merge finds its partition fresh on the copy: it commits nothing.
    let run = lake.cli(&["--json", "verify", "customers", "--dt", "2026-09-01"]);
    let verdict: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("verdict JSON");
    assert_eq!(verdict["second"]["fresh_before"], true, "{verdict}");
    assert_eq!(verdict["second"]["committed"], false, "{verdict}");

    let run = lake.cli(&["--json", "verify", "log", "--dt", "2026-09-02", "--force"]);
    run.assert_code(1);
    let verdict: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("verdict JSON");
    assert_eq!(verdict["pass"], false);
    let rows = orders("2026-09-02");
    assert_eq!(verdict["first"]["rows_written"].as_u64(), Some(rows));
    assert_eq!((verdict["rows_added"].as_u64(), verdict["rows_removed"].as_u64()), (Some(rows), Some(0)));
    assert_eq!(verdict["digest_first"], digests[6], "the first application is the passing verification's");
    let text = lake.cli(&["verify", "log", "--dt", "2026-09-02", "--force"]);
    text.assert_code(1);
    let (first, second) = (verdict["digest_first"].as_str(), verdict["digest_second"].as_str());
    let fail = format!(
        "FAIL log dt=2026-09-02: the second application changed the table: {rows} rows added, 0 rows removed \
         (digest {} -> {})",
        first.expect("the digest after the first application"),
        second.expect("the digest after the second")
    );
    // The FAIL line, then the first five rows the second application added, as `+ column=value`.
    let lines: Vec<&str> = text.stdout.lines().collect();
    let at = lines.iter().position(|l| *l == fail).unwrap_or_else(|| panic!("no `{fail}` in:\n{}", text.stdout));
    let examples = &lines[at + 1..];
    assert_eq!(examples.len(), 5, "{}", text.stdout);
    assert!(
        examples.iter().all(|l| l.starts_with("  + order_id=") && l.ends_with(", dt=2026-09-02")),
        "{}",
        text.stdout
    );
    let shown: Vec<&serde_json::Value> = verdict["added_examples"].as_array().expect("added_examples").iter().collect();
    assert_eq!(shown.len(), 5, "--json shows the same five rows: {verdict}");

    assert_eq!(lake.commit_count("events/orders_log"), log_commits, "verify never writes the real table");
    for table in [
        "analytics/daily",
        "core/customers",
        "events/orders_seen",
        "analytics/orders_by_day",
        "analytics/customer_totals",
    ] {
        assert!(!lake.root().join(table).exists(), "{table} was created by verify");
    }

    // Each passing verification found the content that one real run of its job writes.
    for (&(job, day, target), digest) in PASSING.iter().zip(&digests) {
        let mut args = vec!["run", job];
        args.extend(day.iter().flat_map(|d| ["--dt", d]));
        lake.cli(&args).assert_code(0);
        assert_eq!(&lake.digest(target, None).digest, digest, "{job} {day:?}");
    }
}

/// The verifications that pass, as `(job, day, target)`, in the order they run.
const PASSING: [(&str, Option<&str>, &str); 7] = [
    ("daily", Some("2026-09-02"), "analytics.daily"),
    ("customers", Some("2026-09-01"), "core.customers"),
    ("seen", Some("2026-09-02"), "events.orders_seen"),
    ("by_day", Some("2026-09-02"), "analytics.orders_by_day"),
    ("totals", None, "analytics.customer_totals"),
    ("log", Some("2026-09-01"), "events.orders_log"),
    ("log", Some("2026-09-02"), "events.orders_log"),
];

/// Runs `verify JOB [--dt DAY]`, asserts that it passes, and returns the digest its verdict
/// names: the copy's, after the two applications.
#[track_caller]
fn verified_digest(lake: &Lake, job: &str, day: Option<&str>) -> String {
    let mut args = vec!["verify", job];
    args.extend(day.iter().flat_map(|d| ["--dt", d]));
    let run = lake.cli(&args);
    run.assert_code(0);
    // The two applications (each with its duration), then the verdict.
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{args:?}: {}", run.stdout);
    let partition = day.map_or_else(|| "all".to_owned(), |d| format!("dt={d}"));
    let pass = format!("PASS {job} {partition}: the second application left the content unchanged (digest ");
    let digest = lines[2].strip_prefix(&pass).and_then(|rest| rest.strip_suffix(')'));
    digest.unwrap_or_else(|| panic!("{args:?}: {}", run.stdout)).to_owned()
}

#[test]
fn a_forced_first_append_says_nothing_about_duplicates() {
    let lake = orders_lake();
    let first = lake.cli(&["--json", "run", "log", "--dt", "2026-09-03", "--force"]).assert_code(0).json().0.remove(0);
    assert_eq!((first.status.as_str(), first.committed, first.note), ("ok", true, None));
}
