//! Raw Parquet datasets: `<root>/<schema>/<table>/` folders of Parquet files, with hive-style
//! `key=value` folders as partition columns. Only ever read.
//!
//! Opening a dataset costs the same whatever its history:
//! - **Partition columns** come from folder names. The top folder is listed once (names only), and
//!   then only the newest folder is descended. A key is typed `DATE` where most of its values are
//!   dates (`YYYY-MM-DD`), else `STRING`. Folders whose name starts with `_` or `.` (`_tmp`,
//!   `.staging`) are not partitions and are never read; neither are folders that are not
//!   `key=value` or whose value is not a date under a `DATE` key (`dt=2026-13-45`): they are
//!   logged, and they change no column's type.
//! - **The schema** is that of the newest readable file: the newest partition's files, newest
//!   first, skipping (with a warning) a file that is empty or cannot be read. Every column is
//!   nullable.
//!
//! Reading checks only the files a scan reads (after partition pruning), before DataFusion opens
//! them: a zero-byte file, a file that is not readable Parquet, or one whose columns drifted
//! incompatibly from the dataset's schema fails the scan with an error naming the file and what
//! is wrong with it. Compatible drift is read: a column missing from an older file reads as NULL,
//! a column a file has beyond the dataset's is not read, nullability may differ, and a column may
//! be narrower in a file than in the dataset (an integer, float or decimal that widens losslessly,
//! a timestamp of another unit) or be another encoding of the same type (string views, large
//! strings, dictionaries).

mod check;
mod files;
mod layout;

pub use files::{pinned_scans, without_files};

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::{ScanArgs, ScanResult, Session, TableProvider};
use datafusion::datasource::TableType;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::SessionState;
use datafusion::logical_expr::TableProviderFilterPushDown;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::Expr;
use object_store::ObjectStore;
use object_store::path::Path;

use crate::catalog::TableEntry;
use crate::{Error, Result};
use layout::{Layout, layout};

const EXTENSION: &str = ".parquet";

/// A file checked once in a command: its path, size and modification time.
type CheckedFile = (Path, u64, chrono::DateTime<chrono::Utc>);

/// The files under each listed prefix.
type Listings = std::collections::HashMap<Option<Path>, Vec<object_store::ObjectMeta>>;

/// A raw dataset as DataFusion reads it: a listing table, and the checks of the files a scan reads.
#[derive(Debug)]
pub struct RawTable {
    name: String,
    /// The dataset's folder, for naming its files in errors.
    folder: url::Url,
    url: ListingTableUrl,
    store: Arc<dyn ObjectStore>,
    format: Arc<ParquetFormat>,
    partitions: Vec<(String, DataType)>,
    /// The dataset's columns without its partition columns.
    file_schema: SchemaRef,
    /// The file that set them (its newest readable file), for errors.
    schema_from: Path,
    /// The files checked so far in this command, as they were: each is read once.
    checked: Arc<std::sync::Mutex<std::collections::HashSet<CheckedFile>>>,
    /// A copy a plan scans ([`pinned_scans`]): the files under each prefix as it first listed
    /// them. `None` (the catalog's): listed anew on each scan.
    listings: Option<std::sync::Mutex<Listings>>,
    /// A plan's copy: the files its scans selected, counted as they are planned (`None` until a
    /// scan is; see [`without_files`]).
    selected: std::sync::Mutex<Option<usize>>,
    /// Top-level folders DataFusion would misread as partitions (see [`layout::Level`]): a scan
    /// that lists them fails, naming one.
    bad_values: Vec<String>,
    inner: ListingTable,
}

impl RawTable {
    /// Opens the raw dataset `entry`; `None` for one with no readable Parquet file yet (a query
    /// naming it then fails with "table not found"). `state` needs only the session's object stores.
    pub async fn open(state: &SessionState, entry: &TableEntry) -> Result<Option<Arc<dyn TableProvider>>> {
        let name = entry.name.to_string();
        let err = |source| Error::RegisterRaw { table: name.clone(), url: entry.url.clone(), source: Box::new(source) };
        let url = ListingTableUrl::parse(entry.url.as_str()).map_err(err)?;
        let store = state.runtime_env().object_store(&url).map_err(err)?;
        let format = Arc::new(ParquetFormat::default());
        let Layout { partitions, bad_values, schema } = layout(state, &store, &format, &entry.url, url.prefix(), &name)
            .await
            .map_err(|e| err(DataFusionError::ObjectStore(Box::new(e))))?;
        let Some((file_schema, schema_from)) = schema else {
            tracing::warn!(table = %name, "no readable Parquet file yet: not queryable");
            return Ok(None);
        };
        let options = ListingOptions::new(format.clone())
            .with_file_extension(EXTENSION)
            .with_table_partition_cols(partitions.clone());
        let config =
            ListingTableConfig::new(url.clone()).with_listing_options(options).with_schema(file_schema.clone());
        let inner = ListingTable::try_new(config).map_err(err)?;
        Ok(Some(Arc::new(Self {
            name,
            folder: entry.url.clone(),
            url,
            store,
            format,
            partitions,
            file_schema,
            schema_from,
            checked: Arc::default(),
            listings: None,
            selected: std::sync::Mutex::default(),
            bad_values,
            inner,
        })))
    }

    /// The dataset's partition columns, in folder order.
    #[must_use]
    pub fn partitions(&self) -> &[(String, DataType)] {
        &self.partitions
    }

    /// `file` as a URL below the dataset's folder.
    /// This dataset with listings of its own, none yet (the files checked are shared).
    fn pinned(&self) -> Self {
        Self {
            name: self.name.clone(),
            folder: self.folder.clone(),
            url: self.url.clone(),
            store: Arc::clone(&self.store),
            format: Arc::clone(&self.format),
            partitions: self.partitions.clone(),
            file_schema: Arc::clone(&self.file_schema),
            schema_from: self.schema_from.clone(),
            checked: Arc::clone(&self.checked),
            listings: Some(std::sync::Mutex::default()),
            selected: std::sync::Mutex::default(),
            bad_values: self.bad_values.clone(),
            inner: self.inner.clone(),
        }
    }

    fn display(&self, file: &Path) -> String {
        let relative = self.url.strip_prefix(file).map(|parts| parts.collect::<Vec<_>>().join("/"));
        relative.map_or_else(|| file.to_string(), |r| format!("{}{r}", self.folder))
    }

    fn file_error(&self, file: &Path, problem: String) -> DataFusionError {
        DataFusionError::External(Box::new(Error::RawFile {
            table: self.name.clone(),
            file: self.display(file),
            problem,
        }))
    }
}

#[async_trait]
impl TableProvider for RawTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
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
        let args = ScanArgs::default()
            .with_projection(projection.map(Vec::as_slice))
            .with_filters(Some(filters))
            .with_limit(limit);
        Ok(self.scan_with_args(state, args).await?.into_inner())
    }

    async fn scan_with_args<'a>(&self, state: &dyn Session, args: ScanArgs<'a>) -> DfResult<ScanResult> {
        let files = self.files(state, args.filters().unwrap_or_default()).await?;
        if let Ok(mut selected) = self.selected.lock() {
            *selected = Some(selected.unwrap_or(0) + files.len());
        }
        self.check(state, &files).await?;
        let scan = self.inner.scan_with_args(state, args).await?;
        Ok(ScanResult::new(files::reading_only(scan.into_inner(), &files)?))
    }
}
