//! The sample project behind `lakewriter demo`: a `lakewriter.toml` and a deterministic raw
//! layer of orders and customer changes for September 2026.

use std::path::{Path, PathBuf};

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

/// What [`prepare`] laid out.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub project_file: PathBuf,
    /// False where a project file was already there and was kept.
    pub project_written: bool,
    pub raw_files_written: usize,
    pub raw_files_kept: usize,
}

/// Writes the sample project into `dir`: the project file unless one exists, and the raw orders
/// of [`days`] that are missing. Safe to repeat.
pub fn prepare(dir: &Path) -> Result<Prepared> {
    let err = |e: Box<dyn std::error::Error + Send + Sync>| Error::Demo { dir: dir.to_path_buf(), source: e };
    std::fs::create_dir_all(dir).map_err(|e| err(e.into()))?;
    let project_file = dir.join(crate::workspace::PROJECT_FILE);
    let project_written = !project_file.exists();
    if project_written {
        std::fs::write(&project_file, PROJECT_TOML).map_err(|e| err(e.into()))?;
    }
    let root = dir.join("lake");
    let orders = lakewriter_datagen::write_orders(&root, days()).map_err(|e| err(e.into()))?;
    let customers = lakewriter_datagen::write_customer_batches(&root, days()).map_err(|e| err(e.into()))?;
    Ok(Prepared {
        project_file,
        project_written,
        raw_files_written: orders.files_written + customers.files_written,
        raw_files_kept: orders.files_kept + customers.files_kept,
    })
}
