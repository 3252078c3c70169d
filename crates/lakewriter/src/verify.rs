//! `verify`: a job's write applied twice to a scratch copy of its target, never the target
//! itself, and the content digests after each compared.

use std::collections::HashMap;
use std::path::Path;

use datafusion::prelude::DataFrame;
use lakewriter_core::PartitionRun;
use lakewriter_delta::Digest;
use lakewriter_storage::Location;
use url::Url;

use crate::{Error, Job, PartitionReport, Result, Runner, VerifyReport};

/// Example rows shown of each side of a difference.
const EXAMPLES: usize = 5;

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
        let copy = Job { location: scratch_copy(&job.location, &scratch.path().join("table"))?, ..job.clone() };
        let run = copy.partition_run(unit.dt, unit.force)?;
        let table = job.spec.target.to_string();

        let first = self.run_prepared(&run).await;
        let mut report = VerifyReport::new(job, first);
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
            self.diff(&copy.location, &table, (d1.version, d2.version), &mut report).await?;
        }
        report.digest_first = Some(d1.digest);
        report.digest_second = Some(d2.digest);
        Ok(report)
    }

    /// The rows added and removed between two versions of the table at `location`, with examples,
    /// and whether they differ in floating-point columns alone, into `report`.
    async fn diff(
        &self,
        location: &Location,
        table: &str,
        versions: (u64, u64),
        report: &mut VerifyReport,
    ) -> Result<()> {
        let open = |v| lakewriter_delta::table::provider_at(location, v);
        let digest_error = |source| Error::Digest { table: table.to_owned(), source: Box::new(source) };
        let before = open(versions.0).await.map_err(digest_error)?;
        let after = open(versions.1).await.map_err(digest_error)?;
        let diff_error = |source| Error::Diff { table: table.to_owned(), source: Box::new(source) };
        let plan_error = |e| diff_error(lakewriter_compute::Error::Diff { source: Box::new(e) });
        let (before, after) = (
            self.session().read_table(before).map_err(plan_error)?,
            self.session().read_table(after).map_err(plan_error)?,
        );
        let diff = lakewriter_compute::diff(before.clone(), after.clone(), EXAMPLES).await.map_err(diff_error)?;
        (report.rows_added, report.rows_removed) = (diff.added, diff.removed);
        (report.added_examples, report.removed_examples) = (diff.added_examples, diff.removed_examples);
        let (floats, others): (Vec<_>, Vec<_>) =
            before.schema().fields().iter().partition(|f| f.data_type().is_floating());
        let name = |f: &&std::sync::Arc<datafusion::arrow::datatypes::Field>| f.name().clone();
        let (floats, others): (Vec<String>, Vec<String>) =
            (floats.iter().map(name).collect(), others.iter().map(name).collect());
        if floats.is_empty() || diff.added != diff.removed {
            return Ok(());
        }
        let others: Vec<&str> = others.iter().map(String::as_str).collect();
        // The same rows but for their floats: the diff over the other columns finds none.
        let without_floats = if others.is_empty() {
            true
        } else {
            let select = |df: DataFrame| df.select_columns(&others).map_err(plan_error);
            let rest = lakewriter_compute::diff(select(before)?, select(after)?, 0).await.map_err(diff_error)?;
            rest.added == 0 && rest.removed == 0
        };
        if without_floats {
            report.float_columns = floats;
        }
        Ok(())
    }
}

impl VerifyReport {
    fn new(job: &Job, first: PartitionReport) -> Self {
        Self {
            job: job.spec.name.clone(),
            partition: first.partition.clone(),
            pass: false,
            digest_first: None,
            digest_second: None,
            rows_added: 0,
            rows_removed: 0,
            added_examples: Vec::new(),
            removed_examples: Vec::new(),
            float_columns: Vec::new(),
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
