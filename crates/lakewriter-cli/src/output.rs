//! Rendering: data and JSON Lines on stdout; logs, progress and errors on stderr.

use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lakewriter::{PartitionReport, Summary};
use serde::Serialize;

use crate::cli::{ColorChoice, Global};

pub struct Printer {
    json: bool,
    color: bool,
    progress: bool,
    bar: Option<ProgressBar>,
}

impl Printer {
    pub fn new(global: &Global) -> Self {
        let color = match global.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
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
            let text = if r.is_ok() {
                let rows = r.rows_written.unwrap_or(0);
                let note = if rows == 0 { "  (no rows: the partition is now empty)" } else { "" };
                format!(
                    "  {}  {}  {rows:>6} rows  version {:<4} {:>6} ms{note}",
                    r.partition,
                    self.paint("ok    ", "32"),
                    r.table_version.map_or_else(|| "-".to_owned(), |v| v.to_string()),
                    r.duration_ms
                )
            } else {
                format!(
                    "  {}  {}  {}",
                    r.partition,
                    self.paint("FAILED", "31;1"),
                    r.error.as_deref().unwrap_or("unknown error")
                )
            };
            line(&text)?;
        }
        Ok(())
    }

    pub fn summary(&self, summary: &Summary) -> io::Result<()> {
        if self.json {
            #[derive(Serialize)]
            struct Tagged<'a> {
                summary: &'a Summary,
            }
            return json_line(&Tagged { summary });
        }
        let failed = if summary.failed > 0 {
            self.paint(&format!("{} failed", summary.failed), "31;1")
        } else {
            "0 failed".to_owned()
        };
        let version = summary.table_version.map_or_else(|| "-".to_owned(), |v| v.to_string());
        line(&format!(
            "{}: {} partition{}, {} ok, {failed}, {} rows written, table version {version}, {:.1} s",
            summary.job,
            summary.partitions,
            if summary.partitions == 1 { "" } else { "s" },
            summary.ok,
            summary.rows_written,
            Duration::from_millis(summary.duration_ms).as_secs_f64()
        ))
    }
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
