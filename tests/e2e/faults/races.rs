//! Racing first writes. Four processes run a job into a table that does not exist yet — all on
//! one partition, or each on its own — in every write mode, locally and on the S3 test server.
//! Every round must end exactly as one sequential run of the same work would: every process exits
//! 0 and reports `ok` (or, for an `append` another process already did, `skipped`), the reports
//! account for every table version, and the table holds the rows of the sequential run — no row
//! written twice, no partition lost. Where the test can read the Delta log (locally), it also
//! checks that the table was created once: a losing create committed on top of the winner's
//! brings a second protocol and another table id, and can leave duplicates behind even where a
//! later overwrite hides them from the final digest.
//!
//! A race is not certain to be lost in a given round, so each scenario runs several rounds, each
//! into a fresh table. The S3 tests fail — never skip — when the S3 test server is not there.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};

use lakewriter_core::WriteMode;
use serde_json::Value;

use crate::support::place::project;
use crate::support::s3::S3;
use crate::support::{
    Digest, Lake, Project, Report, Run, Status, day, distinct_customers, finish, orders, parse_lines,
};

/// Processes per race.
const RACERS: usize = 4;
const LOCAL_ROUNDS: usize = 4;
const S3_ROUNDS: usize = 2;

/// The day every process runs in a race on one partition.
const SAME_DAY: &str = "2026-09-05";
/// The days of a race on different partitions: one a process.
const DAYS: [&str; RACERS] = ["2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04"];

/// The rows the one run that writes [`SAME_DAY`] first writes, in a mode that writes it once
/// ([`writes_once`]): a merge a row a customer the day's batch changes (an upsert or a
/// tombstone), the appends a row an order.
fn rows_of_same_day(mode: WriteMode) -> u64 {
    match mode {
        WriteMode::Merge => distinct_customers(&[lakewriter_datagen::customers_for(day(SAME_DAY))]),
        _ => orders(SAME_DAY),
    }
}

/// Whether a run of work already in the table writes no row again: an `append` skips a
/// partition it appended; a `merge` or `append_dedup` with nothing new commits nothing.
fn writes_once(mode: WriteMode) -> bool {
    matches!(mode, WriteMode::Merge | WriteMode::AppendDedup | WriteMode::Append)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Race {
    /// Every process runs [`SAME_DAY`] (a `rebuild` runs without a date).
    SamePartition,
    /// Each process runs one of [`DAYS`].
    DifferentPartitions,
}

impl Race {
    /// The arguments of each racing process.
    fn racers(self, mode: WriteMode) -> Vec<Vec<&'static str>> {
        let job = mode.as_str();
        (0..RACERS)
            .map(|i| match (self, mode) {
                (Race::SamePartition, WriteMode::Rebuild) => vec!["run", job],
                (Race::SamePartition, _) => vec!["run", job, "--dt", SAME_DAY],
                (Race::DifferentPartitions, _) => vec!["run", job, "--dt", DAYS[i]],
            })
            .collect()
    }

    /// The same work done by one process.
    fn sequential(self, mode: WriteMode) -> Vec<&'static str> {
        match self {
            Race::SamePartition => self.racers(mode).swap_remove(0),
            Race::DifferentPartitions => {
                vec!["backfill", mode.as_str(), "--from", DAYS[0], "--to", DAYS[RACERS - 1], "--parallel", "1"]
            }
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Race::SamePartition => "on one partition",
            Race::DifferentPartitions => "on different partitions",
        }
    }

    /// The partitions the work writes: `(from, to)`.
    fn days(self) -> (&'static str, &'static str) {
        match self {
            Race::SamePartition => (SAME_DAY, SAME_DAY),
            Race::DifferentPartitions => (DAYS[0], DAYS[RACERS - 1]),
        }
    }
}

/// Where a race runs: a local lakehouse or a prefix of the S3 test bucket.
trait Place {
    /// The binary with `--project <this place's project> --color never ARGS…`.
    fn lakewriter(&self, args: &[&str]) -> Command;
    fn write_project(&self, project: &Project);
    /// The actions of each commit of the table at `table_dir` below the root, where the test can
    /// read the Delta log itself (a local root).
    fn log(&self, table_dir: &str) -> Option<Vec<Vec<Value>>>;
}

impl Place for Lake {
    fn lakewriter(&self, args: &[&str]) -> Command {
        self.command(args)
    }

    fn write_project(&self, project: &Project) {
        self.set_project(project);
    }

    fn log(&self, table_dir: &str) -> Option<Vec<Vec<Value>>> {
        let log = self.root().join(table_dir).join("_delta_log");
        let mut commits: Vec<_> = std::fs::read_dir(&log)
            .expect("the Delta log")
            .map(|e| e.expect("log entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        commits.sort();
        Some(commits.iter().map(|p| parse_lines(&std::fs::read_to_string(p).expect("a commit"))).collect())
    }
}

impl Place for S3 {
    fn lakewriter(&self, args: &[&str]) -> Command {
        self.lake.command(args)
    }

    fn write_project(&self, project: &Project) {
        self.lake.set_project(project);
    }

    fn log(&self, _table_dir: &str) -> Option<Vec<Vec<Value>>> {
        None
    }
}

fn run(place: &impl Place, args: &[&str]) -> Run {
    Run::from(&place.lakewriter(args).output().expect("run lakewriter"))
}

fn digest(place: &impl Place, table: &str) -> Digest {
    let run = run(place, &["--json", "digest", table]);
    run.assert_code(0);
    serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("digest JSON: {}: {e}", run.stdout))
}

/// A local lakehouse with the raw layer `lakewriter demo` lays out (orders and customer changes
/// of September 2026), and the project of [`project`] with its tables in `races`.
fn local_lake() -> Lake {
    let lake = Lake::demo();
    lake.set_project(&project("races"));
    lake
}

/// The digest of the race's work done by one process, in a fresh local lakehouse.
fn reference(mode: WriteMode, race: Race) -> Digest {
    let lake = local_lake();
    run(&lake, &race.sequential(mode)).assert_code(0);
    digest(&lake, &format!("races.{}", mode.as_str()))
}

/// What an `append` that finds its partition appended says.
const ALREADY_APPENDED: &str = "already appended; nothing appended. --force appends again and duplicates these rows";
/// What a `merge` or `append_dedup` that finds its partition written says.
const ALREADY_WRITTEN: &str = "already fresh: nothing to change, no new table version";

/// Starts every racing process, then waits for them all, and checks that the table and the
/// reports are what one sequential run of the same work gives.
fn race_once(place: &impl Place, mode: WriteMode, race: Race, schema: &str, expected: &Digest, round: &str) {
    let outcome = Outcome::of(place, mode, race, round);
    outcome.assert_reports();
    let table = digest(place, &format!("{schema}.{}", mode.as_str()));
    outcome.assert_table(&table, expected);
    if let Some(log) = place.log(&format!("{schema}/{}", mode.as_str())) {
        outcome.assert_created_once(&log);
    }
    outcome.assert_one_commit_a_version(table.version);
    if mode != WriteMode::Rebuild {
        outcome.assert_fresh(place);
    }
}

/// The reports of one race's processes, with what every assertion about them names.
struct Outcome {
    mode: WriteMode,
    race: Race,
    /// Each process's report, in the order they were started.
    reports: Vec<Report>,
    /// What raced.
    what: String,
    /// Every process's exit code and output.
    outputs: String,
}

impl Outcome {
    /// Starts every racing process, waits for them all, and reads their reports: each exits 0
    /// with one report and no failure.
    fn of(place: &impl Place, mode: WriteMode, race: Race, round: &str) -> Self {
        let children: Vec<_> = race
            .racers(mode)
            .iter()
            .map(|args| {
                let all = [&["--json"], args.as_slice()].concat();
                place.lakewriter(&all).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn lakewriter")
            })
            .collect();
        let runs: Vec<Run> = children.into_iter().map(finish).collect();
        let outputs = runs
            .iter()
            .enumerate()
            .map(|(i, r)| format!("process {i}: exit code {}\nstdout:\n{}stderr:\n{}", r.code, r.stdout, r.stderr))
            .collect::<Vec<_>>()
            .join("\n");
        let what =
            format!("{round}: {RACERS} processes racing `{}` {} into a missing table", mode.as_str(), race.describe());
        for (i, r) in runs.iter().enumerate() {
            assert_eq!(r.code, 0, "{what}: process {i} exit code\n{outputs}");
        }
        let reports = runs
            .iter()
            .map(|r| {
                let (mut reports, summary) = r.json();
                assert_eq!((reports.len(), summary.failed), (1, 0), "{what}\n{outputs}");
                reports.remove(0)
            })
            .collect();
        Self { mode, race, reports, what, outputs }
    }

    /// Every report is `ok`, but where the work was done already: on one partition, an `append`
    /// after the first is skipped, and a `merge` or `append_dedup` after the first finds nothing
    /// to change and commits nothing.
    fn assert_reports(&self) {
        let Self { what, outputs, .. } = self;
        let (mut ok, mut skipped) = (0, 0);
        for r in &self.reports {
            match (r.status.as_str(), r.note.as_deref()) {
                ("skipped", Some(ALREADY_APPENDED)) if self.mode == WriteMode::Append => skipped += 1,
                ("ok", _) => ok += 1,
                (status, note) => panic!("{what}: status {status}, note {note:?}\n{outputs}"),
            }
        }
        let once = self.race == Race::SamePartition && writes_once(self.mode);
        let expected = if once && self.mode == WriteMode::Append { (1, RACERS - 1) } else { (RACERS, 0) };
        assert_eq!((ok, skipped), expected, "{what}: reports ok, skipped\n{outputs}");
        if once {
            let mut writers = 0;
            for r in &self.reports {
                if r.committed {
                    let rows = Some(rows_of_same_day(self.mode));
                    assert_eq!(r.rows_written, rows, "{what}: the writer's rows\n{outputs}");
                    writers += 1;
                } else if self.mode != WriteMode::Append {
                    assert_eq!(r.note.as_deref(), Some(ALREADY_WRITTEN), "{what}\n{outputs}");
                    assert_eq!(r.rows_written, Some(0), "{what}: the rows of a run that finds them written\n{outputs}");
                } else {
                    assert_eq!(r.rows_written, None, "{what}: the rows of a skipped run\n{outputs}");
                }
            }
            assert_eq!(writers, 1, "{what}: one run writes the rows; the others find them written\n{outputs}");
        }
    }

    /// The table holds what one sequential run of the same work writes.
    fn assert_table(&self, table: &Digest, expected: &Digest) {
        assert_eq!(
            (table.rows, &table.digest),
            (expected.rows, &expected.digest),
            "{}: the table differs from one sequential run of the same work ({} rows instead of {})\n{}",
            self.what,
            table.rows,
            expected.rows,
            self.outputs
        );
    }

    /// The table was created once: no later commit brings a protocol or another table's metadata
    /// (a create that lost the race for version 0, committed on top of the winner's).
    fn assert_created_once(&self, log: &[Vec<Value>]) {
        let actions = |key: &str| -> Vec<(usize, &Value)> {
            log.iter().enumerate().flat_map(|(v, c)| c.iter().filter_map(move |a| a.get(key).map(|a| (v, a)))).collect()
        };
        let protocols: Vec<usize> = actions("protocol").into_iter().map(|(v, _)| v).collect();
        let ids: BTreeSet<&str> =
            actions("metaData").iter().map(|(_, m)| m["id"].as_str().expect("table id")).collect();
        assert_eq!(
            (protocols, ids.len()),
            (vec![0], 1),
            "{}: the table was created more than once (versions with a protocol action, table ids)\n{}",
            self.what,
            self.outputs
        );
    }

    /// Every table version up to `version` is the commit of exactly one run: no report claims a
    /// commit it did not make, none leaves its commit out. Different partitions take one commit
    /// each; work done once on one partition takes one commit, the others commit nothing, not
    /// even state; a partition replaced (or a table rebuilt) by every process takes one commit
    /// each. Which process has which version varies with the race.
    fn assert_one_commit_a_version(&self, version: u64) {
        let Self { what, outputs, .. } = self;
        let mut committed: Vec<u64> =
            self.reports.iter().filter(|r| r.committed).map(|r| r.table_version.expect("a commit's version")).collect();
        committed.sort_unstable();
        assert_eq!(
            committed,
            (0..=version).collect::<Vec<_>>(),
            "{what}: the versions the reports say they committed, against the table's versions 0..={version}\n{outputs}"
        );
        match self.race {
            Race::SamePartition if writes_once(self.mode) => assert_eq!(version, 0, "{what}: versions\n{outputs}"),
            Race::SamePartition | Race::DifferentPartitions => {
                assert_eq!(version, RACERS as u64 - 1, "{what}: versions\n{outputs}");
            }
        }
    }

    /// The partition state the commits recorded: every partition the work wrote reads fresh.
    fn assert_fresh(&self, place: &impl Place) {
        let (from, to) = self.race.days();
        let status = run(place, &["--json", "status", self.mode.as_str(), "--from", from, "--to", to]);
        let partitions = Status::of(&status).partitions;
        let recorded: Vec<(&str, &str)> = partitions.iter().map(|p| (p.partition.as_str(), p.state.as_str())).collect();
        let expected: Vec<String> = match self.race {
            Race::SamePartition => vec![format!("dt={SAME_DAY}")],
            Race::DifferentPartitions => DAYS.iter().map(|d| format!("dt={d}")).collect(),
        };
        let fresh: Vec<(&str, &str)> = expected.iter().map(|p| (p.as_str(), "fresh")).collect();
        assert_eq!(recorded, fresh, "{}: partition state\n{}\n{}", self.what, status.stdout, self.outputs);
    }
}

/// `LOCAL_ROUNDS` races, each in a fresh local lakehouse.
fn race_locally(mode: WriteMode, race: Race) {
    let expected = reference(mode, race);
    for round in 0..LOCAL_ROUNDS {
        let lake = local_lake();
        race_once(&lake, mode, race, "races", &expected, &format!("local round {round}"));
    }
}

/// `S3_ROUNDS` races on the S3 test server, each into fresh tables (a schema of their own) over
/// one raw layer.
fn race_on_s3(mode: WriteMode, race: Race) {
    let s3 = S3::new(&format!("races-{}", mode.as_str().replace('_', "-")));
    s3.lake.prepare_demo();
    let expected = reference(mode, race);
    for round in 0..S3_ROUNDS {
        let schema = format!("round{round}");
        s3.write_project(&project(&schema));
        race_once(&s3, mode, race, &schema, &expected, &format!("S3 round {round}"));
    }
}

/// Each scenario, in fresh local lakehouses.
mod local {
    use super::{Race, WriteMode, race_locally};

    #[test]
    fn overwrite_partition_on_one_partition() {
        race_locally(WriteMode::OverwritePartition, Race::SamePartition);
    }

    #[test]
    fn overwrite_partition_on_different_partitions() {
        race_locally(WriteMode::OverwritePartition, Race::DifferentPartitions);
    }

    #[test]
    fn merge_on_one_partition() {
        race_locally(WriteMode::Merge, Race::SamePartition);
    }

    #[test]
    fn merge_on_different_partitions() {
        race_locally(WriteMode::Merge, Race::DifferentPartitions);
    }

    #[test]
    fn delete_insert_on_one_partition() {
        race_locally(WriteMode::DeleteInsert, Race::SamePartition);
    }

    #[test]
    fn delete_insert_on_different_partitions() {
        race_locally(WriteMode::DeleteInsert, Race::DifferentPartitions);
    }

    #[test]
    fn append_dedup_on_one_partition() {
        race_locally(WriteMode::AppendDedup, Race::SamePartition);
    }

    #[test]
    fn append_dedup_on_different_partitions() {
        race_locally(WriteMode::AppendDedup, Race::DifferentPartitions);
    }

    #[test]
    fn append_on_one_partition() {
        race_locally(WriteMode::Append, Race::SamePartition);
    }

    #[test]
    fn append_on_different_partitions() {
        race_locally(WriteMode::Append, Race::DifferentPartitions);
    }

    #[test]
    fn rebuild() {
        race_locally(WriteMode::Rebuild, Race::SamePartition);
    }
}

/// On the S3 test server (a race there takes a few seconds): every mode on one partition, and
/// the keyed and the transaction-guarded modes on different partitions. (`s3.rs` races
/// `overwrite_partition` backfill shards into a missing table.)
mod s3 {
    use super::{Race, WriteMode, race_on_s3};

    #[test]
    fn overwrite_partition_on_one_partition() {
        race_on_s3(WriteMode::OverwritePartition, Race::SamePartition);
    }

    #[test]
    fn merge_on_one_partition() {
        race_on_s3(WriteMode::Merge, Race::SamePartition);
    }

    #[test]
    fn merge_on_different_partitions() {
        race_on_s3(WriteMode::Merge, Race::DifferentPartitions);
    }

    #[test]
    fn delete_insert_on_one_partition() {
        race_on_s3(WriteMode::DeleteInsert, Race::SamePartition);
    }

    #[test]
    fn append_dedup_on_one_partition() {
        race_on_s3(WriteMode::AppendDedup, Race::SamePartition);
    }

    #[test]
    fn append_on_one_partition() {
        race_on_s3(WriteMode::Append, Race::SamePartition);
    }

    #[test]
    fn append_on_different_partitions() {
        race_on_s3(WriteMode::Append, Race::DifferentPartitions);
    }

    #[test]
    fn rebuild() {
        race_on_s3(WriteMode::Rebuild, Race::SamePartition);
    }
}
