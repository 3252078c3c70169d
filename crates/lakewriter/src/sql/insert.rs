//! `INSERT OVERWRITE` and `INSERT INTO`: the query's columns go to the table's by position, as
//! in Spark (a column named like another of the table's but in its place is refused, the one
//! mistake position cannot see); the `PARTITION` clause's values are added as constants; then
//! the write: a static partition replaced where it names every partition column, the
//! partitions the result holds where some are dynamic, the whole table where it has none (or with
//! `--replace-all`), an append for `INSERT INTO`.

use std::sync::Arc;

use chrono::NaiveDate;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::{Column, DFSchema, ScalarValue};
use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder};
use datafusion::prelude::{DataFrame, Expr, lit};
use lakewriter_compute::column;
use lakewriter_compute::statement::{Insert, SqlExpr};
use lakewriter_core::{Semantics, input_fingerprint};
use lakewriter_delta::table::Shape;

use super::{SqlOptions, StatementReport, Written, result_err, usage, value};
use crate::lakehouse::Lakehouse;
use crate::{Error, Result, Runner};

/// Where an INSERT's rows go.
pub(crate) struct Layout {
    /// The table's partition columns (a new table's: the `PARTITION` clause's).
    partition_columns: Vec<String>,
    /// Static partition values, each of its column's type.
    fixed: Vec<(String, ScalarValue)>,
    /// Partition columns whose values come from the query.
    dynamic: Vec<String>,
    /// The table's columns in order, each from the query, a static value or NULL.
    columns: Vec<Expr>,
}

impl Runner {
    pub(super) async fn insert(
        &self,
        insert: &Insert,
        written: &mut Written<'_>,
        options: SqlOptions,
        report: &mut StatementReport,
    ) -> Result<()> {
        let query = self.plan(&insert.query, options.dt).await.map_err(Error::statement_plan)?;
        written.metadata.input_fingerprint = input_fingerprint(&query.files);
        let (plan, layout) =
            self.lakehouse().laid_out(insert, &written.name, written.shape.as_ref(), query.plan, options.dt, false)?;
        let plan = lakewriter_delta::schema::storable(plan, &written.name).map_err(Error::write)?;
        let plan = lakewriter_delta::values::empty_partitions_as_null(plan, &layout.partition_columns, &written.name)
            .map_err(Error::write)?;
        if let Some(shape) = &written.shape {
            let differences = lakewriter_delta::schema::differences(&shape.schema, plan.schema().as_arrow());
            if !differences.is_empty() {
                let table = written.name.clone();
                return Err(Error::write(lakewriter_delta::Error::SchemaMismatch { table, differences }));
            }
        }
        let state = self.session().state();
        let target = written.target(&self.loaded, &layout.partition_columns);
        let fixed = layout.fixed.iter().map(|(c, v)| equals(c, v.clone())).reduce(Expr::and);
        let committed = if !insert.overwrite {
            tracing::warn!(table = %written.name, "INSERT INTO appends: running it again appends the rows again; for loads that may be retried, use INSERT OVERWRITE … PARTITION or MERGE INTO (or a job with write mode append_dedup or merge)");
            lakewriter_delta::append(&state, target, plan).await
        } else if layout.partition_columns.is_empty() || (options.replace_all && fixed.is_none()) {
            lakewriter_delta::replace_all(&state, target, plan).await
        } else if layout.dynamic.is_empty() || options.replace_all {
            let predicate = fixed.expect("a static partition value");
            report.partitions = vec![describe(&layout.fixed)];
            let slice = format!("rows outside PARTITION ({})", report.partitions[0]);
            lakewriter_delta::replace_where(&state, target, plan, predicate, &slice).await
        } else {
            let held = self.hold(plan).await?;
            let (predicate, partitions) = self.present(&held, &layout).await?;
            report.partitions = partitions;
            let Some(predicate) = predicate else {
                report.note = Some("the query returned no rows: no partition replaced".into());
                return Ok(());
            };
            let plan = held.dataframe(self.session()).map_err(result_err)?.into_unoptimized_plan();
            lakewriter_delta::replace_where(&state, target, plan, predicate, "rows outside the partitions replaced")
                .await
        };
        report.committed(committed.map_err(Error::write)?);
        Ok(())
    }

    async fn hold(&self, plan: LogicalPlan) -> Result<lakewriter_compute::Materialized> {
        let df = DataFrame::new(self.session().state(), plan);
        lakewriter_compute::Materialized::collect(df).await.map_err(result_err)
    }

    /// The partitions the held result holds: the filter that selects them (`None`: no row), and
    /// each as `column=value/…`, in order.
    async fn present(
        &self,
        held: &lakewriter_compute::Materialized,
        layout: &Layout,
    ) -> Result<(Option<Expr>, Vec<String>)> {
        let names: Vec<&str> = layout.dynamic.iter().map(String::as_str).collect();
        let sort = names.iter().map(|c| column(c).sort(true, true)).collect();
        let distinct = held
            .dataframe(self.session())
            .and_then(|df| df.select_columns(&names))
            .and_then(DataFrame::distinct)
            .and_then(|df| df.sort(sort))
            .map_err(result_err)?
            .collect()
            .await
            .map_err(result_err)?;
        let mut filters = Vec::new();
        let mut partitions = Vec::new();
        for batch in &distinct {
            for row in 0..batch.num_rows() {
                let mut values = layout.fixed.clone();
                values.extend(row_values(batch, &layout.dynamic, row)?);
                partitions.push(describe(&values));
                filters.push(values.into_iter().map(|(c, v)| equals(&c, v)).reduce(Expr::and).expect("a column"));
            }
        }
        Ok((balanced_or(filters), partitions))
    }
}

impl Lakehouse<'_> {
    /// The query's rows laid out as the table's columns, in its order, with the static partition
    /// values: what an INSERT writes into `table` (columns `shape` where it exists). With `extra`
    /// (a job whose `on_schema_change` lets columns in), the query's columns the table lacks
    /// follow, named as the query names them (see [`added_columns`]).
    pub(crate) fn laid_out(
        &self,
        insert: &Insert,
        table: &str,
        shape: Option<&Shape>,
        query: LogicalPlan,
        dt: Option<NaiveDate>,
        extra: bool,
    ) -> Result<(LogicalPlan, Layout)> {
        let layout = self.insert_layout(insert, table, shape, &query, dt, extra)?;
        let plan = LogicalPlanBuilder::from(query).project(layout.columns.clone()).and_then(LogicalPlanBuilder::build);
        Ok((plan.map_err(result_err)?, layout))
    }

    /// The columns, partition values and partitioning of `insert` into `table`.
    fn insert_layout(
        &self,
        insert: &Insert,
        table: &str,
        shape: Option<&Shape>,
        query: &LogicalPlan,
        dt: Option<NaiveDate>,
        extra: bool,
    ) -> Result<Layout> {
        let partition_columns = match shape {
            Some(shape) => shape.partition_columns.clone(),
            None => insert.partition.iter().map(|p| p.column.clone()).collect(),
        };
        let mut fixed = Vec::new();
        for (i, p) in insert.partition.iter().enumerate() {
            if !partition_columns.contains(&p.column) {
                return usage(format!("PARTITION ({}): {table} is {}", p.column, partitioned_by(&partition_columns)));
            }
            if insert.partition[..i].iter().any(|q| q.column == p.column) {
                return usage(format!("PARTITION names `{}` twice", p.column));
            }
            if let Some(value) = &p.value {
                let column_type = shape.map(|s| s.schema.field_with_name(&p.column).map(|f| f.data_type().clone()));
                let column_type = column_type
                    .transpose()
                    .map_err(|_| Error::Usage(format!("{table} has no column `{}`", p.column)))?;
                fixed.push((
                    p.column.clone(),
                    self.partition_value(insert.semantics, &p.column, value, column_type.as_ref(), dt)?,
                ));
            }
        }
        let dynamic: Vec<String> =
            partition_columns.iter().filter(|c| !fixed.iter().any(|(f, _)| f == *c)).cloned().collect();
        let from_query = expected_columns(insert, table, shape, query, extra)?;
        let fields: Vec<Expr> = query.schema().iter().map(|f| Expr::Column(Column::from(f))).collect();
        let table_columns: Vec<(String, DataType)> = if let Some(shape) = shape {
            let added = from_query.iter().enumerate().filter(|(_, c)| shape.schema.field_with_name(c).is_err());
            let added = added.map(|(i, c)| (c.clone(), query.schema().field(i).data_type().clone()));
            shape.schema.fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).chain(added).collect()
        } else {
            if let Some(missing) = dynamic.iter().find(|c| !from_query.contains(c)) {
                return usage(format!(
                    "PARTITION ({missing}): the query has no column `{missing}` to take its values from"
                ));
            }
            let query_columns = from_query.iter().map(|c| (c.clone(), DataType::Null));
            query_columns.chain(fixed.iter().map(|(c, v)| (c.clone(), v.data_type()))).collect()
        };
        let columns = table_columns
            .into_iter()
            .map(|(name, data_type)| {
                let expr = if let Some((_, value)) = fixed.iter().find(|(c, _)| *c == name) {
                    lit(value.clone())
                } else if let Some(i) = from_query.iter().position(|c| *c == name) {
                    let from = query.schema().field(i).data_type();
                    if shape.is_some() && assignable(from, &data_type) {
                        Expr::Cast(datafusion::logical_expr::Cast::new(Box::new(fields[i].clone()), data_type))
                    } else {
                        fields[i].clone()
                    }
                } else {
                    Expr::Cast(datafusion::logical_expr::Cast::new(Box::new(lit(ScalarValue::Null)), data_type))
                };
                expr.alias(name)
            })
            .collect();
        Ok(Layout { partition_columns, fixed, dynamic, columns })
    }

    /// A static partition value: a constant (or `$dt`), of the column's type where the table
    /// exists (see [`value::assigned`]); in a new table a `'YYYY-MM-DD'` string is a `DATE`.
    fn partition_value(
        &self,
        semantics: Semantics,
        column: &str,
        sql: &SqlExpr,
        column_type: Option<&DataType>,
        dt: Option<NaiveDate>,
    ) -> Result<ScalarValue> {
        let shown = lakewriter_compute::spark::as_written(sql);
        let not_constant = || Error::Usage(format!("PARTITION ({column} = {shown}): the value must be a constant"));
        let expr = self.expression(semantics, sql, &DFSchema::empty(), dt)?;
        let value = self.constant(&expr).ok_or_else(not_constant)?;
        let wanted = match column_type {
            Some(t) => t.clone(),
            None => match &value {
                ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s))
                    if lakewriter_core::parse_date(s).is_ok() =>
                {
                    DataType::Date32
                }
                other => other.data_type(),
            },
        };
        value::assigned(&value, &wanted).map_err(|reason| {
            let delta_type = value::a(&lakewriter_delta::schema::delta_type_name(&wanted));
            Error::Usage(format!("PARTITION ({column} = {shown}): `{column}` is {delta_type} column: {reason}"))
        })
    }

    /// The value of a constant expression; `None` where it names a column.
    fn constant(&self, expr: &Expr) -> Option<ScalarValue> {
        use datafusion::arrow::array::RecordBatchOptions;
        let physical = self.ctx.state().create_physical_expr(expr.clone(), &DFSchema::empty()).ok()?;
        let one_row = RecordBatchOptions::new().with_row_count(Some(1));
        let batch = RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &one_row).ok()?;
        let array = physical.evaluate(&batch).ok()?.into_array(1).ok()?;
        ScalarValue::try_from_array(&array, 0).ok()
    }
}

/// The columns the query's columns go to, in order: the INSERT's column list, or the table's
/// columns other than the static partition columns, or (a new table) the query's own names. With
/// `extra`, the columns the table lacks are the query's [`added_columns`].
fn expected_columns(
    insert: &Insert,
    table: &str,
    shape: Option<&Shape>,
    query: &LogicalPlan,
    extra: bool,
) -> Result<Vec<String>> {
    let names: Vec<String> = query.schema().fields().iter().map(|f| f.name().clone()).collect();
    let is_fixed = |c: &String| is_static(insert, c);
    let expected: Vec<String> = if !insert.columns.is_empty() {
        for column in &insert.columns {
            if is_fixed(column) {
                return usage(format!(
                    "`{column}` has a value in the PARTITION clause: leave it out of the column list"
                ));
            }
            if !extra && shape.is_some_and(|s| s.schema.field_with_name(column).is_err()) {
                return usage(format!("{table} has no column `{column}`"));
            }
        }
        insert.columns.clone()
    } else if let Some(shape) = shape {
        let mut expected: Vec<String> =
            shape.schema.fields().iter().map(|f| f.name().clone()).filter(|c| !is_fixed(c)).collect();
        if extra && names.len() > expected.len() {
            if let Some((i, name)) =
                names.iter().enumerate().skip(expected.len()).find(|(_, n)| shape.schema.field_with_name(n).is_ok())
            {
                return usage(format!(
                    "INSERT into {table}: the query's column {} is `{name}`, which the table has, but it comes after the table's {} column(s) ({}), where the query's columns are the ones it adds: select the table's columns in its order, then the new ones",
                    i + 1,
                    expected.len(),
                    expected.join(", ")
                ));
            }
            expected.extend(names[expected.len()..].iter().cloned());
        }
        expected
    } else {
        names.clone()
    };
    if names.len() != expected.len() {
        return usage(format!(
            "INSERT into {table}: the query gives {} column(s), and {} take(s) {}: {}",
            names.len(),
            if insert.columns.is_empty() { "the table" } else { "the column list" },
            expected.len(),
            expected.join(", ")
        ));
    }
    for (i, (name, goes_to)) in names.iter().zip(&expected).enumerate() {
        if name != goes_to && expected.contains(name) {
            return usage(format!(
                "INSERT into {table}: the query's column {} is `{name}` but goes to `{goes_to}`: columns are matched by position, as in Spark; select them in the order {}, or list them: INSERT … (columns)",
                i + 1,
                expected.join(", ")
            ));
        }
    }
    Ok(expected)
}

/// The columns an INSERT whose query's columns are `names` adds to a table whose columns are
/// `table`, as (the query's column, its name), in the query's order: with a column list, the
/// listed columns the table lacks; without one, the query's columns beyond the table's (other
/// than its static partition columns), as Delta's schema merge takes an INSERT by position.
pub(crate) fn added_columns<'a>(insert: &'a Insert, table: &[&str], names: &'a [String]) -> Vec<(usize, &'a String)> {
    let listed = if insert.columns.is_empty() { names } else { &insert.columns };
    let width = if insert.columns.is_empty() { table.iter().filter(|c| !is_static(insert, c)).count() } else { 0 };
    listed.iter().enumerate().skip(width).filter(|(_, n)| !table.contains(&n.as_str())).collect()
}

/// Whether `column` has a value in `insert`'s `PARTITION` clause (a static partition column).
fn is_static(insert: &Insert, column: &str) -> bool {
    insert.partition.iter().any(|p| p.value.is_some() && p.column == column)
}

/// Whether a query column of type `from` goes into a table column of type `to` by a cast, as
/// Spark's store assignment does: a number into any number, a string into a string, a date into a
/// timestamp, a NULL into anything. A value that does not fit fails the statement (the cast is not
/// `TRY_CAST`). Other differences are refused by the schema check.
fn assignable(from: &DataType, to: &DataType) -> bool {
    use DataType::{Date32, Null, Timestamp};
    use lakewriter_delta::values::is_text as text;
    !lakewriter_delta::schema::same_storage(to, from)
        && (matches!(from, Null)
            || (from.is_numeric() && to.is_numeric())
            || (text(from) && text(to))
            || (matches!(from, Date32) && matches!(to, Timestamp(..))))
}

fn partitioned_by(columns: &[String]) -> String {
    if columns.is_empty() { "not partitioned".to_owned() } else { format!("partitioned by ({})", columns.join(", ")) }
}

/// `column=value/…`.
fn describe(values: &[(String, ScalarValue)]) -> String {
    values.iter().map(|(c, v)| format!("{c}={v}")).collect::<Vec<_>>().join("/")
}

fn equals(name: &str, value: ScalarValue) -> Expr {
    if value.is_null() { column(name).is_null() } else { column(name).eq(lit(value)) }
}

/// The values of `columns` in `row` of `batch`.
fn row_values(batch: &RecordBatch, columns: &[String], row: usize) -> Result<Vec<(String, ScalarValue)>> {
    columns
        .iter()
        .map(|c| {
            let array = batch.column_by_name(c).expect("a selected column");
            ScalarValue::try_from_array(array, row).map(|v| (c.clone(), v)).map_err(result_err)
        })
        .collect()
}

/// `filters` joined by OR as a balanced tree (a chain thousands deep would overflow the stack
/// of the recursive code that walks expressions).
fn balanced_or(mut filters: Vec<Expr>) -> Option<Expr> {
    while filters.len() > 1 {
        let mut pairs = Vec::with_capacity(filters.len().div_ceil(2));
        let mut it = filters.into_iter();
        while let Some(a) = it.next() {
            pairs.push(match it.next() {
                Some(b) => a.or(b),
                None => a,
            });
        }
        filters = pairs;
    }
    filters.pop()
}
