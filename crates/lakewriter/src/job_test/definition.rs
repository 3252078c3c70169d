//! A test as written, read: its job, its given tables and its expectation loaded, every problem an
//! error naming the test and the key ([`crate::Error::TestDefinition`], exit code 2). `lint`
//! reports the same problems without running anything.

use std::path::Path;

use lakewriter_compute::{Finding, Rule, Severity};
use lakewriter_core::TestSpec;
use lakewriter_core::project::{Expect, Fixture};

use super::compare::Expectation;
use super::fixture::{self, Role};
use super::lakehouse::GivenTable;
use crate::{Error, Job, Result, Runner, Workspace};

/// What a test expects, read.
pub(super) enum Expected<'t> {
    Rows(Expectation),
    Error(&'t str),
    /// `--update`: the rows the job writes go to this file.
    Update(&'t Path),
}

/// A test that cannot be run as written: the key (below `tests.NAME`) and the problem.
pub(super) fn definition(test: &TestSpec, key: &str, problem: impl std::fmt::Display) -> Error {
    Error::TestDefinition {
        test: test.name.clone(),
        key: format!("tests.{}.{key}", test.name),
        problem: problem.to_string(),
    }
}

impl Workspace {
    /// `test`'s job, its given tables and what it expects (with `update`, the expect file to write).
    pub(super) async fn definition<'t>(
        &self,
        test: &'t TestSpec,
        update: bool,
    ) -> Result<(&Job, Vec<GivenTable>, Expected<'t>)> {
        if !self.project.jobs.contains_key(&test.job) {
            let known: Vec<&str> = self.project.jobs.keys().map(String::as_str).collect();
            return Err(definition(test, "job", format!("no job `{}`; jobs here: {}", test.job, known.join(", "))));
        }
        let job = self.job(&test.job).map_err(|e| definition(test, "job", crate::error_chain(&e)))?;
        match (job.dated(), test.dates.is_empty()) {
            (true, true) => {
                let problem =
                    format!("missing: job `{}` runs for a date, as in `dt = 2026-09-30` (or `dates`)", job.spec.name);
                return Err(definition(test, "dt", problem));
            }
            (false, false) => {
                let problem = format!(
                    "job `{}` (write = \"rebuild\") runs without a date: leave out `dt` and `dates`",
                    job.spec.name
                );
                return Err(definition(test, "dt", problem));
            }
            _ => {}
        }
        let ctx = lakewriter_delta::session();
        let mut given = Vec::with_capacity(test.given.len());
        for (table, spec) in &test.given {
            let key = format!("given.\"{table}\"");
            let problem = |(sub, problem): fixture::Problem| definition(test, &format!("{key}.{sub}"), problem);
            let declared = fixture::declared(&ctx, &spec.schema).map_err(problem)?;
            let rows = fixture::load(&ctx, &spec.data, &declared, Role::Given).await.map_err(problem)?;
            let delta = match self.project.jobs.values().find(|j| j.target == *table) {
                Some(owner) => Some(self.job(&owner.name)?.partition_by.iter().cloned().collect()),
                None => None,
            };
            if let (None, Some(problem)) = (&delta, super::lakehouse::unlaid(&rows)) {
                return Err(definition(test, &key, problem));
            }
            given.push(GivenTable { table: table.clone(), rows, delta });
        }
        let expected = match (&test.expect, update) {
            (Expect::Rows { data: Fixture::File(path), .. }, true) => Expected::Update(path),
            (_, true) => return Err(definition(test, "expect", "--update writes an expect file: set `expect.file`")),
            (Expect::Rows { data, tolerance, schema }, false) => {
                let problem = |(sub, problem): fixture::Problem| definition(test, &format!("expect.{sub}"), problem);
                let types = fixture::declared(&ctx, schema).map_err(problem)?;
                let rows = fixture::load(&ctx, data, &types, Role::Expected).await.map_err(problem)?;
                Expected::Rows(Expectation { rows, tolerance: *tolerance, types })
            }
            (Expect::Error(wanted), false) => Expected::Error(wanted),
        };
        Ok((job, given, expected))
    }
}

/// Refuses a given table that the job neither reads (in `runner`'s catalog) nor writes.
pub(super) fn reads_given(test: &TestSpec, job: &Job, runner: &Runner) -> Result<()> {
    // SQL whose tables cannot be read fails the run, which says why.
    let Ok(read) = runner.tables_read(&job.query) else { return Ok(()) };
    for table in test.given.keys() {
        if *table != job.spec.target && !read.contains(&table.to_string()) {
            let reads: Vec<&str> = read.iter().map(String::as_str).collect();
            let problem = format!("job `{}` does not read {table} (it reads {})", job.spec.name, reads.join(", "));
            return Err(definition(test, &format!("given.\"{table}\""), problem));
        }
    }
    Ok(())
}

impl Runner {
    /// `lint` of the tests of the job `job` (which the file need not define): each test that
    /// cannot be run as written, as an error finding (rule `test`) naming the test and the key.
    /// Nothing is run.
    pub async fn lint_tests(&self, job: &str) -> Vec<Finding> {
        let mut findings = Vec::new();
        for test in self.workspace().project.tests.values().filter(|t| t.job == job) {
            let read = match self.workspace().definition(test, false).await {
                Ok((job, _, _)) => reads_given(test, job, self),
                Err(e) => Err(e),
            };
            if let Err(error) = read {
                findings.push(Finding {
                    severity: Severity::Error,
                    rule: Rule::Test,
                    job: job.to_owned(),
                    construct: format!("test {}", test.name),
                    message: format!("test `{}`: {}", test.name, crate::error_chain(&error)),
                });
            }
        }
        findings
    }
}
