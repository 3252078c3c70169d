//! A day on which a raw dataset the job reads has no file: a run fails naming the dataset and the
//! day, and commits nothing; `status`, `plan` and a dry run show the day as `no input`. A job that
//! says `on_missing_input = "empty"` writes such a day from what its SQL computes (no rows).

use crate::support::s3::S3;
use crate::support::{DAILY_ORDERS_SQL, Job, Lake, Project, day, days};

/// Raw orders arrived for the 1st to the 3rd; the backfills run to the 5th.
const FROM: &str = "2026-09-01";
const ARRIVED: &str = "2026-09-03";
const TO: &str = "2026-09-05";

fn daily_orders(policy: Option<&'static str>) -> Project {
    let job = Job::new("daily_orders", "analytics.daily_orders").sql(DAILY_ORDERS_SQL);
    Project::new().job(match policy {
        Some(policy) => job.on_missing_input(policy),
        None => job,
    })
}

/// Each partition's state label from `status` over the whole range.
fn states(lake: &Lake) -> Vec<(String, String)> {
    let status = lake.status(&["daily_orders", "--from", FROM, "--to", TO]);
    status.partitions.iter().map(|p| (p.partition.clone(), p.label())).collect()
}

fn expected(not_arrived: &str) -> Vec<(String, String)> {
    days(FROM, TO)
        .map(|d| {
            let state = if d.to_string().as_str() <= ARRIVED { "fresh".to_owned() } else { not_arrived.to_owned() };
            (format!("dt={d}"), state)
        })
        .collect()
}

/// A backfill to [`TO`]: the days without input fail naming raw.orders and the day, and are not
/// written; `status`, `plan` and a dry run say `no input`.
fn days_without_input_fail(lake: &Lake) {
    let backfill = lake.cli(&["--json", "backfill", "daily_orders", "--from", FROM, "--to", TO]);
    backfill.assert_code(1);
    let (reports, summary) = backfill.json();
    assert_eq!((summary.ok, summary.failed), (3, 2));
    for report in reports.iter().filter(|r| r.partition.as_str() > "dt=2026-09-03") {
        let error = report.error.as_deref().expect("an error");
        let day = report.partition.trim_start_matches("dt=");
        assert!(error.contains(&format!("no input: raw.orders has no file for {day}")), "{error}");
        assert!(error.contains("on_missing_input = \"empty\""), "{error}");
        assert_eq!(report.table_version, None, "nothing committed: {report:?}");
    }
    assert_eq!(states(lake), expected("no_input"));
    let status = lake.cli(&["status", "daily_orders", "--from", FROM, "--to", TO]);
    status.assert_code(0);
    assert!(status.stdout.contains("dt=2026-09-04    no input (raw.orders)"), "{}", status.stdout);
    assert!(status.stdout.contains("5 partitions: 3 fresh, 0 stale, 0 missing, 2 no input"), "{}", status.stdout);
    let plan = lake.cli(&["plan", "daily_orders", "--from", FROM, "--to", TO, "--only", "missing"]);
    plan.assert_code(0);
    plan.assert_line("  dt=2026-09-05    run   no input (raw.orders): a run fails (on_missing_input = \"fail\")");
    let dry = lake.cli(&["backfill", "daily_orders", "--from", "2026-09-04", "--to", TO, "--dry-run"]);
    dry.assert_code(1);
    assert!(dry.stdout.contains("no input: raw.orders has no file for 2026-09-05"), "{}", dry.stdout);
}

#[test]
fn a_day_without_input_fails_naming_the_input_and_is_shown_as_no_input() {
    let lake = Lake::new(FROM, ARRIVED);
    lake.set_project(&daily_orders(None));
    days_without_input_fail(&lake);

    // Once the data arrives, the days run as any other.
    let arriving = lakewriter_core::DateRange::new(day("2026-09-04"), day(TO)).expect("range");
    lakewriter_datagen::write_orders(&lake.root(), arriving).expect("raw data");
    assert_eq!(states(&lake), expected("missing"));
    lake.cli(&["backfill", "daily_orders", "--from", FROM, "--to", TO, "--only", "missing"]).assert_code(0);
    assert_eq!(states(&lake), expected("fresh"));
}

#[test]
fn a_job_that_says_empty_writes_a_day_without_input_from_what_its_sql_computes() {
    let lake = Lake::new(FROM, ARRIVED);
    lake.set_project(&daily_orders(Some("empty")));
    let backfill = lake.cli(&["--json", "backfill", "daily_orders", "--from", FROM, "--to", TO]);
    backfill.assert_code(0);
    let (reports, _) = backfill.json();
    // In the order the days finished: sorted by day.
    let mut rows: Vec<(String, Option<u64>)> = reports.iter().map(|r| (r.partition.clone(), r.rows_written)).collect();
    rows.sort();
    assert_eq!(&rows[3..], [("dt=2026-09-04".to_owned(), Some(0)), ("dt=2026-09-05".to_owned(), Some(0))]);
    assert_eq!(states(&lake), expected("fresh"));
    // Run twice: the same empty days.
    let digest = lake.digest("analytics.daily_orders", None);
    lake.cli(&["backfill", "daily_orders", "--from", FROM, "--to", TO]).assert_code(0);
    assert_eq!(lake.digest("analytics.daily_orders", None).digest, digest.digest);
}

#[test]
fn on_s3_a_day_without_input_fails_naming_the_input() {
    let s3 = S3::new("missing-input");
    for dt in days(FROM, ARRIVED) {
        let batch = lakewriter_datagen::orders_for(dt);
        s3.put(
            &format!("raw/orders/dt={dt}/part-00000.parquet"),
            lakewriter_datagen::parquet_bytes(&batch).expect("parquet"),
        );
    }
    s3.lake.set_project(&daily_orders(None));
    days_without_input_fail(&s3.lake);
}
