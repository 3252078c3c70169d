//! A `rebuild` reads every input and replaces every row on each run: `plan` says how much, and
//! `status` notes an input past the job's `input_size_warning`. The figures are checked against
//! the raw files on disk and the rows the independent reader reads.

use crate::support::Lake;
use crate::support::reader::Reader;
use crate::support::status::RebuildCost;

const FROM: &str = "2026-09-01";
const TO: &str = "2026-09-03";

fn project(warning: &str) -> String {
    format!(
        r#"root = "lake"

[jobs.customer_totals]
target = "analytics.customer_totals"
write = "rebuild"
input_size_warning = "{warning}"
sql = "SELECT customer_id, COUNT(*) AS orders FROM raw.orders GROUP BY customer_id"
"#
    )
}

/// The raw orders' Parquet files and their bytes, counted on disk.
fn raw_bytes(lake: &Lake) -> (u64, u64) {
    let mut files = 0;
    let mut bytes = 0;
    for day in std::fs::read_dir(lake.root().join("raw/orders")).expect("raw orders") {
        for file in std::fs::read_dir(day.expect("a day").path()).expect("a day's files") {
            let file = file.expect("a file");
            if file.file_name().to_string_lossy().ends_with(".parquet") {
                files += 1;
                bytes += file.metadata().expect("metadata").len();
            }
        }
    }
    (files, bytes)
}

/// The rebuild's cost, as `plan` tells it.
fn cost(lake: &Lake) -> RebuildCost {
    lake.plan(&["customer_totals"]).summary.rebuild.expect("a rebuild's cost")
}

#[test]
fn plan_says_what_a_rebuild_reads_and_replaces_and_status_notes_a_large_input() {
    let lake = Lake::new(FROM, TO);
    lake.set_project_text(&project("1 GB"));
    let (files, bytes) = raw_bytes(&lake);
    assert!(files >= 3, "a file a day at least: {files}");

    let before = cost(&lake);
    assert_eq!((before.files, before.bytes), (files, bytes));
    assert_eq!(before.rows_replaced, None, "no table yet");
    lake.cli(&["plan", "customer_totals"])
        .assert_code(0)
        .assert_line_starts(&format!("  each run reads {files} input files ("));

    lake.cli(&["run", "customer_totals"]).assert_code(0);
    let rows = Reader::new(&lake).rows(&crate::support::modes::uri_of(&lake, "analytics.customer_totals")).len();
    let after = cost(&lake);
    assert_eq!(after.rows_replaced, Some(rows as u64));
    assert_eq!(after.input_size_warning, None, "the input is below 1 GB");
    let status = lake.cli(&["status", "customer_totals"]);
    status.assert_code(0);
    assert!(!status.stdout.contains("input_size_warning"), "{}", status.stdout);

    // Past the size set, `status` notes it.
    lake.set_project_text(&project("1KB"));
    let noted = lake.status(&["customer_totals"]).summary.rebuild.expect("a rebuild's cost");
    assert_eq!(noted.input_size_warning, Some(1000));
    let status = lake.cli(&["status", "customer_totals"]);
    status.assert_code(0);
    assert!(
        status.stdout.contains("is past input_size_warning (1000 B): every rebuild reads all of it"),
        "{}",
        status.stdout
    );

    // Dates are for dated jobs; a rebuild has none.
    let dated = lake.cli(&["plan", "customer_totals", "--from", FROM, "--to", TO]);
    dated.assert_code(2);
    assert!(dated.stderr.contains("has no partitions to plan"), "{}", dated.stderr);
}

#[test]
fn input_size_warning_is_a_size_and_only_for_a_rebuild() {
    let lake = Lake::new(FROM, FROM);
    lake.set_project_text(&project("big"));
    let run = lake.cli(&["plan", "customer_totals"]);
    run.assert_code(2);
    assert!(run.stderr.contains("key `input_size_warning`: invalid size `big`"), "{}", run.stderr);
    lake.set_project_text(&project("1GB").replace("write = \"rebuild\"", "write = \"append\""));
    let run = lake.cli(&["plan", "customer_totals"]);
    run.assert_code(2);
    assert!(run.stderr.contains("key `input_size_warning` does not apply to write = \"append\""), "{}", run.stderr);
}
