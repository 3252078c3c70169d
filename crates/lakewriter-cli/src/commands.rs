//! Each subcommand: load, call the library, render, choose the exit code.

use std::io::{self, IsTerminal};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use lakewriter::{DateRange, PartitionReport, PartitionRun, Runner, Summary, TableRef, Workspace, WriteMode, demo};
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
        (true, _) => "lakewriter=error",
        (false, 0) => "lakewriter=warn",
        (false, 1) => "warn,lakewriter=info",
        (false, 2) => "info,lakewriter=debug",
        (false, _) => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let ansi = global.color.enabled(io::stderr().is_terminal());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(io::stderr).with_ansi(ansi).with_target(false).init();
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
        Command::Run { job, dt, force } => {
            let runner = open_runner(&cli.global).await?;
            let spec = runner.workspace().job(&job)?;
            runner.workspace().check_run(spec, dt, force)?;
            let started = Instant::now();
            let unit = PartitionRun { job: job.clone(), dt, force };
            let report = runner.run(&unit).await;
            printer.partition_done(&report)?;
            let reports = [report];
            printer.partition_lines(&reports)?;
            finish(&printer, &reports, &Summary::of(&job, &reports, elapsed_ms(started)))
        }
        Command::Backfill { job, from, to, parallel, shard, only } => {
            let range = DateRange::new(from, to).map_err(lakewriter::Error::from)?;
            let runner = open_runner(&cli.global).await?;
            let spec = partitioned_job(&runner, &job, "backfill")?;
            let mut days: Vec<chrono::NaiveDate> = match shard {
                Some((index, count)) => range.shard(index, count).collect(),
                None => range.days().collect(),
            };
            let only = lakewriter::Only::from(only);
            if only != lakewriter::Only::All {
                let status = runner.status(&spec, Some(range)).await?;
                let selected: std::collections::BTreeSet<_> =
                    status.partitions.iter().filter(|p| only.selects(p)).filter_map(|p| p.dt).collect();
                days.retain(|d| selected.contains(d));
                if days.is_empty() {
                    say(&printer, &format!("{job}: nothing to run: no {} partition in {from}..{to}", only.as_str()))?;
                }
            }
            Ok(backfill(&runner, &mut printer, &spec, days, parallel).await?.1)
        }
        Command::Status { job, from, to } => {
            let range = match (from, to) {
                (Some(from), Some(to)) => Some(DateRange::new(from, to).map_err(lakewriter::Error::from)?),
                _ => None,
            };
            let runner = open_runner(&cli.global).await?;
            let spec = runner.workspace().job(&job)?.clone();
            let status = runner.status(&spec, range).await?;
            printer.status(&status)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Plan { job, from, to, only } => {
            let range = DateRange::new(from, to).map_err(lakewriter::Error::from)?;
            let runner = open_runner(&cli.global).await?;
            let spec = partitioned_job(&runner, &job, "plan")?;
            let status = runner.status(&spec, Some(range)).await?;
            let planned: Vec<_> = status
                .partitions
                .iter()
                .map(|p| lakewriter::PlannedPartition::of(p, only.into(), spec.write.mode()))
                .collect();
            printer.plan(&status, &planned, only.into())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify { job, dt, force } => {
            let runner = open_runner(&cli.global).await?;
            let verdict = runner.verify(&PartitionRun { job, dt, force }).await?;
            if printer.json() {
                output::json_line(&verdict)?;
            } else {
                printer.verdict(&verdict)?;
            }
            Ok(if verdict.pass { ExitCode::SUCCESS } else { ExitCode::from(FAILED) })
        }
        Command::Lint { job } => {
            let runner = open_runner(&cli.global).await?;
            let jobs: Vec<lakewriter::JobSpec> = match job {
                Some(name) => vec![runner.workspace().job(&name)?.clone()],
                None => runner.workspace().project.jobs.values().cloned().collect(),
            };
            lint(&runner, &printer, &jobs).await
        }
        Command::Demo { dir, no_run, late: None } => run_demo(&cli.global, &mut printer, &dir, no_run).await,
        Command::Demo { dir, late: Some(day), .. } => deliver_late(&cli.global, &printer, &dir, day).await,
        Command::Digest { table, partition } => {
            let workspace = Workspace::load(cli.global.project.as_deref(), cli.global.root.as_deref())?;
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

/// The job `name`, which must have date partitions for `command`.
fn partitioned_job(runner: &Runner, name: &str, command: &str) -> Result<lakewriter::JobSpec> {
    let spec = runner.workspace().job(name)?.clone();
    if !spec.write.needs_partition() {
        return Err(lakewriter::Error::Usage(format!(
            "job `{name}` (write = \"rebuild\") has no partitions to {command}: use `lakewriter run {name}`"
        ))
        .into());
    }
    Ok(spec)
}

/// Lints `jobs`: each finding on stdout, then the counts. Exit 1 on an error finding or a job
/// whose SQL cannot be planned (reported on stderr; the other jobs are still checked).
async fn lint(runner: &Runner, printer: &Printer, jobs: &[lakewriter::JobSpec]) -> Result<ExitCode> {
    let mut counts = output::LintCounts { jobs: jobs.len(), ..output::LintCounts::default() };
    for job in jobs {
        match runner.lint(job).await {
            Ok(findings) => {
                for finding in &findings {
                    match finding.severity {
                        lakewriter::Severity::Error => counts.errors += 1,
                        lakewriter::Severity::Warning => counts.warnings += 1,
                    }
                    printer.finding(finding)?;
                }
            }
            Err(e) => {
                counts.unchecked += 1;
                eprintln!("error: {}", lakewriter::error_chain(&e));
            }
        }
    }
    printer.lint_counts(&counts)?;
    Ok(if counts.errors > 0 || counts.unchecked > 0 { ExitCode::from(FAILED) } else { ExitCode::SUCCESS })
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
    let workspace = Workspace::load(global.project.as_deref(), global.root.as_deref())?;
    let root = workspace.root.url().clone();
    Runner::open(workspace).await.with_context(|| format!("lakehouse root {root}"))
}

/// Partitions in flight when `--parallel` is not given: the number of CPUs for partition
/// overwrites and appends, which commit side by side; one at a time for writes that read and
/// rewrite the same rows (`merge`, `append_dedup`, `delete_insert`), which would only conflict
/// and retry.
fn default_parallelism(job: &lakewriter::JobSpec) -> usize {
    match job.write.mode() {
        WriteMode::Merge | WriteMode::AppendDedup | WriteMode::DeleteInsert => 1,
        _ => std::thread::available_parallelism().map_or(2, |n| n.get().max(2)),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Runs a backfill with a progress bar, prints its partitions and summary; returns the reports
/// and the exit code.
async fn backfill(
    runner: &Runner,
    printer: &mut Printer,
    job: &lakewriter::JobSpec,
    days: Vec<chrono::NaiveDate>,
    parallel: Option<u16>,
) -> Result<(Vec<PartitionReport>, ExitCode)> {
    let started = Instant::now();
    let parallel = parallel.map_or_else(|| default_parallelism(job), usize::from);
    printer.start_progress(days.len(), &job.name);
    let mut emit_error = None;
    let reports = runner
        .backfill(job, days, parallel, |report| {
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
    let code = finish(printer, &reports, &Summary::of(&job.name, &reports, elapsed_ms(started)))?;
    Ok((reports, code))
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

async fn run_demo(global: &Global, printer: &mut Printer, dir: &std::path::Path, no_run: bool) -> Result<ExitCode> {
    let (project_file, project_written) = demo::write_project(dir)?;
    let workspace = Workspace::load(Some(&project_file), global.root.as_deref())?;
    let raw = demo::write_raw(&workspace.root).await?;
    say(
        printer,
        &format!(
            "lakewriter demo in {}\n  project  {} ({})\n  root     {}\n  raw      {} days of orders and customer changes under raw/ ({} files written, {} kept as they were)",
            dir.display(),
            project_file.display(),
            if project_written { "written" } else { "kept as it was" },
            workspace.root.url(),
            demo::days().len(),
            raw.written,
            raw.kept,
        ),
    )?;
    if no_run {
        return Ok(ExitCode::SUCCESS);
    }
    let runner = Runner::open(workspace).await?;
    let mut all_good = true;
    for (name, rerun_day) in [(demo::JOB, 15), (demo::DIMENSION_JOB, 10)] {
        let job = runner.workspace().job(name)?.clone();
        let rerun_day = demo::days().from() + chrono::Days::new(rerun_day - 1);
        all_good &= demo_job(&runner, printer, &job, rerun_day).await?;
    }
    let project = match &global.root {
        Some(root) => format!("{} --root {root}", project_file.display()),
        None => project_file.display().to_string(),
    };
    say(
        printer,
        &format!(
            "\nnext: lakewriter --project {project} run daily_orders --dt 2026-09-30\n      lakewriter --project {project} verify customers --dt 2026-09-30\n      lakewriter --project {project} digest core.customers"
        ),
    )?;
    Ok(if all_good { ExitCode::SUCCESS } else { ExitCode::from(FAILED) })
}

/// `demo DIR --late D`: a file of late orders in the demo's raw partition D.
async fn deliver_late(
    global: &Global,
    printer: &Printer,
    dir: &std::path::Path,
    day: chrono::NaiveDate,
) -> Result<ExitCode> {
    let workspace = Workspace::load(Some(&dir.join("lakewriter.toml")), global.root.as_deref())?;
    let written = demo::write_late(&workspace.root, day).await?;
    let file = demo::late_file(day);
    say(
        printer,
        &if written {
            format!("late orders delivered: {file} (below {})", workspace.root.url())
        } else {
            format!("{file} was delivered before; kept as it is")
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Text for people, only without `--json`.
fn say(printer: &Printer, text: &str) -> Result<()> {
    if !printer.json() {
        output::line(text)?;
    }
    Ok(())
}

/// The demo for one job: backfill September, run one day again, compare the content digests.
async fn demo_job(
    runner: &Runner,
    printer: &mut Printer,
    job: &lakewriter::JobSpec,
    rerun_day: chrono::NaiveDate,
) -> Result<bool> {
    say(
        printer,
        &format!(
            "\nbackfill {} ({}) {}..{} -> {}",
            job.name,
            job.write.mode(),
            demo::days().from(),
            demo::days().to(),
            job.target
        ),
    )?;
    let (reports, code) = backfill(runner, printer, job, demo::days().days().collect(), None).await?;
    if code != ExitCode::SUCCESS {
        return Ok(false);
    }
    let changes: Vec<_> = reports.iter().filter_map(|r| r.changes).collect();
    if !changes.is_empty() {
        let total = |f: fn(&lakewriter::KeyedCounts) -> u64| changes.iter().map(f).sum::<u64>();
        say(
            printer,
            &format!(
                "  merged: {} inserted, {} updated, {} deleted (tombstones), {} unchanged, {} duplicate source rows dropped",
                total(|c| c.inserted),
                total(|c| c.updated),
                total(|c| c.deleted),
                total(|c| c.unchanged),
                total(|c| c.duplicates_dropped)
            ),
        )?;
    }

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
        return Ok(unchanged);
    }
    let outcome = match (report.committed, report.table_version) {
        (true, Some(v)) => format!("committed table version {v} ({} rows)", report.rows_written.unwrap_or(0)),
        _ => "nothing to change: no new table version".to_owned(),
    };
    let verdict = if unchanged {
        "unchanged: running the day again left the very same rows"
    } else {
        "CHANGED: the rerun did not reproduce the table"
    };
    say(
        printer,
        &format!(
            "rerun    {} {} -> {outcome}\n  content digest before  {}  ({} rows, version {})\n  content digest after   {}  ({} rows, version {})\n  {verdict}",
            job.name,
            report.partition,
            before.digest,
            before.rows,
            before.version,
            after.digest,
            after.rows,
            after.version,
        ),
    )?;
    if let Some(error) = &report.error {
        say(printer, &format!("  error: {error}"))?;
    }
    Ok(unchanged)
}
