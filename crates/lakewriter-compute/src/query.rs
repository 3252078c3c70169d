//! Planning a job's SQL for one logical date.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::common::{ParamValues, ScalarValue};
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::context::SQLOptions;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use lakewriter_core::days_since_epoch;
use serde::Serialize;

use crate::{Error, Result};

/// One raw file that a partition's physical plan scans.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ScannedFile {
    pub path: String,
    pub size: u64,
}

/// A job's SQL planned for one date.
#[derive(Debug, Clone)]
pub struct PartitionQuery {
    /// The logical plan with `$dt` replaced by its value, ready to stream into a writer.
    pub plan: LogicalPlan,
    /// The files the physical plan scans after partition pruning, sorted.
    pub files: Vec<ScannedFile>,
}

/// Plans `sql` with `$dt` bound to `dt` as a typed `DATE` value. Only a query is accepted: DDL,
/// DML and statements such as `SET` are refused, so a job cannot change anything by itself.
pub async fn plan_partition(ctx: &SessionContext, sql: &str, dt: NaiveDate) -> Result<PartitionQuery> {
    let read_only = SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false);
    let df = ctx.sql_with_options(sql, read_only).await.map_err(|source| Error::Sql { source: Box::new(source) })?;
    let params =
        ParamValues::Map(HashMap::from([("dt".to_owned(), ScalarValue::Date32(Some(days_since_epoch(dt))).into())]));
    let plan_err = |source| Error::Plan { param: format!("$dt = {dt}"), source: Box::new(source) };
    let df = df.with_param_values(params).map_err(plan_err)?;
    let plan = df.logical_plan().clone();
    let physical = df.create_physical_plan().await.map_err(plan_err)?;
    let mut files = Vec::new();
    collect_files(&physical, &mut files);
    files.sort();
    files.dedup();
    Ok(PartitionQuery { plan, files })
}

fn collect_files(plan: &Arc<dyn ExecutionPlan>, out: &mut Vec<ScannedFile>) {
    if let Some(source) = plan.downcast_ref::<DataSourceExec>()
        && let Some(config) = source.data_source().downcast_ref::<FileScanConfig>()
    {
        for group in &config.file_groups {
            out.extend(
                group
                    .files()
                    .iter()
                    .map(|f| ScannedFile { path: f.object_meta.location.to_string(), size: f.object_meta.size }),
            );
        }
    }
    for child in plan.children() {
        collect_files(child, out);
    }
}
