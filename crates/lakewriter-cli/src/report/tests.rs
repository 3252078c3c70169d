//! The page from an overview made by hand: a cell per partition with its state, text escaped,
//! the hover's details, nothing fetched from elsewhere.

use std::collections::BTreeSet;

use lakewriter::{JobGraph, JobOverview, LogLength, PartitionKey, PartitionStatus, TableRef, WriteMode};

use super::*;

fn partition(dt: NaiveDate, state: Freshness) -> PartitionStatus {
    let written = state != Freshness::Missing;
    PartitionStatus {
        partition: PartitionKey::of(None, Some(dt)),
        dt: Some(dt),
        state,
        reasons: if state == Freshness::Stale { vec![lakewriter::StaleReason::InputsChanged] } else { Vec::new() },
        version: written.then_some(7),
        written_at: written.then(|| "2026-12-01T15:07:36Z".parse().expect("time")),
        rows: written.then_some(37),
        run_id: None,
        duration_ms: written.then_some(1_250),
        files_scanned: 1,
        upstream_stale: Vec::new(),
        lacks: Vec::new(),
        no_input: Vec::new(),
    }
}

/// Jobs `<a&b>` (ten years of days, every fifth stale and every seventh missing), `later` (has
/// written nothing) and `broken` (its state could not be read), `later` and `broken` reading
/// `<a&b>`'s table.
fn overview() -> (Overview, StateCounts) {
    let from = NaiveDate::from_ymd_opt(2016, 1, 1).expect("day");
    let range = lakewriter::DateRange::new(from, NaiveDate::from_ymd_opt(2025, 12, 31).expect("day")).expect("range");
    let partitions: Vec<PartitionStatus> = range
        .days()
        .enumerate()
        .map(|(i, dt)| {
            let state = match i {
                i if i % 7 == 0 => Freshness::Missing,
                i if i % 5 == 0 => Freshness::Stale,
                _ => Freshness::Fresh,
            };
            partition(dt, state)
        })
        .collect();
    let counts = StateCounts::of(&partitions);
    let status = JobStatus {
        job: "<a&b>".into(),
        target: TableRef::parse("s.t").expect("table"),
        write: WriteMode::OverwritePartition,
        table_version: Some(3_000),
        checkpoint: Some(2_999),
        log: Some(LogLength { commits_since_checkpoint: 1, commit_files: 3_001 }),
        partitions,
        adds: Vec::new(),
        refused: Vec::new(),
        rebuild: None,
    };
    let reads = |tables: &[&str]| tables.iter().map(|t| (*t).to_owned()).collect::<BTreeSet<String>>();
    let graph = JobGraph::new([
        ("<a&b>".to_owned(), "s.t".to_owned(), reads(&["raw.orders"])),
        ("later".to_owned(), "s.later".to_owned(), reads(&["s.t"])),
        ("broken".to_owned(), "s.broken".to_owned(), reads(&["s.t", "s.broken"])),
    ])
    .expect("graph");
    let jobs = vec![
        JobOverview {
            job: "<a&b>".into(),
            state: Overviewed::Read { status: Box::new(status), layout: None },
            written: None,
        },
        JobOverview {
            job: "broken".into(),
            state: Overviewed::Failed(lakewriter::Error::Usage("it <broke>".into())),
            written: None,
        },
        JobOverview { job: "later".into(), state: Overviewed::NothingWritten, written: None },
    ];
    (Overview { range: Some(range), graph, jobs }, counts)
}

#[test]
fn every_partition_is_a_cell_of_its_state_and_every_text_is_escaped() {
    let (overview, counts) = overview();
    let html = page(&overview, "/p/<project>.toml", Utc::now());
    let cells = |state: &str| html.matches(&format!("data-job=\"&lt;a&amp;b&gt;\" data-state=\"{state}\"")).count();
    assert_eq!((cells("fresh"), cells("stale"), cells("missing")), (counts.fresh, counts.stale, counts.missing));
    assert_eq!(html.matches("<rect class=\"cell\"").count(), 3_653, "a cell per day of ten years");
    assert!(!html.contains("<a&b>") && !html.contains("<project>") && !html.contains("it <broke>"));
    assert!(html.contains("Its state could not be read: it &lt;broke&gt;"), "the error is shown");
    assert!(html.contains("Has not written any partition yet"), "a job with nothing written is shown as such");
    assert!(html.contains("↺"), "broken reads its own table");
    assert!(!html.contains("http:") && !html.contains("https:"), "no address of another site");
    assert!(!html.contains("src=") && !html.contains("<link") && !html.contains("@import"), "nothing loaded");
    assert_eq!(html.matches("url(").count(), html.matches("url(#arrow)").count(), "only the page's own marker");
}

#[test]
fn a_cell_s_hover_has_the_state_the_version_rows_time_and_run_time() {
    let day = NaiveDate::from_ymd_opt(2026, 9, 14).expect("day");
    let stale = calendar::tip("daily_orders", &partition(day, Freshness::Stale));
    assert_eq!(
        stale,
        "daily_orders dt=2026-09-14 (Mon)\nstale: inputs changed\nversion 7, 37 rows\nwritten at 2026-12-01 15:07:36 UTC\nrun took 1.2 s"
    );
    assert_eq!(
        calendar::tip("j", &partition(day, Freshness::Missing)),
        "j dt=2026-09-14 (Mon)\nmissing: never written"
    );
}

#[test]
fn durations_read_in_their_unit() {
    assert_eq!(
        (duration(224), duration(3_250), duration(65_000)),
        ("224 ms".into(), "3.2 s".into(), "1 min 5 s".into())
    );
}
