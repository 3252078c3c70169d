//! The sample project behind `lakewriter demo`: a `lakewriter.toml` and a deterministic raw
//! layer of orders and customer changes for September 2026.

use std::path::{Path, PathBuf};

use lakewriter_storage::Location;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore as _, PutMode};

use chrono::NaiveDate;
use lakewriter_core::DateRange;

use crate::{Error, Result};

/// The sample project file, `data/demo/lakewriter.toml`.
pub const PROJECT_TOML: &str = include_str!("../../../data/demo/lakewriter.toml");

/// The sample fact job (partition overwrite).
pub const JOB: &str = "daily_orders";

/// The sample dimension job (merge).
pub const DIMENSION_JOB: &str = "customers";

/// The days of the sample raw layer: September 2026.
#[must_use]
pub fn days() -> DateRange {
    let d = |day| NaiveDate::from_ymd_opt(2026, 9, day).unwrap_or_default();
    DateRange::new(d(1), d(30)).unwrap_or_else(|_| unreachable!("1 September is before 30 September"))
}

/// Writes the sample project file into `dir` unless one is there. Returns its path and whether
/// it was written.
pub fn write_project(dir: &Path) -> Result<(PathBuf, bool)> {
    let err = |e: std::io::Error| Error::Demo { dir: dir.to_path_buf(), source: e.into() };
    std::fs::create_dir_all(dir).map_err(err)?;
    let project_file = dir.join(crate::workspace::PROJECT_FILE);
    let written = !project_file.exists();
    if written {
        std::fs::write(&project_file, PROJECT_TOML).map_err(err)?;
    }
    Ok((project_file, written))
}

/// What [`write_raw`] did: files written, and files that were there and were kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawFiles {
    pub written: usize,
    pub kept: usize,
}

/// Writes the sample raw layer of [`days`] below `root` (local or S3) through its object store.
/// A file that exists is kept as it is: raw data is immutable. Each file appears whole or not at
/// all (an object store put). Safe to repeat.
pub async fn write_raw(root: &Location) -> Result<RawFiles> {
    put_new(root, days().days().flat_map(lakewriter_datagen::sample_files)).await
}

/// Where [`write_late`] puts `day`'s late orders, below the lakehouse root.
#[must_use]
pub fn late_file(day: NaiveDate) -> String {
    format!("raw/orders/dt={day}/part-late-00000.parquet")
}

/// Writes a file of late orders into `day`'s raw partition (see [`late_file`]); a file that
/// exists is kept. Returns whether it was written.
pub async fn write_late(root: &Location, day: NaiveDate) -> Result<bool> {
    let files = put_new(root, [(late_file(day), lakewriter_datagen::late_orders_for(day))]).await?;
    Ok(files.written == 1)
}

/// Puts each (path below `root`, rows) as a Parquet file, keeping files that exist.
async fn put_new(
    root: &Location,
    files: impl IntoIterator<Item = (String, datafusion::arrow::array::RecordBatch)>,
) -> Result<RawFiles> {
    let dir = PathBuf::from(root.url().as_str());
    let err = |e: Box<dyn std::error::Error + Send + Sync>| Error::Demo { dir: dir.clone(), source: e };
    let store = root.object_store().map_err(|e| err(e.into()))?;
    let base = ObjectPath::from_url_path(root.url().path()).map_err(|e| err(e.into()))?;
    let mut outcome = RawFiles::default();
    for (relative, batch) in files {
        let path = relative.split('/').fold(base.clone(), ObjectPath::join);
        let bytes = lakewriter_datagen::parquet_bytes(&batch).map_err(|e| err(e.into()))?;
        match store.put_opts(&path, bytes.into(), PutMode::Create.into()).await {
            Ok(_) => outcome.written += 1,
            Err(object_store::Error::AlreadyExists { .. }) => outcome.kept += 1,
            Err(e) => return Err(err(e.into())),
        }
    }
    Ok(outcome)
}
