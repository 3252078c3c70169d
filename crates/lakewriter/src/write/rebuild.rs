//! `rebuild`: replace the whole table, its columns included, with the result; a run without a
//! date.

use lakewriter_core::{CheckKind, WriteMode};

use super::{Mode, Replaces};

#[derive(Debug)]
pub(crate) struct Rebuild;

#[async_trait::async_trait(?Send)]
impl Mode for Rebuild {
    fn mode(&self) -> WriteMode {
        WriteMode::Rebuild
    }

    fn refuses(&self, check: &CheckKind) -> Option<String> {
        match check {
            CheckKind::Expect(condition) if condition.contains("$dt") => Some(format!(
                "checks.expect: `{condition}` uses $dt, which a rebuild (run without a date) has no value for"
            )),
            _ => None,
        }
    }

    fn dated(&self) -> bool {
        false
    }

    fn replaces(&self) -> Replaces {
        Replaces::Table
    }
}
