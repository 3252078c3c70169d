//! The lakehouse catalog: every `<root>/<schema>/<table>/` folder is a table `schema.table`.
//!
//! A folder holding `_delta_log/` is a Delta table; any other folder is a raw Parquet dataset
//! (see [`crate::raw`]). Raw datasets are only ever read.

use std::sync::Arc;

use datafusion::catalog::SchemaProvider;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::prelude::SessionContext;
use lakewriter_core::TableRef;
use object_store::ObjectStore;
use object_store::path::Path;
use url::Url;

use crate::{Error, Result};

/// What kind of table a folder holds.
#[derive(Debug, Clone)]
pub enum TableKind {
    Raw,
    Delta,
    /// A folder whose `_delta_log/` could not be listed: the error, for the plans that name it
    /// (the others do not depend on it).
    Unreadable(Arc<Error>),
}

/// One table found under the root.
#[derive(Debug, Clone)]
pub struct TableEntry {
    pub name: TableRef,
    /// The table's folder, with a trailing slash.
    pub url: Url,
    pub kind: TableKind,
}

fn object_store_url(url: &Url) -> Result<ObjectStoreUrl> {
    ObjectStoreUrl::parse(&url[..url::Position::BeforePath])
        .map_err(|e| Error::ListRoot { root: url.clone(), source: e.into() })
}

fn store_for(ctx: &SessionContext, url: &Url) -> Result<Arc<dyn ObjectStore>> {
    ctx.runtime_env()
        .object_store(object_store_url(url)?)
        .map_err(|e| Error::ListRoot { root: url.clone(), source: e.into() })
}

fn store_path(url: &Url) -> Result<Path> {
    Path::from_url_path(url.path()).map_err(|e| Error::ListRoot { root: url.clone(), source: e.into() })
}

/// Why listing `folder` failed: the root's own listing, or a folder's below it.
fn list_error(folder: &Url, root: &Url, source: object_store::Error) -> Error {
    if folder == root {
        Error::ListRoot { root: root.clone(), source: source.into() }
    } else {
        Error::ListFolder { folder: folder.clone(), source: source.into() }
    }
}

/// The sub-folders directly below `prefix` (the folder `url`), by name.
async fn folders(store: &dyn ObjectStore, prefix: &Path, url: &Url, root: &Url) -> Result<Vec<String>> {
    let listing = match store.list_with_delimiter(Some(prefix)).await {
        Ok(listing) => listing,
        Err(object_store::Error::NotFound { .. }) => return Ok(Vec::new()),
        Err(e) => return Err(list_error(url, root, e)),
    };
    Ok(listing.common_prefixes.iter().filter_map(|p| p.filename().map(str::to_owned)).collect())
}

/// Whether any file lies below `prefix` (the folder `url`): one listing request, whatever the
/// number of files.
async fn has_files(store: &dyn ObjectStore, prefix: &Path, url: &Url, root: &Url) -> Result<bool> {
    use futures::StreamExt;
    // A local folder's names are read until a file is found: object_store's local listing looks
    // at a batch of files (thousands, in a long log) before it yields the first.
    if let Ok(dir) = url.to_file_path() {
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                if entries.flatten().any(|e| e.file_type().is_ok_and(|t| t.is_file())) {
                    return Ok(true);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(_) => {}
        }
    }
    match store.list(Some(prefix)).next().await {
        None | Some(Err(object_store::Error::NotFound { .. })) => Ok(false),
        Some(Ok(_)) => Ok(true),
        Some(Err(e)) => Err(list_error(url, root, e)),
    }
}

/// Lists every table under `root`: a folder with files in `_delta_log/` is a Delta table (one
/// request tells, not a listing of the table's folders). Folders whose names are not identifiers
/// are ignored. A table folder that cannot be read is [`TableKind::Unreadable`]; a schema folder
/// (or the root) that cannot be listed is an error.
pub async fn discover(ctx: &SessionContext, root: &Url) -> Result<Vec<TableEntry>> {
    let store = store_for(ctx, root)?;
    let root_path = store_path(root)?;
    let below =
        |relative: &str| root.join(relative).map_err(|e| Error::ListRoot { root: root.clone(), source: e.into() });
    let mut tables = Vec::new();
    for schema in folders(store.as_ref(), &root_path, root, root).await? {
        let schema_path = root_path.clone().join(schema.as_str());
        for table in folders(store.as_ref(), &schema_path, &below(&format!("{schema}/"))?, root).await? {
            let Ok(name) = TableRef::new(&schema, &table) else {
                tracing::debug!(schema, table, "ignoring a folder whose name is not an identifier");
                continue;
            };
            let log = schema_path.clone().join(table.as_str()).join("_delta_log");
            let log_url = below(&format!("{}_delta_log/", name.relative_dir()))?;
            let kind = match has_files(store.as_ref(), &log, &log_url, root).await {
                Ok(true) => TableKind::Delta,
                Ok(false) => TableKind::Raw,
                Err(error) => {
                    tracing::warn!(table = %name, %error, "cannot tell what the folder holds: the plans that name it fail");
                    TableKind::Unreadable(Arc::new(error))
                }
            };
            let url = below(&name.relative_dir())?;
            tables.push(TableEntry { name, url, kind });
        }
    }
    Ok(tables)
}

/// Makes `schema` queryable as the schema `name` of the session's default catalog.
pub fn register_schema(ctx: &SessionContext, name: &str, schema: Arc<dyn SchemaProvider>) -> Result<()> {
    let err = |source| Error::Register { schema: name.to_owned(), source: Box::new(source) };
    let catalog_name = ctx.state().config().options().catalog.default_catalog.clone();
    let catalog = ctx
        .catalog(&catalog_name)
        .ok_or_else(|| err(datafusion::error::DataFusionError::Internal(format!("no catalog {catalog_name}"))))?;
    catalog.register_schema(name, schema).map_err(err)?;
    Ok(())
}
