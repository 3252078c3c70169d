//! `lakewriter verify JOB [--dt D]`: the write applied twice to a scratch copy.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::PartitionRun;

use crate::cli::{Global, VerifyArgs};
use crate::output::Output;

pub async fn verify(global: &Global, printer: &mut dyn Output, args: VerifyArgs) -> Result<ExitCode> {
    let runner = super::open_runner(global).await?;
    let verdict =
        runner.verify(&PartitionRun { job: args.partition.job, dt: args.partition.dt, force: args.force }).await?;
    printer.verdict(&verdict)?;
    Ok(if verdict.pass { ExitCode::SUCCESS } else { ExitCode::from(super::FAILED) })
}
