//! `lakewriter report [--out FILE] [--from D1 --to D2]`: every job's partition states, run times,
//! table maintenance and the job graph as one self-contained HTML page (`crate::report`). Writes
//! nothing to the lakehouse; exits 1 where a job's state could not be read (the page shows it).

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lakewriter::{Overviewed, elapsed_ms};

use crate::cli::{Global, ReportArgs};
use crate::output::{Output, ReportWritten, StateCounts};

pub async fn report(global: &Global, printer: &mut dyn Output, args: ReportArgs) -> Result<ExitCode> {
    let range = args.range.days()?;
    let started = Instant::now();
    let runner = super::open_runner(global).await?;
    let overview = runner.overview(range, true).await?;
    tracing::info!(elapsed_ms = elapsed_ms(started), "report: every job's state read");
    let rendering = Instant::now();
    let project = runner.workspace().project.file.display().to_string();
    let page = crate::report::page(&overview, &project, chrono::Utc::now());
    tracing::info!(elapsed_ms = elapsed_ms(rendering), bytes = page.len(), "report: page rendered");
    std::fs::write(&args.out, page).with_context(|| format!("cannot write the report to {}", args.out.display()))?;
    let mut written = ReportWritten {
        path: args.out.display().to_string(),
        jobs: overview.jobs.len(),
        not_written: 0,
        failed: 0,
        counts: StateCounts::default(),
    };
    for job in &overview.jobs {
        match &job.state {
            Overviewed::Read { status, .. } => {
                written.counts = written.counts.plus(StateCounts::of(&status.partitions));
            }
            Overviewed::NothingWritten => written.not_written += 1,
            Overviewed::Failed(error) => {
                written.failed += 1;
                crate::output::stderr::error(&format!("job `{}`: {}", job.job, lakewriter::error_chain(error)));
            }
        }
    }
    printer.report_written(&written)?;
    Ok(if written.failed > 0 { ExitCode::from(super::FAILED) } else { ExitCode::SUCCESS })
}
