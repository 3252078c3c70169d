//! The phases a write enters, as its phase events name them (the `phase` field of each event on
//! the `lakewriter::phase` tracing target): the contract the crash and pause tests stop a run at.

use serde::{Deserialize, Serialize};

/// A phase of a partition's write or of a table's maintenance, in the order a run enters them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The partition's plan is made; nothing is written yet.
    Planned,
    /// The data files are on their way; the log entry is not.
    Writing,
    /// The data files are written; the log entry is being put (a commit lakewriter makes itself;
    /// delta-rs's own opens its `commit_with_retries` span here instead).
    Committing,
    /// The log entry landed; the checkpoint and the report not yet.
    Committed,
    /// The checkpoint of the version just committed is on its way.
    Checkpointing,
    /// A compaction's new files are written; its log entry is on its way.
    Compacting,
    /// A compaction's log entry landed.
    Compacted,
}

impl Phase {
    /// The phase's name, as logged.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Writing => "writing",
            Self::Committing => "committing",
            Self::Committed => "committed",
            Self::Checkpointing => "checkpointing",
            Self::Compacting => "compacting",
            Self::Compacted => "compacted",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Phase;

    #[test]
    fn a_phase_is_logged_and_read_back_by_its_name() {
        for phase in [
            Phase::Planned,
            Phase::Writing,
            Phase::Committing,
            Phase::Committed,
            Phase::Checkpointing,
            Phase::Compacting,
            Phase::Compacted,
        ] {
            let json = serde_json::to_string(&phase).expect("JSON");
            assert_eq!(json, format!("\"{phase}\""));
            assert_eq!(serde_json::from_str::<Phase>(&json).expect("a phase"), phase);
        }
    }
}
