//! Partition state: what each job last wrote to each partition, kept in the table's own log.
//!
//! Every commit lakewriter makes carries, beside its data, two Delta application transactions
//! (`txn` actions) for the (job, partition) it writes:
//!
//! - `lakewriter/<job>/<partition>/code`: the code fingerprint,
//! - `lakewriter/<job>/<partition>/inputs`: the input fingerprint,
//!
//! each as its first 60 bits in the transaction's `version`, with the time of the write in
//! `lastUpdated`. The Delta protocol leaves the meaning of a transaction's version to the
//! application and keeps the latest transaction of every application id in each checkpoint, so
//! the state survives checkpoints and log clean-up, and moves with the data: a commit that fails
//! records nothing. The commit's `commitInfo` holds the full fingerprints and the input list;
//! commitInfo is not kept in checkpoints, so only the commits after the newest checkpoint add
//! the table version and row count of a write.
//!
//! [`read`] replays the log for these actions alone: the `txn` column of the newest checkpoint,
//! then the commits after it. It never reads data files, and its cost is one listing, one column of
//! the checkpoint, and at most a checkpoint interval of small JSON files.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use deltalake::kernel::Transaction;
use futures::StreamExt;
use lakewriter_storage::Location;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::Serialize;
use serde_json::Value;

use lakewriter_core::PartitionKey;

use crate::{CommitMetadata, Error, Result};

const CODE: &str = "code";
const INPUTS: &str = "inputs";

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

/// The application transactions that record `metadata`'s state, stamped `now`.
pub(crate) fn transactions(metadata: &CommitMetadata, now: DateTime<Utc>) -> Vec<Transaction> {
    let at = Some(now.timestamp_millis());
    [(CODE, &metadata.code_fingerprint), (INPUTS, &metadata.input_fingerprint)]
        .into_iter()
        .map(|(field, fp)| {
            Transaction::new_with_last_update(
                app_id(&metadata.job, &metadata.partition, field),
                fingerprint_version(fp),
                at,
            )
        })
        .collect()
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
    /// When the write ran.
    pub written_at: Option<DateTime<Utc>>,
    /// The version that committed it, the rows it wrote and its run id: known while its commit
    /// is newer than the table's newest checkpoint.
    pub version: Option<u64>,
    pub rows: Option<u64>,
    pub run_id: Option<String>,
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
}

/// The recorded state of one job's partitions in a table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobState {
    /// The table version the state was read at.
    pub version: u64,
    /// The newest checkpoint the state was read from.
    pub checkpoint: Option<u64>,
    /// By partition (`dt=2026-09-30`, `all`).
    pub partitions: BTreeMap<PartitionKey, Recorded>,
}

#[derive(Debug, Clone, Copy)]
struct Txn {
    version: i64,
    last_updated: Option<i64>,
    /// The commit that carried it, where read from a commit file.
    commit: Option<u64>,
}

#[derive(Debug, Default)]
struct Detail {
    version: u64,
    rows: Option<u64>,
    run_id: Option<String>,
}

enum LogFile {
    Commit(u64),
    /// A checkpoint part: its version, part number and part count (1 of 1 for single-file and
    /// v2 checkpoints).
    Checkpoint(u64, u32, u32),
}

/// A checkpoint's parts by part count, then part number.
type CheckpointParts = HashMap<u32, HashMap<u32, ObjectMeta>>;

fn parse_log_file(name: &str) -> Option<LogFile> {
    let (version, rest) = name.split_once('.')?;
    if version.len() != 20 {
        return None;
    }
    let version = version.parse().ok()?;
    match rest.split('.').collect::<Vec<_>>().as_slice() {
        ["json"] => Some(LogFile::Commit(version)),
        ["checkpoint", "parquet"] => Some(LogFile::Checkpoint(version, 1, 1)),
        ["checkpoint", part, parts, "parquet"] => {
            Some(LogFile::Checkpoint(version, part.parse().ok()?, parts.parse().ok()?))
        }
        // A v2 checkpoint (`<version>.checkpoint.<uuid>.parquet` or `.json`): its top-level file
        // holds the transactions; sidecars hold only files.
        ["checkpoint", _uuid, "parquet" | "json"] => Some(LogFile::Checkpoint(version, 1, 1)),
        _ => None,
    }
}

/// Reads the recorded state of `job`'s partitions from the Delta log of the table at
/// `location`; `None` where no table exists.
pub async fn read(location: &Location, job: &str) -> Result<Option<JobState>> {
    // Log clean-up may remove a file between the listing and its read: list again.
    let mut attempts = 0;
    loop {
        match read_once(location, job).await {
            Err(Failure::Vanished(_)) if attempts < 3 => attempts += 1,
            Err(Failure::Vanished(e) | Failure::Other(e)) => {
                return Err(Error::Read { url: location.url().clone(), source: e });
            }
            Ok(state) => return Ok(state),
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

enum Failure {
    /// A file listed in the log was gone when read.
    Vanished(BoxError),
    Other(BoxError),
}

impl From<object_store::Error> for Failure {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { .. } => Self::Vanished(e.into()),
            e => Self::Other(e.into()),
        }
    }
}

async fn read_once(location: &Location, job: &str) -> Result<Option<JobState>, Failure> {
    let store = location.object_store().map_err(|e| Failure::Other(e.into()))?;
    let log = Path::from_url_path(location.url().path()).map_err(|e| Failure::Other(e.into()))?.join("_delta_log");
    // The log folder's own files only: not `_sidecars/`, `_commits/` and the like.
    let listed = match store.list_with_delimiter(Some(&log)).await {
        Ok(listed) => listed.objects,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(Failure::Other(e.into())),
    };
    let mut commits = BTreeMap::new();
    let mut checkpoints: BTreeMap<u64, CheckpointParts> = BTreeMap::new();
    for meta in listed {
        match meta.location.filename().and_then(parse_log_file) {
            Some(LogFile::Commit(v)) => {
                commits.insert(v, meta);
            }
            Some(LogFile::Checkpoint(v, part, parts)) => {
                checkpoints.entry(v).or_default().entry(parts).or_default().insert(part, meta);
            }
            None => {}
        }
    }
    // The newest checkpoint with all its parts.
    let checkpoint = checkpoints.into_iter().rev().find_map(|(version, sets)| {
        sets.into_iter()
            .find(|(n, parts)| (1..=*n).all(|p| parts.contains_key(&p)))
            .map(|(_, parts)| (version, parts.into_values().collect::<Vec<_>>()))
    });
    let latest = commits.keys().next_back().copied().into_iter().chain(checkpoint.as_ref().map(|(v, _)| *v)).max();
    let Some(latest) = latest else { return Ok(None) };

    let prefix = format!("lakewriter/{job}/");
    let mut txns: HashMap<String, Txn> = HashMap::new();
    let start = match &checkpoint {
        Some((version, parts)) => {
            for meta in parts {
                read_checkpoint_txns(&store, meta, &prefix, &mut txns).await?;
            }
            version + 1
        }
        None => 0,
    };
    if let Some(gap) = (start..=latest).find(|v| !commits.contains_key(v)) {
        let message = format!("the Delta log has no commit {gap} and no checkpoint after it");
        return Err(Failure::Other(message.into()));
    }
    let mut details: HashMap<PartitionKey, Detail> = HashMap::new();
    let mut reads = futures::stream::iter(commits.range(start..=latest).map(|(v, meta)| {
        let store = store.clone();
        let path = meta.location.clone();
        async move { Ok::<_, Failure>((*v, store.get(&path).await?.bytes().await?)) }
    }))
    .buffered(CONCURRENT_READS);
    while let Some(read) = reads.next().await {
        let (version, bytes) = read?;
        apply_commit(version, &bytes, job, &prefix, &mut txns, &mut details);
    }

    let mut partitions: BTreeMap<PartitionKey, Recorded> = BTreeMap::new();
    let mut fields: BTreeMap<PartitionKey, (Option<Txn>, Option<Txn>)> = BTreeMap::new();
    for (id, txn) in txns {
        let Some((partition, field)) = id.strip_prefix(&prefix).and_then(|rest| rest.rsplit_once('/')) else {
            continue;
        };
        let Ok(partition) = partition.parse::<PartitionKey>() else { continue };
        let entry = fields.entry(partition).or_default();
        match field {
            CODE => entry.0 = Some(txn),
            INPUTS => entry.1 = Some(txn),
            _ => {}
        }
    }
    for (partition, (code, inputs)) in fields {
        let (Some(code), Some(inputs)) = (code, inputs) else { continue };
        let detail = details.remove(&partition).filter(|d| code.commit == Some(d.version));
        partitions.insert(
            partition,
            Recorded {
                code: code.version,
                inputs: inputs.version,
                written_at: code.last_updated.and_then(DateTime::from_timestamp_millis),
                version: detail.as_ref().map(|d| d.version),
                rows: detail.as_ref().and_then(|d| d.rows),
                run_id: detail.and_then(|d| d.run_id),
            },
        );
    }
    Ok(Some(JobState { version: latest, checkpoint: checkpoint.map(|(v, _)| v), partitions }))
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
            let metrics = &info["operationMetrics"];
            let count = |k: &str| metrics.get(k).and_then(Value::as_u64);
            let rows = count("num_added_rows").or_else(|| {
                let merged = ["num_target_rows_inserted", "num_target_rows_updated", "num_target_rows_deleted"];
                merged.iter().map(|k| count(k)).sum::<Option<u64>>()
            });
            let run_id = ours["run_id"].as_str().map(str::to_owned);
            details.insert(partition, Detail { version, rows, run_id });
        }
    }
}

/// The actions of a JSON log file, one per line.
fn actions(bytes: &[u8]) -> impl Iterator<Item = Value> + '_ {
    bytes.split(|b| *b == b'\n').filter_map(|line| serde_json::from_slice::<Value>(line).ok())
}

/// Records `action` if it is a `txn` whose application id starts with `prefix`; true for any `txn`.
fn apply_txn(action: &Value, commit: Option<u64>, prefix: &str, txns: &mut HashMap<String, Txn>) -> bool {
    let Some(txn) = action.get("txn") else { return false };
    if let (Some(id), Some(version)) = (txn.get("appId").and_then(Value::as_str), txn["version"].as_i64())
        && id.starts_with(prefix)
    {
        let last_updated = txn.get("lastUpdated").and_then(Value::as_i64);
        txns.insert(id.to_owned(), Txn { version, last_updated, commit });
    }
    true
}

/// Adds the `txn` rows of one checkpoint file whose application id starts with `prefix`. Only the
/// `txn` column of a Parquet checkpoint is decoded; a JSON (v2) checkpoint is read line by line.
async fn read_checkpoint_txns(
    store: &std::sync::Arc<dyn ObjectStore>,
    meta: &ObjectMeta,
    prefix: &str,
    txns: &mut HashMap<String, Txn>,
) -> Result<(), Failure> {
    let bytes = store.get(&meta.location).await?.bytes().await?;
    if meta.location.extension() == Some("json") {
        for action in actions(&bytes) {
            apply_txn(&action, None, prefix, txns);
        }
        return Ok(());
    }
    let other = |e: parquet::errors::ParquetError| Failure::Other(e.into());
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(other)?;
    let Some(index) = builder.parquet_schema().root_schema().get_fields().iter().position(|f| f.name() == "txn") else {
        return Ok(());
    };
    let mask = ProjectionMask::roots(builder.parquet_schema(), [index]);
    for batch in builder.with_projection(mask).build().map_err(other)? {
        let batch = batch.map_err(|e| Failure::Other(e.into()))?;
        add_checkpoint_txns(&batch, prefix, txns).map_err(Failure::Other)?;
    }
    Ok(())
}

fn add_checkpoint_txns(batch: &RecordBatch, prefix: &str, txns: &mut HashMap<String, Txn>) -> Result<(), BoxError> {
    let txn = batch.column(0).as_struct_opt().ok_or("the checkpoint's `txn` column is not a struct")?;
    let field = |name: &str| txn.column_by_name(name).ok_or_else(|| format!("the checkpoint's `txn` has no `{name}`"));
    let app_ids = datafusion::arrow::compute::cast(field("appId")?, &DataType::Utf8)?;
    let app_ids = app_ids.as_string::<i32>();
    let versions = field("version")?.as_primitive_opt::<Int64Type>().ok_or("`txn.version` is not a long")?;
    let updated = txn.column_by_name("lastUpdated").and_then(|c| c.as_primitive_opt::<Int64Type>());
    for row in 0..txn.len() {
        if txn.is_null(row) || app_ids.is_null(row) || !app_ids.value(row).starts_with(prefix) {
            continue;
        }
        let last_updated = updated.filter(|u| !u.is_null(row)).map(|u| u.value(row));
        txns.insert(app_ids.value(row).to_owned(), Txn { version: versions.value(row), last_updated, commit: None });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CommitMetadata, Target, partition_predicate, replace_where};
    use chrono::NaiveDate;
    use lakewriter_core::stable_hash;

    fn metadata(job: &str, dt: NaiveDate, code: &str, inputs: &str) -> CommitMetadata {
        CommitMetadata {
            job: job.into(),
            partition: PartitionKey::of(None, Some(dt)),
            write: "overwrite_partition".into(),
            lakewriter_version: "test".into(),
            sql_hash: stable_hash(code.as_bytes()),
            code_fingerprint: stable_hash(code.as_bytes()),
            input_fingerprint: stable_hash(inputs.as_bytes()),
            inputs: None,
            run_id: format!("{job}-{dt}"),
            forced: false,
        }
    }

    /// Writes one partition (`dt_in_rows` as the rows' `dt`) and records `code`/`inputs`.
    async fn write(
        location: &Location,
        job: &str,
        dt: NaiveDate,
        dt_in_rows: NaiveDate,
        code: &str,
        inputs: &str,
    ) -> Result<u64> {
        let ctx = crate::session();
        let plan = ctx
            .sql(&format!("SELECT CAST('{dt_in_rows}' AS DATE) AS dt, 1 AS x"))
            .await
            .expect("plan")
            .logical_plan()
            .clone();
        let meta = metadata(job, dt, code, inputs);
        let target = Target { location, name: "t", partition_column: Some("dt"), metadata: &meta };
        Ok(replace_where(&ctx.state(), target, plan, partition_predicate("dt", dt), "rows elsewhere").await?.version)
    }

    #[tokio::test]
    async fn state_is_read_from_checkpoints_after_log_clean_up_and_moves_with_the_data() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
        let location = Location::new(url, HashMap::new(), |_| None).expect("location");
        let day = |d| NaiveDate::from_ymd_opt(2026, 9, d).expect("date");
        assert_eq!(read(&location, "j").await.expect("read"), None, "no table, no state");

        for d in 1..=5 {
            write(&location, "j", day(d), day(d), "code", &format!("inputs {d}")).await.expect("write");
        }
        write(&location, "other", day(1), day(1), "other code", "other inputs").await.expect("other job");
        let table = crate::table::open_existing(&location).await.expect("open");
        deltalake::checkpoints::create_checkpoint(&table, None).await.expect("checkpoint");
        // Log clean-up: the commits before the checkpoint are gone (as delta-rs's clean-up does).
        for v in 0..5 {
            std::fs::remove_file(dir.path().join(format!("t/_delta_log/{v:020}.json"))).expect("remove commit");
        }
        assert_eq!(write(&location, "j", day(6), day(6), "code", "inputs 6").await.expect("write"), 6);
        assert_eq!(write(&location, "j", day(2), day(2), "code", "late inputs 2").await.expect("write"), 7);
        // A failed write (a row outside its partition) records nothing.
        let failed = write(&location, "j", day(3), day(9), "new code", "inputs 3").await;
        assert!(matches!(failed, Err(Error::OutsideSlice { .. })), "{failed:?}");

        let state = read(&location, "j").await.expect("read").expect("a table");
        assert_eq!((state.version, state.checkpoint), (7, Some(5)));
        let labels: Vec<String> = state.partitions.keys().map(ToString::to_string).collect();
        assert_eq!(labels, (1..=6).map(|d| format!("dt={}", day(d))).collect::<Vec<_>>());
        let get = |d| &state.partitions[&PartitionKey::of(None, Some(day(d)))];
        for d in [1, 3, 4, 5] {
            let r = get(d);
            assert!(
                r.code_matches(&stable_hash(b"code")) && r.inputs_match(&stable_hash(format!("inputs {d}").as_bytes()))
            );
            assert!(r.written_at.is_some());
            assert_eq!(r.version, None, "from the checkpoint: its commit file is gone");
        }
        assert!(get(2).inputs_match(&stable_hash(b"late inputs 2")) && !get(2).inputs_match(&stable_hash(b"inputs 2")));
        assert_eq!((get(2).version, get(2).rows), (Some(7), Some(1)));
        assert_eq!((get(6).version, get(6).run_id.as_deref()), (Some(6), Some("j-2026-09-06")));

        let other = read(&location, "other").await.expect("read").expect("a table");
        assert_eq!(other.partitions.len(), 1, "each job reads its own state");
        assert!(
            other.partitions[&"dt=2026-09-01".parse::<PartitionKey>().expect("key")]
                .code_matches(&stable_hash(b"other code"))
        );
    }

    #[test]
    fn log_file_names() {
        assert!(matches!(parse_log_file("00000000000000000007.json"), Some(LogFile::Commit(7))));
        assert!(matches!(
            parse_log_file("00000000000000000100.checkpoint.parquet"),
            Some(LogFile::Checkpoint(100, 1, 1))
        ));
        assert!(matches!(
            parse_log_file("00000000000000000100.checkpoint.0000000002.0000000003.parquet"),
            Some(LogFile::Checkpoint(100, 2, 3))
        ));
        assert!(parse_log_file("_last_checkpoint").is_none());
        assert!(parse_log_file("00000000000000000007.crc").is_none());
        assert!(parse_log_file("7.json").is_none());
    }

    #[test]
    fn fingerprints_become_positive_versions_that_tell_fingerprints_apart() {
        let a = fingerprint_version("ffffffffffffffffffffffffffffffff");
        assert_eq!(a, 0x0fff_ffff_ffff_ffff);
        assert_ne!(
            fingerprint_version("0123456789abcdef0123456789abcdef"),
            fingerprint_version("1123456789abcdef0123456789abcdef")
        );
    }
}
