//! `lakewriter maintain [JOB | SCHEMA.TABLE]`: compaction, checkpoint, vacuum and log clean-up.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use lakewriter::{MaintainOptions, MaintainSummary, Step};

use crate::cli::{Global, MaintainArgs};
use crate::output::{Output, stderr};

pub async fn maintain(global: &Global, printer: &mut dyn Output, args: MaintainArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let options = MaintainOptions {
        steps: if args.only.is_empty() { Step::ALL.into() } else { args.only.into_iter().collect() },
        retention: args.retention,
        force: args.force,
        target_file_size: args.target_file_size,
        dry_run: args.dry_run,
    };
    let runner = super::open_runner(global).await?;
    let reports = runner.maintain(args.target.as_deref(), &options).await?;
    let summary = MaintainSummary::of(&reports, options.dry_run, started);
    printer.maintain(&reports, &summary)?;
    for error in reports.iter().filter_map(|r| r.error.as_deref()) {
        stderr::error(error);
    }
    Ok(if summary.failed > 0 { ExitCode::from(super::FAILED) } else { ExitCode::SUCCESS })
}
