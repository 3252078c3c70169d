//! `lakewriter digest SCHEMA.TABLE [--partition D]`: a table's content digest.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::{TableRef, Workspace};

use crate::cli::{DigestArgs, Global};
use crate::output::Output;

pub async fn digest(global: &Global, printer: &mut dyn Output, args: DigestArgs) -> Result<ExitCode> {
    let workspace = Workspace::load(global.project.as_deref(), global.root.as_deref())?;
    let table = TableRef::parse(&args.table).map_err(lakewriter::Error::from)?;
    match args.partition {
        Some(dt) => {
            let (partition, digest) = lakewriter::partition_digest(&workspace, &table, dt).await?;
            printer.digest(&table, Some(&partition), &digest)?;
        }
        None => printer.digest(&table, None, &lakewriter::digest(&workspace, &table).await?)?,
    }
    Ok(ExitCode::SUCCESS)
}
