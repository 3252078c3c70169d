//! Rendering: data and JSON Lines on stdout; logs, progress and errors on stderr.

mod audit;
mod checks;
mod demo;
mod graph;
mod maintain;
mod sql;
mod status;

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use chrono::NaiveDate;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lakewriter::{Digest, Finding, PartitionReport, RunStatus, Severity, Summary, TableRef, VerifyReport};
use serde::Serialize;

use crate::cli::Global;

pub use demo::Rerun;

/// The `tracing` target of the CLI's own messages (errors, notes) as log lines.
const LOG_TARGET: &str = "lakewriter::cli";

static JSON_LOGS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// With `--log-format json`, the CLI's `error:` and `note:` lines are log lines too, so that
/// stderr is JSON Lines and nothing else.
impl Printer {
    pub fn set_json_logs(on: bool) {
        let _ = JSON_LOGS.set(on);
    }
}

fn json_logs() -> bool {
    JSON_LOGS.get().copied().unwrap_or(false)
}

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

    /// Text for people, only without `--json`.
    pub fn say(&self, text: &str) -> io::Result<()> {
        if self.json { Ok(()) } else { line(text) }
    }

    /// `error: …` on stderr (a log line of level ERROR with `--log-format json`).
    pub fn error(text: &str) {
        if json_logs() {
            tracing::error!(target: LOG_TARGET, "{text}");
        } else {
            eprintln!("error: {text}");
        }
    }

    /// `note: …` on stderr: something the user should know that is not a failure.
    pub fn note(text: &str) {
        if json_logs() {
            tracing::info!(target: LOG_TARGET, note = true, "{text}");
        } else {
            eprintln!("note: {text}");
        }
    }

    /// A command's error on stderr: `error: …`, each cause, and a hint where a fix is known. A
    /// cause that the line before already ends with is left out: the store's and delta-rs's
    /// errors repeat their source in their own message.
    pub fn error_chain(error: &anyhow::Error, hint: Option<&str>) {
        if json_logs() {
            let causes: Vec<String> = error.chain().skip(1).map(ToString::to_string).collect();
            let caused_by = (!causes.is_empty()).then(|| causes.join("; "));
            tracing::error!(target: LOG_TARGET, caused_by = caused_by.as_deref(), hint, "{error}");
            return;
        }
        let mut printed = error.to_string();
        eprintln!("error: {printed}");
        for cause in error.chain().skip(1).map(ToString::to_string) {
            if !printed.ends_with(&cause) {
                eprintln!("  caused by: {cause}");
                printed = cause;
            }
        }
        if let Some(hint) = hint {
            eprintln!("hint: {hint}");
        }
    }

    /// `lakewriter digest`: the digest, its rows and version, or its JSON line.
    pub fn digest(&self, table: &TableRef, partition: Option<NaiveDate>, digest: &Digest) -> io::Result<()> {
        /// The `--json` line of `lakewriter digest`.
        #[derive(Serialize)]
        struct DigestLine<'a> {
            table: String,
            partition: Option<String>,
            #[serde(flatten)]
            digest: &'a Digest,
        }
        if self.json {
            let partition = partition.map(|d| d.to_string());
            return json_line(&Versioned::of(&DigestLine { table: table.to_string(), partition, digest }));
        }
        line(&format!("{}  {} rows  version {}", digest.digest, digest.rows, digest.version))
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
            for detail in self.details(r) {
                line(&detail)?;
            }
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
            RunStatus::Ok if r.dry_run.is_some() => self.dry_run_line(r),
            RunStatus::Ok => {
                let rows = r.rows_written.unwrap_or(0);
                let mut text = format!(
                    "  {}  {}  {rows:>6} rows  version {version:<4} {:>6} ms",
                    r.partition,
                    self.paint("ok     ", "32"),
                    r.duration_ms
                );
                if let (Some(c), "statement") = (&r.changes, r.write.as_str()) {
                    // A MERGE statement's counts are delta-rs's: no unchanged or dropped rows.
                    let _ = write!(text, "  ({} inserted, {} updated, {} deleted)", c.inserted, c.updated, c.deleted);
                } else if let Some(c) = &r.changes {
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

    /// The verdict of `lakewriter verify`: its JSON line, or each application and the verdict.
    pub fn verdict(&self, v: &VerifyReport) -> io::Result<()> {
        if self.json {
            return json_line(&Versioned::of(v));
        }
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
        line(&text)?;
        for (sign, rows) in [("+", &v.added_examples), ("-", &v.removed_examples)] {
            for row in rows {
                line(&format!("  {sign} {row}"))?;
            }
        }
        if !v.float_columns.is_empty() {
            line(&format!(
                "  the rows differ only in floating-point columns ({}): a float summed in another order on each run (SUM or AVG over DOUBLE) differs in its last bits; cast it to DECIMAL, or ROUND it",
                v.float_columns.join(", ")
            ))?;
        }
        Ok(())
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
        let mut unchecked = if counts.unchecked > 0 {
            format!(", {} not checked (see above)", counts.unchecked)
        } else {
            String::new()
        };
        if counts.waiting > 0 {
            let _ = write!(unchecked, ", {} waiting for the tables it reads (see above)", counts.waiting);
        }
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
        if let Some(changing) = summary.would_change {
            return self.dry_run_summary(summary, changing);
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
    /// Jobs that could not be checked: SQL that cannot be read or planned.
    pub unchecked: usize,
    /// Jobs that read a job's table that does not exist yet: checked once it does.
    pub waiting: usize,
}

/// A JSON line of one job's: `{"job": …, <the fields of line>}`.
#[derive(Serialize)]
struct JobLine<'a, T: Serialize> {
    job: &'a str,
    #[serde(flatten)]
    line: &'a T,
}

/// The version of the JSON Lines events (`schema/events.schema.json`), in every command's closing
/// line: a change that removes or renames a field, or changes its meaning, increments it.
pub const SCHEMA_VERSION: u32 = 1;

/// `value`'s fields and `schema_version`.
#[derive(Serialize)]
struct Versioned<'a, T: Serialize> {
    #[serde(flatten)]
    value: &'a T,
    schema_version: u32,
}

impl<'a, T: Serialize> Versioned<'a, T> {
    fn of(value: &'a T) -> Self {
        Self { value, schema_version: SCHEMA_VERSION }
    }
}

/// `{"<tag>": value}` on its own line of stdout: how a command's closing line is told apart. A
/// `summary` or a `plan` carries the [`SCHEMA_VERSION`].
fn tagged_line(tag: &str, value: &impl Serialize) -> io::Result<()> {
    if matches!(tag, "summary" | "plan") {
        return json_line(&std::collections::BTreeMap::from([(tag, Versioned::of(value))]));
    }
    json_line(&std::collections::BTreeMap::from([(tag, value)]))
}

/// `1 partition`, `2 partitions`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// One JSON object on its own line of stdout.
fn json_line(value: &impl Serialize) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, value).map_err(io::Error::other)?;
    writeln!(out)
}

/// One line of text on stdout.
fn line(text: &str) -> io::Result<()> {
    writeln!(io::stdout().lock(), "{text}")
}
