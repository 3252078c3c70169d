//! The writes of SQL statements that no write mode makes: `INSERT INTO` (an append without a
//! partition state), a `MERGE INTO` with its own clauses, `DELETE` and `UPDATE`. Each is one
//! commit, or none where it changes nothing.

use std::sync::Arc;

use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, Expr};
use deltalake::DeltaTable;
use deltalake::protocol::SaveMode;
use serde::Serialize;

use super::added::Arm;
use super::builder::{builder, column, evolving, refused, width};
use super::commit::{attempt, attempt_or_skip, write_error};
use super::target::{Target, check_schema};
use crate::Result;
use crate::state::Committed;

/// Appends `plan`'s rows in one commit, creating the table where there is none. Unlike
/// [`super::append_once`], nothing marks the rows appended: running it again appends them again.
pub async fn append(session: &SessionState, target: Target<'_>, plan: LogicalPlan) -> Result<Committed> {
    let checked = plan.clone();
    let outcome = attempt(&target, Some(width(&plan)), |table, props| async {
        let adds = check_schema(&table, plan.schema().as_arrow(), &target)?;
        evolving(builder(table, session, plan, &target, false)?, adds)
            .with_save_mode(SaveMode::Append)
            .with_commit_properties(props)
            .await
            .map_err(|e| write_error(&target, e))
    })
    .await;
    match outcome {
        Err(error) => Err(refused(session, &target, Some(checked), false, error).await),
        committed => committed,
    }
}

/// A `MERGE INTO` as written: its condition and clauses over the target and source aliases.
#[derive(Debug, Clone)]
pub struct MergeStatement<'a> {
    pub on: Expr,
    pub target_alias: &'a str,
    pub source_alias: &'a str,
    /// In the order written; delta-rs applies the first clause of each kind whose condition holds.
    pub clauses: Vec<Clause>,
    /// The number of the table's columns after the merge, where its clauses set columns the table
    /// lacks and the target [adds columns](Target::adds_columns) (`None`: as many as it has).
    pub columns: Option<usize>,
}

/// One `WHEN … THEN …` clause. Assignments are `(target column, value)`.
#[derive(Debug, Clone)]
pub enum Clause {
    MatchedUpdate { predicate: Option<Expr>, set: Vec<(String, Expr)> },
    MatchedDelete { predicate: Option<Expr> },
    NotMatchedInsert { predicate: Option<Expr>, set: Vec<(String, Expr)> },
    NotMatchedBySourceUpdate { predicate: Option<Expr>, set: Vec<(String, Expr)> },
    NotMatchedBySourceDelete { predicate: Option<Expr> },
}

impl Clause {
    /// The clause with its assignments as `table` stores them (see [`stored`]).
    fn stored(self, table: &DeltaTable) -> Self {
        match self {
            Self::MatchedUpdate { predicate, set } => Self::MatchedUpdate { predicate, set: stored(table, set) },
            Self::NotMatchedInsert { predicate, set } => Self::NotMatchedInsert { predicate, set: stored(table, set) },
            Self::NotMatchedBySourceUpdate { predicate, set } => {
                Self::NotMatchedBySourceUpdate { predicate, set: stored(table, set) }
            }
            delete => delete,
        }
    }
}

/// The rows a statement changed, as delta-rs counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MergeCounts {
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
}

/// `set` as `table` stores it: `''` as NULL where a column is a string partition column, a date
/// or timestamp outside Delta's range refused (see [`crate::values::assigned`]).
fn stored(table: &DeltaTable, set: Vec<(String, Expr)>) -> Vec<(String, Expr)> {
    let Ok(state) = table.snapshot() else { return set };
    let (partition_columns, schema) = (state.metadata().partition_columns(), state.snapshot().arrow_schema());
    set.into_iter().map(|(c, v)| (c.clone(), crate::values::assigned(&c, v, partition_columns, &schema))).collect()
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Runs `merge` with `source` into the existing table: one commit, or none (`None`) where no
/// clause changed a row. The commit may be rebased over commits to rows the merge did not read,
/// as Delta's conflict rules allow. Where the target [adds columns](Target::adds_columns), the
/// columns its clauses set that the table lacks are added with delta-rs's schema merge (see
/// [`super::merge`]).
pub async fn merge_clauses(
    session: &SessionState,
    target: Target<'_>,
    source: DataFrame,
    merge: MergeStatement<'_>,
) -> Result<(Option<Committed>, MergeCounts)> {
    let mut counts = MergeCounts::default();
    let committed = attempt_or_skip(&target, merge.columns, |table, props| async {
        let read = table.version();
        let err = |e| write_error(&target, e);
        let clauses: Vec<Clause> = merge.clauses.into_iter().map(|c| c.stored(&table)).collect();
        let source = if target.adds_columns {
            gated(session, &target, &table, source, &merge.on, &clauses, (merge.source_alias, merge.target_alias))
                .await?
        } else {
            source
        };
        let mut builder = table
            .merge(source, merge.on)
            .with_source_alias(merge.source_alias)
            .with_target_alias(merge.target_alias)
            .with_session_state(Arc::new(session.clone()))
            .with_merge_schema(target.adds_columns)
            .with_commit_properties(props);
        for clause in clauses {
            builder = with_clause(builder, clause).map_err(err)?;
        }
        let (table, metrics) = builder.await.map_err(err)?;
        counts = MergeCounts {
            inserted: count(metrics.num_target_rows_inserted),
            updated: count(metrics.num_target_rows_updated),
            deleted: count(metrics.num_target_rows_deleted),
        };
        Ok(changed(table, read))
    })
    .await;
    match committed {
        Ok(committed) => Ok((committed, counts)),
        Err(error) => Err(refused(session, &target, None, false, error).await),
    }
}

/// `source` for a MERGE whose clauses add columns to `table`: each added column as the MERGE
/// writes it in the target row of its source row (see `added`). A clause for rows no source row
/// matches that sets an added column is refused: the column reads NULL in those rows.
async fn gated(
    session: &SessionState,
    target: &Target<'_>,
    table: &DeltaTable,
    source: DataFrame,
    on: &Expr,
    clauses: &[Clause],
    aliases: (&str, &str),
) -> Result<DataFrame> {
    let err = |e: datafusion::error::DataFusionError| write_error(target, e.into());
    let schema = table.snapshot().map_err(|e| write_error(target, e))?.snapshot().arrow_schema();
    let adds =
        |set: &[(String, Expr)]| set.iter().find(|(c, _)| schema.field_with_name(c).is_err()).map(|(c, _)| c.clone());
    let mut arms = Vec::new();
    for clause in clauses {
        match clause {
            Clause::MatchedUpdate { predicate, set } => {
                arms.push(Arm { matched: true, predicate: predicate.as_ref(), set });
            }
            Clause::MatchedDelete { predicate } => {
                arms.push(Arm { matched: true, predicate: predicate.as_ref(), set: &[] });
            }
            Clause::NotMatchedInsert { predicate, set } => {
                arms.push(Arm { matched: false, predicate: predicate.as_ref(), set });
            }
            Clause::NotMatchedBySourceUpdate { set, .. } => {
                if let Some(column) = adds(set) {
                    return Err(err(datafusion::error::DataFusionError::Plan(format!(
                        "the MERGE adds column `{column}` in a WHEN NOT MATCHED BY SOURCE clause, which cannot set a column the table does not have yet; add it with a MERGE that sets it in matched or inserted rows first"
                    ))));
                }
            }
            Clause::NotMatchedBySourceDelete { .. } => {}
        }
    }
    let provider = crate::table::provider_of(target.location, table).await?;
    super::added::gated(session, source, provider, &schema, aliases, on, &arms).await.map_err(err)
}

/// `builder` with the clause `clause` added after its others.
fn with_clause(
    builder: deltalake::operations::merge::MergeBuilder,
    clause: Clause,
) -> std::result::Result<deltalake::operations::merge::MergeBuilder, deltalake::DeltaTableError> {
    match clause {
        Clause::MatchedUpdate { predicate, set } => builder.when_matched_update(|u| {
            let u = match predicate {
                Some(p) => u.predicate(p),
                None => u,
            };
            set.into_iter().fold(u, |u, (c, v)| u.update(column(&c), v))
        }),
        Clause::MatchedDelete { predicate } => builder.when_matched_delete(|d| match predicate {
            Some(p) => d.predicate(p),
            None => d,
        }),
        Clause::NotMatchedInsert { predicate, set } => builder.when_not_matched_insert(|i| {
            let i = match predicate {
                Some(p) => i.predicate(p),
                None => i,
            };
            set.into_iter().fold(i, |i, (c, v)| i.set(column(&c), v))
        }),
        Clause::NotMatchedBySourceUpdate { predicate, set } => builder.when_not_matched_by_source_update(|u| {
            let u = match predicate {
                Some(p) => u.predicate(p),
                None => u,
            };
            set.into_iter().fold(u, |u, (c, v)| u.update(column(&c), v))
        }),
        Clause::NotMatchedBySourceDelete { predicate } => {
            builder.when_not_matched_by_source_delete(|d| match predicate {
                Some(p) => d.predicate(p),
                None => d,
            })
        }
    }
}

/// The table where the operation made a commit.
fn changed(table: DeltaTable, read: Option<u64>) -> Option<DeltaTable> {
    (table.version() != read).then_some(table)
}

/// Deletes the rows `predicate` selects (every row without one): one commit, or none where no row
/// matched.
pub async fn delete(
    session: &SessionState,
    target: Target<'_>,
    predicate: Option<Expr>,
) -> Result<(Option<Committed>, MergeCounts)> {
    let mut counts = MergeCounts::default();
    let committed = attempt_or_skip(&target, None, |table, props| async {
        let read = table.version();
        let delete = table.delete().with_session_state(Arc::new(session.clone())).with_commit_properties(props);
        let delete = match predicate {
            Some(p) => delete.with_predicate(p),
            None => delete,
        };
        let (table, metrics) = delete.await.map_err(|e| write_error(&target, e))?;
        counts.deleted = metrics.num_deleted_rows.map_or(0, count);
        Ok(changed(table, read))
    })
    .await?;
    Ok((committed, counts))
}

/// Sets `set` on the rows `predicate` selects (every row without one): one commit, or none where
/// no row matched.
pub async fn update(
    session: &SessionState,
    target: Target<'_>,
    set: Vec<(String, Expr)>,
    predicate: Option<Expr>,
) -> Result<(Option<Committed>, MergeCounts)> {
    let mut counts = MergeCounts::default();
    let committed = attempt_or_skip(&target, None, |table, props| async {
        let read = table.version();
        let set = stored(&table, set);
        let update = table.update().with_session_state(Arc::new(session.clone())).with_commit_properties(props);
        let update = set.into_iter().fold(update, |u, (c, v)| u.with_update(column(&c), v));
        let update = match predicate {
            Some(p) => update.with_predicate(p),
            None => update,
        };
        let (table, metrics) = update.await.map_err(|e| write_error(&target, e))?;
        counts.updated = count(metrics.num_updated_rows);
        Ok(changed(table, read))
    })
    .await?;
    Ok((committed, counts))
}
