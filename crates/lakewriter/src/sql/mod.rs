//! `lakewriter sql`: Spark-style statements run against the lakehouse, each one Delta commit (or
//! none where it changes nothing). `insert` maps an `INSERT` onto the table's columns and
//! partitions; `merge` runs a `MERGE INTO` as written; queries, `DELETE` and `UPDATE` are here.

mod insert;
mod job;
mod merge;
mod show;
mod value;

pub(crate) use insert::added_columns;
pub use job::JobStatement;
pub(crate) use merge::column_changes;

use chrono::NaiveDate;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema};
use datafusion::prelude::Expr;
use lakewriter_compute::Query;
use lakewriter_compute::statement::{Parsed, SqlExpr, Statement, Write};
use lakewriter_core::{PartitionKey, Semantics, TableRef, input_fingerprint, stable_hash};
use lakewriter_delta::table::{LoadedTables, Shape};
use lakewriter_delta::{CommitMetadata, Committed, MergeCounts, Target};
use lakewriter_storage::Location;
use serde::Serialize;

use crate::lakehouse::Lakehouse;
use crate::{Error, Result, Runner};

/// How statements run.
#[derive(Debug, Clone, Copy, Default)]
pub struct SqlOptions {
    /// The value of `$dt`.
    pub dt: Option<NaiveDate>,
    /// Lets an `INSERT OVERWRITE` without a `PARTITION` clause replace a whole partitioned table
    /// (otherwise it replaces the partitions its result holds).
    pub replace_all: bool,
}

/// What a statement did.
#[derive(Debug)]
pub enum Executed {
    /// A query's rows.
    Rows { schema: SchemaRef, batches: Vec<RecordBatch> },
    /// A write's report.
    Written(StatementReport),
}

/// The outcome of a statement that writes a table.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StatementReport {
    /// The statement's kind: `insert_overwrite`, `insert_into`, `merge`, `delete`, `update`.
    pub kind: lakewriter_compute::statement::StatementKind,
    pub table: String,
    pub committed: bool,
    /// The version this statement committed, or the version it found where it committed nothing.
    pub table_version: Option<u64>,
    /// Rows an `INSERT` wrote.
    pub rows_written: Option<u64>,
    /// Rows a `MERGE`, `DELETE` or `UPDATE` changed.
    pub changes: Option<MergeCounts>,
    /// The partitions an `INSERT OVERWRITE` replaced, as `column=value` (all of them joined by
    /// `/`); empty where it replaced the whole table.
    pub partitions: Vec<String>,
    pub files_added: Option<u64>,
    pub files_removed: Option<u64>,
    /// Bytes of the files the commit added and removed.
    pub bytes_added: Option<u64>,
    pub bytes_removed: Option<u64>,
    pub note: Option<String>,
    pub run_id: String,
}

impl StatementReport {
    fn committed(&mut self, committed: Committed) {
        self.committed = true;
        self.table_version = Some(committed.version);
        self.files_added = committed.files_added;
        self.files_removed = committed.files_removed;
        self.bytes_added = committed.bytes_added;
        self.bytes_removed = committed.bytes_removed;
        if self.changes.is_none() {
            self.rows_written = committed.rows_written;
        }
    }
}

/// The table a statement writes, as found before it runs.
pub(crate) struct Written<'a> {
    pub table: &'a TableRef,
    pub name: String,
    pub location: Location,
    /// The version the statement read; `None`: no table yet.
    pub read_version: Option<u64>,
    pub shape: Option<Shape>,
    pub metadata: CommitMetadata,
}

impl Written<'_> {
    pub(crate) fn target<'b>(&'b self, loaded: &'b LoadedTables, partition_columns: &'b [String]) -> Target<'b> {
        Target {
            location: &self.location,
            name: &self.name,
            partition_columns,
            not_null: &[],
            metadata: &self.metadata,
            read_version: self.read_version,
            loaded,
            adds_columns: false,
        }
    }

    /// The table's columns, qualified by `alias` or its name.
    fn schema(&self, alias: Option<&str>) -> Result<DFSchema> {
        let shape = self.existing(&self.metadata.write.to_uppercase())?;
        let qualifier = alias.unwrap_or(self.table.table());
        DFSchema::try_from_qualified_schema(qualifier, &shape.schema).map_err(result_err)
    }

    /// The table's shape, or an error for a statement that needs the table to exist.
    pub(crate) fn existing(&self, what: &str) -> Result<&Shape> {
        self.shape.as_ref().ok_or_else(|| Error::Usage(format!("{what}: {} has no Delta table", self.name)))
    }
}

impl Runner {
    /// Reads `sql` — one statement or several separated by `;` — into statements, in order.
    pub fn parse_sql(&self, sql: &str) -> Result<Vec<Parsed>> {
        lakewriter_compute::statement::parse(sql, self.workspace().project.semantics).map_err(Error::statement)
    }

    /// Fails where a statement uses `$dt` and `options` give none: checked for every statement
    /// before the first one runs.
    pub fn require_dt(statements: &[Parsed], options: SqlOptions) -> Result<()> {
        match statements.iter().position(|p| p.uses_dt) {
            Some(i) if options.dt.is_none() => Err(Error::Usage(format!(
                "statement {} of {} uses $dt: give its value with --dt YYYY-MM-DD",
                i + 1,
                statements.len()
            ))),
            _ => Ok(()),
        }
    }

    /// Runs one statement: a query returns its rows; a write commits once (or not at all where it
    /// changes nothing) and returns its report. A write whose commit conflicts with a concurrent
    /// one (nothing committed) is planned and run again, as a job's run is.
    pub async fn execute(&self, parsed: &Parsed, options: SqlOptions) -> Result<Executed> {
        let retryable = |e: &Error| matches!(e, Error::StatementWrite(e) if e.is_conflict());
        lakewriter_delta::retry::ON_CONFLICT
            .run(&parsed.text, retryable, |_| self.execute_once(parsed, options))
            .await
            .0
    }

    async fn execute_once(&self, parsed: &Parsed, options: SqlOptions) -> Result<Executed> {
        Self::require_dt(std::slice::from_ref(parsed), options)?;
        let dt = options.dt;
        let write = match &parsed.statement {
            Statement::Query(query) => return self.query(query, dt).await,
            Statement::Show(show) => return self.show(show).await,
            Statement::Write(write) => write,
        };
        let mut written = self.written(write.target(), parsed, dt).await?;
        let mut report = StatementReport {
            kind: write.kind(),
            table: written.name.clone(),
            table_version: written.read_version,
            run_id: written.metadata.run_id.clone(),
            ..StatementReport::default()
        };
        match write {
            Write::Insert(insert) => self.insert(insert, &mut written, options, &mut report).await?,
            Write::Merge(merge) => self.merge_into(merge, &mut written, dt, &mut report).await?,
            Write::Delete { predicate, semantics, .. } => {
                written.existing("DELETE")?;
                let predicate = self.predicate(*semantics, predicate.as_ref(), &written, None, dt)?;
                let target = written.target(&self.loaded, &[]);
                let (committed, counts) =
                    lakewriter_delta::delete(&self.session().state(), target, predicate).await.map_err(Error::write)?;
                report.changes = Some(counts);
                report.finish(committed, "no row matched: nothing deleted");
            }
            Write::Update { alias, assignments, predicate, semantics, .. } => {
                written.existing("UPDATE")?;
                let predicate = self.predicate(*semantics, predicate.as_ref(), &written, alias.as_deref(), dt)?;
                let set = self.assignments(*semantics, assignments, &written, alias.as_deref(), dt)?;
                let target = written.target(&self.loaded, &[]);
                let (committed, counts) = lakewriter_delta::update(&self.session().state(), target, set, predicate)
                    .await
                    .map_err(Error::write)?;
                report.changes = Some(counts);
                report.finish(committed, "no row matched: nothing updated");
            }
        }
        if written.read_version.is_none() && report.committed {
            // The statements after this one may read the table it created.
            self.refresh_catalog().await?;
        }
        Ok(Executed::Written(report))
    }

    async fn query(&self, query: &Query, dt: Option<NaiveDate>) -> Result<Executed> {
        let query = self.plan(query, dt).await.map_err(Error::statement_plan)?;
        let df = datafusion::prelude::DataFrame::new(self.session().state(), query.plan);
        let held = lakewriter_compute::Materialized::collect(df).await.map_err(result_err)?;
        Ok(Executed::Rows { schema: held.schema.clone(), batches: held.batches().cloned().collect() })
    }

    /// The table `table` as the statement finds it: never a raw dataset.
    async fn written<'a>(&self, table: &'a TableRef, parsed: &Parsed, dt: Option<NaiveDate>) -> Result<Written<'a>> {
        let location = self.workspace().table_location(table)?;
        let name = table.to_string();
        let open_err = |source| Error::OpenTable { table: name.clone(), source: Box::new(source) };
        // The table's log first: a table another process was creating when the catalog was
        // listed (its data files written, its log not yet) is a Delta table by now.
        let read_version = lakewriter_delta::state::latest_version(&location).await.map_err(open_err)?;
        if read_version.is_none() && self.raw_tables.contains(table) {
            return Err(Error::Usage(format!(
                "{table} is a raw dataset: lakewriter never writes the raw layer; write a table of another schema"
            )));
        }
        if let Some(job) = self.workspace().project.jobs.values().find(|j| &j.target == table) {
            tracing::warn!(%table, job = %job.name, "this table is a job's target: the statement's rows are not recorded in the job's partition state, so `status` does not see them (`audit` and `verify` do)");
        }
        let shape = self.loaded.shape(&location, read_version).await.map_err(open_err)?;
        let metadata = CommitMetadata {
            job: String::new(),
            partition: PartitionKey::of(None, dt),
            write: parsed.statement.kind().to_string(),
            lakewriter_version: lakewriter_core::VERSION.to_owned(),
            sql_hash: stable_hash(parsed.text.as_bytes()),
            code_fingerprint: stable_hash(parsed.text.as_bytes()),
            input_fingerprint: input_fingerprint(&[]),
            inputs: None,
            run_id: crate::run::new_run_id(),
            started_at: None,
            forced: false,
            checks: Vec::new(),
            unwritten: Vec::new(),
        };
        Ok(Written { table, name, location, read_version, shape, metadata })
    }

    /// A DELETE's or UPDATE's condition over the table's columns (qualified by its name or alias,
    /// or not), with `$dt` bound; the qualifiers removed, as delta-rs reads columns by name.
    fn predicate(
        &self,
        semantics: Semantics,
        sql: Option<&SqlExpr>,
        written: &Written<'_>,
        alias: Option<&str>,
        dt: Option<NaiveDate>,
    ) -> Result<Option<Expr>> {
        let Some(sql) = sql else { return Ok(None) };
        let schema = written.schema(alias)?;
        Ok(Some(unqualified(self.lakehouse().expression(semantics, sql, &schema, dt)?)?))
    }

    fn assignments(
        &self,
        semantics: Semantics,
        assignments: &[(String, SqlExpr)],
        written: &Written<'_>,
        alias: Option<&str>,
        dt: Option<NaiveDate>,
    ) -> Result<Vec<(String, Expr)>> {
        let schema = written.schema(alias)?;
        assignments
            .iter()
            .map(|(column, value)| {
                if schema.field_with_unqualified_name(column).is_err() {
                    return Err(Error::Usage(format!("SET {column}: {} has no column `{column}`", written.name)));
                }
                Ok((column.clone(), unqualified(self.lakehouse().expression(semantics, value, &schema, dt)?)?))
            })
            .collect()
    }
}

impl Lakehouse<'_> {
    pub(crate) fn expression(
        &self,
        semantics: Semantics,
        sql: &SqlExpr,
        schema: &DFSchema,
        dt: Option<NaiveDate>,
    ) -> Result<Expr> {
        lakewriter_compute::statement::expression(self.ctx, semantics, sql, schema, dt).map_err(Error::statement)
    }
}

impl StatementReport {
    /// Records the outcome of a write that may have changed nothing (`nothing` says so).
    fn finish(&mut self, committed: Option<Committed>, nothing: &str) {
        match committed {
            Some(committed) => self.committed(committed),
            None => self.note = Some(nothing.to_owned()),
        }
    }
}

/// A usage error: what the statement asks for does not fit the table.
fn usage<T>(message: String) -> Result<T> {
    Err(Error::Usage(message))
}

/// A statement's rows or plan that DataFusion failed to build or compute.
fn result_err(source: datafusion::error::DataFusionError) -> Error {
    Error::statement(crate::error::result_err(source))
}

/// `expr` with its columns' qualifiers removed.
fn unqualified(expr: Expr) -> Result<Expr> {
    expr.transform(|e| match e {
        Expr::Column(c) if c.relation.is_some() => Ok(Transformed::yes(Expr::Column(Column::new_unqualified(c.name)))),
        other => Ok(Transformed::no(other)),
    })
    .map(|t| t.data)
    .map_err(result_err)
}
