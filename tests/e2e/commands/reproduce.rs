//! Reproducing a lakehouse from raw into another root, and auditing the live tables against it:
//! equal when untouched, and the partition an independent writer edited by hand, and the
//! partitions a code edit explains, found — locally and on the S3 test server.

use serde_json::Value;

use crate::support::json_lines;
use crate::support::pipeline::{lake, pipeline};
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{Lake, day};

/// The audit lines of `lakewriter --json audit ARGS…` (exit `code`), and its summary.
fn audit(lake: &Lake, args: &[&str], code: i32) -> (Vec<Value>, Value) {
    let run = lake.cli(&[&["--json", "audit"][..], args].concat());
    run.assert_code(code);
    let mut lines = json_lines(&run);
    let summary = lines.pop().expect("a summary")["summary"].clone();
    (lines, summary)
}

/// `(job, partition, verdict)` of the audit lines that are not `equal`.
fn not_equal(lines: &[Value]) -> Vec<(String, String, String)> {
    lines
        .iter()
        .filter(|l| l["verdict"] != "equal")
        .map(|l| {
            let text = |k: &str| l[k].as_str().expect(k).to_owned();
            (text("job"), text("partition"), text("verdict"))
        })
        .collect()
}

/// The table version of `job`'s target, from `status --json`'s summary.
fn table_version(lake: &Lake, job: &str) -> Option<u64> {
    lake.status(&[job]).summary.table_version
}

/// The first customer with an order on `dt`: a row of `daily_orders` for that day.
fn a_customer(dt: &str) -> i64 {
    let orders = lakewriter_datagen::orders_for(day(dt));
    let ids = orders.column_by_name("customer_id").expect("customer_id");
    ids.as_any().downcast_ref::<arrow::array::Int64Array>().expect("Int64").value(0)
}

/// `root2` and `root3` are roots apart from `lake`'s; `table_uri` gives a live table's URI for
/// the independent writer.
fn reproduce_and_audit(lake: &Lake, root2: &str, root3: &str, table_uri: &dyn Fn(&str) -> String) {
    let range = ["--from", "2026-09-01", "--to", "2026-09-10"];
    lake.cli(&[&["backfill", "--all"][..], &range].concat()).assert_code(0);

    let logs = |lake: &Lake| ["daily_orders", "weekly_revenue", "weekly_summary"].map(|j| table_version(lake, j));
    let live = logs(lake);
    let reproduce = lake.cli(&["--json", "reproduce", "--all", "--into", root2]);
    reproduce.assert_code(0);
    assert_eq!(logs(lake), live, "the live tables were not written");
    let (lines, summary) = audit(lake, &["--all", "--against", root2], 0);
    assert_eq!(
        summary,
        serde_json::json!({
            "jobs": 3, "partitions": 30, "equal": 30, "differs": 0, "missing_here": 0, "missing_there": 0,
            "schema_version": 4
        })
    );
    assert!(lines.iter().all(|l| l["digest_here"] == l["digest_there"] && l["code_changed"] == false));

    let (_, scratch) = audit(lake, &["--all", "--scratch"], 0);
    assert_eq!(scratch, summary, "a reproduction in a scratch folder audits the same");

    // An edit by hand: another writer deletes one row of one live partition.
    let customer = a_customer("2026-09-05");
    let predicate = format!("dt = '2026-09-05' AND customer_id = {customer}");
    assert_eq!(Reader::new(lake).delete(&predicate, &table_uri("analytics/daily_orders")), 1);
    let (lines, summary) = audit(lake, &["daily_orders", "--against", root2], 1);
    assert_eq!(not_equal(&lines), [("daily_orders".into(), "dt=2026-09-05".into(), "differs".into())]);
    let edited = lines.iter().find(|l| l["verdict"] == "differs").expect("the edited partition");
    assert_eq!((edited["rows_added"].as_u64(), edited["rows_removed"].as_u64()), (Some(1), Some(0)));
    let example = edited["added_examples"][0].as_str().expect("an example of the missing row");
    assert!(example.starts_with(&format!("customer_id={customer}, ")), "{example}");
    assert_eq!(edited["code_changed"], false);
    assert_eq!(summary["differs"], 1);
    let (lines, _) =
        audit(lake, &["daily_orders", "weekly_revenue", "--from", "2026-09-05", "--to", "2026-09-05", "--scratch"], 1);
    assert_eq!(not_equal(&lines), [("daily_orders".into(), "dt=2026-09-05".into(), "differs".into())]);
    assert_eq!(lines.len(), 2, "one day of each job: {lines:?}");
    let text = lake.cli(&["audit", "daily_orders", "--against", root2, "--from", "2026-09-05", "--to", "2026-09-05"]);
    text.assert_code(1);
    assert_eq!(text.stdout.lines().next(), Some("  daily_orders  dt=2026-09-05  differs: 1 row added, 0 removed"));
    text.assert_line("audit: 1 job, 1 partition: 0 equal, 1 differ, 0 missing here, 0 missing there");

    // A code edit: one day rerun live with the new code; the reproduction made with it differs
    // from the other days, written with the old code, and says so.
    let edited_project = pipeline().edited_sql("daily_orders", "COUNT(*) AS orders", "COUNT(*) * 10 AS orders");
    lake.set_project(&edited_project);
    lake.cli(&["run", "daily_orders", "--dt", "2026-09-07"]).assert_code(0);
    lake.cli(&["reproduce", "daily_orders", "--from", "2026-09-06", "--to", "2026-09-08", "--into", root3])
        .assert_code(0);
    let (lines, _) =
        audit(lake, &["daily_orders", "--from", "2026-09-06", "--to", "2026-09-08", "--against", root3], 1);
    let verdicts: Vec<(&str, &str, bool)> = lines
        .iter()
        .map(|l| {
            (
                l["partition"].as_str().expect("partition"),
                l["verdict"].as_str().expect("verdict"),
                l["code_changed"] == true,
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [("dt=2026-09-06", "differs", true), ("dt=2026-09-07", "equal", false), ("dt=2026-09-08", "differs", true)]
    );
    // Nothing above the reproduced job, and only its range, was written there.
    assert_eq!(audit(lake, &["weekly_revenue", "--against", root3], 1).1["missing_there"], 10);
}

#[test]
fn a_reproduction_audits_equal_and_an_edit_by_hand_and_a_code_edit_are_found() {
    let lake = lake(&pipeline());
    let (root2, root3) = (lake.path().join("repro"), lake.path().join("repro-new-code"));
    let (root2, root3) = (root2.to_str().expect("utf-8"), root3.to_str().expect("utf-8"));
    let root = lake.root();
    reproduce_and_audit(&lake, root2, root3, &|table| root.join(table).display().to_string());
    assert!(std::path::Path::new(root2).join("analytics/weekly_revenue/_delta_log").exists());

    // The project's own root, a root inside it or holding it, also by `..` or through a link, is
    // refused: a reproduction never writes there.
    let link = lake.path().join("link");
    std::os::unix::fs::symlink(lake.root(), &link).expect("a link to the root");
    let dotted = lake.root().join("../lake").display().to_string();
    let (root, inside, link) =
        (lake.root().display().to_string(), lake.root().join("x").display().to_string(), link.display().to_string());
    let holding = lake.path().display().to_string();
    for into in [root, inside, dotted, link, holding] {
        let run = lake.cli(&["reproduce", "--all", "--into", &into]);
        run.assert_code(2);
        assert!(run.stderr.contains("the reproduction's root must be apart from the project's root"), "{}", run.stderr);
    }
}

#[test]
fn reproduce_and_audit_on_s3() {
    let s3 = S3::new("reproduce");
    s3.lake.prepare_demo();
    s3.lake.set_project(&pipeline());
    let (root2, root3) =
        (format!("{}-repro/", s3.root().trim_end_matches('/')), format!("{}-repro3/", s3.root().trim_end_matches('/')));
    reproduce_and_audit(&s3.lake, &root2, &root3, &|table| s3.url(table));
}

/// A reproduction rebuilds exactly the days each job wrote live — not the days between them —
/// and a job never written live is said to have nothing to reproduce: the reproduction and the
/// audits against it, and in a scratch folder, pass.
#[test]
fn a_reproduction_rebuilds_exactly_the_days_written_live() {
    let lake = lake(&pipeline());
    for dt in ["2026-09-01", "2026-09-03"] {
        lake.cli(&["run", "daily_orders", "--dt", dt]).assert_code(0);
    }
    let root2 = lake.path().join("repro");
    let root2 = root2.to_str().expect("utf-8");
    let reproduce = lake.cli(&["reproduce", "--all", "--into", root2]);
    reproduce.assert_code(0);
    for job in ["weekly_revenue", "weekly_summary"] {
        reproduce.assert_line(&format!("{job}: no partition written in the live lakehouse: nothing to reproduce"));
    }
    let (lines, summary) = audit(&lake, &["--all", "--against", root2], 0);
    assert_eq!(not_equal(&lines), [], "{lines:?}");
    let counts = (&summary["partitions"], &summary["equal"], &summary["missing_here"], &summary["missing_there"]);
    assert_eq!(counts, (&2.into(), &2.into(), &0.into(), &0.into()), "{summary}");
    let (_, scratch) = audit(&lake, &["--all", "--scratch"], 0);
    assert_eq!((&scratch["equal"], &scratch["missing_here"]), (&2.into(), &0.into()), "{scratch}");
}

/// A `rebuild` partitioned by a column that is not a day (the orders' `status`) is audited whole,
/// as one partition `all`: equal against its reproduction, and a row edited by hand found.
#[test]
fn a_table_partitioned_by_other_values_than_days_is_audited_whole() {
    use crate::support::Job;
    let project = crate::support::Project::new().job(
        Job::rebuild("by_status", "analytics.by_status")
            .partition_by("status")
            .sql("SELECT status, COUNT(*) AS orders FROM raw.orders GROUP BY status"),
    );
    let lake = lake(&project);
    lake.cli(&["run", "by_status"]).assert_code(0);
    let root2 = lake.path().join("repro");
    let root2 = root2.to_str().expect("utf-8");
    lake.cli(&["reproduce", "by_status", "--into", root2]).assert_code(0);
    let (lines, summary) = audit(&lake, &["by_status", "--against", root2], 0);
    assert_eq!((&summary["partitions"], &summary["equal"]), (&1.into(), &1.into()), "{summary}");
    assert_eq!(lines[0]["partition"], "all", "{lines:?}");

    let table = lake.root().join("analytics/by_status").display().to_string();
    assert!(Reader::new(&lake).delete("status = 'cancelled'", &table) > 0, "a row deleted by hand");
    let (lines, _) = audit(&lake, &["by_status", "--against", root2], 1);
    assert_eq!(not_equal(&lines), [("by_status".to_owned(), "all".to_owned(), "differs".to_owned())]);
}
