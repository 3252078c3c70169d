//! `lakewriter demo DIR [--no-run | --late D]`: the sample project, backfilled, one day rerun, and
//! the content digests before and after compared.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use chrono::NaiveDate;
use lakewriter::{Job, PartitionReport, Runner, Workspace, elapsed_ms};

use crate::cli::{DemoArgs, Global};
use crate::demo;
use crate::output::{DemoLaid, LateDelivered, Output, PipelineSummary, Rerun};

pub async fn demo(global: &Global, printer: &mut dyn Output, args: DemoArgs) -> Result<ExitCode> {
    match args.late {
        Some(day) => deliver_late(global, printer, &args.dir, day).await,
        None => run_demo(global, printer, &args.dir, args.no_run).await,
    }
}

async fn run_demo(global: &Global, printer: &mut dyn Output, dir: &Path, no_run: bool) -> Result<ExitCode> {
    let (project_file, project_written) = demo::write_project(dir)?;
    let workspace = Workspace::load(Some(&project_file), global.root.as_deref())?;
    let raw = demo::write_raw(&workspace).await?;
    printer.say(&format!("lakewriter demo in {}", dir.display()))?;
    let laid = DemoLaid {
        project: project_file.display().to_string(),
        project_written,
        root: workspace.root.url().to_string(),
        days: demo::days().len(),
        raw_files_written: raw.written,
        raw_files_kept: raw.kept,
    };
    printer.demo_laid(&laid, no_run)?;
    if no_run {
        return Ok(ExitCode::SUCCESS);
    }
    let runner = Runner::open(super::engine::chosen(global, workspace)?).await?;
    let started = Instant::now();
    let jobs = [(demo::JOB, 15), (demo::DIMENSION_JOB, 10), (demo::WINDOW_JOB, 20)];
    let (mut reports, mut failed) = (Vec::new(), 0);
    for (name, rerun_day) in jobs {
        let job = runner.prepare(name)?;
        let rerun_day = demo::days().from() + chrono::Days::new(rerun_day - 1);
        failed += usize::from(!demo_job(&runner, printer, job, rerun_day, &mut reports).await?);
    }
    printer.pipeline_done(&PipelineSummary::of(jobs.len(), failed, 0, &reports, elapsed_ms(started)))?;
    let project = match &global.root {
        Some(root) => format!("{} --root {root}", project_file.display()),
        None => project_file.display().to_string(),
    };
    // `verify` rebuilds a day in a local scratch folder: offered where the lakehouse is local.
    let verify = if runner.workspace().root.is_local() {
        format!("\n      lakewriter --project {project} verify customers --dt 2026-09-30")
    } else {
        String::new()
    };
    printer.say(&format!(
        "\nnext: lakewriter --project {project} status\n      lakewriter --project {project} run daily_orders --dt 2026-09-30{verify}\n      lakewriter --project {project} digest core.customers"
    ))?;
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(super::FAILED) })
}

/// `demo DIR --late D`: a file of late orders in the demo's raw partition D.
async fn deliver_late(global: &Global, printer: &mut dyn Output, dir: &Path, day: NaiveDate) -> Result<ExitCode> {
    let workspace = Workspace::load(Some(&dir.join(lakewriter::PROJECT_FILE)), global.root.as_deref())?;
    let delivered = demo::write_late(&workspace, day).await?;
    let late = LateDelivered { file: demo::late_file(day), root: workspace.root.url().to_string(), delivered };
    printer.late_delivered(&late)?;
    Ok(ExitCode::SUCCESS)
}

/// The demo for one job: backfill September, run one day again, compare the content digests;
/// adds the reports of its runs to `ran`. Whether every run succeeded and the rerun changed nothing.
async fn demo_job(
    runner: &Runner,
    printer: &mut dyn Output,
    job: &Job,
    rerun_day: NaiveDate,
    ran: &mut Vec<PartitionReport>,
) -> Result<bool> {
    let (spec, days) = (&job.spec, demo::days());
    printer.say(&format!(
        "\nbackfill {} ({}) {}..{} -> {}",
        spec.name,
        spec.write.mode(),
        days.from(),
        days.to(),
        spec.target
    ))?;
    let (reports, code) = super::backfill::run_days(runner, printer, job, days.days().collect(), None).await?;
    ran.extend_from_slice(&reports);
    if code != ExitCode::SUCCESS {
        return Ok(false);
    }
    printer.merged(&reports)?;
    let before = lakewriter::digest(runner.workspace(), &spec.target).await?;
    let report = runner.run_prepared(&job.partition_run(Some(rerun_day), false)?).await;
    printer.partition_done(&report)?;
    let after = lakewriter::digest(runner.workspace(), &spec.target).await?;
    let rerun = Rerun { job: &spec.name, report: &report, before: &before, after: &after };
    printer.rerun(&rerun)?;
    let unchanged = rerun.unchanged();
    ran.push(report);
    Ok(unchanged)
}
