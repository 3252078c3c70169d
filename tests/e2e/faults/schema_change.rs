//! A target whose schema another writer changes while a run is under way. The run is stopped
//! (SIGSTOP) as it enters a phase — told by its phase events, as in `crash` — a `rebuild` adds a
//! column to its table, and the run goes on (SIGCONT). Stopped after planning, it reads the new
//! schema before it writes; stopped as it writes, its commit meets the new metadata (a conflict),
//! and its next attempt does. Either way it fails naming the column, exits 1 and commits nothing:
//! the table is the other writer's.

use lakewriter_core::Phase;

use crate::support::figures::Figures;
use crate::support::modes::{DATED, FAILING, GOOD, project, table, written};
use crate::support::pause::Paused;
use crate::support::{Job, Mode, log_lines};

/// A `rebuild` of `mode`'s table (every day's orders) with the column `note` added.
fn changer(mode: Mode) -> Job {
    let sql = "SELECT order_id, customer_id, amount, status, created_at, dt, 'changed' AS note FROM raw.orders";
    let job = Job::rebuild("changer", &table(mode)).sql(sql);
    if mode == Mode::OverwritePartition { job.partition_by("dt") } else { job }
}

/// Stops `mode`'s run at `phase` and changes the table's schema meanwhile; whether the run was
/// stopped before it committed (else the trial is lost to the race, and says nothing).
fn change_under(mode: Mode, phase: Phase, figures: &mut Figures) -> bool {
    let lake = written(&[mode]);
    lake.set_project(&project(&[mode], GOOD).job(changer(mode)));
    let before = lake.digest(&table(mode), None);
    let mut changed = None;
    let paused = Paused::start(&lake, &["--json", "run", mode.as_str(), "--dt", FAILING], phase);
    if lake.digest(&table(mode), None).version == before.version {
        lake.cli(&["run", "changer"]).assert_code(0);
        changed = Some(lake.digest(&table(mode), None));
    }
    let run = paused.resume();
    let Some(changed) = changed else { return false };
    run.assert_code(1);
    let expected = format!(
        "{name} dt={FAILING}: {table}: the result does not match the table's schema: column `note` (string) is missing \
         from the result; nothing was committed",
        name = mode.as_str(),
        table = table(mode)
    );
    // Stopped as it wrote, its commit conflicted with the new metadata and it ran again (stopped
    // after planning, it may have opened the table before the stop took hold, and so too).
    let line: serde_json::Value = serde_json::from_str(run.stdout.lines().next().unwrap_or_default()).expect("JSON");
    let retries = line["retries"].as_u64().expect("retries");
    assert!(retries == 1 || (phase == Phase::Planned && retries == 0), "{mode:?} at {phase}: {line}");
    let report = run.json().0.remove(0);
    assert_eq!((report.committed, report.error.as_deref()), (false, Some(expected.as_str())), "{mode:?} at {phase}");
    let error = log_lines(&run.stderr).last().and_then(|l| l.error().map(str::to_owned));
    assert_eq!(error.as_deref(), Some(expected.as_str()), "{mode:?} at {phase}: {}", run.stderr);
    assert_eq!(lake.digest(&table(mode), None), changed, "{mode:?} at {phase}: the table is the other writer's");
    figures.trial(phase.as_str(), "clear error, exit 1, nothing committed");
    true
}

#[test]
fn a_target_whose_schema_changes_under_a_run_fails_it_and_keeps_the_other_writers_table() {
    let mut figures = Figures::new(
        "bad input: the target's schema changed under the run",
        "faults::schema_change::a_target_whose_schema",
    );
    for mode in DATED {
        for phase in [Phase::Planned, Phase::Writing] {
            // A run stopped too late (after its commit) is tried again.
            assert!((0..3).any(|_| change_under(mode, phase, &mut figures)), "{mode:?} was never stopped at {phase}");
        }
    }
    figures.finish();
}
