//! `lakewriter run JOB [--dt D] [--force] [--dry-run [--show N]]`: one partition, one commit
//! (none in a dry run).

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use lakewriter::{Summary, elapsed_ms};

use crate::cli::{Global, RunArgs};
use crate::output::Printer;

pub async fn run(global: &Global, printer: &Printer, args: RunArgs) -> Result<ExitCode> {
    let runner = super::open_writer(global, &args.dry_run).await?;
    let job = runner.prepare(&args.partition.job)?;
    let run = job.partition_run(args.partition.dt, args.force)?;
    let started = Instant::now();
    let report = runner.run_prepared(&run).await;
    printer.partition_done(&report)?;
    let reports = [report];
    super::finish(
        printer,
        &reports,
        &Summary::of(&args.partition.job, &reports, elapsed_ms(started), args.dry_run.dry_run),
    )
}
