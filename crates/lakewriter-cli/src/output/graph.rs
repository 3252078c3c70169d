//! `lakewriter graph`, and the jobs a pipeline backfill did not run.

use std::collections::BTreeMap;
use std::io;

use lakewriter::JobGraph;
use serde::Serialize;

use super::{Printer, json_line, line, plural, tagged_line};

/// The closing line of `lakewriter graph --json`.
#[derive(Serialize)]
struct GraphSummary {
    jobs: usize,
    /// Pairs (upstream job, downstream job).
    edges: usize,
}

/// A job a pipeline backfill did not run, and why.
#[derive(Serialize)]
struct NotRun<'a> {
    job: &'a str,
    reason: &'a str,
}

impl Printer {
    /// The jobs in dependency order: each with its target and the tables it reads (a job's target
    /// with the job's name), then the counts. JSON: one object per job, then `{"summary": …}`.
    pub fn graph(&self, graph: &JobGraph) -> io::Result<()> {
        let edges = graph.jobs.iter().map(|j| j.upstream.len()).sum();
        if self.json {
            for job in &graph.jobs {
                json_line(job)?;
            }
            return tagged_line("summary", &GraphSummary { jobs: graph.jobs.len(), edges });
        }
        let writer: BTreeMap<&str, &str> = graph.jobs.iter().map(|j| (j.target.as_str(), j.job.as_str())).collect();
        let width = graph.jobs.iter().map(|j| j.job.len()).max().unwrap_or(0);
        let target_width = graph.jobs.iter().map(|j| j.target.len()).max().unwrap_or(0);
        for job in &graph.jobs {
            let reads: Vec<String> = job
                .reads
                .iter()
                .map(|table| match writer.get(table.as_str()) {
                    Some(w) if *w == job.job => format!("{table} (its own target)"),
                    Some(w) => format!("{table} (job {w})"),
                    None => table.clone(),
                })
                .collect();
            let reads = if reads.is_empty() { "nothing".to_owned() } else { reads.join(", ") };
            line(&format!("{:width$}  → {:target_width$}  reads {reads}", job.job, job.target))?;
        }
        let dependencies = if edges == 1 { "1 dependency".to_owned() } else { format!("{edges} dependencies") };
        line(&format!("graph: {}, {dependencies}", plural(graph.jobs.len(), "job")))
    }

    /// A job a pipeline backfill did not run: `JOB: not run: REASON`, or `{"not_run": …}`.
    pub fn not_run(&self, job: &str, reason: &str) -> io::Result<()> {
        if self.json {
            return tagged_line("not_run", &NotRun { job, reason });
        }
        line(&format!("{job}: {}: {reason}", self.paint("not run", "33")))
    }
}
