//! `lakewriter graph`: the jobs in dependency order, with what each reads.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::Global;
use crate::output::Output;

pub async fn graph(global: &Global, printer: &mut dyn Output) -> Result<ExitCode> {
    let runner = super::open_runner(global).await?;
    printer.graph(&runner.graph()?)?;
    Ok(ExitCode::SUCCESS)
}
