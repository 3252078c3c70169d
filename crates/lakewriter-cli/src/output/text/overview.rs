//! `status` without a job as text: a line per job — its range, its partitions' states, its last
//! write —, then the totals.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{TextPrinter, plural};
use crate::output::{JobOverviewLine, OverviewTotals};

impl<W: Write> TextPrinter<W> {
    pub(super) fn print_overview(&mut self, jobs: &[JobOverviewLine], totals: &OverviewTotals) -> io::Result<()> {
        let width = jobs.iter().map(|j| j.job.len()).max().unwrap_or(0).max("job".len());
        self.line(&format!(
            "{:<width$}  {:<19}  {:<22}  {:>5}  {:>5}  {:>7}  {:>8}  {:>6}  last write",
            "job", "write", "range", "fresh", "stale", "missing", "no input", "failed"
        ))?;
        for job in jobs {
            self.print_job_overview(job, width)?;
        }
        let c = &totals.counts;
        let partitions = c.fresh + c.stale + c.missing + c.no_input + totals.failed;
        let mut text = format!(
            "{}: {}: {} fresh, {} stale, {} missing",
            plural(totals.jobs, "job"),
            plural(partitions, "partition"),
            c.fresh,
            c.stale,
            c.missing
        );
        if c.no_input > 0 {
            let _ = write!(text, ", {} no input", c.no_input);
        }
        if totals.failed > 0 {
            let _ = write!(text, ", {} failed", totals.failed);
        }
        if totals.not_written > 0 {
            let _ = write!(text, "; {} not written yet", plural(totals.not_written, "job"));
        }
        if totals.failed_jobs > 0 {
            let _ = write!(text, "; {} whose state cannot be told", plural(totals.failed_jobs, "job"));
        }
        self.line(&text)
    }

    /// One job's line (and its error's, where its state cannot be told).
    fn print_job_overview(&mut self, job: &JobOverviewLine, width: usize) -> io::Result<()> {
        let range = match (job.from, job.to) {
            (Some(from), Some(to)) if from == to => from.to_string(),
            (Some(from), Some(to)) => format!("{from}..{to}"),
            _ if job.written => "all".to_owned(),
            _ => "-".to_owned(),
        };
        let head = format!("{:<width$}  {:<19}  {range:<22}", job.job, job.write.to_string());
        if !job.written && job.error.is_none() {
            self.line(&format!("{head}  no partition written yet"))?;
            return Ok(());
        }
        // A job whose state cannot be told has no counts of states, only its partitions written.
        let state = |n: usize| if job.error.is_some() { "-".to_owned() } else { n.to_string() };
        let c = &job.counts;
        let last = match (job.table_version, job.last_write, job.age_s) {
            (Some(version), Some(at), Some(age)) => {
                format!("version {version}, {} ({} ago)", at.format("%Y-%m-%d %H:%M:%S UTC"), age_text(age))
            }
            (Some(version), ..) => format!("version {version}"),
            _ => "-".to_owned(),
        };
        let states = format!(
            "{:>5}  {:>5}  {:>7}  {:>8}  {:>6}",
            state(c.fresh),
            state(c.stale),
            state(c.missing),
            state(c.no_input),
            job.failed,
        );
        let line = format!("{head}  {states}  {last}");
        let line = if job.error.is_some() { self.paint(&line, "31") } else { line };
        self.line(&line)?;
        if let Some(error) = &job.error {
            self.line(&format!("  error: {error}"))?;
        }
        Ok(())
    }
}

/// `seconds` for people: `42 s`, `5 min`, `3 h`, `12 days`.
fn age_text(seconds: i64) -> String {
    match seconds {
        ..60 => format!("{seconds} s"),
        60..3_600 => format!("{} min", seconds / 60),
        3_600..86_400 => format!("{} h", seconds / 3_600),
        _ => plural(usize::try_from(seconds / 86_400).unwrap_or(usize::MAX), "day"),
    }
}
