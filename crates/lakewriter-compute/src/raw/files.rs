//! The files a scan of a raw dataset reads: its folders listed and pruned by the scan's filters.

use datafusion::arrow::datatypes::Field;
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::listing::helpers::{
    evaluate_partition_prefix, expr_applicable_for_cols, filter_partitioned_file, parse_partitions_for_path,
};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::prelude::Expr;
use futures::TryStreamExt;
use object_store::ObjectMeta;

use super::layout::hidden;
use super::{EXTENSION, RawTable};
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
        let listed: Vec<ObjectMeta> =
            self.url.list_prefixed_files(state, self.store.as_ref(), prefix, EXTENSION).await?.try_collect().await?;
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
}
