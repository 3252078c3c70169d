//! The arguments of the commands that are no run of a job's partitions: lint, test, init,
//! completions, man, sql, digest, maintain, report and demo.

use std::path::PathBuf;

use chrono::NaiveDate;
use clap::Args;

use super::{Range, date};

#[derive(Debug, Args)]
pub struct LintArgs {
    /// The job, as named in the project file [default: every job].
    pub job: Option<String>,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The tests to run, as named in the project file ([tests.NAME]) [default: every test].
    pub tests: Vec<String>,
    /// Only the tests of this job.
    #[arg(long, value_name = "JOB")]
    pub job: Option<String>,
    /// Also write the outcome as JUnit XML to FILE, the report format CI systems read.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the rows each named test's job wrote into the test's expect file (`expect.file`),
    /// replacing it: a reviewed change of behaviour in one command.
    #[arg(long)]
    pub update: bool,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project's folder, created where it does not exist.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print [default: lakewriter(1), the page of them all]
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct SqlArgs {
    /// A file of SQL statements separated by `;`.
    #[arg(required_unless_present = "execute", conflicts_with = "execute")]
    pub file: Option<PathBuf>,
    /// The SQL to run (one statement, or several separated by `;`), instead of a file.
    #[arg(short = 'e', long = "execute", value_name = "SQL")]
    pub execute: Option<String>,
    /// The value of `$dt` in the statements, YYYY-MM-DD.
    #[arg(long, value_parser = date, value_name = "DATE")]
    pub dt: Option<NaiveDate>,
    /// Let an INSERT OVERWRITE without a PARTITION clause replace a whole partitioned table
    /// [default: it replaces the partitions its result holds].
    #[arg(long)]
    pub replace_all: bool,
}

#[derive(Debug, Args)]
pub struct DigestArgs {
    /// `schema.table` under the project's root.
    pub table: String,
    /// Only this partition (the table's partition column), YYYY-MM-DD.
    #[arg(long, value_parser = date, value_name = "DATE")]
    pub partition: Option<NaiveDate>,
}

fn step(value: &str) -> Result<lakewriter::Step, String> {
    value.parse()
}

#[derive(Debug, Args)]
pub struct MaintainArgs {
    /// A job (its target table) or a `schema.table` of the lakehouse [default: every table the
    /// project's jobs write].
    pub target: Option<String>,
    /// Only these steps, comma-separated: compact, checkpoint, vacuum, cleanup [default: all,
    /// in that order].
    #[arg(long, value_delimiter = ',', value_parser = step, value_name = "STEPS")]
    pub only: Vec<lakewriter::Step>,
    /// Vacuum deletes files unreferenced for longer than this (e.g. 168h, 7d) [default: the
    /// table's delta.deletedFileRetentionDuration, 7d unless set].
    #[arg(long, value_parser = lakewriter::parse_duration, value_name = "DURATION")]
    pub retention: Option<std::time::Duration>,
    /// Allow a --retention shorter than the table's default. A writer still writing may lose
    /// files it has written but not yet committed: use it only with no writer running.
    #[arg(long)]
    pub force: bool,
    /// Compaction rewrites files smaller than this into files of about this size (bytes, or
    /// e.g. 128MiB) [default: the table's delta.targetFileSize, 100MiB unless set].
    #[arg(long, value_parser = lakewriter::parse_size, value_name = "SIZE")]
    pub target_file_size: Option<u64>,
    /// Say what each step would do; write and delete nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
#[command(mut_args(Range::help(
    "First date, YYYY-MM-DD [default: each job's first written partition]",
    Some("Last date (inclusive), YYYY-MM-DD [default: each job's last written partition]"),
)))]
pub struct ReportArgs {
    /// The HTML file to write (replaced where it exists).
    #[arg(long, default_value = "lakewriter-report.html", value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub range: Range,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to put the sample project file (and, unless --root says otherwise, its lakehouse).
    #[arg(default_value = "lakewriter-demo")]
    pub dir: PathBuf,
    /// Only lay out the project file and the raw data; run nothing.
    #[arg(long)]
    pub no_run: bool,
    /// Deliver a file of late orders into this day's raw partition (after a demo run), and
    /// run nothing: then see `status` and `backfill --only stale`.
    #[arg(long, value_parser = date, value_name = "DATE", conflicts_with = "no_run")]
    pub late: Option<NaiveDate>,
}
