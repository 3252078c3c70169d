//! A walk of every cell at once: one project holding every cell's job, run by one `backfill --all`
//! a step; then every table read by delta-rs Python and compared with DuckDB's computation of it
//! (one process each, for every table at once), the stale days run again (none may be left), every
//! day rerun (no table may change) and, locally, each job verified. What goes wrong is collected
//! by cell, and the walk fails at its end naming every cell and what went wrong there.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::cells::{Cell, Code, cells};
use super::events::{self, DAYS, RAW};
use crate::support::duckdb::expected;
use crate::support::modes::uri_of;
use crate::support::place::Place;
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{Lake, Project, Run, json_lines};

/// One `backfill --all`: with which code, over which days, and whether only the stale ones.
pub struct Step {
    pub code: Code,
    pub from: &'static str,
    pub to: &'static str,
    pub only_stale: bool,
}

const fn step(code: Code, from: &'static str, to: &'static str, only_stale: bool) -> Step {
    Step { code, from, to, only_stale }
}

const D1: &str = DAYS[0];
const D2: &str = DAYS[1];
const D3: &str = DAYS[2];
const D4: &str = DAYS[3];

/// The days in date order, written by the old code and the new in turn: a column is added (by an
/// `on_schema_change` cell's new code) before a run of the old code and after it; the last step
/// runs every stale day and the missing one with the new code.
pub const IN_ORDER: [Step; 4] = [
    step(Code::Old, D1, D1, false),
    step(Code::New, D2, D2, false),
    step(Code::Old, D3, D3, false),
    step(Code::New, D1, D4, true),
];

/// The same, the days in reverse order.
pub const OUT_OF_ORDER: [Step; 4] = [
    step(Code::Old, D4, D4, false),
    step(Code::New, D3, D3, false),
    step(Code::Old, D2, D2, false),
    step(Code::New, D1, D4, true),
];

/// A lakehouse holding every cell's table, and what went wrong in each cell so far.
pub struct Walk {
    place: Place,
    cells: Vec<Cell>,
    problems: BTreeMap<String, Vec<String>>,
}

impl Walk {
    /// The raw events and every cell's job, locally or below a prefix of the S3 test bucket.
    pub fn new(name: &str, on_s3: bool) -> Self {
        let place = if on_s3 { Place::S3(S3::new(name)) } else { Place::Local(Lake::empty(&[])) };
        events::write(&place);
        Self { place, cells: cells(), problems: BTreeMap::new() }
    }

    fn lake(&self) -> &Lake {
        self.place.lake()
    }

    /// The project with every cell's job in `code`.
    fn project(&self, code: Code) -> Project {
        self.cells.iter().fold(Project::new(), |project, cell| project.job(cell.job(code)))
    }

    fn problem(&mut self, cell: &str, what: String) {
        self.problems.entry(cell.to_owned()).or_default().push(what);
    }

    /// Runs `steps`, then compares every table with what it must hold.
    pub fn run(&mut self, steps: &[Step]) {
        for step in steps {
            let mut args = vec!["backfill", "--all", "--from", step.from, "--to", step.to];
            if step.only_stale {
                args.extend(["--only", "stale"]);
            }
            let label = format!("{} ({:?} code)", args[1..].join(" "), step.code);
            self.lake().set_project(&self.project(step.code));
            let run = self.backfill(&args);
            self.failures(&label, &run);
        }
        self.compare(steps, "after the walk");
    }

    /// `lakewriter --json ARGS…`, which may fail (exit 1) but not be refused (exit 2).
    fn backfill(&self, args: &[&str]) -> Run {
        let run = self.lake().cli(&[&["--json"][..], args].concat());
        assert!(run.code == 0 || run.code == 1, "{args:?} exited {}:\n{}", run.code, run.stderr);
        run
    }

    /// Each failed partition, job that could not start or job not run of `run`, as a problem of
    /// its cell; an exit code 1 without one, as a problem of the walk.
    fn failures(&mut self, step: &str, run: &Run) {
        let failures: Vec<(String, String)> = json_lines(run).iter().filter_map(|line| failure(step, line)).collect();
        if run.code != 0 && failures.is_empty() {
            self.problem("(the walk)", format!("{step} exited {} naming no failure:\n{}", run.code, run.stderr));
        }
        for (cell, what) in failures {
            self.problem(&cell, what);
        }
    }

    /// Every table as delta-rs Python reads it, against DuckDB's computation of it from the raw
    /// files, for the days written in the order `steps` first wrote them.
    fn compare(&mut self, steps: &[Step], when: &str) {
        let spec = spec(&self.cells, steps);
        let want = expected(&self.lake().root().join(RAW), &spec);
        let uris: Vec<String> = self.cells.iter().map(|c| uri_of(self.lake(), &c.table())).collect();
        let read = Reader::new(self.lake()).tables(&uris);
        let names: Vec<String> = self.cells.iter().map(Cell::name).collect();
        for (name, read) in names.iter().zip(read) {
            let expected = sorted(&want[name]);
            match read {
                Err(error) => self.problem(name, format!("{when}: delta-rs cannot read the table: {error}")),
                Ok(rows) => {
                    let rows = sorted(&rows);
                    if rows != expected {
                        self.problem(
                            name,
                            format!("{when}: the table differs from DuckDB's:\n{}", differences(&expected, &rows)),
                        );
                    }
                }
            }
        }
    }

    /// After `steps`: a second `backfill --only stale`, which must run no day (the first ran every
    /// stale one), then every day again, which must change no table.
    pub fn rerun(&mut self, steps: &[Step]) {
        let (from, to) = (DAYS[0], DAYS[DAYS.len() - 1]);
        let stale = self.backfill(&["backfill", "--all", "--from", from, "--to", to, "--only", "stale"]);
        for line in json_lines(&stale) {
            // (`append` skips a day it appended: such a day stays stale, and says so.)
            if line.get("partition").is_some() && line["status"] == "ok" {
                let what = format!("a second backfill --only stale ran {} again", line["partition"]);
                self.problem(line["job"].as_str().unwrap_or("?"), what);
            }
        }
        self.failures("backfill --only stale again", &stale);
        let again = self.backfill(&["backfill", "--all", "--from", from, "--to", to]);
        self.failures("a rerun of every day", &again);
        self.compare(steps, "after a rerun of every day");
    }

    /// `lakewriter verify JOB --dt DAY` of each cell (a `rebuild`'s without a date): the job's
    /// write applied twice to a scratch copy, the second changing nothing.
    pub fn verify(&mut self, day: &str) {
        let verdicts: Vec<(String, String, Run)> = self
            .cells
            .iter()
            .map(|cell| {
                let name = cell.name();
                let mut args = vec!["verify", name.as_str()];
                if cell.dated() {
                    args.extend(["--dt", day]);
                }
                let (run, said) = (self.lake().cli(&args), args.join(" "));
                (name, said, run)
            })
            .collect();
        for (name, args, run) in verdicts {
            if run.code != 0 {
                let said = [run.stdout.trim(), run.stderr.trim()].join("\n");
                self.problem(&name, format!("{args} exited {}:\n{said}", run.code));
            }
        }
    }

    /// Fails naming every cell where something went wrong, and what.
    pub fn finish(self) {
        let cells = self.cells.len();
        let Self { problems, .. } = self;
        if problems.is_empty() {
            return;
        }
        let report: Vec<String> = problems
            .iter()
            .map(|(cell, what)| format!("── {cell}\n   {}", what.join("\n   ").replace('\n', "\n   ")))
            .collect();
        panic!("{} of {cells} cells went wrong:\n{}", problems.len(), report.join("\n"));
    }
}

/// The cell and the failure a JSON line of `step` reports: a failed partition, a job that could
/// not start, a job not run.
fn failure(step: &str, line: &Value) -> Option<(String, String)> {
    let cell = |job: &Value| job.as_str().unwrap_or("?").to_owned();
    if line["status"] == "failed" {
        return Some((cell(&line["job"]), format!("{step}: {} failed: {}", line["partition"], line["error"])));
    }
    if let Some(failed) = line.get("job_failed") {
        return Some((cell(&failed["job"]), format!("{step}: the job failed: {}", failed["error"])));
    }
    line.get("not_run").map(|not_run| (cell(&not_run["job"]), format!("{step}: not run: {}", not_run["reason"])))
}

/// What DuckDB needs: the days in the order `steps` first wrote them, the days the old code wrote
/// first, and each cell's kind of write.
fn spec(cells: &[Cell], steps: &[Step]) -> Value {
    let mut first: Vec<(&str, Code)> = Vec::new();
    for step in steps {
        for day in DAYS.into_iter().filter(|d| (step.from..=step.to).contains(d)) {
            if !first.iter().any(|(d, _)| *d == day) {
                first.push((day, step.code));
            }
        }
    }
    let order: Vec<&str> = first.iter().map(|(d, _)| *d).collect();
    let old: Vec<&str> = first.iter().filter(|(_, code)| *code == Code::Old).map(|(d, _)| *d).collect();
    json!({"order": order, "old_code_days": old, "cells": cells.iter().map(Cell::spec).collect::<Vec<_>>()})
}

/// `rows` as text (keys in order), sorted: a multiset.
fn sorted(rows: &[Value]) -> Vec<String> {
    let mut rows: Vec<String> = rows
        .iter()
        .map(|row| {
            let object = row.as_object().expect("a row object");
            serde_json::to_string(&object.iter().collect::<BTreeMap<_, _>>()).expect("JSON")
        })
        .collect();
    rows.sort();
    rows
}

/// The rows only DuckDB has and the rows only the table has.
fn differences(expected: &[String], read: &[String]) -> String {
    let only = |a: &[String], b: &[String]| {
        let mut b = b.to_vec();
        a.iter()
            .filter(|row| match b.iter().position(|r| r == *row) {
                Some(i) => {
                    b.remove(i);
                    false
                }
                None => true,
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    let (missing, extra) = (only(expected, read), only(read, expected));
    let mut lines = vec![format!("{} rows expected, {} read", expected.len(), read.len())];
    lines.extend(missing.iter().map(|r| format!("- {r}")));
    lines.extend(extra.iter().map(|r| format!("+ {r}")));
    lines.join("\n")
}
