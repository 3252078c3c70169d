//! A result held in memory: computed once, then checked, compared, classified and written.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::MemTable;
use datafusion::error::Result;
use datafusion::prelude::{DataFrame, SessionContext};

/// Rows held in memory, with their schema (also where there is no row), in the partitions the
/// query produced them in, so that a write reads them as it would have read the query.
#[derive(Debug, Clone)]
pub struct Materialized {
    pub schema: SchemaRef,
    pub partitions: Vec<Vec<RecordBatch>>,
}

impl Materialized {
    /// Runs `df` and keeps its rows. The query runs in a task of its own: polled inside the
    /// caller's task (one of a backfill's partitions in flight, all polled by one task), a query
    /// of one partition would share that task's thread with every other day's.
    pub async fn collect(df: DataFrame) -> Result<Self> {
        let planned: SchemaRef = Arc::new(df.schema().as_arrow().clone());
        let mut partitions = spawned(df.collect_partitioned()).await?;
        if partitions.is_empty() {
            partitions.push(Vec::new());
        }
        // The batches' own schema where there are any (the plan's may differ in nullability).
        let schema = partitions.iter().flatten().next().map_or(planned, RecordBatch::schema);
        Ok(Self { schema, partitions })
    }

    /// The rows as a DataFrame of the schema: `read_batches` would give no rows no columns.
    pub fn dataframe(&self, ctx: &SessionContext) -> Result<DataFrame> {
        let table = MemTable::try_new(self.schema.clone(), self.partitions.clone())?;
        ctx.read_table(Arc::new(table))
    }

    /// The batches, partition after partition.
    pub fn batches(&self) -> impl Iterator<Item = &RecordBatch> {
        self.partitions.iter().flatten()
    }

    #[must_use]
    pub fn rows(&self) -> usize {
        self.batches().map(RecordBatch::num_rows).sum()
    }
}

/// Runs `work` in a task of its own on the runtime's threads (see [`Materialized::collect`]). A
/// panic in it is the caller's; a task is only cancelled as the runtime shuts down.
pub async fn spawned<T: Send + 'static>(work: impl std::future::Future<Output = T> + Send + 'static) -> T {
    match tokio::spawn(work).await {
        Ok(output) => output,
        Err(e) => std::panic::resume_unwind(e.try_into_panic().unwrap_or_else(|e| Box::new(e.to_string()))),
    }
}
