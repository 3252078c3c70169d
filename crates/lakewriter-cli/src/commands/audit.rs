//! `lakewriter audit (JOB… | --all) [--from D1 --to D2] (--against ROOT2 | --scratch)`: each
//! partition of the live tables against a reproduction.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::AuditSummary;

use crate::cli::{AuditArgs, Global};
use crate::output::Output;

pub async fn audit(global: &Global, printer: &mut dyn Output, args: AuditArgs) -> Result<ExitCode> {
    let range = args.jobs.range.days()?;
    let live = super::open_runner(global).await?;
    let graph = live.graph()?;
    let names: Vec<String> = if args.jobs.all {
        graph.jobs.iter().map(|j| j.job.clone()).collect()
    } else {
        args.jobs.names.iter().map(|name| Ok(live.workspace().spec(name)?.name.clone())).collect::<Result<_>>()?
    };
    let (_scratch, there) = if let Some(root) = &args.against {
        (None, live.workspace().reproduction_root(root, "--against")?)
    } else {
        let selected: Vec<&str> = if args.jobs.all { Vec::new() } else { names.iter().map(String::as_str).collect() };
        let (scratch, there) = live.reproduce_in_scratch(&graph, &selected, range).await?;
        (Some(scratch), there)
    };
    let mut audits = Vec::new();
    for name in &names {
        let job = live.prepare(name)?;
        for audit in live.audit(job, &there, range).await? {
            printer.partition_audit(&audit)?;
            audits.push(audit);
        }
    }
    let summary = AuditSummary::of(names.len(), &audits);
    printer.audit_summary(&summary)?;
    Ok(if summary.all_equal() { ExitCode::SUCCESS } else { ExitCode::from(super::FAILED) })
}
