//! Partition state in the commit: `status`, `plan`, `backfill --only`, late data and code changes.

use crate::support::status::LogLength;
use crate::support::{
    DAILY_ORDERS_SQL, Lake, StatusSummary, customers_with_orders, daily_orders, day, distinct_customers, edited,
    lakewriter,
};

const TABLE_DIR: &str = "analytics/daily_orders";

/// `(partition, state label)` of each status line: `fresh`, `missing`, `stale:inputs_changed`…
fn states(lake: &Lake, args: &[&str]) -> Vec<(String, String)> {
    let status = lake.status(&[&["daily_orders"][..], args].concat());
    status.partitions.iter().map(|p| (p.partition.clone(), p.label())).collect()
}

fn expect(states: &[(&str, &str)]) -> Vec<(String, String)> {
    states.iter().map(|(p, s)| (format!("dt={p}"), (*s).to_owned())).collect()
}

fn add_late_orders(lake: &Lake, dt: &str) {
    let path = lake.root().join(format!("raw/orders/dt={dt}/part-late-00000.parquet"));
    lakewriter_datagen::write_parquet(&path, &lakewriter_datagen::late_orders_for(day(dt))).expect("late file");
}

/// The rows `daily_orders` writes for `dt` once its late orders (a file of their own, as
/// [`add_late_orders`] and `demo --late` deliver them) are in.
fn customers_with_late_orders(dt: &str) -> u64 {
    distinct_customers(&[lakewriter_datagen::orders_for(day(dt)), lakewriter_datagen::late_orders_for(day(dt))])
}

/// What `status` says of `days`, each written once by a backfill: fresh, with a row per
/// customer with orders that day, and the table's versions between them.
fn assert_written(lake: &Lake, days: &[&str]) {
    let status = lake.status(&["daily_orders"]);
    let written = &status.partitions;
    let shown: Vec<(&str, &str, Option<u64>)> =
        written.iter().map(|p| (p.partition.as_str(), p.state.as_str(), p.rows)).collect();
    let partitions: Vec<String> = days.iter().map(|d| format!("dt={d}")).collect();
    let expected: Vec<(&str, &str, Option<u64>)> =
        days.iter().zip(&partitions).map(|(d, p)| (p.as_str(), "fresh", Some(customers_with_orders(d)))).collect();
    assert_eq!(shown, expected);
    // Days in flight together commit in any order: which version each has varies, not the set.
    let mut versions: Vec<u64> = written.iter().filter_map(|p| p.version).collect();
    versions.sort_unstable();
    assert_eq!(versions, (0..days.len() as u64).collect::<Vec<_>>());
    // The time of the write and the run's id differ from run to run: only their form is fixed.
    assert!(written.iter().all(|p| p.written_at.is_some() && p.run_id.as_ref().is_some_and(|id| id.len() == 36)));
    let (last, count) = (days.len() as u64 - 1, days.len());
    assert_eq!(
        status.summary,
        StatusSummary {
            job: "daily_orders".into(),
            target: "analytics.daily_orders".into(),
            table_version: Some(last),
            checkpoint: None,
            log: Some(LogLength { commits_since_checkpoint: count as u64, commit_files: count as u64 }),
            maintenance: None,
            rebuild: None,
            fresh: count,
            stale: 0,
            missing: 0,
            no_input: 0,
            schema_version: 4,
        }
    );
}

#[test]
fn a_late_file_makes_exactly_its_day_stale_and_backfill_only_stale_rewrites_only_it() {
    let lake = Lake::new("2026-09-01", "2026-09-04");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-04"]).assert_code(0);
    let fresh = [("2026-09-01", "fresh"), ("2026-09-02", "fresh"), ("2026-09-03", "fresh"), ("2026-09-04", "fresh")];
    assert_eq!(states(&lake, &[]), expect(&fresh));
    assert_written(&lake, &["2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04"]);

    // A run of a fresh day says so.
    let (reports, _) = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0).json();
    assert_eq!(reports[0].note.as_deref(), Some("was already fresh (same code and inputs)"), "{reports:?}");

    add_late_orders(&lake, "2026-09-02");
    let one_stale = [("2026-09-01", "fresh"), ("2026-09-02", "stale:inputs_changed"), ("2026-09-03", "fresh")];
    assert_eq!(states(&lake, &["--from", "2026-09-01", "--to", "2026-09-03"]), expect(&one_stale));
    let with_missing = states(&lake, &["--from", "2026-09-04", "--to", "2026-09-05"]);
    assert_eq!(with_missing, expect(&[("2026-09-04", "fresh"), ("2026-09-05", "no_input")]));

    // `plan` says what would run, and writes nothing.
    let commits = lake.commit_count(TABLE_DIR);
    let plan = lake.plan(&["daily_orders", "--from", "2026-09-01", "--to", "2026-09-05", "--only", "stale"]);
    assert_eq!(plan.runs(), ["dt=2026-09-02", "dt=2026-09-05"]);
    assert_eq!((plan.summary.run, plan.summary.skip), (2, 3));
    assert_eq!(lake.commit_count(TABLE_DIR), commits, "plan commits nothing");
    let missing_only = lake.plan(&["daily_orders", "--from", "2026-09-01", "--to", "2026-09-05", "--only", "missing"]);
    assert_eq!(missing_only.runs(), ["dt=2026-09-05"]);

    let before = lake.digest("analytics.daily_orders", Some("2026-09-02"));
    let untouched =
        [lake.partition_files(TABLE_DIR, "dt=2026-09-01"), lake.partition_files(TABLE_DIR, "dt=2026-09-03")];
    let (reports, summary) = lake
        .cli(&["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-04", "--only", "stale"])
        .assert_code(0)
        .json();
    let ran: Vec<&str> = reports.iter().map(|r| r.partition.as_str()).collect();
    assert_eq!(ran, ["dt=2026-09-02"]);
    let rows = customers_with_late_orders("2026-09-02");
    assert_eq!((summary.partitions, summary.ok, summary.failed, summary.rows_written), (1, 1, 0, rows));
    assert_ne!(
        lake.digest("analytics.daily_orders", Some("2026-09-02")).digest,
        before.digest,
        "the late orders count"
    );
    assert_eq!(
        [lake.partition_files(TABLE_DIR, "dt=2026-09-01"), lake.partition_files(TABLE_DIR, "dt=2026-09-03")],
        untouched
    );
    assert_eq!(states(&lake, &["--from", "2026-09-01", "--to", "2026-09-04"]), expect(&fresh));

    // Nothing stale: nothing runs.
    let run = lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-04", "--only", "stale"]);
    run.assert_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert_eq!(lines[0], "daily_orders: nothing to run: no stale partition in 2026-09-01..2026-09-04");
    // The summary line ends with the run's duration.
    assert!(
        lines[1].starts_with("daily_orders: 0 partitions, 0 ok, 0 failed, 0 rows written, table version -, "),
        "{}",
        run.stdout
    );
}

#[test]
fn editing_the_sql_makes_every_written_partition_stale_by_code() {
    let lake = Lake::new("2026-09-01", "2026-09-02");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02"]).assert_code(0);

    // White space is not code.
    lake.set_project(&daily_orders(&DAILY_ORDERS_SQL.replace(' ', "\n  ")));
    assert_eq!(states(&lake, &[]), expect(&[("2026-09-01", "fresh"), ("2026-09-02", "fresh")]));

    let edited = edited(DAILY_ORDERS_SQL, "COUNT(*) AS orders", "COUNT(DISTINCT order_id) AS orders");
    lake.set_project(&daily_orders(&edited));
    let stale = [("2026-09-01", "stale:code_changed"), ("2026-09-02", "stale:code_changed")];
    assert_eq!(states(&lake, &[]), expect(&stale));

    let (reports, _) = lake
        .cli(&["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-02", "--only", "stale"])
        .assert_code(0)
        .json();
    assert_eq!(reports.len(), 2);
    assert_eq!(states(&lake, &[]), expect(&[("2026-09-01", "fresh"), ("2026-09-02", "fresh")]));
}

#[test]
fn a_failed_run_leaves_the_recorded_state_and_the_data_as_they_were() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    let before = lake.status(&["daily_orders"]).partitions;
    let digest = lake.digest("analytics.daily_orders", None);

    // The new SQL writes its rows into another partition: the write fails after writing data
    // files, before its commit.
    let outside = edited(DAILY_ORDERS_SQL, "$dt AS dt", "DATE '2026-01-01' AS dt");
    lake.set_project(&daily_orders(&outside));
    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-09-01"]);
    run.assert_code(1);
    let error = run.json().0.remove(0).error.expect("an error");
    assert_eq!(
        error,
        format!(
            "daily_orders dt=2026-09-01: analytics.daily_orders: the result has {} rows whose `dt` is not 2026-09-01; \
             nothing was committed",
            customers_with_orders("2026-09-01")
        )
    );

    let after = lake.status(&["daily_orders"]).partitions;
    let written = |p: &crate::support::PartitionStatus| (p.version, p.written_at.clone(), p.rows);
    assert_eq!(written(&after[0]), written(&before[0]));
    assert_eq!(after[0].reasons, ["code_changed"], "the code changed; the state did not");
    assert_eq!(lake.digest("analytics.daily_orders", None), digest);
}

#[test]
fn status_before_the_first_write_says_so_and_reads_no_table_it_cannot_find() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let run = lake.cli(&["status", "daily_orders"]);
    run.assert_code(0);
    assert_eq!(
        run.stdout,
        "daily_orders -> analytics.daily_orders (overwrite_partition), table version none yet\n\
         daily_orders: no partition written yet; `lakewriter status daily_orders --from D1 --to D2` shows which days \
         of a range are missing\n"
    );
    assert_eq!(run.stderr, "");
    assert_eq!(states(&lake, &["--from", "2026-09-01", "--to", "2026-09-01"]), expect(&[("2026-09-01", "missing")]));
    let text = lake.cli(&["status", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-01"]);
    text.assert_code(0);
    assert_eq!(
        text.stdout,
        "daily_orders -> analytics.daily_orders (overwrite_partition), table version none yet\n\
         \x20 partition        state                                 version  written (UTC)            rows\n\
         \x20 dt=2026-09-01    missing                                     -  -                           -\n\
         daily_orders: 1 partition: 0 fresh, 0 stale, 1 missing\n"
    );
}

#[test]
fn the_state_of_partitions_before_a_checkpoint_is_read_from_the_checkpoint() {
    // 105 commits: delta-rs writes a checkpoint at version 99 (every 100 commits by default).
    let lake = Lake::new("2026-01-01", "2026-04-15");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-01-01", "--to", "2026-04-15", "--parallel", "2"])
        .assert_code(0);
    let log = lake.root().join(TABLE_DIR).join("_delta_log");
    assert!(log.join(format!("{:020}.checkpoint.parquet", 99)).exists(), "delta-rs wrote a checkpoint");

    add_late_orders(&lake, "2026-01-10");
    let status = lake.status(&["daily_orders"]);
    let partitions = &status.partitions;
    let shown: Vec<(String, &str)> = partitions.iter().map(|p| (p.partition.clone(), p.state.as_str())).collect();
    let expected: Vec<(String, &str)> = crate::support::days("2026-01-01", "2026-04-15")
        .map(|d| (format!("dt={d}"), if d == day("2026-01-10") { "stale" } else { "fresh" }))
        .collect();
    assert_eq!(shown, expected);
    let counts = StatusSummary {
        job: "daily_orders".into(),
        target: "analytics.daily_orders".into(),
        table_version: Some(104),
        checkpoint: Some(99),
        log: Some(LogLength { commits_since_checkpoint: 5, commit_files: 105 }),
        maintenance: None,
        rebuild: None,
        fresh: 104,
        stale: 1,
        missing: 0,
        no_input: 0,
        schema_version: 4,
    };
    assert_eq!(status.summary, counts);
    // When each was written differs from run to run.
    assert!(partitions.iter().all(|p| p.written_at.is_some()));
    // The version, rows and run id of every write are known, those before the checkpoint from
    // the commit files the log keeps; which day has which version varies, as two days in flight
    // commit in either order.
    let mut versions: Vec<u64> = partitions.iter().map(|p| p.version.expect("a version")).collect();
    versions.sort_unstable();
    assert_eq!(versions, (0..105).collect::<Vec<u64>>());
    for p in partitions {
        let rows = customers_with_orders(p.dt.as_deref().expect("a dt partition"));
        assert_eq!((p.rows, p.run_id.as_ref().map(String::len)), (Some(rows), Some(36)), "{p:?}");
    }
}

/// The late-data walk-through of docs/guide/state.md, on the demo.
#[test]
fn the_demo_late_data_walk_through() {
    let lake = Lake::demo();
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-10"]).assert_code(0);
    let delivered = lake.run_demo(&["--late", "2026-09-03"]);
    delivered.assert_code(0);
    let root = format!("file://{}/", lake.root().display());
    assert_eq!(
        delivered.stdout,
        format!("late orders delivered: raw/orders/dt=2026-09-03/part-late-00000.parquet (below {root})\n")
    );

    let mut partitions: Vec<(String, &str, u64)> = crate::support::days("2026-09-01", "2026-09-10")
        .map(|d| (format!("dt={d}"), "fresh", customers_with_orders(&d.to_string())))
        .collect();
    partitions[2].1 = "stale: inputs changed";
    assert_status_text(&lake, 9, &partitions, "10 partitions: 9 fresh, 1 stale, 0 missing");

    let (reports, _) = lake
        .cli(&["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-10", "--only", "stale"])
        .assert_code(0)
        .json();
    assert_eq!(reports.iter().map(|r| r.partition.as_str()).collect::<Vec<_>>(), ["dt=2026-09-03"]);
    partitions[2] = ("dt=2026-09-03".to_owned(), "fresh", customers_with_late_orders("2026-09-03"));
    assert_status_text(&lake, 10, &partitions, "10 partitions: 10 fresh, 0 stale, 0 missing");
}

/// Asserts that `status daily_orders` prints the table at `version`, then each of `partitions`
/// as `(partition, state, rows)`, then the counts `summary`. The versions the partitions were
/// written at and the times are not compared: days backfilled side by side commit in any order.
#[track_caller]
fn assert_status_text(lake: &Lake, version: u64, partitions: &[(String, &str, u64)], summary: &str) {
    let status = lake.cli(&["status", "daily_orders"]);
    status.assert_code(0);
    let lines: Vec<&str> = status.stdout.lines().collect();
    let (first, rest) = lines.split_first().expect("lines");
    let (last, rest) = rest.split_last().expect("lines");
    assert_eq!(
        *first,
        format!("daily_orders -> analytics.daily_orders (overwrite_partition), table version {version}")
    );
    assert_eq!(*last, format!("daily_orders: {summary}"));
    // The log's length: a commit a version, no checkpoint yet (none is due before version 99).
    let commits = version + 1;
    assert_eq!(rest[0], format!("  log: {commits} commits, no checkpoint yet; {commits} commit files kept"));
    assert_eq!(
        rest[1],
        "  partition        state                                 version  written (UTC)            rows"
    );
    // The columns are set apart by two spaces or more: partition, state, version, time, rows.
    let shown: Vec<(String, &str, u64)> = rest[2..]
        .iter()
        .map(|line| match line.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect::<Vec<_>>()[..] {
            [partition, state, _version, _written, rows] => (partition.to_owned(), state, rows.parse().expect("rows")),
            _ => panic!("not a partition line: {line}\n{}", status.stdout),
        })
        .collect();
    assert_eq!(shown, partitions, "{}", status.stdout);
}

/// Kills a run at several moments (SIGKILL: no clean-up). Whenever it dies, the table's state and
/// data agree: either both are as before (the partition still reads stale), or both are the new
/// ones (fresh, with the content a complete run writes).
#[test]
fn a_run_killed_at_any_moment_leaves_state_and_data_together() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    let project = lake.project_file();
    let args = ["--project", project.to_str().expect("utf-8"), "run", "daily_orders", "--dt", "2026-09-01"];
    for (round, delay_ms) in [0u64, 40, 80, 120, 160, 200, 300, 450].into_iter().enumerate() {
        let late_file = lake.root().join(format!("raw/orders/dt=2026-09-01/part-late-{round:05}.parquet"));
        lakewriter_datagen::write_parquet(&late_file, &lakewriter_datagen::late_orders_for(day("2026-09-01")))
            .expect("late file");
        let before = lake.digest("analytics.daily_orders", Some("2026-09-01"));
        assert_eq!(states(&lake, &[]), expect(&[("2026-09-01", "stale:inputs_changed")]));

        let mut child = crate::support::command(&args, lake.path(), &[])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();

        let after_kill = (lake.digest("analytics.daily_orders", Some("2026-09-01")), states(&lake, &[]));
        lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
        let complete = lake.digest("analytics.daily_orders", Some("2026-09-01"));
        assert_ne!(complete.digest, before.digest, "the late orders change the partition");
        let (killed, recorded) = after_kill;
        let as_before = killed.digest == before.digest && recorded == expect(&[("2026-09-01", "stale:inputs_changed")]);
        let as_complete = killed.digest == complete.digest && recorded == expect(&[("2026-09-01", "fresh")]);
        assert!(
            as_before || as_complete,
            "killed after {delay_ms} ms: digest {} (before {}, complete {}), state {recorded:?}",
            killed.digest,
            before.digest,
            complete.digest
        );
    }
}

/// Copies `from` into `to` as `cp -a` would: new files (new inodes), the same modification times.
fn copy_preserving_times(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("folder");
    for entry in std::fs::read_dir(from).expect("read folder") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_preserving_times(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
            let modified = entry.metadata().and_then(|m| m.modified()).expect("mtime");
            std::fs::File::options()
                .write(true)
                .open(&target)
                .and_then(|f| f.set_modified(modified))
                .expect("set mtime");
        }
    }
}

#[test]
fn a_lakehouse_copied_elsewhere_keeps_its_partitions_fresh() {
    let lake = Lake::new("2026-09-01", "2026-09-03");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-03"]).assert_code(0);
    let copy = tempfile::tempdir().expect("temp dir");
    copy_preserving_times(lake.path(), copy.path());
    let project = copy.path().join("lakewriter.toml");
    let run =
        lakewriter(&["--project", project.to_str().expect("utf-8"), "--json", "status", "daily_orders"], copy.path());
    run.assert_code(0);
    // New inodes change no fingerprint: every partition reads fresh, as in the original, whose
    // status the copy's is, line for line (the same commits, times and run ids).
    assert_written(&lake, &["2026-09-01", "2026-09-02", "2026-09-03"]);
    let original = lake.cli(&["--json", "status", "daily_orders"]);
    assert_eq!(run.stdout, original.assert_code(0).stdout);
}

#[test]
fn a_failed_checkpoint_does_not_fail_the_run_whose_commit_landed() {
    // Versions 0..=98, then the commit of version 99, after which a checkpoint is due: the
    // checkpoint cannot be written (a folder holds its name), the commit has landed all the same.
    let lake = Lake::new("2026-01-01", "2026-04-10");
    lake.cli(&["backfill", "daily_orders", "--from", "2026-01-01", "--to", "2026-04-09", "--parallel", "2"])
        .assert_code(0);
    let log = lake.root().join(TABLE_DIR).join("_delta_log");
    let blocked = log.join(format!("{:020}.checkpoint.parquet", 99));
    std::fs::create_dir_all(blocked.join("in-the-way")).expect("block the checkpoint");

    let run = lake.cli(&["--json", "run", "daily_orders", "--dt", "2026-04-10"]);
    run.assert_code(0);
    let report = run.json().0.remove(0);
    assert_eq!((report.status.as_str(), report.committed, report.table_version), ("ok", true, Some(99)), "{report:?}");
    assert_eq!(report.rows_written, Some(customers_with_orders("2026-04-10")), "{report:?}");
    let logged = "committed; writing the checkpoint failed (the next one will be written as usual) \
                  table=\"analytics.daily_orders\" version=99 \
                  error=Generic LocalFileSystem error: Unable to rename file: Is a directory (os error 21)";
    // The line starts with the time it was logged and the span of the run that logged it.
    let span = "  WARN partition{job=daily_orders partition=dt=2026-04-10 run_id=";
    let lines: Vec<&str> =
        run.stderr.lines().filter_map(|l| l.split_once(span)?.1.split_once("}: ").map(|(_, m)| m)).collect();
    assert_eq!((lines, run.stderr.lines().count()), (vec![logged], 1), "the failure is logged once: {}", run.stderr);
    assert!(blocked.is_dir() && !log.join("_last_checkpoint").exists(), "no checkpoint was written");

    // The table reads and reruns as usual.
    assert_eq!(states(&lake, &["--from", "2026-04-10", "--to", "2026-04-10"]), expect(&[("2026-04-10", "fresh")]));
    lake.cli(&["run", "daily_orders", "--dt", "2026-04-10"]).assert_code(0);
}
