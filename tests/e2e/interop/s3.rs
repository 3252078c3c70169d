//! S3 lakehouses, against the S3 test server that `scripts/test` starts (moto, on 127.0.0.1).
//! These tests fail — never skip — when the server is not there.

use std::path::Path;

use crate::support::s3::{S3, assert_no_secret};
use crate::support::{Digest, Lake, Run, daily_orders_rows, finish, lakewriter_with};

/// The same project on the local filesystem, for reference digests.
fn local_reference(args: &[&[&str]], table: &str) -> Digest {
    let lake = Lake::demo();
    for a in args {
        lake.cli(a).assert_code(0);
    }
    lake.digest(table, None)
}

#[test]
fn the_demo_runs_on_s3_with_one_setting_and_reruns_change_nothing() {
    let s3 = S3::new("demo");
    let run = s3.lake.run_demo(&[]);
    run.assert_code(0);
    assert_no_secret(&run);
    run.assert_line(&format!("  root     {}", s3.root));
    run.assert_line(
        "  raw      30 days of orders and customer changes under raw/ (90 files written, 0 kept as they were)",
    );
    run.assert_line_starts("daily_orders: 30 partitions, 30 ok, 0 failed, 1123 rows written, table version 29, ");
    run.assert_line_starts("customers: 30 partitions, 30 ok, 0 failed, 553 rows written, table version 29, ");
    assert_eq!(run.stdout.matches("  unchanged: running the day again left the very same rows\n").count(), 3);
    assert!(!s3.lake.root().exists(), "nothing was written locally");

    let local = local_reference(
        &[&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-30"]],
        "analytics.daily_orders",
    );
    let remote = s3.digest("analytics.daily_orders");
    assert_eq!((remote.digest, remote.rows), (local.digest, daily_orders_rows("2026-09-01", "2026-09-30")));

    // Late data on S3: the state is read from the bucket's log, the late file seen in the plan.
    let late = s3.lake.run_demo(&["--late", "2026-09-03"]);
    late.assert_code(0);
    assert_eq!(
        late.stdout,
        format!("late orders delivered: raw/orders/dt=2026-09-03/part-late-00000.parquet (below {})\n", s3.root)
    );
    let status = s3.cli(&["status", "daily_orders"]);
    status.assert_code(0);
    assert_no_secret(&status);
    assert_eq!(status.stdout.lines().last(), Some("daily_orders: 30 partitions: 29 fresh, 1 stale, 0 missing"));
    let (reports, _) = s3
        .cli(&["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-30", "--only", "stale"])
        .assert_code(0)
        .json();
    assert_eq!(reports.iter().map(|r| r.partition.as_str()).collect::<Vec<_>>(), ["dt=2026-09-03"]);
    let status = s3.cli(&["status", "daily_orders"]);
    status.assert_code(0);
    assert_eq!(status.stdout.lines().last(), Some("daily_orders: 30 partitions: 30 fresh, 0 stale, 0 missing"));
}

#[test]
fn writers_in_several_processes_all_land_and_equal_a_sequential_run() {
    let s3 = S3::new("concurrent");
    s3.lake.prepare_demo();
    // Four workers race to create the table and then to commit twelve days between them.
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let shard = format!("{i}/4");
            s3.spawn(&[
                "backfill",
                "daily_orders",
                "--from",
                "2026-09-01",
                "--to",
                "2026-09-12",
                "--shard",
                &shard,
                "--parallel",
                "2",
            ])
        })
        .collect();
    let (mut partitions, mut rows) = (Vec::new(), 0);
    for worker in workers {
        let run = finish(worker);
        assert_no_secret(&run);
        run.assert_code(0);
        let (reports, summary) = run.json();
        assert_eq!((summary.partitions, summary.ok, summary.failed), (3, 3, 0), "three days a shard");
        rows += summary.rows_written;
        partitions.extend(reports.into_iter().map(|r| r.partition));
    }
    partitions.sort();
    let expected: Vec<String> = (1..=12).map(|d| format!("dt=2026-09-{d:02}")).collect();
    assert_eq!(partitions, expected, "the shards covered the range exactly once");
    let table = s3.digest("analytics.daily_orders");
    assert_eq!(table.version, 11, "twelve commits, none lost");
    assert_eq!((rows, table.rows), (daily_orders_rows("2026-09-01", "2026-09-12"), rows));
    let local = local_reference(
        &[&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-12", "--parallel", "1"]],
        "analytics.daily_orders",
    );
    assert_eq!((&table.digest, table.rows), (&local.digest, local.rows));

    // Two processes on the same partition: the table ends as after one run.
    let same: Vec<_> = (0..2).map(|_| s3.spawn(&["run", "daily_orders", "--dt", "2026-09-05"])).collect();
    for run in same.into_iter().map(finish) {
        run.assert_code(0);
    }
    let after = s3.digest("analytics.daily_orders");
    assert_eq!((&after.digest, after.rows, after.version), (&table.digest, table.rows, table.version + 2));

    // Two merges into one table conflict in Delta; the loser runs again. Order does not matter.
    let merges: Vec<_> =
        ["2026-09-01", "2026-09-02", "2026-09-03"].iter().map(|d| s3.spawn(&["run", "customers", "--dt", d])).collect();
    for run in merges.into_iter().map(finish) {
        run.assert_code(0);
    }
    let customers = s3.digest("core.customers");
    let local =
        local_reference(&[&["backfill", "customers", "--from", "2026-09-01", "--to", "2026-09-03"]], "core.customers");
    assert_eq!((customers.digest, customers.rows), (local.digest, local.rows));
}

/// Asserts that `run` failed to list the lakehouse root `root` (with the GET of `url`, up to its
/// query's prefix), showing no secret; returns the lines of the error after the GET's, which
/// holds a duration.
#[track_caller]
fn assert_cannot_list<'a>(run: &'a Run, root: &str, url: &str) -> Vec<&'a str> {
    run.assert_code(1);
    assert_no_secret(run);
    let lines = run.error_lines();
    assert_eq!(
        lines[..3],
        [
            format!("error: lakehouse root {root}"),
            "  caused by: cannot open the lakehouse catalog".to_owned(),
            format!("  caused by: cannot list the lakehouse root {root}"),
        ],
        "{}",
        run.stderr
    );
    let list =
        format!("  caused by: Generic S3 error: Error performing list request: Error performing GET {url}%2F in ");
    assert!(lines[3].starts_with(&list), "{}", run.stderr);
    lines[3..].to_vec()
}

#[test]
fn storage_errors_are_clear_and_show_no_secret() {
    let s3 = S3::new("errors");
    s3.lake.prepare_demo();
    let project = s3.lake.project_file().display().to_string();
    let run_day = |env: &[(&str, &str)]| {
        let args = ["--project", project.as_str(), "-vv", "run", "daily_orders", "--dt", "2026-09-01"];
        lakewriter_with(&args, Path::new("/"), env)
    };
    let with = |key: &'static str, value: &'static str| {
        let mut env = s3.env();
        env.retain(|(k, _)| *k != key);
        [env, vec![(key, value)]].concat()
    };

    // The cause chain ends in the store's error and the server's reply.
    let missing = "s3://no-such-bucket-lakewriter/lake/";
    let run = run_day(&with("LAKEWRITER_ROOT", missing));
    let url = format!("{}/no-such-bucket-lakewriter?delimiter=%2F&list-type=2&prefix=lake", s3.endpoint);
    let rest = assert_cannot_list(&run, missing, &url);
    let not_found = " - Server returned non-2xx status code: 404 Not Found: <?xml version=\"1.0\" encoding=\"utf-8\"?>";
    assert!(rest[0].ends_with(not_found), "{}", run.stderr);
    let reply = "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message>\
                 <BucketName>no-such-bucket-lakewriter</BucketName>";
    // The reply goes on with the ids the server gives each request.
    assert!(rest[1].starts_with(reply), "{}", run.stderr);

    let run = run_day(&with("AWS_ENDPOINT_URL", "http://127.0.0.1:9"));
    let prefix = s3.root.trim_start_matches("s3://lakewriter-test/").trim_end_matches('/');
    let url = format!("http://127.0.0.1:9/lakewriter-test?delimiter=%2F&list-type=2&prefix={prefix}");
    let rest = assert_cannot_list(&run, &s3.root, &url);
    assert_eq!(rest.last(), Some(&"  caused by: Connection refused (os error 111)"), "{}", run.stderr);

    let run = run_day(&with("AWS_CONDITIONAL_PUT", "disabled"));
    run.assert_code(2);
    assert_eq!(
        run.error_lines(),
        [format!(
            "error: {project}: unsafe commit configuration: AWS_CONDITIONAL_PUT = disabled. Concurrent writers \
             could overwrite each other's commits; lakewriter commits to S3 only with conditional put (If-None-Match)"
        )],
        "{}",
        run.stderr
    );
}

#[test]
fn a_bad_raw_file_fails_only_the_day_that_reads_it_and_names_it() {
    let s3 = S3::new("raw");
    s3.lake.prepare_demo();
    let bad = "raw/orders/dt=2026-09-02/part-bad.parquet";
    s3.put(bad, b"not parquet".to_vec());
    s3.put("raw/orders/dt=2026-13-45/part-00000.parquet", b"never read".to_vec());
    s3.put("raw/orders/_tmp/part-00000.parquet", b"never read".to_vec());
    for dt in ["2026-09-01", "2026-09-03"] {
        let (reports, _) = s3.cli(&["--json", "run", "daily_orders", "--dt", dt]).assert_code(0).json();
        assert_eq!((reports[0].status.as_str(), reports[0].files_scanned), ("ok", Some(1)), "{reports:?}");
    }
    let before = s3.digest("analytics.daily_orders");
    let run = s3.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-02"]);
    run.assert_code(1);
    assert_no_secret(&run);
    let error = run.json().0.remove(0).error.expect("an error");
    assert_eq!(
        error,
        format!(
            "daily_orders dt=2026-09-02: raw file {}{bad} of raw.orders is not a readable Parquet file: Parquet \
             error: Parquet error: Invalid Parquet file. Corrupt footer",
            s3.root
        )
    );
    assert_eq!(s3.digest("analytics.daily_orders"), before, "nothing committed");
}
