//! `lakewriter lint [JOB]`: the determinism checks of one job or all.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::{Runner, Severity};

use crate::cli::{Global, LintArgs};
use crate::output::{LintCounts, Output, stderr};

/// Lints one job or all — and each job's tests, which must be runnable as written (rule
/// `test`) —: each finding on stdout, then the counts. Exit 1 on an error finding or
/// a job whose SQL cannot be planned (reported on stderr; the other jobs are still checked). A
/// job that reads a job's table not written yet is checked once it is (a note on stderr).
pub async fn lint(global: &Global, printer: &mut dyn Output, args: LintArgs) -> Result<ExitCode> {
    let runner = super::open_runner(global).await?;
    let names: Vec<String> = match &args.job {
        Some(name) => vec![runner.workspace().spec(name)?.name.clone()],
        None => runner.workspace().project.jobs.keys().cloned().collect(),
    };
    let mut counts = LintCounts { jobs: names.len(), ..LintCounts::default() };
    for name in &names {
        match lint_job(&runner, name).await {
            Ok(findings) => {
                for finding in &findings {
                    found(printer, &mut counts, finding)?;
                }
            }
            Err(e) if e.waits_for_upstream() => {
                counts.waiting += 1;
                stderr::note(&format!("{name}: checked once the tables it reads exist: {}", stderr::one_line(&e)));
            }
            Err(e) => {
                counts.unchecked += 1;
                stderr::error(&stderr::one_line(&e));
            }
        }
        for finding in &runner.lint_tests(name).await {
            found(printer, &mut counts, finding)?;
        }
    }
    // The tests of jobs the file does not define (a job renamed, its test not).
    if args.job.is_none() {
        let jobs = &runner.workspace().project.jobs;
        let orphans: std::collections::BTreeSet<&str> = runner
            .workspace()
            .project
            .tests
            .values()
            .map(|t| t.job.as_str())
            .filter(|j| !jobs.contains_key(*j))
            .collect();
        for job in orphans {
            for finding in &runner.lint_tests(job).await {
                found(printer, &mut counts, finding)?;
            }
        }
    }
    printer.lint_counts(&counts)?;
    Ok(if counts.errors > 0 || counts.unchecked > 0 { ExitCode::from(super::FAILED) } else { ExitCode::SUCCESS })
}

/// Prints `finding` and counts it.
fn found(printer: &mut dyn Output, counts: &mut LintCounts, finding: &lakewriter::Finding) -> Result<()> {
    match finding.severity {
        Severity::Error => counts.errors += 1,
        Severity::Warning => counts.warnings += 1,
    }
    printer.finding(finding)?;
    Ok(())
}

async fn lint_job(runner: &Runner, name: &str) -> lakewriter::Result<Vec<lakewriter::Finding>> {
    runner.lint(runner.prepare(name)?).await
}
