//! The project builder of `support`: the file it writes holds every key as set, whatever the
//! quoting a string needs, and the binary reads it.

use crate::support::figures::Figures;
use crate::support::{Checks, DAILY_ORDERS_SQL, Job, Lake, Project};

/// SQL that no single TOML quoting style holds as it is.
const AWKWARD_SQL: &str = "SELECT '''a''' AS x, \"\"\"b\"\"\" AS y, 'c\\d' AS z,\n\t$dt AS dt -- é\r\n";

/// Every kind of check, and a check that warns.
fn every_check() -> Checks {
    Checks::new()
        .not_null("dt")
        .unique(&["x", "y"])
        .accepted_values("x", &["a", "b"])
        .accepted_values("n", &[1, 2])
        .row_count(Some(1), Some(9))
        .expect("n >= 0")
        .change_vs_previous(50.0)
        .warn("row_count")
}

/// One job of each mode and one written as a statement, with every setting of each.
fn every_key(root: &str) -> Project {
    Project::new()
        .root(root)
        .storage("aws_region", "${LAKEWRITER_TEST_REGION}")
        .job(
            Job::new("daily", "a.daily")
                .sql(AWKWARD_SQL)
                .allow_nondeterministic()
                .not_null(&["dt", "x"])
                .checks(every_check()),
        )
        .job(Job::statement("inserted", "a.inserted", "INSERT OVERWRITE a.inserted PARTITION (dt = $dt) SELECT 5 AS n"))
        .job(
            Job::merge("merged", "a.merged", &["k1", "k2"], "v")
                .delete_when("op = 'd'")
                .duplicate_keys_are_errors()
                .partition_by("dt")
                .sql("SELECT 1"),
        )
        .job(Job::delete_insert("sliced", "a.sliced", "d = $dt").sql_file("jobs/sliced.sql"))
        .job(Job::append_dedup("seen", "a.seen", &["id"]).sql("SELECT 2"))
        .job(Job::append("log", "a.log").sql("SELECT 3"))
        .job(Job::rebuild("totals", "a.totals").sql("SELECT 4"))
        .source_unique("raw.orders", &["order_id", "dt"])
}

#[test]
fn the_builder_writes_every_key_as_set() {
    let written: toml::Table = toml::from_str(&every_key("s3://bucket/prefix").to_toml()).expect("TOML");
    let expected: toml::Table = toml::from_str(
        r#"
root = "s3://bucket/prefix"

[storage]
aws_region = "${LAKEWRITER_TEST_REGION}"

[jobs.daily]
target = "a.daily"
write = "overwrite_partition"
partition_by = "dt"
allow_nondeterministic = true
not_null = ["dt", "x"]
sql = "SELECT '''a''' AS x, \"\"\"b\"\"\" AS y, 'c\\d' AS z,\n\t$dt AS dt -- é\r\n"

[jobs.daily.checks]
not_null = ["dt"]
unique = [["x", "y"]]
accepted_values = { x = ["a", "b"], n = [1, 2] }
row_count = { min = 1, max = 9 }
expect = ["n >= 0"]
change_vs_previous = { max_row_count_change_pct = 50.0 }
warn = ["row_count"]

[jobs.inserted]
target = "a.inserted"
sql = "INSERT OVERWRITE a.inserted PARTITION (dt = $dt) SELECT 5 AS n"

[jobs.merged]
target = "a.merged"
write = "merge"
partition_by = "dt"
key = ["k1", "k2"]
newer_by = "v"
on_duplicate_keys = "error"
delete_when = "op = 'd'"
sql = "SELECT 1"

[jobs.sliced]
target = "a.sliced"
write = "delete_insert"
predicate = "d = $dt"
sql_file = "jobs/sliced.sql"

[jobs.seen]
target = "a.seen"
write = "append_dedup"
key = ["id"]
sql = "SELECT 2"

[jobs.log]
target = "a.log"
write = "append"
sql = "SELECT 3"

[jobs.totals]
target = "a.totals"
write = "rebuild"
sql = "SELECT 4"

[sources."raw.orders"]
unique = ["order_id", "dt"]
"#,
    )
    .expect("TOML");
    assert_eq!(written, expected);
    assert_eq!(written["jobs"]["daily"]["sql"].as_str(), Some(AWKWARD_SQL));
}

#[test]
fn the_binary_reads_every_key_the_builder_writes() {
    let lake = Lake::empty(&[("LAKEWRITER_TEST_REGION", "us-east-1")]);
    lake.set_project(&every_key(lake.root().to_str().expect("utf-8 path")));
    std::fs::create_dir_all(lake.root()).expect("root folder");
    let run = lake.cli(&["run", "nope", "--dt", "2026-09-01"]);
    run.assert_code(2);
    assert_eq!(
        run.stderr,
        format!(
            "error: {}: no job `nope`; jobs here: daily, inserted, log, merged, seen, sliced, totals\n",
            lake.project_file().display()
        )
    );
}

#[test]
fn a_job_reads_its_sql_file_relative_to_the_project_file() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    let before = lake.digest("analytics.daily_orders", None);
    std::fs::create_dir_all(lake.path().join("jobs")).expect("jobs folder");
    std::fs::write(lake.path().join("jobs/daily_orders.sql"), DAILY_ORDERS_SQL).expect("SQL file");
    let from_file = Job::new("daily_orders", "analytics.daily_orders").sql_file("jobs/daily_orders.sql");
    lake.set_project(&Project::new().job(from_file));

    // The same SQL, so the same code: the partition is still fresh, and a rerun writes the same.
    let status = lake.status(&["daily_orders"]);
    let first = &status.partitions[0];
    assert_eq!((first.partition.as_str(), first.state.as_str()), ("dt=2026-09-01", "fresh"), "{first:?}");
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-01"]).assert_code(0);
    let after = lake.digest("analytics.daily_orders", None);
    assert_eq!((after.digest, after.rows, after.version), (before.digest, before.rows, before.version + 1));
}

#[test]
fn an_unreadable_sql_file_is_a_configuration_error_before_anything_runs() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let missing = Job::new("daily_orders", "analytics.daily_orders").sql_file("jobs/missing.sql");
    lake.set_project(&Project::new().job(missing));
    let path = lake.path().join("jobs/missing.sql");
    let expected = format!(
        "error: job `daily_orders`: cannot read sql_file {}\n  caused by: No such file or directory (os error 2)\n",
        path.display()
    );
    let mut figures =
        Figures::new("bad input: a sql_file that does not exist", "jobs::project_file::an_unreadable_sql_file");
    for args in [
        &["--json", "run", "daily_orders", "--dt", "2026-09-01"][..],
        &["--json", "backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-01"],
        &["verify", "daily_orders", "--dt", "2026-09-01"],
    ] {
        let run = lake.cli(args);
        run.assert_code(2);
        assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", expected.as_str()), "{args:?}");
        figures.trial(
            args.iter().find(|a| !a.starts_with("--")).expect("a command"),
            "clear error, exit 2, nothing committed",
        );
    }
    assert!(!lake.root().join("analytics/daily_orders").exists(), "nothing written");
    figures.finish();
}
