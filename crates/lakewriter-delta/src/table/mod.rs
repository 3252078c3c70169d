//! Opening Delta tables, keeping them and their file lists between a command's writes
//! ([`LoadedTables`]), and exposing them to DataFusion SQL (`scan`: the provider whose scan an engine
//! can be sent).

use std::sync::{Arc, Mutex};

use datafusion::catalog::TableProvider;
use deltalake::DeltaTable;
use lakewriter_storage::Location;

use crate::files::FileList;
pub use crate::files::Shape;
use crate::ranges::Range;
use crate::{Error, Result};

mod scan;

/// A local folder that does not exist yet (and so holds no table). A folder that cannot be
/// looked at (a folder above it without read or search permission) is an error, never missing:
/// taken for missing, an unreadable table would read as no table, and a write would start a new
/// one.
fn missing_local_dir(location: &Location) -> Result<Option<std::path::PathBuf>> {
    let Some(path) = location.url().to_file_path().ok().filter(|_| location.is_local()) else { return Ok(None) };
    match path.try_exists() {
        Ok(exists) => Ok((!exists).then_some(path)),
        Err(e) => Err(Error::Read { url: location.url().clone(), source: e.into() }),
    }
}

/// The table at `url` as of `version`, or its latest version (a handle to a new table where there
/// is none).
async fn load(location: &Location, url: url::Url, version: Option<u64>) -> Result<DeltaTable> {
    crate::s3::register();
    let err = |source| Error::Open { url: location.url().clone(), source: Box::new(source) };
    match version {
        None => DeltaTable::try_from_url_with_storage_options(url, location.options().clone()).await.map_err(err),
        Some(version) => deltalake::DeltaTableBuilder::from_url(url)
            .map_err(err)?
            .with_storage_options(location.options().clone())
            .with_version(version)
            .load()
            .await
            .map_err(err),
    }
}

/// A handle to the table at `location` whose log has not been read: for the log store alone.
pub(crate) fn unloaded(location: &Location) -> Result<DeltaTable> {
    crate::s3::register();
    let err = |source| Error::Open { url: location.url().clone(), source: Box::new(source) };
    deltalake::DeltaTableBuilder::from_url(location.url().clone())
        .map_err(err)?
        .with_storage_options(location.options().clone())
        .build()
        .map_err(err)
}

/// Opens the table at `location` if there is one.
pub(crate) async fn open_if_exists(location: &Location) -> Result<Option<DeltaTable>> {
    if missing_local_dir(location)?.is_some() {
        return Ok(None);
    }
    let table = load(location, location.url().clone(), None).await?;
    Ok(table.version().is_some().then_some(table))
}

/// Opens the existing table at `location`.
pub(crate) async fn open_existing(location: &Location) -> Result<DeltaTable> {
    open_if_exists(location).await?.ok_or_else(|| Error::NotATable { url: location.url().clone() })
}

impl LoadedTables {
    /// The columns and partition columns of the table at `location` as of `version`; `None`
    /// where there is no version (no table yet).
    pub async fn shape(&self, location: &Location, version: Option<u64>) -> Result<Option<Shape>> {
        let Some(version) = version else { return Ok(None) };
        Ok(Some(self.list_at(location, version).await?.shape.clone()))
    }

    /// The columns of the table at `location` as of `version` as its DataFusion provider exposes
    /// them (the order and types a query of it reads).
    pub async fn columns(&self, location: &Location, version: u64) -> Result<datafusion::arrow::datatypes::SchemaRef> {
        Ok(self.list_at(location, version).await?.columns.clone())
    }

    /// The file list of the table at `location` as of `version` (see [`FileList`]): the kept one
    /// nearest below it brought forward over the commit files since, or else read from the table's
    /// log ([`read_list`]) and kept.
    pub(crate) async fn list_at(&self, location: &Location, version: u64) -> Result<Arc<FileList>> {
        let kept = {
            let lists = self.lists.lock().expect("a kept-lists lock is never poisoned");
            lists
                .iter()
                .filter(|l| &l.url == location.url() && l.list.version <= version)
                .max_by_key(|l| l.list.version)
                .map(|l| l.list.clone())
        };
        if let Some(list) = kept {
            if list.version == version {
                return Ok(list);
            }
            let mut list = FileList::clone(&list);
            if list.forward(version).await.is_ok() {
                return Ok(self.keep_list(location, list));
            }
        }
        Ok(self.keep_list(location, read_list(location, version).await?))
    }

    /// The range of `column` in each live file of the table at `location` as of `version`, in
    /// no order; `None` where one file records no bound of it (statistics that skip the column, a
    /// file of nulls only) or its type gives none (see the module's header).
    pub async fn ranges(&self, location: &Location, version: u64, column: &str) -> Result<Option<Vec<Range>>> {
        Ok(self.list_at(location, version).await?.ranges(column))
    }

    /// The latest version of the table at `location`, `None` where there is none: where a file
    /// list of it is kept, the commit files after the list's version read until one is missing
    /// (the list brought forward over them), so that a command's later writes never list the log;
    /// else [`crate::state::latest_version`], a listing from its last checkpoint.
    pub async fn latest_version(&self, location: &Location) -> Result<Option<u64>> {
        let kept = {
            let lists = self.lists.lock().expect("a kept-lists lock is never poisoned");
            lists.iter().filter(|l| &l.url == location.url()).max_by_key(|l| l.list.version).map(|l| l.list.clone())
        };
        if let Some(kept) = kept {
            match kept.log_store.read_commit_entry(kept.version + 1).await {
                Ok(None) => return Ok(Some(kept.version)),
                Ok(Some(bytes)) => {
                    let mut list = FileList::clone(&kept);
                    if list.apply(kept.version + 1, &bytes).is_ok() && list.forward_to_latest().await.is_ok() {
                        return Ok(Some(self.keep_list(location, list).version));
                    }
                }
                Err(e) => {
                    tracing::debug!(url = %location.url(), error = %e, "cannot read the log after a kept file list; listing it");
                }
            }
        }
        crate::state::latest_version(location).await
    }

    /// Keeps `list` (of the table at `location`) for later writes; returns it as kept. The
    /// newest [`Self::KEPT`] lists are kept, of several versions of a table too: partitions in
    /// flight at once each read the version before the others' commits.
    pub(crate) fn keep_list(&self, location: &Location, list: FileList) -> Arc<FileList> {
        let list = Arc::new(list);
        let mut lists = self.lists.lock().expect("a kept-lists lock is never poisoned");
        lists.retain(|l| &l.url != location.url() || l.list.version != list.version);
        if lists.len() == Self::KEPT {
            lists.remove(0);
        }
        lists.push(KeptList { url: location.url().clone(), list: list.clone() });
        list
    }
}

/// The file list of the table at `location` as of `version`: read from its log where it can be
/// ([`FileList::from_log`]), else from delta-rs's snapshot at that version.
async fn read_list(location: &Location, version: u64) -> Result<FileList> {
    if let Some(list) = FileList::from_log(location, unloaded(location)?.log_store(), version).await? {
        return Ok(list);
    }
    FileList::of(location, &open_at(location, version).await?)
}

/// Tables a command's writes have loaded, kept for its next write of the same table: that write
/// brings a kept table forward to the version it read, replaying only the commits made since,
/// instead of reading the table's checkpoint and every commit after it again. A backfill's
/// partitions each write over the version before them, so each replays one commit or a few.
#[derive(Default)]
pub struct LoadedTables {
    kept: Mutex<Vec<Kept>>,
    lists: Mutex<Vec<KeptList>>,
}

/// A kept [`FileList`].
struct KeptList {
    url: url::Url,
    list: Arc<FileList>,
}

impl std::fmt::Debug for LoadedTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.lock().map_or(0, |k| k.len());
        let lists = self.lists.lock().map_or(0, |l| l.len());
        f.debug_struct("LoadedTables").field("kept", &kept).field("lists", &lists).finish()
    }
}

struct Kept {
    url: url::Url,
    table: DeltaTable,
    /// The version this table's state was last read from the log at, before any bringing forward.
    base: u64,
}

impl LoadedTables {
    /// Tables kept at once: the newest, over all tables.
    const KEPT: usize = 8;
    /// Commits a table is brought forward by before it is read from the log again. delta-rs keeps
    /// each update's file batches, so replaying over them costs more per commit as they pile up:
    /// brought forward without a bound, a 3,650-day backfill slowed to 0.67 s a partition at
    /// 2,300 commits and held 1.1 GB. A read afresh starts from the newest checkpoint (written
    /// every 100 commits by default).
    const FORWARD: u64 = 100;

    /// The kept table at `location` nearest below `version`, brought forward to `version`, and
    /// its base; `None` where none is kept or it cannot be brought forward.
    async fn at(&self, location: &Location, version: u64) -> Option<(DeltaTable, u64)> {
        let (mut table, base) = {
            let kept = self.kept.lock().expect("a kept-tables lock is never poisoned");
            kept.iter()
                .filter(|k| &k.url == location.url() && k.base + Self::FORWARD > version)
                .filter(|k| k.table.version().is_some_and(|v| v <= version))
                .max_by_key(|k| k.table.version())
                .map(|k| (k.table.clone(), k.base))?
        };
        match table.update_incremental(Some(version)).await {
            Ok(()) => Some((table, base)),
            Err(e) => {
                tracing::debug!(url = %location.url(), version, error = %e, "cannot bring a kept table forward; reading it again");
                None
            }
        }
    }

    /// The table at `location` as of `version`, and the version it was last read from the log at:
    /// a kept one brought forward, or else read afresh and kept.
    pub(crate) async fn table_at(&self, location: &Location, version: u64) -> Result<(DeltaTable, u64)> {
        if let Some(found) = self.at(location, version).await {
            return Ok(found);
        }
        let table = open_at(location, version).await?;
        self.keep(location, &table, version);
        Ok((table, version))
    }

    /// A DataFusion table provider over version `version` of the table at `location` (see
    /// [`LoadedTables::table_at`]): the write that follows over the same version reuses the table.
    pub async fn provider_at(&self, location: &Location, version: u64) -> Result<Arc<dyn TableProvider>> {
        provider_of(location, &self.table_at(location, version).await?.0).await
    }

    /// The versions of the file lists kept for `location`, oldest first.
    #[cfg(test)]
    pub(crate) fn versions(&self, location: &Location) -> Vec<u64> {
        let lists = self.lists.lock().expect("a kept-lists lock is never poisoned");
        lists.iter().filter(|l| &l.url == location.url()).map(|l| l.list.version).collect()
    }

    /// Keeps `table` (at `location`, read from the log at version `base`) for later writes.
    pub(crate) fn keep(&self, location: &Location, table: &DeltaTable, base: u64) {
        let mut kept = self.kept.lock().expect("a kept-tables lock is never poisoned");
        if kept.len() == Self::KEPT {
            kept.remove(0);
        }
        kept.push(Kept { url: location.url().clone(), table: table.clone(), base });
    }
}

/// A table opened for a write (see [`open_for_write`]).
pub(crate) struct ForWrite {
    pub table: DeltaTable,
    /// The version its state was last read from the log at (see [`LoadedTables::keep`]).
    pub base: u64,
    /// The local folder the open created, if it did, so that a failed first write can remove it.
    pub created: Option<std::path::PathBuf>,
}

/// A handle to write to `location`: the table there as of `version` (see
/// [`LoadedTables::table_at`]), or, without a version, the table there now or a new one (creating
/// a local folder for it). A local open is tried twice: another first writer that failed may remove
/// the new, still empty folder between its creation here and its use.
pub(crate) async fn open_for_write(
    location: &Location,
    version: Option<u64>,
    loaded: &LoadedTables,
) -> Result<ForWrite> {
    if let Some(version) = version {
        let (table, base) = loaded.table_at(location, version).await?;
        return Ok(ForWrite { table, base, created: None });
    }
    let created = missing_local_dir(location)?;
    if !location.is_local() {
        let table = load(location, location.url().clone(), None).await?;
        return Ok(ForWrite { table, base: 0, created });
    }
    let open = || async {
        if let Some(dir) = &created {
            // delta-rs would create it too, but tell a failure (a read-only or full disk) as text.
            std::fs::create_dir_all(dir)
                .map_err(|source| Error::CreateFolder { url: location.url().clone(), source })?;
        }
        let url = deltalake::ensure_table_uri(location.url().as_str())
            .map_err(|source| Error::Open { url: location.url().clone(), source: Box::new(source) })?;
        load(location, url, None).await
    };
    let table = match open().await {
        Ok(table) => table,
        Err(_) => open().await?,
    };
    Ok(ForWrite { table, base: 0, created })
}

/// The current version of the table at `location`, `None` where no table exists yet.
pub async fn version(location: &Location) -> Result<Option<u64>> {
    Ok(open_if_exists(location).await?.and_then(|t| t.version()))
}

/// A DataFusion table provider over the table's latest snapshot.
pub async fn provider(location: &Location) -> Result<Arc<dyn TableProvider>> {
    provider_of(location, &open_existing(location).await?).await
}

pub(crate) async fn provider_of(location: &Location, table: &DeltaTable) -> Result<Arc<dyn TableProvider>> {
    table.table_provider().await.map_err(|e| Error::Read { url: location.url().clone(), source: e.into() })
}

/// The table at `location` as of `version`.
pub(crate) async fn open_at(location: &Location, version: u64) -> Result<DeltaTable> {
    load(location, location.url().clone(), Some(version)).await
}

/// A DataFusion table provider over version `version` of the table.
pub async fn provider_at(location: &Location, version: u64) -> Result<Arc<dyn TableProvider>> {
    provider_of(location, &open_at(location, version).await?).await
}
