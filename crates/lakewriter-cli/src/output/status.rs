//! `status` and `plan` output: a calendar of partition states, a line per partition, the counts.

use std::fmt::Write as _;
use std::io::{self, IsTerminal};

use chrono::{Datelike, NaiveDate};
use lakewriter::{Freshness, JobStatus, Layout, LogLength, Only, PartitionStatus, PlannedPartition};
use serde::Serialize;

use super::{JobLine, Printer, json_line, line, plural, tagged_line};

impl Printer {
    /// `lakewriter status`: a calendar (on a terminal), then a line per partition and the counts;
    /// with `--json`, a line per partition and a summary line. The table's log length, and with
    /// `--maintenance` its files (`layout`), follow the first line (or are in the summary).
    pub fn status(&self, status: &JobStatus, layout: Option<&Layout>) -> io::Result<()> {
        let counts = StateCounts::of(&status.partitions);
        if self.json {
            #[derive(Serialize)]
            struct StatusSummary<'a> {
                job: &'a str,
                target: &'a str,
                table_version: Option<u64>,
                checkpoint: Option<u64>,
                log: Option<LogLength>,
                #[serde(skip_serializing_if = "Option::is_none")]
                maintenance: Option<Maintenance<'a>>,
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
                log: status.log,
                maintenance: layout.map(|layout| Maintenance::of(layout, status.log)),
                counts,
            };
            return tagged_line("summary", &summary);
        }
        let version = status.table_version.map_or_else(|| "none yet".to_owned(), |v| v.to_string());
        line(&format!("{} -> {} ({}), table version {version}", status.job, status.target, status.write))?;
        maintenance_lines(status, layout)?;
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
}

/// What `status --maintenance` says of a table: its files, and which steps are due.
#[derive(Serialize)]
struct Maintenance<'a> {
    #[serde(flatten)]
    layout: &'a Layout,
    /// `compact` where a partition holds several small files, `checkpoint` where
    /// [`lakewriter::CHECKPOINT_AFTER`] commits or more follow the newest checkpoint.
    needed: Vec<&'static str>,
}

impl<'a> Maintenance<'a> {
    fn of(layout: &'a Layout, log: Option<LogLength>) -> Self {
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

/// The `log:` line of `status`, and with `--maintenance` the `files:` and `maintenance:` lines.
fn maintenance_lines(status: &JobStatus, layout: Option<&Layout>) -> io::Result<()> {
    let Some(log) = status.log else { return Ok(()) };
    let commits = plural(usize::try_from(log.commits_since_checkpoint).unwrap_or(usize::MAX), "commit");
    let since = match status.checkpoint {
        Some(c) => format!("{commits} since the last checkpoint (version {c})"),
        None => format!("{commits}, no checkpoint yet"),
    };
    line(&format!("  log: {since}; {} kept", plural(log.commit_files, "commit file")))?;
    let Some(layout) = layout else { return Ok(()) };
    let small: u64 = layout.to_compact.iter().map(|p| p.files).sum();
    line(&format!(
        "  files: {} ({}) in {}, {} below the target size of {}; partitions with several small files: {} ({small} files)",
        plural(usize::try_from(layout.files).unwrap_or(usize::MAX), "file"),
        lakewriter::format_size(layout.bytes),
        plural(usize::try_from(layout.partitions).unwrap_or(usize::MAX), "partition"),
        layout.small_files,
        lakewriter::format_size(layout.target_file_size),
        layout.to_compact.len(),
    ))?;
    let needed = Maintenance::of(layout, status.log).needed;
    line(&if needed.is_empty() {
        "  maintenance: nothing due".to_owned()
    } else {
        format!("  maintenance: {} due: run `lakewriter maintain {}`", needed.join(" and "), status.job)
    })
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
            partition: lakewriter::PartitionKey::of(None, Some(dt)),
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
