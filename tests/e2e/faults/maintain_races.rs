//! `maintain` beside a concurrent writer, and beside another `maintain`: one process is paused
//! (SIGSTOP) as it enters a phase — a run at `writing` (it read the table and is about to write),
//! a compaction at `compacting` (its files are written, its commit is next) — while the other
//! runs to its end; then it goes on. No commit is lost and no row doubled: the table ends as the
//! writes alone leave it (its digest, and the independent reader's distinct rows), every
//! partition fresh, and the one that raced plans again. The table is `delete_insert`'s,
//! unpartitioned: a file a day, and a rerun of a day rewrites the file holding its rows. A trial
//! whose paused process committed before the signal stopped it raced nothing, and runs again.

use lakewriter_core::Phase;

use crate::support::maintain::{Step, content_of, status, steps};
use crate::support::pause::Paused;
use crate::support::place::{DAY, OTHER_DAY, Place, WRITTEN};
use crate::support::{Lake, Mode, Report, Run};

const MODE: Mode = Mode::DeleteInsert;
/// The version a paused process commits if it commits before the other: the table is written
/// at versions 0 to 2.
const FIRST: Option<u64> = Some(3);
/// Trials in a row whose paused process committed before it stopped, before a test gives up.
const SLIPS: usize = 3;

/// The table written for three days: three small files, and what it holds.
fn written() -> (Place, (String, u64), u64) {
    let place = Place::new(false, MODE);
    for dt in [WRITTEN, DAY, OTHER_DAY] {
        place.lake().cli(&["--json", "run", MODE.as_str(), "--dt", dt]).assert_code(0);
    }
    let (digest, distinct) = content_of(&place, MODE);
    (place, digest, distinct)
}

/// Asserts the table holds what the writes alone leave, and every day is fresh.
#[track_caller]
fn assert_unharmed(place: &Place, digest: &(String, u64), distinct: u64, what: &str) {
    let (after, after_distinct) = content_of(place, MODE);
    assert_eq!((&after, after_distinct), (digest, distinct), "{what}: the rows, none twice");
    assert_eq!(distinct, digest.1, "{what}: distinct rows");
    let states: Vec<String> = status(place.lake(), MODE).into_iter().map(|p| p.state).collect();
    assert_eq!(states, ["fresh"; 3], "{what}");
}

fn report(run: &Run) -> Report {
    let (mut reports, summary) = run.assert_code(0).json();
    assert_eq!(summary.failed, 0, "{}", run.stderr);
    reports.remove(0)
}

fn compact_args() -> [&'static str; 5] {
    ["--json", "maintain", MODE.as_str(), "--only", "compact"]
}

fn compaction(run: &Run) -> Step {
    let mut done = steps(run);
    assert_eq!(done.len(), 1);
    done.remove(0)
}

/// Runs `trial` on a freshly written table until its paused process raced (`Some`).
fn until_raced(trial: impl Fn(&Place, &(String, u64), u64) -> Option<()>) {
    for _ in 0..SLIPS {
        let (place, digest, distinct) = written();
        if trial(&place, &digest, distinct).is_some() {
            return;
        }
        eprintln!("the paused process committed before it stopped; the trial runs again");
    }
    panic!("the paused process committed before it stopped, {SLIPS} times in a row");
}

#[test]
fn a_run_paused_before_it_writes_while_maintain_compacts_its_table_runs_again_and_loses_nothing() {
    until_raced(|place, digest, distinct| {
        let lake = place.lake();
        let paused = Paused::start(lake, &["--json", "run", MODE.as_str(), "--dt", DAY], Phase::Writing);
        let what = format!("the run paused at {}", paused.stopped_at());
        let compacted = compaction(&lake.cli(&compact_args()));
        let run = paused.resume();
        let rerun = report(&run);
        if rerun.table_version == FIRST {
            return None;
        }
        assert!(compacted.committed && compacted.files_removed == Some(3), "{what}: {compacted:?}");
        // The compaction added a file the run's predicate may match: a conflict; the run plans again.
        let outcome = (rerun.status.as_str(), rerun.committed, rerun.retries, rerun.table_version);
        assert_eq!(outcome, ("ok", true, 1, Some(4)), "{what}: {}", run.stderr);
        assert_unharmed(place, digest, distinct, &what);
        Some(())
    });
}

#[test]
fn a_compaction_paused_before_its_commit_while_a_run_rewrites_its_files_plans_again() {
    until_raced(|place, digest, distinct| {
        let lake = place.lake();
        let paused = Paused::start(lake, &compact_args(), Phase::Compacting);
        let what = format!("the compaction paused at {}", paused.stopped_at());
        let rerun = report(&lake.cli(&["--json", "run", MODE.as_str(), "--dt", DAY]));
        let run = paused.resume();
        let compacted = compaction(&run);
        if compacted.table_version == FIRST {
            return None;
        }
        assert_eq!((rerun.status.as_str(), rerun.retries, rerun.table_version), ("ok", 0, FIRST), "{what}");
        // The run removed a file the compaction read: a conflict; it plans again over the run's commit.
        let outcome = (compacted.status.as_str(), compacted.committed, compacted.retries, compacted.table_version);
        assert_eq!(outcome, ("ok", true, 1, Some(4)), "{what}: {}", run.stderr);
        assert_unharmed(place, digest, distinct, &what);
        Some(())
    });
}

#[test]
fn two_compactions_at_once_compact_once() {
    until_raced(|place, digest, distinct| {
        let lake: &Lake = place.lake();
        let paused = Paused::start(lake, &compact_args(), Phase::Compacting);
        let what = format!("the first compaction paused at {}", paused.stopped_at());
        let second = compaction(&lake.cli(&compact_args()));
        let run = paused.resume();
        let first = compaction(&run);
        if first.table_version == FIRST {
            return None;
        }
        assert_eq!((second.committed, second.table_version), (true, FIRST), "{what}: {second:?}");
        // Both carry the compaction's transaction: the first conflicts, plans again, finds nothing.
        let outcome = (first.status.as_str(), first.committed, first.retries, first.files_removed);
        assert_eq!(outcome, ("ok", false, 1, Some(0)), "{what}: {}", run.stderr);
        assert_unharmed(place, digest, distinct, &what);
        Some(())
    });
}
