//! `lakewriter test --junit FILE`: the outcome as JUnit XML, the report format CI systems read —
//! a `testsuite` per test, a `testcase` per check (`failure` with its detail), and a test that
//! cannot be run as written as one `testcase` with an `error`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use lakewriter::{TestReport, TestStatus};

use crate::output::TestSummary;

/// Writes `reports` as JUnit XML to `path`, replacing it.
pub fn write(path: &Path, reports: &[TestReport], summary: &TestSummary) -> Result<()> {
    std::fs::write(path, xml(reports, summary))
        .with_context(|| format!("cannot write the JUnit file {}", path.display()))
}

fn xml(reports: &[TestReport], summary: &TestSummary) -> String {
    let seconds = |ms: u64| format!("{:.3}", std::time::Duration::from_millis(ms).as_secs_f64());
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"lakewriter test\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">",
        summary.checks + summary.errors,
        summary.checks_failed,
        summary.errors,
        seconds(summary.duration_ms)
    );
    for report in reports {
        let error = report.status == TestStatus::Error;
        let failures = report.checks.iter().filter(|c| !c.passed).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{}\" time=\"{}\">",
            escape(&report.test),
            if error { 1 } else { report.checks.len() },
            usize::from(error),
            seconds(report.duration_ms)
        );
        let class = escape(&format!("{}.{}", report.job, report.test));
        if let (true, Some(message)) = (error, &report.error) {
            let _ = writeln!(out, "    <testcase classname=\"{class}\" name=\"definition\">");
            let _ =
                writeln!(out, "      <error message=\"{}\">{}</error>", escape(first_line(message)), escape(message));
            out.push_str("    </testcase>\n");
        }
        for check in &report.checks {
            let name = check.name.as_str();
            match (&check.detail, check.passed) {
                (Some(detail), false) => {
                    let _ = writeln!(out, "    <testcase classname=\"{class}\" name=\"{name}\">");
                    let (message, detail) = (escape(first_line(detail)), escape(detail));
                    let _ = writeln!(out, "      <failure message=\"{message}\">{detail}</failure>");
                    out.push_str("    </testcase>\n");
                }
                (None, false) => {
                    let _ = writeln!(out, "    <testcase classname=\"{class}\" name=\"{name}\"><failure/></testcase>");
                }
                (_, true) => {
                    let _ = writeln!(out, "    <testcase classname=\"{class}\" name=\"{name}\"/>");
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// `text` as XML 1.0 character data or attribute value: markup escaped, and the control
/// characters XML cannot hold (all but tab, line feed and carriage return) written as `?`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_and_the_control_characters_xml_cannot_hold_are_escaped() {
        assert_eq!(escape("a<b & \"c\" 'd'>\u{1}\te"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;?\te");
    }
}
