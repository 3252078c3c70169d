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

use super::log::{Failure, Txn};
use super::{CODE, CONCURRENT_READS, Detail, Recorded, app_id, apply_commit};

/// How far before a write's `lastUpdated` its commit file may be stamped (another clock: the
/// storage's), and how far after it (the commit follows the data files' upload).
const BEFORE: TimeDelta = TimeDelta::minutes(10);
const AFTER: TimeDelta = TimeDelta::minutes(30);

/// A partition whose details are sought: the code transaction the checkpoint holds for it.
struct Sought {
    partition: PartitionKey,
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
    let mut sought: Vec<Sought> = partitions
        .iter()
        .filter(|(p, r)| r.version.is_none() && wanted(p))
        .filter_map(|(p, r)| {
            let last_updated = r.written_at?.timestamp_millis();
            Some(Sought { partition: p.clone(), code: r.code, last_updated })
        })
        .collect();
    let kept: Vec<(u64, &ObjectMeta)> = commits.range(..=checkpoint).map(|(v, m)| (*v, m)).rev().collect();
    let near: BTreeSet<u64> = sought
        .iter()
        .filter_map(|s| chrono::DateTime::from_timestamp_millis(s.last_updated))
        .flat_map(|at| {
            kept.iter().filter(move |(_, m)| m.last_modified >= at - BEFORE && m.last_modified <= at + AFTER)
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
            sought.retain(|s| match found(s, job, version, &txns, &mut details) {
                Some(detail) => {
                    if let Some(recorded) = partitions.get_mut(&s.partition) {
                        recorded.version = Some(detail.version);
                        recorded.rows = detail.rows;
                        recorded.run_id = detail.run_id;
                        recorded.duration_ms = detail.duration_ms;
                    }
                    false
                }
                None => true,
            });
        }
    }
    Ok(())
}

/// The details of `sought` in the commit `version`, whose transactions and details are `txns`
/// and `details`: where that commit carried the very transaction the checkpoint holds.
fn found(
    sought: &Sought,
    job: &str,
    version: u64,
    txns: &HashMap<String, Txn>,
    details: &mut HashMap<PartitionKey, Detail>,
) -> Option<Detail> {
    let txn = txns.get(&app_id(job, &sought.partition, CODE))?;
    if txn.version != sought.code || txn.last_updated != Some(sought.last_updated) {
        return None;
    }
    details.remove(&sought.partition).filter(|d| d.version == version)
}
