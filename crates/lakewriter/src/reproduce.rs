//! Reproducing a lakehouse from raw: which jobs a reproduction rebuilds, and which of their days.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use lakewriter_core::DateRange;
use lakewriter_delta::state::LogScope;

use crate::{JobGraph, Result, Runner, Stage};

impl Runner {
    /// What reproducing `selected` (every job where empty) rebuilds, read from this runner's
    /// (the live lakehouse's) partition state: the jobs and every job above them, in dependency
    /// order, each over exactly the days it has written here — those in `range` where given. A
    /// job that another job of the reproduction reads is rebuilt over every day it has written up
    /// to the range's end, so that every day the jobs below it read (a window reaches back) is
    /// there to read; so is a table without a partition column (a merge target), which holds every
    /// day it merged. A job that has written no day here has nothing to rebuild (its `days` are
    /// empty).
    pub async fn reproduction<'g>(
        &self,
        graph: &'g JobGraph,
        selected: &[&str],
        range: Option<DateRange>,
    ) -> Result<Vec<Stage<'g>>> {
        let jobs = if selected.is_empty() { graph.jobs.iter().collect() } else { graph.with_upstream(selected) };
        let mut plan = Vec::with_capacity(jobs.len());
        for &job in &jobs {
            let prepared = self.prepare(&job.job)?;
            if !prepared.dated() {
                plan.push(Stage::over(job, None));
                continue;
            }
            let state = self.recorded(prepared, LogScope::Whole).await?.unwrap_or_default();
            let written = state.partitions.keys().filter_map(lakewriter_core::PartitionKey::date);
            let whole = prepared.partition_by.is_none();
            let read_below = whole || jobs.iter().any(|j| j.upstream.contains(&job.job));
            let wanted = |day: &NaiveDate| match range {
                None => true,
                Some(range) if read_below => *day <= range.to(),
                Some(range) => range.contains(*day),
            };
            let days: BTreeSet<NaiveDate> = written.filter(wanted).collect();
            let range = match (days.first(), days.last()) {
                (Some(first), Some(last)) => DateRange::new(*first, *last).ok(),
                _ => None,
            };
            plan.push(Stage { job, range, days: Some(days) });
        }
        Ok(plan)
    }
}

/// The first failure of a quiet reproduction, for its error.
#[derive(Default)]
struct FirstFailure(Option<String>);

impl crate::PipelineObserver for FirstFailure {
    fn job_started(&mut self, _: &crate::Job, _: usize) {}
    fn partition_done(&mut self, report: &crate::PartitionReport) {
        if let (None, Some(error)) = (&self.0, &report.error) {
            self.0 = Some(format!("{} {}: {error}", report.job, report.partition));
        }
    }
    fn job_done(&mut self, _: &crate::Job, _: &[crate::PartitionReport], _: &crate::Summary) {}
    fn nothing_to_run(&mut self, _: &crate::Job, _: crate::Only, _: Option<DateRange>) {}
    fn not_run(&mut self, job: &str, reason: &str) {
        self.0.get_or_insert_with(|| format!("{job} was not run: {reason}"));
    }
    fn job_failed(&mut self, job: &str, error: &crate::Error) {
        self.0.get_or_insert_with(|| format!("{job}: {}", crate::error_chain(error)));
    }
}

impl Runner {
    /// Reproduces `selected` (every job where empty) as [`Runner::reproduction`] says into a new
    /// local scratch folder, quietly; the folder (removed when dropped) and the workspace over it.
    /// A reproduction that fails is an error naming its first failure.
    pub async fn reproduce_in_scratch(
        &self,
        graph: &JobGraph,
        selected: &[&str],
        range: Option<DateRange>,
    ) -> Result<(tempfile::TempDir, crate::Workspace)> {
        let scratch = tempfile::Builder::new()
            .prefix("lakewriter-reproduction-")
            .tempdir()
            .map_err(|source| crate::Error::Scratch { from: std::env::temp_dir(), source })?;
        let root = scratch
            .path()
            .to_str()
            .ok_or_else(|| crate::Error::Usage("a temporary folder that is not UTF-8".into()))?;
        let workspace = self.workspace().with_root(root, "the scratch folder")?;
        let plan = self.reproduction(graph, selected, range).await?;
        tracing::info!(root = %workspace.root.url(), jobs = plan.len(), "reproducing into a scratch folder");
        let runner = Runner::open_with_inputs(workspace.clone(), self.workspace().root.clone()).await?;
        let mut failure = FirstFailure::default();
        let outcome = runner.pipeline(&plan, (crate::Only::All, None), None, &mut failure).await;
        if !outcome.is_ok() {
            let first = failure.0.unwrap_or_else(|| "a job failed".into());
            return Err(crate::Error::Reproduction { first });
        }
        Ok((scratch, workspace))
    }
}
