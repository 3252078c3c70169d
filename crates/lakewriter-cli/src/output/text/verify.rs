//! Whether a write is idempotent, as text: `verify`'s verdict and the demo's rerun.

use std::io::{self, Write};

use lakewriter::{PartitionReport, VerifyReport};

use super::TextPrinter;
use crate::output::Rerun;

impl<W: Write> TextPrinter<W> {
    /// Each application's partition line, the verdict, the rows that differ and why floats may.
    pub(super) fn print_verdict(&mut self, v: &VerifyReport) -> io::Result<()> {
        let runs: Vec<&PartitionReport> = std::iter::once(&v.first).chain(v.second.as_ref()).collect();
        for (n, r) in runs.iter().enumerate() {
            let text = format!("application {}:{}", n + 1, self.partition_line(r));
            self.line(&text)?;
        }
        let text = self.verdict_line(v);
        self.line(&text)?;
        for (sign, rows) in [("+", &v.added_examples), ("-", &v.removed_examples)] {
            for row in rows {
                self.line(&format!("  {sign} {row}"))?;
            }
        }
        if !v.float_columns.is_empty() {
            self.line(&format!(
                "  the rows differ only in floating-point columns ({}): a float summed in another order on each run (SUM or AVG over DOUBLE) differs in its last bits; cast it to DECIMAL, or ROUND it",
                v.float_columns.join(", ")
            ))?;
        }
        Ok(())
    }

    fn verdict_line(&self, v: &VerifyReport) -> String {
        let short = |d: &Option<String>| d.as_deref().unwrap_or("-").to_owned();
        if v.pass {
            format!(
                "{} {} {}: the second application left the content unchanged (digest {})",
                self.paint("PASS", "32;1"),
                v.job,
                v.partition,
                short(&v.digest_second)
            )
        } else if v.second.as_ref().is_some_and(PartitionReport::is_ok) {
            format!(
                "{} {} {}: the second application changed the table: {} rows added, {} rows removed (digest {} -> {})",
                self.paint("FAIL", "31;1"),
                v.job,
                v.partition,
                v.rows_added,
                v.rows_removed,
                short(&v.digest_first),
                short(&v.digest_second)
            )
        } else {
            format!("{} {} {}: an application failed, see above", self.paint("FAIL", "31;1"), v.job, v.partition)
        }
    }

    /// The demo's rerun: the outcome and both digests, and the run's error where it failed.
    pub(super) fn print_rerun(&mut self, rerun: &Rerun<'_>) -> io::Result<()> {
        let (report, before, after) = (rerun.report, rerun.before, rerun.after);
        let outcome = match (report.committed, report.table_version) {
            (true, Some(v)) => format!("committed table version {v} ({} rows)", report.rows_written.unwrap_or(0)),
            _ => "nothing to change: no new table version".to_owned(),
        };
        let verdict = if rerun.unchanged() {
            "unchanged: running the day again left the very same rows"
        } else {
            "CHANGED: the rerun did not reproduce the table"
        };
        self.line(&format!(
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
            Some(error) => self.line(&format!("  error: {error}")),
            None => Ok(()),
        }
    }
}
