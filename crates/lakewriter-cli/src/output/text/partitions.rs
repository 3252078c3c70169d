//! A job's run as text: a line per partition (a dry run's says what a run would change), the
//! warnings and example rows under it, and the closing line.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Duration;

use lakewriter::{Changes, CheckSeverity, KeyedCounts, Note, PartitionReport, RunStatus, Summary, WriteMode};

use super::{TextPrinter, plural};

impl<W: Write> TextPrinter<W> {
    /// A line per partition, in date order, each with its details, then the summary.
    pub(super) fn print_job(&mut self, reports: &[PartitionReport], summary: &Summary) -> io::Result<()> {
        for r in reports {
            let text = self.partition_line(r);
            self.line(&text)?;
            for detail in self.details(r) {
                self.line(&detail)?;
            }
        }
        let text = match summary.would_change {
            Some(changing) => self.dry_run_summary(summary, changing),
            None => self.summary(summary),
        };
        self.line(&text)
    }

    pub(super) fn partition_line(&self, r: &PartitionReport) -> String {
        let version = r.table_version.map_or_else(|| "-".to_owned(), |v| v.to_string());
        match r.status {
            RunStatus::Failed => {
                format!(
                    "  {}  {}  {}",
                    r.partition,
                    self.paint("FAILED ", "31;1"),
                    r.error.as_ref().map_or_else(|| "unknown error".to_owned(), ToString::to_string)
                )
            }
            RunStatus::Skipped => {
                format!(
                    "  {}  {}  version {version:<4} {}",
                    r.partition,
                    self.paint("skipped", "33"),
                    r.note.as_ref().map(ToString::to_string).unwrap_or_default()
                )
            }
            RunStatus::Ok if r.dry_run.is_some() => self.dry_run_line(r),
            RunStatus::Ok => self.ok_line(r, &version),
        }
    }

    fn ok_line(&self, r: &PartitionReport, version: &str) -> String {
        let rows = r.rows_written.unwrap_or(0);
        let mut text = format!(
            "  {}  {}  {rows:>6} rows  version {version:<4} {:>6} ms",
            r.partition,
            self.paint("ok     ", "32"),
            r.duration_ms
        );
        match &r.changes {
            // A MERGE INTO's counts are delta-rs's: no unchanged or dropped rows.
            Some(Changes::Merge(c)) => {
                let _ = write!(text, "  ({} inserted, {} updated, {} deleted)", c.inserted, c.updated, c.deleted);
            }
            Some(Changes::Keyed(c)) => {
                let _ = write!(
                    text,
                    "  ({} inserted, {} updated, {} deleted, {} unchanged, {} duplicates dropped)",
                    c.inserted, c.updated, c.deleted, c.unchanged, c.duplicates_dropped
                );
            }
            None if rows == 0 && r.mode == Some(WriteMode::OverwritePartition) => {
                text.push_str("  (no rows: the partition is now empty)");
            }
            None => {}
        }
        let note = match (&r.note, r.committed) {
            (Some(note), _) => Some(note.clone()),
            (None, false) => Some(Note::NothingToChange { fresh: false }),
            (None, true) => None,
        };
        if let Some(note) = note {
            let _ = write!(text, "  {note}");
        }
        text
    }

    /// A dry run's partition line: what a run would change.
    fn dry_run_line(&self, r: &PartitionReport) -> String {
        let would = match (&r.dry_run, &r.changes) {
            (Some(d), Some(Changes::Keyed(c))) if !d.changes => {
                format!("would change nothing ({} unchanged)", c.unchanged)
            }
            (_, Some(Changes::Keyed(c))) => format!(
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
            let _ = write!(text, "  {note}");
        }
        text
    }

    /// The lines under a partition's line: the warning checks that failed (the blocking ones
    /// are the partition's error), and a dry run's example rows.
    fn details(&self, r: &PartitionReport) -> Vec<String> {
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

    fn failed(&self, summary: &Summary) -> String {
        if summary.failed > 0 {
            self.paint(&format!("{} failed", summary.failed), "31;1")
        } else {
            "0 failed".to_owned()
        }
    }

    fn summary(&self, summary: &Summary) -> String {
        let skipped = if summary.skipped > 0 { format!(", {} skipped", summary.skipped) } else { String::new() };
        let version = summary.table_version.map_or_else(|| "-".to_owned(), |v| v.to_string());
        format!(
            "{}: {}, {} ok{skipped}, {}, {} rows written, table version {version}, {:.1} s",
            summary.job,
            plural(summary.partitions, "partition"),
            summary.ok,
            self.failed(summary),
            summary.rows_written,
            Duration::from_millis(summary.duration_ms).as_secs_f64()
        )
    }

    /// A dry run's closing line.
    fn dry_run_summary(&self, summary: &Summary, changing: usize) -> String {
        format!(
            "{}: dry run of {}: {changing} would change, {}; nothing committed, {:.1} s",
            summary.job,
            plural(summary.partitions, "partition"),
            self.failed(summary),
            Duration::from_millis(summary.duration_ms).as_secs_f64()
        )
    }

    /// The totals of a keyed backfill's changes (nothing for other modes).
    pub(super) fn print_merged(&mut self, reports: &[PartitionReport]) -> io::Result<()> {
        let changes: Vec<&KeyedCounts> = reports
            .iter()
            .filter_map(|r| match &r.changes {
                Some(Changes::Keyed(c)) => Some(c),
                _ => None,
            })
            .collect();
        if changes.is_empty() {
            return Ok(());
        }
        let total = |f: fn(&KeyedCounts) -> u64| changes.iter().map(|c| f(c)).sum::<u64>();
        self.line(&format!(
            "  merged: {} inserted, {} updated, {} deleted (tombstones), {} unchanged, {} duplicate source rows dropped",
            total(|c| c.inserted),
            total(|c| c.updated),
            total(|c| c.deleted),
            total(|c| c.unchanged),
            total(|c| c.duplicates_dropped)
        ))
    }
}
