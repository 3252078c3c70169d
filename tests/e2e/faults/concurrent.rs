//! A concurrent writer on an existing table. Run A of a job is paused (SIGSTOP) as it enters a
//! phase of its write — told by the phase events it logs on stderr (see ARCHITECTURE.md), never
//! by a guessed time: `planned` (it has read the table's version and the raw layer, and planned),
//! `writing` (it has opened the table and is about to write). While it is stopped, writer B —
//! another process — runs to its end and commits:
//!
//! - **the same partition**, after a late raw file for A's day arrived (late orders; for `merge`,
//!   late customer changes with a newer `updated_at`). A's result is stale. When A resumes, its
//!   commit must not replace B's: it conflicts and A runs again from the raw layer (or, for
//!   `append`, finds the partition appended and skips it). The table ends as one undisturbed run
//!   over the full raw data, computed in a fresh lakehouse: no row lost, none duplicated; the
//!   partition's state is `fresh`; and each report says exactly what its process did.
//! - **another partition** of the same table. Both land; the table ends as the two runs one after
//!   the other (the same as a backfill of the days in date order), every partition fresh.
//!
//! Every mode, locally and on the S3 test server. Each trial starts from a table written for
//! [`WRITTEN`] (`rebuild`: written once). How A is paused is in [`Paused`]; which phase it was in
//! when it stopped is read from its log, and is the trial's hit. A trial in which A's commit
//! landed before it stopped raced nothing; it is run again (see [`race`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use lakewriter_core::Phase;

use crate::support::figures::{self, Figures};
use crate::support::pause::Paused;
use crate::support::place::{DAY, OTHER_DAY, Place, SCHEMA, WRITTEN};
use crate::support::{Digest, Lake, Report, Run, WRITE_MODES, WriteMode, day};

/// The phases A is paused at: after it read the raw layer, after it opened the table.
const PHASES: [Phase; 2] = [Phase::Planned, Phase::Writing];

/// What a report says: status, whether it committed, rows written, table version, retries, note.
type Outline = (String, bool, Option<u64>, Option<u64>, u32, Option<String>);

fn outline(report: &Report) -> Outline {
    let r = report;
    (r.status.clone(), r.committed, r.rows_written, r.table_version, r.retries, r.note.clone())
}

/// What a run that finds the partition written by another (fresh) and replaces it says.
const WAS_FRESH: &str = "was already fresh (same code and inputs)";
/// What a `merge` or `append_dedup` that finds its rows written says.
const ALREADY_WRITTEN: &str = "already fresh: nothing to change, no new table version";
/// What an `append` that finds its partition appended says.
const ALREADY_APPENDED: &str = "already appended; nothing appended. --force appends again and duplicates these rows";

/// A fresh place with `mode`'s table written for [`WRITTEN`] (`rebuild`: written once).
pub(super) fn written(on_s3: bool, mode: WriteMode) -> Place {
    let place = Place::new(on_s3, mode);
    let report = run(place.lake(), mode, WRITTEN);
    assert_eq!((report.committed, report.table_version), (true, Some(0)), "{report:?}");
    place
}

pub(super) fn table(mode: WriteMode) -> String {
    format!("{SCHEMA}.{}", mode.as_str())
}

/// `--json run MODE --dt DT` (`rebuild`: without a date).
pub(super) fn args(mode: WriteMode, dt: &str) -> Vec<&str> {
    let mut args = vec!["--json", "run", mode.as_str()];
    if mode != WriteMode::Rebuild {
        args.extend(["--dt", dt]);
    }
    args
}

/// The one report of a run that exited 0.
#[track_caller]
pub(super) fn report_of(run: &Run) -> Report {
    run.assert_code(0);
    let (mut reports, summary) = run.json();
    assert_eq!((reports.len(), summary.failed), (1, 0), "{}\n{}", run.stdout, run.stderr);
    reports.remove(0)
}

#[track_caller]
pub(super) fn run(lake: &Lake, mode: WriteMode, dt: &str) -> Report {
    report_of(&lake.cli(&args(mode, dt)))
}

/// The late raw file of [`DAY`] that `mode`'s job reads: its path below the root and its rows.
pub(super) fn late_file(mode: WriteMode) -> (String, RecordBatch) {
    if mode == WriteMode::Merge {
        (format!("raw/customers_batch/dt={DAY}/part-late-00000.parquet"), late_changes())
    } else {
        (format!("raw/orders/dt={DAY}/part-late-00000.parquet"), lakewriter_datagen::late_orders_for(day(DAY)))
    }
}

/// Customer changes of [`DAY`] delivered late, each newer than any change of the day's batch: a
/// new email and tier for every third customer the batch changes, a delete of its second, and a
/// customer it does not know (its ids are 1 to 60).
fn late_changes() -> RecordBatch {
    let batch = lakewriter_datagen::customers_for(day(DAY));
    let column = |name: &str| batch.column_by_name(name).expect("column").clone();
    let ids = column("customer_id");
    let ids = ids.as_any().downcast_ref::<Int64Array>().expect("ids");
    let times = column("updated_at");
    let newest = times.as_any().downcast_ref::<TimestampMicrosecondArray>().expect("times").values().iter().max();
    let newest = *newest.expect("a change");
    let mut keys: Vec<i64> = ids.values().to_vec();
    keys.sort_unstable();
    keys.dedup();
    let mut rows: Vec<(i64, &str)> = keys.iter().step_by(3).map(|&k| (k, "upsert")).collect();
    rows.extend([(keys[1], "delete"), (61, "upsert")]);
    let minute = 60 * 1_000_000;
    let emails: Vec<String> = rows.iter().map(|r| format!("customer{}.late@example.com", r.0)).collect();
    let times: Vec<i64> = (1..).take(rows.len()).map(|i: i64| newest + i * minute).collect();
    let columns: Vec<Arc<dyn arrow::array::Array>> = vec![
        Arc::new(Int64Array::from(rows.iter().map(|r| r.0).collect::<Vec<_>>())),
        Arc::new(StringArray::from(emails)),
        Arc::new(StringArray::from(vec!["gold"; rows.len()])),
        Arc::new(TimestampMicrosecondArray::from(times).with_timezone("UTC")),
        Arc::new(StringArray::from(rows.iter().map(|r| r.1).collect::<Vec<_>>())),
    ];
    RecordBatch::try_new(lakewriter_datagen::customers_schema(), columns).expect("late changes")
}

/// What an undisturbed run gives, in a fresh local lakehouse: the report of B's run, of A's where
/// A runs after B, and the table.
pub(super) struct Reference {
    b: Report,
    a: Option<Report>,
    pub(super) table: Digest,
}

/// The undisturbed runs of `mode` on the same partition (or, `other`, on another), computed once
/// for the whole suite: the local and the S3 tests share them.
pub(super) fn reference(mode: WriteMode, other: bool) -> &'static Reference {
    static REFERENCES: Mutex<BTreeMap<(&str, bool), &'static OnceLock<Reference>>> = Mutex::new(BTreeMap::new());
    let cell: &OnceLock<Reference> = REFERENCES
        .lock()
        .expect("the references")
        .entry((mode.as_str(), other))
        .or_insert_with(|| Box::leak(Box::default()));
    cell.get_or_init(|| if other { reference_other_partition(mode) } else { reference_same_partition(mode) })
}

/// The table written for [`WRITTEN`], the late file delivered, then [`DAY`] run once.
fn reference_same_partition(mode: WriteMode) -> Reference {
    let place = written(false, mode);
    let (path, batch) = late_file(mode);
    place.put(&path, &batch);
    let b = run(place.lake(), mode, DAY);
    Reference { b, a: None, table: place.lake().digest(&table(mode), None) }
}

/// The table written for [`WRITTEN`], then [`OTHER_DAY`] and [`DAY`] run (B's order, then A's);
/// the same as a backfill of the three days in date order.
fn reference_other_partition(mode: WriteMode) -> Reference {
    let place = written(false, mode);
    let b = run(place.lake(), mode, OTHER_DAY);
    let a = run(place.lake(), mode, DAY);
    let content = place.lake().digest(&table(mode), None);
    let in_order = Place::new(false, mode);
    let backfill = ["--json", "backfill", mode.as_str(), "--from", WRITTEN, "--to", OTHER_DAY, "--parallel", "1"];
    in_order.lake().cli(&backfill).assert_code(0);
    let backfilled = in_order.lake().digest(&table(mode), None);
    assert_eq!((&backfilled.digest, backfilled.rows), (&content.digest, content.rows), "{mode:?}: the order of days");
    Reference { b, a: Some(a), table: content }
}

/// Each partition of `mode`'s table from `from` to `to` with its state (`rebuild`: the table's).
pub(super) fn states(lake: &Lake, mode: WriteMode, from: &str, to: &str) -> Vec<(String, String)> {
    let mut args = vec![mode.as_str()];
    if mode != WriteMode::Rebuild {
        args.extend(["--from", from, "--to", to]);
    }
    lake.status(&args).partitions.into_iter().map(|p| (p.partition, p.state)).collect()
}

/// What A's report says it did, for the figures.
pub(super) fn outcome(a: &Report) -> String {
    let what = match (a.status.as_str(), a.committed) {
        ("skipped", _) => "skipped: already appended",
        ("ok", true) => "committed",
        ("ok", false) => "nothing to change",
        _ => "failed",
    };
    if a.retries > 0 { format!("re-ran after a conflict, then {what}") } else { what.to_owned() }
}

/// What a trial's processes did: A paused at `phase` on [`DAY`]; meanwhile the late file (where
/// `late_file_first`) and B on `b_day`; then A resumed.
struct Race {
    /// The phase A was in when it stopped.
    hit: Phase,
    b: Report,
    /// The table after B, A still stopped, where B wrote A's partition.
    after_b: Option<Digest>,
    a: Report,
    /// What the trial's assertions show of it: the mode, the phase, A's report and its log.
    what: String,
}

/// Runs a [`Race`] in `place` (its table written). `None` where A's commit landed before it
/// stopped — its `kill` came after the commit: nothing raced, and the trial is run again.
fn race(place: &Place, mode: WriteMode, phase: Phase, b_day: &str, late_file_first: bool) -> Option<Race> {
    let lake = place.lake();
    let paused = Paused::start(lake, &args(mode, DAY), phase);
    let hit = paused.stopped_at();
    if late_file_first {
        let (path, batch) = late_file(mode);
        place.put(&path, &batch);
    }
    let b = run(lake, mode, b_day);
    let after_b = (b_day == DAY).then(|| lake.digest(&table(mode), None));
    let a_run = paused.resume();
    let a = report_of(&a_run);
    if a.committed && a.table_version == Some(1) {
        eprintln!("{mode:?} at {phase}: A committed before it stopped (at {hit}); the trial runs again");
        return None;
    }
    let what = format!("{mode:?}, A paused at {hit}\nA: {a:?}\nB: {b:?}\nA's log:\n{}", a_run.stderr);
    Some(Race { hit, b, after_b, a, what })
}

/// The reports A may give where B committed the same partition meanwhile (`b`): A's commit
/// conflicts with B's and A runs again, from the raw layer as B left it. An overwrite replaces B's
/// rows with the very same (the partition was fresh); a keyed write finds nothing to change; an
/// append finds the partition appended — as its write begins, or as it runs again where its write
/// had begun (read the log) before B committed. Paused at `writing` (`hit`), it had; paused at
/// `planned`, it may have: the stop lands after the phase's line, and an append reads the log
/// between its plan and its files, so either report is right there.
fn expected_after_same_partition(mode: WriteMode, hit: Phase, b: &Report) -> Vec<Outline> {
    let ok = "ok".to_owned();
    match mode {
        WriteMode::OverwritePartition | WriteMode::DeleteInsert | WriteMode::Rebuild => {
            vec![(ok, true, b.rows_written, Some(2), 1, Some(WAS_FRESH.into()))]
        }
        WriteMode::Merge | WriteMode::AppendDedup => {
            vec![(ok, false, Some(0), Some(1), 1, Some(ALREADY_WRITTEN.into()))]
        }
        WriteMode::Append => {
            let skipped = |retries| ("skipped".into(), false, None, Some(1), retries, Some(ALREADY_APPENDED.into()));
            if hit == Phase::Planned { vec![skipped(0), skipped(1)] } else { vec![skipped(1)] }
        }
        WriteMode::Statement => unreachable!("a statement's job is none of WRITE_MODES"),
    }
}

/// One trial on the same partition: A paused at `phase`, a late file for [`DAY`], B run on
/// [`DAY`], A resumed. B is one undisturbed run; A conflicts with it and runs again; the table is
/// B's, and fresh. `None` where nothing raced.
fn same_partition(
    place: &Place,
    mode: WriteMode,
    phase: Phase,
    reference: &Reference,
    figures: &mut Figures,
) -> Option<()> {
    let Race { hit, b, after_b, a, what } = race(place, mode, phase, DAY, true)?;
    assert_eq!(outline(&b), outline(&reference.b), "{what}\nB is one undisturbed run");
    assert_eq!(b.changes, reference.b.changes, "{what}\nB's changes");
    let after_b = after_b.expect("the table after B");
    assert_eq!((&after_b.digest, after_b.rows), (&reference.table.digest, reference.table.rows), "{what}\nB");
    let lake = place.lake();
    let after = lake.digest(&table(mode), None);
    assert!(figures.compare(&reference.table, &after), "{what}\nthe table: {after:?}, not {:?}", reference.table);
    let partition = if mode == WriteMode::Rebuild { "all".to_owned() } else { format!("dt={DAY}") };
    assert_eq!(states(lake, mode, DAY, DAY), [(partition, "fresh".to_owned())], "{what}");
    let expected = expected_after_same_partition(mode, hit, &b);
    assert!(expected.contains(&outline(&a)), "{what}\n{:?} is none of {expected:?}", outline(&a));
    if let Some(changes) = &a.changes {
        assert_eq!((changes.inserted, changes.updated, changes.deleted), (0, 0, 0), "{what}");
    }
    figures.trial(hit.as_str(), &outcome(&a));
    Some(())
}

/// A's retries where B committed another partition meanwhile: a keyed write's commit is never
/// rebased (its source was classified against the version it read), so B's commit conflicts with
/// it and it runs again; the others write their own partition (or predicate), and delta-rs
/// commits them over B's.
fn retries_beside(mode: WriteMode) -> u32 {
    u32::from(matches!(mode, WriteMode::Merge | WriteMode::AppendDedup))
}

/// One trial on another partition: A paused at `phase` on [`DAY`], B run on [`OTHER_DAY`], A
/// resumed. Each report is that of the same run undisturbed, in the same order; the table holds
/// both, and every partition is fresh. `None` where nothing raced.
fn other_partition(
    place: &Place,
    mode: WriteMode,
    phase: Phase,
    reference: &Reference,
    figures: &mut Figures,
) -> Option<()> {
    let Race { hit, b, a, what, .. } = race(place, mode, phase, OTHER_DAY, false)?;
    assert_eq!(outline(&b), outline(&reference.b), "{what}\nB is one undisturbed run");
    assert_eq!(b.changes, reference.b.changes, "{what}\nB's changes");
    let lake = place.lake();
    let after = lake.digest(&table(mode), None);
    assert!(figures.compare(&reference.table, &after), "{what}\nthe table: {after:?}, not {:?}", reference.table);
    let fresh: Vec<(String, String)> =
        [WRITTEN, DAY, OTHER_DAY].iter().map(|d| (format!("dt={d}"), "fresh".to_owned())).collect();
    assert_eq!(states(lake, mode, WRITTEN, OTHER_DAY), fresh, "{what}");
    let undisturbed = reference.a.as_ref().expect("A's reference report");
    let mut expected = outline(undisturbed);
    expected.4 = retries_beside(mode);
    assert_eq!(outline(&a), expected, "{what}");
    assert_eq!(a.changes, undisturbed.changes, "{what}\nA's changes");
    figures.trial(hit.as_str(), &outcome(&a));
    Some(())
}

/// How many trials in a row may find A's commit landed before it stopped before the test gives
/// up: A is stopped within a `kill` of logging its phase, far less than a write takes.
const SLIPS: usize = 3;

/// Runs `count` trials, each in a fresh place (local or on S3) with its table written: the `i`th
/// with the mode and phase `pairs[i % pairs.len()]`, on the same partition or (`other`) another.
fn run_trials(on_s3: bool, other: bool, pairs: &[(WriteMode, Phase)], count: usize, figures: &mut Figures) {
    for &(mode, phase) in pairs.iter().cycle().take(count) {
        let reference = reference(mode, other);
        let mut slips = 0;
        loop {
            let place = written(on_s3, mode);
            let trial = if other { other_partition } else { same_partition };
            if trial(&place, mode, phase, reference, figures).is_some() {
                break;
            }
            slips += 1;
            assert!(slips < SLIPS, "{mode:?} at {phase}: A committed before it stopped, {SLIPS} times in a row");
        }
    }
}

/// Every (mode, phase): first each mode once, in an order and at a phase of `rng`'s, then each at
/// the other phase.
fn every_mode_at_every_phase(modes: &[WriteMode], rng: &mut fastrand::Rng) -> Vec<(WriteMode, Phase)> {
    let mut modes = modes.to_vec();
    rng.shuffle(&mut modes);
    let first: Vec<usize> = modes.iter().map(|_| rng.usize(..PHASES.len())).collect();
    let once = modes.iter().zip(&first).map(|(&m, &p)| (m, PHASES[p]));
    let again = modes.iter().zip(&first).map(|(&m, &p)| (m, PHASES[1 - p]));
    once.chain(again).collect()
}

/// The modes that run for a date: all but `rebuild`, whose one partition is the whole table.
const DATED: [WriteMode; 5] = [
    WriteMode::OverwritePartition,
    WriteMode::DeleteInsert,
    WriteMode::Merge,
    WriteMode::AppendDedup,
    WriteMode::Append,
];

/// Runs `scenario`'s trials: by default every mode at every phase on the same partition locally,
/// and every mode once (at a phase of the seed's) otherwise; `LAKEWRITER_SOAK` trials when soaking.
fn scenario(scenario: &str, test: &str, on_s3: bool, other: bool) {
    let mut figures = Figures::new(scenario, &format!("faults::concurrent::{test}"));
    let modes: &[WriteMode] = if other { &DATED } else { &WRITE_MODES };
    let pairs = every_mode_at_every_phase(modes, &mut figures::rng(scenario));
    let ci = if on_s3 || other { modes.len() } else { pairs.len() };
    run_trials(on_s3, other, &pairs, figures::trials(ci), &mut figures);
    figures.finish();
}

#[test]
fn a_writer_of_the_same_partition_while_a_run_is_paused_loses_no_update_and_duplicates_nothing() {
    scenario(
        "a run paused at a phase while another writes its partition from a late file, every mode, local",
        "a_writer_of_the_same_partition",
        false,
        false,
    );
}

#[test]
fn a_writer_of_another_partition_while_a_run_is_paused_lands_beside_it() {
    scenario(
        "a run paused at a phase while another writes another partition, every dated mode, local",
        "a_writer_of_another_partition",
        false,
        true,
    );
}

#[test]
fn on_s3_a_writer_of_the_same_partition_while_a_run_is_paused_loses_no_update_and_duplicates_nothing() {
    scenario(
        "a run paused at a phase while another writes its partition from a late file, every mode, S3",
        "on_s3_a_writer_of_the_same_partition",
        true,
        false,
    );
}

#[test]
fn on_s3_a_writer_of_another_partition_while_a_run_is_paused_lands_beside_it() {
    scenario(
        "a run paused at a phase while another writes another partition, every dated mode, S3",
        "on_s3_a_writer_of_another_partition",
        true,
        true,
    );
}
