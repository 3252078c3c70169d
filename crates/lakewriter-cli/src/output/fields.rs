//! The figures both printers show: a status's counts, the maintenance due.

use lakewriter::{Freshness, Layout, LogLength, PartitionStatus};
use serde::Serialize;

/// How many partitions of a status are fresh, stale, missing and without input.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct StateCounts {
    pub fresh: usize,
    pub stale: usize,
    pub missing: usize,
    pub no_input: usize,
}

impl StateCounts {
    pub fn of(partitions: &[PartitionStatus]) -> Self {
        let count = |state| partitions.iter().filter(|p| p.state == state).count();
        Self {
            fresh: count(Freshness::Fresh),
            stale: count(Freshness::Stale),
            missing: count(Freshness::Missing),
            no_input: count(Freshness::NoInput),
        }
    }

    /// The partitions of `state`.
    pub fn of_state(&self, state: Freshness) -> usize {
        match state {
            Freshness::Fresh => self.fresh,
            Freshness::Stale => self.stale,
            Freshness::Missing => self.missing,
            Freshness::NoInput => self.no_input,
        }
    }

    /// These counts and `other`'s, added.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            fresh: self.fresh + other.fresh,
            stale: self.stale + other.stale,
            missing: self.missing + other.missing,
            no_input: self.no_input + other.no_input,
        }
    }
}

/// What `status --maintenance` says of a table: its files, and which steps are due.
#[derive(Serialize)]
pub struct Maintenance<'a> {
    #[serde(flatten)]
    pub layout: &'a Layout,
    /// `compact` where a partition holds several small files, `checkpoint` where
    /// [`lakewriter::CHECKPOINT_AFTER`] commits or more follow the newest checkpoint.
    pub needed: Vec<&'static str>,
}

impl<'a> Maintenance<'a> {
    pub fn of(layout: &'a Layout, log: Option<LogLength>) -> Self {
        let mut needed = Vec::new();
        if !layout.to_compact.is_empty() {
            needed.push("compact");
        }
        if log.is_some_and(|log| log.needs_checkpoint()) {
            needed.push("checkpoint");
        }
        Self { layout, needed }
    }
}
