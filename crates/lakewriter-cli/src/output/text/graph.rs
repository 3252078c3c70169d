//! `lakewriter graph` as text.

use std::collections::BTreeMap;
use std::io::{self, Write};

use lakewriter::JobGraph;

use super::{TextPrinter, plural};

impl<W: Write> TextPrinter<W> {
    /// The jobs in dependency order: each with its target and the tables it reads (a job's target
    /// with the job's name), then the counts.
    pub(super) fn print_graph(&mut self, graph: &JobGraph) -> io::Result<()> {
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
            self.line(&format!("{:width$}  → {:target_width$}  reads {reads}", job.job, job.target))?;
        }
        let edges: usize = graph.jobs.iter().map(|j| j.upstream.len()).sum();
        let dependencies = if edges == 1 { "1 dependency".to_owned() } else { format!("{edges} dependencies") };
        self.line(&format!("graph: {}, {dependencies}", plural(graph.jobs.len(), "job")))
    }
}
