//! Opening Delta tables, and exposing them to DataFusion SQL.

use std::sync::Arc;

use datafusion::catalog::TableProvider;
use deltalake::DeltaTable;
use url::Url;

use crate::{Error, Result};

/// A local folder that does not exist yet (and so holds no table).
fn missing_local_dir(url: &Url) -> Option<std::path::PathBuf> {
    let path = url.to_file_path().ok().filter(|_| url.scheme() == "file")?;
    (!path.exists()).then_some(path)
}

/// Opens the table at `url` if there is one.
pub(crate) async fn open_if_exists(url: &Url) -> Result<Option<DeltaTable>> {
    if missing_local_dir(url).is_some() {
        return Ok(None);
    }
    let table = DeltaTable::try_from_url(url.clone())
        .await
        .map_err(|source| Error::Open { url: url.clone(), source: Box::new(source) })?;
    Ok(table.version().is_some().then_some(table))
}

/// Opens the existing table at `url`.
pub(crate) async fn open_existing(url: &Url) -> Result<DeltaTable> {
    open_if_exists(url).await?.ok_or_else(|| Error::NotATable { url: url.clone() })
}

/// A handle to write to `url`: the table there, or a new one (creating a local folder for it).
/// Also returns the local folder it created, if it did, so a failed first write can remove it.
pub(crate) async fn open_for_write(url: &Url) -> Result<(DeltaTable, Option<std::path::PathBuf>)> {
    let err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let created = missing_local_dir(url);
    let location = deltalake::ensure_table_uri(url.as_str()).map_err(err)?;
    let table = DeltaTable::try_from_url(location).await.map_err(err)?;
    Ok((table, created))
}

/// The current version of the table at `url`, `None` where no table exists yet.
pub async fn version(url: &Url) -> Result<Option<u64>> {
    Ok(open_if_exists(url).await?.and_then(|t| t.version()))
}

/// A DataFusion table provider over the table's latest snapshot.
pub async fn provider(url: &Url) -> Result<Arc<dyn TableProvider>> {
    let table = open_existing(url).await?;
    table.table_provider().await.map_err(|e| Error::Read { url: url.clone(), source: e.into() })
}

/// A DataFusion table provider over version `version` of the table.
pub async fn provider_at(url: &Url, version: u64) -> Result<Arc<dyn TableProvider>> {
    let mut table = open_existing(url).await?;
    table.load_version(version).await.map_err(|source| Error::Open { url: url.clone(), source: Box::new(source) })?;
    table.table_provider().await.map_err(|e| Error::Read { url: url.clone(), source: e.into() })
}

/// The table's Arrow schema, `None` where no table exists yet.
pub async fn arrow_schema(url: &Url) -> Result<Option<datafusion::arrow::datatypes::SchemaRef>> {
    let Some(table) = open_if_exists(url).await? else { return Ok(None) };
    let state = table.snapshot().map_err(|source| Error::Open { url: url.clone(), source: Box::new(source) })?;
    Ok(Some(state.snapshot().arrow_schema()))
}
