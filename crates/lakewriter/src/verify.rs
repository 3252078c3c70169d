//! `verify`: a job's write applied twice to a scratch copy of its target, never the target
//! itself, and the content digests after each compared.

use std::collections::HashMap;
use std::path::Path;

use lakewriter_core::PartitionRun;
use lakewriter_delta::Digest;
use lakewriter_storage::Location;
use url::Url;

use crate::{Error, PartitionReport, PreparedJob, Result, Runner, VerifyReport};

impl Runner {
    /// Applies `unit`'s write twice to a scratch copy of its target (never the target itself) and
    /// compares the content digests after the first and the second application.
    pub async fn verify(&self, unit: &PartitionRun) -> Result<VerifyReport> {
        let job = self.prepare(&unit.job)?;
        job.partition_run(unit.dt, unit.force)?;
        let scratch = tempfile::Builder::new()
            .prefix("lakewriter-verify-")
            .tempdir()
            .map_err(|source| Error::Scratch { from: std::env::temp_dir(), source })?;
        let copy = PreparedJob { location: scratch_copy(&job.location, &scratch.path().join("table"))?, ..job.clone() };
        let run = copy.partition_run(unit.dt, unit.force)?;
        let table = job.spec.target.to_string();

        let first = self.run_prepared(&run).await;
        let mut report = VerifyReport::new(&job, first);
        if !report.first.is_ok() {
            return Ok(report);
        }
        let d1 = digest(&copy.location, &table).await?;
        let second = self.run_prepared(&run).await;
        let ok = second.is_ok();
        report.second = Some(second);
        if !ok {
            return Ok(report);
        }
        let d2 = digest(&copy.location, &table).await?;
        report.pass = d1.digest == d2.digest && d1.rows == d2.rows;
        if !report.pass {
            (report.rows_added, report.rows_removed) =
                self.diff(&copy.location, &table, d1.version, d2.version).await?;
        }
        report.digest_first = Some(d1.digest);
        report.digest_second = Some(d2.digest);
        Ok(report)
    }

    /// Rows added and removed between two versions of the table at `location`.
    async fn diff(&self, location: &Location, table: &str, before: u64, after: u64) -> Result<(u64, u64)> {
        let open = |v| lakewriter_delta::table::provider_at(location, v);
        let digest_error = |source| Error::Digest { table: table.to_owned(), source: Box::new(source) };
        let (before, after) = (open(before).await.map_err(digest_error)?, open(after).await.map_err(digest_error)?);
        let diff_error = |source| Error::Diff { table: table.to_owned(), source: Box::new(source) };
        let read = |provider| {
            self.session()
                .read_table(provider)
                .map_err(|e| diff_error(lakewriter_compute::Error::Diff { source: Box::new(e) }))
        };
        let diff = lakewriter_compute::diff(read(before)?, read(after)?, 0).await.map_err(diff_error)?;
        Ok((diff.added, diff.removed))
    }
}

impl VerifyReport {
    fn new(job: &PreparedJob<'_>, first: PartitionReport) -> Self {
        Self {
            job: job.spec.name.clone(),
            partition: first.partition.clone(),
            pass: false,
            digest_first: None,
            digest_second: None,
            rows_added: 0,
            rows_removed: 0,
            first,
            second: None,
        }
    }
}

async fn digest(location: &Location, table: &str) -> Result<Digest> {
    lakewriter_delta::digest(location, None)
        .await
        .map_err(|source| Error::Digest { table: table.to_owned(), source: Box::new(source) })
}

/// Copies the local table at `target` (if it exists) to `scratch`; the copy's location.
fn scratch_copy(target: &Location, scratch: &Path) -> Result<Location> {
    let url = target.url();
    let not_local = || Error::VerifyNotLocal { url: url.clone() };
    let source = url.to_file_path().ok().filter(|_| target.is_local()).ok_or_else(not_local)?;
    if source.exists() {
        copy_dir(&source, scratch).map_err(|e| Error::Scratch { from: source.clone(), source: e })?;
    }
    let scratch_url = Url::from_directory_path(scratch).map_err(|()| not_local())?;
    Ok(Location::new(scratch_url, HashMap::new(), |_| None)?)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
