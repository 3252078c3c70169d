//! `lakewriter plan JOB --from D1 --to D2 [--only …]`: what a backfill would run, and why.
//! Writes nothing.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::{DateRange, Only, PlannedPartition};

use crate::cli::{Global, PlanArgs};
use crate::output::Output;

pub async fn plan(global: &Global, printer: &mut dyn Output, args: PlanArgs) -> Result<ExitCode> {
    let range = DateRange::new(args.from, args.to).map_err(lakewriter::Error::from)?;
    let runner = super::open_runner(global).await?;
    let job = runner.prepare(&args.job)?;
    job.require_partitions("plan")?;
    let status = runner.freshness(job, Some(range)).await?;
    let only = Only::from(args.only);
    let planned: Vec<_> = status.partitions.iter().map(|p| PlannedPartition::of(p, only, job)).collect();
    printer.plan(&status, &planned, only)?;
    Ok(ExitCode::SUCCESS)
}
