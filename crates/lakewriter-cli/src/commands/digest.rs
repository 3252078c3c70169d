//! `lakewriter digest SCHEMA.TABLE [--partition D]`: a table's content digest.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::{TableRef, Workspace};

use crate::cli::{DigestArgs, Global};
use crate::output::Output;

pub async fn digest(global: &Global, printer: &mut dyn Output, args: DigestArgs) -> Result<ExitCode> {
    let workspace = Workspace::load(global.project.as_deref(), global.root.as_deref())?;
    let table = TableRef::parse(&args.table).map_err(lakewriter::Error::from)?;
    let digest = lakewriter::digest(&workspace, &table, args.partition).await?;
    printer.digest(&table, args.partition, &digest)?;
    Ok(ExitCode::SUCCESS)
}
