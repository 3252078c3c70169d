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
use datafusion::prelude::{DataFrame, SessionContext, col, lit};

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
const PAIRS: &str = "__lakewriter_pairs";

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
    for (column, _) in arms.iter().flat_map(|arm| arm.set) {
        if table.field_with_name(column).is_err() && !added.contains(&column.as_str()) {
            added.push(column);
        }
    }
    if added.is_empty() {
        return Ok(source);
    }
    let ctx = SessionContext::new_with_state(session.clone());
    let numbered = source.with_column(ROW, row_number())?.cache().await?;
    let s = numbered.clone().alias(source_alias)?;
    let t = ctx.read_table(target)?.with_column(MATCHED, lit(true))?.alias(target_alias)?;
    let joined = s.join_on(t, JoinType::Left, [on.clone()])?;
    let marker = Expr::Column(Column::new(Some(TableReference::bare(target_alias)), MATCHED));
    let mut values = vec![Expr::Column(Column::new(Some(TableReference::bare(source_alias)), ROW)).alias(ROW)];
    for (i, column) in added.iter().enumerate() {
        values.push(written(column, arms, &marker)?.alias(value_name(i)));
    }
    let per_row = agreed(joined.select(values)?, &added).await?;
    with_values(numbered, per_row, &added)
}

/// What the first of `arms` that applies to a pair writes in `column` (NULL where it sets none, or
/// none applies); `marker` is a target column NULL where the source row matched no target row.
fn written(column: &str, arms: &[Arm<'_>], marker: &Expr) -> Result<Expr> {
    let (matched, unmatched) = (marker.clone().is_not_null(), marker.clone().is_null());
    let mut branches = arms.iter().map(|arm| {
        let applies = if arm.matched { matched.clone() } else { unmatched.clone() };
        let applies = arm.predicate.cloned().into_iter().fold(applies, Expr::and);
        let value = arm.set.iter().find(|(c, _)| c == column).map_or(lit(ScalarValue::Null), |(_, v)| v.clone());
        (applies, value)
    });
    let Some((applies, value)) = branches.next() else { return Ok(lit(ScalarValue::Null)) };
    let mut case = branches.fold(when(applies, value), |mut case, (applies, value)| case.when(applies, value));
    case.otherwise(lit(ScalarValue::Null))
}

/// Each source row's value of each added column, from the values of its pairs (`per_pair`: the
/// row number and a value per column); an error naming a column whose pairs of one source row
/// differ (a NULL and a value differ too).
async fn agreed(per_pair: DataFrame, added: &[&str]) -> Result<DataFrame> {
    let mut aggregates = Vec::new();
    for i in 0..added.len() {
        let value = col(value_name(i));
        aggregates.push(max(value.clone()).alias(value_name(i)));
        aggregates.push(count_distinct(value.clone()).alias(format!("{}_distinct", value_name(i))));
        aggregates.push(count(value).alias(format!("{}_set", value_name(i))));
    }
    aggregates.push(count(lit(1)).alias(PAIRS));
    let per_row = per_pair.aggregate(vec![col(ROW).alias(GROUP)], aggregates)?.cache().await?;
    for (i, column) in added.iter().enumerate() {
        let distinct = col(format!("{}_distinct", value_name(i)));
        let set = col(format!("{}_set", value_name(i)));
        let differs = distinct.clone().gt(lit(1i64)).or(distinct.eq(lit(1i64)).and(set.lt(col(PAIRS))));
        if per_row.clone().filter(differs)?.limit(0, Some(1))?.count().await? > 0 {
            return Err(DataFusionError::Plan(format!(
                "the MERGE adds column `{column}` and would set it differently in the target rows one source row matches; add the column first with a MERGE whose clauses set it the same in every row a source row matches"
            )));
        }
    }
    Ok(per_row)
}

/// `numbered`'s columns (its row number aside), each added column replaced by its value in
/// `per_row` (cast to the source column's type) or, where the source has none of that name,
/// added after them.
fn with_values(numbered: DataFrame, per_row: DataFrame, added: &[&str]) -> Result<DataFrame> {
    let names: Vec<(String, datafusion::arrow::datatypes::DataType)> =
        numbered.schema().fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect();
    let joined = numbered.join_on(per_row, JoinType::Inner, [col(ROW).eq(col(GROUP))])?;
    let mut select = Vec::new();
    for (name, data_type) in names.iter().filter(|(name, _)| name != ROW) {
        select.push(match added.iter().position(|c| c == name) {
            Some(i) => cast(col(value_name(i)), data_type.clone()).alias(name),
            None => Expr::Column(Column::from_name(name.clone())),
        });
    }
    for (i, column) in added.iter().enumerate().filter(|(_, c)| !names.iter().any(|(name, _)| name == *c)) {
        select.push(col(value_name(i)).alias(*column));
    }
    joined.select(select)
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field};
    use datafusion::datasource::MemTable;

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
