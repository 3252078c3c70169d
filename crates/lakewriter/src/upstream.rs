//! Staleness that flows down at once: a partition computed from a stale partition of an upstream
//! job is stale too (reason `upstream_stale`, naming that partition) before the upstream day is
//! rewritten — its rows were computed from rows a rerun upstream will change. Which upstream
//! partitions a partition read is told by the files its plan reads now: a partitioned upstream
//! table's data files lie in its partition folders (`dt=2026-09-30/part-….parquet`), and a
//! `rebuild`'s table is one partition. The upstream states are found the same way, so staleness
//! flows through any number of jobs. A dated upstream job whose table has no partition column
//! (a `merge` dimension) does not tell by its files which of its days were read: it passes no
//! staleness down. Upstream days whose states a command has found already (`report` finds every
//! job's, upstream first) are taken as found, not planned again.

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use futures::FutureExt;
use futures::future::LocalBoxFuture;
use lakewriter_core::InputFile;
use lakewriter_delta::state::LogScope;

use crate::{Freshness, Job, PartitionStatus, Result, Runner, StaleReason, UpstreamPartition};

/// Partitions with the files their plans read.
type Planned = [(PartitionStatus, Vec<InputFile>)];

/// The partition states a command has found, of each job by its day (`None`: an undated job's
/// one partition), upstream staleness included; and the jobs whose states could not be found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    states: HashMap<String, HashMap<Option<NaiveDate>, PartitionStatus>>,
    failed: std::collections::HashSet<String>,
}

impl Found {
    /// Keeps the states of `job`'s `partitions`.
    pub(crate) fn keep(&mut self, job: &str, partitions: &[PartitionStatus]) {
        self.states.entry(job.to_owned()).or_default().extend(partitions.iter().map(|p| (p.dt, p.clone())));
    }

    /// Keeps that `job`'s states could not be found (its SQL does not plan): the jobs that read
    /// its table are not told stale by it, nor fail with its error — their own states stand.
    pub(crate) fn failed(&mut self, job: &str) {
        self.failed.insert(job.to_owned());
    }

    fn get(&self, job: &str, dt: Option<NaiveDate>) -> Option<&PartitionStatus> {
        self.states.get(job)?.get(&dt)
    }
}

impl Runner {
    /// Marks the written partitions of `planned` (of `job`) stale whose plans read a stale
    /// partition of an upstream job; the upstream states in `found` are taken as they are.
    pub(crate) async fn mark_upstream_stale(&self, job: &Job, planned: &mut Planned, found: &Found) -> Result<()> {
        self.mark_upstream_stale_below(job, planned, found, &mut vec![job.spec.name.clone()]).await
    }

    /// [`Runner::mark_upstream_stale`], `below` the jobs whose states are being found: a job among
    /// them (jobs that read each other's tables in a cycle, which `graph` refuses) is not asked
    /// again.
    fn mark_upstream_stale_below<'a>(
        &'a self,
        job: &'a Job,
        planned: &'a mut Planned,
        found: &'a Found,
        below: &'a mut Vec<String>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        async move {
            let upstreams: Vec<&Job> = self
                .upstream_jobs(job)
                .into_iter()
                .filter(|u| !below.contains(&u.spec.name) && !found.failed.contains(&u.spec.name))
                .collect();
            for upstream in upstreams {
                let read = partitions_read(upstream, planned);
                if read.is_empty() {
                    continue;
                }
                let name = &upstream.spec.name;
                let (mut states, mut unknown) = (Vec::new(), Vec::new());
                for &dt in read.keys() {
                    match found.get(name, dt) {
                        Some(state) => states.push(state.clone()),
                        None => unknown.push(dt),
                    }
                }
                if !unknown.is_empty() {
                    let recorded = self.recorded(upstream, LogScope::FromLastCheckpoint).await?.unwrap_or_default();
                    let mut statuses = self.partition_statuses(upstream, &recorded, unknown).await?;
                    below.push(name.clone());
                    self.mark_upstream_stale_below(upstream, &mut statuses, found, below).await?;
                    below.pop();
                    states.extend(statuses.into_iter().map(|(status, _)| status));
                }
                for status in states.into_iter().filter(|s| s.state == Freshness::Stale) {
                    let stale = UpstreamPartition { job: name.clone(), partition: status.partition };
                    for &reader in read.get(&status.dt).into_iter().flatten() {
                        let (down, _) = &mut planned[reader];
                        if down.state == Freshness::Missing {
                            continue;
                        }
                        down.state = Freshness::Stale;
                        if !down.reasons.contains(&StaleReason::UpstreamStale) {
                            down.reasons.push(StaleReason::UpstreamStale);
                        }
                        down.upstream_stale.push(stale.clone());
                        down.upstream_stale.sort();
                    }
                }
            }
            Ok(())
        }
        .boxed_local()
    }

    /// The jobs whose targets `job`'s SQL reads, itself left out.
    fn upstream_jobs(&self, job: &Job) -> Vec<&Job> {
        let Ok(read) = self.tables_read(&job.query) else { return Vec::new() };
        self.workspace()
            .jobs()
            .filter(|u| u.spec.name != job.spec.name && read.contains(&u.spec.target.to_string()))
            .collect()
    }
}

/// The partitions of `upstream`'s table that the plans of `planned` read — each by its day (`None`:
/// a `rebuild`'s whole table) — with the indices of the partitions that read it.
fn partitions_read(upstream: &Job, planned: &Planned) -> BTreeMap<Option<NaiveDate>, Vec<usize>> {
    let dir = upstream.spec.target.relative_dir();
    let mut read: BTreeMap<Option<NaiveDate>, Vec<usize>> = BTreeMap::new();
    for (reader, (_, files)) in planned.iter().enumerate() {
        for file in files {
            let Some(rest) = file.path.strip_prefix(&dir) else { continue };
            let day = match (upstream.dated(), upstream.partition_by.as_deref()) {
                (false, _) => None,
                (true, Some(column)) => match folder_day(rest, column) {
                    Some(day) => Some(day),
                    None => continue,
                },
                (true, None) => continue,
            };
            let readers = read.entry(day).or_default();
            if readers.last() != Some(&reader) {
                readers.push(reader);
            }
        }
    }
    read
}

/// The day of the partition folder `column=YYYY-MM-DD/` that `path` starts with.
fn folder_day(path: &str, column: &str) -> Option<NaiveDate> {
    let folder = path.split('/').next()?;
    folder.strip_prefix(column)?.strip_prefix('=')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::folder_day;

    #[test]
    fn a_data_file_tells_its_day_by_its_partition_folder() {
        let day = chrono::NaiveDate::from_ymd_opt(2026, 9, 30);
        assert_eq!(folder_day("dt=2026-09-30/part-00000-x.parquet", "dt"), day);
        assert_eq!(folder_day("dt=2026-09-30/part-00000-x.parquet", "d"), None, "another column");
        assert_eq!(folder_day("part-00000-x.parquet", "dt"), None, "no partition folder");
        assert_eq!(folder_day("dt=__HIVE_DEFAULT_PARTITION__/part-0.parquet", "dt"), None);
    }
}
