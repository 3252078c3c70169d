//! `lakewriter plan JOB --from D1 --to D2 [--only …]`: what a backfill would run, and why; for a
//! `rebuild` job (`lakewriter plan JOB`), whether a run would, and what it reads and replaces.
//! Writes nothing.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::{Only, PlannedPartition};

use crate::cli::{Global, PlanArgs};
use crate::output::Output;

pub async fn plan(global: &Global, printer: &mut dyn Output, args: PlanArgs) -> Result<ExitCode> {
    let runner = super::open_runner(global).await?;
    let job = runner.prepare(&args.job)?;
    if args.range.from.is_some() {
        job.require_partitions("plan")?;
    } else if job.dated() {
        let name = &job.spec.name;
        return Err(lakewriter::Error::Usage(format!("job `{name}` runs for dates: pass --from and --to")).into());
    }
    let range = args.range.days()?;
    let status = runner.freshness(job, range).await?;
    let only = Only::from(args.only);
    let planned: Vec<_> = status.partitions.iter().map(|p| PlannedPartition::of(p, only, job)).collect();
    printer.plan(&status, &planned, only)?;
    Ok(ExitCode::SUCCESS)
}
