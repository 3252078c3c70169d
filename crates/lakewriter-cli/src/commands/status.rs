//! `lakewriter status [JOB] [--from D1 --to D2] [--maintenance]`: a job's partitions, each fresh,
//! stale, missing or without input, and whether its table needs maintenance; without a job, a line
//! per job of the project. Writes nothing. Exits 1 where a job's state cannot be told (its SQL
//! does not plan: the line shows what its table holds, and the error).

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{Global, StatusArgs};
use crate::output::{JobOverviewLine, Output, OverviewTotals};

pub async fn status(global: &Global, printer: &mut dyn Output, args: StatusArgs) -> Result<ExitCode> {
    let range = args.range.days()?;
    let runner = super::open_runner(global).await?;
    let Some(name) = &args.job else {
        let overview = runner.overview(range, false).await?;
        let now = chrono::Utc::now();
        let workspace = runner.workspace();
        let mut lines = Vec::with_capacity(overview.jobs.len());
        for job in &overview.jobs {
            lines.push(JobOverviewLine::of(job, workspace.spec(&job.job)?, range, now));
        }
        let totals = OverviewTotals::of(&lines);
        printer.overview(&lines, &totals)?;
        return Ok(if totals.failed_jobs > 0 { ExitCode::from(super::FAILED) } else { ExitCode::SUCCESS });
    };
    let job = runner.prepare(name)?;
    let status = runner.status(job, range).await?;
    let layout = if args.maintenance { runner.layout(job).await? } else { None };
    printer.status(&status, layout.as_ref())?;
    Ok(ExitCode::SUCCESS)
}
