//! The Ballista engine (`--engine df://…`, a build with the `ballista` feature): a scheduler and
//! two executors as processes on the loopback interface; the same tables as the local engine.

use super::super::support::engine::Cluster;
use std::process::Stdio;

use lakewriter_core::Phase;

use super::super::support::pause::Paused;
use super::super::support::s3::S3;
use super::super::support::{EngineUse, Job, Lake, Project, Report, Run, Status};

const FROM: &str = "2026-09-01";
const TO: &str = "2026-09-03";
/// The day whose raw orders are spread over several files.
const SPREAD_DAY: &str = "2026-09-02";

/// Jobs of every shape the engine computes: from the raw layer, a partition overwrite streamed,
/// an append and a delete_insert of a day (the files of each written by the executors), one with
/// checks (held here), a merge (its source computed there) and a rebuild; and a job reading a
/// job's Delta table (its files read there). Each in DataFusion's dialect, whose functions the
/// executors hold (a `spark` job's plan is computed here: see the demo's test below).
fn project() -> Project {
    let jobs = Project::new()
        .job(
            Job::new("orders_copy", "analytics.orders_copy")
                .sql("SELECT order_id, customer_id, amount, status, $dt AS dt FROM raw.orders WHERE dt = $dt"),
        )
        .job(
            Job::new("daily_orders", "analytics.daily_orders")
                .sql(super::super::support::DAILY_ORDERS_SQL)
                .checks(super::super::support::Checks::new().not_null("customer_id")),
        )
        .job(
            Job::merge("latest_orders", "core.latest_orders", &["order_id"], "created_at")
                .sql("SELECT order_id, customer_id, amount, status, created_at FROM raw.orders WHERE dt = $dt"),
        )
        .job(Job::rebuild("all_orders", "analytics.all_orders").sql("SELECT order_id, amount, dt FROM raw.orders"))
        .job(
            Job::append("orders_log", "analytics.orders_log")
                .partition_by("dt")
                .sql("SELECT order_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt"),
        )
        .job(
            Job::delete_insert("order_status", "analytics.order_status", "dt BETWEEN $dt AND $dt")
                .partition_by("dt")
                .sql("SELECT order_id, status, $dt AS dt FROM raw.orders WHERE dt = $dt"),
        )
        .job(Job::new("two_days", "analytics.two_days").sql(
            "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS amount, $dt AS dt FROM analytics.orders_copy \
             WHERE dt BETWEEN $dt - INTERVAL '1 day' AND $dt GROUP BY customer_id",
        ));
    jobs.all_datafusion()
}

/// Raw orders for FROM..=TO, SPREAD_DAY's in four files (its file and three copies of it).
fn lake() -> Lake {
    let lake = Lake::new(FROM, TO);
    lake.set_project(&project());
    let folder = lake.root().join("raw/orders").join(format!("dt={SPREAD_DAY}"));
    let file = std::fs::read_dir(&folder).expect("day folder").next().expect("a file").expect("entry").path();
    for i in 1..=3 {
        std::fs::copy(&file, folder.join(format!("copy-{i}.parquet"))).expect("copy");
    }
    lake
}

/// The jobs of [`project`] that run for a date, in dependency order; `all_orders` (a rebuild) is
/// the other.
const DATED: [&str; 6] = ["orders_copy", "daily_orders", "latest_orders", "two_days", "orders_log", "order_status"];

/// Runs every job of [`project`] over FROM..=TO on `lake` (`--engine ENGINE` where given) and
/// returns the partition reports.
fn run_all(cli: &dyn Fn(&[&str]) -> Run, engine: Option<&str>) -> Vec<Report> {
    let mut reports = Vec::new();
    let mut with = |args: &[&str]| {
        let all = match engine {
            Some(url) => [&["--json", "--engine", url], args].concat(),
            None => [&["--json"], args].concat(),
        };
        let run = cli(&all);
        run.assert_code(0);
        assert!(!run.stderr.contains("not on the engine"), "every plan ran on the engine: {}", run.stderr);
        reports.extend(run.json().0);
    };
    for job in DATED {
        with(&["backfill", job, "--from", FROM, "--to", TO]);
    }
    with(&["run", "all_orders"]);
    reports
}

/// Runs orders_copy's SPREAD_DAY alone on the engine (nothing else in flight, so that every
/// executor has a free slot when its tasks are handed out): how its files were written.
fn spread_day(cli: &dyn Fn(&[&str]) -> Run, url: &str) -> EngineUse {
    let run = cli(&["--json", "--engine", url, "run", "orders_copy", "--dt", SPREAD_DAY]);
    run.assert_code(0);
    run.json().0[0].engine.clone().expect("the spread day's engine")
}

const TABLES: [&str; 6] = [
    "analytics.orders_copy",
    "analytics.daily_orders",
    "core.latest_orders",
    "analytics.all_orders",
    "analytics.orders_log",
    "analytics.order_status",
];

/// The jobs whose data files the executors write once their table exists: a partition
/// overwrite, an append, a delete_insert and a rebuild.
const WRITTEN_THERE: [&str; 4] = ["orders_copy", "orders_log", "order_status", "all_orders"];

/// Asserts that each commit of [`WRITTEN_THERE`]'s jobs in `reports` but a table's first had its
/// data files written by the engine's tasks (a table's first commit is delta-rs's, which creates
/// it); returns the rebuild's report.
fn written_there(reports: &[Report]) -> Option<&Report> {
    for report in reports.iter().filter(|r| WRITTEN_THERE.contains(&r.job.as_str()) && r.committed) {
        if report.table_version > Some(0) {
            let files = report.engine.as_ref().and_then(|e| e.files);
            assert!(files.is_some_and(|n| n >= 1), "written by the executors: {report:?}");
        }
    }
    reports.iter().find(|r| r.job == "all_orders")
}

/// Asserts that `status` here (delta-rs's scan of a Delta input, DataFusion's listing of the raw
/// layer) finds every partition the engine wrote fresh: the files a run on the engine read and
/// fingerprinted — of `two_days`' Delta input, those of the engine's own Parquet scan, pruned by
/// lakewriter — are the ones a local run reads.
fn every_partition_fresh(cli: &dyn Fn(&[&str]) -> Run) {
    let dated = DATED.iter().map(|&job| (vec![job, "--from", FROM, "--to", TO], 3));
    for (range, partitions) in dated.chain([(vec!["all_orders"], 1)]) {
        let states = Status::of(&cli(&[&["--json", "status"], &range[..]].concat())).partitions;
        let states: Vec<(String, String)> = states.into_iter().map(|p| (p.partition, p.state)).collect();
        assert_eq!(states.len(), partitions, "{range:?}: {states:?}");
        assert!(states.iter().all(|(_, state)| state == "fresh"), "{range:?}: {states:?}");
    }
}

#[test]
fn the_engine_writes_the_tables_the_local_engine_writes() {
    let cluster = Cluster::start(2, &[]);
    let (here, there) = (lake(), lake());
    run_all(&|args| here.cli(args), None);
    let reports = run_all(&|args| there.cli(args), Some(&cluster.url));
    assert!(reports.iter().all(|r| r.engine.as_ref().is_some_and(|e| e.url == cluster.url)), "{reports:?}");
    every_partition_fresh(&|args| there.cli(args));
    for table in TABLES {
        assert_eq!(here.digest(table, None).digest, there.digest(table, None).digest, "{table}");
    }
    // A day of orders_copy (an existing table: lakewriter's own write) whose raw data spans four
    // files runs as tasks on both executors, each writing its files.
    let spread = spread_day(&|args| there.cli(args), &cluster.url);
    assert_eq!(spread.executors, Some(2), "{spread:?}");
    assert!(spread.tasks >= Some(2) && spread.files >= Some(2), "{spread:?}");
    // With `?partitions=4`, each query has four partitions whatever this machine's cores: four
    // tasks write a file each.
    let spread = spread_day(&|args| there.cli(args), &format!("{}?partitions=4", cluster.url));
    assert_eq!((spread.executors, spread.tasks, spread.files), (Some(2), Some(4), Some(4)), "{spread:?}");
    written_there(&reports);
    // A rerun on the engine changes no table's content; the rebuild's files (of raw data in six
    // files) are written on both executors.
    let before: Vec<String> = TABLES.iter().map(|t| there.digest(t, None).digest).collect();
    let rerun = run_all(&|args| there.cli(args), Some(&cluster.url));
    let rebuild = written_there(&rerun).and_then(|r| r.engine.clone()).expect("the rebuild's engine");
    assert_eq!(rebuild.executors, Some(2), "{rebuild:?}");
    let after: Vec<String> = TABLES.iter().map(|t| there.digest(t, None).digest).collect();
    assert_eq!(before, after);
    // The spread day's rewrite of orders_copy made two_days' days that read it stale; the rerun
    // wrote them again over its files.
    every_partition_fresh(&|args| there.cli(args));
}

#[test]
fn on_s3_the_engine_writes_the_tables_the_local_engine_writes() {
    let s3 = S3::new("engine");
    for day in super::super::support::days(FROM, TO) {
        let bytes = lakewriter_datagen::parquet_bytes(&lakewriter_datagen::orders_for(day)).expect("parquet");
        let copies = if day.to_string() == SPREAD_DAY { 4 } else { 1 };
        for i in 0..copies {
            s3.put(&format!("raw/orders/dt={day}/part-{i}.parquet"), bytes.clone());
        }
    }
    s3.lake.set_project(&project());
    // The executors reach the bucket through the same variables as the CLI.
    let env: Vec<(&str, &str)> = s3.env().into_iter().filter(|(k, _)| *k != "LAKEWRITER_ROOT").collect();
    let cluster = Cluster::start(2, &env);
    let here = lake();
    run_all(&|args| here.cli(args), None);
    run_all(&|args| s3.cli(args), Some(&cluster.url));
    every_partition_fresh(&|args| s3.cli(args));
    for table in TABLES {
        assert_eq!(here.digest(table, None).digest, s3.digest(table).digest, "{table}");
    }
    assert_eq!(spread_day(&|args| s3.cli(args), &cluster.url).executors, Some(2));
}

#[test]
fn a_scheduler_stopped_before_or_during_a_run_fails_it_and_commits_nothing() {
    let lake = lake();
    lake.cli(&["run", "orders_copy", "--dt", FROM]).assert_code(0);
    let version = lake.digest("analytics.orders_copy", None).version;
    let mut cluster = Cluster::start(1, &[]);
    // Each process stops cleanly on SIGTERM.
    assert_eq!(cluster.stop_executors(), vec![Some(true)], "the executor stopped on SIGTERM");
    assert_eq!(cluster.stop_scheduler(), Some(true), "the scheduler stopped on SIGTERM");
    let run = lake.cli(&["--engine", &cluster.url, "run", "orders_copy", "--dt", SPREAD_DAY]);
    run.assert_code(1);
    assert!(run.stderr.contains(&format!("engine {}: the scheduler at", cluster.url)), "{}", run.stderr);
    assert!(run.stderr.contains("cannot be reached (connection refused)"), "{}", run.stderr);
    assert_eq!(lake.digest("analytics.orders_copy", None).version, version, "nothing committed");
    // The same with the scheduler stopped during the run: paused as it enters `writing` (planned
    // against the raw layer, its data files about to be written by the executors).
    let mut cluster = Cluster::start(1, &[]);
    let paused =
        Paused::start(&lake, &["--engine", &cluster.url, "run", "orders_copy", "--dt", SPREAD_DAY], Phase::Writing);
    cluster.stop_scheduler();
    let run = paused.resume();
    run.assert_code(1);
    assert!(run.stderr.contains(&format!("engine {}", cluster.url)), "{}", run.stderr);
    assert_eq!(lake.digest("analytics.orders_copy", None).version, version, "nothing committed");
    // Once the cluster is back, the rerun converges to the local engine's table.
    let cluster = Cluster::start(1, &[]);
    lake.cli(&["--engine", &cluster.url, "run", "orders_copy", "--dt", SPREAD_DAY]).assert_code(0);
    let here = self::lake();
    here.cli(&["run", "orders_copy", "--dt", SPREAD_DAY]).assert_code(0);
    let day = |lake: &Lake| lake.digest("analytics.orders_copy", Some(SPREAD_DAY)).digest;
    assert_eq!(day(&lake), day(&here));
}

#[test]
fn an_engine_url_that_is_not_one_is_a_usage_error() {
    let lake = lake();
    let run = lake.cli(&["--engine", "http://127.0.0.1:50050", "run", "orders_copy", "--dt", FROM]);
    run.assert_code(2);
    assert!(run.stderr.contains("`local` or `df://HOST:PORT`"), "{}", run.stderr);
    for (query, why) in
        [("partitions=0", "`partitions` is one number, 1 or more"), ("slots=2", "`slots` is no setting")]
    {
        let run = lake.cli(&["--engine", &format!("df://127.0.0.1:50050?{query}"), "run", "orders_copy", "--dt", FROM]);
        run.assert_code(2);
        assert!(run.stderr.contains(why), "{}", run.stderr);
    }
}

/// Asserts that a run of orders_copy on `lake` (its table at `version` before, on the engine at
/// `url`) that lost one of two executors either committed once, its files written by the
/// executor left, or failed naming the engine with nothing committed.
fn whole_or_none(lake: &Lake, report: &Report, version: u64, url: &str) {
    let after = lake.digest("analytics.orders_copy", None).version;
    if report.status == "ok" {
        assert_eq!(after, version + 1, "{report:?}");
        assert_eq!(report.engine.as_ref().and_then(|e| e.executors), Some(1), "{report:?}");
    } else {
        assert_eq!(after, version, "nothing committed: {report:?}");
        assert!(report.error.as_deref().is_some_and(|e| e.contains(url)), "{report:?}");
    }
}

/// An executor killed (SIGKILL) as the partition's write begins — the run paused as it enters
/// `writing`, its plan not yet sent — so that the scheduler still counts it when the job's tasks
/// are handed out: the run completes on the executor left or fails with nothing committed, and the
/// rerun converges. (A kill while a task runs: the test after it.)
#[test]
fn an_executor_lost_as_a_write_begins_leaves_a_whole_partition_or_none_and_a_rerun_converges() {
    let here = lake();
    here.cli(&["backfill", "orders_copy", "--from", FROM, "--to", TO]).assert_code(0);
    let mut cluster = Cluster::start(2, &[]);
    let there = lake();
    there.cli(&["--engine", &cluster.url, "run", "orders_copy", "--dt", FROM]).assert_code(0);
    let version = there.digest("analytics.orders_copy", None).version;
    let args = ["--json", "--engine", &cluster.url, "run", "orders_copy", "--dt", SPREAD_DAY];
    let paused = Paused::start(&there, &args, Phase::Writing);
    cluster.kill_executor(0);
    let run = paused.resume();
    let (reports, _) = run.json();
    let report = &reports[0];
    whole_or_none(&there, report, version, &cluster.url);
    // The rerun, on the executor left, converges to the local engine's table.
    there.cli(&["--engine", &cluster.url, "backfill", "orders_copy", "--from", FROM, "--to", TO]).assert_code(0);
    let table = "analytics.orders_copy";
    assert_eq!(here.digest(table, None).digest, there.digest(table, None).digest);
}

/// A day of orders big enough that the tasks of its write run for a while: four files, each the
/// day's orders [`COPIES`] times over.
const BIG_DAY: &str = "2026-09-04";
const COPIES: usize = 500;

/// [`lake`] with [`BIG_DAY`]'s raw orders.
fn big_lake() -> Lake {
    let lake = lake();
    let folder = lake.root().join("raw/orders").join(format!("dt={BIG_DAY}"));
    std::fs::create_dir_all(&folder).expect("the day's folder");
    let day = super::super::support::days(BIG_DAY, BIG_DAY).next().expect("the day");
    let batch = lakewriter_datagen::orders_for(day);
    for i in 0..4 {
        let file = std::fs::File::create(folder.join(format!("part-{i}.parquet"))).expect("a raw file");
        let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).expect("a writer");
        for _ in 0..COPIES {
            writer.write(&batch).expect("rows");
        }
        writer.close().expect("the file");
    }
    lake
}

/// An executor killed (SIGKILL) while a task of the partition's write runs there — told by its
/// log, which says the task started and not that it ended: the scheduler gives the executor up
/// and runs its task on the other, so that the run completes, or the run fails with nothing
/// committed; either way the rerun converges to the local engine's table.
#[test]
fn an_executor_killed_while_its_task_runs_leaves_a_whole_partition_or_none_and_a_rerun_converges() {
    let here = big_lake();
    here.cli(&["run", "orders_copy", "--dt", BIG_DAY]).assert_code(0);
    let mut cluster = Cluster::start(2, &[]);
    let there = big_lake();
    there.cli(&["--engine", &cluster.url, "run", "orders_copy", "--dt", FROM]).assert_code(0);
    let version = there.digest("analytics.orders_copy", None).version;
    let args = ["--json", "--engine", &cluster.url, "run", "orders_copy", "--dt", BIG_DAY];
    let running = there.command(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start the run");
    let (killed, in_task) = cluster.kill_executor_in_a_task();
    assert!(in_task, "executor {killed} was killed while its task ran");
    let run = Run::from(&running.wait_with_output().expect("the run"));
    let (reports, _) = run.json();
    let report = &reports[0];
    whole_or_none(&there, report, version, &cluster.url);
    eprintln!("an executor killed in a task: the run {}", report.status);
    there.cli(&["--engine", &cluster.url, "run", "orders_copy", "--dt", BIG_DAY]).assert_code(0);
    let day = |lake: &Lake| lake.digest("analytics.orders_copy", Some(BIG_DAY)).digest;
    assert_eq!(day(&there), day(&here));
}

/// The demo itself on the engine: the tables the local engine's demo writes.
#[test]
fn the_demo_on_the_engine_writes_the_local_demos_tables() {
    let cluster = Cluster::start(2, &[]);
    let (here, there) = (Lake::empty(&[]), Lake::empty(&[]));
    here.run_demo(&[]).assert_code(0);
    let run = there.run_demo(&["--engine", &cluster.url]);
    run.assert_code(0);
    // The demo is in the `spark` dialect, whose own functions the executors do not hold: its
    // plans are computed here, with Spark's answers, and say so.
    let computed_here = "computed here, not on the engine: its plan reads";
    assert!(run.stderr.contains(computed_here), "{}", run.stderr);
    assert!(run.stderr.contains("is not the one the engine's executors hold under that name"), "{}", run.stderr);
    for table in ["analytics.daily_orders", "core.customers", "analytics.weekly_revenue"] {
        assert_eq!(here.digest(table, None).digest, there.digest(table, None).digest, "{table}");
    }
}

#[test]
fn the_demos_job_tests_pass_on_the_engine() {
    let mut cluster = Cluster::start(2, &[]);
    let lake = Lake::demo();
    // In DataFusion's dialect, whose functions the executors hold.
    let text = std::fs::read_to_string(lake.project_file()).expect("the demo's project");
    lake.set_project_text(&format!("dialect = \"datafusion\"\n{text}"));
    let run = lake.cli(&["--engine", &cluster.url, "test"]);
    run.assert_code(0);
    assert!(!run.stderr.contains("not on the engine"), "every plan ran on the engine: {}", run.stderr);
    // They ran there: without the scheduler, they fail naming the engine.
    cluster.stop_scheduler();
    let run = lake.cli(&["--engine", &cluster.url, "test"]);
    run.assert_code(1);
    assert!(run.stdout.contains(&format!("engine {}", cluster.url)), "{}", run.stdout);
}
