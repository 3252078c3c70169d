//! `MERGE INTO` as written: the source planned with `$dt` bound, every clause's expressions over
//! the columns it may see (both sides when matched, the source's when not matched, the target's
//! when not matched by source), the target rows several source rows match refused as in Spark,
//! then delta-rs's merge: one commit, or none where nothing changes. Into a table that does not
//! exist, the `WHEN NOT MATCHED` clauses alone decide the rows, and the write creates it.

use chrono::NaiveDate;
use datafusion::arrow::datatypes::Schema;
use datafusion::common::{Column, DFSchema, JoinType};
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::prelude::{DataFrame, Expr, lit};
use lakewriter_compute::Query;
use lakewriter_compute::statement::{Merge, MergeAction, MergeClause, MergeSource, SqlExpr, When};
use lakewriter_core::OnSchemaChange;
use lakewriter_core::input_fingerprint;
use lakewriter_delta::schema::{ColumnChanges, SchemaColumn};
use lakewriter_delta::table::Shape;
use lakewriter_delta::{Clause, Committed, MergeCounts, MergeStatement, Target};

use super::{StatementReport, Written, result_err, usage};
use crate::lakehouse::Lakehouse;
use crate::{Error, Result, Runner};

/// Target rows that several source rows match, named in the error (Spark names none).
const DUPLICATE_EXAMPLES: usize = 10;

/// The query that gives a MERGE's source rows: its query, or all of its table's.
pub(crate) fn source_query(merge: &Merge) -> Query {
    match &merge.source {
        MergeSource::Table(table) => Query::text(format!("SELECT * FROM {table}"), merge.semantics),
        MergeSource::Query(query) => query.clone(),
    }
}

/// The columns a MERGE's expressions may name: the target's and the source's, each qualified by
/// its alias; and the source columns the MERGE adds to the target (see [`column_changes`]).
struct Sides {
    target: DFSchema,
    source: DFSchema,
    both: DFSchema,
    added: Vec<String>,
    /// The job's `on_schema_change` lets a `*` clause pass over target columns the source lacks.
    lets_missing: bool,
}

/// What `merge` under `policy` does to the columns of a table of `target` columns with a source
/// of `source` columns, as Delta's MERGE schema evolution does: a `*` clause takes every source
/// column the table lacks (added, or left out under `ignore`) and passes over the table's columns
/// the source lacks (an update keeps them, an insert writes NULL); an assignment to a column the
/// table lacks adds it from the source column of its name. `fail` changes nothing.
pub(crate) fn column_changes(merge: &Merge, target: &Schema, source: &Schema, policy: OnSchemaChange) -> ColumnChanges {
    let mut changes = ColumnChanges::default();
    if policy == OnSchemaChange::Fail {
        return changes;
    }
    let all = merge.clauses.iter().any(|c| matches!(c.action, MergeAction::UpdateAll | MergeAction::InsertAll));
    let assigned = |name: &str| {
        merge.clauses.iter().any(|c| match &c.action {
            MergeAction::Update(pairs) => pairs.iter().any(|(column, _)| column == name),
            MergeAction::Insert { columns, .. } => columns.iter().any(|column| column == name),
            _ => false,
        })
    };
    for field in source.fields().iter().filter(|f| target.field_with_name(f.name()).is_err()) {
        let column = SchemaColumn::of(field);
        match policy {
            OnSchemaChange::Ignore if all => changes.ignored.push(column),
            OnSchemaChange::AppendNewColumns | OnSchemaChange::SyncAllColumns if all || assigned(field.name()) => {
                changes.added.push(column);
            }
            _ => {}
        }
    }
    if all {
        let lacking = target.fields().iter().filter(|f| source.field_with_name(f.name()).is_err());
        changes.missing = lacking.map(|f| SchemaColumn::of(f)).collect();
    }
    changes
}

impl Runner {
    pub(super) async fn merge_into(
        &self,
        merge: &Merge,
        written: &mut Written<'_>,
        dt: Option<NaiveDate>,
        report: &mut StatementReport,
    ) -> Result<()> {
        let query = self.plan(&source_query(merge), dt).await.map_err(Error::statement_plan)?;
        written.metadata.input_fingerprint = input_fingerprint(&query.files);
        let source = DataFrame::new(self.session().state(), query.plan);
        let target = written.target(&self.loaded, &[]);
        let (committed, counts) = self
            .lakehouse()
            .merge_statement(merge, target, written.shape.as_ref(), source, dt, &ColumnChanges::default())
            .await?;
        report.changes = Some(counts);
        report.finish(committed, "no row to change");
        Ok(())
    }
}

impl Lakehouse<'_> {
    /// Runs `merge` with the rows of `source` into `target`, whose columns are `shape` where the
    /// table exists: one commit, or none (`None`) where no clause changes a row. A table that does
    /// not exist is created (partitioned by `target.partition_columns`) with the rows of the
    /// `WHEN NOT MATCHED` clauses. `changes` are what it does to the table's columns (see
    /// [`column_changes`]); the target adds the columns they add.
    pub(crate) async fn merge_statement(
        &self,
        merge: &Merge,
        target: Target<'_>,
        shape: Option<&Shape>,
        source: DataFrame,
        dt: Option<NaiveDate>,
        changes: &ColumnChanges,
    ) -> Result<(Option<Committed>, MergeCounts)> {
        let source_schema =
            DFSchema::try_from_qualified_schema(merge.source_alias.as_str(), source.schema().as_arrow())
                .map_err(result_err)?;
        let Some(shape) = shape else {
            return self.merge_into_new(merge, target, source, &source_schema, dt).await;
        };
        let target_schema =
            DFSchema::try_from_qualified_schema(merge.target_alias.as_str(), &shape.schema).map_err(result_err)?;
        let both = target_schema.join(&source_schema).map_err(result_err)?;
        let added = changes.added.iter().map(|c| c.column.clone()).collect();
        let lets_missing = !changes.missing.is_empty();
        let sides = Sides { target: target_schema, source: source_schema, both, added, lets_missing };
        let on = self.expression(merge.semantics, &merge.on, &sides.both, dt)?;
        let clauses =
            merge.clauses.iter().map(|c| self.clause(merge, c, &sides, target.name, dt)).collect::<Result<Vec<_>>>()?;
        if merge
            .clauses
            .iter()
            .any(|c| c.when == When::Matched && !(c.action == MergeAction::Delete && c.predicate.is_none()))
        {
            self.refuse_duplicate_matches(merge, target, &source, &on).await?;
        }
        let columns = Some(shape.schema.fields().len() + sides.added.len()).filter(|_| !sides.added.is_empty());
        let statement = MergeStatement {
            on,
            target_alias: &merge.target_alias,
            source_alias: &merge.source_alias,
            clauses,
            columns,
        };
        lakewriter_delta::merge_clauses(&self.ctx.state(), target, source, statement).await.map_err(Error::write)
    }

    /// One clause with its expressions planned over the columns it may name.
    fn clause(
        &self,
        merge: &Merge,
        clause: &MergeClause,
        sides: &Sides,
        table: &str,
        dt: Option<NaiveDate>,
    ) -> Result<Clause> {
        let schema = match clause.when {
            When::Matched => &sides.both,
            When::NotMatched => &sides.source,
            When::NotMatchedBySource => &sides.target,
        };
        let predicate =
            clause.predicate.as_ref().map(|p| self.expression(merge.semantics, p, schema, dt)).transpose()?;
        let set = |pairs: &[(String, SqlExpr)]| -> Result<Vec<(String, Expr)>> {
            pairs
                .iter()
                .map(|(column, value)| {
                    let value = self.expression(merge.semantics, value, schema, dt)?;
                    if sides.target.field_with_unqualified_name(column).is_err() {
                        let from_source = matches!(&value, Expr::Column(c) if c.name == *column
                            && sides.source.has_column(c));
                        if !sides.added.contains(column) {
                            return usage(format!("{table} has no column `{column}`"));
                        } else if !from_source {
                            return usage(format!(
                                "{table} has no column `{column}`: a MERGE adds a column from the source's column of its name only (SET {column} = source.{column}, or *)"
                            ));
                        }
                    }
                    Ok((column.clone(), value))
                })
                .collect()
        };
        let all = || all_from_source(sides, table);
        Ok(match (clause.when, &clause.action) {
            (When::Matched, MergeAction::Update(pairs)) => Clause::MatchedUpdate { predicate, set: set(pairs)? },
            (When::Matched, MergeAction::UpdateAll) => Clause::MatchedUpdate { predicate, set: all()? },
            (When::Matched, MergeAction::Delete) => Clause::MatchedDelete { predicate },
            (When::NotMatched, MergeAction::Insert { columns, values }) => {
                let pairs: Vec<(String, SqlExpr)> = columns.iter().cloned().zip(values.iter().cloned()).collect();
                Clause::NotMatchedInsert { predicate, set: set(&pairs)? }
            }
            (When::NotMatched, MergeAction::InsertAll) => Clause::NotMatchedInsert { predicate, set: all()? },
            (When::NotMatchedBySource, MergeAction::Update(pairs)) => {
                Clause::NotMatchedBySourceUpdate { predicate, set: set(pairs)? }
            }
            (When::NotMatchedBySource, MergeAction::Delete) => Clause::NotMatchedBySourceDelete { predicate },
            (when, action) => return usage(format!("{action:?} is not allowed in a WHEN {when:?} clause")),
        })
    }

    /// Fails where a target row is matched by several source rows (a MERGE changes each target
    /// row at most once), naming up to ten of them by the target columns the ON condition reads.
    async fn refuse_duplicate_matches(
        &self,
        merge: &Merge,
        target: Target<'_>,
        source: &DataFrame,
        on: &Expr,
    ) -> Result<()> {
        let version = target.read_version.expect("an existing table");
        let provider = self.loaded.provider_at(target.location, version).await.map_err(Error::write)?;
        let alias = merge.target_alias.as_str();
        let mut keys: Vec<String> = on
            .column_refs()
            .into_iter()
            .filter(|c| c.relation.as_ref().is_some_and(|r| r.table() == alias))
            .map(|c| c.name.clone())
            .collect();
        keys.sort();
        keys.dedup();
        if keys.is_empty() {
            return Ok(());
        }
        let qualified: Vec<Expr> = keys.iter().map(|k| Expr::Column(Column::new(Some(alias), k))).collect();
        let names: Vec<&str> = keys.iter().map(String::as_str).collect();
        let rows = self.ctx.read_table(provider).and_then(|df| df.select_columns(&names)).and_then(DataFrame::distinct);
        let matched = rows
            .and_then(|t| t.alias(alias))
            .and_then(|t| t.join_on(source.clone().alias(&merge.source_alias)?, JoinType::Inner, [on.clone()]))
            .and_then(|j| j.aggregate(qualified.clone(), vec![count(lit(1)).alias("matching_source_rows")]))
            .and_then(|a| a.filter(lakewriter_compute::column("matching_source_rows").gt(lit(1_i64))))
            .map_err(result_err)?
            .cache()
            .await
            .map_err(result_err)?;
        let rows = matched.clone().count().await.map_err(result_err)?;
        if rows == 0 {
            return Ok(());
        }
        let mut shown = names.clone();
        shown.push("matching_source_rows");
        let examples = lakewriter_compute::first_rows(
            matched,
            &shown.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
            DUPLICATE_EXAMPLES,
        )
        .await
        .map_err(result_err)?;
        Err(Error::MergeDuplicates { table: target.name.to_owned(), rows, examples: examples.join("; ") })
    }

    /// A MERGE into a table that does not exist: each source row goes to the first `WHEN NOT
    /// MATCHED` clause whose condition holds; the table is created with those rows.
    async fn merge_into_new(
        &self,
        merge: &Merge,
        target: Target<'_>,
        source: DataFrame,
        source_schema: &DFSchema,
        dt: Option<NaiveDate>,
    ) -> Result<(Option<Committed>, MergeCounts)> {
        let source = source.alias(&merge.source_alias).map_err(result_err)?;
        let mut remaining: Option<Expr> = None;
        let mut parts: Vec<DataFrame> = Vec::new();
        let mut columns: Option<Vec<String>> = None;
        for clause in merge.clauses.iter().filter(|c| c.when == When::NotMatched) {
            let condition = match &clause.predicate {
                Some(p) => self.expression(merge.semantics, p, source_schema, dt)?,
                None => lit(true),
            };
            let taken = match remaining.clone() {
                Some(r) => r.and(condition.clone()),
                None => condition.clone(),
            };
            remaining = Some(match remaining {
                Some(r) => r.and(condition.is_not_true()),
                None => condition.is_not_true(),
            });
            let set: Vec<(String, Expr)> = match &clause.action {
                MergeAction::InsertAll => {
                    source_schema.iter().map(|(q, f)| (f.name().clone(), Expr::Column(Column::from((q, f))))).collect()
                }
                MergeAction::Insert { columns, values } => columns
                    .iter()
                    .zip(values)
                    .map(|(c, v)| Ok((c.clone(), self.expression(merge.semantics, v, source_schema, dt)?)))
                    .collect::<Result<_>>()?,
                other => return usage(format!("{other:?} is not allowed in a WHEN NOT MATCHED clause")),
            };
            let names: Vec<String> = set.iter().map(|(c, _)| c.clone()).collect();
            let order = columns.get_or_insert_with(|| names.clone());
            same_columns(order, &names, target.name)?;
            let exprs: Vec<Expr> = order
                .iter()
                .map(|c| set.iter().find(|(n, _)| n == c).expect("same columns").1.clone().alias(c))
                .collect();
            parts.push(source.clone().filter(taken).and_then(|df| df.select(exprs)).map_err(result_err)?);
        }
        let Some(rows) = parts.into_iter().reduce(|a, b| a.union(b).expect("same columns")) else {
            return usage(format!(
                "{} has no Delta table, and the MERGE has no WHEN NOT MATCHED clause to create it with",
                target.name
            ));
        };
        let plan =
            lakewriter_delta::schema::storable(rows.into_unoptimized_plan(), target.name).map_err(Error::write)?;
        let committed = lakewriter_delta::append(&self.ctx.state(), target, plan).await.map_err(Error::write)?;
        let counts = MergeCounts { inserted: committed.rows_written.unwrap_or(0), ..MergeCounts::default() };
        Ok((Some(committed), counts))
    }
}

/// `UPDATE SET *` and `INSERT *`: every target column from the source column of its name, then
/// the columns the MERGE adds. A target column the source lacks is refused, or passed over where
/// the job's `on_schema_change` lets it be.
fn all_from_source(sides: &Sides, table: &str) -> Result<Vec<(String, Expr)>> {
    let from_source = |name: &String| {
        let (qualifier, source) = sides.source.qualified_field_with_unqualified_name(name).ok()?;
        Some((name.clone(), Expr::Column(Column::from((qualifier, source)))))
    };
    let mut set = Vec::new();
    for name in sides.target.fields().iter().map(|f| f.name()) {
        match from_source(name) {
            Some(pair) => set.push(pair),
            None if sides.lets_missing => {}
            None => {
                return usage(format!("UPDATE SET * / INSERT *: the source has no column `{name}`, which {table} has"));
            }
        }
    }
    set.extend(sides.added.iter().filter_map(from_source));
    Ok(set)
}

/// Refuses a `WHEN NOT MATCHED` clause that inserts other columns than the first one did: into a
/// table that does not exist yet, the clauses decide its columns.
fn same_columns(first: &[String], these: &[String], table: &str) -> Result<()> {
    let mut a = first.to_vec();
    a.sort();
    let mut b = these.to_vec();
    b.sort();
    if a == b {
        return Ok(());
    }
    usage(format!(
        "{table} has no table yet, so its columns come from the WHEN NOT MATCHED clauses, which must insert the same columns: ({}) and ({})",
        first.join(", "),
        these.join(", ")
    ))
}
