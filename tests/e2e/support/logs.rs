//! The binary's `--log-format json` stderr, read into typed lines: the phase a run enters (its
//! phase events, `lakewriter::phase`), the spans it opens, and the CLI's own error.

use lakewriter_core::Phase;
use serde::Deserialize;

/// One line of a run's JSON log.
#[derive(Debug, Clone, Deserialize)]
pub struct LogLine {
    pub timestamp: String,
    pub level: String,
    pub fields: Fields,
    /// The span the line was logged in (a span's opening: that span), with its name and fields.
    pub span: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The fields of a [`LogLine`] that the tests read.
#[derive(Debug, Clone, Deserialize)]
pub struct Fields {
    pub message: Option<String>,
    /// Set on a phase event: the phase the run enters.
    pub phase: Option<Phase>,
}

impl LogLine {
    /// `line` read as a JSON log line; `None` for a line that is not one.
    pub fn parse(line: &str) -> Option<Self> {
        serde_json::from_str(line).ok()
    }

    /// The phase this line says the run enters, where it is a phase event.
    pub fn phase(&self) -> Option<Phase> {
        self.fields.phase
    }

    /// Whether this line is the opening of the span named `name`.
    pub fn opens(&self, name: &str) -> bool {
        self.fields.message.as_deref() == Some("new")
            && self.span.as_ref().and_then(|s| s.get("name")).and_then(serde_json::Value::as_str) == Some(name)
    }

    /// The field `key` of the span the line was logged in (`job`, `partition`, `run_id`).
    pub fn span_field(&self, key: &str) -> Option<&str> {
        self.span.as_ref()?.get(key)?.as_str()
    }

    /// The message of a line of level ERROR: the CLI's own error.
    pub fn error(&self) -> Option<&str> {
        (self.level == "ERROR").then_some(self.fields.message.as_deref()).flatten()
    }
}

/// Each line of `stderr` as a JSON log line; panics naming a line that is not one.
pub fn log_lines(stderr: &str) -> Vec<LogLine> {
    stderr.lines().map(|line| LogLine::parse(line).unwrap_or_else(|| panic!("not a JSON log line: {line}"))).collect()
}
