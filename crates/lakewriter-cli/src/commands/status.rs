//! `lakewriter status JOB [--from D1 --to D2] [--maintenance]`: each partition fresh, stale or
//! missing, and whether the table needs maintenance. Writes nothing.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::DateRange;

use crate::cli::{Global, StatusArgs};
use crate::output::Output;

pub async fn status(global: &Global, printer: &mut dyn Output, args: StatusArgs) -> Result<ExitCode> {
    let range = match (args.from, args.to) {
        (Some(from), Some(to)) => Some(DateRange::new(from, to).map_err(lakewriter::Error::from)?),
        _ => None,
    };
    let runner = super::open_runner(global).await?;
    let job = runner.prepare(&args.job)?;
    let status = runner.status(job, range).await?;
    let layout = if args.maintenance { runner.layout(job).await? } else { None };
    printer.status(&status, layout.as_ref())?;
    Ok(ExitCode::SUCCESS)
}
