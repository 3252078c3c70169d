//! `lakewriter reproduce (JOB… | --all) [--from D1 --to D2] --into ROOT2`: the jobs' tables rebuilt
//! from the raw layer under another root, in dependency order.

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::Result;
use lakewriter::{Only, Runner};

use crate::cli::{Global, ReproduceArgs};
use crate::output::Output;

pub async fn reproduce(global: &Global, printer: &mut dyn Output, args: ReproduceArgs) -> Result<ExitCode> {
    let range = args.jobs.range.days()?;
    let live = super::open_runner(global).await?;
    let into = live.workspace().reproduction_root(&args.into, "--into")?;
    let graph = live.graph()?;
    let selected: Vec<&str> = args.jobs.names.iter().map(String::as_str).collect();
    for name in &selected {
        live.workspace().job(name)?;
    }
    let plan = live.reproduction(&graph, &selected, range).await?;
    printer.say(&format!(
        "reproducing into {} from the raw layer of {}",
        into.root.url(),
        live.workspace().root.url()
    ))?;
    for stage in plan.iter().filter(|s| s.days.as_ref().is_some_and(BTreeSet::is_empty)) {
        let which = if range.is_some() { " in the range" } else { "" };
        printer.say(&format!(
            "{}: no partition written{which} in the live lakehouse: nothing to reproduce",
            stage.job.job
        ))?;
    }
    // `into` is the live workspace elsewhere: on the same engine.
    let runner = Runner::open_with_inputs(into, live.workspace().root.clone()).await?;
    let parallel = args.parallel.map(usize::from);
    Ok(super::backfill::pipeline(&runner, printer, &plan, (Only::All, None), parallel).await?.0)
}
