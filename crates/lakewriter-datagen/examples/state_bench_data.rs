//! Lays out the partition-state benchmark's lakehouse: a project with the demo's `daily_orders`
//! job and raw orders for DAYS days from 2016-01-01.
//!
//!     cargo run --release -p lakewriter-datagen --example state_bench_data -- DIR [DAYS]
//!
//! `scripts/bench-state.sh` runs it, backfills every day, then times `lakewriter status`.

use std::io::Write as _;
use std::path::Path;

use chrono::{Days, NaiveDate};
use lakewriter_core::DateRange;

const PROJECT: &str = r#"root = "lake"

[jobs.daily_orders]
target = "analytics.daily_orders"
write = "overwrite_partition"
partition_by = "dt"
sql = "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id"
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: state_bench_data DIR [DAYS]")?;
    let days: u64 = args.next().map_or(Ok(3650), |d| d.parse())?;
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("lakewriter.toml"), PROJECT)?;
    let from = NaiveDate::from_ymd_opt(2016, 1, 1).ok_or("date")?;
    let to = from + Days::new(days.max(1) - 1);
    let written = lakewriter_datagen::write_orders(&dir.join("lake"), DateRange::new(from, to)?)?;
    // The script reads this line: first day, last day, raw files.
    writeln!(std::io::stdout(), "{from} {to} {}", written.files_written + written.files_kept)?;
    Ok(())
}
