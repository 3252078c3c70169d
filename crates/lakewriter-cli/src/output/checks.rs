//! A partition's checks and a dry run's diff, as text lines under its partition line.

use std::fmt::Write as _;
use std::time::Duration;

use lakewriter::{CheckSeverity, PartitionReport, Summary};

use super::{Printer, line, plural};

impl Printer {
    /// A dry run's partition line: what a run would change.
    pub(super) fn dry_run_line(&self, r: &PartitionReport) -> String {
        let would = match (&r.dry_run, &r.changes) {
            (Some(d), Some(c)) if !d.changes => format!("would change nothing ({} unchanged)", c.unchanged),
            (_, Some(c)) => format!(
                "would change: {} inserted, {} updated, {} deleted, {} unchanged",
                c.inserted, c.updated, c.deleted, c.unchanged
            ),
            (Some(d), None) if d.changes => {
                format!("would change: +{} -{} rows", d.rows_added.unwrap_or(0), d.rows_removed.unwrap_or(0))
            }
            _ => "would change nothing".to_owned(),
        };
        let mut text = format!("  {}  {}  {would}", r.partition, self.paint("dry run", "36"));
        if !r.checks.is_empty() {
            let passed = r.checks.iter().filter(|c| c.passed).count();
            let _ = write!(text, "  (checks: {passed} of {} passed)", r.checks.len());
        }
        if let Some(note) = &r.note {
            text.push_str("  ");
            text.push_str(note);
        }
        text
    }

    /// The lines under a partition's line: the warning checks that failed (the blocking ones
    /// are the partition's error), and a dry run's example rows.
    pub(super) fn details(&self, r: &PartitionReport) -> Vec<String> {
        let mut lines = Vec::new();
        for check in r.checks.iter().filter(|c| !c.passed && c.severity == CheckSeverity::Warn) {
            lines.push(format!("      {}: {check}", self.paint("warning", "33")));
        }
        if let Some(dry) = &r.dry_run {
            lines.extend(dry.added_examples.iter().map(|row| format!("      + {row}")));
            lines.extend(dry.removed_examples.iter().map(|row| format!("      - {row}")));
        }
        lines
    }

    /// A dry run's closing line.
    pub(super) fn dry_run_summary(&self, summary: &Summary, changing: usize) -> std::io::Result<()> {
        let failed = if summary.failed > 0 {
            self.paint(&format!("{} failed", summary.failed), "31;1")
        } else {
            "0 failed".to_owned()
        };
        line(&format!(
            "{}: dry run of {}: {changing} would change, {failed}; nothing committed, {:.1} s",
            summary.job,
            plural(summary.partitions, "partition"),
            Duration::from_millis(summary.duration_ms).as_secs_f64()
        ))
    }
}
