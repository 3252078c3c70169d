//! `lakewriter maintain`: each step — compaction, checkpoint, vacuum, log clean-up — leaves the
//! content digest (lakewriter's and the independent reader's) and the partition state (`status`)
//! as they were, locally and on the S3 test server; and a run after maintenance is still fresh
//! and idempotent. The jobs are `support::place::project`'s, one per write mode, writing
//! `concurrent.<mode>`; small files come from writes that add files to a partition: `append`
//! (forced twice more into one day) and `delete_insert` into an unpartitioned table (a file a day).

use crate::support::maintain::{Content, Partition, write_tables};
use crate::support::maintain::{Step, content, maintain, run, status, table, uri};
use crate::support::place::{DAY, OTHER_DAY, Place, WRITTEN};
use crate::support::reader::Reader;
use crate::support::status::{Kept, LogLength};
use crate::support::{PartitionStatus, WriteMode};

/// The one step of `steps` on `table`.
#[track_caller]
fn on<'a>(steps: &'a [Step], table: &str, step: &str) -> &'a Step {
    let mut found = steps.iter().filter(|s| s.table == table && s.step == step);
    let one = found.next().unwrap_or_else(|| panic!("no {step} of {table} in {steps:?}"));
    assert!(found.next().is_none(), "{step} of {table} twice");
    one
}

/// What a checkpoint keeps of each partition's state.
fn kept(partitions: &[PartitionStatus]) -> Vec<Kept<'_>> {
    partitions.iter().map(PartitionStatus::kept_by_a_checkpoint).collect()
}

fn files(place: &Place, mode: WriteMode) -> u64 {
    Reader::new(place.lake()).read(&uri(place, mode)).files
}

const MODES: [WriteMode; 3] = [WriteMode::Append, WriteMode::DeleteInsert, WriteMode::OverwritePartition];

/// Compaction rewrites the partitions with several small files, once; rows and state stay.
fn compaction_keeps_rows_and_state(on_s3: bool) {
    let place = Place::new(on_s3, WriteMode::Append);
    let lake = place.lake();
    write_tables(lake);
    let before: Vec<(Content, Vec<PartitionStatus>, u64)> =
        MODES.iter().map(|&m| (content(&place, m), status(lake, m), files(&place, m))).collect();
    assert_eq!(before[0].2, 4, "append: three files of {WRITTEN}, one of {DAY}");

    let planned = maintain(lake, &["--only", "compact", "--dry-run"]);
    let compacted = maintain(lake, &["--only", "compact"]);
    let append = on(&compacted, &table(WriteMode::Append), "compact");
    assert_eq!((append.status.as_str(), append.committed, append.table_version), ("ok", true, Some(4)), "{append:?}");
    let partitions = append.partitions.as_ref().expect("partitions");
    assert_eq!(
        partitions,
        &[Partition { partition: format!("dt={WRITTEN}"), files: 3 }],
        "only the day with several files"
    );
    assert_eq!((append.files_removed, append.files_added), (Some(3), Some(1)));
    let unpartitioned = on(&compacted, &table(WriteMode::DeleteInsert), "compact");
    let rewritten = (unpartitioned.committed, unpartitioned.files_removed, unpartitioned.files_added);
    assert_eq!(rewritten, (true, Some(before[1].2), Some(1)), "{unpartitioned:?}");
    let expected = [Partition { partition: "all".into(), files: before[1].2 }];
    assert_eq!(unpartitioned.partitions.as_deref(), Some(&expected[..]), "one partition: the table");
    let overwritten = on(&compacted, &table(WriteMode::OverwritePartition), "compact");
    assert_eq!((overwritten.committed, overwritten.files_removed), (false, Some(0)), "a file per partition");
    for mode in [WriteMode::Merge, WriteMode::AppendDedup, WriteMode::Rebuild] {
        let none = on(&compacted, &table(mode), "compact");
        assert_eq!((none.status.as_str(), none.note.as_deref()), ("skipped", Some("no Delta table yet")));
    }
    // The dry run said the same, and wrote nothing.
    for (dry, done) in planned.iter().zip(&compacted) {
        assert_eq!((&dry.partitions, dry.files_removed, dry.committed), (&done.partitions, done.files_removed, false));
        // A table that does not exist yet is skipped, in a dry run as in the run.
        let expected = if done.status == "skipped" { "skipped" } else { "dry_run" };
        assert_eq!(dry.status, expected, "{dry:?}");
    }

    for (&mode, (content_before, status_before, _)) in MODES.iter().zip(&before) {
        assert_eq!(&content(&place, mode), content_before, "{mode:?}: the same rows");
        assert_eq!(&status(lake, mode), status_before, "{mode:?}: the same partition state, to the commit details");
    }
    assert_eq!((files(&place, WriteMode::Append), files(&place, WriteMode::DeleteInsert)), (2, 1));
    let again = maintain(lake, &["concurrent.append", "--only", "compact"]);
    assert_eq!((again.len(), again[0].committed, again[0].files_removed), (1, false, Some(0)), "nothing left");

    // A run after compaction is still fresh and idempotent.
    let written = content(&place, WriteMode::DeleteInsert);
    run(lake, WriteMode::DeleteInsert, DAY, false);
    run(lake, WriteMode::Append, DAY, false);
    assert_eq!(content(&place, WriteMode::DeleteInsert), written);
    assert_eq!(content(&place, WriteMode::Append), before[0].0);
    assert!(status(lake, WriteMode::DeleteInsert).iter().all(|p| p.state == "fresh"));
}

#[test]
fn compaction_rewrites_only_partitions_with_several_small_files_and_keeps_rows_and_state() {
    compaction_keeps_rows_and_state(false);
}

#[test]
fn on_s3_compaction_rewrites_only_partitions_with_several_small_files_and_keeps_rows_and_state() {
    compaction_keeps_rows_and_state(true);
}

/// Checkpoint, vacuum and log clean-up: rows and state stay; vacuum refuses a short retention
/// without `--force` and with it removes exactly the unreferenced files; expired log files go,
/// the state read from the checkpoint stays.
fn log_steps_keep_rows_and_state(on_s3: bool) {
    let place = Place::new(on_s3, WriteMode::Append);
    let lake = place.lake();
    let reader = Reader::new(lake);
    write_tables(lake);
    maintain(lake, &["append", "--only", "compact"]);
    let (before, status_before) = (content(&place, WriteMode::Append), status(lake, WriteMode::Append));
    let table_uri = uri(&place, WriteMode::Append);
    assert_eq!(reader.unreferenced(&table_uri).len(), 3, "the three files compaction replaced");

    let checkpoint = maintain(lake, &["append", "--only", "checkpoint"]);
    assert_eq!(checkpoint[0].note.as_deref(), Some("checkpoint of version 4 written"), "{checkpoint:?}");
    let again = maintain(lake, &["append", "--only", "checkpoint"]);
    assert_eq!(again[0].note.as_deref(), Some("version 4 has a checkpoint already"));
    assert_eq!(content(&place, WriteMode::Append), before);
    // The whole state, to each write's version, rows and run id: the commit files are kept.
    assert_eq!(status(lake, WriteMode::Append), status_before, "the state, read from the checkpoint");

    // Vacuum: nothing is older than the default retention; a shorter one needs --force.
    let vacuum = maintain(lake, &["append", "--only", "vacuum"]);
    assert_eq!((vacuum[0].files_deleted, vacuum[0].retention.as_deref()), (Some(0), Some("7d")), "{vacuum:?}");
    let refused = lake.cli(&["maintain", "append", "--only", "vacuum", "--retention", "0h"]);
    refused.assert_code(2);
    assert_eq!(
        refused.stderr,
        "error: --retention 0s is shorter than Delta's default retention (delta.deletedFileRetentionDuration), 7d: \
         vacuum would delete files that a reader of an older version, or a writer still writing, may need; pass \
         --force to allow it\n"
    );
    assert_eq!(reader.unreferenced(&table_uri).len(), 3, "nothing deleted");
    let forced = maintain(lake, &["append", "--only", "vacuum", "--retention", "0h", "--force"]);
    assert_eq!((forced[0].files_deleted, forced[0].committed, forced[0].table_version), (Some(3), true, Some(6)));
    assert_eq!(reader.unreferenced(&table_uri), Vec::<String>::new());
    assert_eq!(content(&place, WriteMode::Append), before);
    assert_eq!(status(lake, WriteMode::Append), status_before);

    // Log clean-up: with a log retention of 0 seconds every commit before the newest checkpoint
    // has expired; the state is the checkpoint's.
    reader.set_property("delta.logRetentionDuration", "interval 0 seconds", &table_uri);
    let cleaned = maintain(lake, &["append", "--only", "checkpoint,cleanup"]);
    let removed = on(&cleaned, &table(WriteMode::Append), "cleanup");
    assert_eq!((removed.status.as_str(), removed.retention.as_deref()), ("ok", Some("0s")), "{removed:?}");
    assert_eq!(removed.log_files_removed, Some(8), "commits 0..=6 and a checkpoint: {removed:?}");
    let after = status(lake, WriteMode::Append);
    assert_eq!(kept(&after), kept(&status_before), "the state survives log clean-up");
    // What the removed commit files alone held is unknown now, and `status` says so.
    let details: Vec<_> = after.iter().map(|p| (p.version, p.rows, p.run_id.is_some())).collect();
    assert_eq!(details, [(None, None, false); 3], "{after:?}");
    let shown = lake.cli(&["status", "append", "--from", WRITTEN, "--to", OTHER_DAY]);
    let text = &shown.assert_code(0).stdout;
    let line = "  2 written partitions: version, rows and run id unknown: their commit files are no longer kept (log clean-up)";
    assert!(text.lines().any(|l| l == line), "{text}");
    let states: Vec<&str> = after.iter().map(|p| p.state.as_str()).collect();
    assert_eq!(states, ["fresh", "fresh", "missing"], "{OTHER_DAY} was never appended");
    assert_eq!(content(&place, WriteMode::Append), before);
    let summary = lake.status(&["append", "--from", WRITTEN, "--to", DAY]).summary;
    assert_eq!(summary.log, Some(LogLength { commits_since_checkpoint: 0, commit_files: 1 }));

    // A run after maintenance: skipped (already appended), and the table as it was.
    run(lake, WriteMode::Append, DAY, false);
    assert_eq!(content(&place, WriteMode::Append), before);
    run(lake, WriteMode::OverwritePartition, WRITTEN, false);
    let overwritten = content(&place, WriteMode::OverwritePartition);
    maintain(lake, &["overwrite_partition", "--retention", "0h", "--force"]);
    run(lake, WriteMode::OverwritePartition, WRITTEN, false);
    assert_eq!(content(&place, WriteMode::OverwritePartition), overwritten, "run twice after maintenance");
}

#[test]
fn checkpoint_vacuum_and_log_clean_up_keep_rows_and_state() {
    log_steps_keep_rows_and_state(false);
}

#[test]
fn on_s3_checkpoint_vacuum_and_log_clean_up_keep_rows_and_state() {
    log_steps_keep_rows_and_state(true);
}

#[test]
fn maintain_refuses_bad_arguments_before_it_touches_a_table() {
    let place = Place::new(false, WriteMode::Append);
    let lake = place.lake();
    run(lake, WriteMode::Append, WRITTEN, false);
    run(lake, WriteMode::Append, WRITTEN, true);
    let log = lake.root().join("concurrent/append/_delta_log");
    let commits = || std::fs::read_dir(&log).expect("log").count();
    let before = commits();
    let usage = |args: &[&str], error: &str| {
        let run = lake.cli(&[&["maintain"], args].concat());
        run.assert_code(2);
        assert!(run.stderr.contains(error), "{error}\n{}", run.stderr);
    };
    usage(&["--retention", "7x"], "invalid duration `7x`: expected a whole number and a unit (s, m, h, d, w)");
    usage(&["--only", "optimize"], "unknown step `optimize`: expected one of compact, checkpoint, vacuum, cleanup");
    usage(&["--target-file-size", "0"], "invalid size `0`: it must be more than 0 bytes");
    usage(
        &["nosuch"],
        "no job `nosuch`; jobs here: append, append_dedup, delete_insert, merge, overwrite_partition, rebuild",
    );
    usage(&["--retention", "6d"], "error: --retention 6d is shorter than Delta's default retention");
    // A table's own retention is honoured: longer than the default, it is the floor.
    let uri = uri(&place, WriteMode::Append);
    Reader::new(lake).set_property("delta.deletedFileRetentionDuration", "interval 30 days", &uri);
    let before = before + 1;
    usage(
        &["append", "--retention", "7d"],
        "error: --retention 7d is shorter than the delta.deletedFileRetentionDuration of concurrent.append, 30d:",
    );
    let dry = maintain(lake, &["append", "--only", "vacuum", "--dry-run"]);
    assert_eq!(dry[0].retention.as_deref(), Some("30d"), "{dry:?}");
    assert_eq!(commits(), before, "nothing written");

    // A table named that does not exist is an error (a job's table not written yet is skipped).
    let missing = lake.cli(&["maintain", "concurrent.nosuch"]);
    missing.assert_code(1);
    assert!(missing.stderr.starts_with("error: cannot open Delta table concurrent.nosuch\n"), "{}", missing.stderr);
    let skipped = maintain(lake, &["merge"]);
    assert!(skipped.iter().all(|s| s.status == "skipped"), "{skipped:?}");
}
