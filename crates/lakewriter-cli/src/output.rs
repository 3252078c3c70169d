//! Rendering: data and JSON Lines on stdout; logs, progress and errors on stderr.

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use chrono::{Datelike, NaiveDate};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lakewriter::{
    Finding, Freshness, JobStatus, Only, PartitionReport, PartitionStatus, PlannedPartition, RunStatus, Severity,
    Summary, VerifyReport,
};
use serde::Serialize;

use crate::cli::Global;

pub struct Printer {
    json: bool,
    color: bool,
    progress: bool,
    bar: Option<ProgressBar>,
}

impl Printer {
    pub fn new(global: &Global) -> Self {
        let color = global.color.enabled(io::stdout().is_terminal());
        let progress = !global.json && !global.quiet && !global.no_progress && io::stderr().is_terminal();
        Self { json: global.json, color, progress, bar: None }
    }

    pub fn json(&self) -> bool {
        self.json
    }

    fn paint(&self, text: &str, code: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }

    /// Shows a progress bar on stderr (on a terminal only) for `total` partitions.
    pub fn start_progress(&mut self, total: usize, label: &str) {
        if !self.progress {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(label.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        self.bar = Some(bar);
    }

    /// A partition finished: advance the bar; in JSON mode, emit its line at once.
    pub fn partition_done(&self, report: &PartitionReport) -> io::Result<()> {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(format!("{} {}", report.partition, if report.is_ok() { "ok" } else { "failed" }));
        }
        if self.json { json_line(report) } else { Ok(()) }
    }

    pub fn finish_progress(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Text mode: one line per partition, in date order.
    pub fn partition_lines(&self, reports: &[PartitionReport]) -> io::Result<()> {
        if self.json {
            return Ok(());
        }
        for r in reports {
            line(&self.partition_line(r))?;
        }
        Ok(())
    }

    fn partition_line(&self, r: &PartitionReport) -> String {
        let version = r.table_version.map_or_else(|| "-".to_owned(), |v| v.to_string());
        match r.status {
            RunStatus::Failed => {
                format!(
                    "  {}  {}  {}",
                    r.partition,
                    self.paint("FAILED ", "31;1"),
                    r.error.as_deref().unwrap_or("unknown error")
                )
            }
            RunStatus::Skipped => {
                format!(
                    "  {}  {}  version {version:<4} {}",
                    r.partition,
                    self.paint("skipped", "33"),
                    r.note.as_deref().unwrap_or("")
                )
            }
            RunStatus::Ok => {
                let rows = r.rows_written.unwrap_or(0);
                let mut text = format!(
                    "  {}  {}  {rows:>6} rows  version {version:<4} {:>6} ms",
                    r.partition,
                    self.paint("ok     ", "32"),
                    r.duration_ms
                );
                if let Some(c) = &r.changes {
                    let _ = write!(
                        text,
                        "  ({} inserted, {} updated, {} deleted, {} unchanged, {} duplicates dropped)",
                        c.inserted, c.updated, c.deleted, c.unchanged, c.duplicates_dropped
                    );
                } else if rows == 0 && r.write == "overwrite_partition" {
                    text.push_str("  (no rows: the partition is now empty)");
                }
                let note = match (&r.note, r.committed) {
                    (Some(note), _) => Some(note.as_str()),
                    (None, false) => Some("nothing to change: no new table version"),
                    (None, true) => None,
                };
                if let Some(note) = note {
                    text.push_str("  ");
                    text.push_str(note);
                }
                text
            }
        }
    }

    /// Text mode: the verdict of `lakewriter verify`.
    pub fn verdict(&self, v: &VerifyReport) -> io::Result<()> {
        let runs: Vec<&PartitionReport> = std::iter::once(&v.first).chain(v.second.as_ref()).collect();
        for (n, r) in runs.iter().enumerate() {
            line(&format!("application {}:{}", n + 1, self.partition_line(r)))?;
        }
        let short = |d: &Option<String>| d.as_deref().unwrap_or("-").to_owned();
        let text = if v.pass {
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
        };
        line(&text)
    }

    /// `lakewriter status`: a calendar (on a terminal), then a line per partition and the counts;
    /// with `--json`, a line per partition and a summary line.
    pub fn status(&self, status: &JobStatus) -> io::Result<()> {
        let counts = StateCounts::of(&status.partitions);
        if self.json {
            #[derive(Serialize)]
            struct StatusSummary<'a> {
                job: &'a str,
                target: &'a str,
                table_version: Option<u64>,
                checkpoint: Option<u64>,
                #[serde(flatten)]
                counts: StateCounts,
            }
            for partition in &status.partitions {
                json_line(&JobLine { job: &status.job, line: partition })?;
            }
            let summary = StatusSummary {
                job: &status.job,
                target: &status.target,
                table_version: status.table_version,
                checkpoint: status.checkpoint,
                counts,
            };
            return tagged_line("summary", &summary);
        }
        let version = status.table_version.map_or_else(|| "none yet".to_owned(), |v| v.to_string());
        line(&format!("{} -> {} ({}), table version {version}", status.job, status.target, status.write))?;
        if io::stdout().is_terminal() {
            line(&calendar(&status.partitions, |state, text| self.paint(text, state_colour(state))))?;
        }
        line(&format!(
            "  {:<16} {:<36} {:>8}  {:<20} {:>8}",
            "partition", "state", "version", "written (UTC)", "rows"
        ))?;
        for p in &status.partitions {
            let label = format!("{:<36}", p.label());
            line(&format!(
                "  {:<16} {} {:>8}  {:<20} {:>8}",
                p.partition,
                self.paint(&label, state_colour(p.state)),
                p.version.map_or_else(|| "-".to_owned(), |v| v.to_string()),
                p.written_at.map_or_else(|| "-".to_owned(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string()),
                p.rows.map_or_else(|| "-".to_owned(), |r| r.to_string()),
            ))?;
        }
        line(&format!(
            "{}: {}: {} fresh, {} stale, {} missing",
            status.job,
            plural(status.partitions.len(), "partition"),
            counts.fresh,
            counts.stale,
            counts.missing
        ))
    }

    /// `lakewriter plan`: what a backfill would do with each partition, and why.
    pub fn plan(&self, status: &JobStatus, planned: &[PlannedPartition], only: Only) -> io::Result<()> {
        let runs = planned.iter().filter(|p| p.action == "run").count();
        if self.json {
            #[derive(Serialize)]
            struct PlanSummary<'a> {
                job: &'a str,
                only: Only,
                run: usize,
                skip: usize,
            }
            for partition in planned {
                json_line(&JobLine { job: &status.job, line: partition })?;
            }
            let plan = PlanSummary { job: &status.job, only, run: runs, skip: planned.len() - runs };
            return tagged_line("plan", &plan);
        }
        for p in planned {
            let action = if p.action == "run" { self.paint("run ", "1") } else { "skip".to_owned() };
            line(&format!("  {:<16} {action}  {}", p.partition, p.why))?;
        }
        line(&format!(
            "plan {} (--only {}): {runs} of {} partitions would run; nothing was written",
            status.job,
            only.as_str(),
            planned.len()
        ))
    }

    /// One finding of `lakewriter lint`: `error: job J: rule: message`, or its JSON line.
    pub fn finding(&self, finding: &Finding) -> io::Result<()> {
        if self.json {
            return json_line(finding);
        }
        let severity = match finding.severity {
            Severity::Error => self.paint("error", "31;1"),
            Severity::Warning => self.paint("warning", "33"),
        };
        line(&format!("{severity}: {finding}"))
    }

    /// The last line of `lakewriter lint`.
    pub fn lint_counts(&self, counts: &LintCounts) -> io::Result<()> {
        if self.json {
            return tagged_line("summary", counts);
        }
        let unchecked = if counts.unchecked > 0 {
            format!(", {} not checked (see above)", counts.unchecked)
        } else {
            String::new()
        };
        line(&format!(
            "lint: {} checked, {}, {}{unchecked}",
            plural(counts.jobs, "job"),
            plural(counts.errors, "error"),
            plural(counts.warnings, "warning")
        ))
    }

    pub fn summary(&self, summary: &Summary) -> io::Result<()> {
        if self.json {
            return tagged_line("summary", summary);
        }
        let failed = if summary.failed > 0 {
            self.paint(&format!("{} failed", summary.failed), "31;1")
        } else {
            "0 failed".to_owned()
        };
        let skipped = if summary.skipped > 0 { format!(", {} skipped", summary.skipped) } else { String::new() };
        let version = summary.table_version.map_or_else(|| "-".to_owned(), |v| v.to_string());
        line(&format!(
            "{}: {}, {} ok{skipped}, {failed}, {} rows written, table version {version}, {:.1} s",
            summary.job,
            plural(summary.partitions, "partition"),
            summary.ok,
            summary.rows_written,
            Duration::from_millis(summary.duration_ms).as_secs_f64()
        ))
    }
}

/// The counts of `lakewriter lint`.
#[derive(Debug, Default, Serialize)]
pub struct LintCounts {
    pub jobs: usize,
    pub errors: usize,
    pub warnings: usize,
    /// Jobs whose SQL could not be planned, so not checked.
    pub unchecked: usize,
}

/// A JSON line of one job's: `{"job": …, <the fields of line>}`.
#[derive(Serialize)]
struct JobLine<'a, T: Serialize> {
    job: &'a str,
    #[serde(flatten)]
    line: &'a T,
}

/// `{"<tag>": value}` on its own line of stdout: how a command's closing line is told apart.
fn tagged_line(tag: &str, value: &impl Serialize) -> io::Result<()> {
    json_line(&std::collections::BTreeMap::from([(tag, value)]))
}

/// `1 partition`, `2 partitions`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// One JSON object on its own line of stdout.
pub fn json_line(value: &impl Serialize) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, value).map_err(io::Error::other)?;
    writeln!(out)
}

/// One line of text on stdout.
pub fn line(text: &str) -> io::Result<()> {
    writeln!(io::stdout().lock(), "{text}")
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
struct StateCounts {
    fresh: usize,
    stale: usize,
    missing: usize,
}

impl StateCounts {
    fn of(partitions: &[PartitionStatus]) -> Self {
        let count = |state| partitions.iter().filter(|p| p.state == state).count();
        Self { fresh: count(Freshness::Fresh), stale: count(Freshness::Stale), missing: count(Freshness::Missing) }
    }
}

fn state_colour(state: Freshness) -> &'static str {
    match state {
        Freshness::Fresh => "32",
        Freshness::Stale => "33;1",
        Freshness::Missing => "31;1",
    }
}

/// A month-by-month calendar of the date partitions, a cell per day: `ok` fresh, `ST` stale,
/// `--` missing (readable without colour); `paint` colours a cell by its state.
fn calendar(partitions: &[PartitionStatus], paint: impl Fn(Freshness, &str) -> String) -> String {
    let days: Vec<(NaiveDate, Freshness)> = partitions.iter().filter_map(|p| p.dt.map(|d| (d, p.state))).collect();
    let mut out = String::new();
    let mut month = None;
    for (i, (day, state)) in days.iter().enumerate() {
        if month != Some((day.year(), day.month())) {
            month = Some((day.year(), day.month()));
            let gap = if out.is_empty() { "" } else { "\n" };
            let _ = write!(out, "{gap}\n  {}\n  Mo Tu We Th Fr Sa Su\n  ", day.format("%B %Y"));
            out.push_str(&"   ".repeat(day.weekday().num_days_from_monday() as usize));
        } else if day.weekday().num_days_from_monday() == 0 || days[i - 1].0.succ_opt() != Some(*day) {
            out.push_str("\n  ");
            out.push_str(&"   ".repeat(day.weekday().num_days_from_monday() as usize));
        }
        let cell = match state {
            Freshness::Fresh => "ok",
            Freshness::Stale => "ST",
            Freshness::Missing => "--",
        };
        out.push_str(&paint(*state, cell));
        out.push(' ');
    }
    if !days.is_empty() {
        out.push_str("\n\n  ok fresh   ST stale   -- missing\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partition(day: u32, state: Freshness) -> PartitionStatus {
        let dt = NaiveDate::from_ymd_opt(2026, 9, day).unwrap();
        PartitionStatus {
            partition: format!("dt={dt}"),
            dt: Some(dt),
            state,
            reasons: Vec::new(),
            version: None,
            written_at: None,
            rows: None,
            run_id: None,
            files_scanned: 0,
        }
    }

    #[test]
    fn calendar_puts_each_day_under_its_weekday() {
        // 2026-09-01 is a Tuesday.
        let days: Vec<_> = (1..=8)
            .map(|d| {
                partition(
                    d,
                    if d == 3 {
                        Freshness::Stale
                    } else if d == 7 {
                        Freshness::Missing
                    } else {
                        Freshness::Fresh
                    },
                )
            })
            .collect();
        let text = calendar(&days, |_, cell| cell.to_owned());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "  September 2026");
        assert_eq!(lines[2], "  Mo Tu We Th Fr Sa Su");
        assert_eq!(lines[3], "     ok ok ST ok ok ok ");
        assert_eq!(lines[4], "  -- ok ");
        assert!(text.contains("ST stale"));
        let mut august = partition(1, Freshness::Fresh);
        august.dt = NaiveDate::from_ymd_opt(2026, 8, 31);
        let two_months = calendar(&[august, partition(1, Freshness::Fresh)], |_, c| c.to_owned());
        assert!(two_months.starts_with("\n  August 2026\n"), "{two_months:?}");
        assert!(two_months.contains("ok \n\n  September 2026\n  Mo Tu We Th Fr Sa Su\n     ok "), "{two_months:?}");
    }
}
