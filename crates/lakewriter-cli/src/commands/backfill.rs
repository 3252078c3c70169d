//! `lakewriter backfill JOB --from D1 --to D2 [--parallel N] [--shard I/N] [--only …]`.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use chrono::NaiveDate;
use lakewriter::{DateRange, Only, PartitionReport, PreparedJob, Runner, Selection, Summary, elapsed_ms};

use crate::cli::{BackfillArgs, Global};
use crate::output::Printer;

pub async fn backfill(global: &Global, printer: &mut Printer, args: BackfillArgs) -> Result<ExitCode> {
    let range = DateRange::new(args.from, args.to).map_err(lakewriter::Error::from)?;
    let runner = super::open_runner(global).await?;
    let job = runner.prepare(&args.job)?;
    let only = Only::from(args.only);
    let days = runner.select(&job, Selection { range, shard: args.shard, only }).await?;
    if days.is_empty() && only != Only::All {
        let (job, only, from, to) = (&args.job, only.as_str(), args.from, args.to);
        printer.say(&format!("{job}: nothing to run: no {only} partition in {from}..{to}"))?;
    }
    let parallel = args.parallel.map(usize::from);
    Ok(run_days(&runner, printer, &job, days, parallel).await?.1)
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
