//! stderr: the CLI's `error:` and `note:` lines, and an error with its causes, each cause once
//! (the one place that turns an error's chain into text, on one line or on several).

use std::error::Error;
use std::sync::OnceLock;

/// The `tracing` target of the CLI's own messages (errors, notes) as log lines.
const LOG_TARGET: &str = "lakewriter::cli";

static JSON_LOGS: OnceLock<bool> = OnceLock::new();

/// With `--log-format json`, the CLI's `error:` and `note:` lines are log lines too, so that
/// stderr is JSON Lines and nothing else.
pub fn set_json_logs(on: bool) {
    let _ = JSON_LOGS.set(on);
}

fn json_logs() -> bool {
    JSON_LOGS.get().copied().unwrap_or(false)
}

pub use lakewriter::causes;

/// `error` and its [`causes`] on one line, joined by `: `.
pub fn one_line(error: &(dyn Error + 'static)) -> String {
    lakewriter::error_chain(error)
}

/// `text` and a line break on stderr. A closed stderr (`2>&1 | head -1`) loses the line, never the
/// command: its exit code stays its own (`eprintln!` would panic).
pub fn line(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `error: …` on stderr (a log line of level ERROR with `--log-format json`).
pub fn error(text: &str) {
    if json_logs() {
        tracing::error!(target: LOG_TARGET, "{text}");
    } else {
        line(&format!("error: {text}"));
    }
}

/// `note: …` on stderr: something the user should know that is not a failure.
pub fn note(text: &str) {
    if json_logs() {
        tracing::info!(target: LOG_TARGET, note = true, "{text}");
    } else {
        line(&format!("note: {text}"));
    }
}

/// A command's error on stderr: `error: …`, a `  caused by: …` line for each of its [`causes`],
/// and a hint where a fix is known; with `--log-format json`, one log line of level ERROR whose
/// `caused_by` holds the causes, joined by `; `.
pub fn error_chain(error: &anyhow::Error, hint: Option<&str>) {
    let mut texts = causes(error.as_ref()).into_iter();
    let message = texts.next().unwrap_or_default();
    let causes: Vec<String> = texts.collect();
    if json_logs() {
        let caused_by = (!causes.is_empty()).then(|| causes.join("; "));
        tracing::error!(target: LOG_TARGET, caused_by = caused_by.as_deref(), hint, "{message}");
        return;
    }
    line(&format!("error: {message}"));
    for cause in &causes {
        line(&format!("  caused by: {cause}"));
    }
    if let Some(hint) = hint {
        line(&format!("hint: {hint}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error whose message is `text` and whose source is `source`.
    #[derive(Debug)]
    struct Chained {
        text: &'static str,
        source: Option<Box<Chained>>,
    }

    impl std::fmt::Display for Chained {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.text)
        }
    }

    impl Error for Chained {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.source.as_deref().map(|e| e as &(dyn Error + 'static))
        }
    }

    fn chain(texts: &[&'static str]) -> Chained {
        let (last, rest) = texts.split_last().expect("a text");
        rest.iter()
            .rev()
            .fold(Chained { text: last, source: None }, |source, text| Chained { text, source: Some(Box::new(source)) })
    }

    #[test]
    fn a_cause_that_the_text_before_ends_with_is_left_out() {
        let error = chain(&[
            "cannot open the lakehouse catalog",
            "Generic S3 error: connection refused",
            "connection refused",
            "os error 111",
        ]);
        assert_eq!(
            causes(&error),
            ["cannot open the lakehouse catalog", "Generic S3 error: connection refused", "os error 111"]
        );
        assert_eq!(
            one_line(&error),
            "cannot open the lakehouse catalog: Generic S3 error: connection refused: os error 111"
        );
        let anyhow = anyhow::Error::new(chain(&["no Delta table at t", "t"])).context("cannot digest t");
        assert_eq!(causes(anyhow.as_ref()), ["cannot digest t", "no Delta table at t"]);
        assert_eq!(one_line(&chain(&["alone"])), "alone");
    }
}
