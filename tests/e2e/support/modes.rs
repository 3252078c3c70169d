//! A table per write mode, each job named after its mode and writing `failures.<mode>` from a
//! day's raw orders (`rebuild`: every day's): written for [`WRITTEN`], then run for [`FAILING`].
//! The failure, crash, fault, check and schema-change scenarios all start here.

use super::{Job, Lake, Project, Run, WriteMode};

/// The day every table is written for first (`rebuild`: every day, without a date).
pub const WRITTEN: &str = "2026-09-01";

/// The day of the failing runs.
pub const FAILING: &str = "2026-09-02";

/// The modes that run for a date: all but `rebuild`.
pub const DATED: [WriteMode; 5] = [
    WriteMode::OverwritePartition,
    WriteMode::DeleteInsert,
    WriteMode::Merge,
    WriteMode::AppendDedup,
    WriteMode::Append,
];

/// What every job selects: the expression of each column, and the table it reads. A case
/// changes one of them to make its runs fail.
#[derive(Debug, Clone, Copy)]
pub struct Columns {
    pub customer_id: &'static str,
    pub amount: &'static str,
    pub status: &'static str,
    /// The partition column of a dated job (`rebuild` keeps each row's `dt`).
    pub dt: &'static str,
    pub from: &'static str,
}

pub const GOOD: Columns =
    Columns { customer_id: "customer_id", amount: "amount", status: "status", dt: "$dt", from: "raw.orders" };

/// The job of `mode`, named after it, writing `failures.<mode>`: a day's orders (`rebuild`: every
/// day's), keyed by `order_id` where the mode has a key.
pub fn job(mode: WriteMode, columns: Columns) -> Job {
    let Columns { customer_id, amount, status, dt, from } = columns;
    let select = |dt: &str| {
        format!(
            "SELECT order_id, {customer_id} AS customer_id, {amount} AS amount, {status} AS status, created_at, \
             {dt} AS dt FROM {from}"
        )
    };
    mode_job(mode, &table(mode), format!("{} WHERE dt = $dt", select(dt)), select("dt"))
}

/// The job of `mode`, named after it, writing `target` with `one_day` (`rebuild`: `every_day`),
/// keyed by `order_id` (newer by `created_at`) where the mode has a key.
pub fn mode_job(mode: WriteMode, target: &str, one_day: String, every_day: String) -> Job {
    let name = mode.as_str();
    match mode {
        WriteMode::OverwritePartition => Job::new(name, target).sql(one_day),
        WriteMode::DeleteInsert => Job::delete_insert(name, target, "dt = $dt").sql(one_day),
        WriteMode::Merge => Job::merge(name, target, &["order_id"], "created_at").sql(one_day),
        WriteMode::AppendDedup => Job::append_dedup(name, target, &["order_id"]).sql(one_day),
        WriteMode::Append => Job::append(name, target).sql(one_day),
        WriteMode::Rebuild => Job::rebuild(name, target).sql(every_day),
        WriteMode::Statement => unreachable!("a statement's job is none of WRITE_MODES"),
    }
}

pub fn table(mode: WriteMode) -> String {
    format!("failures.{}", mode.as_str())
}

/// The URI of `mode`'s table in `lake` (below its S3 root where it has one), as the independent
/// readers open it.
pub fn table_uri(lake: &Lake, mode: WriteMode) -> String {
    uri_of(lake, &table(mode))
}

/// The URI of the table `table` (`schema.name`) in `lake`, as [`table_uri`].
pub fn uri_of(lake: &Lake, table: &str) -> String {
    let relative = table.replace('.', "/");
    let root = lake.env().into_iter().find(|(k, _)| *k == "LAKEWRITER_ROOT").map(|(_, root)| root.to_owned());
    let root = root.unwrap_or_else(|| lake.root().to_str().expect("utf-8 path").to_owned());
    format!("{}/{relative}", root.trim_end_matches('/'))
}

pub fn project(modes: &[WriteMode], columns: Columns) -> Project {
    modes.iter().fold(Project::new(), |project, &mode| project.job(job(mode, columns)))
}

/// `lakewriter --json run MODE --dt DAY` (`rebuild`: without a date).
pub fn run(lake: &Lake, mode: WriteMode, day: &str) -> Run {
    let mut args = vec!["--json", "run", mode.as_str()];
    if mode != WriteMode::Rebuild {
        args.extend(["--dt", day]);
    }
    lake.cli(&args)
}

/// Raw orders for [`WRITTEN`] and [`FAILING`], and the table of each of `modes` written once,
/// for [`WRITTEN`].
pub fn written(modes: &[WriteMode]) -> Lake {
    let lake = Lake::new(WRITTEN, FAILING);
    lake.set_project(&project(modes, GOOD));
    for &mode in modes {
        run(&lake, mode, WRITTEN).assert_code(0);
    }
    lake
}

/// How errors name a failing run of `mode`: `MODE dt=DAY`, or `rebuild (whole table)`.
pub fn label(mode: WriteMode, day: &str) -> String {
    match mode {
        WriteMode::Rebuild => "rebuild (whole table)".to_owned(),
        _ => format!("{} dt={day}", mode.as_str()),
    }
}

/// The state `status` gives the partition of `mode`'s run for [`FAILING`] (`rebuild`: the table's).
pub fn state(lake: &Lake, mode: WriteMode) -> String {
    let mut args = vec![mode.as_str()];
    if mode != WriteMode::Rebuild {
        args.extend(["--from", FAILING, "--to", FAILING]);
    }
    lake.status(&args).partitions.remove(0).state
}
