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
use lakewriter_storage::Location;

use crate::{Error, Result};

/// The tables of one schema folder. A table is opened the first time a plan names it — a Delta
/// table at its version of that moment, a raw dataset with its partition columns — and the same
/// provider serves every later plan of the command.
#[derive(Debug)]
struct LakeSchema {
    root: Location,
    entries: BTreeMap<String, TableEntry>,
    /// For raw datasets' schema inference: the session's object stores, not its catalog.
    state: SessionState,
    opened: Mutex<HashMap<String, Option<Arc<dyn TableProvider>>>>,
}

impl LakeSchema {
    async fn open(&self, entry: &TableEntry) -> Result<Option<Arc<dyn TableProvider>>> {
        let table = entry.name.to_string();
        let provider = match entry.kind {
            TableKind::Raw => lakewriter_compute::raw::RawTable::open(&self.state, entry)
                .await
                .map_err(|source| Error::Catalog { source })?,
            TableKind::Delta => {
                let location = self.root.join(&entry.name.relative_dir())?;
                let provider = lakewriter_delta::table::provider(&location)
                    .await
                    .map_err(|source| Error::OpenTable { table: table.clone(), source: Box::new(source) })?;
                Some(provider)
            }
        };
        tracing::debug!(%table, kind = ?entry.kind, url = %entry.url, "opened");
        Ok(provider)
    }
}

#[async_trait::async_trait]
impl SchemaProvider for LakeSchema {
    fn table_names(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        let Some(entry) = self.entries.get(name) else { return Ok(None) };
        let mut opened = self.opened.lock().await;
        if let Some(provider) = opened.get(name) {
            return Ok(provider.clone());
        }
        let provider = self.open(entry).await.map_err(|e| DataFusionError::External(Box::new(e)))?;
        opened.insert(name.to_owned(), provider.clone());
        Ok(provider)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }
}

/// Registers every table found under `root` in `ctx`, to be opened on first use. A folder that is
/// one of `targets` (the project's job targets) is a Delta table or nothing: without a Delta log
/// it holds, at most, the files of a first write that failed, never a raw dataset.
pub(crate) async fn register(ctx: &SessionContext, root: &Location, targets: &BTreeSet<&TableRef>) -> Result<()> {
    let tables = catalog::discover(ctx, root.url()).await.map_err(|source| Error::Catalog { source })?;
    let mut schemas: BTreeMap<String, BTreeMap<String, TableEntry>> = BTreeMap::new();
    for entry in tables {
        if entry.kind == TableKind::Raw && targets.contains(&entry.name) {
            tracing::debug!(table = %entry.name, "a job's target with no Delta log yet: not read as a raw dataset");
            continue;
        }
        schemas.entry(entry.name.schema().to_owned()).or_default().insert(entry.name.table().to_owned(), entry);
    }
    let state = SessionStateBuilder::new().with_runtime_env(ctx.runtime_env()).build();
    for (name, entries) in schemas {
        let schema =
            LakeSchema { root: root.clone(), entries, state: state.clone(), opened: Mutex::new(HashMap::new()) };
        catalog::register_schema(ctx, &name, Arc::new(schema)).map_err(|source| Error::Catalog { source })?;
    }
    Ok(())
}
