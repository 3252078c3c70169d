//! The write of a keyed merge in one scan: its plan (the source, the files to scan, what their
//! scans share), the scans a few at once, each file a change falls in written again, the source's
//! new keys written into files of their own, and the source's rows counted.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, BooleanArray, RecordBatch};
use datafusion::arrow::compute::{SortColumn, SortOptions, filter_record_batch, lexsort_to_indices, take_record_batch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::DFSchema;
use datafusion::common::runtime::SpawnedTask;
use datafusion::error::DataFusionError;
use datafusion::execution::SessionState;
use datafusion::prelude::DataFrame;
use deltalake::kernel::{Add, Remove};

use super::file_scan::{FILLED, MATCHED, Shared, WON, definite};
use super::prune::{candidates, narrow};
use super::source::Source;
use super::spec::MergeSpec;
use crate::files::{FileList, Live};
use crate::write::commit::write_error;
use crate::write::own;
use crate::write::target::Target;
use crate::{Error, Result};

/// What a keyed write made in one scan did, row by row: the source's rows classified as the
/// runner's classification classifies them (`lakewriter_compute::keyed::classify`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowCounts {
    /// New keys (a tombstone of a new key is a delete).
    pub inserted: u64,
    /// Existing rows the source replaced (newer) or filled in.
    pub updated: u64,
    /// Tombstones written: over older rows, or for new keys.
    pub deleted: u64,
    /// Source rows that changed nothing.
    pub unchanged: u64,
}

/// The files read at once.
fn in_flight() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZero::get).clamp(2, 4)
}

/// The refusal of a NULL in a column the table or the job declares NOT NULL ([`Error::Invalid`]:
/// the caller counts them in the source).
fn not_null(target: &Target<'_>) -> Error {
    let (table, partition) = (target.name.to_owned(), target.metadata.partition.clone());
    Error::Invalid { table, partition, not_null: Vec::new() }
}

/// What the scan wrote: the files added and removed, each source row's flags, and the rows
/// inserted, changed and copied.
pub(super) struct Written {
    pub(super) adds: Vec<Add>,
    pub(super) removes: Vec<Remove>,
    pub(super) flags: Vec<u8>,
    pub(super) inserted: u64,
    pub(super) changed: u64,
    pub(super) copied: u64,
}

/// A keyed write's plan: the source, the files to scan, and what their scan shares.
pub(super) struct Plan {
    pub(super) shared: Arc<Shared>,
    /// The files to scan, in order: by their smallest key where the statistics record it, then
    /// path.
    pub(super) candidates: Vec<(String, Live)>,
    pub(super) layout: SchemaRef,
    /// The source's tombstone flags (`delete_when`).
    pub(super) tombstones: Option<BooleanArray>,
}

impl Plan {
    pub(super) async fn new(
        session: &SessionState,
        target: &Target<'_>,
        source: DataFrame,
        spec: &MergeSpec<'_>,
        list: &FileList,
    ) -> Result<Self> {
        let plan_err = |e: DataFusionError| write_error(target, own::failed(e));
        let layout = own::relaxed(&own::layout(&list.shape));
        let batches = source.collect().await.map_err(plan_err)?;
        let source = Source::new(&batches, &layout, spec.key).map_err(plan_err)?;
        let may_change = spec.newer_by.is_some() || spec.fill.is_some();
        let read = if may_change { layout.clone() } else { narrow(&layout, spec) };
        let over_t = DFSchema::try_from_qualified_schema("t", &read).map_err(plan_err)?;
        let scope =
            spec.scope.map(|e| session.create_physical_expr(e.clone(), &over_t)).transpose().map_err(plan_err)?;
        let beside = |t: &SchemaRef| {
            DFSchema::try_from_qualified_schema("t", t)
                .and_then(|t| t.join(&DFSchema::try_from_qualified_schema("s", &layout)?))
                .map_err(plan_err)
        };
        let matches = match spec.matches {
            Some(condition) => {
                Some(session.create_physical_expr(condition.clone(), &beside(&read)?).map_err(plan_err)?)
            }
            None => None,
        };
        let fill = match spec.fill {
            Some((condition, columns)) => {
                let condition = session.create_physical_expr(condition.clone(), &beside(&layout)?).map_err(plan_err)?;
                let columns = columns.iter().filter_map(|c| layout.index_of(c).ok()).collect();
                Some((condition, columns))
            }
            None => None,
        };
        let candidates = candidates(session, list, &layout, spec, &source).map_err(plan_err)?;
        let index = |schema: &SchemaRef, name: &str| schema.index_of(name).map_err(|e| plan_err(e.into()));
        let key = spec.key.iter().map(|k| index(&read, k)).collect::<Result<_>>()?;
        let required = crate::nullability::required(Some(&list.shape.schema), target.not_null)
            .iter()
            .filter_map(|c| layout.index_of(c).ok())
            .collect();
        let tombstones = match spec.tombstone {
            Some(flag) => Some(definite(source.batch.column(index(&layout, flag)?).as_boolean())),
            None => None,
        };
        let shared = Shared {
            store: list.log_store.object_store(None),
            read,
            partition_columns: list.shape.partition_columns.clone(),
            source,
            key,
            scope,
            matches,
            newer_by: spec.newer_by.and_then(|n| layout.index_of(n).ok()),
            fill,
            required,
        };
        Ok(Self { shared: Arc::new(shared), candidates, layout, tombstones })
    }

    /// Scans the candidate files, a few at once, each one a change falls in written again as
    /// files of its own, then writes the source's new keys (sorted by `cluster_by` where it
    /// names columns) into files of their own.
    pub(super) async fn write(
        &self,
        target: &Target<'_>,
        list: &FileList,
        cluster_by: &[String],
        operation_id: uuid::Uuid,
    ) -> Result<Written> {
        let mut written = Written {
            adds: Vec::new(),
            removes: Vec::new(),
            flags: vec![0; self.shared.source.batch.num_rows()],
            inserted: 0,
            changed: 0,
            copied: 0,
        };
        self.rewrite(target, list, operation_id, &mut written).await?;
        let new = BooleanArray::from(written.flags.iter().map(|f| f & MATCHED == 0).collect::<Vec<_>>());
        let plan_err = |e: DataFusionError| write_error(target, own::failed(e));
        let inserts = filter_record_batch(&self.shared.source.batch, &new).map_err(|e| plan_err(e.into()))?;
        let inserts = sorted(inserts, cluster_by).map_err(plan_err)?;
        self.check_not_null(target, &inserts)?;
        written.inserted = inserts.num_rows() as u64;
        if inserts.num_rows() > 0 {
            let mut writer = own::FileWriter::of(list, self.layout.clone(), operation_id);
            if let Err(e) = writer.write(&inserts).await {
                writer.abort().await;
                return Err(write_error(target, e));
            }
            written.adds.extend(writer.close().await.map_err(|e| write_error(target, e))?);
        }
        Ok(written)
    }

    /// Scans the candidate files into `written`, a few at once, each in a task of its own that
    /// decodes the file, looks its rows up and — where a change falls in it — encodes them again
    /// into files of its own, so that the files in flight use as many cores. On a failure the
    /// scans still in flight are dropped: the files written so far belong to no commit.
    async fn rewrite(
        &self,
        target: &Target<'_>,
        list: &FileList,
        operation_id: uuid::Uuid,
        written: &mut Written,
    ) -> Result<()> {
        let now = chrono::Utc::now().timestamp_millis();
        let spawn = |(path, live): (String, Live)| {
            let writer = own::FileWriter::of(list, self.layout.clone(), operation_id);
            let task = SpawnedTask::spawn(self.shared.clone().scan(path.clone(), live.clone(), writer));
            (path, live, task)
        };
        let mut candidates = self.candidates.iter().cloned();
        let mut scans: std::collections::VecDeque<_> = candidates.by_ref().take(in_flight()).map(spawn).collect();
        while let Some((path, live, task)) = scans.pop_front() {
            let scan = task
                .join_unwind()
                .await
                .map_err(|e| write_error(target, own::failed(DataFusionError::External(e.into()))))?;
            let scan = scan.map_err(|e| write_error(target, e))?;
            if scan.nulls {
                return Err(not_null(target));
            }
            scans.extend(candidates.next().map(spawn));
            for (rows, flag) in [(&scan.matched, MATCHED), (&scan.won, WON), (&scan.filled, FILLED)] {
                for &row in rows {
                    written.flags[row as usize] |= flag;
                }
            }
            if scan.touched {
                written.removes.push(live.remove(&path, now));
                written.adds.extend(scan.adds);
                written.changed += scan.changed;
                written.copied += scan.copied;
            }
        }
        Ok(())
    }

    /// Refuses `batch` where it holds a NULL in a column the table or the job declares NOT NULL
    /// ([`Error::Invalid`]: the caller counts them in the source).
    fn check_not_null(&self, target: &Target<'_>, batch: &RecordBatch) -> Result<()> {
        if self.shared.holds_null(batch) {
            return Err(not_null(target));
        }
        Ok(())
    }

    /// The source's rows classified by their `flags` and tombstones.
    pub(super) fn counts(&self, flags: &[u8]) -> RowCounts {
        let mut counts = RowCounts::default();
        for (i, &flag) in flags.iter().enumerate() {
            let (matched, won, filled) = (flag & MATCHED != 0, flag & WON != 0, flag & FILLED != 0);
            let deleted = self.tombstones.as_ref().is_some_and(|t| t.value(i));
            counts.inserted += u64::from(!matched && !deleted);
            counts.updated += u64::from((won && !deleted) || filled);
            counts.deleted += u64::from(deleted && (!matched || won));
            counts.unchanged += u64::from(matched && !won && !filled);
        }
        counts
    }
}

/// `rows` sorted by the columns `cluster_by` (ascending, NULLs last); as they are without any.
fn sorted(rows: RecordBatch, cluster_by: &[String]) -> datafusion::error::Result<RecordBatch> {
    if cluster_by.is_empty() || rows.num_rows() < 2 {
        return Ok(rows);
    }
    let options = Some(SortOptions { descending: false, nulls_first: false });
    let columns = cluster_by
        .iter()
        .map(|c| Ok(SortColumn { values: rows.column(rows.schema().index_of(c)?).clone(), options }))
        .collect::<datafusion::error::Result<Vec<_>>>()?;
    let order = lexsort_to_indices(&columns, None)?;
    Ok(take_record_batch(&rows, &order)?)
}
