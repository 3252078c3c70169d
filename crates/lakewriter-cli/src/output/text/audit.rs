//! `lakewriter audit` as text: a line per partition, the rows of one that differs, the counts.

use std::fmt::Write as _;
use std::io::{self, Write};

use lakewriter::{AuditSummary, PartitionAudit, Verdict};

use super::{TextPrinter, plural};

impl<W: Write> TextPrinter<W> {
    /// `  JOB  PARTITION  VERDICT`, with the rows added and removed of a partition that differs
    /// and a few of each (`+` added, `-` removed).
    pub(super) fn print_partition_audit(&mut self, audit: &PartitionAudit) -> io::Result<()> {
        let verdict = match audit.verdict {
            Verdict::Equal => self.paint("equal", "32"),
            Verdict::Differs => self.paint("differs", "31;1"),
            Verdict::MissingHere => self.paint("missing here", "33"),
            Verdict::MissingThere => self.paint("missing there", "33"),
        };
        let mut text = format!("  {}  {}  {verdict}", audit.job, audit.partition);
        if let (Some(added), Some(removed)) = (audit.rows_added, audit.rows_removed) {
            let rows = if added == 1 { "row" } else { "rows" };
            let _ = write!(text, ": {added} {rows} added, {removed} removed");
        }
        if audit.schema_changed {
            text.push_str(": the columns differ");
        }
        if audit.code_changed {
            text.push_str(" (written with other code than the job's current code)");
        }
        self.line(&text)?;
        for row in &audit.added_examples {
            self.line(&format!("      + {row}"))?;
        }
        for row in &audit.removed_examples {
            self.line(&format!("      - {row}"))?;
        }
        Ok(())
    }

    /// `audit: …` with the counts.
    pub(super) fn print_audit_summary(&mut self, summary: &AuditSummary) -> io::Result<()> {
        self.line(&format!(
            "audit: {}, {}: {} equal, {} differ, {} missing here, {} missing there",
            plural(summary.jobs, "job"),
            plural(summary.partitions, "partition"),
            summary.equal,
            summary.differs,
            summary.missing_here,
            summary.missing_there
        ))
    }
}
