//! `lakewriter run JOB [--dt D] [--force] [--dry-run [--show N]]`: one partition, one commit
//! (none in a dry run).

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use lakewriter::{Summary, elapsed_ms};

use crate::cli::{Global, RunArgs};
use crate::output::{Output, stderr};
use crate::pipes::Pipes;

pub async fn run(global: &Global, printer: &mut dyn Output, args: RunArgs) -> Result<ExitCode> {
    let Some(pipes) = Pipes::from_env(printer)? else {
        return run_partition(global, printer, args, None).await.map(|r| r.0);
    };
    let outcome = run_partition(global, printer, args, Some(&pipes)).await;
    let error = match &outcome {
        Ok((_, failed)) => failed.as_ref().map(ToString::to_string),
        Err(e) => Some(stderr::one_line(e.as_ref())),
    };
    pipes.close(printer, error.as_deref())?;
    outcome.map(|r| r.0)
}

/// The run; launched by Dagster, its date from the Pipes context where `--dt` is not given, and
/// its partition reported as an asset materialization.
/// Returns the exit code and, where the partition failed, its error.
async fn run_partition(
    global: &Global,
    printer: &mut dyn Output,
    args: RunArgs,
    pipes: Option<&Pipes>,
) -> Result<(ExitCode, Option<lakewriter::Failure>)> {
    let runner = super::open_writer(global, &args.dry_run, &args.lineage).await?;
    let job = runner.prepare(&args.partition.job)?;
    let dt = match (args.partition.dt, pipes) {
        (None, Some(pipes)) => pipes.partition_date()?,
        (dt, _) => dt,
    };
    let run = job.partition_run(dt, args.force)?;
    let started = Instant::now();
    let report = runner.run_prepared(&run).await;
    runner.close_lineage().await;
    printer.partition_done(&report)?;
    if let Some(pipes) = pipes {
        pipes.materialized(printer, &report, &job.code)?;
    }
    let failed = report.error.clone();
    let reports = [report];
    let summary = Summary::of(&args.partition.job, &reports, elapsed_ms(started), args.dry_run.dry_run);
    Ok((super::finish(printer, &reports, &summary)?, failed))
}
