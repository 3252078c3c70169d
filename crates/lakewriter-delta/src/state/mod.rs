//! Partition state: what each job last wrote to each partition, kept in the table's own log.
//!
//! Every commit lakewriter makes carries, beside its data, two Delta application transactions
//! (`txn` actions) for the (job, partition) it writes:
//!
//! - `lakewriter/<job>/<partition>/code`: the code fingerprint,
//! - `lakewriter/<job>/<partition>/inputs`: the input fingerprint,
//!
//! each as its first 60 bits in the transaction's `version`, with the time of the write in
//! `lastUpdated`; and `lakewriter/<job>/<partition>/columns`, the number of the table's columns
//! after the write. A table's columns only grow at the end between commits that replace every
//! row (see `schema::evolution`), so a partition lacks the columns after that number: those
//! added since it was written. The first commit that adds columns also records
//! `lakewriter/<job>/columns-base`, the number before it, for partitions written before the
//! columns were counted. A partition also lacks the table's columns its write wrote as NULL
//! because the job's result did not have them (the job's code older than the column, say): each
//! is recorded as `lakewriter/<job>/<partition>/unwritten:<column>` (`/` and `%` in the name
//! percent-encoded), whose version is the write's time, the `lastUpdated` of its code
//! transaction — an entry of an earlier write of the partition has another, and is passed over. The Delta protocol leaves the meaning of a transaction's version to the
//! application and keeps the latest transaction of every application id in each checkpoint, so
//! the state survives checkpoints and log clean-up, and moves with the data: a commit that fails
//! records nothing. The commit's `commitInfo` holds the full fingerprints and the input list;
//! commitInfo is not kept in checkpoints: the table version, row count and run id of a write
//! older than the newest checkpoint are read, for the partitions `status` shows, from its commit
//! file while the log keeps it ([`fill_details`]), and are unknown once log clean-up has removed
//! it.
//!
//! What else a commit records — its `commitInfo`, and delta-rs's metrics in it — and the lookup of
//! a run's commit by its run id are in `commit`.
//!
//! [`read`] replays the log for these actions alone: the `txn` column of the newest checkpoint,
//! then the commits after it. It never reads data files, and its cost is one listing, one column of
//! the checkpoint, and at most a checkpoint interval of small JSON files.

mod commit;
mod details;
mod log;
mod recorded;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use deltalake::kernel::Transaction;
use futures::StreamExt;
use lakewriter_core::PartitionKey;
use lakewriter_storage::Location;
use object_store::{ObjectMeta, ObjectStoreExt};
use serde::Serialize;

use crate::{Error, Result};
pub use commit::{CheckRecord, CommitMetadata, Committed, Spread};
pub(crate) use commit::{CommitMetrics, commit_of, find_commit};
pub use log::LogScope;
use log::{Failure, Txn, apply_txn};
pub(crate) use log::{LogFile, actions, parse_log_file};
use recorded::recorded;

const CODE: &str = "code";
const INPUTS: &str = "inputs";
const COLUMNS: &str = "columns";
const COLUMNS_BASE: &str = "columns-base";
const UNWRITTEN: &str = "unwritten:";

/// Commit files read at once while replaying the log after a checkpoint.
const CONCURRENT_READS: usize = 16;

fn app_id(job: &str, partition: &PartitionKey, field: &str) -> String {
    format!("lakewriter/{job}/{partition}/{field}")
}

/// A fingerprint (hex) as a transaction version: its first 60 bits, so always positive.
#[must_use]
pub fn fingerprint_version(fingerprint: &str) -> i64 {
    let head = fingerprint.get(..15).unwrap_or(fingerprint);
    i64::from_str_radix(head, 16).unwrap_or(0)
}

/// The application transactions that record `metadata`'s state, stamped `now`, for a commit
/// after which the table has `columns` columns (`None`: not known, not recorded); none for a
/// statement's commit, which is no job's.
pub(crate) fn transactions(metadata: &CommitMetadata, columns: Option<usize>, now: DateTime<Utc>) -> Vec<Transaction> {
    if metadata.job.is_empty() {
        return Vec::new();
    }
    let at = Some(now.timestamp_millis());
    let versions = [
        Some((CODE.to_owned(), fingerprint_version(&metadata.code_fingerprint))),
        Some((INPUTS.to_owned(), fingerprint_version(&metadata.input_fingerprint))),
        columns.map(|n| (COLUMNS.to_owned(), count_version(n))),
    ];
    let unwritten = metadata.unwritten.iter().map(|column| (unwritten_field(column), now.timestamp_millis()));
    versions
        .into_iter()
        .flatten()
        .chain(unwritten)
        .map(|(field, version)| {
            Transaction::new_with_last_update(app_id(&metadata.job, &metadata.partition, &field), version, at)
        })
        .collect()
}

/// The field of the transaction recording that a write left `column` without a value: the name
/// with `%` and `/` percent-encoded, so that the application id's last `/` ends the partition.
fn unwritten_field(column: &str) -> String {
    format!("{UNWRITTEN}{}", column.replace('%', "%25").replace('/', "%2F"))
}

/// The column an [`unwritten_field`] names.
fn unwritten_column(field: &str) -> Option<String> {
    let encoded = field.strip_prefix(UNWRITTEN)?;
    Some(encoded.replace("%2F", "/").replace("%25", "%"))
}

/// The transaction that records `columns` as the number of the table's columns `partition` of
/// `job` was written with, stamped `now`.
pub(crate) fn columns_txn(job: &str, partition: &PartitionKey, columns: usize, now: DateTime<Utc>) -> Transaction {
    Transaction::new_with_last_update(
        app_id(job, partition, COLUMNS),
        count_version(columns),
        Some(now.timestamp_millis()),
    )
}

/// The application id of the number of columns `job`'s table had before a commit first added any.
pub(crate) fn columns_base_id(job: &str) -> String {
    format!("lakewriter/{job}/{COLUMNS_BASE}")
}

/// The transaction that records `columns` as the number of columns `job`'s table had before its
/// first column-adding commit, stamped `now`.
pub(crate) fn columns_base(job: &str, columns: usize, now: DateTime<Utc>) -> Transaction {
    Transaction::new_with_last_update(columns_base_id(job), count_version(columns), Some(now.timestamp_millis()))
}

/// A count as a transaction version.
fn count_version(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The application id whose presence means (job, partition) has been written.
pub(crate) fn written_marker(job: &str, partition: &PartitionKey) -> String {
    app_id(job, partition, CODE)
}

/// What the log says a job last wrote to one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recorded {
    /// [`fingerprint_version`] of the code fingerprint.
    pub code: i64,
    /// [`fingerprint_version`] of the input fingerprint.
    pub inputs: i64,
    /// The number of the table's columns after the write; for a write made before columns were
    /// counted, the number the table had before the job first added one. `None`: neither is
    /// recorded (the job has added no column since).
    pub columns: Option<u64>,
    /// The table's columns the write wrote as NULL because the job's result did not have them.
    pub unwritten: Vec<String>,
    /// When the write ran.
    pub written_at: Option<DateTime<Utc>>,
    /// The version that committed it, the rows it wrote and its run id: read for commits after
    /// the newest checkpoint, and for older ones by [`fill_details`] while the log keeps their
    /// commit files (log clean-up removes them once older than the log retention and than a
    /// checkpoint).
    pub version: Option<u64>,
    pub rows: Option<u64>,
    pub run_id: Option<String>,
    /// How long the run took from its start to its commit (the commit's `timestamp` less the
    /// run's `started_at`), known with the version where the commit records its start.
    pub duration_ms: Option<u64>,
}

impl Recorded {
    #[must_use]
    pub fn code_matches(&self, code_fingerprint: &str) -> bool {
        self.code == fingerprint_version(code_fingerprint)
    }

    #[must_use]
    pub fn inputs_match(&self, input_fingerprint: &str) -> bool {
        self.inputs == fingerprint_version(input_fingerprint)
    }

    /// Written with this code from these inputs: a run would reproduce it.
    #[must_use]
    pub fn is_fresh(&self, code_fingerprint: &str, input_fingerprint: &str) -> bool {
        self.code_matches(code_fingerprint) && self.inputs_match(input_fingerprint)
    }

    /// The columns of `table` (its columns now, in order) this partition's rows read as NULL:
    /// those added to the table since it was written, and those its write left without a value.
    #[must_use]
    pub fn lacks<'a, T: AsRef<str>>(&self, table: &'a [T]) -> Vec<&'a T> {
        let written = self.columns.and_then(|n| usize::try_from(n).ok()).unwrap_or(table.len());
        table
            .iter()
            .enumerate()
            .filter(|(i, c)| *i >= written || self.unwritten.iter().any(|u| u == c.as_ref()))
            .map(|(_, c)| c)
            .collect()
    }
}

/// The recorded state of one job's partitions in a table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobState {
    /// The table version the state was read at.
    pub version: u64,
    /// The newest checkpoint the state was read from.
    pub checkpoint: Option<u64>,
    /// The commit files listed: all the log holds with [`LogScope::Whole`] (log clean-up removes
    /// the expired ones), those from the last checkpoint on otherwise.
    pub commit_files: usize,
    /// By partition (`dt=2026-09-30`, `all`).
    pub partitions: BTreeMap<PartitionKey, Recorded>,
    /// The commit files up to the newest checkpoint that the listing found (with
    /// [`LogScope::Whole`]): where [`fill_details`] looks.
    kept: BTreeMap<u64, ObjectMeta>,
}

#[derive(Debug, Default)]
struct Detail {
    version: u64,
    rows: Option<u64>,
    run_id: Option<String>,
    duration_ms: Option<u64>,
}

/// The log folder of the table at `location` where it is a local folder.
fn local_log(location: &Location) -> Option<std::path::PathBuf> {
    location.url().to_file_path().ok().filter(|_| location.is_local()).map(|dir| dir.join("_delta_log"))
}

/// The newest version of the table at `location`, from a listing of its log from its last
/// checkpoint on; `None` where no table exists.
pub async fn latest_version(location: &Location) -> Result<Option<u64>> {
    let err = |source| Error::Read { url: location.url().clone(), source };
    let store = location.object_store().map_err(|e| err(e.into()))?;
    let log = crate::paths::folder(location.url()).map_err(|e| err(e.into()))?.join("_delta_log");
    log::latest(&store, &log, local_log(location).as_deref())
        .await
        .map_err(|(Failure::Vanished(e) | Failure::Other(e))| err(e))
}

/// Fills in the version, rows and run id of the partitions of `state` (of `job`'s, read from the
/// table at `location`) that `wanted` selects and that were written before the newest checkpoint,
/// from their commit files while the log kept them when `state` was read with [`LogScope::Whole`]
/// ([`details`]); the others are left unknown. Costs nothing where there is no such partition;
/// else a read of the commit files of those writes (a file removed since is passed over).
pub async fn fill_details(
    location: &Location,
    job: &str,
    state: &mut JobState,
    wanted: &(dyn Fn(&PartitionKey) -> bool + Sync),
) -> Result<()> {
    let Some(checkpoint) = state.checkpoint else { return Ok(()) };
    if !state.partitions.iter().any(|(p, r)| r.version.is_none() && wanted(p)) {
        return Ok(());
    }
    let err = |source| Error::Read { url: location.url().clone(), source };
    let store = location.object_store().map_err(|e| err(e.into()))?;
    details::fill(&store, &state.kept, checkpoint, job, &mut state.partitions, wanted)
        .await
        .map_err(|(Failure::Vanished(e) | Failure::Other(e))| err(e))
}

/// Reads the recorded state of `job`'s partitions from the Delta log of the table at
/// `location`, listing as much of the log as `scope` says; `None` where no table exists.
pub async fn read(location: &Location, job: &str, scope: LogScope) -> Result<Option<JobState>> {
    // Log clean-up may remove a file between the listing and its read: list again.
    let mut attempts = 0;
    loop {
        match read_once(location, job, scope).await {
            Err(Failure::Vanished(_)) if attempts < 3 => attempts += 1,
            Err(Failure::Vanished(e) | Failure::Other(e)) => {
                return Err(Error::Read { url: location.url().clone(), source: e });
            }
            Ok(state) => return Ok(state),
        }
    }
}

async fn read_once(location: &Location, job: &str, scope: LogScope) -> Result<Option<JobState>, Failure> {
    let store = location.object_store().map_err(|e| Failure::Other(e.into()))?;
    let log = crate::paths::folder(location.url()).map_err(|e| Failure::Other(e.into()))?.join("_delta_log");
    let Some(listing) = log::list(&store, &log, local_log(location).as_deref(), scope).await? else { return Ok(None) };
    let prefix = format!("lakewriter/{job}/");
    let mut txns: HashMap<String, Txn> = HashMap::new();
    let start = match &listing.checkpoint {
        Some((version, parts)) => {
            for meta in parts {
                log::read_checkpoint_txns(&store, meta, &prefix, &mut txns).await?;
            }
            version + 1
        }
        None => 0,
    };
    let latest = listing.latest;
    if let Some(gap) = (start..=latest).find(|v| !listing.commits.contains_key(v)) {
        let message = format!("the Delta log has no commit {gap} and no checkpoint after it");
        return Err(Failure::Other(message.into()));
    }
    let mut details: HashMap<PartitionKey, Detail> = HashMap::new();
    let mut reads = futures::stream::iter(listing.commits.range(start..).map(|(v, meta)| {
        let store = store.clone();
        let path = meta.location.clone();
        async move { Ok::<_, Failure>((*v, store.get(&path).await?.bytes().await?)) }
    }))
    .buffered(CONCURRENT_READS);
    while let Some(read) = reads.next().await {
        let (version, bytes) = read?;
        apply_commit(version, &bytes, job, &prefix, &mut txns, &mut details);
    }
    drop(reads);
    let base = txns.get(&columns_base_id(job)).and_then(|t| u64::try_from(t.version).ok());
    let partitions = recorded(txns, details, &prefix, base);
    let (checkpoint, commit_files) = (listing.checkpoint.map(|(v, _)| v), listing.commits.len());
    let kept = match (scope, checkpoint) {
        (LogScope::Whole, Some(checkpoint)) => listing.commits.into_iter().filter(|(v, _)| *v <= checkpoint).collect(),
        _ => BTreeMap::new(),
    };
    Ok(Some(JobState { version: latest, checkpoint, commit_files, partitions, kept }))
}

/// Applies one commit file's `txn` actions (of `job`) and its lakewriter `commitInfo`.
fn apply_commit(
    version: u64,
    bytes: &[u8],
    job: &str,
    prefix: &str,
    txns: &mut HashMap<String, Txn>,
    details: &mut HashMap<PartitionKey, Detail>,
) {
    for action in actions(bytes) {
        if apply_txn(&action, Some(version), prefix, txns) {
            continue;
        }
        if let Some(info) = action.get("commitInfo")
            && let Some(ours) = info.get("lakewriter").filter(|m| m["job"].as_str() == Some(job))
            && let Some(Ok(partition)) = ours["partition"].as_str().map(str::parse::<PartitionKey>)
        {
            let rows = CommitMetrics::of(info).rows;
            let run_id = ours["run_id"].as_str().map(str::to_owned);
            let duration_ms = match (info["timestamp"].as_i64(), ours["started_at"].as_i64()) {
                (Some(committed), Some(started)) => u64::try_from(committed - started).ok(),
                _ => None,
            };
            details.insert(partition, Detail { version, rows, run_id, duration_ms });
        }
    }
}

#[cfg(test)]
mod tests;
