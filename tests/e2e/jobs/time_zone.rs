//! `time_zone`, the spark dialect's session time zone: a timestamp's day, hour and text are the
//! zone's. A partition overwrite of each local day and a merge newer by a timestamp, in
//! America/New_York over the day its clocks go forward: each day holds the instants of its
//! local day, a rerun changes nothing, and another zone makes the days stale (the zone is in the
//! code fingerprint).

use serde_json::{Value, json};

use crate::support::Lake;
use crate::support::sql::{query_rows, sql_json};
use crate::support::status::PartitionStatus;

const DAY: &str = "2026-03-08";

/// Seconds since the epoch of a UTC time on 2026-03-08 (`hour` may pass midnight).
fn utc(hour: i64, minute: i64) -> i64 {
    1_772_928_000 + hour * 3600 + minute * 60
}

fn project(zone: &str) -> String {
    format!(
        r#"root = "lake"
time_zone = "{zone}"

[jobs.by_day]
target = "core.by_day"
write = "overwrite_partition"
partition_by = "day"
sql = "SELECT customer_id, hour(updated_at) AS h, CAST(updated_at AS DATE) AS day FROM raw.customers_batch WHERE CAST(updated_at AS DATE) = $dt"

[jobs.latest]
target = "core.latest"
write = "merge"
key = ["customer_id"]
newer_by = "updated_at"
sql = "SELECT customer_id, tier, updated_at, CAST(updated_at AS STRING) AS local_time FROM raw.customers_batch WHERE dt = $dt"
"#
    )
}

fn rows(lake: &Lake, query: &str) -> Vec<Value> {
    query_rows(&sql_json(lake, query, &[]), 1)
}

fn run(lake: &Lake, job: &str) {
    lake.cli(&["run", job, "--dt", DAY]).assert_code(0);
}

#[test]
fn a_day_and_a_time_are_the_session_time_zones_and_a_rerun_changes_nothing() {
    let lake = Lake::empty(&[]);
    lake.write_changes(
        DAY,
        "part-0.parquet",
        &[
            // 23:30 on the 7th in New York (EST).
            (Some(1), "a@x", "silver", Some(utc(4, 30)), "upsert"),
            // 01:30 EST, before the clocks go forward at 02:00.
            (Some(2), "b@x", "silver", Some(utc(6, 30)), "upsert"),
            // 23:00 EDT on the 8th, the 9th in UTC.
            (Some(3), "c@x", "silver", Some(utc(27, 0)), "upsert"),
            // 08:00 EDT: customer 1's newer change.
            (Some(1), "a@x", "gold", Some(utc(12, 0)), "upsert"),
        ],
    );
    lake.set_project_text(&project("America/New_York"));

    run(&lake, "by_day");
    let by_day = "SELECT customer_id, h, CAST(day AS STRING) AS day FROM core.by_day ORDER BY customer_id, h";
    let local = [json!([1, 8, DAY]), json!([2, 1, DAY]), json!([3, 23, DAY])];
    let got: Vec<Value> =
        rows(&lake, by_day).into_iter().map(|r| json!([r["customer_id"], r["h"], r["day"]])).collect();
    assert_eq!(got, local, "the instants of New York's 8 March, at their hours there");
    let digest = lake.digest("core.by_day", None);
    run(&lake, "by_day");
    assert_eq!(lake.digest("core.by_day", None).digest, digest.digest, "a second run");

    run(&lake, "latest");
    let latest = "SELECT customer_id, tier, local_time FROM core.latest ORDER BY customer_id";
    let texts: Vec<Value> =
        rows(&lake, latest).into_iter().map(|r| json!([r["customer_id"], r["tier"], r["local_time"]])).collect();
    assert_eq!(
        texts,
        [
            json!([1, "gold", "2026-03-08 08:00:00"]),
            json!([2, "silver", "2026-03-08 01:30:00"]),
            json!([3, "silver", "2026-03-08 23:00:00"]),
        ],
        "the newer change wins; its time as New York's clock shows it"
    );
    let digest = lake.digest("core.latest", None);
    run(&lake, "latest");
    assert_eq!(lake.digest("core.latest", None).digest, digest.digest, "a second run");

    // Another zone is other code: the days it wrote are stale.
    lake.set_project_text(&project("UTC"));
    let status = lake.status(&["by_day", "--from", DAY, "--to", DAY]);
    let labels: Vec<String> = status.partitions.iter().map(PartitionStatus::label).collect();
    assert_eq!(labels, ["stale:code_changed"]);
}
