//! `SHOW TABLES [IN schema]` and `DESCRIBE table`: what the lakehouse holds, as rows, read from
//! its catalog and the tables' logs. Writes nothing.

use std::sync::Arc;

use datafusion::arrow::array::{BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use lakewriter_compute::statement::Show;
use lakewriter_core::TableRef;
use lakewriter_delta::schema::delta_type_name;

use super::Executed;

/// A table's columns, partition columns and properties.
type Described = (datafusion::arrow::datatypes::SchemaRef, Vec<String>, std::collections::BTreeMap<String, String>);
use crate::{Error, Result, Runner};

impl Runner {
    pub(super) async fn show(&self, show: &Show) -> Result<Executed> {
        match show {
            Show::Tables { schema } => self.show_tables(schema.as_deref()).await,
            Show::Describe { table } => self.describe(table).await,
        }
    }

    /// A row per table (of `schema`): its schema, name, kind — `delta`, `raw`, or `none yet`
    /// for a job's target not written yet — and the job that writes it.
    async fn show_tables(&self, schema: Option<&str>) -> Result<Executed> {
        let tables = self.catalog_tables();
        if let Some(schema) = schema
            && !tables.iter().any(|t| t.schema() == schema)
        {
            let schemas: std::collections::BTreeSet<&str> = tables.iter().map(TableRef::schema).collect();
            let schemas: Vec<&str> = schemas.into_iter().collect();
            return Err(Error::Usage(format!(
                "SHOW TABLES IN {schema}: no schema `{schema}`; schemas: {}",
                schemas.join(", ")
            )));
        }
        let mut rows: Vec<[Option<String>; 4]> = Vec::new();
        for table in tables.iter().filter(|t| schema.is_none_or(|s| t.schema() == s)) {
            let kind = if self.raw_tables.contains(table) {
                "raw"
            } else {
                let location = self.workspace().table_location(table)?;
                let open_err = |source| Error::OpenTable { table: table.to_string(), source: Box::new(source) };
                match lakewriter_delta::state::latest_version(&location).await.map_err(open_err)? {
                    Some(_) => "delta",
                    None => "none yet",
                }
            };
            let job = self.workspace().project.jobs.values().find(|j| &j.target == table).map(|j| j.name.clone());
            rows.push([Some(table.schema().to_owned()), Some(table.table().to_owned()), Some(kind.to_owned()), job]);
        }
        let columns = ["schema", "table", "kind", "job"];
        let schema = Arc::new(Schema::new(
            columns.iter().enumerate().map(|(i, name)| Field::new(*name, DataType::Utf8, i == 3)).collect::<Vec<_>>(),
        ));
        let arrays = (0..columns.len())
            .map(|i| Arc::new(rows.iter().map(|row| row[i].clone()).collect::<StringArray>()) as _)
            .collect();
        batch(schema, arrays)
    }

    /// A row per column of `table` — its name, Delta type, nullability and whether it is a
    /// partition column —, then for a Delta table with properties a row `# Table Properties` and
    /// a row per property (its key and value), as Spark's `DESCRIBE TABLE EXTENDED` lays them out.
    async fn describe(&self, table: &TableRef) -> Result<Executed> {
        let (columns, partition_columns, properties) = self.described(table).await?;
        let mut names = Vec::new();
        let mut types = Vec::new();
        let mut nullable = Vec::new();
        let mut partition = Vec::new();
        for field in columns.fields() {
            names.push(field.name().clone());
            types.push(Some(delta_type_name(field.data_type())));
            nullable.push(Some(field.is_nullable()));
            partition.push(Some(partition_columns.contains(field.name())));
        }
        if !properties.is_empty() {
            names.push("# Table Properties".to_owned());
            types.push(None);
            nullable.push(None);
            partition.push(None);
            for (key, value) in properties {
                names.push(key);
                types.push(Some(value));
                nullable.push(None);
                partition.push(None);
            }
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("column", DataType::Utf8, false),
            Field::new("type", DataType::Utf8, true),
            Field::new("nullable", DataType::Boolean, true),
            Field::new("partition", DataType::Boolean, true),
        ]));
        batch(
            schema,
            vec![
                Arc::new(StringArray::from(names)),
                Arc::new(StringArray::from(types)),
                Arc::new(BooleanArray::from(nullable)),
                Arc::new(BooleanArray::from(partition)),
            ],
        )
    }

    /// `table`'s columns, partition columns and properties (a raw dataset has none).
    async fn described(&self, table: &TableRef) -> Result<Described> {
        if self.raw_tables.contains(table) {
            let provider = self
                .session()
                .table_provider(table.to_string())
                .await
                .map_err(|e| Error::Usage(format!("DESCRIBE {table}: {e}")))?;
            let raw = provider.as_ref().downcast_ref::<lakewriter_compute::raw::RawTable>();
            let partitions = raw.map(|raw| raw.partitions().iter().map(|(column, _)| column.clone()).collect());
            Ok((provider.schema(), partitions.unwrap_or_default(), std::collections::BTreeMap::new()))
        } else {
            let location = self.workspace().table_location(table)?;
            let open_err = |source| Error::OpenTable { table: table.to_string(), source: Box::new(source) };
            let version = lakewriter_delta::state::latest_version(&location).await.map_err(open_err)?;
            let Some(shape) = self.loaded.shape(&location, version).await.map_err(open_err)? else {
                if let Some(job) = self.workspace().project.jobs.values().find(|j| &j.target == table) {
                    return Err(Error::Usage(format!(
                        "DESCRIBE {table}: no table yet: job `{}` creates it with its first run",
                        job.name
                    )));
                }
                let tables = lakewriter_compute::catalog_tables(&self.session().state());
                let (table, nearest) =
                    (table.to_string(), lakewriter_compute::nearest_tables(&table.to_string(), &tables));
                return Err(Error::statement(lakewriter_compute::Error::TableNotFound {
                    table,
                    at: None,
                    nearest,
                    tables: tables.len(),
                }));
            };
            Ok((shape.schema, shape.partition_columns, shape.properties))
        }
    }

    /// Every table of the session's lakehouse catalog (raw datasets, Delta tables, jobs' targets),
    /// sorted.
    fn catalog_tables(&self) -> Vec<TableRef> {
        let names = lakewriter_compute::catalog_tables(&self.session().state());
        names.iter().filter_map(|name| TableRef::parse(name).ok()).collect()
    }
}

fn batch(schema: Arc<Schema>, arrays: Vec<datafusion::arrow::array::ArrayRef>) -> Result<Executed> {
    let batch = RecordBatch::try_new(schema.clone(), arrays)
        .map_err(|e| Error::Usage(format!("cannot lay out the rows: {e}")))?;
    Ok(Executed::Rows { schema, batches: vec![batch] })
}
