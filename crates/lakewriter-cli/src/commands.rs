//! Each subcommand: load, call the library, render, choose the exit code.

use std::io;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use lakewriter::{DateRange, PartitionReport, PartitionRun, Runner, Summary, TableRef, Workspace, demo};
use serde::Serialize;
use tracing_subscriber::EnvFilter;

use crate::cli::{Cli, Command, Global};
use crate::output::{self, Printer};

/// Exit codes: 0 all good, 1 a partition or check failed, 2 usage or configuration error.
const FAILED: u8 = 1;
const USAGE: u8 = 2;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(&cli.global);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return report_error(&anyhow::Error::new(e).context("cannot start the async runtime")),
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(e) => report_error(&e),
    }
}

fn init_logging(global: &Global) {
    let default = match (global.quiet, global.verbose) {
        (true, _) => "error",
        (false, 0) => "error,lakewriter=warn",
        (false, 1) => "warn,lakewriter=info",
        (false, 2) => "info,lakewriter=debug",
        (false, _) => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(io::stderr).with_target(false).init();
}

/// Prints `error: …`, the cause chain and a hint; returns the exit code for the error's kind.
fn report_error(error: &anyhow::Error) -> ExitCode {
    if error.chain().any(|e| e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)) {
        return ExitCode::SUCCESS;
    }
    eprintln!("error: {error}");
    for cause in error.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
    let lib = error.chain().find_map(|e| e.downcast_ref::<lakewriter::Error>());
    if let Some(lakewriter::Error::ReadProject { .. }) = lib {
        eprintln!("hint: pass --project PATH, or run `lakewriter demo` to create a sample project");
    }
    ExitCode::from(if lib.is_some_and(lakewriter::Error::is_usage) { USAGE } else { FAILED })
}

async fn dispatch(cli: Cli) -> Result<ExitCode> {
    let mut printer = Printer::new(&cli.global);
    match cli.command {
        Command::Run { job, dt } => {
            let runner = open_runner(&cli.global).await?;
            runner.workspace().job(&job)?;
            let started = Instant::now();
            let report = runner.run(&PartitionRun::new(&job, dt)).await;
            printer.partition_done(&report)?;
            let reports = [report];
            printer.partition_lines(&reports)?;
            finish(&printer, &reports, &Summary::of(&job, &reports, elapsed_ms(started)))
        }
        Command::Backfill { job, from, to, parallel } => {
            let days = DateRange::new(from, to).map_err(lakewriter::Error::from)?;
            let runner = open_runner(&cli.global).await?;
            let spec = runner.workspace().job(&job)?.clone();
            backfill(&runner, &mut printer, &spec, days, parallel).await
        }
        Command::Demo { dir } => run_demo(&mut printer, &dir).await,
        Command::Digest { table, partition } => {
            let workspace = Workspace::load(cli.global.project.as_deref())?;
            let table = TableRef::parse(&table).map_err(lakewriter::Error::from)?;
            let digest = lakewriter::digest(&workspace, &table, partition).await?;
            let line =
                DigestLine { table: table.to_string(), partition: partition.map(|d| d.to_string()), digest: &digest };
            if printer.json() {
                output::json_line(&line)?;
            } else {
                output::line(&format!("{}  {} rows  version {}", digest.digest, digest.rows, digest.version))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The `--json` line of `lakewriter digest`.
#[derive(Serialize)]
struct DigestLine<'a> {
    table: String,
    partition: Option<String>,
    #[serde(flatten)]
    digest: &'a lakewriter::Digest,
}

async fn open_runner(global: &Global) -> Result<Runner> {
    let workspace = Workspace::load(global.project.as_deref())?;
    let root = workspace.root.clone();
    Runner::open(workspace).await.with_context(|| format!("lakehouse root {root}"))
}

fn default_parallelism() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

async fn backfill(
    runner: &Runner,
    printer: &mut Printer,
    job: &lakewriter::JobSpec,
    days: DateRange,
    parallel: Option<u16>,
) -> Result<ExitCode> {
    let started = Instant::now();
    let parallel = parallel.map_or_else(default_parallelism, usize::from);
    printer.start_progress(days.len(), &job.name);
    let mut emit_error = None;
    let reports = runner
        .backfill(job, days.days(), parallel, |report| {
            if let Err(e) = printer.partition_done(report) {
                emit_error.get_or_insert(e);
            }
        })
        .await;
    printer.finish_progress();
    if let Some(e) = emit_error {
        return Err(e.into());
    }
    printer.partition_lines(&reports)?;
    finish(printer, &reports, &Summary::of(&job.name, &reports, elapsed_ms(started)))
}

/// Prints the summary, and each failed partition's error on stderr.
fn finish(printer: &Printer, reports: &[PartitionReport], summary: &Summary) -> Result<ExitCode> {
    printer.summary(summary)?;
    for error in reports.iter().filter_map(|r| r.error.as_deref()) {
        eprintln!("error: {error}");
    }
    Ok(if summary.failed > 0 { ExitCode::from(FAILED) } else { ExitCode::SUCCESS })
}

/// The `--json` line of the demo's rerun check.
#[derive(Serialize)]
struct Rerun<'a> {
    rerun: &'a str,
    digest_before: &'a str,
    digest_after: &'a str,
    unchanged: bool,
}

async fn run_demo(printer: &mut Printer, dir: &std::path::Path) -> Result<ExitCode> {
    let prepared = demo::prepare(dir)?;
    let workspace = Workspace::load(Some(&prepared.project_file))?;
    let job = workspace.job(demo::JOB)?.clone();
    let say = |printer: &Printer, text: String| if printer.json() { Ok(()) } else { output::line(&text) };
    say(
        printer,
        format!(
            "lakewriter demo in {}\n  project  {} ({})\n  raw      {} days of orders under lake/raw/orders ({} files written, {} kept as they were)",
            dir.display(),
            prepared.project_file.display(),
            if prepared.project_written { "written" } else { "kept as it was" },
            demo::days().len(),
            prepared.raw_files_written,
            prepared.raw_files_kept,
        ),
    )?;
    let runner = Runner::open(workspace).await?;
    say(printer, format!("\nbackfill {} {}..{} -> {}", job.name, demo::days().from(), demo::days().to(), job.target))?;
    let code = backfill(&runner, printer, &job, demo::days(), None).await?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }

    let rerun_day = demo::days().from() + chrono::Days::new(14);
    let before = lakewriter::digest(runner.workspace(), &job.target, None).await?;
    let report = runner.run(&PartitionRun::new(&job.name, rerun_day)).await;
    printer.partition_done(&report)?;
    let after = lakewriter::digest(runner.workspace(), &job.target, None).await?;
    let unchanged = report.is_ok() && before.digest == after.digest && before.rows == after.rows;
    if printer.json() {
        output::json_line(&Rerun {
            rerun: &report.partition,
            digest_before: &before.digest,
            digest_after: &after.digest,
            unchanged,
        })?;
    } else {
        let verdict = if unchanged {
            "unchanged: running the day again replaced it with the very same rows"
        } else {
            "CHANGED: the rerun did not reproduce the table"
        };
        say(
            printer,
            format!(
                "\nrerun    {} {} -> committed table version {} ({} rows)\n  content digest before  {}  ({} rows, version {})\n  content digest after   {}  ({} rows, version {})\n  {verdict}",
                job.name,
                report.partition,
                report.table_version.map_or_else(|| "-".to_owned(), |v| v.to_string()),
                report.rows_written.unwrap_or(0),
                before.digest,
                before.rows,
                before.version,
                after.digest,
                after.rows,
                after.version,
            ),
        )?;
        if let Some(error) = &report.error {
            say(printer, format!("  error: {error}"))?;
        }
        let project = prepared.project_file.display();
        say(
            printer,
            format!(
                "\nnext: lakewriter --project {project} run {} --dt 2026-09-30\n      lakewriter --project {project} digest {}",
                job.name, job.target
            ),
        )?;
    }
    Ok(if unchanged { ExitCode::SUCCESS } else { ExitCode::from(FAILED) })
}
