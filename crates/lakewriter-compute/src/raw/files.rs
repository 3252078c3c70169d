//! The files a scan of a raw dataset reads: its folders listed and pruned by the scan's filters.
//! A plan's scans list each folder once ([`pinned_scans`]): a run plans its query — listing the
//! files it reads and fingerprints — and then executes it, and the execution reads the files the
//! plan listed. A file that lands in between is not read, so the next `status` calls the day
//! stale, as it is; a run planned again (after a conflict) lists again.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::Field;
use datafusion::catalog::Session;
use datafusion::catalog::default_table_source::{DefaultTableSource, provider_as_source};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, ScalarValue, Statistics};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::listing::helpers::{
    evaluate_partition_prefix, expr_applicable_for_cols, filter_partitioned_file, parse_partitions_for_path,
};
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::Expr;
use futures::TryStreamExt;
use object_store::ObjectMeta;
use object_store::path::Path;

use super::layout::hidden;
use super::{EXTENSION, Listings, RawTable};
use crate::Error;

impl RawTable {
    /// The files a scan with `filters` reads — DataFusion's pruning, but keeping the zero-byte
    /// files it would silently skip.
    pub(super) async fn files(&self, state: &dyn Session, filters: &[Expr]) -> DfResult<Vec<ObjectMeta>> {
        let names: Vec<&str> = self.partitions.iter().map(|(n, _)| n.as_str()).collect();
        let filters: Vec<Expr> =
            filters.iter().filter(|f| !names.is_empty() && expr_applicable_for_cols(&names, f)).cloned().collect();
        let prefix = evaluate_partition_prefix(&self.partitions, &filters);
        if prefix.is_none()
            && let Some(folder) = self.bad_values.first()
        {
            let (column, _) = &self.partitions[0];
            return Err(DataFusionError::External(Box::new(Error::RawFolder {
                table: self.name.clone(),
                folder: folder.clone(),
                column: column.clone(),
            })));
        }
        let schema = DFSchema::from_unqualified_fields(
            self.partitions.iter().map(|(n, t)| Field::new(n, t.clone(), true)).collect(),
            std::collections::HashMap::default(),
        )?;
        let listed = self.listed(state, prefix).await?;
        let mut files = Vec::new();
        for meta in listed {
            if meta.location.filename().is_some_and(hidden) {
                continue;
            }
            let Some(values) = parse_partitions_for_path(&self.url, &meta.location, names.iter().copied()) else {
                // DataFusion would skip it without a word: a day's files in folders other than
                // the ones the newest partition has would read as no rows.
                let layout: Vec<String> = names.iter().map(|n| format!("{n}=…")).collect();
                return Err(self.file_error(
                    &meta.location,
                    format!(
                        "lies outside the dataset's partition folders `{}/` (as its newest partition has them), so it would not be read",
                        layout.join("/")
                    ),
                ));
            };
            let mut file = PartitionedFile::from(meta.clone());
            for (value, (column, data_type)) in values.into_iter().zip(&self.partitions) {
                let value = ScalarValue::try_from_string(value.clone().into_owned(), data_type).map_err(|_| {
                    self.file_error(
                        &meta.location,
                        format!("lies in a folder whose `{column}` is not a {data_type}: `{value}`"),
                    )
                })?;
                file.partition_values.push(value);
            }
            if filter_partitioned_file(file, &filters, &schema)?.is_some() {
                files.push(meta);
            }
        }
        Ok(files)
    }

    /// The files under `prefix`: as this table first listed them where it is a plan's copy.
    async fn listed(&self, state: &dyn Session, prefix: Option<Path>) -> DfResult<Vec<ObjectMeta>> {
        let pinned = |listings: &Mutex<Listings>| listings.lock().ok().and_then(|l| l.get(&prefix).cloned());
        if let Some(files) = self.listings.as_ref().and_then(pinned) {
            return Ok(files);
        }
        let listed: Vec<ObjectMeta> = self
            .url
            .list_prefixed_files(state, self.store.as_ref(), prefix.clone(), EXTENSION)
            .await?
            .try_collect()
            .await?;
        Ok(match self.listings.as_ref().map(Mutex::lock) {
            Some(Ok(mut listings)) => listings.entry(prefix).or_insert(listed).clone(),
            _ => listed,
        })
    }
}

/// `plan` with each raw dataset it scans (subqueries included) replaced by a copy with listings
/// of its own ([`RawTable::pinned`]): however often the plan is planned physically, each scan reads
/// the files its first planning listed.
pub fn pinned_scans(plan: LogicalPlan) -> DfResult<LogicalPlan> {
    let pinned = plan.transform_up_with_subqueries(|node| {
        let LogicalPlan::TableScan(mut scan) = node else { return Ok(Transformed::no(node)) };
        let raw = scan
            .source
            .as_ref()
            .downcast_ref::<DefaultTableSource>()
            .and_then(|source| source.table_provider.as_ref().downcast_ref::<RawTable>().map(RawTable::pinned));
        match raw {
            Some(raw) => {
                scan.source = provider_as_source(Arc::new(raw));
                Ok(Transformed::yes(LogicalPlan::TableScan(scan)))
            }
            None => Ok(Transformed::no(LogicalPlan::TableScan(scan))),
        }
    })?;
    Ok(pinned.data)
}

/// The raw datasets `plan` (its scans pinned: [`pinned_scans`]) reads whose scans, as planned,
/// selected no file: for a plan bound to a date, the datasets with no file for that date. A
/// dataset read by several scans is listed where none of them selected a file; one whose scan
/// was not planned is not listed.
#[must_use]
pub fn without_files(plan: &LogicalPlan) -> Vec<String> {
    use datafusion::common::tree_node::TreeNodeRecursion;
    let mut selected: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let walked = plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node
            && let Some(raw) = scan
                .source
                .as_ref()
                .downcast_ref::<DefaultTableSource>()
                .and_then(|source| source.table_provider.as_ref().downcast_ref::<RawTable>())
            && let Some(files) = raw.selected.lock().ok().and_then(|s| *s)
        {
            *selected.entry(raw.name.clone()).or_default() += files;
        }
        Ok(TreeNodeRecursion::Continue)
    });
    debug_assert!(walked.is_ok(), "the walk never fails");
    selected.into_iter().filter(|(_, files)| *files == 0).map(|(name, _)| name).collect()
}

/// `plan`, the listing table's scan, reading none of the files it found beyond `files`: those
/// landed after this table listed the folder. Statistics are left unknown, as a file fewer makes
/// the listing table's wrong.
pub(super) fn reading_only(plan: Arc<dyn ExecutionPlan>, files: &[ObjectMeta]) -> DfResult<Arc<dyn ExecutionPlan>> {
    let listed: HashSet<&Path> = files.iter().map(|f| &f.location).collect();
    let known = |f: &PartitionedFile| listed.contains(&f.object_meta.location);
    let pruned = plan.transform_up(|node| {
        let Some(config) =
            node.downcast_ref::<DataSourceExec>().and_then(|s| s.data_source().downcast_ref::<FileScanConfig>())
        else {
            return Ok(Transformed::no(node));
        };
        if config.file_groups.iter().all(|g| g.iter().all(known)) {
            return Ok(Transformed::no(node));
        }
        let groups =
            config.file_groups.iter().map(|g| FileGroup::new(g.iter().filter(|f| known(f)).cloned().collect()));
        let statistics = Statistics::new_unknown(config.file_source.table_schema().table_schema());
        let config =
            FileScanConfigBuilder::from(config.clone()).with_file_groups(groups.collect()).with_statistics(statistics);
        let scan: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(config.build());
        Ok(Transformed::yes(scan))
    })?;
    Ok(pruned.data)
}
