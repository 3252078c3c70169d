//! The command line: the clap definition of `lakewriter` — its global options, its commands, the
//! value parsers and the `--from`/`--to` range several commands share. The arguments of the
//! commands that run a job's partitions or tell their state are in `partitions`, the other
//! commands' in `tools`; the engine's processes' are here.

use std::path::PathBuf;

use chrono::NaiveDate;
use clap::{Arg, Args, Parser, Subcommand, ValueEnum};
use lakewriter::DateRange;

mod partitions;
mod tools;

pub use partitions::{
    AuditArgs, BackfillArgs, DryRunArgs, LineageArgs, PlanArgs, ReproduceArgs, RunArgs, StatusArgs, VerifyArgs,
};
pub use tools::{
    CompletionsArgs, DemoArgs, DigestArgs, InitArgs, LintArgs, MaintainArgs, ManArgs, ReportArgs, SqlArgs, TestArgs,
};

/// Idempotent Delta Lake loads: every run of a partition yields the same table.
#[derive(Debug, Parser)]
#[command(name = "lakewriter", version, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// The project file, or its folder [default: the nearest lakewriter.toml in the current
    /// folder or a folder above it]
    #[arg(long, global = true, env = "LAKEWRITER_PROJECT", value_name = "PATH")]
    pub project: Option<PathBuf>,

    /// The lakehouse root, replacing the project file's: a folder or s3://bucket/prefix.
    #[arg(long, global = true, env = "LAKEWRITER_ROOT", value_name = "URL")]
    pub root: Option<String>,

    /// Where partitions' queries run: `local` (this process) or `df://HOST:PORT[?partitions=N]`,
    /// a Ballista scheduler, each query in N partitions (default: this machine's cores; a build
    /// with the `ballista` feature) [default: the project's `[engine] url`, else local]
    #[arg(long, global = true, env = "LAKEWRITER_ENGINE", value_name = "URL")]
    pub engine: Option<String>,

    /// Print JSON Lines on stdout: one object per partition, then a summary.
    #[arg(long, global = true)]
    pub json: bool,

    /// More log output on stderr (-v info, -vv debug). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Only errors on stderr, no progress bar.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Never draw a progress bar.
    #[arg(long, global = true)]
    pub no_progress: bool,

    /// When to colour the output (NO_COLOR is respected with `auto`).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// How logs are written on stderr: `text`, or `json` (one object per line, with the
    /// job, partition and run id of the partition a line is about).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "LAKEWRITER_LOG_FORMAT", value_name = "FORMAT")]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnlyChoice {
    Missing,
    Stale,
    All,
}

impl From<OnlyChoice> for lakewriter::Only {
    fn from(value: OnlyChoice) -> Self {
        match value {
            OnlyChoice::Missing => Self::Missing,
            OnlyChoice::Stale => Self::Stale,
            OnlyChoice::All => Self::All,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream: with `auto`, where it is a terminal and NO_COLOR is unset.
    pub fn enabled(self, terminal: bool) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

fn date(value: &str) -> Result<NaiveDate, String> {
    lakewriter::parse_date(value).map_err(|e| e.to_string())
}

fn shard(value: &str) -> Result<(u32, u32), String> {
    let invalid = || format!("invalid shard `{value}`: expected I/N with 0 <= I < N, e.g. 0/4");
    let (i, n) = value.split_once('/').ok_or_else(invalid)?;
    let (i, n): (u32, u32) = (i.trim().parse().map_err(|_| invalid())?, n.trim().parse().map_err(|_| invalid())?);
    if n == 0 || i >= n {
        return Err(invalid());
    }
    Ok((i, n))
}

/// `--from DATE --to DATE`: a range of days, both ends or neither. A command whose range has a
/// default, or that says more of it, gives its own help with [`Range::help`].
#[derive(Debug, Args)]
pub struct Range {
    /// First date, YYYY-MM-DD.
    #[arg(long, value_parser = date, value_name = "DATE", requires = "to")]
    pub from: Option<NaiveDate>,
    /// Last date (inclusive), YYYY-MM-DD.
    #[arg(long, value_parser = date, value_name = "DATE", requires = "from")]
    pub to: Option<NaiveDate>,
}

impl Range {
    /// The help of `--from` and, where given, of `--to`, replacing the shared one:
    /// `#[command(mut_args(Range::help(FROM, TO)))]` on the arguments that flatten the range. (Not
    /// `mut_arg`, which moves the argument after the others in the reference and the manual.)
    pub fn help(from: &'static str, to: Option<&'static str>) -> impl FnMut(Arg) -> Arg {
        move |arg| match (arg.get_id().as_str(), to) {
            ("from", _) => arg.help(from),
            ("to", Some(to)) => arg.help(to),
            _ => arg,
        }
    }

    /// The days from `--from` to `--to`, where given.
    pub fn days(&self) -> anyhow::Result<Option<DateRange>> {
        match (self.from, self.to) {
            (Some(from), Some(to)) => Ok(Some(DateRange::new(from, to).map_err(lakewriter::Error::from)?)),
            _ => Ok(None),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a job for one logical partition (or, for `rebuild`, the whole table): one Delta commit.
    Run(RunArgs),
    /// Apply a job's write twice to a scratch copy of its target and check that the second
    /// application changed nothing.
    Verify(VerifyArgs),
    /// Run a job for every date of a range, each an independent idempotent run; with
    /// --downstream or --all, the jobs that read its target too, in dependency order.
    Backfill(BackfillArgs),
    /// Show the jobs in dependency order: a job depends on the jobs whose targets its SQL reads.
    Graph,
    /// Rebuild jobs' tables from the raw layer into another lakehouse root, in dependency order:
    /// the raw layer is read from the project's root, and only ROOT2 is written.
    Reproduce(ReproduceArgs),
    /// Compare each partition of jobs' live tables with a reproduction under another root (see
    /// `reproduce`), or made in a scratch folder: equal, differs (with the rows), missing here or
    /// missing there. Exits 1 on any difference.
    Audit(AuditArgs),
    /// Show which partitions of a job are fresh, stale (inputs or code changed since their last
    /// write), missing or without input (a raw dataset has no file for the day), from the state
    /// each write recorded in the table's own log; without a job, a line per job: its range, the
    /// counts and its last write. Exits 1 where a job's state cannot be told (its SQL does not
    /// plan).
    Status(StatusArgs),
    /// Show what `backfill` would run over a range, and why, without writing anything.
    Plan(PlanArgs),
    /// Write one self-contained HTML page (no network needed to view it): per job a calendar of
    /// its partitions (fresh, stale, missing, no input; the version, rows, time and stale reasons on
    /// hover), rows and run time per day and its table's maintenance state, and the job graph.
    /// Reads what `status` reads; writes nothing to the lakehouse.
    Report(ReportArgs),
    /// Write a sample project into DIR, backfill it, rerun a day and show that nothing changed.
    Demo(DemoArgs),
    /// Check jobs' SQL for what makes reruns differ: clock or random functions (errors), orders
    /// that are not total, scans of all history, a partition column that is not $dt (warnings).
    /// Exits 1 on an error.
    Lint(LintArgs),
    /// Run Spark-style SQL against the lakehouse: INSERT OVERWRITE … PARTITION, INSERT INTO,
    /// MERGE INTO, DELETE and UPDATE on Delta tables (each one commit, or none where it changes
    /// nothing), SELECT and EXPLAIN. Statements separated by `;` run in order; the first failure
    /// stops the rest.
    Sql(SqlArgs),
    /// Write a new project into DIR: a commented lakewriter.toml with a sample job, and a raw
    /// layer of a week of sample orders that the job reads. Never overwrites a project file.
    Init(InitArgs),
    /// Print a shell completion script for SHELL on stdout.
    Completions(CompletionsArgs),
    /// Print a manual page (roff) on stdout: lakewriter(1), or with COMMAND its page,
    /// lakewriter-COMMAND(1), which lakewriter(1) names.
    Man(ManArgs),
    /// Run the project's job tests ([tests.NAME]) in scratch lakehouses: the given rows in, the
    /// expected rows out; run again, read differently and replayed out of order, the same table.
    /// Exits 1 on a failed check, 2 on a test that cannot be run as written.
    Test(TestArgs),
    /// Print the content digest of a table (independent of files, row order and version).
    Digest(DigestArgs),
    /// Run a process of a Ballista cluster that computes partitions for `--engine df://…`: a
    /// scheduler, or an executor (a build with the `ballista` feature).
    #[command(subcommand)]
    Engine(EngineCommand),
    /// Table maintenance: compact the partitions holding several small files, write a checkpoint,
    /// vacuum unreferenced files and remove expired log files; rows and partition state stay.
    Maintain(MaintainArgs),
}

/// A process of a Ballista cluster.
#[derive(Debug, Subcommand)]
pub enum EngineCommand {
    /// Run a scheduler: it takes plans from lakewriter (`--engine df://HOST:PORT`) and hands their
    /// tasks to the executors. Stops on SIGTERM or Ctrl-C.
    Scheduler(SchedulerArgs),
    /// Run an executor: it registers with the scheduler, runs tasks (reading the raw layer and
    /// writing data files through the project's `[storage]` options) and serves their results
    /// to the others over Arrow Flight. Stops on SIGTERM or Ctrl-C.
    Executor(ExecutorArgs),
}

#[derive(Debug, Args)]
pub struct SchedulerArgs {
    /// Where the scheduler's gRPC service listens: clients and executors connect here.
    #[arg(long, default_value = "127.0.0.1:50050", value_name = "HOST:PORT")]
    pub bind: std::net::SocketAddr,
    /// How long an executor may go without a heartbeat before it is given up: its running tasks
    /// are then run on the others, or, with none left, their queries fail. Longer than the
    /// executors' --heartbeat.
    #[arg(long, default_value_t = 30, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub executor_timeout: u64,
}

#[derive(Debug, Args)]
pub struct ExecutorArgs {
    /// The scheduler to register with.
    #[arg(long, default_value = "127.0.0.1:50050", value_name = "HOST:PORT")]
    pub scheduler: String,
    /// Where the executor's Arrow Flight service listens: the others fetch its tasks' results
    /// here.
    #[arg(long, default_value = "127.0.0.1:50051", value_name = "HOST:PORT")]
    pub bind: std::net::SocketAddr,
    /// The host name the scheduler and the other executors reach it by [default: the --bind
    /// host]
    #[arg(long, value_name = "HOST")]
    pub advertise: Option<String>,
    /// The port of its gRPC service (on the --bind host), through which the scheduler hands it
    /// tasks [default: the --bind port + 1]
    #[arg(long, value_name = "PORT")]
    pub grpc_port: Option<u16>,
    /// Tasks it runs at once [default: the machine's cores]
    #[arg(long, value_name = "N")]
    pub slots: Option<std::num::NonZeroUsize>,
    /// Where it keeps its tasks' results until they are fetched [default: a folder of its own
    /// in the system's temporary folder]
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// How often it tells the scheduler it is alive: shorter than the scheduler's
    /// --executor-timeout.
    #[arg(long, default_value_t = 5, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub heartbeat: u64,
}
