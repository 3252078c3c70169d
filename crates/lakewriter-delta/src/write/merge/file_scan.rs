//! The scan of one file of a keyed merge in one scan: its rows read as the merge reads them,
//! each looked up by its key in the source, the source rows it matches, replaces or fills in
//! flagged, and — from the first change that falls in it on — its rows written again, by a writer
//! of its own in a task of its own.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, UInt32Array, new_null_array};
use datafusion::arrow::compute::kernels::cmp::gt;
use datafusion::arrow::compute::{and, cast, not, prep_null_mask_filter, take};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::ScalarValue;
use datafusion::common::runtime::SpawnedTask;
use datafusion::error::DataFusionError;
use datafusion::physical_expr::PhysicalExpr;
use deltalake::DeltaTableError;
use deltalake::kernel::Add;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryFutureExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::{AsyncFileReader, ParquetRecordBatchStreamBuilder};
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

use super::source::{Source, key_columns};
use crate::files::Live;
use crate::write::own;

/// A source row's flags: its key found in the table, its row written over the table's, or the
/// table's row filled in from it.
pub(super) const MATCHED: u8 = 1;

pub(super) const WON: u8 = 2;

pub(super) const FILLED: u8 = 4;

/// What every file's scan shares.
pub(super) struct Shared {
    pub(super) store: Arc<dyn ObjectStore>,
    /// The columns read: the layout, or — where no row can change — the key's and the scope's.
    pub(super) read: SchemaRef,
    pub(super) partition_columns: Vec<String>,
    pub(super) source: Source,
    /// The key's columns in `read`.
    pub(super) key: Vec<usize>,
    /// The rows a key may be matched in, over `read` (qualified `t`).
    pub(super) scope: Option<Arc<dyn PhysicalExpr>>,
    /// What a row whose key a source row holds must also meet to match it: a condition over
    /// `read` (`t`) and the layout (`s`, the source row).
    pub(super) matches: Option<Arc<dyn PhysicalExpr>>,
    /// `newer_by`'s column in the layout (which `read` is wherever a row can change).
    pub(super) newer_by: Option<usize>,
    /// The fill's condition over the layout twice (`t`, then `s`), and the columns it sets.
    pub(super) fill: Option<(Arc<dyn PhysicalExpr>, Vec<usize>)>,
    /// The columns the written rows must hold no NULL in (their indexes in the layout).
    pub(super) required: Vec<usize>,
}

/// What the scan of one file found, and the files its rows were written again to.
#[derive(Default)]
pub(super) struct FileScan {
    /// Source rows whose key is in the file; that replaced their row there; that filled it in.
    pub(super) matched: Vec<u32>,
    pub(super) won: Vec<u32>,
    pub(super) filled: Vec<u32>,
    /// A change falls in the file: its rows were written again, to `adds`.
    pub(super) touched: bool,
    pub(super) adds: Vec<Add>,
    /// A row written again holds a NULL where the table requires a value: nothing was written.
    pub(super) nulls: bool,
    pub(super) changed: u64,
    pub(super) copied: u64,
}

/// The batches of a file's rows written again, from its scan to its writer.
type Rows = futures::channel::mpsc::Sender<RecordBatch>;

/// Batches a file's scan sends ahead of its writer.
const ROWS_AHEAD: usize = 4;

/// A batch of a file's rows, the source row each one's key matched, and which of them the source
/// replaces (`wins`) or fills in (`fills`).
struct Looked {
    pub(super) batch: RecordBatch,
    pub(super) source_rows: UInt32Array,
    pub(super) wins: BooleanArray,
    pub(super) fills: BooleanArray,
}

impl Shared {
    fn may_change(&self) -> bool {
        self.newer_by.is_some() || self.fill.is_some()
    }

    /// Whether `batch` (in the layout) holds a NULL in a column the table or the job declares
    /// NOT NULL.
    pub(super) fn holds_null(&self, batch: &RecordBatch) -> bool {
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
    pub(super) async fn scan(
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

/// A data file of known size read from the table's object store, as Parquet's reader asks for
/// its bytes: the footer, then the ranges of the columns read.
struct FileReader {
    pub(super) store: Arc<dyn ObjectStore>,
    pub(super) location: Path,
    pub(super) size: u64,
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
pub(super) fn definite(flags: &BooleanArray) -> BooleanArray {
    if flags.null_count() == 0 { flags.clone() } else { prep_null_mask_filter(flags) }
}
