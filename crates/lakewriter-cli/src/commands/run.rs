//! `lakewriter run JOB [--dt D] [--force]`: one partition, one commit.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use lakewriter::{Summary, elapsed_ms};

use crate::cli::{Global, RunArgs};
use crate::output::Printer;

pub async fn run(global: &Global, printer: &Printer, args: RunArgs) -> Result<ExitCode> {
    let runner = super::open_runner(global).await?;
    let job = runner.prepare(&args.partition.job)?;
    let run = job.partition_run(args.partition.dt, args.force)?;
    let started = Instant::now();
    let report = runner.run_prepared(&run).await;
    printer.partition_done(&report)?;
    let reports = [report];
    super::finish(printer, &reports, &Summary::of(&args.partition.job, &reports, elapsed_ms(started)))
}
