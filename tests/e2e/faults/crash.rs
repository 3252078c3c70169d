//! Crash injection: a run SIGKILLed as it enters a phase of its write — told by its JSON log on
//! stderr (see ARCHITECTURE.md, "Phases"), never by a guessed time. After each kill the table
//! opens, in lakewriter and in an independent reader (delta-rs Python); it holds its old or its
//! new content whole, never a mix or a duplicate; its partition state agrees with the data; the
//! files a killed run left behind are seen by no reader; and the same command run again
//! converges to the content of an undisturbed run, which a vacuum of the leftovers keeps.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use lakewriter_core::Phase;

use crate::support::figures::{self, Figures};
use crate::support::modes::{FAILING, GOOD, WRITTEN, project, run, state, table};
use crate::support::reader::{Read, Reader};
use crate::support::s3::S3;
use crate::support::{DAILY_ORDERS_SQL, Digest, Lake, LogLine, WriteMode, daily_orders, day};

/// Where a trial's runs write, and compute.
enum At {
    /// A local lakehouse.
    Local,
    /// A prefix of the S3 test bucket.
    S3,
    /// A local lakehouse, each partition computed on the engine at this URL (`--engine`).
    #[cfg(feature = "ballista")]
    Engine(String),
}

impl At {
    fn of(on_s3: bool) -> Self {
        if on_s3 { Self::S3 } else { Self::Local }
    }

    /// Its name in the figures.
    fn name(&self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::S3 => "S3",
            #[cfg(feature = "ballista")]
            Self::Engine(_) => "local, on the Ballista engine",
        }
    }

    /// What begins the name of its tests.
    fn prefix(&self) -> &'static str {
        match self {
            Self::Local => "",
            Self::S3 => "on_s3_",
            #[cfg(feature = "ballista")]
            Self::Engine(_) => "on_the_engine_",
        }
    }

    /// Where the contents a trial's table must hold are made: here, or on the local engine for a
    /// trial on the Ballista engine.
    fn reference(&self) -> &Self {
        #[cfg(feature = "ballista")]
        if let Self::Engine(_) = self {
            return &Self::Local;
        }
        self
    }
}

/// Where a trial runs: a local lakehouse, or a prefix of the S3 test bucket.
enum Place {
    Local(Lake),
    S3(S3),
}

impl Place {
    fn lake(&self) -> &Lake {
        match self {
            Self::Local(lake) => lake,
            Self::S3(s3) => &s3.lake,
        }
    }

    /// A fresh place with raw orders for `days`.
    fn with_orders(at: &At, name: &str, days: &[&str]) -> Self {
        let place = match at {
            At::Local => Self::Local(Lake::empty(&[])),
            At::S3 => Self::S3(S3::new(name)),
            #[cfg(feature = "ballista")]
            At::Engine(url) => Self::Local(Lake::empty(&[("LAKEWRITER_ENGINE", url)])),
        };
        place.add_orders(days);
        place
    }

    /// Delivers raw orders for `days`.
    fn add_orders(&self, days: &[&str]) {
        for dt in days {
            match self {
                Self::Local(lake) => {
                    let range = lakewriter_core::DateRange::new(day(dt), day(dt)).expect("a day");
                    lakewriter_datagen::write_orders(&lake.root(), range).expect("raw data");
                }
                Self::S3(s3) => {
                    let batch = lakewriter_datagen::orders_for(day(dt));
                    let bytes = lakewriter_datagen::parquet_bytes(&batch).expect("parquet");
                    s3.put(&format!("raw/orders/dt={dt}/part-00000.parquet"), bytes);
                }
            }
        }
    }

    /// `mode`'s table written for [`WRITTEN`] (`rebuild`: from its raw orders), then raw orders
    /// for [`FAILING`] delivered, and a checkpoint due at the commit of the run for [`FAILING`]
    /// (the table's third version).
    fn written(at: &At, mode: WriteMode) -> Self {
        let place = Self::with_orders(at, &format!("crash-{}", mode.as_str().replace('_', "-")), &[WRITTEN]);
        place.lake().set_project(&project(&[mode], GOOD));
        run(place.lake(), mode, WRITTEN).assert_code(0);
        place.add_orders(&[FAILING]);
        place.reader().checkpoint_every(3, &place.table_uri(mode));
        place
    }

    /// The URI of `mode`'s table, as the independent reader opens it.
    fn table_uri(&self, mode: WriteMode) -> String {
        let relative = format!("failures/{}", mode.as_str());
        match self {
            Self::Local(lake) => lake.root().join(relative).display().to_string(),
            Self::S3(s3) => s3.url(&relative),
        }
    }

    fn reader(&self) -> Reader<'_> {
        Reader::new(self.lake())
    }
}

/// Where a run is killed: as it enters a phase (its phase event), or as it commits — its data files
/// written, its log entry being put: lakewriter's own commit enters `committing`, delta-rs's opens
/// its commit span (`commit_with_retries`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KillAt {
    Entered(Phase),
    Committing,
}

impl KillAt {
    /// Its name in the figures: the phase's, or `committing`.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Entered(phase) => phase.as_str(),
            Self::Committing => "committing",
        }
    }

    /// Whether `line` of the run's log tells that it got here.
    fn told_by(self, line: &LogLine) -> bool {
        match self {
            Self::Entered(phase) => line.phase() == Some(phase),
            Self::Committing => line.phase() == Some(Phase::Committing) || line.opens("commit_with_retries"),
        }
    }
}

impl std::fmt::Display for KillAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a run is killed: planned (nothing written yet), writing (data files on their way),
/// committing (data files written, the log entry being put), committed (the log entry landed; the
/// checkpoint and the report not yet), checkpointing (the checkpoint on its way).
pub(super) const PHASES: [KillAt; 5] = [
    KillAt::Entered(Phase::Planned),
    KillAt::Entered(Phase::Writing),
    KillAt::Committing,
    KillAt::Entered(Phase::Committed),
    KillAt::Entered(Phase::Checkpointing),
];

/// Runs `lakewriter --log-format json ARGS` on `lake`, waits for the log line that tells `point`,
/// waits `delay` more and SIGKILLs it; whether it got there before it ended on its own.
pub(super) fn kill_at(lake: &Lake, args: &[&str], point: KillAt, delay: Duration) -> bool {
    kill_at_nth(lake, args, point, 1, delay)
}

/// [`kill_at`] the `nth` time (from 1) the run tells `point`: a command that commits several times.
pub(super) fn kill_at_nth(lake: &Lake, args: &[&str], point: KillAt, nth: usize, delay: Duration) -> bool {
    let mut command = lake.command(&[&["--log-format", "json"], args].concat());
    command
        .env("RUST_LOG", "lakewriter=warn,lakewriter::phase=info,deltalake_core::kernel::transaction=info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn lakewriter");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen = 0;
    let hit = lines.by_ref().map_while(Result::ok).any(|line| {
        seen += usize::from(LogLine::parse(&line).is_some_and(|l| point.told_by(&l)));
        seen == nth
    });
    if hit {
        std::thread::sleep(delay);
        child.kill().expect("SIGKILL");
    }
    // Drain the rest, so that a run that goes on never blocks on a full pipe.
    lines.for_each(drop);
    child.wait().expect("wait for lakewriter");
    hit
}

/// The arguments of `mode`'s run for `day` (`rebuild`: without a date).
fn args(mode: WriteMode, day: &str) -> Vec<&str> {
    let mut args = vec!["run", mode.as_str()];
    if mode != WriteMode::Rebuild {
        args.extend(["--dt", day]);
    }
    args
}

/// The state `status` gives each of `daily_orders`'s partitions `from..=to`.
fn states(lake: &Lake, from: &str, to: &str) -> Vec<String> {
    lake.status(&["daily_orders", "--from", from, "--to", to]).states().into_iter().map(str::to_owned).collect()
}

/// The old and the new content of `mode`'s table (before and after the run for [`FAILING`]),
/// as lakewriter and as the independent reader see them.
struct Contents {
    old: (Digest, Read),
    new: (Digest, Read),
}

impl Contents {
    fn of(at: &At, mode: WriteMode) -> Self {
        let place = Place::written(at, mode);
        let (lake, uri) = (place.lake(), place.table_uri(mode));
        let old = (lake.digest(&table(mode), None), place.reader().read(&uri));
        run(lake, mode, FAILING).assert_code(0);
        Self { old, new: (lake.digest(&table(mode), None), place.reader().read(&uri)) }
    }
}

/// One trial: `mode`'s run for [`FAILING`] killed at `phase` (`delay` after it), in a fresh
/// place; checks the table after the kill, after a rerun and after a vacuum.
fn trial(at: &At, mode: WriteMode, phase: KillAt, delay: Duration, contents: &Contents, figures: &mut Figures) {
    let place = Place::written(at, mode);
    let (lake, uri, what) = (place.lake(), place.table_uri(mode), format!("{mode:?} killed at {phase} (+{delay:?})"));
    assert!(kill_at(lake, &args(mode, FAILING), phase, delay), "{what}: the run reaches {phase}");
    let after = lake.digest(&table(mode), None);
    let read = place.reader().read(&uri);
    let (is_old, is_new) = (same(&after, &contents.old.0), same(&after, &contents.new.0));
    if !is_old && !is_new {
        figures.partial();
    }
    assert!(is_old || is_new, "{what}: neither the old nor the new content: {after:?}");
    let expected_read = if is_new { &contents.new.1 } else { &contents.old.1 };
    assert_eq!(
        (read.version, &read.digest, read.rows),
        (after.version, &expected_read.digest, expected_read.rows),
        "{what}: the independent reader"
    );
    assert_eq!(read.distinct_rows, read.rows, "{what}: duplicate rows in the independent reader");
    match (phase, delay.is_zero()) {
        (KillAt::Entered(Phase::Planned), true) => {
            assert!(is_old, "{what}: killed before writing, yet the table changed");
        }
        (KillAt::Entered(Phase::Committed | Phase::Checkpointing), _) => {
            assert!(is_new, "{what}: killed after its commit, yet the table is old");
        }
        _ => {}
    }
    let leftovers = if is_old { place.reader().unreferenced(&uri).len() } else { 0 };
    let outcome = match (is_new, leftovers) {
        (true, _) => "new content",
        (false, 0) => "old content",
        (false, _) => "old content, unreferenced files left behind",
    };
    figures.trial(phase.name(), outcome);
    if mode != WriteMode::Rebuild {
        let expected = if is_new { "fresh" } else { "missing" };
        assert_eq!(state(lake, mode), expected, "{what}: the state disagrees with the data");
    }
    run(lake, mode, FAILING).assert_code(0);
    let rerun = lake.digest(&table(mode), None);
    assert!(figures.compare(&contents.new.0, &rerun), "{what}: after the rerun: {rerun:?}, not {:?}", contents.new.0);
    place.reader().vacuum(&uri);
    assert!(place.reader().unreferenced(&uri).is_empty(), "{what}: files left after a vacuum");
    let vacuumed = (lake.digest(&table(mode), None), place.reader().read(&uri));
    assert!(same(&vacuumed.0, &contents.new.0), "{what}: after a vacuum: {:?}", vacuumed.0);
    assert_eq!(vacuumed.1.digest, contents.new.1.digest, "{what}: the independent reader after a vacuum");
    if mode != WriteMode::Rebuild {
        assert_eq!(state(lake, mode), "fresh", "{what}: fresh after the rerun");
    }
}

fn same(a: &Digest, b: &Digest) -> bool {
    (a.digest.as_str(), a.rows) == (b.digest.as_str(), b.rows)
}

/// Kills `mode`'s run at every phase in turn: each phase once with no delay, then (soaking)
/// with a seeded delay of up to 25 ms after the phase begins.
fn kill_at_every_phase(at: &At, mode: WriteMode) {
    let place = at.name();
    let scenario = format!("`run` SIGKILLed at a phase: {}, {place}", mode.as_str());
    let test = format!("faults::crash::{}a_run_killed_at_any_phase::{}", at.prefix(), mode.as_str());
    let mut figures = Figures::new(&scenario, &test);
    let mut rng = figures::rng(&scenario);
    let contents = Contents::of(at.reference(), mode);
    for i in 0..figures::trials(PHASES.len()) {
        let phase = PHASES[i % PHASES.len()];
        let delay = Duration::from_millis(if i < PHASES.len() { 0 } else { rng.u64(0..=25) });
        trial(at, mode, phase, delay, &contents, &mut figures);
    }
    figures.finish();
}

/// One test a mode and place, so that the suite runs them side by side.
macro_rules! kill_tests {
    ($($name:ident: $mode:expr),* $(,)?) => {
        mod a_run_killed_at_any_phase {
            use super::*;
            $(#[test] fn $name() { kill_at_every_phase(&At::Local, $mode); })*
        }
        mod on_s3_a_run_killed_at_any_phase {
            use super::*;
            $(#[test] fn $name() { kill_at_every_phase(&At::S3, $mode); })*
        }
    };
}

/// The same with each partition computed on a Ballista engine: a scheduler and two executors as
/// processes, one cluster a test. A run killed while the executors write leaves their files
/// unreferenced; its Ballista job may go on writing files no commit names.
#[cfg(feature = "ballista")]
mod on_the_engine_a_run_killed_at_any_phase {
    use super::*;
    use crate::support::engine::Cluster;

    fn on_the_engine(mode: WriteMode) {
        let cluster = Cluster::start(2, &[]);
        kill_at_every_phase(&At::Engine(cluster.url.clone()), mode);
    }

    #[test]
    fn overwrite_partition() {
        on_the_engine(WriteMode::OverwritePartition);
    }

    #[test]
    fn merge() {
        on_the_engine(WriteMode::Merge);
    }
}

kill_tests! {
    overwrite_partition: WriteMode::OverwritePartition,
    delete_insert: WriteMode::DeleteInsert,
    merge: WriteMode::Merge,
    append_dedup: WriteMode::AppendDedup,
    append: WriteMode::Append,
    rebuild: WriteMode::Rebuild,
}

/// A `backfill --parallel N` killed as one of its partitions enters `writing` or `committed`:
/// every partition holds nothing or its whole new content, and the rerun converges.
fn kill_a_backfill(on_s3: bool) {
    const PHASES: [KillAt; 3] =
        [KillAt::Entered(Phase::Writing), KillAt::Committing, KillAt::Entered(Phase::Committed)];
    const DAYS: [&str; 4] = ["2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04"];
    let where_ = if on_s3 { "S3" } else { "local" };
    let scenario = format!("`backfill --parallel N` SIGKILLed at a partition's phase, {where_}");
    let test = format!("faults::crash::{}a_backfill_killed_at_a_commit", if on_s3 { "on_s3_" } else { "" });
    let mut figures = Figures::new(&scenario, &test);
    let mut rng = figures::rng(&scenario);
    let place = |on_s3| {
        let place = Place::with_orders(&At::of(on_s3), "crash-backfill", &DAYS);
        place.lake().set_project(&daily_orders(DAILY_ORDERS_SQL));
        place
    };
    let mut expected: [Option<Vec<Digest>>; 2] = [None, None];
    for trial in 0..figures::trials(PHASES.len()) {
        let phase = PHASES[trial % PHASES.len()];
        let parallel = rng.usize(2..=3);
        let parallel_arg = parallel.to_string();
        let backfill = ["backfill", "daily_orders", "--from", DAYS[0], "--to", DAYS[3], "--parallel", &parallel_arg];
        let expected = expected[parallel - 2].get_or_insert_with(|| {
            let undisturbed = place(false);
            undisturbed.lake().cli(&backfill).assert_code(0);
            DAYS.iter().map(|d| undisturbed.lake().digest("analytics.daily_orders", Some(d))).collect()
        });
        let place = place(on_s3);
        let lake = place.lake();
        lake.cli(&["run", "daily_orders", "--dt", DAYS[0]]).assert_code(0);
        assert!(kill_at(lake, &backfill[..], phase, Duration::ZERO), "the backfill reaches {phase}");
        let parts: Vec<Digest> = DAYS.iter().map(|d| lake.digest("analytics.daily_orders", Some(d))).collect();
        for ((day, part), new) in DAYS.iter().zip(&parts).zip(expected.iter()) {
            let whole = same(part, new) || part.rows == 0;
            if !whole {
                figures.partial();
            }
            assert!(whole, "{day} after a kill at {phase}: a partial partition: {part:?}");
        }
        let states = states(lake, DAYS[0], DAYS[3]);
        let written: Vec<bool> = parts.iter().map(|p| p.rows > 0).collect();
        let fresh: Vec<bool> = states.iter().map(|s| s == "fresh").collect();
        assert_eq!(fresh, written, "after a kill at {phase}: the states {states:?} disagree with the data");
        let written = written.iter().filter(|w| **w).count();
        figures.trial(phase.name(), &format!("{written} of {} partitions written", DAYS.len()));
        lake.cli(&backfill).assert_code(0);
        for (day, new) in DAYS.iter().zip(expected.iter()) {
            let part = lake.digest("analytics.daily_orders", Some(day));
            assert!(figures.compare(new, &part), "{day} after the rerun: {part:?}, not {new:?}");
        }
    }
    figures.finish();
}

#[test]
fn a_backfill_killed_at_a_commit_leaves_each_partition_whole_and_a_rerun_converges() {
    kill_a_backfill(false);
}

#[test]
fn on_s3_a_backfill_killed_at_a_commit_leaves_each_partition_whole_and_a_rerun_converges() {
    kill_a_backfill(true);
}
