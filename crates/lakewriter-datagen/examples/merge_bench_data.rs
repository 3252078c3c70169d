//! Lays out the merge benchmark's lakehouse: a project with one `merge` job, a first batch of
//! TARGET_ROWS distinct customers (dt=2026-01-01, the initial load) and a second batch of
//! BATCH_ROWS changes (dt=2026-01-02): half newer versions of existing customers, half new ones.
//!
//!     cargo run --release -p lakewriter-datagen --example merge_bench_data -- DIR [TARGET_ROWS] [BATCH_ROWS]
//!
//! `scripts/bench-merge.sh` runs it, then times `lakewriter run` on each batch.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use lakewriter_datagen::{customers_schema, write_parquet};

const PROJECT: &str = r#"root = "lake"

[jobs.customers]
target = "core.customers"
write = "merge"
key = ["customer_id"]
newer_by = "updated_at"
sql = "SELECT customer_id, email, tier, updated_at, op FROM raw.customers_batch WHERE dt = $dt"
"#;

const FILE_ROWS: i64 = 500_000;

fn batch(ids: &[i64], version: i64) -> RecordBatch {
    let tiers = ["bronze", "silver", "gold"];
    let columns: Vec<Arc<dyn arrow::array::Array>> = vec![
        Arc::new(Int64Array::from(ids.to_vec())),
        Arc::new(ids.iter().map(|id| Some(format!("customer{id}.v{version}@example.com"))).collect::<StringArray>()),
        Arc::new(ids.iter().map(|id| Some(tiers[usize::try_from(id % 3).unwrap_or(0)])).collect::<StringArray>()),
        Arc::new(
            TimestampMicrosecondArray::from(vec![1_767_225_600_000_000 + version * 86_400_000_000; ids.len()])
                .with_timezone("UTC"),
        ),
        Arc::new(StringArray::from(vec!["upsert"; ids.len()])),
    ];
    RecordBatch::try_new(customers_schema(), columns).expect("batch")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(args.get(1).ok_or("usage: merge_bench_data DIR [TARGET_ROWS] [BATCH_ROWS]")?);
    let target_rows: i64 = args.get(2).map_or(Ok(5_000_000), |s| s.parse())?;
    let batch_rows: i64 = args.get(3).map_or(Ok(50_000), |s| s.parse())?;
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("lakewriter.toml"), PROJECT)?;
    let raw = dir.join("lake/raw/customers_batch");

    let mut start = 1;
    let mut part = 0;
    while start <= target_rows {
        let end = (start + FILE_ROWS - 1).min(target_rows);
        let ids: Vec<i64> = (start..=end).collect();
        write_parquet(&raw.join(format!("dt=2026-01-01/part-{part:05}.parquet")), &batch(&ids, 0))?;
        start = end + 1;
        part += 1;
    }
    // Half updates spread over the whole key range, half new keys.
    let updates = batch_rows / 2;
    let stride = (target_rows / updates.max(1)).max(1);
    let mut ids: Vec<i64> = (0..updates).map(|i| 1 + i * stride).collect();
    ids.extend(target_rows + 1..=target_rows + (batch_rows - updates));
    write_parquet(&raw.join("dt=2026-01-02/part-00000.parquet"), &batch(&ids, 1))?;
    eprintln!("{}: {target_rows} target rows in {part} files, a batch of {batch_rows} changes", dir.display());
    Ok(())
}
