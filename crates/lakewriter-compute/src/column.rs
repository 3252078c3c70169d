//! A column by its name, exactly as written.

use datafusion::common::Column;
use datafusion::prelude::Expr;

/// The unqualified column `name`, exactly as written. DataFusion's `col("Tier")` parses its
/// argument as SQL — an unquoted name folded to lower case (`tier`), `a.b` taken for a qualified
/// name, a space or a quote not a name at all — so every column lakewriter names from a project
/// file or a schema (keys, `newer_by`, partition and check columns, a result's columns) becomes
/// an expression here.
#[must_use]
pub fn column(name: &str) -> Expr {
    Expr::Column(Column::from_name(name))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Int64Array, RecordBatch};
    use datafusion::prelude::SessionContext;

    use super::column;

    /// Names SQL gives only in quotes are the columns of those names, as written.
    #[tokio::test]
    async fn a_name_is_the_column_of_that_name_whatever_its_characters() {
        let names = ["Tier", "tier", "Name With Space", "quo\"te", "Ünïcode", "a.b", "sum(x)"];
        let columns = (0_i64..).zip(names).map(|(i, n)| (n, Arc::new(Int64Array::from(vec![i])) as _));
        let df = SessionContext::new().read_batch(RecordBatch::try_from_iter(columns).unwrap()).unwrap();
        for (i, name) in (0_i64..).zip(names) {
            let batches = df.clone().select(vec![column(name)]).unwrap().collect().await.unwrap();
            assert_eq!(batches[0].schema().field(0).name(), name);
            let values = batches[0].column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            assert_eq!(values.value(0), i, "{name}");
        }
    }
}
