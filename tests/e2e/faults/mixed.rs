//! The mixed soak: a kill, a concurrent writer and (on S3) a storage fault in the same trial,
//! every write mode, locally and on the S3 test server, each trial's choices seeded. Run A of a
//! job is paused (SIGSTOP) as it enters `planned` or `writing`; a late raw file for its day
//! arrives; writer B runs the same partition and is SIGKILLed as it enters a seeded phase, or
//! runs to its end; on S3 a seeded storage fault — one that passes within the retries, or one
//! that outlasts them — is set on the requests A makes from then on (A reaches the store through
//! the fault proxy); A resumes. Then:
//!
//! - after B, the table holds its old content or B's, whole;
//! - after A, where B committed, A's older result never replaced B's; where B did not, the table
//!   holds the old content (A failed, naming the request) or A's; the independent reader
//!   (delta-rs Python) reads the same version and as many rows, none twice;
//! - the same command run again converges to one undisturbed run over all the raw data (an
//!   `append` keeps what it appended first: a partition is appended once), and `status` agrees.
//!
//! Locally there is no fault proxy: a local trial mixes the kill and the writer.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use lakewriter_core::Phase;

use super::concurrent::{self, late_file, outcome, report_of, states, table};
use super::crash::{KillAt, kill_at};
use super::storage_faults::{LASTING, PASSING, with_test_policy};
use crate::support::fault_proxy::{Fault, Proxy, Requests};
use crate::support::figures::{self, Figures};
use crate::support::pause::Paused;
use crate::support::place::{self, DAY, Place, SCHEMA, WRITTEN};
use crate::support::reader::Reader;
use crate::support::s3::assert_no_secret;
use crate::support::{Digest, Lake, WRITE_MODES, WriteMode};

/// Where B is killed; `None`: it runs to its end.
const B_KILLED: [Option<KillAt>; 5] = [
    Some(KillAt::Entered(Phase::Planned)),
    Some(KillAt::Entered(Phase::Writing)),
    Some(KillAt::Committing),
    Some(KillAt::Entered(Phase::Committed)),
    None,
];

/// The contents `mode`'s table may hold: written for [`WRITTEN`] (`old`), then [`DAY`] run without
/// the late file (`early`) or with it (`late`, what an undisturbed run over all the raw data
/// leaves). Computed once, in local lakehouses.
#[derive(Debug, Clone)]
struct Contents {
    old: Digest,
    early: Digest,
    late: Digest,
}

fn contents(mode: WriteMode) -> Contents {
    static CONTENTS: Mutex<BTreeMap<&str, Contents>> = Mutex::new(BTreeMap::new());
    let mut all = CONTENTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    all.entry(mode.as_str())
        .or_insert_with(|| {
            let place = concurrent::written(false, mode);
            let old = place.lake().digest(&table(mode), None);
            concurrent::run(place.lake(), mode, DAY);
            let early = place.lake().digest(&table(mode), None);
            Contents { old, early, late: concurrent::reference(mode, false).table.clone() }
        })
        .clone()
}

/// A storage fault set on A's requests: what it hits, the fault, the nth request it starts at
/// (0: seeded, 1 to 3), how many times (0: every one), its name, and whether it outlasts the
/// retries.
type StorageFault = (Requests, Fault, usize, usize, &'static str, bool);

/// A seeded storage fault, or none (one trial in four).
fn storage_fault(rng: &mut fastrand::Rng) -> Option<StorageFault> {
    match rng.usize(0..4) {
        0 => None,
        1 => {
            let (requests, fault, nth, times, name) = LASTING[rng.usize(0..LASTING.len())];
            Some((requests, fault, nth, times, name, true))
        }
        _ => {
            let (requests, fault, nth, times, name) = PASSING[rng.usize(0..PASSING.len())];
            Some((requests, fault, nth, times, name, false))
        }
    }
}

/// Where a trial runs, and how A reaches the store: straight (local), or through the proxy.
struct Trial {
    place: Place,
    /// A's lakehouse: the place's, or the same prefix reached through the proxy.
    a_lake: Option<Lake>,
    mode: WriteMode,
}

impl Trial {
    /// `mode`'s table written for [`WRITTEN`], locally or (with `proxy`) on S3.
    fn new(mode: WriteMode, proxy: Option<&Proxy>) -> Self {
        let place = Place::new(proxy.is_some(), mode);
        let a_lake = match (&place, proxy) {
            (Place::S3(s3), Some(proxy)) => {
                let project = with_test_policy(place::project(SCHEMA));
                place.lake().set_project(&project);
                let lake = Lake::empty(&s3.env_via(&proxy.endpoint));
                lake.set_project(&project);
                Some(lake)
            }
            _ => None,
        };
        concurrent::run(place.lake(), mode, WRITTEN);
        Self { place, a_lake, mode }
    }

    fn lake(&self) -> &Lake {
        self.place.lake()
    }

    fn a_lake(&self) -> &Lake {
        self.a_lake.as_ref().unwrap_or_else(|| self.place.lake())
    }

    fn digest(&self) -> Digest {
        self.lake().digest(&table(self.mode), None)
    }

    /// The URI of the table, as the independent reader opens it.
    fn uri(&self) -> String {
        let relative = format!("{SCHEMA}/{}", self.mode.as_str());
        match &self.place {
            Place::Local(lake) => lake.root().join(relative).display().to_string(),
            Place::S3(s3) => s3.url(&relative),
        }
    }
}

/// Which of `contents` `digest` is; `None` for none of them (a partial table).
fn which(digest: &Digest, contents: &Contents) -> Option<&'static str> {
    let same = |c: &Digest| (c.digest.as_str(), c.rows) == (digest.digest.as_str(), digest.rows);
    // `rebuild` writes every day at once: its `early` content is its old one, found as `early`.
    [(&contents.late, "late"), (&contents.early, "early"), (&contents.old, "old")]
        .into_iter()
        .find_map(|(c, name)| same(c).then_some(name))
}

/// Writer B's run of [`DAY`], killed as it enters a seeded phase (`delay` after it) or run to
/// its end: which, for the figures.
fn writer(lake: &Lake, args: &[&str], rng: &mut fastrand::Rng) -> String {
    let b_killed = B_KILLED[rng.usize(0..B_KILLED.len())];
    let delay = Duration::from_millis(rng.u64(0..=25));
    match b_killed {
        Some(point) if kill_at(lake, args, point, delay) => format!("B killed at {}", point.name()),
        _ => {
            if b_killed.is_none() {
                lake.cli(args).assert_code(0);
            }
            "B ran to its end".to_owned()
        }
    }
}

/// The same command run again converges to one undisturbed run over all the raw data (an
/// `append` that appended keeps it), and `status` agrees; `after_a` is what A left, and which.
fn converges(
    trial: &Trial,
    contents: &Contents,
    (after_a, a_left): (&Digest, &str),
    what: &str,
    figures: &mut Figures,
) {
    let (lake, mode) = (trial.lake(), trial.mode);
    let rerun = report_of(&lake.cli(&concurrent::args(mode, DAY)));
    let appended_first = mode == WriteMode::Append && a_left != "old";
    let expected = if appended_first { after_a } else { &contents.late };
    let converged = trial.digest();
    assert!(figures.compare(expected, &converged), "{what}\nthe rerun: {rerun:?}\n{converged:?}, not {expected:?}");
    let fresh = if appended_first && which(&converged, contents) != Some("late") { "stale" } else { "fresh" };
    let partition = if mode == WriteMode::Rebuild { "all".to_owned() } else { format!("dt={DAY}") };
    assert_eq!(states(lake, mode, DAY, DAY), [(partition, fresh.to_owned())], "{what}");
}

/// One trial; `None` where A went past its commit before it stopped (nothing raced).
fn trial(mode: WriteMode, proxy: Option<&Proxy>, rng: &mut fastrand::Rng, figures: &mut Figures) -> Option<()> {
    let contents = contents(mode);
    let trial = Trial::new(mode, proxy);
    let (lake, args) = (trial.lake(), concurrent::args(mode, DAY));
    let paused = Paused::start(trial.a_lake(), &args, [Phase::Planned, Phase::Writing][rng.usize(0..2)]);
    let a_at = paused.stopped_at();
    if matches!(a_at, Phase::Committed | Phase::Checkpointing) {
        return None;
    }
    let (path, batch) = late_file(mode);
    trial.place.put(&path, &batch);
    let b_at = writer(lake, &args, rng);
    let fault = proxy.and(storage_fault(rng));
    let what = format!("{mode:?}: A paused at {a_at}, {b_at}, {}", fault.map_or("no storage fault", |f| f.4));
    let after_b = trial.digest();
    let Some(b_left) = which(&after_b, &contents) else {
        figures.partial();
        panic!("{what}: after B, a partial table: {after_b:?}");
    };
    if let (Some(proxy), Some((requests, fault, nth, times, _, _))) = (proxy, fault) {
        proxy.inject(requests, fault, if nth == 0 { rng.usize(1..=3) } else { nth }, times);
    }
    let a_run = paused.resume();
    let reached = proxy.is_some_and(|p| p.requests().iter().any(|s| s.action != "forward"));
    if let Some(proxy) = proxy {
        proxy.clear();
    }
    assert_no_secret(&a_run);
    let after_a = trial.digest();
    let a_left = which(&after_a, &contents);
    if a_left.is_none() {
        figures.partial();
    }
    let what = format!("{what}\nafter B: {b_left}, after A: {a_left:?}\nA's log:\n{}", a_run.stderr);
    let a_failed = a_run.code != 0;
    assert!(!a_failed || fault.is_some_and(|f| f.5 && reached), "{what}\nA failed without a lasting fault");
    // A's older result never replaces B's; where B did not commit, A's is committed (or was,
    // before A stopped mid-commit: B then found it).
    let expected_a = match (b_left, a_failed) {
        (_, true) | ("late", false) => b_left,
        _ => "early",
    };
    let a_left = a_left.unwrap_or_else(|| panic!("{what}\nafter A, a partial table: {after_a:?}"));
    assert_eq!(a_left, expected_a, "{what}");
    let read = Reader::new(lake).read(&trial.uri());
    assert_eq!((read.version, read.rows), (after_a.version, after_a.rows), "{what}\nthe independent reader");
    assert_eq!(read.distinct_rows, read.rows, "{what}\nduplicate rows in the independent reader");
    converges(&trial, &contents, (&after_a, a_left), &what, figures);

    let fault = match fault {
        None => "no storage fault",
        Some(_) if !reached => "a storage fault not reached",
        Some((.., true)) => "a storage fault that outlasts the retries",
        Some(_) => "a storage fault that passes",
    };
    let a_outcome = if a_failed {
        "A failed naming the request; the rerun converged".to_owned()
    } else {
        format!("A {}", outcome(&report_of(&a_run)))
    };
    figures.trial(&format!("{b_at}; {fault}"), &a_outcome);
    Some(())
}

/// How many trials in a row may find A gone past its commit before it stopped.
const SLIPS: usize = 3;

/// The trials of one place: the `i`th on `WRITE_MODES[i % 6]`, its choices seeded.
fn mixed(on_s3: bool) {
    let where_ = if on_s3 { "S3" } else { "local" };
    let scenario = format!(
        "mixed: a writer killed at a phase while a paused run waits, then a storage fault, every mode, {where_}"
    );
    let test =
        format!("faults::mixed::{}", if on_s3 { "on_s3_kills_faults_and_a_writer" } else { "kills_and_a_writer" });
    let mut figures = Figures::new(&scenario, &test);
    let mut rng = figures::rng(&scenario);
    let proxy = on_s3.then(Proxy::start);
    for i in 0..figures::trials(WRITE_MODES.len()) {
        let mode = WRITE_MODES[i % WRITE_MODES.len()];
        let raced = (0..SLIPS).any(|_| trial(mode, proxy.as_ref(), &mut rng, &mut figures).is_some());
        assert!(raced, "{mode:?}: A went past its commit before it stopped, {SLIPS} times in a row");
    }
    figures.finish();
}

#[test]
fn kills_and_a_writer_in_the_same_trial_lose_nothing_and_converge() {
    mixed(false);
}

#[test]
fn on_s3_kills_faults_and_a_writer_in_the_same_trial_lose_nothing_and_converge() {
    mixed(true);
}
