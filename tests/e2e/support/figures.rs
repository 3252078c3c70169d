//! Counted trials, for docs/reliability.md. Each fault scenario counts its trials, the phases (or
//! faults) they hit, their outcomes and what it found in the table: rows lost, duplicate rows,
//! partitions holding a mix of old and new content. With `LAKEWRITER_FIGURES=FILE` set, it
//! appends one JSON line to FILE when it ends; `scripts/soak` runs the scenarios and turns those
//! lines into the table.
//!
//! `LAKEWRITER_SOAK=N` runs N trials of each scenario instead of its CI-sized sample, and
//! `LAKEWRITER_SEED` seeds the choices its trials make (the same seed makes the same trials).

use std::collections::BTreeMap;
use std::io::Write as _;

use crate::support::Digest;

/// Trials a scenario runs: `ci` in the test command, `LAKEWRITER_SOAK` when soaking.
pub fn trials(ci: usize) -> usize {
    std::env::var("LAKEWRITER_SOAK").ok().and_then(|n| n.parse().ok()).filter(|n| *n > 0).unwrap_or(ci)
}

/// The seed of a scenario's choices: `LAKEWRITER_SEED` (default 2026) mixed with its name.
pub fn rng(scenario: &str) -> fastrand::Rng {
    let seed: u64 = std::env::var("LAKEWRITER_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(2026);
    let name =
        scenario.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    fastrand::Rng::with_seed(seed ^ name)
}

/// One scenario's counts.
#[derive(Debug, serde::Serialize)]
pub struct Figures {
    scenario: String,
    /// The test that runs it (`scripts/soak TEST` reproduces it).
    test: String,
    trials: usize,
    /// Trials by the phase or fault they hit.
    hits: BTreeMap<String, usize>,
    /// Trials by outcome (e.g. old content, new content, failed with a clear error).
    outcomes: BTreeMap<String, usize>,
    rows_lost: u64,
    duplicate_rows: u64,
    partial_partitions: u64,
}

impl Figures {
    /// `test` is the test's path below the e2e suite, e.g. `faults::crash::a_run_killed_…`.
    pub fn new(scenario: &str, test: &str) -> Self {
        Self {
            scenario: scenario.to_owned(),
            test: test.to_owned(),
            trials: 0,
            hits: BTreeMap::new(),
            outcomes: BTreeMap::new(),
            rows_lost: 0,
            duplicate_rows: 0,
            partial_partitions: 0,
        }
    }

    /// One more trial, which hit `hit` (a phase or a fault) and ended in `outcome`.
    pub fn trial(&mut self, hit: &str, outcome: &str) {
        self.trials += 1;
        *self.hits.entry(hit.to_owned()).or_default() += 1;
        *self.outcomes.entry(outcome.to_owned()).or_default() += 1;
    }

    /// Counts a partition (or table) that holds neither of the contents it may hold.
    pub fn partial(&mut self) {
        self.partial_partitions += 1;
    }

    /// Compares `actual` with `expected`, the content of an undisturbed run: fewer rows are rows
    /// lost, more are duplicate rows, as many with another digest a partial partition. Whether
    /// they are the same.
    pub fn compare(&mut self, expected: &Digest, actual: &Digest) -> bool {
        if actual.rows < expected.rows {
            self.rows_lost += expected.rows - actual.rows;
        } else if actual.rows > expected.rows {
            self.duplicate_rows += actual.rows - expected.rows;
        } else if actual.digest != expected.digest {
            self.partial_partitions += 1;
        }
        actual.rows == expected.rows && actual.digest == expected.digest
    }

    /// Asserts that nothing was lost, duplicated or partial, and records the figures where
    /// `LAKEWRITER_FIGURES` names a file.
    pub fn finish(self) {
        assert_eq!(
            (self.rows_lost, self.duplicate_rows, self.partial_partitions),
            (0, 0, 0),
            "{}: rows lost, duplicate rows, partial partitions",
            self.scenario
        );
        let Ok(path) = std::env::var("LAKEWRITER_FIGURES") else { return };
        let line = serde_json::to_string(&self).expect("figures as JSON") + "\n";
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).expect("the figures file");
        file.write_all(line.as_bytes()).expect("write the figures");
    }
}
