//! The floor: the benchmark's jobs with plain DataFusion writing plain Parquet, one query per day
//! with the date bound as a parameter — no Delta log, no partition state, no checks.
//!
//! - `backfill`: the `daily_orders` aggregate of each day, written to `OUT/dt=DAY/`.
//! - `merge`: each customer batch deduplicated (newest `updated_at` per key) and merged into the
//!   previous snapshot by rewriting it whole (`OUT/v<N>/`); the newer-wins rule keeps the older
//!   row on a tie, as the guard `s.updated_at > t.updated_at` does.

use std::path::Path;
use std::sync::Arc;

use chrono::{Days, NaiveDate};
use datafusion::arrow::datatypes::DataType;
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::ListingOptions;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use datafusion::scalar::ScalarValue;

use crate::BoxError;

const AGGREGATE: &str = "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, \
     SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) AS cancelled, CAST($1 AS DATE) AS dt \
     FROM orders WHERE dt = $1 GROUP BY customer_id";

const DEDUP: &str = "SELECT customer_id, email, tier, updated_at, op FROM (\
     SELECT *, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY updated_at DESC) AS n \
     FROM batches WHERE dt = $1) WHERE n = 1";

const MERGE: &str = "SELECT customer_id, email, tier, updated_at, op FROM (\
     SELECT *, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY updated_at DESC, side) AS n FROM (\
     SELECT customer_id, email, tier, updated_at, op, 0 AS side FROM target UNION ALL \
     SELECT customer_id, email, tier, updated_at, op, 1 AS side FROM source)) WHERE n = 1";

async fn raw(ctx: &SessionContext, name: &str, root: &Path, dataset: &str) -> Result<(), BoxError> {
    let options = ListingOptions::new(Arc::new(ParquetFormat::default()))
        .with_file_extension(".parquet")
        .with_table_partition_cols(vec![("dt".to_owned(), DataType::Utf8)]);
    let url = format!("{}/", root.join("lake/raw").join(dataset).display());
    ctx.register_listing_table(name, url, options, None, None).await?;
    Ok(())
}

/// A DataFusion session planning SQL as lakewriter does ([`lakewriter_core::SQL_SETTINGS`]), so
/// that the floor's rows are lakewriter's.
fn session() -> SessionContext {
    let config = lakewriter_core::SQL_SETTINGS
        .iter()
        .fold(SessionConfig::new(), |config, (key, value)| config.set_str(key, value));
    SessionContext::new_with_config(config)
}

fn days(from: NaiveDate, to: NaiveDate) -> impl Iterator<Item = NaiveDate> {
    std::iter::successors(Some(from), move |d| Some(*d + Days::new(1)).filter(|d| *d <= to))
}

fn param(day: NaiveDate) -> Vec<ScalarValue> {
    vec![ScalarValue::Utf8(Some(day.to_string()))]
}

fn folder(path: &Path) -> String {
    format!("{}/", path.display())
}

pub async fn backfill(root: &Path, out: &Path, from: NaiveDate, to: NaiveDate) -> Result<(), BoxError> {
    let ctx = session();
    raw(&ctx, "orders", root, "orders").await?;
    for day in days(from, to) {
        let dir = out.join(format!("dt={day}"));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        let df = ctx.sql(AGGREGATE).await?.with_param_values(param(day))?;
        df.write_parquet(&folder(&dir), DataFrameWriteOptions::new(), None).await?;
    }
    Ok(())
}

pub async fn merge(root: &Path, out: &Path, from: NaiveDate, to: NaiveDate) -> Result<(), BoxError> {
    let ctx = session();
    raw(&ctx, "batches", root, "customers_batch").await?;
    let first = std::fs::read_dir(out).map_or(0, Iterator::count);
    for (version, day) in (first..).zip(days(from, to)) {
        let source = ctx.sql(DEDUP).await?.with_param_values(param(day))?;
        ctx.register_table("source", source.into_view())?;
        let next = out.join(format!("v{:05}", version + 1));
        let result = if version == 0 {
            ctx.sql("SELECT * FROM source").await?
        } else {
            let current = out.join(format!("v{version:05}"));
            ctx.register_parquet("target", folder(&current), ParquetReadOptions::default()).await?;
            ctx.sql(MERGE).await?
        };
        result.write_parquet(&folder(&next), DataFrameWriteOptions::new(), None).await?;
        ctx.deregister_table("source")?;
        ctx.deregister_table("target")?;
    }
    Ok(())
}
