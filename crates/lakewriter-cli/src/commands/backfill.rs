//! `lakewriter backfill (JOB [--downstream] | --all) --from D1 --to D2 [--parallel N]
//! [--shard I/N] [--only …] [--dry-run [--show N]]`, and `backfill JOB … --replace-schema`,
//! which ends with the drop of the columns the job's result no longer has.

use std::collections::BTreeSet;
use std::io;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use chrono::NaiveDate;
use lakewriter::{
    DateRange, Job, JobGraph, Only, PartitionReport, PipelineObserver, Runner, Stage, Summary, elapsed_ms,
};

use crate::cli::{BackfillArgs, Global};
use crate::output::{Output, PipelineSummary, stderr};
use crate::pipes::Pipes;

pub async fn backfill(global: &Global, printer: &mut dyn Output, args: BackfillArgs) -> Result<ExitCode> {
    let Some(pipes) = Pipes::from_env(printer)? else {
        return backfill_range(global, printer, args, None).await;
    };
    let outcome = backfill_range(global, printer, args, Some(&pipes)).await;
    let error = match &outcome {
        Ok(code) if *code == ExitCode::SUCCESS => None,
        Ok(_) => Some("a partition failed: see the run's output".to_owned()),
        Err(e) => Some(stderr::one_line(e.as_ref())),
    };
    pipes.close(printer, error.as_deref())?;
    outcome
}

/// The backfill; launched by Dagster, its range from the Pipes context where `--from` and `--to`
/// are not given, and its partitions reported as the asset's materialization.
async fn backfill_range(
    global: &Global,
    printer: &mut dyn Output,
    args: BackfillArgs,
    pipes: Option<&Pipes>,
) -> Result<ExitCode> {
    let range = match (args.range.days()?, pipes) {
        (Some(range), _) => range,
        (None, Some(pipes)) => pipes.partition_range()?,
        (None, None) => {
            return Err(lakewriter::Error::Usage("pass --from and --to: the days to backfill".into()).into());
        }
    };
    if pipes.is_some() && (args.all || args.downstream) {
        return Err(lakewriter::Error::Usage(
            "launched by Dagster, backfill runs one job, the asset's: not --all or --downstream".into(),
        )
        .into());
    }
    let runner = super::open_writer(global, &args.dry_run, &args.lineage).await?;
    let selection = (Only::from(args.only), args.shard);
    let parallel = args.parallel.map(usize::from);
    let graph = match &args.job {
        // One job: the rest of the project (its other jobs' SQL) plays no part.
        Some(name) if !args.downstream => {
            let job = runner.prepare(name)?;
            job.require_partitions("backfill")?;
            let (name, target) = (job.spec.name.clone(), job.spec.target.to_string());
            JobGraph::new([(name, target, BTreeSet::new())])?
        }
        _ => runner.graph()?,
    };
    let jobs = match &args.job {
        Some(name) => graph.with_downstream(&runner.workspace().spec(name)?.name),
        None => graph.jobs.iter().collect(),
    };
    let jobs: Vec<_> = jobs.into_iter().map(|job| Stage::over(job, Some(range))).collect();
    let replace_schema = match &args.job {
        Some(name) if args.replace_schema => {
            let job = runner.prepare(name)?;
            runner.check_replace_schema(job, range).await?;
            Some(job)
        }
        _ => None,
    };
    let started = Instant::now();
    let stages = run_stages(&runner, printer, &jobs, selection, parallel).await;
    runner.close_lineage().await;
    let (outcome, shown) = stages?;
    if let Some(job) = replace_schema
        && let Some(dropped) = runner.replace_schema(job, &shown.reports).await?
    {
        shown.printer.columns_dropped(&dropped)?;
    }
    let (code, reports) = close(&jobs, &outcome, shown, started)?;
    if let Some(pipes) = pipes {
        let job = runner.prepare(&jobs[0].job.job)?;
        pipes.materialized_range(printer, &reports, range, &job.code)?;
    }
    Ok(code)
}

/// Runs `jobs` in order as [`Runner::pipeline`] does, printing each job's partitions and summary,
/// the jobs that failed to start or were not run, and the pipeline's counts; returns the exit code
/// (1 where a partition failed or a job was not run) and the reports of the partitions that ran.
pub async fn pipeline(
    runner: &Runner,
    printer: &mut dyn Output,
    jobs: &[Stage<'_>],
    selection: (Only, Option<(u32, u32)>),
    parallel: Option<usize>,
) -> Result<(ExitCode, Vec<PartitionReport>)> {
    let started = Instant::now();
    let (outcome, shown) = run_stages(runner, printer, jobs, selection, parallel).await?;
    close(jobs, &outcome, shown, started)
}

/// [`pipeline`]'s runs, printed, without its closing line.
async fn run_stages<'p>(
    runner: &Runner,
    printer: &'p mut dyn Output,
    jobs: &[Stage<'_>],
    selection: (Only, Option<(u32, u32)>),
    parallel: Option<usize>,
) -> Result<(lakewriter::PipelineOutcome, Shown<'p>)> {
    let mut shown = Shown { printer, error: None, reports: Vec::new() };
    let outcome = runner.pipeline(jobs, selection, parallel, &mut shown).await;
    if let Some(e) = shown.error.take() {
        return Err(e.into());
    }
    Ok((outcome, shown))
}

/// [`pipeline`]'s closing line, its exit code and the reports of the partitions that ran.
fn close(
    jobs: &[Stage<'_>],
    outcome: &lakewriter::PipelineOutcome,
    shown: Shown<'_>,
    started: Instant,
) -> Result<(ExitCode, Vec<PartitionReport>)> {
    let (failed, not_run) = (outcome.failed.len(), outcome.not_run.len());
    let summary = PipelineSummary::of(jobs.len(), failed, not_run, &shown.reports, elapsed_ms(started));
    shown.printer.pipeline_done(&summary)?;
    let code = if outcome.is_ok() { ExitCode::SUCCESS } else { ExitCode::from(super::FAILED) };
    Ok((code, shown.reports))
}

/// A pipeline's events on the [`Output`]; the first output error is kept and ends the command.
struct Shown<'p> {
    printer: &'p mut dyn Output,
    error: Option<io::Error>,
    /// The reports of the jobs that ran.
    reports: Vec<PartitionReport>,
}

impl Shown<'_> {
    fn keep(&mut self, result: io::Result<()>) {
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }
}

impl PipelineObserver for Shown<'_> {
    fn job_started(&mut self, job: &Job, days: usize) {
        self.printer.start_progress(days, &job.spec.name);
    }

    fn partition_done(&mut self, report: &PartitionReport) {
        let result = self.printer.partition_done(report);
        self.keep(result);
    }

    fn job_done(&mut self, _job: &Job, reports: &[PartitionReport], summary: &Summary) {
        self.printer.finish_progress();
        self.reports.extend_from_slice(reports);
        let result = super::finish(self.printer, reports, summary).map(|_| ());
        self.keep(result.map_err(io::Error::other));
    }

    fn nothing_to_run(&mut self, job: &Job, only: Only, range: Option<DateRange>) {
        let (name, which) = (&job.spec.name, only.as_str());
        let text = match range.filter(|_| job.dated()) {
            Some(range) => format!("{name}: nothing to run: no {which} partition in {}..{}", range.from(), range.to()),
            None => format!("{name}: nothing to run: the table is not {which}"),
        };
        if only != Only::All {
            let result = self.printer.say(&text);
            self.keep(result);
        }
    }

    fn not_run(&mut self, job: &str, reason: &str) {
        let result = self.printer.not_run(job, reason);
        self.keep(result);
    }

    fn job_failed(&mut self, job: &str, error: &lakewriter::Error) {
        let result = self.printer.job_failed(job, error);
        self.keep(result);
    }
}

/// Runs `days` of `job` with a progress bar, prints its partitions and summary; returns the
/// reports and the exit code.
pub async fn run_days(
    runner: &Runner,
    printer: &mut dyn Output,
    job: &Job,
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
    let code = super::finish(printer, &reports, &Summary::of(&job.spec.name, &reports, elapsed_ms(started), false))?;
    Ok((reports, code))
}
