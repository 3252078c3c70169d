//! From the parser's statement to a [`Statement`]: every clause lakewriter does not run is an
//! error naming it, never ignored.

use datafusion::sql::sqlparser::ast::{
    Assignment, AssignmentTarget, BinaryOperator, Delete, Expr as AstExpr, FromTable, Insert as AstInsert,
    Merge as AstMerge, MergeAction as AstAction, MergeClause as AstClause, MergeClauseKind, MergeInsertKind,
    ObjectName, Statement as Ast, TableAlias, TableFactor, TableObject, TableWithJoins, Update,
};
use lakewriter_core::{Semantics, TableRef};

use super::{
    Insert, Merge, MergeAction, MergeClause, MergeSource, PartitionColumn, Show, SqlExpr, Statement, When, Write,
};
use crate::parser::ALL_COLUMNS;
use crate::{Error, Query, Result};

fn refuse<T>(problem: impl Into<String>) -> Result<T> {
    Err(Error::Statement { problem: problem.into() })
}

/// Refuses `what` where `present`.
fn unsupported(present: bool, what: &str) -> Result<()> {
    if present { refuse(format!("{what} is not supported")) } else { Ok(()) }
}

pub(super) fn statement(ast: Ast, semantics: Semantics) -> Result<Statement> {
    match ast {
        Ast::Query(_) | Ast::Explain { .. } => Ok(Statement::Query(Query::parsed(ast, semantics))),
        Ast::Insert(insert) => self::insert(insert, semantics).map(|i| Statement::Write(Write::Insert(i))),
        Ast::Merge(merge) => self::merge(merge, semantics).map(|m| Statement::Write(Write::Merge(m))),
        Ast::Delete(delete) => self::delete(delete, semantics),
        Ast::Update(update) => self::update(update, semantics),
        Ast::ShowTables { show_options, .. } => {
            unsupported(
                show_options.starts_with.is_some()
                    || show_options.limit.is_some()
                    || show_options.filter_position.is_some(),
                "SHOW TABLES … LIKE / STARTS WITH / LIMIT",
            )?;
            let schema = show_options.show_in.and_then(|show_in| show_in.parent_name).map(|name| {
                name.0.iter().filter_map(|part| part.as_ident().map(|i| i.value.clone())).collect::<Vec<_>>().join(".")
            });
            Ok(Statement::Show(Show::Tables { schema }))
        }
        Ast::ExplainTable { table_name, .. } => Ok(Statement::Show(Show::Describe { table: table_ref(&table_name)? })),
        other => refuse(format!(
            "{} is not supported: lakewriter sql runs SELECT, EXPLAIN, INSERT OVERWRITE, INSERT INTO, MERGE INTO, DELETE, UPDATE, SHOW TABLES and DESCRIBE",
            leading_keywords(&other.to_string())
        )),
    }
}

/// The keywords a statement's text starts with (`CREATE TABLE`, `DROP VIEW`, `SET`), naming it.
fn leading_keywords(text: &str) -> String {
    let words: Vec<&str> =
        text.split_whitespace().take_while(|w| w.chars().all(|c| c.is_ascii_uppercase() || c == '_')).take(3).collect();
    if words.is_empty() { "this statement".to_owned() } else { words.join(" ") }
}

/// `schema.table`: the names lakewriter's catalog has.
fn table_ref(name: &ObjectName) -> Result<TableRef> {
    let parts: Option<Vec<&str>> = name.0.iter().map(|p| p.as_ident().map(|i| i.value.as_str())).collect();
    match parts.as_deref() {
        Some([schema, table]) => TableRef::new(schema, table)
            .or_else(|e| refuse(format!("`{name}` is not a table lakewriter can write: {e}"))),
        _ => refuse(format!("name the table `{name}` as schema.table (e.g. analytics.daily_orders)")),
    }
}

fn insert(insert: AstInsert, semantics: Semantics) -> Result<Insert> {
    unsupported(insert.or.is_some() || insert.ignore || insert.replace_into, "INSERT OR/IGNORE/REPLACE")?;
    unsupported(insert.on.is_some(), "INSERT … ON CONFLICT / ON DUPLICATE KEY")?;
    unsupported(insert.returning.is_some() || insert.output.is_some(), "INSERT … RETURNING")?;
    unsupported(!insert.assignments.is_empty(), "INSERT … SET")?;
    unsupported(!insert.after_columns.is_empty(), "INSERT … columns after PARTITION")?;
    unsupported(insert.table_alias.is_some() || insert.insert_alias.is_some(), "an alias of the INSERT's table")?;
    unsupported(insert.multi_table_insert_type.is_some(), "a multi-table INSERT")?;
    unsupported(insert.settings.is_some() || insert.format_clause.is_some(), "INSERT … SETTINGS/FORMAT")?;
    let TableObject::TableName(name) = &insert.table else {
        return refuse(format!("INSERT into `{}`: name a table as schema.table", insert.table));
    };
    let table = table_ref(name)?;
    let Some(query) = insert.source else { return refuse("an INSERT without a query or VALUES is not supported") };
    let columns = insert.columns.iter().map(column_name).collect::<Result<Vec<_>>>()?;
    let partition = insert.partitioned.unwrap_or_default().iter().map(partition_column).collect::<Result<Vec<_>>>()?;
    Ok(Insert {
        table,
        overwrite: insert.overwrite,
        columns,
        partition,
        query: Query::parsed(Ast::Query(query), semantics),
        semantics,
    })
}

/// A column named by one identifier (a qualifier in front of it is dropped: it can only be the
/// statement's own table).
fn column_name(name: &ObjectName) -> Result<String> {
    match name.0.last().and_then(|p| p.as_ident()) {
        Some(ident) => Ok(ident.value.clone()),
        None => refuse(format!("`{name}` is not a column name")),
    }
}

/// `c = value` (static) or `c` (dynamic) in a `PARTITION` clause.
fn partition_column(expr: &AstExpr) -> Result<PartitionColumn> {
    match expr {
        AstExpr::Identifier(ident) => Ok(PartitionColumn { column: ident.value.clone(), value: None }),
        AstExpr::BinaryOp { left, op: BinaryOperator::Eq, right } => match left.as_ref() {
            AstExpr::Identifier(ident) => {
                Ok(PartitionColumn { column: ident.value.clone(), value: Some(right.as_ref().clone()) })
            }
            _ => refuse(format!("PARTITION ({expr}): name a partition column on the left of `=`")),
        },
        _ => refuse(format!("PARTITION ({expr}): write `column = value` or `column`")),
    }
}

fn merge(merge: AstMerge, semantics: Semantics) -> Result<Merge> {
    unsupported(merge.output.is_some(), "MERGE … OUTPUT")?;
    let (target, target_alias) = match merge.table {
        TableFactor::Table { name, alias, .. } => {
            let table = table_ref(&name)?;
            let alias = alias_name(alias.as_ref())?.unwrap_or_else(|| table.table().to_owned());
            (table, alias)
        }
        other => return refuse(format!("MERGE INTO `{other}`: name a table as schema.table")),
    };
    let (source, source_alias) = match merge.source {
        TableFactor::Table { name, alias, .. } => {
            let table = table_ref(&name)?;
            let alias = alias_name(alias.as_ref())?.unwrap_or_else(|| table.table().to_owned());
            (MergeSource::Table(table), alias)
        }
        TableFactor::Derived { subquery, alias, .. } => match alias_name(alias.as_ref())? {
            Some(alias) => (MergeSource::Query(Query::parsed(Ast::Query(subquery), semantics)), alias),
            None => return refuse("give the MERGE's source query an alias: USING (SELECT …) AS s"),
        },
        other => return refuse(format!("MERGE … USING `{other}`: use a table or a (query) AS alias")),
    };
    if target_alias == source_alias {
        return refuse(format!("the MERGE's target and source are both called `{target_alias}`: give one an alias"));
    }
    let clauses = merge.clauses.into_iter().map(clause).collect::<Result<Vec<_>>>()?;
    if clauses.is_empty() {
        return refuse("a MERGE needs at least one WHEN clause");
    }
    Ok(Merge { target, target_alias, source, source_alias, on: merge.on, clauses, semantics })
}

fn alias_name(alias: Option<&TableAlias>) -> Result<Option<String>> {
    match alias {
        Some(alias) if !alias.columns.is_empty() => refuse(format!("column aliases (`{alias}`) are not supported")),
        Some(alias) => Ok(Some(alias.name.value.clone())),
        None => Ok(None),
    }
}

fn clause(clause: AstClause) -> Result<MergeClause> {
    let when = match clause.clause_kind {
        MergeClauseKind::Matched => When::Matched,
        MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget => When::NotMatched,
        MergeClauseKind::NotMatchedBySource => When::NotMatchedBySource,
    };
    let action = match clause.action {
        AstAction::Update(update) => {
            unsupported(update.update_predicate.is_some(), "UPDATE … WHERE in a MERGE clause (use WHEN … AND)")?;
            unsupported(update.delete_predicate.is_some(), "UPDATE … DELETE WHERE in a MERGE clause")?;
            match update.assignments.as_slice() {
                [Assignment { target: AssignmentTarget::ColumnName(name), .. }] if name.to_string() == ALL_COLUMNS => {
                    MergeAction::UpdateAll
                }
                _ => MergeAction::Update(assignments(&update.assignments)?),
            }
        }
        AstAction::Delete { .. } => MergeAction::Delete,
        AstAction::Insert(insert) => {
            unsupported(insert.insert_predicate.is_some(), "INSERT … WHERE in a MERGE clause (use WHEN … AND)")?;
            match insert.kind {
                MergeInsertKind::Row if insert.columns.is_empty() => MergeAction::InsertAll,
                MergeInsertKind::Row => return refuse("INSERT (columns) ROW: write INSERT * or VALUES (…)"),
                MergeInsertKind::Values(values) => {
                    let columns = insert.columns.iter().map(column_name).collect::<Result<Vec<_>>>()?;
                    let [row] = values.rows.as_slice() else {
                        return refuse("a MERGE's INSERT takes one row of VALUES");
                    };
                    if columns.is_empty() || columns.len() != row.len() {
                        return refuse(format!(
                            "a MERGE's INSERT names {} column(s) and gives {} value(s): write INSERT (columns) VALUES (values), one value per column, or INSERT *",
                            columns.len(),
                            row.len()
                        ));
                    }
                    MergeAction::Insert { columns, values: row.to_vec() }
                }
            }
        }
    };
    Ok(MergeClause { when, predicate: clause.predicate, action })
}

fn assignments(assignments: &[Assignment]) -> Result<Vec<(String, SqlExpr)>> {
    assignments
        .iter()
        .map(|a| match &a.target {
            AssignmentTarget::ColumnName(name) => Ok((column_name(name)?, a.value.clone())),
            AssignmentTarget::Tuple(_) => refuse(format!("SET {}: assign one column at a time", a.target)),
        })
        .collect()
}

/// The one table a DELETE or UPDATE names, and its alias.
fn single_table(tables: &[TableWithJoins], what: &str) -> Result<(TableRef, Option<String>)> {
    let [TableWithJoins { relation: TableFactor::Table { name, alias, .. }, joins }] = tables else {
        return refuse(format!("{what} names one table, as schema.table"));
    };
    unsupported(!joins.is_empty(), &format!("{what} with a JOIN"))?;
    Ok((table_ref(name)?, alias_name(alias.as_ref())?))
}

fn delete(delete: Delete, semantics: Semantics) -> Result<Statement> {
    unsupported(!delete.tables.is_empty(), "DELETE of several tables")?;
    unsupported(delete.using.is_some(), "DELETE … USING")?;
    unsupported(delete.returning.is_some() || delete.output.is_some(), "DELETE … RETURNING")?;
    unsupported(!delete.order_by.is_empty() || delete.limit.is_some(), "DELETE … ORDER BY/LIMIT")?;
    let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) = &delete.from;
    let (table, alias) = single_table(tables, "DELETE")?;
    unsupported(alias.is_some(), "an alias of the DELETE's table")?;
    Ok(Statement::Write(Write::Delete { table, predicate: delete.selection, semantics }))
}

fn update(update: Update, semantics: Semantics) -> Result<Statement> {
    unsupported(update.from.is_some(), "UPDATE … FROM")?;
    unsupported(update.returning.is_some() || update.output.is_some(), "UPDATE … RETURNING")?;
    unsupported(update.or.is_some(), "UPDATE OR …")?;
    unsupported(!update.order_by.is_empty() || update.limit.is_some(), "UPDATE … ORDER BY/LIMIT")?;
    let (table, alias) = single_table(std::slice::from_ref(&update.table), "UPDATE")?;
    Ok(Statement::Write(Write::Update {
        table,
        alias,
        assignments: assignments(&update.assignments)?,
        predicate: update.selection,
        semantics,
    }))
}
