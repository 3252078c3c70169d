//! `lakewriter maintain`'s steps read from its `--json` lines, and the tables of a [`Place`] that
//! maintenance works on: `append`, `delete_insert` and `overwrite_partition`, written so that some
//! partitions hold several small files.

use serde::Deserialize;
use serde_json::Value;

use super::place::{DAY, OTHER_DAY, Place, SCHEMA, WRITTEN};
use super::reader::{Read, Reader};
use super::{Digest, Lake, PartitionStatus, Run, WriteMode, lines_and_closing};

/// One `--json` line of `maintain`: a step on a table.
#[derive(Debug, Deserialize)]
pub struct Step {
    pub table: String,
    pub step: String,
    pub status: String,
    pub committed: bool,
    pub table_version: Option<u64>,
    pub partitions: Option<Vec<Partition>>,
    pub files_removed: Option<u64>,
    pub files_added: Option<u64>,
    pub files_deleted: Option<u64>,
    pub log_files_removed: Option<u64>,
    pub retention: Option<String>,
    pub retries: u32,
    pub note: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
pub struct Partition {
    pub partition: String,
    pub files: u64,
}

/// The step lines of a `maintain --json` run that exited 0 (its summary line left out).
#[track_caller]
pub fn steps(run: &Run) -> Vec<Step> {
    let (steps, _summary): (Vec<Step>, Value) = lines_and_closing(run, "summary");
    assert!(steps.iter().all(|s| s.error.is_none() && s.status != "failed"), "{steps:?}");
    steps
}

/// `maintain --json ARGS…`, exit 0: its steps.
#[track_caller]
pub fn maintain(lake: &Lake, args: &[&str]) -> Vec<Step> {
    steps(&lake.cli(&[&["--json", "maintain"], args].concat()))
}

pub fn table(mode: WriteMode) -> String {
    format!("{SCHEMA}.{}", mode.as_str())
}

/// The URI of `mode`'s table, for the independent reader.
pub fn uri(place: &Place, mode: WriteMode) -> String {
    let relative = format!("{SCHEMA}/{}", mode.as_str());
    match place {
        Place::Local(lake) => lake.root().join(relative).display().to_string(),
        Place::S3(s3) => s3.url(&relative),
    }
}

#[track_caller]
pub fn run(lake: &Lake, mode: WriteMode, dt: &str, force: bool) {
    let mut args = vec!["--json", "run", mode.as_str(), "--dt", dt];
    if force {
        args.push("--force");
    }
    let (_, summary) = lake.cli(&args).assert_code(0).json();
    assert_eq!(summary.failed, 0);
}

/// Writes the tables of `append`, `delete_insert` and `overwrite_partition`: `append` [`WRITTEN`]
/// three times (forced twice: three small files in that partition) and [`DAY`] once;
/// `delete_insert` (unpartitioned) and `overwrite_partition` every day once.
pub fn write_tables(lake: &Lake) {
    run(lake, WriteMode::Append, WRITTEN, false);
    run(lake, WriteMode::Append, WRITTEN, true);
    run(lake, WriteMode::Append, WRITTEN, true);
    run(lake, WriteMode::Append, DAY, false);
    for dt in [WRITTEN, DAY, OTHER_DAY] {
        run(lake, WriteMode::DeleteInsert, dt, false);
        run(lake, WriteMode::OverwritePartition, dt, false);
    }
}

/// What a table holds, by lakewriter and by the independent reader, and its partition state.
#[derive(Debug, PartialEq)]
pub struct Content {
    pub digest: (String, u64),
    pub read: (String, u64, u64),
}

pub fn content(place: &Place, mode: WriteMode) -> Content {
    let Digest { digest, rows, .. } = place.lake().digest(&table(mode), None);
    let Read { digest: read, rows: read_rows, distinct_rows, .. } = Reader::new(place.lake()).read(&uri(place, mode));
    Content { digest: (digest, rows), read: (read, read_rows, distinct_rows) }
}

/// A table's digest (lakewriter's: digest and rows) and the independent reader's distinct rows.
pub fn content_of(place: &Place, mode: WriteMode) -> ((String, u64), u64) {
    let Content { digest, read } = content(place, mode);
    (digest, read.2)
}

/// `status` of `mode`'s partitions from [`WRITTEN`] to [`OTHER_DAY`].
pub fn status(lake: &Lake, mode: WriteMode) -> Vec<PartitionStatus> {
    lake.status(&[mode.as_str(), "--from", WRITTEN, "--to", OTHER_DAY]).partitions
}
