//! Where a race or a maintenance scenario runs — a local lakehouse or a prefix of the S3 test
//! bucket — with the raw orders and customer changes of three days and a job per write mode,
//! named after its mode, writing `<schema>.<mode>`.

use arrow::array::RecordBatch;

use super::s3::S3;
use super::{DAILY_ORDERS_SQL, Job, Lake, Project, WriteMode, day};

/// The schema of every table (`concurrent.<mode>`; see [`project`]).
pub const SCHEMA: &str = "concurrent";

/// The day each table is written for before a trial.
pub const WRITTEN: &str = "2026-09-01";

/// The day A runs, and B in a trial on the same partition.
pub const DAY: &str = "2026-09-02";

/// The day B runs in a trial on another partition.
pub const OTHER_DAY: &str = "2026-09-03";

/// Where a trial runs: a local lakehouse, or a prefix of the S3 test bucket.
pub enum Place {
    Local(Lake),
    S3(S3),
}

impl Place {
    /// The raw orders and customer changes of [`WRITTEN`], [`DAY`] and [`OTHER_DAY`], and a job per
    /// mode; nothing written.
    pub fn new(on_s3: bool, mode: WriteMode) -> Self {
        let place = if on_s3 {
            Self::S3(S3::new(&format!("concurrent-{}", mode.as_str().replace('_', "-"))))
        } else {
            Self::Local(Lake::empty(&[]))
        };
        for dt in [WRITTEN, DAY, OTHER_DAY] {
            for (path, batch) in lakewriter_datagen::sample_files(day(dt)) {
                place.put(&path, &batch);
            }
        }
        place.lake().set_project(&project(SCHEMA));
        place
    }

    pub fn lake(&self) -> &Lake {
        match self {
            Self::Local(lake) => lake,
            Self::S3(s3) => &s3.lake,
        }
    }

    /// Puts `batch` as the Parquet file `relative` below the root, as the raw layer's loader would.
    pub fn put(&self, relative: &str, batch: &RecordBatch) {
        match self {
            Self::Local(lake) => {
                lakewriter_datagen::write_parquet(&lake.root().join(relative), batch).expect("a raw file");
            }
            Self::S3(s3) => s3.put(relative, lakewriter_datagen::parquet_bytes(batch).expect("Parquet")),
        }
    }
}

/// One job per write mode, named after its mode, writing `<schema>.<mode>`.
pub fn project(schema: &str) -> Project {
    let target = |mode: &str| format!("{schema}.{mode}");
    Project::new()
        .job(Job::new("overwrite_partition", &target("overwrite_partition")).sql(DAILY_ORDERS_SQL))
        .job(
            Job::merge("merge", &target("merge"), &["customer_id"], "updated_at")
                .delete_when("op = 'delete'")
                .sql("SELECT customer_id, email, tier, updated_at, op FROM raw.customers_batch WHERE dt = $dt"),
        )
        .job(
            Job::delete_insert("delete_insert", &target("delete_insert"), "dt = $dt")
                .sql("SELECT order_id, customer_id, amount, status, $dt AS dt FROM raw.orders WHERE dt = $dt"),
        )
        .job(
            Job::append_dedup("append_dedup", &target("append_dedup"), &["order_id"])
                .sql("SELECT order_id, customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt"),
        )
        .job(
            Job::append("append", &target("append"))
                .partition_by("dt")
                .sql("SELECT order_id, customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt"),
        )
        .job(
            Job::rebuild("rebuild", &target("rebuild")).sql(
                "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue FROM raw.orders GROUP BY customer_id",
            ),
        )
}
