use std::time::Instant;

use chrono::NaiveDate;
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use lakewriter_compute::{TableKind, catalog};
use lakewriter_core::{JobSpec, PartitionRun, WriteMode, stable_hash};
use lakewriter_delta::{CommitMetadata, PartitionOverwrite};

use crate::{Error, PartitionReport, Result, RunStatus, Workspace, error_chain};

/// Runs partitions of a workspace's jobs. It opens the lakehouse catalog once (every
/// `<root>/<schema>/<table>/` as `schema.table`) and plans each partition in the same session.
pub struct Runner {
    workspace: Workspace,
    ctx: SessionContext,
}

impl Runner {
    /// Opens the catalog of `workspace`'s lakehouse root.
    pub async fn open(workspace: Workspace) -> Result<Self> {
        let ctx = lakewriter_delta::session();
        let tables = catalog::discover(&ctx, &workspace.root).await.map_err(|source| Error::Catalog { source })?;
        for entry in &tables {
            match entry.kind {
                TableKind::Raw => {
                    catalog::register_raw(&ctx, entry).await.map_err(|source| Error::Catalog { source })?;
                }
                TableKind::Delta => {
                    let provider = lakewriter_delta::table::provider(&entry.url).await.map_err(|source| {
                        Error::OpenTable { table: entry.name.to_string(), source: Box::new(source) }
                    })?;
                    catalog::register(&ctx, &entry.name, provider).map_err(|source| Error::Catalog { source })?;
                }
            }
            tracing::debug!(table = %entry.name, kind = ?entry.kind, url = %entry.url, "registered");
        }
        Ok(Self { workspace, ctx })
    }

    #[must_use]
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Runs one partition: plan, write, one commit. Never panics on bad input and never returns
    /// early: a failure is a report with `status = failed`, and nothing committed.
    pub async fn run(&self, unit: &PartitionRun) -> PartitionReport {
        let started = Instant::now();
        let job = self.workspace.job(&unit.job);
        let (target, partition) = match &job {
            Ok(job) => (job.target.to_string(), format!("{}={}", job.partition_by, unit.dt)),
            Err(_) => (String::new(), format!("dt={}", unit.dt)),
        };
        let mut report = PartitionReport {
            job: unit.job.clone(),
            target,
            partition,
            dt: unit.dt,
            status: RunStatus::Failed,
            rows_written: None,
            table_version: None,
            files_added: None,
            files_removed: None,
            files_scanned: None,
            duration_ms: 0,
            error: None,
        };
        let outcome = match job {
            Ok(job) => self.write_partition(job, unit.dt, &mut report).await,
            Err(e) => Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>),
        };
        match outcome {
            Ok(()) => report.status = RunStatus::Ok,
            Err(e) => report.error = Some(format!("{unit}: {}", error_chain(e.as_ref()))),
        }
        report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &report.error {
            None => {
                tracing::info!(partition = %unit, rows = ?report.rows_written, version = ?report.table_version, "committed");
            }
            Some(error) => tracing::info!(partition = %unit, error, "failed; nothing committed"),
        }
        report
    }

    async fn write_partition(
        &self,
        job: &JobSpec,
        dt: NaiveDate,
        report: &mut PartitionReport,
    ) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let sql = self.workspace.sql(job)?;
        let url = self.workspace.table_url(&job.target)?;
        let query = lakewriter_compute::plan_partition(&self.ctx, &sql, dt).await?;
        report.files_scanned = Some(query.files.len());
        let metadata = CommitMetadata {
            job: job.name.clone(),
            partition: report.partition.clone(),
            write: job.write.to_string(),
            lakewriter_version: lakewriter_core::VERSION.to_owned(),
            sql_hash: stable_hash(sql.as_bytes()),
        };
        let committed = match job.write {
            WriteMode::OverwritePartition => {
                let write = PartitionOverwrite {
                    url: &url,
                    table: &report.target,
                    partition_column: &job.partition_by,
                    partition: dt,
                    plan: query.plan,
                    metadata: &metadata,
                };
                lakewriter_delta::overwrite_partition(&self.ctx.state(), write).await?
            }
        };
        report.rows_written = Some(committed.rows_written);
        report.table_version = Some(committed.version);
        report.files_added = Some(committed.files_added);
        report.files_removed = Some(committed.files_removed);
        Ok(())
    }

    /// Runs `job` for every day of `days`, at most `parallel` partitions at once, and calls
    /// `observe` as each finishes. A failed day does not stop the others. Where the target table
    /// does not exist yet, days run one at a time until one commit has created it, so that
    /// parallel writers never race to create a table. Returns the reports sorted by date.
    pub async fn backfill(
        &self,
        job: &JobSpec,
        days: impl IntoIterator<Item = NaiveDate>,
        parallel: usize,
        mut observe: impl FnMut(&PartitionReport),
    ) -> Vec<PartitionReport> {
        let mut days = days.into_iter();
        let mut reports = Vec::new();
        let exists = match self.workspace.table_url(&job.target) {
            Ok(url) => matches!(lakewriter_delta::table::version(&url).await, Ok(Some(_))),
            Err(_) => false,
        };
        if !exists {
            for dt in days.by_ref() {
                let report = self.run(&PartitionRun::new(&job.name, dt)).await;
                observe(&report);
                let created = report.is_ok();
                reports.push(report);
                if created {
                    break;
                }
            }
        }
        let mut running = futures::stream::iter(days)
            .map(|dt| async move { self.run(&PartitionRun::new(&job.name, dt)).await })
            .buffer_unordered(parallel.max(1));
        while let Some(report) = running.next().await {
            observe(&report);
            reports.push(report);
        }
        reports.sort_by_key(|r| r.dt);
        reports
    }
}
