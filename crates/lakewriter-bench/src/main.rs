//! `lakewriter-bench`: the pieces of `scripts/bench` that are not lakewriter itself.
//!
//!     lakewriter-bench data SCALE DIR           the raw layer and project of a scale
//!     lakewriter-bench floor backfill ROOT OUT FROM TO
//!     lakewriter-bench floor merge ROOT OUT FROM TO
//!
//! `data` writes `DIR/lakewriter.toml` and `DIR/lake/raw/…` and prints the scale's dates; the
//! floor computes the benchmark's jobs with plain DataFusion writing plain Parquet (no Delta, no
//! state, no checks): what the same work costs with nothing on top.

mod data;
mod floor;

use std::io::Write as _;
use std::path::PathBuf;

use chrono::NaiveDate;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const USAGE: &str = "usage: lakewriter-bench data (small|medium|history|skew|large) DIR\n       \
                     lakewriter-bench floor (backfill|merge) ROOT OUT FROM TO";

fn date(arg: Option<String>) -> Result<NaiveDate, BoxError> {
    Ok(lakewriter_core::parse_date(&arg.ok_or(USAGE)?)?)
}

fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("data") => {
            let scale = data::Scale::named(&args.next().ok_or(USAGE)?)?;
            let dir = PathBuf::from(args.next().ok_or(USAGE)?);
            let dates = data::write(&scale, &dir)?;
            writeln!(std::io::stdout(), "{dates}")?;
            Ok(())
        }
        Some("floor") => {
            let what = args.next().ok_or(USAGE)?;
            let root = PathBuf::from(args.next().ok_or(USAGE)?);
            let out = PathBuf::from(args.next().ok_or(USAGE)?);
            let (from, to) = (date(args.next())?, date(args.next())?);
            let runtime = tokio::runtime::Runtime::new()?;
            match what.as_str() {
                "backfill" => runtime.block_on(floor::backfill(&root, &out, from, to)),
                "merge" => runtime.block_on(floor::merge(&root, &out, from, to)),
                _ => Err(USAGE.into()),
            }
        }
        _ => Err(USAGE.into()),
    }
}
