//! `status` and `plan` as text: a calendar of partition states, a line per partition, the counts.

use std::fmt::Write as _;
use std::io::{self, Write};

use chrono::{Datelike, NaiveDate};
use lakewriter::{Action, Freshness, JobStatus, Layout, Only, PartitionStatus, PlannedPartition};

use super::{TextPrinter, count, plural};
use crate::output::fields::{Maintenance, StateCounts};

impl<W: Write> TextPrinter<W> {
    /// The job and its table, its log (and with `--maintenance` its files), a calendar (on a
    /// terminal), then a line per partition and the counts.
    pub(super) fn print_status(&mut self, status: &JobStatus, layout: Option<&Layout>) -> io::Result<()> {
        let version = status.table_version.map_or_else(|| "none yet".to_owned(), |v| v.to_string());
        self.line(&format!("{} -> {} ({}), table version {version}", status.job, status.target, status.write))?;
        for text in maintenance_lines(status, layout) {
            self.line(&text)?;
        }
        if status.partitions.is_empty() {
            return self.line(&format!(
                "{}: no partition written yet; `lakewriter status {} --from D1 --to D2` shows which days of a range are missing",
                status.job, status.job
            ));
        }
        if self.style.terminal {
            let text = calendar(&status.partitions, |state, text| self.paint(text, state_colour(state)));
            self.line(&text)?;
        }
        self.line(&format!(
            "  {:<16} {:<36} {:>8}  {:<20} {:>8}",
            "partition", "state", "version", "written (UTC)", "rows"
        ))?;
        for p in &status.partitions {
            let label = self.paint(&format!("{:<36}", p.label()), state_colour(p.state));
            let lacks = if p.lacks.is_empty() { String::new() } else { format!("  lacks {}", names(&p.lacks)) };
            self.line(&format!(
                "  {:<16} {label} {:>8}  {:<20} {:>8}{lacks}",
                p.partition,
                p.version.map_or_else(|| "-".to_owned(), |v| v.to_string()),
                p.written_at.map_or_else(|| "-".to_owned(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string()),
                p.rows.map_or_else(|| "-".to_owned(), |r| r.to_string()),
            ))?;
        }
        for text in rebuild_lines(status) {
            self.line(&text)?;
        }
        let counts = StateCounts::of(&status.partitions);
        let no_input = if counts.no_input > 0 { format!(", {} no input", counts.no_input) } else { String::new() };
        self.line(&format!(
            "{}: {}: {} fresh, {} stale, {} missing{no_input}",
            status.job,
            plural(status.partitions.len(), "partition"),
            counts.fresh,
            counts.stale,
            counts.missing
        ))
    }

    /// What a backfill would do with each partition, and why; then the count.
    pub(super) fn print_plan(
        &mut self,
        status: &JobStatus,
        planned: &[PlannedPartition],
        only: Only,
    ) -> io::Result<()> {
        for p in planned {
            let action = if p.action == Action::Run { self.paint("run ", "1") } else { "skip".to_owned() };
            self.line(&format!("  {:<16} {action}  {}", p.partition, p.why))?;
        }
        if let Some(adds) = adds_line(status) {
            self.line(&adds)?;
        }
        if let Some(refusal) = status.refusal() {
            self.line(&format!("  {refusal}"))?;
        }
        for text in rebuild_lines(status) {
            self.line(&text)?;
        }
        let runs = planned.iter().filter(|p| p.action == Action::Run).count();
        self.line(&format!(
            "plan {} (--only {}): {runs} of {} partitions would run; nothing was written",
            status.job,
            only.as_str(),
            planned.len()
        ))
    }
}

/// What each run of a `rebuild` job reads and replaces, and a note where its input is past the
/// job's `input_size_warning`.
fn rebuild_lines(status: &JobStatus) -> Vec<String> {
    use lakewriter::format_size;
    let Some(cost) = status.rebuild else { return Vec::new() };
    let replaces = match (cost.rows_replaced, cost.bytes_replaced) {
        (Some(rows), Some(bytes)) => format!("replaces {} ({})", plural(count(rows), "row"), format_size(bytes)),
        (None, Some(bytes)) => format!("replaces every row ({})", format_size(bytes)),
        _ => "creates the table".to_owned(),
    };
    let mut lines = vec![format!(
        "  each run reads {} ({}) and {replaces}",
        plural(cost.files, "input file"),
        format_size(cost.bytes)
    )];
    if let Some(limit) = cost.input_size_warning {
        lines.push(format!(
            "  note: the input ({}) is past input_size_warning ({}): every rebuild reads all of it; a dated write mode reads one day",
            format_size(cost.bytes),
            format_size(limit)
        ));
    }
    lines
}

/// `` `discount`, `note` ``.
fn names(columns: &[lakewriter::SchemaColumn]) -> String {
    columns.iter().map(|c| format!("`{}`", c.column)).collect::<Vec<_>>().join(", ")
}

/// What the job's code now does to its table's columns, where it adds any: `adds column `discount`
/// (decimal(12,2)); 29 written partitions will read it as NULL until rerun`.
fn adds_line(status: &JobStatus) -> Option<String> {
    if status.adds.is_empty() {
        return None;
    }
    let columns: Vec<String> = status.adds.iter().map(ToString::to_string).collect();
    let written = status.partitions.iter().filter(|p| p.state != Freshness::Missing).count();
    let (noun, them) = if status.adds.len() == 1 { ("column", "it") } else { ("columns", "them") };
    Some(format!(
        "  a run adds {noun} {}; {} will read {them} as NULL until rerun",
        columns.join(", "),
        plural(written, "written partition")
    ))
}

/// The `log:` line of `status` (and a line counting the written partitions whose commit details are
/// gone), and with `--maintenance` the `files:` and `maintenance:` lines.
fn maintenance_lines(status: &JobStatus, layout: Option<&Layout>) -> Vec<String> {
    let Some(log) = status.log else { return Vec::new() };
    let commits = plural(count(log.commits_since_checkpoint), "commit");
    let since = match status.checkpoint {
        Some(c) => format!("{commits} since the last checkpoint (version {c})"),
        None => format!("{commits}, no checkpoint yet"),
    };
    let mut lines = vec![format!("  log: {since}; {} kept", plural(log.commit_files, "commit file"))];
    // Written (a day without input too, where it was written before its input went), its commit gone.
    let written = |p: &&lakewriter::PartitionStatus| match p.state {
        Freshness::Missing => false,
        Freshness::NoInput => p.written_at.is_some(),
        Freshness::Fresh | Freshness::Stale => true,
    };
    let unknown = status.partitions.iter().filter(written).filter(|p| p.version.is_none()).count();
    if unknown > 0 {
        lines.push(format!(
            "  {}: version, rows and run id unknown: their commit files are no longer kept (log clean-up)",
            plural(unknown, "written partition")
        ));
    }
    let Some(layout) = layout else { return lines };
    let small: u64 = layout.to_compact.iter().map(|p| p.files).sum();
    lines.push(format!(
        "  files: {} ({}) in {}, {} below the target size of {}; partitions with several small files: {} ({small} files)",
        plural(count(layout.files), "file"),
        lakewriter::format_size(layout.bytes),
        plural(count(layout.partitions), "partition"),
        layout.small_files,
        lakewriter::format_size(layout.target_file_size),
        layout.to_compact.len(),
    ));
    let needed = Maintenance::of(layout, status.log).needed;
    lines.push(if needed.is_empty() {
        "  maintenance: nothing due".to_owned()
    } else {
        format!("  maintenance: {} due: run `lakewriter maintain {}`", needed.join(" and "), status.job)
    });
    lines
}

fn state_colour(state: Freshness) -> &'static str {
    match state {
        Freshness::Fresh => "32",
        Freshness::Stale => "33;1",
        Freshness::Missing => "31;1",
        Freshness::NoInput => "35;1",
    }
}

/// A month-by-month calendar of the date partitions, a cell per day: `ok` fresh, `ST` stale,
/// `--` missing, `NI` no input (readable without colour); `paint` colours a cell by its state.
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
            Freshness::NoInput => "NI",
        };
        out.push_str(&paint(*state, cell));
        out.push(' ');
    }
    if !days.is_empty() {
        let no_input = if days.iter().any(|(_, s)| *s == Freshness::NoInput) { "   NI no input" } else { "" };
        let _ = write!(out, "\n\n  ok fresh   ST stale   -- missing{no_input}\n");
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
            duration_ms: None,
            files_scanned: 0,
            upstream_stale: Vec::new(),
            lacks: Vec::new(),
            no_input: Vec::new(),
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
