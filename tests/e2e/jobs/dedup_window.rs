//! `append_dedup` with `dedup_window`: a day's keys are looked for only in the target rows within
//! the window of its day, so a key seen only before the window is appended again — and each day
//! within it is not. The expected table is computed here from the raw data
//! (`lakewriter-datagen`), never taken from what the command printed.

use std::collections::BTreeSet;

use arrow::array::Int64Array;
use chrono::NaiveDate;

use crate::support::modes::uri_of;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{Job, Lake, Project, day, days};

const FROM: &str = "2026-09-01";
const TO: &str = "2026-09-08";

/// Each day's customers once: the first order of a customer not seen yet (by the job's window).
fn job(window: Option<&'static str>) -> Job {
    let job = Job::append_dedup("customers_seen", "analytics.customers_seen", &["customer_id"])
        .partition_by("dt")
        .sql("SELECT customer_id, MIN(order_id) AS first_order, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id");
    match window {
        Some(window) => job.dedup_window(window, None),
        None => job,
    }
}

/// The customers of `dt`'s raw orders.
fn customers(dt: NaiveDate) -> BTreeSet<i64> {
    let batch = lakewriter_datagen::orders_for(dt);
    let ids = batch.column_by_name("customer_id").expect("customer_id");
    let ids = ids.as_any().downcast_ref::<Int64Array>().expect("bigint customer ids");
    ids.iter().flatten().collect()
}

/// The (customer, day) rows the days `FROM..=to` append in date order, a customer appended where
/// no row of it is within `window` days of the day (any day: `None`).
fn expected(window: Option<i64>, to: &str) -> BTreeSet<(i64, String)> {
    let mut table: Vec<(i64, NaiveDate)> = Vec::new();
    for dt in days(FROM, to) {
        let seen = |c: i64| table.iter().any(|&(k, d)| k == c && window.is_none_or(|w| (d - dt).num_days().abs() <= w));
        let new: Vec<i64> = customers(dt).into_iter().filter(|&c| !seen(c)).collect();
        table.extend(new.into_iter().map(|c| (c, dt)));
    }
    table.into_iter().map(|(c, d)| (c, d.to_string())).collect()
}

/// The table's (customer, day) rows, as the independent reader reads them; panics on a row twice.
fn written(lake: &Lake) -> BTreeSet<(i64, String)> {
    let rows = Reader::new(lake).rows(&uri_of(lake, "analytics.customers_seen"));
    let pairs: Vec<(i64, String)> = rows
        .iter()
        .map(|r| (r["customer_id"].as_i64().expect("an id"), r["dt"].as_str().expect("a day").to_owned()))
        .collect();
    let set: BTreeSet<_> = pairs.iter().cloned().collect();
    assert_eq!(set.len(), pairs.len(), "a (customer, day) row twice");
    set
}

#[test]
fn a_key_seen_only_before_the_window_is_appended_again_and_one_within_it_is_not() {
    let lake = Lake::new(FROM, TO);
    lake.set_project(&Project::new().job(job(Some("2 days"))));
    lake.cli(&["backfill", "customers_seen", "--from", FROM, "--to", TO]).assert_code(0);
    let windowed = expected(Some(2), TO);
    assert_eq!(written(&lake), windowed);
    let whole = expected(None, TO);
    assert!(
        windowed.len() > whole.len(),
        "the window appends the customers again: {} and {}",
        windowed.len(),
        whole.len()
    );

    // Run twice: every day's keys are within its own window.
    let digest = lake.digest("analytics.customers_seen", None);
    lake.cli(&["backfill", "customers_seen", "--from", FROM, "--to", TO]).assert_code(0);
    assert_eq!(lake.digest("analytics.customers_seen", None).digest, digest.digest, "a second backfill");
    lake.cli(&["verify", "customers_seen", "--dt", "2026-09-05"]).assert_code(0);

    // Without the key, today's behaviour: each customer once, on the first day it was seen.
    let lake = Lake::new(FROM, TO);
    lake.set_project(&Project::new().job(job(None)));
    lake.cli(&["backfill", "customers_seen", "--from", FROM, "--to", TO]).assert_code(0);
    assert_eq!(written(&lake), whole);
}

#[test]
fn the_window_counts_days_in_a_named_date_or_timestamp_column_and_refuses_another_type() {
    for (column, code) in [(Some("first_at"), 0), (Some("first_order"), 1)] {
        let lake = Lake::new(FROM, "2026-09-04");
        let job = Job::append_dedup("customers_seen", "analytics.customers_seen", &["customer_id"])
            .partition_by("dt")
            .sql("SELECT customer_id, MIN(order_id) AS first_order, MIN(created_at) AS first_at, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id")
            .dedup_window("1 day", column);
        lake.set_project(&Project::new().job(job));
        lake.cli(&["run", "customers_seen", "--dt", FROM]).assert_code(0);
        let run = lake.cli(&["--json", "run", "customers_seen", "--dt", "2026-09-02"]);
        run.assert_code(code);
        if code == 1 {
            let error = run.json().0.remove(0).error.expect("an error");
            assert!(
                error.contains(
                    "job `customers_seen`: dedup_window_column `first_order` is Int64: the window counts days in a date or a timestamp column"
                ),
                "{error}"
            );
        } else {
            // The first day's orders are within a day of the second's: its customers are kept once.
            let appended: BTreeSet<i64> =
                written(&lake).into_iter().filter(|(_, d)| d == "2026-09-02").map(|(c, _)| c).collect();
            let new: BTreeSet<i64> = customers(day("2026-09-02")).difference(&customers(day(FROM))).copied().collect();
            assert_eq!(appended, new);
        }
    }
}

#[test]
fn on_s3_a_key_seen_only_before_the_window_is_appended_again() {
    let s3 = S3::new("dedup-window");
    let to = "2026-09-05";
    for dt in days(FROM, to) {
        let batch = lakewriter_datagen::orders_for(dt);
        s3.put(
            &format!("raw/orders/dt={dt}/part-00000.parquet"),
            lakewriter_datagen::parquet_bytes(&batch).expect("parquet"),
        );
    }
    s3.lake.set_project(&Project::new().job(job(Some("1 day"))));
    s3.lake.cli(&["backfill", "customers_seen", "--from", FROM, "--to", to]).assert_code(0);
    assert_eq!(written(&s3.lake), expected(Some(1), to));
    let digest = s3.lake.digest("analytics.customers_seen", None);
    s3.lake.cli(&["backfill", "customers_seen", "--from", FROM, "--to", to]).assert_code(0);
    assert_eq!(s3.lake.digest("analytics.customers_seen", None).digest, digest.digest, "a second backfill");
}

/// Late events: each customer of a day's orders as an event whose `event_date` is 3, 5 or 8 days
/// before the day (by the customer), so that no event falls within the window of the run's day.
fn late_events(key: &[&str]) -> Job {
    Job::append_dedup("events", "analytics.events", key)
        .partition_by("dt")
        .sql(
            "SELECT DISTINCT customer_id AS event_id, \
             CASE customer_id % 3 WHEN 0 THEN $dt - INTERVAL '3 days' WHEN 1 THEN $dt - INTERVAL '5 days' \
             ELSE $dt - INTERVAL '8 days' END AS event_date, $dt AS dt FROM raw.orders WHERE dt = $dt",
        )
        .dedup_window("2 days", Some("event_date"))
}

/// The event of customer `c` on day `dt`, as [`late_events`] computes it.
fn event_date(c: i64, dt: NaiveDate) -> NaiveDate {
    dt - chrono::Days::new([3, 5, 8][usize::try_from(c % 3).expect("a customer id")])
}

/// The (event, day it was appended on) rows the days `FROM..=to` append in date order with the
/// key `event_id` alone: an event is appended where no row of it has an `event_date` within 2
/// days of its own.
fn expected_events(to: &str) -> BTreeSet<(i64, String)> {
    let mut table: Vec<(i64, NaiveDate, NaiveDate)> = Vec::new();
    for dt in days(FROM, to) {
        for c in customers(dt) {
            let date = event_date(c, dt);
            if !table.iter().any(|&(k, d, _)| k == c && (d - date).num_days().abs() <= 2) {
                table.push((c, date, dt));
            }
        }
    }
    table.into_iter().map(|(c, _, dt)| (c, dt.to_string())).collect()
}

/// The table's (event, day) rows, as the independent reader reads them; panics on a row twice.
fn written_events(lake: &Lake) -> BTreeSet<(i64, String)> {
    let rows = Reader::new(lake).rows(&uri_of(lake, "analytics.events"));
    let pairs: Vec<(i64, String)> = rows
        .iter()
        .map(|r| (r["event_id"].as_i64().expect("an id"), r["dt"].as_str().expect("a day").to_owned()))
        .collect();
    let set: BTreeSet<_> = pairs.iter().cloned().collect();
    assert_eq!(set.len(), pairs.len(), "an (event, day) row twice: {pairs:?}");
    set
}

#[test]
fn a_window_over_a_column_looks_each_key_up_around_its_own_value_so_a_rerun_changes_nothing() {
    // The key holds the window's column: a day run three times appends its events once.
    let lake = Lake::new(FROM, TO);
    lake.set_project(&Project::new().job(late_events(&["event_id", "event_date"])));
    lake.cli(&["lint"]).assert_code(0).assert_line("lint: 1 job checked, 0 errors, 0 warnings");
    let dt = "2026-09-04";
    for _ in 0..3 {
        lake.cli(&["run", "events", "--dt", dt]).assert_code(0);
    }
    let once: BTreeSet<(i64, String)> = customers(day(dt)).into_iter().map(|c| (c, dt.to_owned())).collect();
    assert_eq!(written_events(&lake), once);
    lake.cli(&["verify", "events", "--dt", dt]).assert_code(0);

    // The key alone: an event recurs on later days, found again where its earlier row's
    // `event_date` is within 2 days of its own; a second backfill changes nothing.
    let lake = Lake::new(FROM, TO);
    lake.set_project(&Project::new().job(late_events(&["event_id"])));
    let lint = lake.cli(&["lint"]);
    assert!(lint.stdout.contains("does not hold `event_date`"), "{}", lint.stdout);
    lake.cli(&["backfill", "events", "--from", FROM, "--to", TO]).assert_code(0);
    let expected = expected_events(TO);
    assert_eq!(written_events(&lake), expected);
    let digest = lake.digest("analytics.events", None);
    lake.cli(&["backfill", "events", "--from", FROM, "--to", TO]).assert_code(0);
    assert_eq!(lake.digest("analytics.events", None).digest, digest.digest, "a second backfill");
    // Days run again out of order change nothing either.
    for dt in ["2026-09-06", "2026-09-02", "2026-09-08"] {
        lake.cli(&["run", "events", "--dt", dt]).assert_code(0);
    }
    assert_eq!(lake.digest("analytics.events", None).digest, digest.digest, "days out of order");
    lake.cli(&["verify", "events", "--dt", "2026-09-05"]).assert_code(0);
}

#[test]
fn on_s3_a_window_over_a_column_finds_a_late_event_again_on_a_rerun() {
    let s3 = S3::new("dedup-window-column");
    let to = "2026-09-04";
    for dt in days(FROM, to) {
        let batch = lakewriter_datagen::orders_for(dt);
        s3.put(
            &format!("raw/orders/dt={dt}/part-00000.parquet"),
            lakewriter_datagen::parquet_bytes(&batch).expect("parquet"),
        );
    }
    s3.lake.set_project(&Project::new().job(late_events(&["event_id"])));
    s3.lake.cli(&["backfill", "events", "--from", FROM, "--to", to]).assert_code(0);
    assert_eq!(written_events(&s3.lake), expected_events(to));
    let digest = s3.lake.digest("analytics.events", None);
    s3.lake.cli(&["backfill", "events", "--from", FROM, "--to", to]).assert_code(0);
    assert_eq!(s3.lake.digest("analytics.events", None).digest, digest.digest, "a second backfill");
}
