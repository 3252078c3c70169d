//! The job graph: a job depends on the jobs whose targets its SQL reads, found from the tables
//! the SQL names (no `ref()` syntax). Raw datasets, and tables no job writes, are its roots.

use std::collections::{BTreeMap, BTreeSet};

use lakewriter_compute::Query;
use serde::Serialize;

use crate::{Error, Result, Runner};

/// One job of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphJob {
    pub job: String,
    /// Its target, `schema.table`.
    pub target: String,
    /// Every table its SQL reads, `schema.table` (a name without a schema as written), sorted.
    pub reads: Vec<String>,
    /// The jobs whose targets it reads, itself aside, sorted.
    pub upstream: Vec<String>,
    /// The jobs that read its target, itself aside, sorted.
    pub downstream: Vec<String>,
    /// It reads its own target (e.g. the day before): its days run one at a time, in date order.
    pub reads_own_target: bool,
}

impl GraphJob {
    /// Why this job cannot run where the jobs `failed` failed and the jobs `not_run` were not
    /// run: its first upstream job among them. `None`: it can run.
    #[must_use]
    pub fn blocked_by(&self, failed: &BTreeSet<String>, not_run: &BTreeSet<String>) -> Option<String> {
        self.upstream.iter().find_map(|up| {
            if failed.contains(up) {
                Some(format!("its upstream job {up} failed"))
            } else {
                not_run.contains(up).then(|| format!("its upstream job {up} was not run"))
            }
        })
    }
}

/// The project's jobs in dependency order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobGraph {
    /// Every job after the jobs it reads; jobs that do not depend on each other by name.
    pub jobs: Vec<GraphJob>,
}

impl JobGraph {
    /// The graph of `jobs`, each `(name, target, tables its SQL reads)`. A cycle (two jobs or
    /// more reading each other's targets) is an error naming it.
    pub fn new(jobs: impl IntoIterator<Item = (String, String, BTreeSet<String>)>) -> Result<Self> {
        let jobs: BTreeMap<String, (String, BTreeSet<String>)> =
            jobs.into_iter().map(|(name, target, reads)| (name, (target, reads))).collect();
        // Two jobs may write one table (each its own partitions): a reader depends on both.
        let mut writers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (name, (target, _)) in &jobs {
            writers.entry(target.as_str()).or_default().push(name.as_str());
        }
        let upstream: BTreeMap<&str, BTreeSet<&str>> = jobs
            .iter()
            .map(|(name, (_, reads))| {
                let ups = reads.iter().filter_map(|t| writers.get(t.as_str())).flatten().copied().filter(|u| u != name);
                (name.as_str(), ups.collect())
            })
            .collect();
        let order = topological(&upstream)?;
        let graph = order
            .into_iter()
            .map(|name| {
                let (target, reads) = &jobs[name];
                GraphJob {
                    job: name.to_owned(),
                    target: target.clone(),
                    reads: reads.iter().cloned().collect(),
                    upstream: upstream[name].iter().map(|u| (*u).to_owned()).collect(),
                    downstream: upstream
                        .iter()
                        .filter(|(_, ups)| ups.contains(name))
                        .map(|(d, _)| (*d).to_owned())
                        .collect(),
                    reads_own_target: reads.contains(target),
                }
            })
            .collect();
        Ok(Self { jobs: graph })
    }

    /// The job named `name`.
    #[must_use]
    pub fn job(&self, name: &str) -> Option<&GraphJob> {
        self.jobs.iter().find(|j| j.job == name)
    }

    /// `name` and every job below it (reading its target, or a table read from it, and so on), in
    /// dependency order.
    #[must_use]
    pub fn with_downstream(&self, name: &str) -> Vec<&GraphJob> {
        let mut below = BTreeSet::from([name]);
        // In dependency order, a job's upstream jobs come before it.
        self.jobs
            .iter()
            .filter(|j| {
                let selected = j.job == name || j.upstream.iter().any(|u| below.contains(u.as_str()));
                if selected {
                    below.insert(&j.job);
                }
                selected
            })
            .collect()
    }
}

impl JobGraph {
    /// `names` and every job above them (whose target they read, and so on), in dependency order.
    #[must_use]
    pub fn with_upstream(&self, names: &[&str]) -> Vec<&GraphJob> {
        let mut above: BTreeSet<&str> = names.iter().copied().collect();
        // In reverse dependency order, a job's downstream jobs come before it.
        let mut jobs: Vec<&GraphJob> = self
            .jobs
            .iter()
            .rev()
            .filter(|j| {
                let selected = above.contains(j.job.as_str());
                if selected {
                    above.extend(j.upstream.iter().map(String::as_str));
                }
                selected
            })
            .collect();
        jobs.reverse();
        jobs
    }
}

/// `upstream`'s jobs, each after all of its upstream jobs; of jobs ready at once, by name. A cycle
/// is an error naming it.
fn topological<'a>(upstream: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Result<Vec<&'a str>> {
    let mut order = Vec::with_capacity(upstream.len());
    let mut placed = BTreeSet::new();
    while order.len() < upstream.len() {
        let ready: Vec<&str> = upstream
            .iter()
            .filter(|(job, ups)| !placed.contains(*job) && ups.iter().all(|u| placed.contains(u)))
            .map(|(job, _)| *job)
            .collect();
        if ready.is_empty() {
            return Err(Error::Cycle { cycle: cycle(upstream, &placed).join(" → ") });
        }
        placed.extend(ready.iter().copied());
        order.extend(ready);
    }
    Ok(order)
}

/// A cycle among the jobs not `placed`, each reading the next one's target, the first job
/// repeated at the end. Every job left has an upstream job left, so walking upstream from any of
/// them meets a job twice.
fn cycle<'a>(upstream: &BTreeMap<&'a str, BTreeSet<&'a str>>, placed: &BTreeSet<&'a str>) -> Vec<&'a str> {
    let left = |job: &str| upstream[job].iter().copied().find(|u| !placed.contains(u));
    let mut path: Vec<&str> = upstream.keys().copied().filter(|j| !placed.contains(j)).take(1).collect();
    while let Some(next) = path.last().and_then(|j| left(j)) {
        if let Some(start) = path.iter().position(|j| *j == next) {
            let mut cycle = path.split_off(start);
            cycle.push(next);
            // Written in reading order: a job, then a job that reads its target.
            cycle.reverse();
            return cycle;
        }
        path.push(next);
    }
    path
}

/// A job, its target and the tables its SQL names.
type JobReads = (String, String, BTreeSet<String>);

impl Runner {
    /// The graph of the project's jobs, from the tables each job's SQL names.
    pub fn graph(&self) -> Result<JobGraph> {
        let (jobs, mut unread) = self.tables_of_jobs();
        if let Some((_, error)) = unread.pop_first() {
            return Err(error);
        }
        JobGraph::new(jobs)
    }

    /// [`Runner::graph`], where a job whose SQL cannot be read or parsed reads nothing, and why
    /// (by job): the graph of a project with a broken job (`status`, `report`).
    pub(crate) fn graph_lenient(&self) -> Result<(JobGraph, BTreeMap<String, Error>)> {
        let (jobs, unread) = self.tables_of_jobs();
        Ok((JobGraph::new(jobs)?, unread))
    }

    /// Each job with its target and the tables it reads; and the jobs whose SQL cannot be read or
    /// parsed (without the tables they read), and why.
    fn tables_of_jobs(&self) -> (Vec<JobReads>, BTreeMap<String, Error>) {
        let workspace = self.workspace();
        let mut jobs = Vec::with_capacity(workspace.project.jobs.len());
        let mut unread = BTreeMap::new();
        for (name, spec) in &workspace.project.jobs {
            let reads = workspace.job(name).and_then(|job| {
                self.tables_read(&job.query)
                    .map_err(|source| Error::GraphSql { job: name.clone(), source: Box::new(source) })
            });
            let reads = reads.unwrap_or_else(|error| {
                unread.insert(name.clone(), error);
                BTreeSet::new()
            });
            jobs.push((name.clone(), spec.target.to_string(), reads));
        }
        (jobs, unread)
    }

    /// The tables `query` reads, as `schema.table` (a name without a schema as written).
    pub(crate) fn tables_read(&self, query: &Query) -> lakewriter_compute::Result<BTreeSet<String>> {
        let references = lakewriter_compute::table_references(self.session(), query)?;
        Ok(references
            .into_iter()
            .map(|(schema, table)| schema.map_or_else(|| table.clone(), |s| format!("{s}.{table}")))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(jobs: &[(&str, &str, &[&str])]) -> Result<JobGraph> {
        JobGraph::new(jobs.iter().map(|(name, target, reads)| {
            ((*name).to_owned(), (*target).to_owned(), reads.iter().map(|r| (*r).to_owned()).collect())
        }))
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    fn names<'a>(jobs: impl IntoIterator<Item = &'a GraphJob>) -> Vec<&'a str> {
        jobs.into_iter().map(|j| j.job.as_str()).collect()
    }

    #[test]
    fn jobs_come_after_the_jobs_whose_targets_they_read() {
        let g = graph(&[
            ("report", "r.report", &["a.weekly", "a.daily"]),
            ("weekly", "a.weekly", &["a.daily"]),
            ("daily", "a.daily", &["raw.orders"]),
            ("customers", "c.customers", &["raw.changes", "c.customers"]),
        ])
        .expect("no cycle");
        assert_eq!(names(&g.jobs), ["customers", "daily", "weekly", "report"]);
        let weekly = g.job("weekly").expect("weekly");
        assert_eq!((weekly.upstream.clone(), weekly.downstream.clone()), (vec!["daily".into()], vec!["report".into()]));
        assert!(g.job("customers").expect("customers").reads_own_target);
        assert!(g.job("customers").expect("customers").upstream.is_empty(), "a job is not its own upstream");
        assert_eq!(names(g.with_downstream("daily")), ["daily", "weekly", "report"]);
        assert_eq!(names(g.with_downstream("weekly")), ["weekly", "report"]);
        assert_eq!(names(g.with_downstream("customers")), ["customers"]);
        assert_eq!(names(g.with_upstream(&["report"])), ["daily", "weekly", "report"]);
        assert_eq!(names(g.with_upstream(&["weekly", "customers"])), ["customers", "daily", "weekly"]);
        let report = g.job("report").expect("report");
        assert_eq!(report.blocked_by(&BTreeSet::new(), &BTreeSet::new()), None);
        assert_eq!(weekly.blocked_by(&set(&["report", "customers"]), &BTreeSet::new()), None, "not upstream");
        assert_eq!(
            report.blocked_by(&set(&["daily"]), &set(&["weekly"])),
            Some("its upstream job daily failed".into())
        );
        assert_eq!(
            report.blocked_by(&BTreeSet::new(), &set(&["weekly"])),
            Some("its upstream job weekly was not run".into())
        );
    }

    #[test]
    fn a_cycle_is_an_error_that_names_it() {
        let err = graph(&[
            ("a", "s.a", &["s.c"]),
            ("b", "s.b", &["s.a"]),
            ("c", "s.c", &["s.b"]),
            ("d", "s.d", &["s.a", "raw.x"]),
            ("e", "s.e", &["raw.x"]),
        ])
        .expect_err("a cycle");
        let text = err.to_string();
        assert!(text.contains("a → b → c → a"), "{text}");
        assert!(err.is_usage());
    }
}
