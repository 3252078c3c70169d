//! The lakehouse catalog: each `<root>/<schema>/` folder is a DataFusion schema whose tables open
//! on first use, so a command pays only for the tables its SQL names.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::error::DataFusionError;
use datafusion::execution::SessionState;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use futures::lock::Mutex;
use lakewriter_compute::{TableEntry, TableKind, catalog};
use lakewriter_core::TableRef;
use lakewriter_delta::table::LoadedTables;
use lakewriter_storage::Location;

use crate::{Error, Result};

/// A table of the catalog.
#[derive(Debug)]
enum Table {
    /// A raw dataset: immutable, so opened once per command.
    Raw(TableEntry),
    /// A Delta table, read at its latest version each time a plan names it; `job` is the job
    /// whose target it is, if any (it may not exist yet).
    Delta { table: TableRef, location: Location, job: Option<String> },
    /// A folder that could not be read when the catalog was listed: an error for the plans that
    /// name it only.
    Unreadable(Arc<lakewriter_compute::Error>),
}

/// A Delta table's provider and the version it reads.
type Versioned = (u64, Arc<dyn TableProvider>);

/// The tables of one schema folder. A raw dataset is opened the first time a plan names it and
/// kept; a Delta table is read as of its latest commit each time a plan names it — so that a job
/// reading a table written earlier in the same command (an upstream job's target, or its own)
/// reads it as committed, also on a conflict retry — through the command's loaded tables, which
/// bring a table read before forward over the commits since.
#[derive(Debug)]
struct LakeSchema {
    tables: BTreeMap<String, Table>,
    /// For raw datasets' schema inference: the session's object stores, not its catalog.
    state: SessionState,
    raw: Mutex<HashMap<String, Option<Arc<dyn TableProvider>>>>,
    /// The provider last made for each Delta table, with its version.
    delta: Mutex<HashMap<String, Versioned>>,
    loaded: Arc<LoadedTables>,
}

impl LakeSchema {
    async fn open_raw(&self, entry: &TableEntry) -> Result<Option<Arc<dyn TableProvider>>> {
        let name = entry.name.table();
        if let Some(provider) = self.raw.lock().await.get(name) {
            return Ok(provider.clone());
        }
        let provider = lakewriter_compute::raw::RawTable::open(&self.state, entry)
            .await
            .map_err(|source| Error::Catalog { source })?;
        tracing::debug!(table = %entry.name, url = %entry.url, "opened");
        self.raw.lock().await.insert(name.to_owned(), provider.clone());
        Ok(provider)
    }

    async fn open_delta(
        &self,
        table: &TableRef,
        location: &Location,
        job: Option<&str>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        let open_err = |source| Error::OpenTable { table: table.to_string(), source: Box::new(source) };
        let Some(version) = lakewriter_delta::state::latest_version(location).await.map_err(open_err)? else {
            return match job {
                Some(job) => Err(Error::NoTableYet { table: table.to_string(), job: job.to_owned() }),
                None => Ok(None),
            };
        };
        let name = table.table();
        if let Some((v, provider)) = self.delta.lock().await.get(name)
            && *v == version
        {
            return Ok(Some(provider.clone()));
        }
        let provider = self.loaded.sendable_at(location, version).await.map_err(open_err)?;
        tracing::debug!(%table, version, "opened");
        self.delta.lock().await.insert(name.to_owned(), (version, provider.clone()));
        Ok(Some(provider))
    }
}

#[async_trait::async_trait]
impl SchemaProvider for LakeSchema {
    fn table_names(&self) -> Vec<String> {
        self.tables.keys().cloned().collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        let opened = match self.tables.get(name) {
            None => return Ok(None),
            Some(Table::Raw(entry)) => self.open_raw(entry).await,
            Some(Table::Delta { table, location, job }) => self.open_delta(table, location, job.as_deref()).await,
            Some(Table::Unreadable(error)) => Err(Error::UnreadableTable { source: Arc::clone(error) }),
        };
        opened.map_err(|e| DataFusionError::External(Box::new(e)))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.tables.contains_key(name)
    }
}

/// A job's target: the table, where it lives, and the job's name.
pub(crate) struct Target {
    pub table: TableRef,
    pub location: Location,
    pub job: String,
}

/// Registers in `ctx` every table found under `root`, and every job's target (found or not yet),
/// to be opened on first use; returns the raw datasets. A folder that is a job's target is a Delta table or nothing:
/// without a Delta log it holds, at most, the files of a first write that failed, never a raw
/// dataset.
pub(crate) async fn register(
    ctx: &SessionContext,
    root: &Location,
    targets: Vec<Target>,
    loaded: &Arc<LoadedTables>,
) -> Result<BTreeSet<TableRef>> {
    let found = catalog::discover(ctx, root.url()).await.map_err(|source| Error::Catalog { source })?;
    let mut schemas: BTreeMap<String, BTreeMap<String, Table>> = BTreeMap::new();
    let mut add = |name: &TableRef, table| {
        schemas.entry(name.schema().to_owned()).or_default().insert(name.table().to_owned(), table);
    };
    let mut raw = BTreeSet::new();
    for entry in found {
        if targets.iter().any(|t| t.table == entry.name) {
            continue;
        }
        match entry.kind {
            TableKind::Raw => {
                raw.insert(entry.name.clone());
                add(&entry.name.clone(), Table::Raw(entry));
            }
            TableKind::Delta => {
                let location = root.join(&entry.name.relative_dir())?;
                add(&entry.name, Table::Delta { table: entry.name.clone(), location, job: None });
            }
            TableKind::Unreadable(error) => add(&entry.name, Table::Unreadable(error)),
        }
    }
    for target in targets {
        add(
            &target.table,
            Table::Delta { table: target.table.clone(), location: target.location, job: Some(target.job) },
        );
    }
    let state = SessionStateBuilder::new().with_runtime_env(ctx.runtime_env()).build();
    for (name, tables) in schemas {
        let schema = LakeSchema {
            tables,
            state: state.clone(),
            raw: Mutex::new(HashMap::new()),
            delta: Mutex::new(HashMap::new()),
            loaded: Arc::clone(loaded),
        };
        catalog::register_schema(ctx, &name, Arc::new(schema)).map_err(|source| Error::Catalog { source })?;
    }
    Ok(raw)
}
