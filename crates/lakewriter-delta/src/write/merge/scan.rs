//! A keyed write into an existing table in one scan of it, committed over lakewriter's file list
//! ([`crate::files`]) as lakewriter's own commit ([`super::super::own`]).
//!
//! The source (one row per key) is held in memory, its keys in a hash table. The files its keys
//! can be in — pruned by the write's scope and the source's smallest and greatest key, against
//! each file's partition values and statistics ([`crate::prune`]) — are read one by one, a few at
//! once, each row looked up by its key: the same pass classifies every source row (inserted,
//! updated, deleted, unchanged) and finds the files a change falls in. Each such file is written
//! again with its changed rows replaced (copy-on-write, as Delta's MERGE does); a file without a
//! change is left as it is; the source's new keys are written as new files, sorted by the table's
//! `cluster_by` where it has one. A write that can change no existing row (an `append_dedup`)
//! reads only the key and scope columns.
//!
//! Each file in flight is scanned in a task of its own and written again by a writer of its own
//! (one file in, its own files out) in a second task, fed as the scan goes: decoding and encoding
//! use every core, whether a merge rewrites one file or many.
//!
//! Memory: the source, and for each file in flight its rows read before the first change that
//! falls in it (held until then, as delta-rs's MERGE holds a file) and its writer's row group.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, UInt32Array, new_null_array};
use datafusion::arrow::compute::kernels::cmp::gt;
use datafusion::arrow::compute::{
    SortColumn, SortOptions, and, cast, concat_batches, filter_record_batch, lexsort_to_indices, not,
    prep_null_mask_filter, take, take_record_batch,
};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::DataFusionError;
use datafusion::execution::SessionState;
use datafusion::functions_aggregate::min_max::{MaxAccumulator, MinAccumulator};
use datafusion::logical_expr::Accumulator;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::prelude::{DataFrame, Expr, lit};
use deltalake::DeltaTableError;
use deltalake::kernel::{Add, Remove};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryFutureExt};
use lakewriter_core::Phase;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::{AsyncFileReader, ParquetRecordBatchStreamBuilder};
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use serde_json::json;

use super::MergeSpec;
use crate::files::{FileList, Live};
use crate::write::commit::{finish, write_error};
use crate::write::{Committed, Target, own};
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

/// A keyed write made in one scan: its counts, and its commit (`None`: the source changes no
/// row, and nothing was written).
#[derive(Debug, Clone, Copy)]
pub struct Scanned {
    pub counts: RowCounts,
    pub committed: Option<Committed>,
}

/// The files read at once.
fn in_flight() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZero::get).clamp(2, 4)
}

/// Merges `source` into the table `list` describes (at `target.read_version`) in one scan, and
/// commits the result as the next version or not at all: the write is never rebased (its
/// classification read this version), so a commit that won that version fails it as a conflict.
/// Nothing is committed before every file is written; a failure leaves unreferenced files at
/// most (`VACUUM` removes them).
pub(super) async fn merge(
    session: &SessionState,
    target: &Target<'_>,
    source: DataFrame,
    spec: &MergeSpec<'_>,
    list: Arc<FileList>,
) -> Result<Scanned> {
    crate::phase(Phase::Writing, target.name, &target.metadata.partition);
    let started = std::time::Instant::now();
    let operation_id = uuid::Uuid::new_v4();
    let planned = Plan::new(session, target, source, spec, &list).await;
    let written = match planned {
        Ok(plan) => plan.write(target, &list, spec.cluster_by, operation_id).await.map(|written| (plan, written)),
        Err(error) => Err(error),
    };
    let (plan, written) = match written {
        Ok(written) => written,
        // As every write's failure: looked for in the log by run id, which tells a store that
        // cannot be read (whether it committed is unknown) from one that holds no such commit.
        Err(error) => {
            let found = finish(target, Some(list.version), Err(error)).await?;
            return Ok(Scanned { counts: RowCounts::default(), committed: Some(found) });
        }
    };
    let counts = plan.counts(&written.flags);
    if written.adds.is_empty() && written.removes.is_empty() {
        return Ok(Scanned { counts, committed: None });
    }
    let scanned = plan.candidates.len();
    let metrics = json!({
        "num_source_rows": plan.shared.source.batch.num_rows(),
        "num_target_rows_inserted": written.inserted,
        "num_target_rows_updated": written.changed,
        "num_target_rows_deleted": 0,
        "num_target_rows_copied": written.copied,
        "num_output_rows": written.inserted + written.changed + written.copied,
        "num_target_files_scanned": scanned,
        "num_target_files_skipped_during_scan": list.files().count() - scanned,
        "num_target_files_added": written.adds.len(),
        "num_target_files_removed": written.removes.len(),
        "execution_time_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    let updates = spec.newer_by.is_some() || spec.fill.is_some();
    let parameters = json!({
        "mergePredicate": super::on(spec, &plan.shared.source.batch.schema()).to_string(),
        "matchedPredicates": if updates { r#"[{"actionType":"update"}]"# } else { "[]" },
        "notMatchedPredicates": r#"[{"actionType":"insert"}]"#,
        "notMatchedBySourcePredicates": "[]",
    });
    let never_rebased = |_: &[u8]| Some("committed first (a keyed write is never rebased)");
    let files = (written.adds.as_slice(), written.removes.as_slice());
    let committed = own::commit(target, &list, ("MERGE", parameters), files, &metrics, never_rebased, operation_id);
    Ok(Scanned { counts, committed: Some(committed.await?) })
}

/// A source row's flags: its key found in the table, its row written over the table's, or the
/// table's row filled in from it.
const MATCHED: u8 = 1;
const WON: u8 = 2;
const FILLED: u8 = 4;

/// The key columns `key` of `batch` as they are compared: floating-point ones normalized (every
/// NaN one key, -0.0 the key 0.0; see `lakewriter_compute::floating`).
fn key_columns(batch: &RecordBatch, key: &[usize]) -> Vec<ArrayRef> {
    key.iter().map(|&i| lakewriter_compute::floating::normalized(batch.column(i))).collect()
}

/// The source, as the table's columns in its [layout](own::layout), one row per key, and its keys.
struct Source {
    batch: RecordBatch,
    /// Each row's key (its columns in the row format of `converter`), and the row.
    rows: HashMap<Box<[u8]>, u32>,
    converter: RowConverter,
}

impl Source {
    fn new(batches: &[RecordBatch], layout: &SchemaRef, key: &[String]) -> datafusion::error::Result<Self> {
        let batch = match batches {
            [] => RecordBatch::new_empty(layout.clone()),
            [batch] => crate::schema::conform(batch, layout)?,
            batches => crate::schema::conform(&concat_batches(&batches[0].schema(), batches)?, layout)?,
        };
        let key: Vec<usize> = key.iter().map(|k| layout.index_of(k)).collect::<Result<_, _>>()?;
        let converter =
            RowConverter::new(key.iter().map(|&i| SortField::new(layout.field(i).data_type().clone())).collect())?;
        let keys = converter.convert_columns(&key_columns(&batch, &key))?;
        let rows = (0..keys.num_rows())
            .map(|i| {
                Ok((
                    Box::from(keys.row(i).as_ref()),
                    u32::try_from(i).map_err(|e| DataFusionError::External(e.into()))?,
                ))
            })
            .collect::<datafusion::error::Result<_>>()?;
        Ok(Self { batch, rows, converter })
    }
}

/// What every file's scan shares.
struct Shared {
    store: Arc<dyn ObjectStore>,
    /// The columns read: the layout, or — where no row can change — the key's and the scope's.
    read: SchemaRef,
    partition_columns: Vec<String>,
    source: Source,
    /// The key's columns in `read`.
    key: Vec<usize>,
    /// The rows a key may be matched in, over `read` (qualified `t`).
    scope: Option<Arc<dyn PhysicalExpr>>,
    /// What a row whose key a source row holds must also meet to match it: a condition over
    /// `read` (`t`) and the layout (`s`, the source row).
    matches: Option<Arc<dyn PhysicalExpr>>,
    /// `newer_by`'s column in the layout (which `read` is wherever a row can change).
    newer_by: Option<usize>,
    /// The fill's condition over the layout twice (`t`, then `s`), and the columns it sets.
    fill: Option<(Arc<dyn PhysicalExpr>, Vec<usize>)>,
    /// The columns the written rows must hold no NULL in (their indexes in the layout).
    required: Vec<usize>,
}

/// What the scan of one file found, and the files its rows were written again to.
#[derive(Default)]
struct FileScan {
    /// Source rows whose key is in the file; that replaced their row there; that filled it in.
    matched: Vec<u32>,
    won: Vec<u32>,
    filled: Vec<u32>,
    /// A change falls in the file: its rows were written again, to `adds`.
    touched: bool,
    adds: Vec<Add>,
    /// A row written again holds a NULL where the table requires a value: nothing was written.
    nulls: bool,
    changed: u64,
    copied: u64,
}

/// The batches of a file's rows written again, from its scan to its writer.
type Rows = futures::channel::mpsc::Sender<RecordBatch>;

/// Batches a file's scan sends ahead of its writer.
const ROWS_AHEAD: usize = 4;

/// A batch of a file's rows, the source row each one's key matched, and which of them the source
/// replaces (`wins`) or fills in (`fills`).
struct Looked {
    batch: RecordBatch,
    source_rows: UInt32Array,
    wins: BooleanArray,
    fills: BooleanArray,
}

impl Shared {
    fn may_change(&self) -> bool {
        self.newer_by.is_some() || self.fill.is_some()
    }

    /// Whether `batch` (in the layout) holds a NULL in a column the table or the job declares
    /// NOT NULL.
    fn holds_null(&self, batch: &RecordBatch) -> bool {
        self.required.iter().any(|&i| batch.column(i).null_count() > 0)
    }

    /// Reads the file at the relative path `path` (the store is the table's folder): its batches
    /// of the columns `read` names that it holds (see [`Shared::as_read`]), as they are decoded.
    async fn read(
        &self,
        path: &str,
        live: &Live,
    ) -> datafusion::error::Result<parquet::arrow::async_reader::ParquetRecordBatchStream<FileReader>> {
        let location = crate::paths::object(&Path::ROOT, path).map_err(|e| DataFusionError::External(e.into()))?;
        let size = u64::try_from(live.size).unwrap_or_default();
        let reader = FileReader { store: self.store.clone(), location, size };
        let builder = ParquetRecordBatchStreamBuilder::new(reader).await?;
        let in_file = builder.schema().clone();
        let roots: Vec<usize> = in_file
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, f)| self.read.field_with_name(f.name()).is_ok())
            .map(|(i, _)| i)
            .collect();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        Ok(builder.with_projection(mask).build()?)
    }

    /// A batch of a file's columns as the `read` columns: its own columns (cast to the table's
    /// types, a column written before it was added as NULL) and its partition values.
    fn as_read(&self, batch: &RecordBatch, live: &Live) -> datafusion::error::Result<RecordBatch> {
        let rows = batch.num_rows();
        let columns = self
            .read
            .fields()
            .iter()
            .map(|field| {
                if self.partition_columns.contains(field.name()) {
                    let value = live.partition_values.get(field.name()).cloned().flatten().filter(|v| !v.is_empty());
                    let value = match value {
                        Some(value) => ScalarValue::try_from_string(value, field.data_type())?,
                        None => ScalarValue::try_from(field.data_type())?,
                    };
                    return value.to_array_of_size(rows);
                }
                Ok(match batch.column_by_name(field.name()) {
                    Some(column) if column.data_type() == field.data_type() => column.clone(),
                    Some(column) => cast(column, field.data_type())?,
                    None => new_null_array(field.data_type(), rows),
                })
            })
            .collect::<datafusion::error::Result<Vec<ArrayRef>>>()?;
        Ok(RecordBatch::try_new(self.read.clone(), columns)?)
    }

    /// The source row each row of `batch` matches: its key's, where the row is in the scope and
    /// meets the condition a match must meet with it.
    fn look_up(&self, batch: &RecordBatch) -> datafusion::error::Result<UInt32Array> {
        let rows = batch.num_rows();
        let in_scope = match &self.scope {
            Some(scope) => Some(definite(scope.evaluate(batch)?.into_array(rows)?.as_boolean())),
            None => None,
        };
        let keys = self.source.converter.convert_columns(&key_columns(batch, &self.key))?;
        let found: UInt32Array = (0..rows)
            .map(|i| {
                let scoped = in_scope.as_ref().is_none_or(|s| s.value(i));
                scoped.then(|| self.source.rows.get(keys.row(i).as_ref()).copied()).flatten()
            })
            .collect();
        let Some(matches) = self.matches.as_ref().filter(|_| found.null_count() < rows) else { return Ok(found) };
        let met = definite(matches.evaluate(&self.beside_source(batch, &found)?)?.into_array(rows)?.as_boolean());
        Ok(found.iter().zip(met.iter()).map(|(row, met)| row.filter(|_| met == Some(true))).collect())
    }

    /// `batch`'s columns (`t`), then the columns of the source rows `source_rows` (`s`; NULL where
    /// a row matched none): what a condition over both sides is evaluated on.
    fn beside_source(&self, batch: &RecordBatch, source_rows: &UInt32Array) -> datafusion::error::Result<RecordBatch> {
        let mut columns = batch.columns().to_vec();
        for column in self.source.batch.columns() {
            columns.push(take(column, source_rows, None)?);
        }
        let mut fields = batch.schema().fields().to_vec();
        fields.extend(self.source.batch.schema().fields().iter().cloned());
        Ok(RecordBatch::try_new(Arc::new(datafusion::arrow::datatypes::Schema::new(fields)), columns)?)
    }

    /// Which rows of `batch` the source rows they matched (`source_rows`) replace (the source's
    /// `newer_by` is greater) and which they fill in (the fill's condition holds, where they do
    /// not replace them).
    fn changes(&self, batch: RecordBatch, source_rows: UInt32Array) -> datafusion::error::Result<Looked> {
        let rows = batch.num_rows();
        let none = || BooleanArray::from(vec![false; rows]);
        let wins = match self.newer_by {
            Some(i) => {
                let newer = take(self.source.batch.column(i), &source_rows, None)?;
                definite(&gt(&newer, batch.column(i))?)
            }
            None => none(),
        };
        let fills = match &self.fill {
            Some((condition, _)) => {
                let both = self.beside_source(&batch, &source_rows)?;
                let holds = definite(condition.evaluate(&both)?.into_array(rows)?.as_boolean());
                let matched = BooleanArray::from((0..rows).map(|i| source_rows.is_valid(i)).collect::<Vec<_>>());
                and(&and(&matched, &not(&wins)?)?, &holds)?
            }
            None => none(),
        };
        Ok(Looked { batch, source_rows, wins, fills })
    }

    /// `looked`'s rows as written again: where the source replaces a row, the source's row (its
    /// key too, which is the row's but for how a floating-point zero or NaN is written); where it
    /// fills one in, the fill's columns.
    fn rewritten(&self, looked: &Looked) -> datafusion::error::Result<RecordBatch> {
        use datafusion::arrow::compute::kernels::zip::zip;
        let columns = looked
            .batch
            .columns()
            .iter()
            .enumerate()
            .map(|(j, column)| {
                let mut value = column.clone();
                let fills = self.fill.as_ref().is_some_and(|(_, columns)| columns.contains(&j));
                if fills && looked.fills.true_count() > 0 {
                    let source = take(self.source.batch.column(j), &looked.source_rows, None)?;
                    value = zip(&looked.fills, &source, &value)?;
                }
                if looked.wins.true_count() > 0 {
                    let source = take(self.source.batch.column(j), &looked.source_rows, None)?;
                    value = zip(&looked.wins, &source, &value)?;
                }
                Ok(value)
            })
            .collect::<datafusion::error::Result<Vec<_>>>()?;
        Ok(RecordBatch::try_new(looked.batch.schema(), columns)?)
    }

    /// Scans the file `path`: the source rows its keys match, and — from the first change that
    /// falls in it on — its rows as written again, sent to `writer` in a task of its own (the
    /// rows read before that held until then), so that the file's decoding and its encoding run
    /// side by side. The writer is closed where a change fell in the file, and aborted otherwise
    /// (nothing was written), on a failure, or on a NULL where the table requires a value.
    async fn scan(
        self: Arc<Self>,
        path: String,
        live: Live,
        mut writer: own::FileWriter,
    ) -> std::result::Result<FileScan, DeltaTableError> {
        let (rows, mut received) = futures::channel::mpsc::channel::<RecordBatch>(ROWS_AHEAD);
        let encode = SpawnedTask::spawn(async move {
            while let Some(batch) = received.next().await {
                if let Err(error) = writer.write(&batch).await {
                    writer.abort().await;
                    return Err(error);
                }
            }
            Ok(writer)
        });
        let mut scan = FileScan::default();
        let scanned = self.scan_into(&path, &live, rows, &mut scan).await;
        let encoded = encode.join_unwind().await.map_err(|e| own::failed(DataFusionError::External(e.into())))?;
        match (scanned, encoded) {
            // The writer's failure is the cause of the scan's (its rows had nowhere to go).
            (_, Err(error)) => Err(error),
            (Err(error), Ok(writer)) => {
                writer.abort().await;
                Err(error)
            }
            (Ok(()), Ok(writer)) if scan.touched && !scan.nulls => {
                scan.adds = writer.close().await?;
                Ok(scan)
            }
            (Ok(()), Ok(writer)) => {
                writer.abort().await;
                Ok(scan)
            }
        }
    }

    async fn scan_into(
        &self,
        path: &str,
        live: &Live,
        mut rows: Rows,
        scan: &mut FileScan,
    ) -> std::result::Result<(), DeltaTableError> {
        use futures::SinkExt;
        let gone = |_| DeltaTableError::Generic("the merge's writer stopped".into());
        let mut held = Vec::new();
        let mut read = 0;
        let mut batches = self.read(path, live).await.map_err(own::failed)?;
        while let Some(batch) = batches.next().await {
            let batch = batch.map_err(|e| own::failed(e.into()))?;
            let batch = self.as_read(&batch, live).map_err(own::failed)?;
            let source_rows = self.look_up(&batch).map_err(own::failed)?;
            scan.matched.extend(source_rows.iter().flatten());
            if !self.may_change() {
                continue;
            }
            let looked = self.changes(batch, source_rows).map_err(own::failed)?;
            for (i, row) in looked.source_rows.iter().enumerate() {
                match row {
                    Some(row) if looked.wins.value(i) => scan.won.push(row),
                    Some(row) if looked.fills.value(i) => scan.filled.push(row),
                    _ => {}
                }
            }
            read += looked.batch.num_rows() as u64;
            scan.changed += (looked.wins.true_count() + looked.fills.true_count()) as u64;
            held.push(looked);
            if scan.changed > 0 {
                for looked in held.drain(..) {
                    let batch = self.rewritten(&looked).map_err(own::failed)?;
                    if self.holds_null(&batch) {
                        scan.nulls = true;
                        return Ok(());
                    }
                    rows.send(batch).await.map_err(gone)?;
                }
            }
        }
        scan.touched = scan.changed > 0;
        scan.copied = if scan.touched { read - scan.changed } else { 0 };
        Ok(())
    }
}

/// The refusal of a NULL in a column the table or the job declares NOT NULL ([`Error::Invalid`]:
/// the caller counts them in the source).
fn not_null(target: &Target<'_>) -> Error {
    let (table, partition) = (target.name.to_owned(), target.metadata.partition.clone());
    Error::Invalid { table, partition, not_null: Vec::new() }
}

/// The columns a write that changes no existing row reads: its key's and its scope's, in the
/// layout's order.
fn narrow(layout: &SchemaRef, spec: &MergeSpec<'_>) -> SchemaRef {
    let scoped: Vec<String> = spec
        .scope
        .into_iter()
        .chain(spec.matches)
        .flat_map(|e| e.column_refs().into_iter().filter(|c| c.relation.as_ref().is_none_or(|r| r.table() == "t")))
        .map(|c| c.name.clone())
        .collect();
    let fields: Vec<_> =
        layout.fields().iter().filter(|f| spec.key.contains(f.name()) || scoped.contains(f.name())).cloned().collect();
    Arc::new(datafusion::arrow::datatypes::Schema::new(fields))
}

/// What the scan wrote: the files added and removed, each source row's flags, and the rows
/// inserted, changed and copied.
struct Written {
    adds: Vec<Add>,
    removes: Vec<Remove>,
    flags: Vec<u8>,
    inserted: u64,
    changed: u64,
    copied: u64,
}

/// A keyed write's plan: the source, the files to scan, and what their scan shares.
struct Plan {
    shared: Arc<Shared>,
    /// The files to scan, in order: by their smallest key where the statistics record it, then
    /// path.
    candidates: Vec<(String, Live)>,
    layout: SchemaRef,
    /// The source's tombstone flags (`delete_when`).
    tombstones: Option<BooleanArray>,
}

impl Plan {
    async fn new(
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
    async fn write(
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
    fn counts(&self, flags: &[u8]) -> RowCounts {
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

/// The files of `list` the source's keys can be in, in their order (see [`Plan::candidates`]):
/// those the write's scope and the range of each key column among the source's keys (its
/// smallest to its greatest, for the types whose statistics are true bounds) can hold, by their
/// partition values and statistics. None where the source has no row.
fn candidates(
    session: &SessionState,
    list: &FileList,
    layout: &SchemaRef,
    spec: &MergeSpec<'_>,
    source: &Source,
) -> datafusion::error::Result<Vec<(String, Live)>> {
    if source.batch.num_rows() == 0 {
        return Ok(Vec::new());
    }
    let mut filters: Vec<Expr> = spec.scope.cloned().into_iter().collect();
    for name in spec.key {
        let field = layout.field_with_name(name)?;
        let data_type = field.data_type();
        if !(data_type.is_integer() || crate::values::is_text(data_type) || *data_type == DataType::Date32) {
            continue;
        }
        let values = source.batch.column(layout.index_of(name)?);
        let (mut min, mut max) = (MinAccumulator::try_new(data_type)?, MaxAccumulator::try_new(data_type)?);
        min.update_batch(std::slice::from_ref(values))?;
        max.update_batch(std::slice::from_ref(values))?;
        let column = Expr::Column(datafusion::common::Column::new(Some("t"), name.as_str()));
        filters.push(column.between(lit(min.evaluate()?), lit(max.evaluate()?)));
    }
    let files: Vec<(&String, &Live)> = list.files().collect();
    let mut files = match filters.into_iter().reduce(Expr::and) {
        Some(filter) => {
            let over_t = DFSchema::try_from_qualified_schema("t", layout)?;
            let predicate = session.create_physical_expr(filter, &over_t)?;
            crate::prune::matching(files, layout, &list.shape.partition_columns, predicate)
        }
        None => files,
    };
    let first = spec
        .key
        .first()
        .and_then(|k| layout.field_with_name(k).ok())
        .map(|f| (f.name().clone(), f.data_type().clone()));
    let smallest = |live: &Live| {
        let (name, data_type) = first.as_ref()?;
        crate::ranges::range(live.stats.as_deref()?, name, data_type).map(|(min, _)| min)
    };
    let mut keyed: Vec<(Option<ScalarValue>, &String, &Live)> =
        files.drain(..).map(|(p, l)| (smallest(l), p, l)).collect();
    keyed.sort_by(|a, b| match (&a.0, &b.0) {
        (Some(x), Some(y)) => crate::ranges::order(x, y).then_with(|| a.1.cmp(b.1)),
        (x, y) => y.is_none().cmp(&x.is_none()).then_with(|| a.1.cmp(b.1)),
    });
    Ok(keyed.into_iter().map(|(_, path, live)| (path.clone(), live.clone())).collect())
}

/// A data file of known size read from the table's object store, as Parquet's reader asks for
/// its bytes: the footer, then the ranges of the columns read.
struct FileReader {
    store: Arc<dyn ObjectStore>,
    location: Path,
    size: u64,
}

impl AsyncFileReader for FileReader {
    fn get_bytes(&mut self, range: std::ops::Range<u64>) -> BoxFuture<'_, parquet::errors::Result<bytes::Bytes>> {
        self.store.get_range(&self.location, range).map_err(|e| ParquetError::External(Box::new(e))).boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<std::ops::Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<bytes::Bytes>>> {
        async move { self.store.get_ranges(&self.location, &ranges).await.map_err(|e| ParquetError::External(Box::new(e))) }
            .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            let size = self.size;
            let metadata =
                ParquetMetaDataReader::new().with_arrow_reader_options(options).load_and_finish(self, size).await?;
            Ok(Arc::new(metadata))
        }
        .boxed()
    }
}

/// `flags` with NULL read as false.
fn definite(flags: &BooleanArray) -> BooleanArray {
    if flags.null_count() == 0 { flags.clone() } else { prep_null_mask_filter(flags) }
}
