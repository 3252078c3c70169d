//! A raw file that lands while a run is between planning and writing. The run reads exactly the
//! files its plan listed and fingerprinted: its day is written without the late file, and is
//! stale after it, as it is; the next run writes the file in, and the day is fresh.

use lakewriter_core::Phase;

use super::concurrent::{args, late_file, reference, report_of, run, states, table, written};
use crate::support::WriteMode;
use crate::support::pause::Paused;
use crate::support::place::DAY;

fn a_late_file_is_left_for_the_next_run(mode: WriteMode) {
    let undisturbed = written(false, mode);
    run(undisturbed.lake(), mode, DAY);
    let without = undisturbed.lake().digest(&table(mode), None);

    let place = written(false, mode);
    let lake = place.lake();
    let paused = Paused::start(lake, &args(mode, DAY), Phase::Planned);
    // Stopped at planning or after it: either way its plan has listed the day's files.
    let hit = paused.stopped_at();
    let (path, batch) = late_file(mode);
    place.put(&path, &batch);
    let a = report_of(&paused.resume());
    let what = format!("{mode:?}, stopped at {hit}: {a:?}");
    assert!(a.committed, "{what}");
    let after = lake.digest(&table(mode), None);
    assert_eq!((&after.digest, after.rows), (&without.digest, without.rows), "{what}: the files it listed, only");
    assert_eq!(states(lake, mode, DAY, DAY), [(format!("dt={DAY}"), "stale".to_owned())], "{what}");

    run(lake, mode, DAY);
    let with = &reference(mode, false).table;
    let after = lake.digest(&table(mode), None);
    assert_eq!((&after.digest, after.rows), (&with.digest, with.rows), "{what}: the next run reads the late file");
    assert_eq!(states(lake, mode, DAY, DAY), [(format!("dt={DAY}"), "fresh".to_owned())], "{what}");
}

#[test]
fn a_file_that_lands_after_an_overwrite_planned_is_left_for_the_next_run() {
    a_late_file_is_left_for_the_next_run(WriteMode::OverwritePartition);
}

#[test]
fn a_file_that_lands_after_a_merge_planned_is_left_for_the_next_run() {
    a_late_file_is_left_for_the_next_run(WriteMode::Merge);
}

#[test]
fn a_file_that_lands_after_a_delete_insert_planned_is_left_for_the_next_run() {
    a_late_file_is_left_for_the_next_run(WriteMode::DeleteInsert);
}
