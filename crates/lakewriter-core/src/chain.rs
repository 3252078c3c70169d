//! An error as the text a user reads: its message, then each of its causes once, and never a
//! backtrace. Some errors carry one in their own text — the Delta kernel's, once
//! `RUST_BACKTRACE` is set, end their message with the frames of where they were made, and
//! DataFusion's do after `backtrace: ` when built with its `backtrace` feature —; [`causes`] leaves
//! it out, and [`backtrace`] gives it to whoever logs it.

/// The text of `error`, then of each of its causes, leaving out a cause that the text before it
/// already ends with: the store's and delta-rs's errors repeat their source in their own message.
/// A backtrace in any of them is left out (see [`backtrace`]). The one rule by which every error
/// becomes text, in reports and on stderr.
#[must_use]
pub fn causes(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut texts = vec![without_backtrace(&error.to_string()).0];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = without_backtrace(&cause.to_string()).0;
        if !texts.last().is_some_and(|before| before.ends_with(&text)) {
            texts.push(text);
        }
        source = cause.source();
    }
    texts
}

/// An error and its [`causes`], joined by `: `.
#[must_use]
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    causes(error).join(": ")
}

/// The backtrace the text of `error`, or of one of its causes, carries: what [`causes`] leaves
/// out, for a debug log.
#[must_use]
pub fn backtrace(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let (_, Some(frames)) = without_backtrace(&error.to_string()) {
            return Some(frames);
        }
        next = error.source();
    }
    None
}

/// What begins DataFusion's backtrace in an error's text; all after it is the backtrace.
const DATAFUSION_BACKTRACE: &str = "\n\nbacktrace: ";

/// `text` without the backtrace it carries, and that backtrace: DataFusion's, after
/// [`DATAFUSION_BACKTRACE`], or the lines of a Rust backtrace as `std::backtrace::Backtrace`
/// prints it — from a line `0: …` on, each frame's line `N: function` and its `at file:line`.
fn without_backtrace(text: &str) -> (String, Option<String>) {
    let (text, mut frames) = match text.split_once(DATAFUSION_BACKTRACE) {
        Some((text, frames)) => (text, vec![frames.to_owned()]),
        None => (text, Vec::new()),
    };
    let mut kept = Vec::new();
    let mut in_frames = false;
    for line in text.split('\n') {
        let trimmed = line.trim_start();
        let frame = trimmed.split_once(": ").and_then(|(n, _)| n.parse::<u32>().ok());
        in_frames = match frame {
            Some(0) => true,
            Some(_) => in_frames,
            None => in_frames && trimmed.starts_with("at ") && line.len() > trimmed.len(),
        };
        if in_frames { frames.push(line.to_owned()) } else { kept.push(line) }
    }
    if frames.is_empty() {
        return (text.to_owned(), None);
    }
    (kept.join("\n").trim_end().to_owned(), Some(frames.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Delta kernel's error with a backtrace (`"{source}\n{backtrace}"`), whose source is the
    /// error without it.
    #[derive(Debug)]
    struct Backtraced(&'static str, Plain);

    #[derive(Debug)]
    struct Plain(&'static str);

    impl std::fmt::Display for Plain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Plain {}

    impl std::fmt::Display for Backtraced {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}\n{}", self.1, self.0)
        }
    }

    impl std::error::Error for Backtraced {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.1)
        }
    }

    const FRAMES: &str = "   0: buoyant_kernel::error::Error::with_backtrace\n   1: core::ops::function::FnMut::call_mut\n  \
                          12: <T as futures_util::fns::FnMut1<A>>::call_mut\n             at ./src/lib.rs:10:5\n  \
                          13: start_thread";

    #[test]
    fn a_backtrace_in_an_error_s_text_is_left_out_and_given_apart() {
        let error = Backtraced(FRAMES, Plain("Json error: unexpected 'o'"));
        assert_eq!(causes(&error), ["Json error: unexpected 'o'"], "the cause it repeats is left out too");
        assert_eq!(backtrace(&error).as_deref(), Some(FRAMES));
        assert_eq!(backtrace(&Plain("no frames: 0 rows")), None);
    }

    #[test]
    fn datafusion_s_backtrace_is_left_out() {
        let (text, frames) = without_backtrace("Execution error: x\n\nbacktrace: 0: a\n   at b.rs");
        assert_eq!((text.as_str(), frames.as_deref()), ("Execution error: x", Some("0: a\n   at b.rs")));
    }

    #[test]
    fn lines_of_a_message_are_kept() {
        let text = "Schema error: No field named nope.\nValid fields are a, b.\n2: not a frame";
        assert_eq!(without_backtrace(text), (text.to_owned(), None));
    }
}
