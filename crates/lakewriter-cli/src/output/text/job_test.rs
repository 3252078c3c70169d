//! `lakewriter test` as text: a line per check of each test (`PASS`/`FAIL`, the detail of a
//! failure indented below it), `ERROR` for a test that cannot be run as written, and the counts.

use std::io::{self, Write};

use lakewriter::{TestReport, TestStatus};

use super::{TextPrinter, plural};
use crate::output::TestSummary;

impl<W: Write> TextPrinter<W> {
    pub(super) fn print_test(&mut self, report: &TestReport) -> io::Result<()> {
        if let Some(error) = &report.error {
            let label = if report.status == TestStatus::Error { "ERROR" } else { "FAIL" };
            let text = format!("{} {}: {error}", self.paint(label, "31;1"), report.test);
            self.line(&text)?;
        }
        for check in &report.checks {
            let label = if check.passed { self.paint("PASS", "32;1") } else { self.paint("FAIL", "31;1") };
            let text = format!("{label} {} {}", report.test, check.name.as_str());
            self.line(&text)?;
            for line in check.detail.iter().flat_map(|d| d.lines()) {
                self.line(&format!("     {line}"))?;
            }
        }
        Ok(())
    }

    pub(super) fn print_test_summary(&mut self, s: &TestSummary) -> io::Result<()> {
        let text = format!(
            "{}: {} passed, {} failed, {} could not run; {}: {} failed ({:.1} s)",
            plural(s.tests, "test"),
            s.passed,
            s.failed,
            s.errors,
            plural(s.checks, "check"),
            s.checks_failed,
            std::time::Duration::from_millis(s.duration_ms).as_secs_f64()
        );
        self.line(&text)
    }
}
