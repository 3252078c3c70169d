//! `lakewriter maintain` as text: a line per table and step, then the counts.

use std::io::{self, Write};
use std::time::Duration;

use lakewriter::{MaintainSummary, Step, StepReport, StepStatus, format_size};

use super::{TextPrinter, count, plural};

impl<W: Write> TextPrinter<W> {
    /// Each table's steps, then the counts.
    pub(super) fn print_maintain(&mut self, reports: &[StepReport], summary: &MaintainSummary) -> io::Result<()> {
        let mut table = None;
        for report in reports {
            if table != Some(report.table.as_str()) {
                table = Some(report.table.as_str());
                self.line(&format!("maintain {}", report.table))?;
            }
            let text = self.step_line(report);
            self.line(&text)?;
        }
        let dry = if summary.dry_run { " (dry run: nothing written)" } else { "" };
        self.line(&format!(
            "maintain: {}, {}: {} ok, {} skipped, {} failed; {}, {} compacted, {} deleted, {} removed, {:.1} s{dry}",
            plural(summary.tables, "table"),
            plural(summary.steps, "step"),
            summary.ok,
            summary.skipped,
            summary.failed,
            plural(summary.commits, "commit"),
            plural(count(summary.files_compacted), "file"),
            plural(count(summary.files_deleted), "file"),
            plural(count(summary.log_files_removed), "log file"),
            Duration::from_millis(summary.duration_ms).as_secs_f64()
        ))
    }

    fn step_line(&self, r: &StepReport) -> String {
        let status = match r.status {
            StepStatus::Ok => self.paint("ok     ", "32"),
            StepStatus::DryRun => self.paint("dry run", "36"),
            StepStatus::Skipped => self.paint("skipped", "33"),
            StepStatus::Failed => self.paint("FAILED ", "31;1"),
        };
        let what = if r.status == StepStatus::Failed { r.error.clone().unwrap_or_default() } else { what_it_did(r) };
        let version = r.table_version.map_or_else(|| "-".to_owned(), |v| v.to_string());
        let text: Vec<&str> =
            [what.as_str(), r.note.as_deref().unwrap_or("")].into_iter().filter(|t| !t.is_empty()).collect();
        format!("  {:<10}  {status}  version {version:<5}  {}  {} ms", r.step, text.join("; "), r.duration_ms)
    }
}

/// What a step did, in a few words (its note follows).
fn what_it_did(r: &StepReport) -> String {
    let several = |n: Option<u64>, what: &str| plural(count(n.unwrap_or(0)), what);
    match r.step {
        Step::Compact if r.committed => format!(
            "rewrote {} of {} into {} (target {}){}",
            several(r.files_removed, "small file"),
            plural(r.partitions.as_ref().map_or(0, Vec::len), "partition"),
            r.files_added.unwrap_or(0),
            format_size(r.target_file_size.unwrap_or(0)),
            if r.retries > 0 {
                format!(", planned again {} after conflicts", plural(r.retries as usize, "time"))
            } else {
                String::new()
            }
        ),
        Step::Compact | Step::Checkpoint => String::new(),
        Step::Vacuum => format!(
            "{} {} (retention {})",
            if r.status == StepStatus::DryRun { "would delete" } else { "deleted" },
            several(r.files_deleted, "file"),
            r.retention.as_deref().unwrap_or("-")
        ),
        Step::Cleanup => format!(
            "{} {} (log retention {})",
            if r.status == StepStatus::DryRun { "would remove" } else { "removed" },
            several(r.log_files_removed, "log file"),
            r.retention.as_deref().unwrap_or("-")
        ),
    }
}
