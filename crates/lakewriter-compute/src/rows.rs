//! A result's rows read back: a few shown as `column=value, …` (the examples errors and reports
//! give), and a count from a one-row aggregate.

use datafusion::arrow::array::{Array, Int64Array, RecordBatch};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::logical_expr::SortExpr;
use datafusion::prelude::DataFrame;

use crate::column;

/// Up to `limit` rows of `batches`, each as `col=value, …` over `columns`.
pub(crate) fn describe_rows(batches: &[RecordBatch], columns: &[String], limit: usize) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for batch in batches {
        let formatters: Vec<_> = columns
            .iter()
            .filter_map(|c| batch.column_by_name(c).map(|a| (c, a)))
            .filter_map(|(c, a)| ArrayFormatter::try_new(a.as_ref(), &options).ok().map(|f| (c, f)))
            .collect();
        for row in 0..batch.num_rows() {
            if out.len() == limit {
                return out;
            }
            let cells: Vec<String> = formatters.iter().map(|(c, f)| format!("{c}={}", f.value(row))).collect();
            out.push(cells.join(", "));
        }
    }
    out
}

/// Up to `limit` rows of `df` over `columns` (see [`describe_rows`]), the first in the order of
/// those columns (each ascending, NULLs last), so that the same rows are shown each time; in the
/// order they come where the columns cannot be sorted.
pub async fn first_rows(df: DataFrame, columns: &[String], limit: usize) -> datafusion::error::Result<Vec<String>> {
    let order: Vec<SortExpr> = columns.iter().map(|c| column(c).sort(true, false)).collect();
    let sorted = match df.clone().sort(order).and_then(|d| d.limit(0, Some(limit))) {
        Ok(sorted) => sorted.collect().await,
        Err(e) => Err(e),
    };
    let batches = match sorted {
        Ok(batches) => batches,
        Err(_) => df.limit(0, Some(limit))?.collect().await?,
    };
    Ok(describe_rows(&batches, columns, limit))
}

/// The first value of the `Int64` column `name` of a one-row aggregate result (0 where NULL).
pub(crate) fn first_u64(batches: &[RecordBatch], name: &str) -> u64 {
    batches
        .first()
        .and_then(|b| b.column_by_name(name))
        .and_then(|a| a.as_any().downcast_ref::<Int64Array>())
        .filter(|a| a.is_valid(0))
        .map_or(0, |a| u64::try_from(a.value(0)).unwrap_or(0))
}
