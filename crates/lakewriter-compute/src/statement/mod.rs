//! Spark-style SQL statements — `INSERT OVERWRITE … PARTITION`, `INSERT INTO`, `MERGE INTO`,
//! `DELETE`, `UPDATE` — and queries, read from SQL text and classified into what lakewriter
//! runs. Expressions stay as the parser read them ([`SqlExpr`]); [`expression`] plans one against
//! the columns it may name, with `$dt` bound as a typed parameter. Anything else is an error
//! naming the construct.

mod classify;

use std::ops::ControlFlow;

use chrono::NaiveDate;
use datafusion::common::DFSchema;
use datafusion::prelude::{Expr, SessionContext};
use datafusion::sql::sqlparser::ast::{Expr as AstExpr, Value, visit_expressions};
use lakewriter_core::{Semantics, TableRef};

pub use crate::parser::parser_dialect;
use crate::{Error, Query, Result};

/// An expression as the SQL parser read it.
pub type SqlExpr = AstExpr;

/// One statement of SQL text: as written (re-printed by the parser) and as classified.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The statement's text, as the parser prints it back.
    pub text: String,
    pub statement: Statement,
    /// Whether the statement names `$dt`.
    pub uses_dt: bool,
}

/// What a statement does.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // A few per command, read once: not worth a box to match through.
pub enum Statement {
    /// `SELECT`, `VALUES`, `WITH … SELECT` or `EXPLAIN`: read-only, planned as written.
    Query(Query),
    /// A statement that writes a Delta table.
    Write(Write),
    /// `SHOW TABLES`, `DESCRIBE`: what the lakehouse holds, read from its catalog.
    Show(Show),
}

/// A statement that shows what the lakehouse holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Show {
    /// `SHOW TABLES [IN | FROM schema]`: every table (of the schema).
    Tables { schema: Option<String> },
    /// `DESCRIBE [TABLE] table` (`DESC`): the table's columns, and a Delta table's properties.
    Describe { table: TableRef },
}

/// A statement that writes a Delta table, its [`Write::target`].
#[derive(Debug, Clone)]
pub enum Write {
    Insert(Insert),
    Merge(Merge),
    /// `DELETE FROM table [WHERE predicate]`.
    Delete {
        table: TableRef,
        predicate: Option<SqlExpr>,
        /// The dialect of its expressions.
        semantics: Semantics,
    },
    /// `UPDATE table [AS alias] SET column = value, … [WHERE predicate]`.
    Update {
        table: TableRef,
        alias: Option<String>,
        assignments: Vec<(String, SqlExpr)>,
        predicate: Option<SqlExpr>,
        /// The dialect of its expressions.
        semantics: Semantics,
    },
}

/// `INSERT {OVERWRITE | INTO} [TABLE] table [(columns)] [PARTITION (…)] query`.
#[derive(Debug, Clone)]
pub struct Insert {
    pub table: TableRef,
    pub overwrite: bool,
    /// The columns the query's columns go to, in order; empty: the table's own.
    pub columns: Vec<String>,
    /// The `PARTITION` clause: static columns with a value, dynamic ones without.
    pub partition: Vec<PartitionColumn>,
    /// The dialect of its expressions (its `PARTITION` values).
    pub semantics: Semantics,
    /// The query, as the parser read it.
    pub query: Query,
}

/// A column of an `INSERT`'s `PARTITION` clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionColumn {
    pub column: String,
    /// `Some`: a static partition value (a constant, or `$dt`); `None`: dynamic.
    pub value: Option<SqlExpr>,
}

impl PartitionColumn {
    /// Whether its value is `$dt`: the run's partition.
    #[must_use]
    pub fn is_dt(&self) -> bool {
        matches!(&self.value, Some(AstExpr::Value(v)) if matches!(&v.value, Value::Placeholder(p) if p == "$dt"))
    }
}

/// `MERGE INTO target [AS alias] USING source [AS alias] ON condition WHEN …`.
#[derive(Debug, Clone)]
pub struct Merge {
    pub target: TableRef,
    /// The target's alias, or its table name.
    pub target_alias: String,
    pub source: MergeSource,
    /// The source's alias, or a source table's name.
    pub source_alias: String,
    pub on: Box<SqlExpr>,
    pub clauses: Vec<MergeClause>,
    /// The dialect of its expressions.
    pub semantics: Semantics,
}

/// A MERGE's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeSource {
    Table(TableRef),
    /// A query, as the parser read it.
    Query(Query),
}

/// One `WHEN … THEN …` clause of a MERGE, in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeClause {
    pub when: When,
    /// The clause's `AND` condition.
    pub predicate: Option<SqlExpr>,
    pub action: MergeAction,
}

/// Which rows a MERGE clause is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// `WHEN MATCHED`: target rows the ON condition pairs with a source row.
    Matched,
    /// `WHEN NOT MATCHED [BY TARGET]`: source rows matching no target row.
    NotMatched,
    /// `WHEN NOT MATCHED BY SOURCE`: target rows matching no source row.
    NotMatchedBySource,
}

/// What a MERGE clause does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeAction {
    /// `UPDATE SET column = value, …`.
    Update(Vec<(String, SqlExpr)>),
    /// `UPDATE SET *`: every target column from the source column of its name.
    UpdateAll,
    Delete,
    /// `INSERT (columns) VALUES (values)`.
    Insert {
        columns: Vec<String>,
        values: Vec<SqlExpr>,
    },
    /// `INSERT *`: every target column from the source column of its name.
    InsertAll,
}

impl Statement {
    /// The Delta table the statement writes; `None` for a query.
    #[must_use]
    pub fn target(&self) -> Option<&TableRef> {
        match self {
            Self::Query(_) | Self::Show(_) => None,
            Self::Write(write) => Some(write.target()),
        }
    }

    /// The statement's kind.
    #[must_use]
    pub fn kind(&self) -> StatementKind {
        match self {
            Self::Query(_) | Self::Show(_) => StatementKind::Query,
            Self::Write(write) => write.kind(),
        }
    }
}

impl Write {
    /// The Delta table the statement writes.
    #[must_use]
    pub fn target(&self) -> &TableRef {
        match self {
            Self::Insert(insert) => &insert.table,
            Self::Merge(merge) => &merge.target,
            Self::Delete { table, .. } | Self::Update { table, .. } => table,
        }
    }

    /// The statement's kind.
    #[must_use]
    pub fn kind(&self) -> StatementKind {
        match self {
            Self::Insert(Insert { overwrite: true, .. }) => StatementKind::InsertOverwrite,
            Self::Insert(Insert { overwrite: false, .. }) => StatementKind::InsertInto,
            Self::Merge(_) => StatementKind::Merge,
            Self::Delete { .. } => StatementKind::Delete,
            Self::Update { .. } => StatementKind::Update,
        }
    }
}

/// What kind of statement a statement is, as reports name it (`insert_overwrite`, …).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    #[default]
    Query,
    InsertOverwrite,
    InsertInto,
    Merge,
    Delete,
    Update,
}

impl StatementKind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::InsertOverwrite => "insert_overwrite",
            Self::InsertInto => "insert_into",
            Self::Merge => "merge",
            Self::Delete => "delete",
            Self::Update => "update",
        }
    }
}

impl std::fmt::Display for StatementKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reads `sql` — one statement, or several separated by `;` — into statements, in order, in
/// `semantics`' dialect.
pub fn parse(sql: &str, semantics: Semantics) -> Result<Vec<Parsed>> {
    let statements = crate::parser::statements(sql, parser_dialect(semantics.dialect))?;
    if statements.is_empty() {
        return Err(Error::Statement { problem: "no SQL statement".to_owned() });
    }
    statements
        .into_iter()
        .map(|mut ast| {
            // The text as written, before Spark's grammar types its literals.
            let text = crate::parser::as_written(&ast.to_string());
            if semantics.dialect == lakewriter_core::Dialect::Spark {
                crate::spark::spark_syntax(&mut ast);
            }
            let mut uses_dt = false;
            let _ = visit_expressions(&ast, |e| {
                if let AstExpr::Value(v) = e
                    && matches!(&v.value, Value::Placeholder(p) if p == "$dt")
                {
                    uses_dt = true;
                }
                ControlFlow::<()>::Continue(())
            });
            Ok(Parsed { statement: classify::statement(ast, semantics)?, text, uses_dt })
        })
        .collect()
}

/// Plans `sql`, an expression over the columns of `schema` (qualified or not) in `semantics`'
/// dialect, with `$dt` bound to `dt` as a `DATE` value.
pub fn expression(
    ctx: &SessionContext,
    semantics: Semantics,
    sql: &SqlExpr,
    schema: &DFSchema,
    dt: Option<NaiveDate>,
) -> Result<Expr> {
    let err = |source| Error::Expression { expression: sql.to_string(), source: Box::new(source) };
    let state = crate::spark::session(ctx, semantics).state();
    let mut sql = sql.clone();
    crate::spark::parsed_expr(&state, &mut sql);
    let with_alias = datafusion::sql::sqlparser::ast::ExprWithAlias { expr: sql, alias: None };
    let expr = state
        .create_logical_expr_from_sql_expr(with_alias, schema)
        .map_err(|e| err(crate::spark::planning_error(&state, e)))?;
    let expr = crate::spark::analyzed_expr(&state, expr, schema).map_err(err)?;
    crate::date::bound(expr, dt).map_err(err)
}

#[cfg(test)]
mod tests;
