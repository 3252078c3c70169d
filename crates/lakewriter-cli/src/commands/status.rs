//! `lakewriter status JOB` and `lakewriter plan JOB --from D1 --to D2`: partition state, and what
//! a backfill would do with it. Neither writes.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::{DateRange, Only, PlannedPartition};

use crate::cli::{Global, PlanArgs, StatusArgs};
use crate::output::Printer;

pub async fn status(global: &Global, printer: &Printer, args: StatusArgs) -> Result<ExitCode> {
    let range = match (args.from, args.to) {
        (Some(from), Some(to)) => Some(DateRange::new(from, to).map_err(lakewriter::Error::from)?),
        _ => None,
    };
    let runner = super::open_runner(global).await?;
    let job = runner.prepare(&args.job)?;
    let status = runner.status(&job, range).await?;
    printer.status(&status)?;
    Ok(ExitCode::SUCCESS)
}

pub async fn plan(global: &Global, printer: &Printer, args: PlanArgs) -> Result<ExitCode> {
    let range = DateRange::new(args.from, args.to).map_err(lakewriter::Error::from)?;
    let runner = super::open_runner(global).await?;
    let job = runner.prepare(&args.job)?;
    job.require_partitions("plan")?;
    let status = runner.status(&job, Some(range)).await?;
    let only = Only::from(args.only);
    let planned: Vec<_> =
        status.partitions.iter().map(|p| PlannedPartition::of(p, only, job.spec.write.mode())).collect();
    printer.plan(&status, &planned, only)?;
    Ok(ExitCode::SUCCESS)
}
