//! `lakewriter backfill (JOB [--downstream] | --all) --from D1 --to D2 [--parallel N]
//! [--shard I/N] [--only …]`.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use chrono::NaiveDate;
use lakewriter::{DateRange, GraphJob, Only, PartitionReport, PreparedJob, Runner, Selection, Summary, elapsed_ms};

use crate::cli::{BackfillArgs, Global};
use crate::output::Printer;

pub async fn backfill(global: &Global, printer: &mut Printer, args: BackfillArgs) -> Result<ExitCode> {
    let range = DateRange::new(args.from, args.to).map_err(lakewriter::Error::from)?;
    let runner = super::open_runner(global).await?;
    let selection = Selection { range, shard: args.shard, only: Only::from(args.only) };
    let parallel = args.parallel.map(usize::from);
    match (&args.job, args.downstream || args.all) {
        (Some(name), false) => {
            let job = runner.prepare(name)?;
            Ok(backfill_job(&runner, printer, &job, selection, parallel).await?.1)
        }
        (name, _) => {
            let graph = runner.graph()?;
            let jobs = match name {
                Some(name) => graph.with_downstream(&runner.workspace().job(name)?.name),
                None => graph.jobs.iter().collect(),
            };
            pipeline(&runner, printer, &jobs, selection, parallel).await
        }
    }
}

/// Backfills `jobs` one after the other, in the (dependency) order given, each over `selection`:
/// a job's days run after every day of the jobs above it has committed, and its `--only`
/// selection is made then, so that it sees what they rewrote. A job with an upstream job that
/// failed or was not run is not run. Exit 1 where a partition failed or a job was not run.
async fn pipeline(
    runner: &Runner,
    printer: &mut Printer,
    jobs: &[&GraphJob],
    selection: Selection,
    parallel: Option<usize>,
) -> Result<ExitCode> {
    let mut failed = BTreeSet::new();
    let mut not_run = BTreeSet::new();
    for graph_job in jobs {
        let name = graph_job.job.as_str();
        let blocked = graph_job.blocked_by(&failed, &not_run);
        if let Some(reason) = blocked {
            printer.not_run(name, &reason)?;
            not_run.insert(name);
            continue;
        }
        let outcome = match runner.prepare(name) {
            Ok(job) if job.spec.write.needs_partition() => {
                backfill_job(runner, printer, &job, selection, parallel).await.map(|(reports, _)| reports)
            }
            Ok(job) => rebuild(runner, printer, &job, selection.only).await,
            Err(e) => Err(e.into()),
        };
        match outcome {
            Ok(reports) if reports.iter().all(PartitionReport::is_ok) => {}
            Ok(_) => {
                failed.insert(name);
            }
            Err(e) => {
                Printer::error(&format!("{name}: {}", lakewriter::error_chain(e.as_ref())));
                failed.insert(name);
            }
        }
    }
    Ok(if failed.is_empty() && not_run.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(super::FAILED) })
}

/// One job's backfill: its days of `selection`, run and printed.
async fn backfill_job(
    runner: &Runner,
    printer: &mut Printer,
    job: &PreparedJob<'_>,
    selection: Selection,
    parallel: Option<usize>,
) -> Result<(Vec<PartitionReport>, ExitCode)> {
    let days = runner.select(job, selection).await?;
    if days.is_empty() && selection.only != Only::All {
        let (name, only, range) = (&job.spec.name, selection.only.as_str(), selection.range);
        printer.say(&format!("{name}: nothing to run: no {only} partition in {}..{}", range.from(), range.to()))?;
    }
    run_days(runner, printer, job, days, parallel).await
}

/// A `rebuild` job in a pipeline: run once where `only` selects it.
async fn rebuild(
    runner: &Runner,
    printer: &Printer,
    job: &PreparedJob<'_>,
    only: Only,
) -> Result<Vec<PartitionReport>> {
    if !runner.rebuild_selected(job, only).await? {
        printer.say(&format!("{}: nothing to run: the table is not {}", job.spec.name, only.as_str()))?;
        return Ok(Vec::new());
    }
    let started = Instant::now();
    let report = runner.run_prepared(&job.partition_run(None, false)?).await;
    printer.partition_done(&report)?;
    let reports = vec![report];
    super::finish(printer, &reports, &Summary::of(&job.spec.name, &reports, elapsed_ms(started)))?;
    Ok(reports)
}

/// Runs `days` of `job` with a progress bar, prints its partitions and summary; returns the
/// reports and the exit code.
pub async fn run_days(
    runner: &Runner,
    printer: &mut Printer,
    job: &PreparedJob<'_>,
    days: Vec<NaiveDate>,
    parallel: Option<usize>,
) -> Result<(Vec<PartitionReport>, ExitCode)> {
    let started = Instant::now();
    printer.start_progress(days.len(), &job.spec.name);
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
    let code = super::finish(printer, &reports, &Summary::of(&job.spec.name, &reports, elapsed_ms(started)))?;
    Ok((reports, code))
}
