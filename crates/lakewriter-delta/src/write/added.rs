//! The columns a MERGE adds, written only where a clause sets them.
//!
//! delta-rs's MERGE with schema merge (`with_merge_schema`; deltalake-core 1.1) writes a column it
//! adds from the source's column of that name in every row, whatever its clauses say: it looks
//! each clause's assignment to the column up under the source's name for it, while the clause
//! holds it under the target's, so it finds none (`operations/merge/mod.rs`). A matched row that
//! no clause writes (a `merge`'s row of its key that a newer version wrote) would take the source
//! row's value, and a row that a clause sets to another value would not. Delta's MERGE writes the
//! clause's value where a clause sets the column and NULL everywhere else: a row keeps what it
//! held, and a row written before the column was added held none.
//!
//! So before such a merge the source's column of each name the merge adds is replaced by what
//! Delta's MERGE would write in the target row its source row meets ([`gated`]): the source is
//! joined with the target on the merge's condition, the first clause that applies to each pair
//! (as delta-rs applies them) gives the value, and a source row's value is that of all its pairs,
//! which must agree — where one source row would set different values in the target rows it
//! matches, the merge is refused, naming the column. A row of the target no source row matches
//! reads NULL in the source's columns, which is what a MERGE adds there.

use std::sync::Arc;

use datafusion::arrow::datatypes::Schema;
use datafusion::common::{Column, JoinType, ScalarValue, TableReference};
use datafusion::datasource::TableProvider;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::functions_aggregate::expr_fn::{count, count_distinct, max};
use datafusion::functions_window::expr_fn::row_number;
use datafusion::logical_expr::{Expr, cast, when};
use datafusion::prelude::{DataFrame, SessionContext, lit};

/// A clause as it decides an added column: whether it applies to matched rows or to source rows
/// without a match, its condition, and its assignments (none for a delete).
pub(super) struct Arm<'a> {
    pub matched: bool,
    pub predicate: Option<&'a Expr>,
    pub set: &'a [(String, Expr)],
}

const ROW: &str = "__lakewriter_source_row";
const GROUP: &str = "__lakewriter_group_row";
const MATCHED: &str = "__lakewriter_matched";

fn value_name(i: usize) -> String {
    format!("__lakewriter_added_{i}")
}

/// `source` for a merge into `target` (its columns `table`) on `on`, with `arms` in the order the
/// merge applies them and the aliases `(source, target)`: each column an arm sets that `table`
/// lacks holds what the merge writes in the target row of its source row (see the module). As it
/// was where no arm adds a column.
pub(super) async fn gated(
    session: &SessionState,
    source: DataFrame,
    target: Arc<dyn TableProvider>,
    table: &Schema,
    (source_alias, target_alias): (&str, &str),
    on: &Expr,
    arms: &[Arm<'_>],
) -> Result<DataFrame> {
    let mut added: Vec<&str> = Vec::new();
    for arm in arms {
        for (column, _) in arm.set {
            if table.field_with_name(column).is_err() && !added.contains(&column.as_str()) {
                added.push(column);
            }
        }
    }
    if added.is_empty() {
        return Ok(source);
    }
    let ctx = SessionContext::new_with_state(session.clone());
    let numbered = source.with_column(ROW, row_number())?.cache().await?;
    let s = numbered.clone().alias(source_alias)?;
    let t = ctx.read_table(target)?.with_column(MATCHED, lit(true))?.alias(target_alias)?;
    let marker = Expr::Column(Column::new(Some(TableReference::bare(target_alias)), MATCHED));
    let (matched, unmatched) = (marker.clone().is_not_null(), marker.is_null());
    let joined = s.join_on(t, JoinType::Left, [on.clone()])?;

    let row = Expr::Column(Column::new(Some(TableReference::bare(source_alias)), ROW));
    let mut values = vec![row.alias(ROW)];
    for column in &added {
        let mut branches = arms.iter().map(|arm| {
            let applies = if arm.matched { matched.clone() } else { unmatched.clone() };
            let applies = arm.predicate.cloned().into_iter().fold(applies, Expr::and);
            let value = arm.set.iter().find(|(c, _)| c == column).map_or(lit(ScalarValue::Null), |(_, v)| v.clone());
            (applies, value)
        });
        let Some((applies, value)) = branches.next() else { continue };
        let mut case = branches.fold(when(applies, value), |mut case, (applies, value)| case.when(applies, value));
        values.push(case.otherwise(lit(ScalarValue::Null))?.alias(value_name(values.len() - 1)));
    }
    let per_pair = joined.select(values)?;
    let mut aggregates = Vec::new();
    for i in 0..added.len() {
        let value = datafusion::prelude::col(value_name(i));
        aggregates.push(max(value.clone()).alias(value_name(i)));
        aggregates.push(count_distinct(value.clone()).alias(format!("{}_distinct", value_name(i))));
        aggregates.push(count(value).alias(format!("{}_set", value_name(i))));
    }
    aggregates.push(count(lit(1)).alias("__lakewriter_pairs"));
    let per_row = per_pair.aggregate(vec![datafusion::prelude::col(ROW).alias(GROUP)], aggregates)?.cache().await?;

    for (i, column) in added.iter().enumerate() {
        let distinct = datafusion::prelude::col(format!("{}_distinct", value_name(i)));
        let set = datafusion::prelude::col(format!("{}_set", value_name(i)));
        let pairs = datafusion::prelude::col("__lakewriter_pairs");
        let differs = distinct.clone().gt(lit(1i64)).or(distinct.eq(lit(1i64)).and(set.lt(pairs)));
        if per_row.clone().filter(differs)?.limit(0, Some(1))?.count().await? > 0 {
            return Err(DataFusionError::Plan(format!(
                "the MERGE adds column `{column}` and would set it differently in the target rows one source row matches; add the column first with a MERGE whose clauses set it the same in every row a source row matches"
            )));
        }
    }

    let joined = numbered.join_on(
        per_row,
        JoinType::Inner,
        [datafusion::prelude::col(ROW).eq(datafusion::prelude::col(GROUP))],
    )?;
    let mut select = Vec::new();
    let mut replaced = Vec::new();
    for field in source_fields(&joined) {
        if field == ROW || field == GROUP || field.starts_with("__lakewriter_added_") || field == "__lakewriter_pairs" {
            continue;
        }
        match added.iter().position(|c| *c == field) {
            Some(i) => {
                let value = datafusion::prelude::col(value_name(i));
                let typed = match joined.schema().field_with_unqualified_name(&field) {
                    Ok(f) => cast(value, f.data_type().clone()),
                    Err(_) => value,
                };
                select.push(typed.alias(&field));
                replaced.push(i);
            }
            None => select.push(Expr::Column(Column::from_name(field.clone()))),
        }
    }
    for (i, column) in added.iter().enumerate() {
        if !replaced.contains(&i) {
            select.push(datafusion::prelude::col(value_name(i)).alias(*column));
        }
    }
    joined.select(select)
}

/// The names of `frame`'s columns, in order.
fn source_fields(frame: &DataFrame) -> Vec<String> {
    frame.schema().fields().iter().map(|f| f.name().clone()).collect()
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field};
    use datafusion::datasource::MemTable;
    use datafusion::prelude::col;

    use super::*;

    fn batch(keys: &[i64], names: &[&str]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let columns: Vec<Arc<dyn datafusion::arrow::array::Array>> =
            vec![Arc::new(Int64Array::from(keys.to_vec())), Arc::new(StringArray::from(names.to_vec()))];
        RecordBatch::try_new(schema, columns).expect("a batch")
    }

    fn qualified(relation: &str, name: &str) -> Expr {
        Expr::Column(Column::new(Some(TableReference::bare(relation)), name))
    }

    /// Source rows 1, 2, 3 with `extra` = upper(name); target rows 1 and 2. The update applies
    /// where the names differ (row 2), the insert to row 3: row 1 is matched and left as it was.
    #[tokio::test]
    async fn an_added_column_holds_the_value_of_the_clause_that_writes_the_row_and_null_elsewhere() {
        let ctx = SessionContext::new();
        let source = ctx
            .read_batch(batch(&[1, 2, 3], &["a", "b2", "c"]))
            .expect("a frame")
            .with_column("extra", datafusion::functions::string::expr_fn::upper(col("name")))
            .expect("extra");
        let target = batch(&[1, 2], &["a", "b"]);
        let provider = Arc::new(MemTable::try_new(target.schema(), vec![vec![target.clone()]]).expect("a table"));
        let on = qualified("t", "k").eq(qualified("s", "k"));
        let set = vec![("name".to_owned(), qualified("s", "name")), ("extra".to_owned(), qualified("s", "extra"))];
        let differs = qualified("t", "name").not_eq(qualified("s", "name"));
        let arms = [
            Arm { matched: true, predicate: Some(&differs), set: &set },
            Arm { matched: false, predicate: None, set: &set },
        ];
        let gated =
            gated(&ctx.state(), source, provider, &target.schema(), ("s", "t"), &on, &arms).await.expect("gated");
        let names: Vec<String> = gated.schema().fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["k", "name", "extra"]);
        let batches = gated.sort(vec![col("k").sort(true, false)]).expect("sorted").collect().await.expect("rows");
        let extra: Vec<Option<String>> = batches
            .iter()
            .flat_map(|b| {
                let column = b.column(2).as_any().downcast_ref::<StringArray>().expect("strings");
                column.iter().map(|v| v.map(str::to_owned)).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(extra, [None, Some("B2".to_owned()), Some("C".to_owned())]);
    }

    /// A source row that matches two target rows, one of which the update passes over, would set
    /// the column in one and not the other: refused, naming it.
    #[tokio::test]
    async fn a_source_row_that_would_set_its_matches_differently_is_refused() {
        let ctx = SessionContext::new();
        let source = ctx.read_batch(batch(&[1], &["x"])).expect("a frame").with_column("extra", lit("E")).expect("e");
        let target = batch(&[1, 1], &["x", "y"]);
        let provider = Arc::new(MemTable::try_new(target.schema(), vec![vec![target.clone()]]).expect("a table"));
        let on = qualified("t", "k").eq(qualified("s", "k"));
        let set = vec![("extra".to_owned(), qualified("s", "extra"))];
        let differs = qualified("t", "name").not_eq(qualified("s", "name"));
        let arms = [Arm { matched: true, predicate: Some(&differs), set: &set }];
        let error = gated(&ctx.state(), source, provider, &target.schema(), ("s", "t"), &on, &arms).await.unwrap_err();
        assert!(error.to_string().contains("adds column `extra`"), "{error}");
    }

    #[tokio::test]
    async fn a_merge_that_adds_no_column_keeps_its_source() {
        let ctx = SessionContext::new();
        let source = ctx.read_batch(batch(&[1], &["x"])).expect("a frame");
        let target = batch(&[1], &["x"]);
        let provider = Arc::new(MemTable::try_new(target.schema(), vec![vec![target.clone()]]).expect("a table"));
        let on = qualified("t", "k").eq(qualified("s", "k"));
        let set = vec![("name".to_owned(), qualified("s", "name"))];
        let arms = [Arm { matched: true, predicate: None, set: &set }];
        let plan = source.logical_plan().clone();
        let kept = gated(&ctx.state(), source, provider, &target.schema(), ("s", "t"), &on, &arms).await.expect("kept");
        assert_eq!(kept.logical_plan(), &plan);
    }
}
