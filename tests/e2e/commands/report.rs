//! `lakewriter report`: the HTML page holds a cell per partition of each job, of the state
//! `status --json` gives it over the same range, fetches nothing from elsewhere, and shows a job
//! that has written nothing as such.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{Lake, day};

/// `(job, partition) → state` of every calendar cell of the page.
fn cells(html: &str) -> BTreeMap<(String, String), String> {
    let attribute = |tag: &str, name: &str| -> String {
        let start = tag.find(&format!(" {name}=\"")).unwrap_or_else(|| panic!("no {name} in {tag}")) + name.len() + 3;
        let value = &tag[start..];
        value[..value.find('"').expect("a closing quote")].to_owned()
    };
    let mut cells = BTreeMap::new();
    for tag in html.split("<rect class=\"cell\"").skip(1) {
        let tag = &tag[..tag.find('>').expect("the tag's end")];
        let key = (attribute(tag, "data-job"), attribute(tag, "data-partition"));
        let state = attribute(tag, "data-state");
        assert!(cells.insert(key.clone(), state).is_none(), "{key:?} twice");
    }
    cells
}

/// `(job, partition) → state` of `status --json JOB ARGS…` for each of `jobs`.
fn statuses(lake: &Lake, jobs: &[&str], args: &[&str]) -> BTreeMap<(String, String), String> {
    let mut states = BTreeMap::new();
    for job in jobs {
        for p in lake.status(&[&[*job][..], args].concat()).partitions {
            states.insert((p.job, p.partition), p.state);
        }
    }
    states
}

/// The report's one `--json` line.
fn written(lake: &Lake, args: &[&str]) -> Value {
    let run = lake.cli(&[&["--json", "report"][..], args].concat());
    run.assert_code(0);
    serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("{}: {e}", run.stdout))
}

/// The demo's project with `daily_orders` written for 2026-09-01..=10 and a late file in the
/// raw partition of the 5th: one stale day, and every later day missing.
fn lake() -> Lake {
    let lake = Lake::demo();
    lake.cli(&["backfill", "daily_orders", "--from", "2026-09-01", "--to", "2026-09-10"]).assert_code(0);
    let file = lake.root().join("raw/orders/dt=2026-09-05/part-late-00000.parquet");
    lakewriter_datagen::write_parquet(&file, &lakewriter_datagen::late_orders_for(day("2026-09-05"))).expect("late");
    lake
}

#[test]
fn each_job_s_cells_are_the_partitions_status_shows_with_their_states() {
    let lake = lake();
    let range = ["--from", "2026-09-01", "--to", "2026-09-11"];
    let line = written(&lake, &[&["--out", "report.html"][..], &range].concat());
    let html = std::fs::read_to_string(lake.path().join("report.html")).expect("the page");

    let jobs = ["customers", "daily_orders", "weekly_revenue"];
    let expected = statuses(&lake, &jobs, &range);
    let shown = cells(&html);
    assert_eq!(shown, expected, "a cell per partition, of its state");
    let count = |job: &str, state: &str| expected.iter().filter(|((j, _), s)| j == job && s.as_str() == state).count();
    assert_eq!(
        (count("daily_orders", "fresh"), count("daily_orders", "stale"), count("daily_orders", "missing")),
        (9, 1, 1)
    );
    assert_eq!(count("weekly_revenue", "missing"), 11, "a job that wrote nothing: every day missing");
    assert_eq!(
        line,
        serde_json::json!({"path": "report.html", "jobs": 3, "not_written": 0, "failed": 0,
            "fresh": 9, "stale": 1, "missing": 23, "no_input": 0, "schema_version": 4})
    );
    assert!(!html.contains("http://") && !html.contains("https://"), "the page names no other site");
    assert!(!html.contains("src=") && !html.contains("<link"), "the page loads nothing");

    // The stale day's hover says why, and what its last write was; its run time is recorded.
    let status = lake.status(&["daily_orders", "--from", "2026-09-05", "--to", "2026-09-05"]);
    let p = &status.partitions[0];
    let ms = p.duration_ms.expect("the run time of a write of this version");
    let tip = format!(
        "daily_orders dt=2026-09-05 (Sat)\nstale: inputs changed\nversion {}, {} rows",
        p.version.expect("a version"),
        p.rows.expect("rows")
    );
    assert!(html.contains(&tip), "{tip:?} in the page");
    assert!(ms > 0 && ms < 600_000, "{ms} ms");
}

#[test]
fn without_a_range_each_job_shows_what_it_wrote_and_a_job_that_wrote_nothing_says_so() {
    let lake = lake();
    let out = lake.path().join("out/report.html");
    std::fs::create_dir_all(out.parent().expect("a folder")).expect("folder");
    let line = written(&lake, &["--out", out.to_str().expect("utf-8")]);
    assert_eq!(
        (&line["not_written"], &line["fresh"], &line["stale"], &line["missing"]),
        (&2.into(), &9.into(), &1.into(), &0.into())
    );
    let html = std::fs::read_to_string(&out).expect("the page");
    assert_eq!(cells(&html), statuses(&lake, &["daily_orders"], &[]), "daily_orders over the days it wrote");
    assert_eq!(html.matches("Has not written any partition yet").count(), 2, "customers and weekly_revenue");

    // The default file, in the folder the command runs in; the text line says where and what.
    let run = lake.cli(&["report"]);
    run.assert_code(0);
    assert_eq!(
        run.stdout,
        "report: lakewriter-report.html: 3 jobs, 10 partitions: 9 fresh, 1 stale, 0 missing; 2 jobs not written yet\n"
    );
    assert!(lake.path().join("lakewriter-report.html").is_file());
}

#[test]
fn a_day_that_read_a_stale_upstream_day_is_stale_on_the_page_as_in_status() {
    let lake = Lake::demo();
    lake.cli(&["backfill", "--all", "--from", "2026-09-01", "--to", "2026-09-10"]).assert_code(0);
    let file = lake.root().join("raw/orders/dt=2026-09-05/part-late-00000.parquet");
    lakewriter_datagen::write_parquet(&file, &lakewriter_datagen::late_orders_for(day("2026-09-05"))).expect("late");

    // The page finds daily_orders' states first and takes the days weekly_revenue read from
    // them; the days before the range (08-26 to 08-31) it plans, as `status` does for each.
    let range = ["--from", "2026-09-01", "--to", "2026-09-10"];
    written(&lake, &[&["--out", "report.html"][..], &range].concat());
    let html = std::fs::read_to_string(lake.path().join("report.html")).expect("the page");
    let shown = cells(&html);
    assert_eq!(shown, statuses(&lake, &["customers", "daily_orders", "weekly_revenue"], &range));
    let stale: Vec<&str> = shown
        .iter()
        .filter(|((job, _), state)| job == "weekly_revenue" && state.as_str() == "stale")
        .map(|((_, partition), _)| partition.as_str())
        .collect();
    let window: Vec<String> = (5..=10).map(|d| format!("dt=2026-09-{d:02}")).collect();
    assert_eq!(stale, window, "the days whose 7 days hold the 5th");
    assert!(
        html.contains("weekly_revenue dt=2026-09-07 (Mon)\nstale: upstream stale (daily_orders dt=2026-09-05)"),
        "the hover names the upstream day"
    );
}
