//! The details of a write older than the newest checkpoint — its table version, rows, run id and
//! duration.
//! A checkpoint keeps each partition's transactions but not the `commitInfo` that holds those;
//! the commit file that carried them lasts until log clean-up removes it. It is the kept commit
//! whose transaction for the partition has the same version and `lastUpdated` as the
//! checkpoint's: the commits written near that time are read first, then the other kept ones,
//! newest first, until every partition is found or none is left.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use chrono::TimeDelta;
use lakewriter_core::PartitionKey;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};

use super::log::Failure;
use super::{CODE, CONCURRENT_READS, Recorded, app_id, apply_commit};

/// How far before a write's `lastUpdated` its commit file may be stamped (another clock: the
/// storage's), and how far after it (the commit follows the data files' upload).
const BEFORE: TimeDelta = TimeDelta::minutes(10);
const AFTER: TimeDelta = TimeDelta::minutes(30);

/// What is sought of a partition's details: the code transaction the checkpoint holds for it.
struct Sought {
    code: i64,
    last_updated: i64,
}

/// Fills in the version, rows and run id of the partitions of `partitions` that `wanted` selects
/// and that have none, from the commit files of `commits` up to `checkpoint`.
pub(super) async fn fill(
    store: &Arc<dyn ObjectStore>,
    commits: &BTreeMap<u64, ObjectMeta>,
    checkpoint: u64,
    job: &str,
    partitions: &mut BTreeMap<PartitionKey, Recorded>,
    wanted: &(dyn Fn(&PartitionKey) -> bool + Sync),
) -> Result<(), Failure> {
    let mut sought: HashMap<PartitionKey, Sought> = partitions
        .iter()
        .filter(|(p, r)| r.version.is_none() && wanted(p))
        .filter_map(|(p, r)| {
            let last_updated = r.written_at?.timestamp_millis();
            Some((p.clone(), Sought { code: r.code, last_updated }))
        })
        .collect();
    let kept: Vec<(u64, &ObjectMeta)> = commits.range(..=checkpoint).map(|(v, m)| (*v, m)).rev().collect();
    // The commits stamped near each write's time, found in the kept commits sorted by stamp.
    let mut by_time: Vec<(u64, &ObjectMeta)> = kept.clone();
    by_time.sort_by_key(|(_, m)| m.last_modified);
    let near: BTreeSet<u64> = sought
        .values()
        .filter_map(|s| chrono::DateTime::from_timestamp_millis(s.last_updated))
        .flat_map(|at| {
            let first = by_time.partition_point(|(_, m)| m.last_modified < at - BEFORE);
            by_time[first..].iter().take_while(move |(_, m)| m.last_modified <= at + AFTER)
        })
        .map(|(v, _)| *v)
        .collect();
    let order: Vec<(u64, &ObjectMeta)> = kept
        .iter()
        .filter(|(v, _)| near.contains(v))
        .chain(kept.iter().filter(|(v, _)| !near.contains(v)))
        .copied()
        .collect();
    let prefix = format!("lakewriter/{job}/");
    for batch in order.chunks(CONCURRENT_READS) {
        if sought.is_empty() {
            break;
        }
        // A file that log clean-up removed since the listing holds nothing to find any more.
        let reads = batch.iter().map(|(version, meta)| async move {
            match store.get(&meta.location).await {
                Ok(got) => Ok(Some((*version, got.bytes().await?))),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(Failure::from(e)),
            }
        });
        for (version, bytes) in futures::future::try_join_all(reads).await?.into_iter().flatten() {
            let (mut txns, mut details) = (HashMap::new(), HashMap::new());
            apply_commit(version, &bytes, job, &prefix, &mut txns, &mut details);
            // Each partition this commit wrote, where the checkpoint holds that very write.
            for (partition, detail) in details {
                let Some(s) = sought.get(&partition) else { continue };
                let Some(txn) = txns.get(&app_id(job, &partition, CODE)) else { continue };
                if detail.version != version || txn.version != s.code || txn.last_updated != Some(s.last_updated) {
                    continue;
                }
                if let Some(recorded) = partitions.get_mut(&partition) {
                    recorded.version = Some(detail.version);
                    recorded.rows = detail.rows;
                    recorded.run_id = detail.run_id;
                    recorded.duration_ms = detail.duration_ms;
                }
                sought.remove(&partition);
            }
        }
    }
    Ok(())
}
