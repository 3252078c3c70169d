//! Pipelines: the job graph from the SQL, `backfill --downstream` and `--all` in dependency order,
//! staleness flowing downstream from late raw data, and failures stopping only what depends on
//! them. On the demo's raw layer, locally and on the S3 test server.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::pipeline::{lake, pipeline};
use crate::support::s3::S3;
use crate::support::{Job, Lake, Project, Run, day, days, distinct_customers, json_lines};

/// [`pipeline`] and a job beside it: it reads another raw dataset and no job's table.
fn with_changes() -> Project {
    pipeline().job(
        Job::new("customer_changes", "analytics.customer_changes")
            .sql("SELECT op, COUNT(*) AS changes, $dt AS dt FROM raw.customers_batch WHERE dt = $dt GROUP BY op"),
    )
}

/// `(job, partition)` of each partition report of a backfill's JSON output, in output order.
fn ran(run: &Run) -> Vec<(String, String)> {
    json_lines(run)
        .iter()
        .filter(|v| v.get("partition").is_some())
        .map(|v| (v["job"].as_str().expect("job").to_owned(), v["partition"].as_str().expect("partition").to_owned()))
        .collect()
}

/// The jobs of a backfill's JSON output in the order their partitions ran, each once.
fn job_order(run: &Run) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for (job, _) in ran(run) {
        if order.last() != Some(&job) {
            assert!(!order.contains(&job), "{job} ran in two stretches: {:?}", ran(run));
            order.push(job);
        }
    }
    order
}

/// Each partition of `job`'s `status --json` over `from..=to`: its state (with reasons), its
/// table version and its rows.
fn status(lake: &Lake, job: &str, from: &str, to: &str) -> BTreeMap<String, (String, Option<u64>, Option<u64>)> {
    let status = lake.status(&[job, "--from", from, "--to", to]);
    status.by_day().into_iter().map(|(dt, p)| (dt, (p.label(), p.version, p.rows))).collect()
}

/// The days of `job`'s status over `from..=to` that are not fresh.
fn not_fresh(lake: &Lake, job: &str, from: &str, to: &str) -> Vec<String> {
    status(lake, job, from, to).into_iter().filter(|(_, (state, ..))| state != "fresh").map(|(dt, _)| dt).collect()
}

fn dates(from: &str, to: &str) -> Vec<String> {
    days(from, to).map(|d| d.to_string()).collect()
}

/// The rows of `weekly_revenue` for `dt`: the customers with an order in the 7 days up to `dt`
/// (September only, the raw layer's days), late orders of `late` included.
fn weekly_rows(dt: &str, late: Option<&str>) -> u64 {
    let dt = day(dt);
    let first = (dt - chrono::Duration::days(6)).max(day("2026-09-01"));
    let mut batches: Vec<_> = days(&first.to_string(), &dt.to_string()).map(lakewriter_datagen::orders_for).collect();
    if let Some(late) = late.map(day).filter(|l| (first..=dt).contains(l)) {
        batches.push(lakewriter_datagen::late_orders_for(late));
    }
    distinct_customers(&batches)
}

#[test]
fn graph_orders_jobs_after_the_jobs_they_read_and_names_a_cycle() {
    graph_and_cycle(&lake(&with_changes()));
}

#[test]
fn graph_downstream_and_all_on_s3() {
    let s3 = S3::new("graph");
    s3.lake.prepare_demo();
    s3.lake.set_project(&with_changes());
    downstream_and_all(&s3.lake);
    s3.lake.set_project(&with_changes());
    graph_and_cycle(&s3.lake);
}

/// The graph of [`with_changes`] in `lake`, then a cycle.
fn graph_and_cycle(lake: &Lake) {
    // Before any table exists: the graph comes from the SQL alone.
    let run = lake.cli(&["--json", "graph"]);
    run.assert_code(0);
    let lines = json_lines(&run);
    let order: Vec<&str> = lines.iter().filter_map(|l| l["job"].as_str()).collect();
    assert_eq!(order, ["customer_changes", "daily_orders", "weekly_revenue", "weekly_summary"]);
    assert_eq!(lines[2]["reads"], serde_json::json!(["analytics.daily_orders"]));
    assert_eq!(lines[2]["upstream"], serde_json::json!(["daily_orders"]));
    assert_eq!(lines[2]["downstream"], serde_json::json!(["weekly_summary"]));
    assert_eq!(lines[1]["downstream"], serde_json::json!(["weekly_revenue"]));
    assert_eq!(lines[4]["summary"], serde_json::json!({"jobs": 4, "edges": 2, "schema_version": 4}));

    let text = lake.cli(&["graph"]);
    text.assert_code(0);
    text.assert_line("weekly_revenue    → analytics.weekly_revenue    reads analytics.daily_orders (job daily_orders)");
    text.assert_line("graph: 4 jobs, 2 dependencies");

    // daily_orders reads weekly_summary's target, which reads weekly_revenue's, which reads its.
    let cycle = pipeline().edited_sql(
        "daily_orders",
        "FROM raw.orders WHERE dt = $dt",
        "FROM reports.weekly_summary WHERE dt = $dt",
    );
    lake.set_project(&cycle);
    for args in [&["graph"][..], &["backfill", "--all", "--from", "2026-09-01", "--to", "2026-09-02"]] {
        let run = lake.cli(args);
        run.assert_code(2);
        assert_eq!(
            run.error_lines(),
            [
                "error: jobs read each other's targets in a cycle: daily_orders → weekly_revenue → weekly_summary → daily_orders (each job reads the target of the one before it)"
            ]
        );
    }
    assert!(!lake.root().join("analytics").exists(), "nothing was written");
}

#[test]
fn downstream_and_all_run_each_job_after_the_jobs_it_reads() {
    downstream_and_all(&lake(&with_changes()));
}

/// `--downstream` and `--all` in `lake`, whose project is [`with_changes`].
fn downstream_and_all(lake: &Lake) {
    // A job below another reads nothing until that one has written: alone, it fails, naming why.
    let alone = lake.cli(&["backfill", "weekly_revenue", "--from", "2026-09-01", "--to", "2026-09-01"]);
    alone.assert_code(1);
    assert!(
        alone.stderr.contains("analytics.daily_orders has no Delta table yet: it is the target of job `daily_orders`, which has not written it"),
        "{}",
        alone.stderr
    );

    let run =
        lake.cli(&["--json", "backfill", "daily_orders", "--downstream", "--from", "2026-09-01", "--to", "2026-09-10"]);
    run.assert_code(0);
    assert_eq!(job_order(&run), ["daily_orders", "weekly_revenue", "weekly_summary"], "customer_changes is not below");
    assert_eq!(ran(&run).len(), 30);
    let weekly = status(lake, "weekly_revenue", "2026-09-01", "2026-09-10");
    for dt in dates("2026-09-01", "2026-09-10") {
        assert_eq!(weekly[&dt].2, Some(weekly_rows(&dt, None)), "weekly_revenue {dt} read all 7 days as committed");
    }
    let summary = status(lake, "weekly_summary", "2026-09-01", "2026-09-10");
    assert!(summary.values().all(|(state, _, rows)| state == "fresh" && *rows == Some(1)), "{summary:?}");

    let all = lake.cli(&["--json", "backfill", "--all", "--from", "2026-09-08", "--to", "2026-09-12"]);
    all.assert_code(0);
    assert_eq!(job_order(&all), ["customer_changes", "daily_orders", "weekly_revenue", "weekly_summary"]);
    let summaries = json_lines(&all).iter().filter(|l| l.get("summary").is_some()).count();
    assert_eq!(summaries, 4, "a summary per job");
}

/// The upstream partitions `status` names for `job`'s day `dt`, as `job partition`.
fn upstream_stale(lake: &Lake, job: &str, dt: &str) -> Vec<String> {
    let status = lake.status(&[job, "--from", dt, "--to", dt]);
    status.partitions[0].upstream_stale.iter().map(|u| format!("{} {}", u.job, u.partition)).collect()
}

/// Late orders for one day: `daily_orders` of that day is stale, and at once so are exactly the 7
/// `weekly_revenue` days whose window holds it, and the `weekly_summary` days above them, each
/// naming the upstream partition; once `daily_orders` is rewritten, those `weekly_revenue` days
/// are stale by their inputs; `backfill --all --only stale` then rewrites exactly those and the
/// `weekly_summary` days above them, and nothing else.
fn late_data_flows_downstream(lake: &Lake) {
    let range = ["--from", "2026-09-01", "--to", "2026-09-20"];
    lake.cli(&[&["backfill", "--all"][..], &range].concat()).assert_code(0);
    lake.run_demo(&["--late", "2026-09-10"]).assert_code(0);

    assert_eq!(not_fresh(lake, "daily_orders", "2026-09-01", "2026-09-20"), ["2026-09-10"]);
    assert_eq!(status(lake, "daily_orders", "2026-09-10", "2026-09-10")["2026-09-10"].0, "stale:inputs_changed");
    let window = dates("2026-09-10", "2026-09-16");
    assert_eq!(not_fresh(lake, "weekly_revenue", "2026-09-01", "2026-09-20"), window, "at once, before the rewrite");
    assert_eq!(status(lake, "weekly_revenue", "2026-09-12", "2026-09-12")["2026-09-12"].0, "stale:upstream_stale");
    assert_eq!(upstream_stale(lake, "weekly_revenue", "2026-09-12"), ["daily_orders dt=2026-09-10"]);
    assert_eq!(not_fresh(lake, "weekly_summary", "2026-09-01", "2026-09-20"), window, "two levels down");
    assert_eq!(upstream_stale(lake, "weekly_summary", "2026-09-16"), ["weekly_revenue dt=2026-09-16"]);
    let plan = lake.cli(&["plan", "weekly_revenue", "--from", "2026-09-12", "--to", "2026-09-12"]);
    plan.assert_code(0);
    assert!(plan.stdout.contains("stale: upstream stale (daily_orders dt=2026-09-10)"), "{}", plan.stdout);

    lake.cli(&["backfill", "daily_orders", "--only", "stale", "--from", "2026-09-01", "--to", "2026-09-20"])
        .assert_code(0);
    assert_eq!(not_fresh(lake, "weekly_revenue", "2026-09-01", "2026-09-20"), window);
    assert_eq!(status(lake, "weekly_revenue", "2026-09-12", "2026-09-12")["2026-09-12"].0, "stale:inputs_changed");
    assert_eq!(not_fresh(lake, "weekly_summary", "2026-09-01", "2026-09-20"), window, "above a stale day");

    let before: Vec<_> = ["daily_orders", "weekly_revenue", "weekly_summary"]
        .map(|job| status(lake, job, "2026-09-01", "2026-09-20"))
        .into();
    let repair = lake.cli(&[&["--json", "backfill", "--all", "--only", "stale"][..], &range].concat());
    repair.assert_code(0);
    let expected: Vec<(String, String)> = ["weekly_revenue", "weekly_summary"]
        .iter()
        .flat_map(|job| window.iter().map(move |dt| ((*job).to_owned(), format!("dt={dt}"))))
        .collect();
    assert_eq!(job_order(&repair), ["weekly_revenue", "weekly_summary"], "in dependency order");
    let mut rewritten = ran(&repair);
    rewritten.sort();
    assert_eq!(rewritten, expected, "exactly the stale partitions");

    for (job, before) in ["daily_orders", "weekly_revenue", "weekly_summary"].iter().zip(before) {
        let after = status(lake, job, "2026-09-01", "2026-09-20");
        for (dt, (state, version, _)) in &after {
            assert_eq!(state, "fresh", "{job} {dt}");
            if !(*job != "daily_orders" && window.contains(dt)) {
                assert_eq!(*version, before[dt].1, "{job} {dt} was fresh and was not touched");
            }
        }
    }
    let weekly = status(lake, "weekly_revenue", "2026-09-10", "2026-09-16");
    for dt in &window {
        assert_eq!(
            weekly[dt].2,
            Some(weekly_rows(dt, Some("2026-09-10"))),
            "weekly_revenue {dt} holds the late orders"
        );
    }
}

#[test]
fn late_data_upstream_makes_exactly_the_partitions_below_it_stale_two_levels_down() {
    late_data_flows_downstream(&lake(&pipeline()));
}

#[test]
fn late_data_flows_downstream_on_s3() {
    let s3 = S3::new("pipeline");
    s3.lake.prepare_demo();
    s3.lake.set_project(&pipeline());
    late_data_flows_downstream(&s3.lake);
}

#[test]
fn a_failed_partition_stops_only_the_jobs_below_it() {
    let lake = lake(&with_changes());
    std::fs::write(lake.root().join("raw/orders/dt=2026-09-03/part-empty.parquet"), b"").expect("an empty raw file");
    let run = lake.cli(&["--json", "backfill", "--all", "--from", "2026-09-01", "--to", "2026-09-04"]);
    run.assert_code(1);
    let lines = json_lines(&run);
    let failed: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["status"] == "failed")
        .map(|l| (l["job"].as_str().expect("job"), l["partition"].as_str().expect("partition")))
        .collect();
    assert_eq!(failed, [("daily_orders", "dt=2026-09-03")]);
    let not_run: Vec<&Value> = lines.iter().filter_map(|l| l.get("not_run")).collect();
    assert_eq!(
        not_run,
        [
            &serde_json::json!({"job": "weekly_revenue", "reason": "its upstream job daily_orders failed"}),
            &serde_json::json!({"job": "weekly_summary", "reason": "its upstream job weekly_revenue was not run"}),
        ]
    );
    assert_eq!(job_order(&run), ["customer_changes", "daily_orders"], "the job beside the pipeline ran");
    assert!(not_fresh(&lake, "customer_changes", "2026-09-01", "2026-09-04").is_empty());
    assert!(!lake.root().join("analytics/weekly_revenue").exists(), "nothing below the failure was written");

    let text = lake.cli(&["backfill", "--all", "--from", "2026-09-01", "--to", "2026-09-04"]);
    text.assert_code(1);
    text.assert_line("weekly_revenue: not run: its upstream job daily_orders failed");
}

/// A running total: each day adds its orders to the day before's total, read from the job's own
/// target. Its first day has no day before to read, so it is written by the same job without the
/// self-reference.
fn running() -> Project {
    Project::new()
        .job(Job::new("running_orders", "analytics.running_orders").sql(
            "SELECT SUM(n) AS total, $dt AS dt FROM (\n  SELECT COUNT(*) AS n FROM raw.orders WHERE dt = $dt\n  \
             UNION ALL\n  SELECT total AS n FROM analytics.running_orders WHERE dt = $dt - INTERVAL '1 day'\n)\n",
        ))
        .job(
            Job::new("running_from_raw", "analytics.running_from_raw")
                .sql("SELECT COUNT(*) AS total, $dt AS dt FROM raw.orders WHERE dt BETWEEN DATE '2026-09-01' AND $dt"),
        )
}

#[test]
fn a_job_that_reads_its_own_target_runs_its_days_in_order_each_reading_the_one_before_as_committed() {
    let seed = running()
        .edited_sql("running_orders", "FROM analytics.running_orders WHERE", "FROM raw.orders WHERE false AND")
        .edited_sql("running_orders", "SELECT total AS n", "SELECT COUNT(*) AS n");
    let lake = lake(&running());
    let unseeded = lake.cli(&["run", "running_orders", "--dt", "2026-09-01"]);
    unseeded.assert_code(1);
    let seed_it = "job `running_orders` reads its own table analytics.running_orders, which has no Delta table yet: its \
                   first day has no day before to read; seed that day once with SQL that does not read \
                   analytics.running_orders (docs/guide/pipelines.md)";
    assert!(unseeded.stderr.contains(seed_it), "{}", unseeded.stderr);
    lake.set_project(&seed);
    lake.cli(&["run", "running_orders", "--dt", "2026-09-01"]).assert_code(0);
    lake.set_project(&running());
    let graph = lake.cli(&["graph"]);
    graph.assert_line(
        "running_orders    → analytics.running_orders    reads analytics.running_orders (its own target), raw.orders",
    );

    let run =
        lake.cli(&["backfill", "running_orders", "--from", "2026-09-02", "--to", "2026-09-12", "--parallel", "4"]);
    run.assert_code(0);
    assert!(
        run.stderr.contains("the job reads its own target: its days run one at a time, in date order"),
        "{}",
        run.stderr
    );
    let range = ["--from", "2026-09-01", "--to", "2026-09-12"];
    lake.cli(&[&["backfill", "running_from_raw"][..], &range].concat()).assert_code(0);
    let (running, from_raw) =
        (lake.digest("analytics.running_orders", None), lake.digest("analytics.running_from_raw", None));
    assert_eq!((running.rows, running.digest), (12, from_raw.digest), "each day added to the committed day before");
}

/// Two jobs that read each other's tables in a cycle (which `graph` refuses): `status` of one
/// finds the other's state once and ends, naming the other's stale day.
#[test]
fn status_of_jobs_that_read_each_other_in_a_cycle_ends() {
    let own = "SELECT COUNT(*) AS n, $dt AS dt FROM raw.orders WHERE dt = $dt";
    let seed = Project::new().job(Job::new("a", "analytics.a").sql(own)).job(Job::new("b", "analytics.b").sql(own));
    let lake = lake(&seed);
    for job in ["a", "b"] {
        lake.cli(&["run", job, "--dt", "2026-09-01"]).assert_code(0);
    }
    let reads = |table: &str| format!("SELECT SUM(n) AS n, $dt AS dt FROM {table} WHERE dt = $dt");
    let cycle = Project::new()
        .job(Job::new("a", "analytics.a").sql(reads("analytics.b")))
        .job(Job::new("b", "analytics.b").sql(reads("analytics.a")));
    lake.set_project(&cycle);
    lake.cli(&["graph"]).assert_code(2);
    let status = lake.status(&["a", "--from", "2026-09-01", "--to", "2026-09-01"]);
    let a = &status.partitions[0];
    assert_eq!(a.label(), "stale:inputs_changed,code_changed,upstream_stale", "{a:?}");
    assert_eq!(upstream_stale(&lake, "a", "2026-09-01"), ["b dt=2026-09-01"]);
}
