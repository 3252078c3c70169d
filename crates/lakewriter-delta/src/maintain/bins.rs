//! What compaction rewrites: the data files of a table's latest version, with their partition
//! and their range of the first `cluster_by` column, and the bins they are packed into — files
//! whose ranges overlap, and small files — each to be written again as one.

use std::collections::BTreeMap;

use datafusion::common::ScalarValue;
use deltalake::DeltaTable;
use deltalake::DeltaTableError;
use deltalake::kernel::Remove;

use super::PartitionFiles;
use crate::ranges::{Range, order};

/// One data file of a table's latest version.
pub(super) struct DataFile {
    /// Its relative path (see [`crate::paths`]).
    pub path: String,
    pub size: u64,
    /// `dt=2026-09-30`, or `all` for an unpartitioned table.
    pub partition: String,
    pub modified: i64,
    /// Its rows, from its statistics.
    pub rows: Option<u64>,
    /// Its range of the first `cluster_by` column, where the table is clustered and its
    /// statistics record one (see [`crate::ranges`]).
    pub range: Option<Range>,
    /// Its `remove`, `dataChange: false`.
    pub remove: Remove,
}

/// The data files of the table's loaded version, with their ranges of `cluster_by`'s first column
/// where it has one.
pub(super) fn data_files(table: &DeltaTable, cluster_by: &[String]) -> Result<Vec<DataFile>, DeltaTableError> {
    let state = table.snapshot()?;
    let columns = state.metadata().partition_columns().to_vec();
    let schema = state.snapshot().arrow_schema();
    let clustered = cluster_by.first().and_then(|c| Some((c, schema.field_with_name(c).ok()?.data_type().clone())));
    Ok(state
        .log_data()
        .into_iter()
        .map(|file| {
            let values = file.partition_values_map();
            let range = clustered
                .as_ref()
                .and_then(|(column, data_type)| crate::ranges::range(&file.stats()?, column, data_type));
            DataFile {
                path: file.path().into_owned(),
                size: u64::try_from(file.size()).unwrap_or(0),
                partition: partition_label(&columns, &values),
                modified: file.modification_time(),
                rows: file.num_records().and_then(|n| u64::try_from(n).ok()),
                range,
                remove: file.remove_action(false),
            }
        })
        .collect())
}

/// The `cluster_by` columns `table` has (a column renamed or dropped since is left out).
pub(super) fn columns_of(table: &DeltaTable, cluster_by: &[String]) -> Result<Vec<String>, DeltaTableError> {
    let schema = table.snapshot()?.snapshot().arrow_schema();
    Ok(cluster_by.iter().filter(|c| schema.field_with_name(c).is_ok()).cloned().collect())
}

/// `dt=2026-09-30` (Hive-style, in the table's column order), or `all` without partition columns.
fn partition_label(columns: &[String], values: &std::collections::HashMap<String, Option<String>>) -> String {
    if columns.is_empty() {
        return "all".to_owned();
    }
    let value = |c: &String| values.get(c).cloned().flatten().unwrap_or_else(|| "__HIVE_DEFAULT_PARTITION__".into());
    columns.iter().map(|c| format!("{c}={}", value(c))).collect::<Vec<_>>().join("/")
}

/// Files of one partition to rewrite as one: indexes into the data files.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Bin {
    pub partition: String,
    pub files: Vec<usize>,
}

/// What compaction rewrites: in each partition, the files whose ranges overlap (see
/// [`overlapping`]) a bin each group, and of the others, those smaller than `target` (oldest
/// first) packed into bins of at most `target` bytes; a bin of one file is left alone, so a
/// partition with a single small file is never rewritten.
pub(super) fn plan(files: &[DataFile], target: u64) -> Vec<Bin> {
    let mut bins = overlapping(files);
    let grouped: std::collections::HashSet<usize> = bins.iter().flat_map(|b| b.files.iter().copied()).collect();
    let mut small: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, file) in files.iter().enumerate().filter(|(i, f)| f.size < target && !grouped.contains(i)) {
        small.entry(&file.partition).or_default().push(i);
    }
    for (partition, mut indexes) in small {
        // Of a clustered table, neighbours in key order, so that a bin's sorted rows stay a
        // narrow range; else the oldest first.
        indexes.sort_by(|a, b| match (&files[*a].range, &files[*b].range) {
            (Some(x), Some(y)) => order(&x.0, &y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => (files[*a].modified, &files[*a].path).cmp(&(files[*b].modified, &files[*b].path)),
        });
        let mut bin: Vec<usize> = Vec::new();
        let mut bytes = 0;
        for i in indexes {
            if !bin.is_empty() && bytes + files[i].size > target {
                bins.push(Bin { partition: partition.to_owned(), files: std::mem::take(&mut bin) });
                bytes = 0;
            }
            bytes += files[i].size;
            bin.push(i);
        }
        bins.push(Bin { partition: partition.to_owned(), files: bin });
    }
    bins.retain(|bin| bin.files.len() > 1);
    bins
}

/// The groups of files of one partition whose ranges overlap, a bin each, by partition and the
/// group's smallest bound: two files are in one group where one's range starts below the other's
/// end, or each does so with a third. Ranges that only touch (one ends on the value the next
/// begins with: a value of a column that is not unique, cut between two files) do not overlap, so
/// sorted files are never rewritten again. Files without a range are in none.
fn overlapping(files: &[DataFile]) -> Vec<Bin> {
    use std::cmp::Ordering;
    let mut ranged: BTreeMap<&str, Vec<(usize, &Range)>> = BTreeMap::new();
    for (i, file) in files.iter().enumerate() {
        if let Some(range) = &file.range {
            ranged.entry(&file.partition).or_default().push((i, range));
        }
    }
    let mut bins = Vec::new();
    for (partition, mut ranged) in ranged {
        ranged.sort_by(|a, b| order(&a.1.0, &b.1.0));
        let mut group: Vec<usize> = Vec::new();
        let mut end: Option<&ScalarValue> = None;
        for (i, (min, max)) in ranged {
            if end.is_some_and(|end| order(min, end) != Ordering::Less) {
                bins.push(Bin { partition: partition.to_owned(), files: std::mem::take(&mut group) });
                end = None;
            }
            group.push(i);
            if end.is_none_or(|end| order(max, end) == Ordering::Greater) {
                end = Some(max);
            }
        }
        bins.push(Bin { partition: partition.to_owned(), files: group });
    }
    bins.retain(|bin| bin.files.len() > 1);
    bins
}

/// The bins' files per partition.
pub(super) fn by_partition(files: &[DataFile], bins: &[Bin]) -> Vec<PartitionFiles> {
    let mut partitions: BTreeMap<&str, PartitionFiles> = BTreeMap::new();
    for bin in bins {
        let entry = partitions.entry(&bin.partition).or_insert_with(|| PartitionFiles {
            partition: bin.partition.clone(),
            files: 0,
            bytes: 0,
        });
        entry.files += bin.files.len() as u64;
        entry.bytes += bin.files.iter().map(|i| files[*i].size).sum::<u64>();
    }
    partitions.into_values().collect()
}

#[cfg(test)]
impl DataFile {
    pub(super) fn for_test(partition: &str, path: &str, size: u64, modified: i64) -> Self {
        let remove = Remove {
            path: path.to_owned(),
            data_change: false,
            deletion_timestamp: None,
            extended_file_metadata: None,
            partition_values: None,
            size: None,
            deletion_vector: None,
            tags: None,
            base_row_id: None,
            default_row_commit_version: None,
        };
        Self { path: path.to_owned(), size, partition: partition.to_owned(), modified, rows: None, range: None, remove }
    }
}
