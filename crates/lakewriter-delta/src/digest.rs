//! Content digests: a fingerprint of a table's rows that ignores file layout, row order and table
//! version, so that "the rerun changed nothing" is one comparison.
//!
//! Each row is encoded with Arrow's row format (after casting each column to the type Delta stores
//! it as, see [`crate::schema::comparable_type`]), hashed with XXH3-128, and the hashes are summed modulo
//! 2^128 — a multiset hash, so order does not matter and a duplicated row does. The digest is the
//! hash of the column names and types, the row count and that sum.

use std::fmt;

use std::collections::BTreeMap;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, SortField};
use arrow::util::display::{ArrayFormatter, FormatOptions};
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
    let table = table::open_existing(location).await?;
    let filter = match partition {
        Some(value) => Some((partition_column(&table, location)?, value)),
        None => None,
    };
    digest_of(location, &table, filter).await
}

/// The digest of version `version` of the table at `location`.
pub async fn digest_at(location: &Location, version: u64) -> Result<Digest> {
    digest_of(location, &table::open_at(location, version).await?, None).await
}

/// The digest of the partition of the table at `location` where its one partition column holds
/// `value`, and that column's name.
pub async fn partition_digest(location: &Location, value: ScalarValue) -> Result<(String, Digest)> {
    let table = table::open_existing(location).await?;
    let column = partition_column(&table, location)?;
    let digest = digest_of(location, &table, Some((column.clone(), value))).await?;
    Ok((column, digest))
}

/// The digest of `table` (at `location`), of the rows where `filter`'s column holds its value.
async fn digest_of(
    location: &Location,
    table: &deltalake::DeltaTable,
    filter: Option<(String, ScalarValue)>,
) -> Result<Digest> {
    let url = location.url();
    let err = |e: Box<dyn std::error::Error + Send + Sync>| Error::Read { url: url.clone(), source: e };
    let version = table.version().unwrap_or_default();
    let provider = table.table_provider().await.map_err(|e| err(e.into()))?;
    let mut df = crate::session().read_table(provider).map_err(|e| err(e.into()))?;
    if let Some((column, value)) = filter {
        df = df.filter(col(Column::from_name(column)).eq(lit(value))).map_err(|e| err(e.into()))?;
    }
    let mut sums = Sums::new(&df, None).map_err(err)?;
    let mut stream = df.execute_stream().await.map_err(|e| err(e.into()))?;
    while let Some(batch) = stream.try_next().await.map_err(|e| err(e.into()))? {
        sums.add(&batch).map_err(err)?;
    }
    Ok(sums.digests(version).remove("").unwrap_or_else(|| sums.empty(version)))
}

/// The digest of each partition of the table at `location`, by the value of its one partition
/// column (as text, e.g. `2026-09-30`), in one scan — of the partitions from `between.0` to
/// `between.1` where given: memory holds a sum per partition, never its rows. `None` where there
/// is no table. Each equals [`digest`] of that partition.
pub async fn partition_digests(
    location: &Location,
    between: Option<(ScalarValue, ScalarValue)>,
) -> Result<Option<BTreeMap<String, Digest>>> {
    let url = location.url();
    let err = |e: Box<dyn std::error::Error + Send + Sync>| Error::Read { url: url.clone(), source: e };
    let Some(table) = table::open_if_exists(location).await? else { return Ok(None) };
    let version = table.version().unwrap_or_default();
    let column = partition_column(&table, location)?;
    let provider = table.table_provider().await.map_err(|e| err(e.into()))?;
    let mut df = crate::session().read_table(provider).map_err(|e| err(e.into()))?;
    if let Some((low, high)) = between {
        df = df.filter(col(Column::from_name(&column)).between(lit(low), lit(high))).map_err(|e| err(e.into()))?;
    }
    let mut sums = Sums::new(&df, Some(&column)).map_err(err)?;
    let mut stream = df.execute_stream().await.map_err(|e| err(e.into()))?;
    while let Some(batch) = stream.try_next().await.map_err(|e| err(e.into()))? {
        sums.add(&batch).map_err(err)?;
    }
    Ok(Some(sums.digests(version)))
}

/// The one partition column of `table`.
fn partition_column(table: &deltalake::DeltaTable, location: &Location) -> Result<String> {
    let url = location.url();
    match table.snapshot().map(|s| s.metadata().partition_columns().to_vec()) {
        Ok(columns) if columns.len() == 1 => Ok(columns[0].clone()),
        Ok(columns) => Err(Error::NotPartitionedByOne { url: url.clone(), columns }),
        Err(e) => Err(Error::Read { url: url.clone(), source: e.into() }),
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The running sums of a digest: per value of a partition column, or of the whole (key `""`).
struct Sums {
    fields: Vec<(String, DataType)>,
    converter: RowConverter,
    /// The index of the partition column, where sums are kept per partition.
    partition: Option<usize>,
    sums: BTreeMap<String, (u64, u128)>,
}

impl Sums {
    fn new(df: &datafusion::prelude::DataFrame, partition: Option<&str>) -> Result<Self, BoxError> {
        let fields: Vec<(String, DataType)> =
            df.schema().fields().iter().map(|f| (f.name().clone(), comparable_type(f.data_type()))).collect();
        let converter = RowConverter::new(fields.iter().map(|(_, t)| SortField::new(t.clone())).collect())?;
        let partition = match partition {
            Some(name) => Some(fields.iter().position(|(n, _)| n == name).ok_or("no partition column in the scan")?),
            None => None,
        };
        Ok(Self { fields, converter, partition, sums: BTreeMap::new() })
    }

    fn add(&mut self, batch: &RecordBatch) -> Result<(), BoxError> {
        let columns = batch
            .columns()
            .iter()
            .zip(&self.fields)
            .map(|(array, (_, t))| if array.data_type() == t { Ok(array.clone()) } else { cast(array, t) })
            .collect::<Result<Vec<ArrayRef>, _>>()?;
        let keys = match self.partition {
            Some(i) => {
                let formatter =
                    ArrayFormatter::try_new(columns[i].as_ref(), &FormatOptions::default().with_null("NULL"))?;
                (0..batch.num_rows()).map(|row| formatter.value(row).to_string()).collect()
            }
            None => vec![String::new(); batch.num_rows()],
        };
        for (row, key) in self.converter.convert_columns(&columns)?.iter().zip(keys) {
            let (rows, sum) = self.sums.entry(key).or_default();
            *sum = sum.wrapping_add(xxhash_rust::xxh3::xxh3_128(row.as_ref()));
            *rows += 1;
        }
        Ok(())
    }

    fn finish(&self, rows: u64, sum: u128, version: u64) -> Digest {
        let header: Vec<String> = self.fields.iter().map(|(name, t)| format!("{name}:{t}")).collect();
        let summary = format!("{}\n{rows}\n{sum:032x}", header.join(","));
        Digest { rows, digest: lakewriter_core::stable_hash(summary.as_bytes()), version }
    }

    /// The digest of a table (or partition) without rows.
    fn empty(&self, version: u64) -> Digest {
        self.finish(0, 0, version)
    }

    fn digests(&self, version: u64) -> BTreeMap<String, Digest> {
        self.sums.iter().map(|(key, (rows, sum))| (key.clone(), self.finish(*rows, *sum, version))).collect()
    }
}
