//! The text printer: lines for people on stdout, coloured on a terminal, and a progress bar on
//! stderr while a job's partitions run.

mod audit;
mod graph;
mod job_test;
mod maintain;
mod overview;
mod partitions;
mod sql;
mod status;
mod verify;

use std::fmt::Write as _;
use std::io::{self, IsTerminal as _, Write};
use std::time::Duration;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lakewriter::{
    AuditSummary, Digest, Finding, JobGraph, JobStatus, Layout, MaintainSummary, Only, PartitionAudit, PartitionKey,
    PartitionReport, PlannedPartition, Severity, StatementReport, StepReport, Summary, TableRef, VerifyReport,
};

use super::{LintCounts, Output, PipelineSummary, Rerun, SqlSummary, stderr};

/// How the text looks, decided once from the flags and the terminals.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// ANSI colours.
    pub color: bool,
    /// stdout is a terminal: `status` draws its calendar.
    pub terminal: bool,
    /// A progress bar on stderr while partitions run.
    pub progress: bool,
}

/// Text on `out`.
pub struct TextPrinter<W: Write> {
    out: W,
    style: Style,
    bar: Option<ProgressBar>,
}

impl<W: Write> TextPrinter<W> {
    pub fn new(out: W, style: Style) -> Self {
        Self { out, style, bar: None }
    }

    fn paint(&self, text: &str, code: &str) -> String {
        if self.style.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }

    /// One line of text (or several: `text` may hold line breaks).
    fn line(&mut self, text: &str) -> io::Result<()> {
        writeln!(self.out, "{text}")
    }
}

impl<W: Write> Output for TextPrinter<W> {
    fn say(&mut self, text: &str) -> io::Result<()> {
        self.line(text)
    }

    fn verbatim(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.out.flush()
    }

    fn start_progress(&mut self, total: usize, label: &str) {
        if !self.style.progress {
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

    fn partition_done(&mut self, report: &PartitionReport) -> io::Result<()> {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(format!("{} {}", report.partition, if report.is_ok() { "ok" } else { "failed" }));
        }
        Ok(())
    }

    fn finish_progress(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn job_done(&mut self, reports: &[PartitionReport], summary: &Summary) -> io::Result<()> {
        self.print_job(reports, summary)
    }

    fn not_run(&mut self, job: &str, reason: &str) -> io::Result<()> {
        let text = format!("{job}: {}: {reason}", self.paint("not run", "33"));
        self.line(&text)
    }

    fn columns_dropped(&mut self, dropped: &lakewriter::ColumnsDropped) -> io::Result<()> {
        let columns: Vec<String> = dropped.dropped.iter().map(ToString::to_string).collect();
        let plural = if columns.len() == 1 { "column" } else { "columns" };
        let text = format!(
            "{}: dropped {plural} {} from {} at version {}: no row holds a value of {}",
            dropped.job,
            columns.join(", "),
            dropped.table,
            dropped.table_version,
            if columns.len() == 1 { "it" } else { "them" }
        );
        self.line(&text)
    }

    /// On stderr, as the command's errors are.
    fn job_failed(&mut self, job: &str, error: &lakewriter::Error) -> io::Result<()> {
        stderr::error(&format!("{job}: {}", stderr::one_line(error)));
        Ok(())
    }

    /// Nothing: each job's summary said it.
    fn pipeline_done(&mut self, _summary: &PipelineSummary) -> io::Result<()> {
        Ok(())
    }

    fn merged(&mut self, reports: &[PartitionReport]) -> io::Result<()> {
        self.print_merged(reports)
    }

    fn rerun(&mut self, rerun: &Rerun<'_>) -> io::Result<()> {
        self.print_rerun(rerun)
    }

    fn verdict(&mut self, verdict: &VerifyReport) -> io::Result<()> {
        self.print_verdict(verdict)
    }

    fn digest(&mut self, _table: &TableRef, _partition: Option<&PartitionKey>, digest: &Digest) -> io::Result<()> {
        self.line(&format!("{}  {} rows  version {}", digest.digest, digest.rows, digest.version))
    }

    /// `error: job J: rule: message`.
    fn finding(&mut self, finding: &Finding) -> io::Result<()> {
        let severity = match finding.severity {
            Severity::Error => self.paint("error", "31;1"),
            Severity::Warning => self.paint("warning", "33"),
        };
        self.line(&format!("{severity}: {finding}"))
    }

    fn lint_counts(&mut self, counts: &LintCounts) -> io::Result<()> {
        let mut unchecked = String::new();
        if counts.unchecked > 0 {
            let _ = write!(unchecked, ", {} not checked (see above)", counts.unchecked);
        }
        if counts.waiting > 0 {
            let _ = write!(unchecked, ", {} waiting for the tables it reads (see above)", counts.waiting);
        }
        self.line(&format!(
            "lint: {} checked, {}, {}{unchecked}",
            plural(counts.jobs, "job"),
            plural(counts.errors, "error"),
            plural(counts.warnings, "warning")
        ))
    }

    fn status(&mut self, status: &JobStatus, layout: Option<&Layout>) -> io::Result<()> {
        self.print_status(status, layout)
    }

    fn demo_laid(&mut self, laid: &super::DemoLaid, _closing: bool) -> io::Result<()> {
        self.line(&format!(
            "  project  {} ({})\n  root     {}\n  raw      {} days of orders and customer changes under raw/ ({} files written, {} kept as they were)",
            laid.project,
            if laid.project_written { "written" } else { "kept as it was" },
            laid.root,
            laid.days,
            laid.raw_files_written,
            laid.raw_files_kept,
        ))
    }

    fn init_written(&mut self, init: &super::InitWritten) -> io::Result<()> {
        let (project, from, to) = (&init.project, init.from, init.to);
        let dir = std::path::Path::new(project).parent().map(|d| d.display().to_string()).filter(|d| !d.is_empty());
        let cd = dir.map(|dir| format!("cd {dir}\n      ")).unwrap_or_default();
        self.line(&format!(
            "project  {project}\nraw      {} (sample orders, dt={from} to dt={to})\n\nnext: {cd}lakewriter backfill daily_orders --from {from} --to {to}\n      lakewriter status\n      lakewriter test",
            init.raw
        ))
    }

    fn late_delivered(&mut self, late: &super::LateDelivered) -> io::Result<()> {
        self.line(&if late.delivered {
            format!("late orders delivered: {} (below {})", late.file, late.root)
        } else {
            format!("{} was delivered before; kept as it is", late.file)
        })
    }

    fn shows_errors(&self) -> bool {
        self.style.terminal && io::stderr().is_terminal()
    }

    fn overview(&mut self, jobs: &[super::JobOverviewLine], totals: &super::OverviewTotals) -> io::Result<()> {
        self.print_overview(jobs, totals)
    }

    fn plan(&mut self, status: &JobStatus, planned: &[PlannedPartition], only: Only) -> io::Result<()> {
        self.print_plan(status, planned, only)
    }

    fn partition_audit(&mut self, audit: &PartitionAudit) -> io::Result<()> {
        self.print_partition_audit(audit)
    }

    fn audit_summary(&mut self, summary: &AuditSummary) -> io::Result<()> {
        self.print_audit_summary(summary)
    }

    fn graph(&mut self, graph: &JobGraph) -> io::Result<()> {
        self.print_graph(graph)
    }

    fn maintain(&mut self, reports: &[StepReport], summary: &MaintainSummary) -> io::Result<()> {
        self.print_maintain(reports, summary)
    }

    fn report_written(&mut self, written: &super::ReportWritten) -> io::Result<()> {
        let partitions = written.counts.fresh + written.counts.stale + written.counts.missing + written.counts.no_input;
        let mut text = format!(
            "report: {}: {}, {}: {} fresh, {} stale, {} missing",
            written.path,
            plural(written.jobs, "job"),
            plural(partitions, "partition"),
            written.counts.fresh,
            written.counts.stale,
            written.counts.missing
        );
        if written.counts.no_input > 0 {
            let _ = write!(text, ", {} no input", written.counts.no_input);
        }
        if written.not_written > 0 {
            let _ = write!(text, "; {} not written yet", plural(written.not_written, "job"));
        }
        if written.failed > 0 {
            let _ = write!(text, "; {} could not be read", plural(written.failed, "job"));
        }
        self.line(&text)
    }

    fn rows(&mut self, _number: usize, schema: &SchemaRef, batches: &[RecordBatch]) -> io::Result<()> {
        self.print_rows(schema, batches)
    }

    fn statement(&mut self, number: usize, of: usize, _sql: &str, report: &StatementReport) -> io::Result<()> {
        self.print_statement(number, of, report)
    }

    /// Nothing: the error is the command's, printed on stderr.
    fn statement_failed(&mut self, _: usize, _: usize, _: &str, _: &lakewriter::Error) -> io::Result<()> {
        Ok(())
    }

    /// Nothing: each statement's line said it.
    fn sql_done(&mut self, _summary: &SqlSummary) -> io::Result<()> {
        Ok(())
    }

    fn test_done(&mut self, report: &lakewriter::TestReport) -> io::Result<()> {
        self.print_test(report)
    }

    fn tests_done(&mut self, summary: &crate::output::TestSummary) -> io::Result<()> {
        self.print_test_summary(summary)
    }
}

/// `1 partition`, `2 partitions`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// `n` as a `usize` for [`plural`].
fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(print: impl FnOnce(&mut TextPrinter<Vec<u8>>) -> io::Result<()>) -> String {
        let mut printer = TextPrinter::new(Vec::new(), Style::default());
        print(&mut printer).expect("written");
        String::from_utf8(printer.out).expect("UTF-8")
    }

    #[test]
    fn lint_counts_name_the_jobs_not_checked_and_waiting() {
        let counts = LintCounts { jobs: 3, errors: 1, warnings: 2, unchecked: 1, waiting: 1 };
        assert_eq!(
            text(|p| p.lint_counts(&counts)),
            "lint: 3 jobs checked, 1 error, 2 warnings, 1 not checked (see above), 1 waiting for the tables it reads (see above)\n"
        );
        let clean = LintCounts { jobs: 1, ..LintCounts::default() };
        assert_eq!(text(|p| p.lint_counts(&clean)), "lint: 1 job checked, 0 errors, 0 warnings\n");
    }

    #[test]
    fn say_and_verbatim_write_their_text_as_it_is() {
        assert_eq!(text(|p| p.say("next: lakewriter lint")), "next: lakewriter lint\n");
        assert_eq!(text(|p| p.verbatim(b"#compdef lakewriter\n")), "#compdef lakewriter\n");
    }
}
