//! `maintain` output: a line per table and step, then the counts.

use std::io;
use std::time::Duration;

use lakewriter::{MaintainSummary, Step, StepReport, StepStatus, format_size};

use super::{json_line, line, plural, tagged_line};
use crate::output::Printer;

impl Printer {
    /// `lakewriter maintain`: each table's steps and the counts; with `--json`, a line per step
    /// and a summary line.
    pub fn maintain(&self, reports: &[StepReport], summary: &MaintainSummary) -> io::Result<()> {
        if self.json {
            for report in reports {
                json_line(report)?;
            }
            return tagged_line("summary", summary);
        }
        let mut table = None;
        for report in reports {
            if table != Some(report.table.as_str()) {
                table = Some(report.table.as_str());
                line(&format!("maintain {}", report.table))?;
            }
            line(&self.step_line(report))?;
        }
        let dry = if summary.dry_run { " (dry run: nothing written)" } else { "" };
        line(&format!(
            "maintain: {}, {}: {} ok, {} skipped, {} failed; {}, {} compacted, {} deleted, {} removed, {:.1} s{dry}",
            plural(summary.tables, "table"),
            plural(summary.steps, "step"),
            summary.ok,
            summary.skipped,
            summary.failed,
            plural(summary.commits, "commit"),
            plural(usize::try_from(summary.files_compacted).unwrap_or(usize::MAX), "file"),
            plural(usize::try_from(summary.files_deleted).unwrap_or(usize::MAX), "file"),
            plural(usize::try_from(summary.log_files_removed).unwrap_or(usize::MAX), "log file"),
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
    let count = |n: Option<u64>, what: &str| plural(usize::try_from(n.unwrap_or(0)).unwrap_or(usize::MAX), what);
    match r.step {
        Step::Compact if r.committed => format!(
            "rewrote {} of {} into {} (target {}){}",
            count(r.files_removed, "small file"),
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
            count(r.files_deleted, "file"),
            r.retention.as_deref().unwrap_or("-")
        ),
        Step::Cleanup => format!(
            "{} {} (log retention {})",
            if r.status == StepStatus::DryRun { "would remove" } else { "removed" },
            count(r.log_files_removed, "log file"),
            r.retention.as_deref().unwrap_or("-")
        ),
    }
}
