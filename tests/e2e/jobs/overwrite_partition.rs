//! `write = "overwrite_partition"`: run, rerun, backfill, and every way a run can fail.

use crate::support::{
    DAILY_ORDERS_SQL, Lake, Report, customers_with_orders, daily_orders, daily_orders_rows, days, edited,
};

const TABLE: &str = "analytics.daily_orders";
const TABLE_DIR: &str = "analytics/daily_orders";

/// `(partition, status, rows written)` of each report, in date order (a backfill prints each
/// report as its partition finishes: partitions in flight together finish in any order).
fn outcomes(reports: &[Report]) -> Vec<(String, String, Option<u64>)> {
    let mut outcomes: Vec<_> =
        reports.iter().map(|r| (r.partition.clone(), r.status.clone(), r.rows_written)).collect();
    outcomes.sort();
    outcomes
}

/// The outcome of an `ok` run of `daily_orders` for each day of `from..=to`: a row a customer.
fn written(from: &str, to: &str) -> Vec<(String, String, Option<u64>)> {
    days(from, to).map(|d| (format!("dt={d}"), "ok".to_owned(), Some(customers_with_orders(&d.to_string())))).collect()
}

#[test]
fn running_a_partition_twice_leaves_the_table_unchanged() {
    let lake = Lake::new("2026-09-01", "2026-09-03");
    let (reports, summary) = lake
        .cli(&["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-03"])
        .assert_code(0)
        .json();
    let rows = daily_orders_rows("2026-09-01", "2026-09-03");
    assert_eq!((summary.partitions, summary.ok, summary.failed, summary.rows_written), (3, 3, 0, rows));
    assert_eq!(outcomes(&reports), written("2026-09-01", "2026-09-03"));

    let table_before = lake.digest(TABLE, None);
    assert_eq!((table_before.rows, table_before.version), (rows, 2));
    let day_before = lake.digest(TABLE, Some("2026-09-02"));
    assert_eq!(day_before.rows, customers_with_orders("2026-09-02"));
    let others_before =
        [lake.partition_files(TABLE_DIR, "dt=2026-09-01"), lake.partition_files(TABLE_DIR, "dt=2026-09-03")];
    // delta-rs writes each partition's rows through one writer: one file, far below its size limit.
    assert_eq!(others_before.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1], "{others_before:?}");

    let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-02"]).assert_code(0).json();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].table_version, Some(table_before.version + 1), "a rerun is one new commit");

    let table_after = lake.digest(TABLE, None);
    assert_eq!((table_after.digest.as_str(), table_after.rows), (table_before.digest.as_str(), table_before.rows));
    assert_eq!(table_after.version, table_before.version + 1);
    assert_eq!(lake.digest(TABLE, Some("2026-09-02")).digest, day_before.digest);
    let others_after =
        [lake.partition_files(TABLE_DIR, "dt=2026-09-01"), lake.partition_files(TABLE_DIR, "dt=2026-09-03")];
    assert_eq!(others_after, others_before, "other partitions' files are untouched");
}

#[test]
fn each_commit_records_its_job_partition_code_and_inputs() {
    let lake = Lake::new("2026-09-05", "2026-09-05");
    let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-05"]).assert_code(0).json();
    let version = reports[0].table_version.expect("version");
    let info = lake.commit_info(TABLE_DIR, version);
    let meta = &info["lakewriter"];
    assert_eq!(meta["job"], "daily_orders");
    assert_eq!(meta["partition"], "dt=2026-09-05");
    assert_eq!(meta["write"], "overwrite_partition");
    assert_eq!(meta["lakewriter_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(meta["sql_hash"], lakewriter_core::stable_hash(DAILY_ORDERS_SQL.as_bytes()), "the SQL's hash");
    assert_eq!(reports[0].rows_written, Some(customers_with_orders("2026-09-05")));
    assert_eq!(info["operationMetrics"]["num_added_rows"].as_u64(), reports[0].rows_written);

    let raw = raw_input(&lake, "raw/orders/dt=2026-09-05/part-00000.parquet");
    assert_eq!(meta["inputs"], serde_json::json!([&raw]));
    assert_eq!(
        meta["input_fingerprint"],
        lakewriter_core::input_fingerprint(std::slice::from_ref(&raw)),
        "the inputs' fingerprint"
    );
    // The hash of the SQL and the write settings: checked below by what changes it.
    let code = meta["code_fingerprint"].as_str().expect("code fingerprint").to_owned();
    assert_eq!(code.len(), 32);
    let input = meta["input_fingerprint"].as_str().expect("input fingerprint").to_owned();
    // A new id for every run, a UUID (8-4-4-4-12 hex digits): only its form is fixed.
    let groups = meta["run_id"].as_str().map(|r| r.split('-').map(str::len).collect::<Vec<_>>());
    assert_eq!(groups, Some(vec![8, 4, 4, 4, 12]), "{meta}");
    // When the run started, before its commit: `status` shows the time between as its duration.
    let started = meta["started_at"].as_i64().expect("the run's start, in ms");
    assert!(started <= info["timestamp"].as_i64().expect("the commit's time"), "{info}");

    let rerun = |lake: &Lake| {
        let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-05"]).assert_code(0).json();
        lake.commit_info(TABLE_DIR, reports[0].table_version.expect("version"))["lakewriter"].clone()
    };
    // The same code and inputs: the same fingerprints (the run id differs).
    let same = rerun(&lake);
    assert_eq!(
        (same["code_fingerprint"].as_str(), same["input_fingerprint"].as_str()),
        (Some(code.as_str()), Some(input.as_str()))
    );
    assert_ne!(same["run_id"], meta["run_id"]);

    // White space is not code; a comment is.
    lake.set_project(&daily_orders(&DAILY_ORDERS_SQL.replace(' ', "  \n ")));
    assert_eq!(rerun(&lake)["code_fingerprint"].as_str(), Some(code.as_str()));
    let commented = format!("{DAILY_ORDERS_SQL} -- edited");
    lake.set_project(&daily_orders(&commented));
    let edited = rerun(&lake);
    assert_eq!(edited["sql_hash"], lakewriter_core::stable_hash(commented.as_bytes()), "the hash follows the SQL text");
    assert_ne!(edited["code_fingerprint"].as_str(), Some(code.as_str()));

    // A late file in the day's raw folder changes the input fingerprint.
    let late_file = lake.root().join("raw/orders/dt=2026-09-05/part-00001.parquet");
    lakewriter_datagen::write_parquet(&late_file, &lakewriter_datagen::orders_for(crate::support::day("2026-09-06")))
        .expect("late file");
    let with_late = rerun(&lake);
    let late_input = raw_input(&lake, "raw/orders/dt=2026-09-05/part-00001.parquet");
    assert_eq!(with_late["inputs"], serde_json::json!([&raw, &late_input]));
    assert_eq!(with_late["input_fingerprint"], lakewriter_core::input_fingerprint(&[raw, late_input]));
    assert_ne!(with_late["input_fingerprint"].as_str(), Some(input.as_str()));
}

/// How a commit lists the raw file `path` (below the root) it read: its size and modification
/// time, to the second, as the file system has them; no e-tag on a local file system.
fn raw_input(lake: &Lake, path: &str) -> lakewriter_core::InputFile {
    let metadata = std::fs::metadata(lake.root().join(path)).expect("raw file");
    let modified = chrono::DateTime::<chrono::Utc>::from(metadata.modified().expect("mtime"));
    let modified = Some(modified.to_rfc3339_opts(chrono::SecondsFormat::Secs, false));
    lakewriter_core::InputFile { path: path.to_owned(), size: metadata.len(), modified, e_tag: None }
}

#[test]
fn parallel_backfill_equals_sequential_backfill() {
    // As many writers as days: a commit may lose the race for a log version up to 15 times.
    let args = ["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-16", "--parallel"];
    let sequential = Lake::new("2026-09-01", "2026-09-16");
    let parallel = Lake::new("2026-09-01", "2026-09-16");
    let (_, s) = sequential.cli(&[&args[..], &["1"]].concat()).assert_code(0).json();
    let (reports, p) = parallel.cli(&[&args[..], &["16"]].concat()).assert_code(0).json();
    assert_eq!((s.ok, p.ok), (16, 16));
    let rows = daily_orders_rows("2026-09-01", "2026-09-16");
    assert_eq!((s.rows_written, p.rows_written), (rows, rows));
    let mut versions: Vec<u64> = reports.iter().filter_map(|r| r.table_version).collect();
    versions.sort_unstable();
    assert_eq!(versions, (0..16).collect::<Vec<u64>>(), "every parallel commit landed, one version each");
    assert_eq!(parallel.commit_count(TABLE_DIR), 16);
    let (a, b) = (sequential.digest(TABLE, None), parallel.digest(TABLE, None));
    assert_eq!((a.digest, a.rows, a.version), (b.digest, rows, 15));
}

#[test]
fn a_run_reads_only_its_own_raw_partition() {
    let lake = Lake::new("2026-09-01", "2026-09-05");
    let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-03"]).assert_code(0).json();
    assert_eq!(reports[0].files_scanned, Some(1), "the dt filter prunes to one day's file");

    lake.set_project(&daily_orders(
        "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt FROM raw.orders \
         WHERE CAST(created_at AS DATE) = $dt GROUP BY customer_id",
    ));
    let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-03"]).assert_code(0).json();
    assert_eq!(reports[0].files_scanned, Some(5), "without a filter on dt every day is read");
}

#[test]
fn an_empty_result_empties_the_partition_and_only_that_one() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]).assert_code(0);
    let other = lake.digest(TABLE, Some("2026-09-01"));
    assert_eq!(lake.digest(TABLE, Some("2026-09-02")).rows, customers_with_orders("2026-09-02"));

    lake.set_project(&daily_orders(&edited(
        DAILY_ORDERS_SQL,
        "WHERE dt = $dt",
        "WHERE dt = $dt AND status = 'no such status'",
    )));
    let run = lake.cli(&["run", "daily_orders", "--dt", "2026-09-02"]);
    run.assert_code(0);
    let version = lake.digest(TABLE, None).version;
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    // Each line holds a duration: `… 124 ms  (…)`, `…, 0.1 s`.
    let partition = format!("  dt=2026-09-02  ok            0 rows  version {version} ");
    assert!(lines[0].starts_with(&partition), "{}", run.stdout);
    assert!(lines[0].ends_with(" ms  (no rows: the partition is now empty)"), "{}", run.stdout);
    let summary = format!("daily_orders: 1 partition, 1 ok, 0 failed, 0 rows written, table version {version}, ");
    assert!(lines[1].starts_with(&summary), "{}", run.stdout);
    assert_eq!(lake.digest(TABLE, Some("2026-09-02")).rows, 0);
    assert_eq!(lake.digest(TABLE, Some("2026-09-01")).digest, other.digest);
}

#[test]
fn a_day_without_raw_data_is_an_empty_partition_where_the_job_says_so() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.set_project(&daily_orders(DAILY_ORDERS_SQL).with_missing_input("daily_orders", "empty"));
    let (reports, summary) = lake
        .cli(&["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"])
        .assert_code(0)
        .json();
    let rows = customers_with_orders("2026-09-01");
    assert_eq!((summary.partitions, summary.ok, summary.failed, summary.rows_written), (2, 2, 0, rows));
    let empty = ("dt=2026-09-02".to_owned(), "ok".to_owned(), Some(0));
    assert_eq!(outcomes(&reports), [written("2026-09-01", "2026-09-01")[0].clone(), empty]);
    assert_eq!(reports.iter().map(|r| r.files_scanned).collect::<Vec<_>>(), [Some(1), Some(0)]);
}

#[test]
fn a_failed_day_does_not_stop_the_backfill() {
    let lake = Lake::new("2026-09-01", "2026-09-04");
    // Fails for one day only: 2026-09-03's rows claim another partition.
    lake.set_project(&daily_orders(
        "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, \
         CASE WHEN $dt = DATE '2026-09-03' THEN DATE '2026-09-04' ELSE $dt END AS dt \
         FROM raw.orders WHERE dt = $dt GROUP BY customer_id",
    ));
    let run = lake.cli(&[
        "--json",
        "backfill",
        "daily_orders",
        "--from",
        "2026-09-01",
        "--to",
        "2026-09-04",
        "--parallel",
        "2",
    ]);
    run.assert_code(1);
    let (reports, summary) = run.json();
    let ok = ["2026-09-01", "2026-09-02", "2026-09-04"].map(customers_with_orders);
    assert_eq!((summary.partitions, summary.ok, summary.failed, summary.rows_written), (4, 3, 1, ok.iter().sum()));
    let mut expected = written("2026-09-01", "2026-09-04");
    expected[2] = ("dt=2026-09-03".to_owned(), "failed".to_owned(), None);
    assert_eq!(outcomes(&reports), expected);
    let error = reports.iter().find_map(|r| r.error.as_deref()).expect("an error");
    assert_eq!(
        error,
        format!(
            "daily_orders dt=2026-09-03: analytics.daily_orders: the result has {} rows whose `dt` is not 2026-09-03; \
             nothing was committed",
            customers_with_orders("2026-09-03")
        )
    );
    assert!(reports.iter().all(|r| r.job == "daily_orders"));
    assert_eq!(summary.table_version, Some(2));
}

#[test]
fn shards_cover_a_range_exactly_once() {
    let lake = Lake::new("2026-09-01", "2026-09-07");
    // Shard I of 3 runs the days whose number (days since 1970-01-01) is I mod 3; 2026-09-01 is
    // day 20697, 0 mod 3.
    let shards = [
        ("0/3", &["2026-09-01", "2026-09-04", "2026-09-07"][..]),
        ("1/3", &["2026-09-02", "2026-09-05"]),
        ("2/3", &["2026-09-03", "2026-09-06"]),
    ];
    let mut partitions = Vec::new();
    for (shard, days) in shards {
        let (reports, summary) = lake
            .cli(&[
                "--json",
                "backfill",
                "daily_orders",
                "--from",
                "2026-09-01",
                "--to",
                "2026-09-07",
                "--shard",
                shard,
            ])
            .assert_code(0)
            .json();
        let rows: u64 = days.iter().copied().map(customers_with_orders).sum();
        let counts = (summary.partitions, summary.ok, summary.failed, summary.rows_written);
        assert_eq!(counts, (days.len(), days.len(), 0, rows), "{shard}");
        let expected: Vec<Vec<_>> = days.iter().map(|d| written(d, d)).collect();
        assert_eq!(outcomes(&reports), expected.concat(), "{shard}");
        partitions.extend(reports.into_iter().map(|r| r.partition));
    }
    partitions.sort();
    let expected: Vec<String> = (1..=7).map(|d| format!("dt=2026-09-{d:02}")).collect();
    assert_eq!(partitions, expected);
    for bad in ["3/3", "1/0", "x/2", "1"] {
        let run = lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-07", "--shard", bad]);
        run.assert_code(2);
        assert_eq!(
            run.stderr,
            format!(
                "error: invalid value '{bad}' for '--shard <I/N>': invalid shard `{bad}`: expected I/N with 0 <= I < N, \
                 e.g. 0/4\n\nFor more information, try '--help'.\n"
            )
        );
    }
}
