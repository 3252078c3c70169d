//! The demo's own lines: what the merges did, and whether a rerun left the table unchanged.

use std::io;

use lakewriter::{Digest, KeyedCounts, PartitionReport};
use serde::Serialize;

use super::{Printer, json_line, line};

/// A demo rerun: one day run again, with the table's digests before and after.
pub struct Rerun<'a> {
    pub job: &'a str,
    pub report: &'a PartitionReport,
    pub before: &'a Digest,
    pub after: &'a Digest,
}

impl Rerun<'_> {
    /// The run succeeded and left the very same rows.
    pub fn unchanged(&self) -> bool {
        self.report.is_ok() && self.before.digest == self.after.digest && self.before.rows == self.after.rows
    }
}

impl Printer {
    /// Text mode: the totals of a keyed backfill's changes (nothing for other modes).
    pub fn merged(&self, reports: &[PartitionReport]) -> io::Result<()> {
        let changes: Vec<&KeyedCounts> = reports.iter().filter_map(|r| r.changes.as_ref()).collect();
        if changes.is_empty() {
            return Ok(());
        }
        let total = |f: fn(&KeyedCounts) -> u64| changes.iter().map(|c| f(c)).sum::<u64>();
        self.say(&format!(
            "  merged: {} inserted, {} updated, {} deleted (tombstones), {} unchanged, {} duplicate source rows dropped",
            total(|c| c.inserted),
            total(|c| c.updated),
            total(|c| c.deleted),
            total(|c| c.unchanged),
            total(|c| c.duplicates_dropped)
        ))
    }

    /// The rerun's verdict: its JSON line, or the outcome and both digests.
    pub fn rerun(&self, rerun: &Rerun<'_>) -> io::Result<()> {
        /// The `--json` line of the demo's rerun check.
        #[derive(Serialize)]
        struct RerunLine<'a> {
            rerun: String,
            digest_before: &'a str,
            digest_after: &'a str,
            unchanged: bool,
        }
        let (report, before, after) = (rerun.report, rerun.before, rerun.after);
        if self.json {
            return json_line(&RerunLine {
                rerun: report.partition.to_string(),
                digest_before: &before.digest,
                digest_after: &after.digest,
                unchanged: rerun.unchanged(),
            });
        }
        let outcome = match (report.committed, report.table_version) {
            (true, Some(v)) => format!("committed table version {v} ({} rows)", report.rows_written.unwrap_or(0)),
            _ => "nothing to change: no new table version".to_owned(),
        };
        let verdict = if rerun.unchanged() {
            "unchanged: running the day again left the very same rows"
        } else {
            "CHANGED: the rerun did not reproduce the table"
        };
        line(&format!(
            "rerun    {} {} -> {outcome}\n  content digest before  {}  ({} rows, version {})\n  content digest after   {}  ({} rows, version {})\n  {verdict}",
            rerun.job,
            report.partition,
            before.digest,
            before.rows,
            before.version,
            after.digest,
            after.rows,
            after.version,
        ))?;
        match &report.error {
            Some(error) => line(&format!("  error: {error}")),
            None => Ok(()),
        }
    }
}
