//! The file list lakewriter keeps of a table between a command's writes: the table's live data
//! files (each one's partition values, size and statistics), its columns and the settings its
//! writes take, at one version, brought forward by reading only the commit files made since.
//! lakewriter's own writes — a replaceWhere of partitions, an append, a rebuild, a keyed write —
//! commit over it (see `write::slice`, `write::merge::scan`) without delta-rs loading, replaying or updating the table's snapshot, so
//! that the cost of a commit follows what it changes, not the table's history.
//!
//! It is read once from the table's log — its newest checkpoint and the commit files after it
//! ([`read`]), or delta-rs's snapshot where the log holds what that reader does not read — and
//! from then on kept by applying the `add` and `remove` actions of each later commit. A commit
//! that changes the table's metadata or protocol ends it: the next write reads the table afresh.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use delta_kernel::table_configuration::TableConfiguration;
use deltalake::DeltaTable;
use deltalake::kernel::{Add, Remove};
use deltalake::logstore::LogStoreRef;
use deltalake::operations::write::WriterStatsConfig;
use lakewriter_storage::Location;

use crate::{Error, Result};

mod read;

#[cfg(test)]
mod tests;

/// A table's columns, partition columns and properties.
#[derive(Debug, Clone)]
pub struct Shape {
    pub schema: datafusion::arrow::datatypes::SchemaRef,
    pub partition_columns: Vec<String>,
    /// The table's properties (its metadata's `configuration`), by key.
    pub properties: std::collections::BTreeMap<String, String>,
}

/// A table's live files and what a write over them needs, at [`FileList::version`].
#[derive(Clone)]
pub(crate) struct FileList {
    pub version: u64,
    /// The table's columns (delta-rs's snapshot schema) and partition columns.
    pub shape: Shape,
    /// The columns as the table's DataFusion provider exposes them (see `Runner::columns_at`):
    /// [`provided`].
    pub columns: SchemaRef,
    pub settings: WriteSettings,
    /// The features of the table's protocol lakewriter does not write with (see
    /// [`crate::protocol::unsupported`]).
    pub unsupported: Arc<Vec<String>>,
    /// The table asks its writers for more than lakewriter's own checks do: CHECK constraints,
    /// generated or identity columns, invariants, a change data feed, append-only, or NOT NULL
    /// nested fields. Such a table is written by delta-rs's own write, which enforces them.
    pub guarded: bool,
    /// By relative path: the log's `path` decoded once (see [`crate::paths`]).
    files: HashMap<String, Live>,
    pub log_store: LogStoreRef,
}

/// The settings a write of the table's files takes from its properties.
#[derive(Clone)]
pub(crate) struct WriteSettings {
    pub target_file_size: NonZeroU64,
    pub stats: WriterStatsConfig,
    pub checkpoint_interval: u64,
}

/// A live data file: what a `remove` of it says, and its statistics (their JSON, as the `add`
/// recorded them).
#[derive(Clone)]
pub(crate) struct Live {
    pub partition_values: Arc<HashMap<String, Option<String>>>,
    pub size: i64,
    pub stats: Option<Arc<str>>,
}

impl Live {
    pub(crate) fn new(partition_values: HashMap<String, Option<String>>, size: i64, stats: Option<String>) -> Self {
        Self { partition_values: Arc::new(partition_values), size, stats: stats.map(Arc::from) }
    }

    /// The `remove` of this file, at the relative path `path`, stamped `now` (milliseconds since
    /// the epoch).
    pub(crate) fn remove(&self, path: &str, now: i64) -> Remove {
        Remove {
            path: path.to_owned(),
            data_change: true,
            deletion_timestamp: Some(now),
            extended_file_metadata: Some(true),
            partition_values: Some(HashMap::clone(&self.partition_values)),
            size: Some(self.size),
            ..Remove::default()
        }
    }
}

/// A commit the file list cannot be brought over: it changes the table's metadata or protocol.
#[derive(Debug)]
pub(crate) struct Changed;

impl FileList {
    /// The file list of the table at `location` as of `version`, read from its log through
    /// `log_store`; `None` where the log holds what this reader leaves to delta-rs's snapshot
    /// (see [`read`]).
    pub(crate) async fn from_log(location: &Location, log_store: LogStoreRef, version: u64) -> Result<Option<Self>> {
        read::from_log(location, log_store, version).await
    }

    /// The file list of `table` (at `location`), at its loaded version, from delta-rs's snapshot.
    pub(crate) fn of(location: &Location, table: &DeltaTable) -> Result<Self> {
        let open_err =
            |source: deltalake::DeltaTableError| Error::Open { url: location.url().clone(), source: Box::new(source) };
        let state = table.snapshot().map_err(open_err)?;
        let version = table.version().ok_or_else(|| Error::NotATable { url: location.url().clone() })?;
        let files = state
            .log_data()
            .iter()
            .map(|f| (f.path().into_owned(), Live::new(f.partition_values_map(), f.size(), f.stats())))
            .collect();
        Self::new(location, version, state.snapshot().table_configuration(), files, table.log_store())
    }

    /// The file list of a table whose configuration at `version` is `config`, with the live
    /// `files`.
    fn new(
        location: &Location,
        version: u64,
        config: &TableConfiguration,
        files: HashMap<String, Live>,
        log_store: LogStoreRef,
    ) -> Result<Self> {
        use deltalake::kernel::engine::arrow_conversion::TryIntoArrow;
        use deltalake::table::config::TablePropertiesExt;
        let properties = config.table_properties();
        let settings = WriteSettings {
            target_file_size: properties.target_file_size(),
            stats: WriterStatsConfig::from_config(config),
            checkpoint_interval: properties.checkpoint_interval().get(),
        };
        let schema: Schema = config
            .logical_schema()
            .as_ref()
            .try_into_arrow()
            .map_err(|e| Error::Read { url: location.url().clone(), source: e.into() })?;
        let schema = Arc::new(schema);
        let partition_columns = config.metadata().partition_columns().to_vec();
        Ok(Self {
            version,
            columns: provided(&schema, &partition_columns),
            guarded: guarded(config, &schema),
            shape: Shape {
                schema,
                partition_columns,
                properties: config.metadata().configuration().iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            },
            settings,
            unsupported: Arc::new(crate::protocol::unsupported_by(config.protocol())),
            files,
            log_store,
        })
    }

    /// The live files, by relative path (the log's `path` decoded once, as delta-rs's `Add` holds
    /// it; [`crate::paths::object`] is its object), in no order.
    pub(crate) fn files(&self) -> impl Iterator<Item = (&String, &Live)> {
        self.files.iter()
    }

    /// The range of `column` in each live file, in no order; `None` where one file records no
    /// bound of it (statistics that skip the column, a file of nulls only) or its type gives none
    /// (see [`crate::ranges`]).
    pub(crate) fn ranges(&self, column: &str) -> Option<Vec<crate::ranges::Range>> {
        let data_type = self.shape.schema.field_with_name(column).ok()?.data_type().clone();
        self.files.values().map(|live| crate::ranges::range(live.stats.as_deref()?, column, &data_type)).collect()
    }

    /// Applies one commit's actions (`bytes`, a commit file) as version `version`: its adds and
    /// removes; [`Changed`] where it changes the metadata or protocol.
    pub(crate) fn apply(&mut self, version: u64, bytes: &[u8]) -> Result<(), Changed> {
        for action in crate::state::actions(bytes) {
            if action.get("metaData").is_some() || action.get("protocol").is_some() {
                return Err(Changed);
            }
            if let Some(add) = action.get("add") {
                let add: Add = serde_json::from_value(add.clone()).map_err(|_| Changed)?;
                self.files.insert(add.path, Live::new(add.partition_values, add.size, add.stats));
            } else if let Some(remove) = action.get("remove") {
                let remove: Remove = serde_json::from_value(remove.clone()).map_err(|_| Changed)?;
                self.files.remove(&remove.path);
            }
        }
        self.version = version;
        Ok(())
    }

    /// Applies this write's own `adds` and `removes`, committed as `version`.
    pub(crate) fn committed(&mut self, version: u64, adds: &[Add], removes: &[Remove]) {
        for remove in removes {
            self.files.remove(&remove.path);
        }
        for add in adds {
            self.files.insert(add.path.clone(), Live::new(add.partition_values.clone(), add.size, add.stats.clone()));
        }
        self.version = version;
    }

    /// Brings the list forward to `version` over the commit files since; [`Changed`] where one of
    /// them changes the metadata or protocol, or cannot be read.
    pub(crate) async fn forward(&mut self, version: u64) -> Result<(), Changed> {
        for next in self.version + 1..=version {
            match self.log_store.read_commit_entry(next).await {
                Ok(Some(bytes)) => self.apply(next, &bytes)?,
                _ => return Err(Changed),
            }
        }
        Ok(())
    }

    /// Brings the list forward over the commit files after its version until one is missing:
    /// to the table's latest version. [`Changed`] as [`FileList::forward`].
    pub(crate) async fn forward_to_latest(&mut self) -> Result<(), Changed> {
        loop {
            match self.log_store.read_commit_entry(self.version + 1).await {
                Ok(Some(bytes)) => self.apply(self.version + 1, &bytes)?,
                Ok(None) => return Ok(()),
                Err(_) => return Err(Changed),
            }
        }
    }
}

/// See [`FileList::guarded`]: the table of `config`, whose columns are `schema`.
fn guarded(config: &TableConfiguration, schema: &Schema) -> bool {
    use deltalake::table::config::TablePropertiesExt;
    let properties = config.table_properties();
    let settings = config.metadata().configuration();
    let constrained = settings.keys().any(|k| k.starts_with("delta.constraints."));
    let special = |f: &deltalake::kernel::StructField| {
        f.metadata().keys().any(|k| {
            k.starts_with("delta.generationExpression") || k.starts_with("delta.identity") || k == "delta.invariants"
        })
    };
    let nested_not_null =
        schema.fields().iter().any(|f| crate::nullability::nullable_type(f.data_type()) != *f.data_type());
    constrained
        || properties.enable_change_data_feed()
        || properties.append_only()
        || config.logical_schema().fields().any(special)
        || nested_not_null
}

/// The columns of a table of the columns `schema`, partitioned by `partition_columns`, as delta-rs's
/// DataFusion provider exposes them (its default scan configuration): a string or binary
/// partition column dictionary-encoded, other strings and binaries as views, nested ones too.
fn provided(schema: &Schema, partition_columns: &[String]) -> SchemaRef {
    use datafusion::datasource::physical_plan::wrap_partition_type_in_dict;
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|field| match field.data_type() {
            t @ (DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary)
                if partition_columns.contains(field.name()) =>
            {
                Arc::new(Field::clone(field).with_data_type(wrap_partition_type_in_dict(t.clone())))
            }
            _ => viewed(field),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// `field` with its strings and binaries as views, nested ones too (structs and lists).
fn viewed(field: &FieldRef) -> FieldRef {
    let data_type = match field.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 => DataType::Utf8View,
        DataType::Binary | DataType::LargeBinary => DataType::BinaryView,
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(viewed).collect()),
        DataType::List(item) => DataType::List(viewed(item)),
        DataType::LargeList(item) => DataType::LargeList(viewed(item)),
        DataType::ListView(item) => DataType::ListView(viewed(item)),
        _ => return field.clone(),
    };
    Arc::new(Field::clone(field).with_data_type(data_type))
}
