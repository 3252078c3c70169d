//! Jobs written as a statement (no `write` key): `INSERT OVERWRITE … PARTITION (dt = $dt)`,
//! `INSERT INTO` and `MERGE INTO` through `backfill` (`--all`, `--downstream`, `--only stale`),
//! `status`, `plan`, `verify`, `graph`, `lint` and `--dry-run`, the partition state each commit
//! carries, and the statements a job refuses; locally and on S3. Every expectation is computed
//! here — from a job of the matching write mode (its twin), from the raw data
//! (`lakewriter-datagen`) or from a fresh run — never taken from what the command printed.

use std::collections::{BTreeMap, BTreeSet};

use arrow::array::{Int64Array, StringArray, TimestampMicrosecondArray};
use serde_json::{Value, json};

use crate::support::PartitionStatus;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{
    Change as RawChange, Job, Lake, Project, Run, Write, customers_with_orders, daily_orders_rows, day, days,
    distinct_customers, edited, orders,
};
use crate::support::{json_lines, parse_lines};

const FROM: &str = "2026-09-01";

/// `daily`'s statement: a partition overwrite, the daily revenue, `dt` appended as the
/// table's last column.
const DAILY_STATEMENT: &str = "INSERT OVERWRITE TABLE analytics.daily PARTITION (dt = $dt)
SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue
FROM raw.orders WHERE dt = $dt GROUP BY customer_id
";

/// A partition overwrite: [`DAILY_STATEMENT`].
fn daily_job() -> Job {
    Job::statement("daily", "analytics.daily", DAILY_STATEMENT)
}

/// A 7-day window over `daily`'s table: a job below it.
fn weekly_job() -> Job {
    Job::statement(
        "weekly",
        "analytics.weekly",
        "INSERT OVERWRITE analytics.weekly PARTITION (dt = $dt)
SELECT customer_id, SUM(revenue) AS revenue_7d FROM analytics.daily
WHERE dt BETWEEN $dt - INTERVAL '6 days' AND $dt GROUP BY customer_id
",
    )
}

/// The newer-wins merge of a day's customer changes. A batch holds changes to one
/// customer at the very same time; the ROW_NUMBER's order breaks those ties (by email, then tier)
/// so that which change a day keeps is known.
fn customers_job() -> Job {
    Job::statement(
        "customers",
        "core.customers",
        "MERGE INTO core.customers AS t
USING (SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY updated_at DESC, email DESC, tier DESC) AS rn
       FROM raw.customers_batch WHERE dt = $dt) WHERE rn = 1) AS s
ON t.customer_id = s.customer_id
WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET email = s.email, tier = s.tier, updated_at = s.updated_at
WHEN NOT MATCHED THEN INSERT (customer_id, email, tier, updated_at) VALUES (s.customer_id, s.email, s.tier, s.updated_at)
",
    )
}

/// An exactly-once append of each day's orders.
fn events_job() -> Job {
    Job::statement(
        "events",
        "analytics.events",
        "INSERT INTO analytics.events PARTITION (dt = $dt) SELECT order_id, amount FROM raw.orders WHERE dt = $dt",
    )
}

/// The write-mode twin of `daily`: the same rows from a SELECT, `dt` last.
fn daily_twin() -> Job {
    Job::new("daily_twin", "analytics.daily_twin").sql(
        "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt \
         GROUP BY customer_id",
    )
}

/// The write-mode twin of `events`.
fn events_twin() -> Job {
    Job::append("events_twin", "analytics.events_twin")
        .partition_by("dt")
        .sql("SELECT order_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt")
}

/// The three statement forms: (job, table, table folder).
const FORMS: [(&str, &str, &str); 3] = [
    ("daily", "analytics.daily", "analytics/daily"),
    ("customers", "core.customers", "core/customers"),
    ("events", "analytics.events", "analytics/events"),
];

fn project(jobs: &[Job]) -> Project {
    jobs.iter().cloned().fold(Project::new(), Project::job)
}

/// The demo's raw layer (September 2026) with `jobs` as the project's jobs, nothing run.
fn lake(jobs: &[Job]) -> Lake {
    crate::support::pipeline::lake(&project(jobs))
}

fn dates(from: &str, to: &str) -> Vec<String> {
    days(from, to).map(|d| d.to_string()).collect()
}

/// `status JOB` over `from..=to`: each partition, by day.
fn status(lake: &Lake, job: &str, from: &str, to: &str) -> BTreeMap<String, PartitionStatus> {
    let status = lake.status(&[job, "--from", from, "--to", to]);
    status.partitions.into_iter().map(|p| (p.dt.clone().expect("a dated partition"), p)).collect()
}

/// The days of `job` over `from..=to` that are not fresh, as `(day, state[:reasons])`.
fn not_fresh(lake: &Lake, job: &str, from: &str, to: &str) -> Vec<(String, String)> {
    status(lake, job, from, to).iter().map(|(dt, p)| (dt.clone(), p.label())).filter(|(_, s)| s != "fresh").collect()
}

/// `days`, each with the state `state`.
fn each(days: &[String], state: &str) -> Vec<(String, String)> {
    days.iter().map(|d| (d.clone(), state.to_owned())).collect()
}

/// `(job, partition)` of every partition report of a run's JSON output: the jobs in the order
/// they first report (a job's days run side by side, and report in any order), each job's days
/// in date order.
fn ran(run: &Run) -> Vec<(String, String)> {
    let mut reports: Vec<(String, String)> = json_lines(run)
        .iter()
        .filter(|l| l.get("partition").is_some())
        .map(|l| (l["job"].as_str().expect("job").to_owned(), l["partition"].as_str().expect("partition").to_owned()))
        .collect();
    let mut jobs: Vec<String> = reports.iter().map(|(job, _)| job.clone()).collect();
    jobs.dedup();
    let first = |job: &str| jobs.iter().position(|j| j == job);
    assert!(
        jobs.iter().all(|job| first(job) == jobs.iter().rposition(|j| j == job)),
        "a job ran in two stretches: {jobs:?}"
    );
    reports.sort_by_key(|(job, partition)| (first(job), partition.clone()));
    reports
}

/// `(job, dt=day)` for each of `days`.
fn partitions(job: &str, days: &[String]) -> Vec<(String, String)> {
    days.iter().map(|d| (job.to_owned(), format!("dt={d}"))).collect()
}

/// The actions of commit `version` of the table at `table_dir`.
fn actions(lake: &Lake, table_dir: &str, version: u64) -> Vec<Value> {
    let path = lake.root().join(table_dir).join("_delta_log").join(format!("{version:020}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_lines(&text)
}

/// The columns and the partition columns of the table at `table_dir`, as its first commit made it.
fn layout(lake: &Lake, table_dir: &str) -> (Vec<String>, Vec<String>) {
    let meta = actions(lake, table_dir, 0).into_iter().find_map(|a| a.get("metaData").cloned()).expect("metaData");
    let schema: Value = serde_json::from_str(meta["schemaString"].as_str().expect("schema")).expect("schema JSON");
    let names = |list: &Value| -> Vec<String> {
        let list = list.as_array().expect("a list");
        list.iter().map(|f| f.get("name").unwrap_or(f).as_str().expect("a name").to_owned()).collect()
    };
    (names(&schema["fields"]), names(&meta["partitionColumns"]))
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|&n| n.to_owned()).collect()
}

/// Asserts that the write of each day of `job` over `from..=to` that `status` shows is a commit of
/// `table_dir` whose commitInfo names the job, the partition and the run status shows, with the
/// job's one code fingerprint, and that the commit holds the partition's state as the two `txn`
/// actions `status` reads: their versions the first 60 bits of the commitInfo's fingerprints.
#[track_caller]
fn assert_state_in_commits(lake: &Lake, job: &str, table_dir: &str, from: &str, to: &str) {
    let mut codes = BTreeSet::new();
    let uri = lake.root().join(table_dir).display().to_string();
    let columns = crate::support::reader::Reader::new(lake).schema(&uri).len();
    let columns = i64::try_from(columns).expect("a column count");
    for (dt, line) in status(lake, job, from, to) {
        let partition = format!("dt={dt}");
        let version = line.version.unwrap_or_else(|| panic!("{job} {dt}: no version: {line:?}"));
        let commit = actions(lake, table_dir, version);
        let info = commit.iter().find_map(|a| a.pointer("/commitInfo/lakewriter")).expect("lakewriter's commitInfo");
        assert_eq!(
            (&info["job"], &info["partition"], &info["run_id"]),
            (&json!(job), &json!(partition), &json!(line.run_id)),
            "{job} {dt}: {info}"
        );
        let txns: BTreeMap<String, i64> = commit
            .iter()
            .filter_map(|a| Some((a.pointer("/txn/appId")?.as_str()?.to_owned(), a.pointer("/txn/version")?.as_i64()?)))
            .collect();
        let head = |key: &str| i64::from_str_radix(&info[key].as_str().expect("a fingerprint")[..15], 16).expect("hex");
        let expected = BTreeMap::from([
            (format!("lakewriter/{job}/{partition}/code"), head("code_fingerprint")),
            (format!("lakewriter/{job}/{partition}/inputs"), head("input_fingerprint")),
            (format!("lakewriter/{job}/{partition}/columns"), columns),
        ]);
        assert_eq!(txns, expected, "{job} {dt}: the partition's state, and only its");
        codes.insert(info["code_fingerprint"].to_string());
    }
    assert_eq!(codes.len(), 1, "{job}: one code for every day: {codes:?}");
}

/// A row of `core.customers`: id, email, tier, `updated_at` as the reader shows it.
type Customer = (i64, String, String, String);

/// A raw customer change as the merge reads it: id, `updated_at` (µs), email, tier.
type Change = (i64, i64, String, String);

/// The changes of the demo's raw batch of `day`.
fn changes_of(day: chrono::NaiveDate) -> Vec<Change> {
    let batch = lakewriter_datagen::customers_for(day);
    let ids = batch.column(0).as_any().downcast_ref::<Int64Array>().expect("ids");
    let emails = batch.column(1).as_any().downcast_ref::<StringArray>().expect("emails");
    let tiers = batch.column(2).as_any().downcast_ref::<StringArray>().expect("tiers");
    let times = batch.column(3).as_any().downcast_ref::<TimestampMicrosecondArray>().expect("times");
    (0..batch.num_rows())
        .map(|r| (ids.value(r), times.value(r), emails.value(r).to_owned(), tiers.value(r).to_owned()))
        .collect()
}

/// The rows of `core.customers` once `batches` are merged in turn: from each batch, each
/// customer's newest change (ties to the greatest email, then tier), inserted when the customer
/// is new, replacing its row when strictly newer.
fn merged(batches: &[Vec<Change>]) -> Vec<Customer> {
    let mut table: BTreeMap<i64, (i64, String, String)> = BTreeMap::new();
    for batch in batches {
        let mut newest: BTreeMap<i64, (i64, String, String)> = BTreeMap::new();
        for (id, at, email, tier) in batch.iter().cloned() {
            let kept = newest.entry(id).or_insert_with(|| (at, email.clone(), tier.clone()));
            *kept = (at, email, tier).max(kept.clone());
        }
        for (id, change) in newest {
            if table.get(&id).is_none_or(|row| change.0 > row.0) {
                table.insert(id, change);
            }
        }
    }
    let text = |micros: i64| {
        let at = chrono::DateTime::from_timestamp_micros(micros).expect("a time");
        at.format("%Y-%m-%d %H:%M:%S+00:00").to_string()
    };
    table.into_iter().map(|(id, (at, email, tier))| (id, email, tier, text(at))).collect()
}

/// The rows of `core.customers` once the demo's batches of `from..=to` are merged in date order.
fn expected_customers(from: &str, to: &str) -> Vec<Customer> {
    merged(&days(from, to).map(changes_of).collect::<Vec<_>>())
}

/// The rows of the customers table at `uri`, as the independent reader finds them, by id.
fn customers(lake: &Lake, uri: &str) -> Vec<Customer> {
    let mut rows: Vec<Customer> = Reader::new(lake)
        .rows(uri)
        .iter()
        .map(|row| {
            assert_eq!(row.len(), 4, "the columns of the WHEN NOT MATCHED clause: {row:?}");
            let text = |key: &str| row[key].as_str().unwrap_or_else(|| panic!("{key} in {row:?}")).to_owned();
            (row["customer_id"].as_i64().expect("an id"), text("email"), text("tier"), text("updated_at"))
        })
        .collect();
    rows.sort();
    rows
}

/// `(rows, digest)` of each of `tables` after `backfill --all` over `FROM..=to` in a fresh
/// lakehouse with `jobs`, the late orders of each of `late_days` delivered first.
fn fresh_run(jobs: &[Job], late_days: &[&str], to: &str, tables: &[&str]) -> Vec<(u64, String)> {
    let fresh = lake(jobs);
    for day in late_days {
        fresh.run_demo(&["--late", day]).assert_code(0);
    }
    fresh.cli(&["backfill", "--all", "--from", FROM, "--to", to]).assert_code(0);
    digests(&fresh, tables)
}

/// `(rows, digest)` of each of `tables` in `lake`.
fn digests(lake: &Lake, tables: &[&str]) -> Vec<(u64, String)> {
    tables.iter().map(|t| lake.digest(t, None)).map(|d| (d.rows, d.digest)).collect()
}

#[test]
fn statement_jobs_backfill_to_fresh_tables_equal_to_their_write_mode_twins() {
    const TO: &str = "2026-09-06";
    let lake = lake(&[daily_job(), weekly_job(), customers_job(), events_job(), daily_twin(), events_twin()]);
    // The graph comes from the tables each statement's query reads.
    let graph = lake.cli(&["--json", "graph"]);
    graph.assert_code(0);
    let weekly = json_lines(&graph).into_iter().find(|l| l["job"] == "weekly").expect("weekly in the graph");
    assert_eq!((&weekly["reads"], &weekly["upstream"]), (&json!(["analytics.daily"]), &json!(["daily"])));

    let run = lake.cli(&["--json", "backfill", "--all", "--from", FROM, "--to", TO]);
    run.assert_code(0);
    let mut order: Vec<String> = ran(&run).into_iter().map(|(job, _)| job).collect();
    order.dedup();
    let at = |job: &str| order.iter().position(|j| j == job).unwrap_or_else(|| panic!("{job} ran: {order:?}"));
    assert!(at("daily") < at("weekly"), "weekly runs after daily, whose table it reads: {order:?}");
    assert_eq!(ran(&run).len(), 6 * dates(FROM, TO).len(), "each job, each day");

    for (job, dir) in FORMS.iter().map(|(job, _, dir)| (*job, *dir)).chain([("weekly", "analytics/weekly")]) {
        assert_eq!(not_fresh(&lake, job, FROM, TO), [], "{job}");
        assert_state_in_commits(&lake, job, dir, FROM, TO);
        assert_eq!(lake.commit_count(dir), dates(FROM, TO).len(), "{job}: a commit a day");
    }
    let [daily, daily_twin, events, events_twin] =
        ["analytics.daily", "analytics.daily_twin", "analytics.events", "analytics.events_twin"]
            .map(|t| lake.digest(t, None));
    assert_eq!((daily.rows, &daily.digest), (daily_orders_rows(FROM, TO), &daily_twin.digest));
    let all_orders: u64 = dates(FROM, TO).iter().map(|d| orders(d)).sum();
    assert_eq!((events.rows, &events.digest), (all_orders, &events_twin.digest));
    let by_day = strings(&["dt"]);
    assert_eq!(
        layout(&lake, "analytics/daily"),
        (strings(&["customer_id", "orders", "revenue", "dt"]), by_day.clone())
    );
    assert_eq!(layout(&lake, "analytics/daily"), layout(&lake, "analytics/daily_twin"));
    assert_eq!(layout(&lake, "analytics/events"), (strings(&["order_id", "amount", "dt"]), by_day));

    let uri = lake.root().join("core/customers").display().to_string();
    assert_eq!(customers(&lake, &uri), expected_customers(FROM, TO));
    // A MERGE job's days run one at a time, in date order.
    let versions: Vec<Option<u64>> = status(&lake, "customers", FROM, TO).values().map(|l| l.version).collect();
    assert_eq!(versions, (0..6).map(Some).collect::<Vec<_>>());
}

#[test]
fn late_orders_make_exactly_their_day_stale_and_only_stale_repairs_it_and_the_week_above() {
    const TO: &str = "2026-09-14";
    let jobs = [daily_job(), weekly_job(), customers_job()];
    let lake = lake(&jobs);
    lake.cli(&["backfill", "--all", "--from", FROM, "--to", TO]).assert_code(0);
    lake.run_demo(&["--late", "2026-09-05"]).assert_code(0);
    assert_eq!(not_fresh(&lake, "daily", FROM, TO), each(&dates("2026-09-05", "2026-09-05"), "stale:inputs_changed"));
    let window = dates("2026-09-05", "2026-09-11");
    assert_eq!(not_fresh(&lake, "weekly", FROM, TO), each(&window, "stale:upstream_stale"), "at once");
    let plan = lake.plan(&["daily", "--from", FROM, "--to", TO, "--only", "stale"]);
    let runs: Vec<Option<&str>> =
        plan.partitions.iter().filter(|p| p.action == "run").map(|p| p.dt.as_deref()).collect();
    assert_eq!(runs, [Some("2026-09-05")], "plan: what would run");

    let run = lake.cli(&["--json", "backfill", "daily", "--from", FROM, "--to", TO, "--only", "stale"]);
    let (reports, _) = run.assert_code(0).json();
    let shown: Vec<(&str, &str, bool)> = reports.iter().map(|r| (&*r.partition, &*r.status, r.committed)).collect();
    assert_eq!(shown, [("dt=2026-09-05", "ok", true)]);
    assert_eq!(status(&lake, "daily", "2026-09-05", "2026-09-05")["2026-09-05"].rows, Some(with_late("2026-09-05")));
    assert_eq!(not_fresh(&lake, "weekly", FROM, TO), each(&window, "stale:inputs_changed"));
    let repair = lake.cli(&["--json", "backfill", "--all", "--from", FROM, "--to", TO, "--only", "stale"]);
    repair.assert_code(0);
    assert_eq!(ran(&repair), partitions("weekly", &window), "exactly the week that reads the late day");

    // Late again: one `backfill --all --only stale` repairs the day, then the days above it.
    lake.run_demo(&["--late", "2026-09-09"]).assert_code(0);
    let repair = lake.cli(&["--json", "backfill", "--all", "--from", FROM, "--to", TO, "--only", "stale"]);
    repair.assert_code(0);
    let expected =
        [partitions("daily", &dates("2026-09-09", "2026-09-09")), partitions("weekly", &dates("2026-09-09", TO))];
    assert_eq!(ran(&repair), expected.concat());
    for job in ["daily", "weekly", "customers"] {
        assert_eq!(not_fresh(&lake, job, FROM, TO), [], "{job}");
    }
    let tables = ["analytics.daily", "analytics.weekly", "core.customers"];
    assert_eq!(digests(&lake, &tables), fresh_run(&jobs, &["2026-09-05", "2026-09-09"], TO, &tables));
}

#[test]
fn late_customer_changes_make_their_day_stale_and_the_merge_takes_only_what_is_newer() {
    const TO: &str = "2026-09-04";
    const LATE: &str = "2026-09-02";
    let lake = lake(&[customers_job()]);
    lake.cli(&["backfill", "customers", "--from", FROM, "--to", TO]).assert_code(0);
    let uri = lake.root().join("core/customers").display().to_string();
    let before = customers(&lake, &uri);
    assert_eq!(before, expected_customers(FROM, TO));
    // A change newer than any, one older than any, and one of a customer no batch holds.
    let second = |d: &str| day(d).and_hms_opt(0, 0, 0).expect("midnight").and_utc().timestamp();
    let (new, old) = (second("2026-10-01"), second("2026-08-01"));
    let delivered: [RawChange<'_>; 3] = [
        (Some(7), "late7@example.com", "gold", Some(new), "upsert"),
        (Some(8), "old8@example.com", "bronze", Some(old), "upsert"),
        (Some(61), "new61@example.com", "silver", Some(old), "upsert"),
    ];
    lake.write_changes(LATE, "part-late-00000.parquet", &delivered);
    assert_eq!(not_fresh(&lake, "customers", FROM, TO), each(&[LATE.to_owned()], "stale:inputs_changed"));

    let run = lake.cli(&["--json", "backfill", "customers", "--from", FROM, "--to", TO, "--only", "stale"]);
    let (reports, _) = run.assert_code(0).json();
    assert_eq!(reports.iter().map(|r| r.partition.as_str()).collect::<Vec<_>>(), [format!("dt={LATE}")]);
    assert_eq!(not_fresh(&lake, "customers", FROM, TO), []);
    // The day's batch merged again, its late file with it, after the days merged since.
    let mut batches: Vec<Vec<Change>> = days(FROM, TO).map(changes_of).collect();
    let mut again = changes_of(day(LATE));
    again.extend(delivered.iter().map(|&(id, email, tier, at, _)| {
        (id.expect("an id"), at.expect("a time") * 1_000_000, email.to_owned(), tier.to_owned())
    }));
    batches.push(again);
    let after = merged(&batches);
    assert_eq!(customers(&lake, &uri), after);
    let was: BTreeMap<i64, &Customer> = before.iter().map(|c| (c.0, c)).collect();
    let inserted = after.iter().filter(|c| !was.contains_key(&c.0)).count() as u64;
    let updated = after.iter().filter(|c| was.get(&c.0).is_some_and(|b| *b != *c)).count() as u64;
    assert!(inserted >= 1 && updated >= 1, "the late file changes rows: {inserted} inserted, {updated} updated");
    let changes = reports[0].changes.as_ref().expect("a merge's counts");
    assert_eq!((changes.inserted, changes.updated, changes.deleted), (inserted, updated, 0));
}

/// The rows `daily` writes for `dt` once its late orders are in.
fn with_late(dt: &str) -> u64 {
    let date = day(dt);
    distinct_customers(&[lakewriter_datagen::orders_for(date), lakewriter_datagen::late_orders_for(date)])
}

const APPENDED: &str = "already appended; nothing appended. --force appends again and duplicates these rows";

#[test]
fn a_second_run_of_each_statement_form_leaves_the_content() {
    const TO: &str = "2026-09-03";
    let lake = lake(&[daily_job(), customers_job(), events_job()]);
    let lint = lake.cli(&["lint"]);
    lint.assert_code(0).assert_line_starts("lint: 3 jobs checked, 0 errors, ");
    for (job, ..) in FORMS {
        lake.cli(&["backfill", job, "--from", FROM, "--to", TO]).assert_code(0);
    }
    for (job, table, dir) in FORMS {
        let (before, commits) = (lake.digest(table, None), lake.commit_count(dir));
        let (reports, _) = lake.cli(&["--json", "run", job, "--dt", "2026-09-02"]).assert_code(0).json();
        let after = lake.digest(table, None);
        assert_eq!((after.rows, &after.digest), (before.rows, &before.digest), "{job}: the content is unchanged");
        let report = &reports[0];
        let shown = (report.status.as_str(), report.committed, report.note.as_deref(), lake.commit_count(dir));
        let expected = match job {
            // Replaced by the same rows: a new version.
            "daily" => ("ok", true, Some("was already fresh (same code and inputs)"), commits + 1),
            // Nothing to change, the state as recorded: no new version.
            "customers" => ("ok", false, Some("already fresh: nothing to change, no new table version"), commits),
            _ => ("skipped", false, Some(APPENDED), commits),
        };
        assert_eq!(shown, expected, "{job}: {report:?}");
        if job == "customers" {
            assert_eq!(report.changes.as_ref().map(|c| c.inserted + c.updated + c.deleted), Some(0));
        }
    }
}

#[test]
fn verify_passes_for_each_statement_form_on_a_scratch_copy_and_fails_an_unguarded_append() {
    const TO: &str = "2026-09-02";
    const NEW: &str = "2026-09-03";
    let lake = lake(&[daily_job(), customers_job(), events_job()]);
    lake.cli(&["backfill", "--all", "--from", FROM, "--to", TO]).assert_code(0);
    // On a day none has written: the first application writes it, the second leaves the content.
    for (job, table, dir) in FORMS {
        let before = (lake.digest(table, None), lake.commit_count(dir));
        let run = lake.cli(&["--json", "verify", job, "--dt", NEW]);
        run.assert_code(0);
        let verified: Value = serde_json::from_str(run.stdout.trim()).expect("verify's JSON");
        assert_eq!((lake.digest(table, None), lake.commit_count(dir)), before, "{job}: the real table is untouched");
        lake.cli(&["run", job, "--dt", NEW]).assert_code(0);
        let digest = lake.digest(table, None).digest;
        let expected =
            json!({"pass": true, "digest_first": digest, "digest_second": digest, "rows_added": 0, "rows_removed": 0});
        let keys = ["pass", "digest_first", "digest_second", "rows_added", "rows_removed"];
        let shown: serde_json::Map<String, Value> = keys.iter().map(|&k| (k.to_owned(), verified[k].clone())).collect();
        assert_eq!(Value::Object(shown), expected, "{job}: both applications left what a real run leaves");
    }
    assert_eq!(lake.digest("analytics.daily", None).rows, daily_orders_rows(FROM, NEW), "each day once");
    let all_orders: u64 = dates(FROM, NEW).iter().map(|d| orders(d)).sum();
    assert_eq!(lake.digest("analytics.events", None).rows, all_orders, "each day's orders appended once");
    let uri = lake.root().join("core/customers").display().to_string();
    assert_eq!(customers(&lake, &uri), expected_customers(FROM, NEW), "each batch merged once");

    // Without its guard, the append's second application appends the day again.
    let run = lake.cli(&["--json", "verify", "events", "--dt", "2026-09-04", "--force"]);
    run.assert_code(1);
    let verified: Value = serde_json::from_str(run.stdout.trim()).expect("verify's JSON");
    assert_eq!(
        (&verified["pass"], &verified["rows_added"], &verified["rows_removed"]),
        (&json!(false), &json!(orders("2026-09-04")), &json!(0))
    );
}

#[test]
fn editing_a_statement_makes_its_days_stale_for_code_and_a_rerun_records_the_new_code() {
    const TO: &str = "2026-09-02";
    // `daily`'s statement in a file of its own.
    let from_file = Job::with_write("daily", "analytics.daily", Write::Statement).sql_file("daily.sql");
    let jobs = [customers_job(), events_job(), from_file];
    let (project, lake) = (project(&jobs), lake(&jobs));
    let statement = DAILY_STATEMENT;
    let write_file = |sql: &str| std::fs::write(lake.path().join("daily.sql"), sql).expect("write daily.sql");
    write_file(statement);
    lake.cli(&["backfill", "--all", "--from", FROM, "--to", TO]).assert_code(0);
    let tables = FORMS.map(|(_, table, _)| table);
    let before = digests(&lake, &tables);

    // An alias (the column is laid out by its position), a filter every change passes, a name.
    write_file(&edited(statement, "SUM(amount) AS revenue", "SUM(amount) AS total"));
    let project = project
        .edited_sql("customers", "WHERE dt = $dt) WHERE rn = 1", "WHERE dt = $dt AND op IS NOT NULL) WHERE rn = 1")
        .edited_sql("events", "SELECT order_id, amount FROM", "SELECT order_id, amount AS value FROM");
    lake.set_project(&project);
    for (job, ..) in FORMS {
        assert_eq!(not_fresh(&lake, job, FROM, TO), each(&dates(FROM, TO), "stale:code_changed"), "{job}");
    }

    let commits = lake.commit_count("core/customers");
    for job in ["daily", "customers"] {
        let run = lake.cli(&["--json", "backfill", job, "--from", FROM, "--to", TO, "--only", "stale"]);
        let (reports, _) = run.assert_code(0).json();
        let mut shown: Vec<(&str, &str, bool)> =
            reports.iter().map(|r| (&*r.partition, &*r.status, r.committed)).collect();
        shown.sort_unstable();
        assert_eq!(shown, [("dt=2026-09-01", "ok", true), ("dt=2026-09-02", "ok", true)], "{job}");
        assert_eq!(not_fresh(&lake, job, FROM, TO), [], "{job}");
        if job == "customers" {
            // No row changes; the new state is committed alone.
            let notes: BTreeSet<Option<&str>> = reports.iter().map(|r| r.note.as_deref()).collect();
            assert_eq!(notes, BTreeSet::from([Some("no row to change: committed only the partition's new state")]));
            assert!(
                reports.iter().all(|r| r.changes.as_ref().is_some_and(|c| c.inserted + c.updated + c.deleted == 0))
            );
        }
    }
    assert_eq!(lake.commit_count("core/customers"), commits + 2, "a commit of the state a day");
    assert_eq!(digests(&lake, &tables), before, "the same rows in the same columns");
    assert_state_in_commits(&lake, "customers", "core/customers", FROM, TO);
}

/// A project of one job `j` writing `analytics.t` with the statement `sql`.
fn one_job(sql: &str) -> Project {
    Project::new().job(Job::statement("j", "analytics.t", sql))
}

#[test]
fn a_statement_a_job_cannot_be_is_refused_naming_the_job_and_nothing_is_written() {
    let (write_mode, one) =
        ("without a `write` mode, a job's SQL is INSERT OVERWRITE", "replaces one partition, its run's");
    let projects = [
        (one_job("DELETE FROM analytics.t WHERE dt = $dt"), write_mode),
        (one_job("UPDATE analytics.t SET id = 1"), write_mode),
        (one_job("SELECT 1 AS id, $dt AS dt"), write_mode),
        (
            one_job("INSERT OVERWRITE analytics.other PARTITION (dt = $dt) SELECT 1 AS id"),
            "its statement writes analytics.other, but its target is analytics.t",
        ),
        (one_job("INSERT OVERWRITE analytics.t PARTITION (dt) SELECT 1 AS id, $dt AS dt"), one),
        (one_job("INSERT OVERWRITE analytics.t SELECT 1 AS id"), one),
        (
            one_job("INSERT INTO analytics.t PARTITION (dt) SELECT 1 AS id, $dt AS dt"),
            "a job's INSERT INTO names at most its run's partition",
        ),
        (
            one_job("INSERT INTO analytics.t SELECT 1 AS id; INSERT INTO analytics.t SELECT 2 AS id"),
            "its SQL holds several statements",
        ),
    ];
    let lake = Lake::demo();
    let range = ["--from", FROM, "--to", "2026-09-02"];
    for (project, message) in &projects {
        lake.set_project(project);
        for args in [
            &["run", "j", "--dt", FROM][..],
            &[&["backfill", "j"][..], &range].concat(),
            &[&["backfill", "--all"][..], &range].concat(),
            &[&["status", "j"][..], &range].concat(),
            &["verify", "j", "--dt", FROM],
            &["lint"],
        ] {
            let run = lake.cli(args);
            run.assert_code(if args == ["lint"] { 1 } else { 2 });
            let lines = run.error_lines();
            assert!(
                lines.len() == 1 && lines[0].starts_with("error: job `j`: ") && lines[0].contains(message),
                "{args:?} of\n{project:?}\nnot `error: job `j`: …{message}…`:\n{}",
                run.stderr
            );
        }
    }
    // A write mode's key without a write mode: a file the builder cannot write.
    lake.set_project_text(&format!("{}key = [\"id\"]\n", one_job("INSERT INTO analytics.t SELECT 1 AS id").to_toml()));
    let run = lake.cli(&["run", "j", "--dt", FROM]);
    run.assert_code(2);
    let lines = run.error_lines();
    assert!(lines.len() == 1 && lines[0].contains("job `j`: key `key` needs a `write` mode"), "{}", run.stderr);
    let folders: Vec<String> = std::fs::read_dir(lake.root())
        .expect("the root")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(folders, ["raw"], "nothing was written");
}

/// The `dry_run` object of `run JOB --dt DT --dry-run`, which must succeed.
fn dry_run(lake: &Lake, job: &str, dt: &str) -> Value {
    let run = lake.cli(&["--json", "run", job, "--dt", dt, "--dry-run"]);
    run.assert_code(0);
    json_lines(&run)[0]["dry_run"].clone()
}

#[test]
fn a_dry_run_of_an_insert_overwrite_is_an_overwrite_partitions_and_of_a_merge_is_refused() {
    let lake = lake(&[daily_job(), customers_job(), daily_twin(), events_twin()]);
    let new = json!({
        "changes": true, "rows_added": customers_with_orders(FROM), "rows_removed": 0, "added_examples": [],
        "removed_examples": []
    });
    assert_eq!(dry_run(&lake, "daily", FROM), new, "against no table yet");
    assert!(!lake.root().join("analytics").exists(), "the dry run wrote nothing");

    lake.cli(&["backfill", "daily", "--from", FROM, "--to", "2026-09-02"]).assert_code(0);
    lake.cli(&["backfill", "daily_twin", "--from", FROM, "--to", "2026-09-02"]).assert_code(0);
    lake.run_demo(&["--late", "2026-09-02"]).assert_code(0);
    let table = |lake: &Lake| (lake.digest("analytics.daily", None), lake.commit_count("analytics/daily"));
    let before = table(&lake);
    for dt in [FROM, "2026-09-02", "2026-09-03"] {
        assert_eq!(dry_run(&lake, "daily", dt), dry_run(&lake, "daily_twin", dt), "{dt}");
    }
    assert_eq!(dry_run(&lake, "daily", "2026-09-02")["changes"], true, "the late orders change the day");
    assert_eq!(table(&lake), before, "nothing committed");

    let (reports, _) = lake.cli(&["--json", "run", "customers", "--dt", FROM, "--dry-run"]).assert_code(1).json();
    let error = reports[0].error.as_deref().unwrap_or_default();
    let refused = "customers dt=2026-09-01: a dry run of a job written as MERGE INTO is not supported";
    assert!(reports[0].status == "failed" && error.starts_with(refused), "{:?}", reports[0]);
    assert!(!lake.root().join("core").exists(), "the merge's dry run wrote nothing");
}

#[test]
fn insert_overwrite_and_merge_jobs_on_s3_backfill_fresh_and_rerun_unchanged() {
    const TO: &str = "2026-09-04";
    let jobs = [daily_job(), weekly_job(), customers_job()];
    let s3 = S3::new("sql-jobs");
    s3.lake.prepare_demo();
    s3.lake.set_project(&project(&jobs));
    let lake = &s3.lake;
    let run = lake.cli(&["--json", "backfill", "daily", "--downstream", "--from", FROM, "--to", TO]);
    run.assert_code(0);
    crate::support::s3::assert_no_secret(&run);
    assert_eq!(ran(&run), [partitions("daily", &dates(FROM, TO)), partitions("weekly", &dates(FROM, TO))].concat());
    lake.cli(&["backfill", "customers", "--from", FROM, "--to", TO]).assert_code(0);
    for job in ["daily", "weekly", "customers"] {
        assert_eq!(not_fresh(lake, job, FROM, TO), [], "{job}");
    }
    let tables = ["analytics.daily", "analytics.weekly", "core.customers"];
    assert_eq!(digests(lake, &tables), fresh_run(&jobs, &[], TO, &tables), "as on the local filesystem");
    assert_eq!(customers(lake, &s3.url("core/customers")), expected_customers(FROM, TO));

    // Run again: the same content; the merge makes no new version.
    for (job, table) in [("daily", "analytics.daily"), ("customers", "core.customers")] {
        let before = lake.digest(table, None);
        let (reports, _) = lake.cli(&["--json", "run", job, "--dt", "2026-09-02"]).assert_code(0).json();
        let after = lake.digest(table, None);
        let new_version = if job == "daily" { before.version + 1 } else { before.version };
        assert_eq!((after.rows, &after.digest, after.version), (before.rows, &before.digest, new_version), "{job}");
        assert_eq!(reports[0].committed, job == "daily", "{job}: {:?}", reports[0]);
    }
}
