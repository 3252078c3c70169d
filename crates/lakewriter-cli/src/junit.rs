//! `lakewriter test --junit FILE`: the outcome as JUnit XML, the report format CI systems read —
//! a `testsuite` per test, a `testcase` per check (`failure` with its detail), and a test that
//! cannot be run as written (`definition`) or could not finish (`run`) as a `testcase` with an
//! `error`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use lakewriter::{TestReport, TestStatus};

use crate::markup::escape;
use crate::output::TestSummary;

/// Writes `reports` as JUnit XML to `path`, replacing it.
pub fn write(path: &Path, reports: &[TestReport], summary: &TestSummary) -> Result<()> {
    std::fs::write(path, xml(reports, summary))
        .with_context(|| format!("cannot write the JUnit file {}", path.display()))
}

/// How a JUnit `testcase` ended.
enum Case<'a> {
    Passed,
    /// A check failed: its detail.
    Failure(&'a str),
    /// The test could not be run (as written, or to its end): why.
    Error(&'a str),
}

/// The `testcase`s of `report`: one per check, and one for why it could not run or finish.
fn cases(report: &TestReport) -> Vec<(&str, Case<'_>)> {
    let why = match (&report.error, report.status) {
        (Some(error), TestStatus::Error) => Some(("definition", Case::Error(error))),
        (Some(error), _) => Some(("run", Case::Error(error))),
        (None, _) => None,
    };
    let checks = report.checks.iter().map(|c| {
        let case = if c.passed { Case::Passed } else { Case::Failure(c.detail.as_deref().unwrap_or_default()) };
        (c.name.as_str(), case)
    });
    why.into_iter().chain(checks).collect()
}

fn xml(reports: &[TestReport], summary: &TestSummary) -> String {
    let seconds = |ms: u64| format!("{:.3}", std::time::Duration::from_millis(ms).as_secs_f64());
    let cases: Vec<Vec<(&str, Case<'_>)>> = reports.iter().map(cases).collect();
    let count = |cases: &[(&str, Case<'_>)], failure: bool| {
        cases.iter().filter(|(_, c)| matches!((c, failure), (Case::Failure(_), true) | (Case::Error(_), false))).count()
    };
    let (tests, failures, errors) =
        cases.iter().fold((0, 0, 0), |(t, f, e), c| (t + c.len(), f + count(c, true), e + count(c, false)));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"lakewriter test\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{}\">",
        seconds(summary.duration_ms)
    );
    for (report, cases) in reports.iter().zip(&cases) {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">",
            escape(&report.test),
            cases.len(),
            count(cases, true),
            count(cases, false),
            seconds(report.duration_ms)
        );
        let class = escape(&format!("{}.{}", report.job, report.test));
        for (name, case) in cases {
            let (element, text) = match case {
                Case::Passed => {
                    let _ = writeln!(out, "    <testcase classname=\"{class}\" name=\"{name}\"/>");
                    continue;
                }
                Case::Failure(text) => ("failure", text),
                Case::Error(text) => ("error", text),
            };
            let _ = writeln!(out, "    <testcase classname=\"{class}\" name=\"{name}\">");
            let (message, text) = (escape(first_line(text)), escape(text));
            let _ = writeln!(out, "      <{element} message=\"{message}\">{text}</{element}>");
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
