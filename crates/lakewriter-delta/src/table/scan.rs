//! A Delta table read as DataFusion's own Parquet scan of its live files, for a plan that runs on
//! an engine ([`lakewriter_compute::engine`]): delta-rs's scan node cannot be sent to another
//! process, DataFusion's can. The files are the file list's (read from the log), pruned by the
//! scan's filters over their partition values and statistics; each file's partition values are the
//! scan's partition columns. A table whose files need more than that to be read — deletion vectors,
//! column mapping, or any other protocol feature lakewriter does not write with — and a session
//! without an engine read through delta-rs's provider.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, FieldRef, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::datasource::TableType;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use lakewriter_storage::Location;
use object_store::ObjectMeta;

use super::LoadedTables;
use crate::Result;
use crate::files::{FileList, Live};

impl LoadedTables {
    /// [`LoadedTables::provider_at`], whose scan in a session with an engine is DataFusion's own
    /// Parquet scan of the live files, which the engine can be sent (see the module's documentation): the
    /// provider of the tables a job's SQL reads.
    pub async fn sendable_at(self: &Arc<Self>, location: &Location, version: u64) -> Result<Arc<dyn TableProvider>> {
        let inner = self.provider_at(location, version).await?;
        let loaded = Arc::clone(self);
        Ok(Arc::new(Sendable { inner, loaded, location: location.clone(), version }))
    }
}

/// A Delta table's provider: delta-rs's, except in a session with an engine, where its scan is
/// DataFusion's Parquet scan of the live files (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Sendable {
    pub inner: Arc<dyn TableProvider>,
    pub loaded: Arc<LoadedTables>,
    pub location: Location,
    pub version: u64,
}

#[async_trait]
impl TableProvider for Sendable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> DfResult<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if lakewriter_compute::engine::engine(state.config()).is_none() {
            return self.inner.scan(state, projection, filters, limit).await;
        }
        let list =
            self.loaded.list_at(&self.location, self.version).await.map_err(|e| DataFusionError::External(e.into()))?;
        if !list.unsupported.is_empty() || list.columns.fields() != self.schema().fields() {
            return self.inner.scan(state, projection, filters, limit).await;
        }
        parquet_scan(&list, &self.location, state, projection, filters, limit).await
    }
}

/// DataFusion's Parquet scan of the live files of `list` (the table at `location`) that rows
/// matching `filters` can be in, with its columns as the table's provider has them.
async fn parquet_scan(
    list: &FileList,
    location: &Location,
    state: &dyn Session,
    projection: Option<&Vec<usize>>,
    filters: &[Expr],
    limit: Option<usize>,
) -> DfResult<Arc<dyn ExecutionPlan>> {
    let columns = &list.columns;
    let partitions = &list.shape.partition_columns;
    let is_partition = |f: &FieldRef| partitions.contains(f.name());
    let file_fields: Vec<FieldRef> = columns.fields().iter().filter(|f| !is_partition(f)).cloned().collect();
    let partition_fields: Vec<FieldRef> =
        partitions.iter().filter_map(|c| columns.field_with_name(c).ok()).map(|f| Arc::new(f.clone())).collect();
    // The scan's columns are the files' then the partition columns: the provider's, in its order.
    let order: Vec<FieldRef> = file_fields.iter().chain(&partition_fields).cloned().collect();
    let index = |field: &FieldRef| order.iter().position(|f| f.name() == field.name());
    let all: Vec<usize> = columns.fields().iter().filter_map(index).collect();
    let indices: Vec<usize> = match projection {
        Some(projection) => projection.iter().filter_map(|&i| all.get(i).copied()).collect(),
        None => all,
    };
    let files = matching(list, state, filters);
    let store_url = ObjectStoreUrl::parse(&location.url()[..url::Position::BeforePath])?;
    let folder = crate::paths::folder(location.url())?;
    let mut scanned = Vec::with_capacity(files.len());
    for (path, live) in files {
        let location = crate::paths::object(&folder, path).map_err(|e| DataFusionError::External(e.into()))?;
        let values = partition_fields
            .iter()
            .map(|f| partition_value(live, f.name(), f.data_type()))
            .collect::<DfResult<Vec<_>>>()?;
        let size = u64::try_from(live.size).unwrap_or_default();
        // From its object's location as it is: `PartitionedFile::new` would encode a `%` again.
        let meta =
            ObjectMeta { location, last_modified: chrono::DateTime::UNIX_EPOCH, size, e_tag: None, version: None };
        scanned.push(PartitionedFile::new_from_meta(meta).with_partition_values(values));
    }
    let groups = grouped(scanned, state.config().target_partitions());
    let format = ParquetFormat::default();
    let table_schema =
        TableSchema::builder(Arc::new(Schema::new(file_fields))).with_table_partition_cols(partition_fields).build();
    let config = FileScanConfigBuilder::new(store_url, format.file_source(table_schema))
        .with_file_groups(groups)
        .with_projection_indices(Some(indices))?
        .with_limit(limit)
        .build();
    format.create_physical_plan(state, config).await
}

/// The live files of `list` that rows matching `filters` can be in (all of them where the filters
/// cannot be read against the log's statistics).
fn matching<'a>(list: &'a FileList, state: &dyn Session, filters: &[Expr]) -> Vec<(&'a String, &'a Live)> {
    let mut files: Vec<(&String, &Live)> = list.files().collect();
    files.sort_by(|a, b| a.0.cmp(b.0));
    let Some(filter) = conjunction(filters.iter().cloned()) else { return files };
    let predicate =
        DFSchema::try_from(Arc::clone(&list.columns)).and_then(|schema| state.create_physical_expr(filter, &schema));
    match predicate {
        Ok(predicate) => crate::prune::matching(files, &list.shape.schema, &list.shape.partition_columns, predicate),
        Err(e) => {
            tracing::debug!(error = %e, "cannot prune the table's files by a scan's filters; reading every one");
            files
        }
    }
}

/// `files` in up to `groups` groups of about equal bytes, each file whole.
fn grouped(mut files: Vec<PartitionedFile>, groups: usize) -> Vec<FileGroup> {
    let groups = groups.clamp(1, files.len().max(1));
    files.sort_by(|a, b| b.object_meta.size.cmp(&a.object_meta.size).then_with(|| a.path().cmp(b.path())));
    let mut bins: Vec<(u64, Vec<PartitionedFile>)> = (0..groups).map(|_| (0, Vec::new())).collect();
    for file in files {
        let bin = bins.iter_mut().min_by_key(|(bytes, _)| *bytes).expect("at least one group");
        bin.0 += file.object_meta.size;
        bin.1.push(file);
    }
    bins.into_iter().filter(|(_, files)| !files.is_empty()).map(|(_, files)| FileGroup::new(files)).collect()
}

/// `live`'s value of the partition column `column`, of `data_type` (the provider's: a string one
/// is dictionary-encoded); NULL where the log records none or an empty one.
fn partition_value(live: &Live, column: &str, data_type: &DataType) -> DfResult<ScalarValue> {
    let value = live.partition_values.get(column).and_then(|v| v.as_deref()).filter(|v| !v.is_empty());
    match data_type {
        DataType::Dictionary(key, inner) => {
            Ok(ScalarValue::Dictionary(key.clone(), Box::new(partition_value(live, column, inner)?)))
        }
        _ => match value {
            Some(value) => ScalarValue::try_from_string(value.to_owned(), data_type),
            None => ScalarValue::try_from(data_type),
        },
    }
}
