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
    let dir = PathBuf::from(root.url().as_str());
    let err = |e: Box<dyn std::error::Error + Send + Sync>| Error::Demo { dir: dir.clone(), source: e };
    let store = root.object_store().map_err(|e| err(e.into()))?;
    let base = ObjectPath::from_url_path(root.url().path()).map_err(|e| err(e.into()))?;
    let mut files = RawFiles::default();
    for day in days().days() {
        for (relative, batch) in lakewriter_datagen::sample_files(day) {
            let path = relative.split('/').fold(base.clone(), ObjectPath::join);
            let bytes = lakewriter_datagen::parquet_bytes(&batch).map_err(|e| err(e.into()))?;
            match store.put_opts(&path, bytes.into(), PutMode::Create.into()).await {
                Ok(_) => files.written += 1,
                Err(object_store::Error::AlreadyExists { .. }) => files.kept += 1,
                Err(e) => return Err(err(e.into())),
            }
        }
    }
    Ok(files)
}
