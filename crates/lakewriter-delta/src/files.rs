//! The file list lakewriter keeps of a table between a command's writes: the table's live data
//! files, its columns and the settings its writes take, at one version, brought forward by reading
//! only the commit files made since. A partition overwrite commits over it (see
//! `write::partition`) without delta-rs loading, replaying or updating the table's snapshot, so
//! that the cost of a commit follows the partition it replaces, not the table's history.
//!
//! It is read from the table once (delta-rs's snapshot at a version) and from then on kept by
//! applying the `add` and `remove` actions of each later commit. A commit that changes the
//! table's metadata or protocol ends it: the next write reads the table afresh.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use deltalake::DeltaTable;
use deltalake::kernel::{Add, Remove};
use deltalake::logstore::LogStoreRef;
use deltalake::operations::write::WriterStatsConfig;
use lakewriter_storage::Location;
use serde_json::Value;

use crate::table::Shape;
use crate::{Error, Result};

/// A table's live files and what a write over them needs, at [`FileList::version`].
#[derive(Clone)]
pub(crate) struct FileList {
    pub version: u64,
    /// The table's columns (delta-rs's snapshot schema) and partition columns.
    pub shape: Shape,
    /// The columns as the table's DataFusion provider exposes them (see `Runner::columns_at`).
    pub columns: SchemaRef,
    pub settings: WriteSettings,
    /// The features of the table's protocol lakewriter does not write with (see
    /// [`crate::protocol::unsupported`]).
    pub unsupported: Arc<Vec<String>>,
    /// The table asks its writers for more than lakewriter's own checks do: CHECK constraints,
    /// generated or identity columns, invariants, a change data feed, append-only, or NOT NULL
    /// nested fields. Such a table is written by delta-rs's own write, which enforces them.
    pub guarded: bool,
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
    fn new(partition_values: HashMap<String, Option<String>>, size: i64, stats: Option<String>) -> Self {
        Self { partition_values: Arc::new(partition_values), size, stats: stats.map(Arc::from) }
    }

    /// The `remove` of this file, at `path`, stamped `now` (milliseconds since the epoch).
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
    /// The file list of `table` (at `location`), at its loaded version.
    pub(crate) async fn of(location: &Location, table: &DeltaTable) -> Result<Self> {
        use deltalake::table::config::TablePropertiesExt;
        let open_err =
            |source: deltalake::DeltaTableError| Error::Open { url: location.url().clone(), source: Box::new(source) };
        let state = table.snapshot().map_err(open_err)?;
        let version = table.version().ok_or_else(|| Error::NotATable { url: location.url().clone() })?;
        let config = state.table_config();
        let settings = WriteSettings {
            target_file_size: config.target_file_size(),
            stats: WriterStatsConfig::from_config(state.snapshot().table_configuration()),
            checkpoint_interval: config.checkpoint_interval().get(),
        };
        let files = state
            .log_data()
            .iter()
            .map(|f| (f.path().into_owned(), Live::new(f.partition_values_map(), f.size(), f.stats())))
            .collect();
        Ok(Self {
            version,
            shape: Shape {
                schema: state.snapshot().arrow_schema(),
                partition_columns: state.metadata().partition_columns().to_vec(),
            },
            columns: crate::table::provider_of(location, table).await?.schema(),
            settings,
            unsupported: Arc::new(crate::protocol::unsupported(table)),
            guarded: guarded(state),
            files,
            log_store: table.log_store(),
        })
    }

    /// The live files whose partition values hold `value` in `column`, as `remove` actions
    /// stamped `now` (milliseconds since the epoch).
    pub(crate) fn removes(&self, column: &str, value: &str, now: i64) -> Vec<Remove> {
        let mut removes: Vec<Remove> = self
            .files
            .iter()
            .filter(|(_, live)| in_partition(&live.partition_values, column, value))
            .map(|(path, live)| live.remove(path, now))
            .collect();
        removes.sort_by(|a, b| a.path.cmp(&b.path));
        removes
    }

    /// The live files, by path (as the log names them), in no order.
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

/// Whether `values` (a file's partition values) hold `value` in `column`; a file without the
/// column counts as in every partition, so that it is never left behind.
pub(crate) fn in_partition(values: &HashMap<String, Option<String>>, column: &str, value: &str) -> bool {
    values.get(column).is_none_or(|v| v.as_deref() == Some(value))
}

/// Whether a commit's `action` (one line of a commit file) touches the partition `column = value`:
/// a data file added or removed there (or anywhere, where it names no partition).
pub(crate) fn touches(action: &Value, column: &str, value: &str) -> bool {
    ["add", "remove", "cdc"].iter().filter_map(|kind| action.get(kind)).any(|file| {
        match file.get("partitionValues").and_then(Value::as_object) {
            Some(values) => match values.get(column) {
                Some(Value::String(v)) => v == value,
                Some(_) => false,
                None => true,
            },
            None => true,
        }
    })
}

/// See [`FileList::guarded`].
fn guarded(state: &deltalake::table::state::DeltaTableState) -> bool {
    use deltalake::table::config::TablePropertiesExt;
    let config = state.table_config();
    let settings = state.metadata().configuration();
    let constrained = settings.keys().any(|k| k.starts_with("delta.constraints."));
    let special = |f: &deltalake::kernel::StructField| {
        f.metadata().keys().any(|k| {
            k.starts_with("delta.generationExpression") || k.starts_with("delta.identity") || k == "delta.invariants"
        })
    };
    let arrow = state.snapshot().arrow_schema();
    let nested_not_null =
        arrow.fields().iter().any(|f| crate::nullability::nullable_type(f.data_type()) != *f.data_type());
    constrained
        || config.enable_change_data_feed()
        || config.append_only()
        || state.schema().fields().any(special)
        || nested_not_null
}
