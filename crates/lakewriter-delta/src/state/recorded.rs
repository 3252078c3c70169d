//! Each partition's recorded state, assembled from the `txn` actions the log holds for a job and
//! the details of the commits read.

use std::collections::{BTreeMap, HashMap};

use chrono::DateTime;
use lakewriter_core::PartitionKey;

use super::log::Txn;
use super::{CODE, COLUMNS, Detail, INPUTS, Recorded, unwritten_column};

/// A partition's code, inputs and columns transactions and the columns its writes left without a
/// value (with the time of each of those writes), as the log holds them, and the name of the
/// partition its newest code transaction is recorded under.
#[derive(Default)]
struct Fields {
    code: Option<(Txn, PartitionKey)>,
    inputs: Option<Txn>,
    columns: Option<Txn>,
    unwritten: Vec<(String, i64)>,
}

/// Keeps in `slot` the newer of it and `txn`.
fn keep_newest<T>(slot: &mut Option<T>, txn: Txn, with: impl FnOnce(Txn) -> T, of: impl Fn(&T) -> &Txn) {
    let newer =
        slot.as_ref().map(&of).is_none_or(|kept| (kept.last_updated, kept.commit) < (txn.last_updated, txn.commit));
    if newer {
        *slot = Some(with(txn));
    }
}

/// Each partition's recorded state: its code, inputs and columns transactions (`base`, the job's
/// `columns-base`, where it has none), and the details of the commit that carried them where that
/// commit was read. A day recorded under two names (see [`PartitionKey`]: a release before named
/// some modes' days otherwise) is the one written last.
pub(super) fn recorded(
    txns: HashMap<String, Txn>,
    mut details: HashMap<PartitionKey, Detail>,
    prefix: &str,
    base: Option<u64>,
) -> BTreeMap<PartitionKey, Recorded> {
    let mut fields: BTreeMap<PartitionKey, Fields> = BTreeMap::new();
    for (id, txn) in txns {
        let Some((partition, field)) = id.strip_prefix(prefix).and_then(|rest| rest.rsplit_once('/')) else {
            continue;
        };
        let Ok(partition) = partition.parse::<PartitionKey>() else { continue };
        let entry = fields.entry(partition.clone()).or_default();
        match field {
            CODE => keep_newest(&mut entry.code, txn, |t| (t, partition), |(t, _)| t),
            INPUTS => keep_newest(&mut entry.inputs, txn, |t| t, |t| t),
            COLUMNS => keep_newest(&mut entry.columns, txn, |t| t, |t| t),
            // Every name's entries: those of the last write are told by its time below.
            other => entry.unwritten.extend(unwritten_column(other).map(|c| (c, txn.version))),
        }
    }
    let mut partitions = BTreeMap::new();
    for Fields { code, inputs, columns, unwritten } in fields.into_values() {
        // The day under the name its last write recorded it by.
        let (Some((code, partition)), Some(inputs)) = (code, inputs) else { continue };
        let detail = details.remove(&partition).filter(|d| code.commit == Some(d.version));
        // Only the entries of the partition's last write, made at the time of its code's.
        let unwritten = unwritten.into_iter().filter(|(_, at)| Some(*at) == code.last_updated).map(|(c, _)| c);
        let recorded = Recorded {
            code: code.version,
            inputs: inputs.version,
            columns: columns.and_then(|n| u64::try_from(n.version).ok()).or(base),
            unwritten: unwritten.collect(),
            written_at: code.last_updated.and_then(DateTime::from_timestamp_millis),
            version: detail.as_ref().map(|d| d.version),
            rows: detail.as_ref().and_then(|d| d.rows),
            duration_ms: detail.as_ref().and_then(|d| d.duration_ms),
            run_id: detail.and_then(|d| d.run_id),
        };
        partitions.insert(partition, recorded);
    }
    partitions
}
