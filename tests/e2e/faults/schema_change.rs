//! A target whose schema another writer changes while a run is under way. The run is stopped
//! (SIGSTOP) as it enters a phase — told by its phase events, as in `crash` — a `rebuild` adds a
//! column to its table, and the run goes on (SIGCONT). Stopped after planning, it reads the new
//! schema before it writes; stopped as it writes, its commit meets the new metadata (a conflict),
//! and its next attempt does. Either way it fails naming the column, exits 1 and commits nothing:
//! the table is the other writer's. With `on_schema_change = "append_new_columns"` the same run
//! plans again over the new schema and writes its rows with the new column NULL: no commit adds
//! rows that do not fit the schema of the version it commits over. And a run that adds a column,
//! SIGKILLed at each phase of its commit, leaves the old schema with the old rows or the new
//! schema with the new rows, never one with the other's. A `backfill --replace-schema` killed
//! anywhere — in a day's commit or in the drop's — leaves a table every reader reads, and the same
//! command run again ends with the column dropped and the rows of an undisturbed run.

use lakewriter_core::Phase;

use std::time::Duration;

use super::crash::{KillAt, PHASES, kill_at, kill_at_nth};
use crate::support::figures::{self, Figures};
use crate::support::modes::{DATED, FAILING, GOOD, WRITTEN, project, table, table_uri, written};
use crate::support::pause::Paused;
use crate::support::reader::Reader;
use crate::support::{Digest, Job, Lake, Run, WriteMode, log_lines};

/// A `rebuild` of `mode`'s table (every day's orders) with the column `note` added.
fn changer(mode: WriteMode) -> Job {
    let sql = "SELECT order_id, customer_id, amount, status, created_at, dt, 'changed' AS note FROM raw.orders";
    let job = Job::rebuild("changer", &table(mode)).sql(sql);
    if mode == WriteMode::OverwritePartition { job.partition_by("dt") } else { job }
}

/// Stops `mode`'s run at `phase` and changes the table's schema meanwhile; whether the run was
/// stopped before it committed (else the trial is lost to the race, and says nothing).
fn change_under(mode: WriteMode, phase: Phase, figures: &mut Figures) -> bool {
    let lake = written(&[mode]);
    lake.set_project(&project(&[mode], GOOD).job(changer(mode)));
    let Some((run, changed)) = changed_under(&lake, mode, phase) else { return false };
    run.assert_code(1);
    let expected = format!(
        "{name} dt={FAILING}: {table}: the result does not match the table's schema: column `note` (string) is missing \
         from the result; nothing was committed; {advice}",
        name = mode.as_str(),
        table = table(mode),
        advice = crate::support::schema_advice(mode.as_str())
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

/// Runs `mode` for [`FAILING`], stopped at `phase` while `changer` adds a column: the run and the
/// table after the change; `None` where the run committed before it could be stopped.
fn changed_under(lake: &Lake, mode: WriteMode, phase: Phase) -> Option<(Run, Digest)> {
    let before = lake.digest(&table(mode), None);
    let mut changed = None;
    let paused = Paused::start(lake, &["--json", "run", mode.as_str(), "--dt", FAILING], phase);
    if lake.digest(&table(mode), None).version == before.version {
        lake.cli(&["run", "changer"]).assert_code(0);
        changed = Some(lake.digest(&table(mode), None));
    }
    let run = paused.resume();
    Some((run, changed?))
}

/// As [`change_under`], for a job whose `on_schema_change` adds columns: the run plans again over
/// the new schema and commits its rows with `note` NULL.
fn replanned_under(mode: WriteMode, phase: Phase, figures: &mut Figures) -> bool {
    let lake = written(&[mode]);
    lake.set_project(
        &project(&[mode], GOOD).with_schema_change(mode.as_str(), "append_new_columns").job(changer(mode)),
    );
    let Some((run, changed)) = changed_under(&lake, mode, phase) else { return false };
    run.assert_code(0);
    let report = run.json().0.remove(0);
    assert!(report.committed, "{mode:?} at {phase}: {report:?}");
    assert!(report.retries == 1 || (phase == Phase::Planned && report.retries == 0), "{mode:?} at {phase}: {report:?}");
    let missing = serde_json::json!({"added": [], "missing": [{"column": "note", "type": "string"}], "ignored": [], "dropped": []});
    assert_eq!(report.schema_change.as_ref(), Some(&missing), "{mode:?} at {phase}");
    let after = lake.digest(&table(mode), None);
    assert_eq!(after.version, changed.version + 1, "{mode:?} at {phase}: one commit over the changed table");
    let rows = Reader::new(&lake).rows(&table_uri(&lake, mode));
    let (day, rest): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r["dt"] == FAILING && r["note"].is_null());
    assert!(!day.is_empty(), "{mode:?} at {phase}: the run's rows, with `note` NULL");
    assert!(rest.iter().all(|r| r["note"] == "changed"), "{mode:?} at {phase}: the changer's rows keep theirs");
    figures.trial(phase.as_str(), "planned again over the new schema, committed with the new column NULL");
    true
}

#[test]
fn an_old_schema_run_under_a_column_adding_commit_plans_again_and_writes_the_column_as_null() {
    let mut figures = Figures::new(
        "a run of the old columns while another commit adds one (on_schema_change)",
        "faults::schema_change::an_old_schema_run_under",
    );
    let phases = [Phase::Planned, Phase::Writing];
    for mode in [WriteMode::OverwritePartition, WriteMode::DeleteInsert, WriteMode::Append] {
        for phase in (0..figures::trials(phases.len())).map(|i| phases[i % phases.len()]) {
            assert!(
                (0..3).any(|_| replanned_under(mode, phase, &mut figures)),
                "{mode:?} was never stopped at {phase}"
            );
        }
    }
    figures.finish();
}

/// `mode`'s run for [`FAILING`] that adds the column `status_code`, killed at `point`: the table
/// holds the old schema and rows or the new ones, as lakewriter and the independent reader read
/// it, and a rerun ends with the new.
fn killed_adding(mode: WriteMode, point: KillAt, new: &Digest, figures: &mut Figures) {
    let lake = checkpointed(mode);
    let old = lake.digest(&table(mode), None);
    lake.set_project(&adding(mode));
    let what = format!("{mode:?} killed at {point}");
    assert!(kill_at(&lake, &["run", mode.as_str(), "--dt", FAILING], point, Duration::ZERO), "{what}: reached");
    let uri = table_uri(&lake, mode);
    let reader = Reader::new(&lake);
    let has_column = reader.schema(&uri).iter().any(|(name, _, _)| name == "status_code");
    let after = lake.digest(&table(mode), None);
    let content = |d: &Digest| (d.digest.clone(), d.rows);
    if has_column {
        assert_eq!(content(&after), content(new), "{what}: the new schema with other rows than the run's");
    } else {
        assert_eq!(content(&after), content(&old), "{what}: the old schema with other rows than the table's");
    }
    assert_eq!(reader.read(&uri).version, after.version, "{what}: the independent reader");
    figures.trial(point.name(), if has_column { "new schema, new rows" } else { "old schema, old rows" });
    lake.cli(&["run", mode.as_str(), "--dt", FAILING]).assert_code(0);
    assert_eq!(content(&lake.digest(&table(mode), None)), content(new), "{what}: after the rerun");
}

/// `mode`'s table written for its first day, with a checkpoint due at the commit of the next run
/// (its third version), as the crash suite sets it.
fn checkpointed(mode: WriteMode) -> Lake {
    let lake = written(&[mode]);
    Reader::new(&lake).checkpoint_every(3, &table_uri(&lake, mode));
    lake
}

/// `mode`'s job with the column `status_code` added by `on_schema_change`.
fn adding(mode: WriteMode) -> crate::support::Project {
    project(&[mode], GOOD)
        .edited_sql(mode.as_str(), "created_at,", "created_at, upper(status) AS status_code,")
        .with_schema_change(mode.as_str(), "append_new_columns")
}

#[test]
fn a_run_adding_a_column_killed_at_any_phase_leaves_the_old_schema_and_rows_or_the_new() {
    let mut figures = Figures::new(
        "`run` adding a column (on_schema_change) SIGKILLed at a phase, local",
        "faults::schema_change::a_run_adding_a_column_killed_at_any_phase",
    );
    for mode in [WriteMode::OverwritePartition, WriteMode::Merge] {
        let undisturbed = checkpointed(mode);
        undisturbed.set_project(&adding(mode));
        undisturbed.cli(&["run", mode.as_str(), "--dt", FAILING]).assert_code(0);
        let new = undisturbed.digest(&table(mode), None);
        for i in 0..figures::trials(PHASES.len()) {
            killed_adding(mode, PHASES[i % PHASES.len()], &new, &mut figures);
        }
    }
    figures.finish();
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

/// The arguments of a `backfill --replace-schema` of both days of `overwrite_partition`.
const REPLACING: [&str; 7] =
    ["backfill", "overwrite_partition", "--from", WRITTEN, "--to", FAILING, "--replace-schema"];

/// `overwrite_partition`'s table written for its first day (a checkpoint due at its third
/// version), with a job that no longer selects `customer_id` and may drop it.
fn dropping() -> Lake {
    let mode = WriteMode::OverwritePartition;
    let lake = checkpointed(mode);
    let without = project(&[mode], GOOD)
        .edited_sql(mode.as_str(), "customer_id AS customer_id, ", "")
        .with_schema_change(mode.as_str(), "sync_all_columns");
    lake.set_project(&without);
    lake
}

fn has_customer_id(lake: &Lake) -> bool {
    let uri = table_uri(lake, WriteMode::OverwritePartition);
    Reader::new(lake).schema(&uri).iter().any(|(name, _, _)| name == "customer_id")
}

#[test]
fn a_backfill_replacing_the_schema_killed_anywhere_ends_with_the_column_dropped_when_run_again() {
    let mut figures = Figures::new(
        "`backfill --replace-schema` SIGKILLed in a day's commit or the drop's, local",
        "faults::schema_change::a_backfill_replacing_the_schema_killed_anywhere",
    );
    let table = table(WriteMode::OverwritePartition);
    let undisturbed = dropping();
    undisturbed.cli(&REPLACING).assert_code(0);
    let content = |d: &Digest| (d.digest.clone(), d.rows);
    let dropped = content(&undisturbed.digest(&table, None));
    // A day's phases (the first to reach each), and the drop's commit: the third of the command.
    let mut points: Vec<(KillAt, usize)> = PHASES.iter().map(|&p| (p, 1)).collect();
    points.extend([(KillAt::Committing, 3), (KillAt::Entered(Phase::Committed), 3)]);
    for i in 0..figures::trials(points.len()) {
        let (point, nth) = points[i % points.len()];
        let lake = dropping();
        let what = format!("killed at {point} #{nth}");
        assert!(kill_at_nth(&lake, &REPLACING, point, nth, Duration::ZERO), "{what}: reached");
        let uri = table_uri(&lake, WriteMode::OverwritePartition);
        let after = lake.digest(&table, None);
        assert_eq!(Reader::new(&lake).read(&uri).version, after.version, "{what}: the independent reader");
        let kept = has_customer_id(&lake);
        if !kept {
            assert_eq!(content(&after), dropped, "{what}: dropped, with other rows than an undisturbed run's");
        }
        figures.trial(&format!("{point} #{nth}"), if kept { "column kept" } else { "column dropped" });
        lake.cli(&REPLACING).assert_code(0);
        assert!(!has_customer_id(&lake), "{what}: dropped when run again");
        assert_eq!(content(&lake.digest(&table, None)), dropped, "{what}: after the rerun");
    }
    figures.finish();
}
