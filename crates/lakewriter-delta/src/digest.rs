//! Content digests: a fingerprint of a table's rows that ignores file layout, row order and table
//! version, so that "the rerun changed nothing" is one comparison.
//!
//! Each row is encoded with Arrow's row format (after casting each column to the type Delta stores
//! it as, see [`crate::schema::comparable_type`]), hashed with XXH3-128, and the hashes are summed modulo
//! 2^128 — a multiset hash, so order does not matter and a duplicated row does. The digest is the
//! hash of the column names and types, the row count and that sum.

use std::fmt;

use arrow::array::ArrayRef;
use arrow::compute::cast;
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, SortField};
use datafusion::common::{Column, ScalarValue};
use datafusion::prelude::{col, lit};
use futures::TryStreamExt;
use lakewriter_storage::Location;
use serde::Serialize;

use crate::schema::comparable_type;
use crate::{Error, Result, table};

/// The content digest of a table or of one of its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Digest {
    pub rows: u64,
    /// 32 hex digits.
    pub digest: String,
    /// The table version that was read.
    pub version: u64,
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.digest)
    }
}

/// The digest of the table at `location`, or of the partition where its one partition column holds
/// the value `partition`.
pub async fn digest(location: &Location, partition: Option<ScalarValue>) -> Result<Digest> {
    let url = location.url();
    let err = |e: Box<dyn std::error::Error + Send + Sync>| Error::Read { url: url.clone(), source: e };
    let table = table::open_existing(location).await?;
    let version = table.version().unwrap_or_default();
    let ctx = crate::session();
    let provider = table.table_provider().await.map_err(|e| err(e.into()))?;
    let mut df = ctx.read_table(provider).map_err(|e| err(e.into()))?;
    if let Some(value) = partition {
        let column = match table.snapshot().map(|s| s.metadata().partition_columns().to_vec()) {
            Ok(columns) if columns.len() == 1 => columns[0].clone(),
            Ok(columns) => return Err(Error::NotPartitionedByOne { url: url.clone(), columns }),
            Err(e) => return Err(err(e.into())),
        };
        df = df.filter(col(Column::from_name(column)).eq(lit(value))).map_err(|e| err(e.into()))?;
    }
    let fields: Vec<(String, DataType)> =
        df.schema().fields().iter().map(|f| (f.name().clone(), comparable_type(f.data_type()))).collect();
    let converter = RowConverter::new(fields.iter().map(|(_, t)| SortField::new(t.clone())).collect())
        .map_err(|e| err(e.into()))?;
    let mut stream = df.execute_stream().await.map_err(|e| err(e.into()))?;
    let (mut rows, mut sum) = (0u64, 0u128);
    while let Some(batch) = stream.try_next().await.map_err(|e| err(e.into()))? {
        let columns = batch
            .columns()
            .iter()
            .zip(&fields)
            .map(|(array, (_, t))| if array.data_type() == t { Ok(array.clone()) } else { cast(array, t) })
            .collect::<Result<Vec<ArrayRef>, _>>()
            .map_err(|e| err(e.into()))?;
        for row in &converter.convert_columns(&columns).map_err(|e| err(e.into()))? {
            sum = sum.wrapping_add(xxhash_rust::xxh3::xxh3_128(row.as_ref()));
            rows += 1;
        }
    }
    let header: Vec<String> = fields.iter().map(|(name, t)| format!("{name}:{t}")).collect();
    let summary = format!("{}\n{rows}\n{sum:032x}", header.join(","));
    Ok(Digest { rows, digest: lakewriter_core::stable_hash(summary.as_bytes()), version })
}
