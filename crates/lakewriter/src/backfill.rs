//! Backfills: which days of a range run (`--shard`, `--only`), how many at once, and running them
//! with bounded concurrency.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use futures::StreamExt;
use lakewriter_core::DateRange;

use crate::run::Previous;
use crate::{Job, Only, PartitionReport, Result, Runner};

/// Which days of a range a backfill runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    pub range: DateRange,
    /// `Some((i, n))`: only the days whose day number mod `n` is `i`.
    pub shard: Option<(u32, u32)>,
    pub only: Only,
}

impl Runner {
    /// The days of `selection` to run for `job`, in date order: the range (or its shard), and
    /// for `--only stale` or `--only missing` the days whose status `only` selects — for a job
    /// that reads its own target, `--only stale` selects every day from the first stale one on,
    /// since rewriting a day changes what the next one reads.
    pub async fn select(&self, job: &Job, selection: Selection) -> Result<Vec<NaiveDate>> {
        job.require_partitions("backfill")?;
        let mut days: Vec<NaiveDate> = match selection.shard {
            Some((index, count)) => selection.range.shard(index, count).collect(),
            None => selection.range.days().collect(),
        };
        if selection.only != Only::All {
            let status = self.freshness(job, Some(selection.range)).await?;
            let selected: BTreeSet<NaiveDate> =
                status.partitions.iter().filter(|p| selection.only.selects(p)).filter_map(|p| p.dt).collect();
            match selected.first() {
                // Each day reads the one before it: rewriting a day makes every later day stale.
                Some(first) if self.reads_own_target(job) && selection.only == Only::Stale => {
                    days.retain(|d| d >= first);
                }
                _ => days.retain(|d| selected.contains(d)),
            }
        }
        Ok(days)
    }

    /// Whether `job`, which has no date partitions (`rebuild`), is one `only` selects: always for
    /// [`Only::All`], else by the state of its one partition.
    pub async fn rebuild_selected(&self, job: &Job, only: Only) -> Result<bool> {
        if only == Only::All {
            return Ok(true);
        }
        Ok(self.freshness(job, None).await?.partitions.iter().any(|p| only.selects(p)))
    }

    /// Runs `job` for every day of `days`, at most `parallel` partitions at once (default
    /// [`Job::default_parallelism`]; one where the job reads its own target), each query on its share
    /// of the cores, and calls `observe` as each
    /// finishes. A failed day does not stop
    /// the others. Where the target table does not exist yet, days run one at a time until one
    /// commit has created it, so that parallel writers never race to create a table. Returns the
    /// reports sorted by date.
    pub async fn backfill(
        &self,
        job: &Job,
        days: impl IntoIterator<Item = NaiveDate>,
        parallel: Option<usize>,
        mut observe: impl FnMut(&PartitionReport),
    ) -> Vec<PartitionReport> {
        let parallel = if self.reads_own_target(job) {
            if parallel.is_some_and(|p| p > 1) {
                tracing::warn!(job = %job.spec.name, "the job reads its own target: its days run one at a time, in date order");
            }
            1
        } else {
            parallel.unwrap_or_else(|| job.default_parallelism()).max(1)
        };
        self.share_cores(parallel);
        let mut days = days.into_iter();
        let mut reports = Vec::new();
        let (exists, state) = self.state_before_writing(job).await;
        let run = |dt: NaiveDate| {
            let state = &state;
            async move {
                match job.partition_run(Some(dt), false) {
                    Ok(run) => self.run_with_retries(&run, Previous::of(state, exists, &run.partition)).await,
                    Err(e) => PartitionReport::not_run(
                        job,
                        &lakewriter_core::PartitionRun::new(&job.spec.name, dt),
                        std::time::Instant::now(),
                        &e,
                    ),
                }
            }
        };
        // A dry run creates nothing, and so races nothing.
        if !exists && self.dry_run.is_none() {
            for dt in days.by_ref() {
                let report = run(dt).await;
                observe(&report);
                let created = report.committed;
                reports.push(report);
                if created {
                    break;
                }
            }
        }
        let mut running = futures::stream::iter(days).map(run).buffer_unordered(parallel);
        while let Some(report) = running.next().await {
            observe(&report);
            reports.push(report);
        }
        reports.sort_by_key(|r| r.dt);
        reports
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backfill splits each query across the cores the partitions in flight leave it.
    #[tokio::test]
    async fn each_partition_s_query_runs_on_its_share_of_the_cores() {
        let project = "root = \"lake\"\n[jobs.j]\ntarget = \"a.b\"\nwrite = \"overwrite_partition\"\n\
                       partition_by = \"dt\"\nsql = \"SELECT $dt AS dt\"\n";
        let (_dir, runner) = Runner::for_test(project).await;
        let job = runner.prepare("j").expect("job");
        let target_partitions = || runner.session().state().config().options().execution.target_partitions;
        let cores = std::thread::available_parallelism().expect("cores").get();

        runner.backfill(job, [], Some(cores), |_| ()).await;
        assert_eq!(target_partitions(), 1, "as many days in flight as cores: one each");
        runner.backfill(job, [], Some(1), |_| ()).await;
        assert_eq!(target_partitions(), cores, "one day at a time: all the cores");
    }
}
