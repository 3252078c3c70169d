//! `lakewriter test [NAME…] [--job JOB] [--junit FILE] [--update]`: the project's job tests.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use lakewriter::{TestSpec, Workspace};

use crate::cli::{Global, TestArgs};
use crate::output::{Output, TestSummary};

/// Runs the selected tests one after the other, each line as it ends, then the summary (and the
/// JUnit file). Exit 2 where a test cannot be run as written, else 1 where a check failed.
pub async fn test(global: &Global, printer: &mut dyn Output, args: TestArgs) -> Result<ExitCode> {
    // Its jobs run in scratch lakehouses: the project's root and storage options are not used.
    // On the engine where one is chosen: its executors read and write the scratch lakehouses, a
    // local folder.
    let workspace = super::engine::chosen(global, Workspace::load_without_root(global.project.as_deref())?)?;
    let tests = selected(&workspace, &args)?;
    let started = Instant::now();
    let mut reports = Vec::with_capacity(tests.len());
    for test in tests {
        let report = workspace.run_test(test, args.update).await;
        printer.test_done(&report)?;
        reports.push(report);
    }
    let summary = TestSummary::of(&reports, lakewriter::elapsed_ms(started));
    printer.tests_done(&summary)?;
    if let Some(path) = &args.junit {
        crate::junit::write(path, &reports, &summary)?;
    }
    Ok(if summary.errors > 0 {
        ExitCode::from(super::USAGE)
    } else if summary.failed > 0 {
        ExitCode::from(super::FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The tests the arguments name (every test where they name none), in name order.
fn selected<'w>(workspace: &'w Workspace, args: &TestArgs) -> Result<Vec<&'w TestSpec>> {
    let tests = &workspace.project.tests;
    if let Some(job) = &args.job {
        workspace.spec(job)?;
    }
    if args.update && args.tests.is_empty() && args.job.is_none() {
        return Err(lakewriter::Error::Usage("--update rewrites expect files: name the tests (or --job)".into()).into());
    }
    for name in &args.tests {
        if !tests.contains_key(name) {
            let known: Vec<&str> = tests.keys().map(String::as_str).collect();
            let message = if known.is_empty() {
                format!("no test `{name}`: the project file defines no [tests.NAME]")
            } else {
                format!("no test `{name}`; tests here: {}", known.join(", "))
            };
            return Err(lakewriter::Error::Usage(message).into());
        }
    }
    Ok(tests
        .values()
        .filter(|t| args.tests.is_empty() || args.tests.contains(&t.name))
        .filter(|t| args.job.as_ref().is_none_or(|job| &t.job == job))
        .collect())
}
