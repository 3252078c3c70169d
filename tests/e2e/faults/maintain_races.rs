//! `maintain` beside a concurrent writer, and beside another `maintain`: one process is paused
//! (SIGSTOP) as it enters a phase — a run at `writing` (it read the table and is about to write),
//! a compaction at `compacting` (its files are written, its commit is next) — while the other
//! runs to its end; then it goes on. No commit is lost and no row doubled: the table ends as the
//! writes alone leave it (its digest, and the independent reader's distinct rows), every
//! partition fresh, and the one that raced plans again. The table is `delete_insert`'s,
//! unpartitioned: a file a day, and a rerun of a day rewrites the file holding its rows. A trial
//! whose paused process committed before the signal stopped it raced nothing, and runs again.
//! Each test counts its trials for docs/reliability.md (one in the test command, `LAKEWRITER_SOAK`
//! when soaking).

use lakewriter_core::Phase;

use crate::support::figures::{self, Figures};
use crate::support::maintain::{Step, content_of, status, steps};
use crate::support::pause::Paused;
use crate::support::place::{DAY, OTHER_DAY, Place, WRITTEN};
use crate::support::{Digest, Lake, Report, Run, WriteMode};

const MODE: WriteMode = WriteMode::DeleteInsert;
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

/// Asserts the table holds what the writes alone leave (counted in `figures`), and every day is
/// fresh.
#[track_caller]
fn assert_unharmed(place: &Place, digest: &(String, u64), distinct: u64, what: &str, figures: &mut Figures) {
    let (after, after_distinct) = content_of(place, MODE);
    let as_digest = |(digest, rows): &(String, u64)| Digest { rows: *rows, digest: digest.clone(), version: 0 };
    figures.compare(&as_digest(digest), &as_digest(&after));
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

/// The trials of a scenario: each runs `trial` on a freshly written table until its paused
/// process raced (`Some`: the phase it stopped at), and counts it.
fn trials(scenario: &str, test: &str, trial: impl Fn(&Place, &(String, u64), u64, &mut Figures) -> Option<String>) {
    let mut figures = Figures::new(scenario, &format!("faults::maintain_races::{test}"));
    for _ in 0..figures::trials(1) {
        let raced = (0..SLIPS).find_map(|_| {
            let (place, digest, distinct) = written();
            let paused_at = trial(&place, &digest, distinct, &mut figures);
            if paused_at.is_none() {
                eprintln!("the paused process committed before it stopped; the trial runs again");
            }
            paused_at
        });
        let hit =
            raced.unwrap_or_else(|| panic!("the paused process committed before it stopped, {SLIPS} times in a row"));
        figures.trial(&hit, "planned again after a conflict; nothing lost");
    }
    figures.finish();
}

#[test]
fn a_run_paused_before_it_writes_while_maintain_compacts_its_table_runs_again_and_loses_nothing() {
    let scenario = "a run paused at a phase while `maintain` compacts its table, local";
    trials(scenario, "a_run_paused_before_it_writes", |place, digest, distinct, figures| {
        let lake = place.lake();
        let paused = Paused::start(lake, &["--json", "run", MODE.as_str(), "--dt", DAY], Phase::Writing);
        let phase = paused.stopped_at().as_str().to_owned();
        let what = format!("the run paused at {phase}");
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
        assert_unharmed(place, digest, distinct, &what, figures);
        Some(phase)
    });
}

#[test]
fn a_compaction_paused_before_its_commit_while_a_run_rewrites_its_files_plans_again() {
    let scenario = "a compaction paused at a phase while a run rewrites its files, local";
    trials(scenario, "a_compaction_paused_before_its_commit", |place, digest, distinct, figures| {
        let lake = place.lake();
        let paused = Paused::start(lake, &compact_args(), Phase::Compacting);
        let phase = paused.stopped_at().as_str().to_owned();
        let what = format!("the compaction paused at {phase}");
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
        assert_unharmed(place, digest, distinct, &what, figures);
        Some(phase)
    });
}

#[test]
fn two_compactions_at_once_compact_once() {
    let scenario = "two compactions at once, one paused at a phase, local";
    trials(scenario, "two_compactions_at_once", |place, digest, distinct, figures| {
        let lake: &Lake = place.lake();
        let paused = Paused::start(lake, &compact_args(), Phase::Compacting);
        let phase = paused.stopped_at().as_str().to_owned();
        let what = format!("the first compaction paused at {phase}");
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
        assert_unharmed(place, digest, distinct, &what, figures);
        Some(phase)
    });
}
