//! The source of a keyed merge in one scan, held in memory: its rows in the table's layout, one
//! per key, and its keys in a hash table.

use std::collections::HashMap;

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::error::DataFusionError;

/// The key columns `key` of `batch` as they are compared: floating-point ones normalized (every
/// NaN one key, -0.0 the key 0.0; see `lakewriter_compute::floating`).
pub(super) fn key_columns(batch: &RecordBatch, key: &[usize]) -> Vec<ArrayRef> {
    key.iter().map(|&i| lakewriter_compute::floating::normalized(batch.column(i))).collect()
}

/// The source, as the table's columns in its layout (`own::layout`), one row per key, and its keys.
pub(super) struct Source {
    pub(super) batch: RecordBatch,
    /// Each row's key (its columns in the row format of `converter`), and the row.
    pub(super) rows: HashMap<Box<[u8]>, u32>,
    pub(super) converter: RowConverter,
}

impl Source {
    pub(super) fn new(batches: &[RecordBatch], layout: &SchemaRef, key: &[String]) -> datafusion::error::Result<Self> {
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
