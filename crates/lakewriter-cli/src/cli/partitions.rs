//! The arguments of the commands that run a job's partitions or tell their state: run, verify,
//! backfill, plan, status, reproduce and audit, with the option groups they share (the partition
//! of a run, `--dry-run`, the OpenLineage options, jobs and days).

use std::path::PathBuf;

use chrono::NaiveDate;
use clap::Args;

use super::{OnlyChoice, Range, date, shard};

/// The partition a `run` or `verify` is for.
#[derive(Debug, Args)]
pub struct PartitionArgs {
    /// The job, as named in the project file.
    pub job: String,
    /// The logical date, YYYY-MM-DD (every write mode but `rebuild`).
    #[arg(long, value_parser = date, value_name = "DATE")]
    pub dt: Option<NaiveDate>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub partition: PartitionArgs,
    /// `append` only: append again although this partition was appended before (duplicates).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub dry_run: DryRunArgs,
    #[command(flatten)]
    pub lineage: LineageArgs,
}

/// Where OpenLineage events of `run` and `backfill` go (docs/guide/lineage.md). The rest of the
/// OpenLineage settings are the convention's environment variables: OPENLINEAGE_API_KEY,
/// OPENLINEAGE_NAMESPACE, OPENLINEAGE_PARENT_ID, OPENLINEAGE_ROOT_PARENT_ID, OPENLINEAGE_DISABLED.
#[derive(Debug, Args)]
pub struct LineageArgs {
    /// Send each partition run's OpenLineage events (START, then COMPLETE or FAIL) to this
    /// endpoint (POST to its path, else /api/v1/lineage), with OPENLINEAGE_API_KEY as a bearer
    /// token, or the URL's user:password@ as HTTP Basic authentication (not both).
    #[arg(long, env = "OPENLINEAGE_URL", hide_env_values = true, value_name = "URL")]
    pub openlineage_url: Option<String>,
    /// Append each partition run's OpenLineage events to FILE instead, one JSON event a line.
    #[arg(long, value_name = "FILE")]
    pub openlineage_file: Option<PathBuf>,
    /// The bound on each lineage request, and on the wait for undelivered events at the end; a
    /// lineage endpoint that is down or slow never fails a run.
    #[arg(long, value_name = "SECONDS", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub openlineage_timeout: u64,
}

/// `--dry-run [--show N]`, of `run` and `backfill`.
#[derive(Debug, Args)]
pub struct DryRunArgs {
    /// Compute each partition and evaluate its checks, show the rows its commit would add and
    /// remove (for merge and append_dedup: the rows it would insert, update and delete), and
    /// commit nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: show up to N example rows of those added and of those removed.
    #[arg(long, value_name = "N", requires = "dry_run", default_value_t = 0)]
    pub show: usize,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub partition: PartitionArgs,
    /// `append` only: apply without the exactly-once guard (this is expected to FAIL).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
#[command(mut_args(Range::help(
    "First date, YYYY-MM-DD (launched by Dagster through Pipes: the run's partition range, where not given)",
    None,
)))]
pub struct BackfillArgs {
    /// The job, as named in the project file.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub job: Option<String>,
    /// Then every job below JOB (reading its target, or a table read from it), each over the
    /// same range, in dependency order; a job whose upstream job failed is not run.
    #[arg(long, requires = "job")]
    pub downstream: bool,
    /// Every job of the project, in dependency order (as --downstream).
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub range: Range,
    /// Partitions in flight at once [default: the number of CPUs; 1 for merge, append_dedup
    /// and delete_insert].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub parallel: Option<u16>,
    /// Only shard I of N (0 ≤ I < N): the days whose day number mod N is I. N workers given
    /// 0/N … N-1/N cover the range exactly once between them.
    #[arg(long, value_name = "I/N", value_parser = shard, conflicts_with_all = ["all", "downstream"])]
    pub shard: Option<(u32, u32)>,
    /// Which partitions of the range to run: all (a rerun is always safe), stale (never
    /// written, or code or inputs changed since), or missing (never written).
    #[arg(long, value_enum, default_value_t = OnlyChoice::All, value_name = "WHICH")]
    pub only: OnlyChoice,
    /// Then drop the table's columns the job's result no longer has (on_schema_change =
    /// "sync_all_columns"): every partition the job wrote must be in the range; one commit, made
    /// once no row holds a value of them.
    #[arg(long, requires = "job", conflicts_with_all = ["all", "downstream", "shard", "only", "dry_run"])]
    pub replace_schema: bool,
    #[command(flatten)]
    pub dry_run: DryRunArgs,
    #[command(flatten)]
    pub lineage: LineageArgs,
}

#[derive(Debug, Args)]
#[command(mut_args(Range::help("First date, YYYY-MM-DD (a dated job; a `rebuild` has none)", None,)))]
pub struct PlanArgs {
    /// The job, as named in the project file.
    pub job: String,
    #[command(flatten)]
    pub range: Range,
    /// As for backfill.
    #[arg(long, value_enum, default_value_t = OnlyChoice::All, value_name = "WHICH")]
    pub only: OnlyChoice,
}

#[derive(Debug, Args)]
#[command(mut_args(Range::help(
    "First date, YYYY-MM-DD [default: the first partition the job wrote]",
    Some("Last date (inclusive), YYYY-MM-DD [default: the last partition the job wrote]"),
)))]
pub struct StatusArgs {
    /// The job, as named in the project file [default: a line per job of the project].
    pub job: Option<String>,
    /// Also read the table's files (opens its snapshot): how many are small, and which
    /// partitions `maintain` would compact.
    #[arg(long, requires = "job")]
    pub maintenance: bool,
    #[command(flatten)]
    pub range: Range,
}

/// Jobs by name or all, and an optional range of days: what `reproduce` and `audit` work on.
#[derive(Debug, Args)]
#[command(mut_args(Range::help("First date, YYYY-MM-DD [default: every partition]", None,)))]
pub struct JobsAndDays {
    /// The jobs, as named in the project file.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub names: Vec<String>,
    /// Every job of the project.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub range: Range,
}

#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// The jobs to rebuild (with every job above them, whose tables they read) and their days
    /// [default: the days each job wrote in the project's root].
    #[command(flatten)]
    pub jobs: JobsAndDays,
    /// The lakehouse root to rebuild into: a folder or s3://bucket/prefix, apart from the project's.
    #[arg(long, value_name = "ROOT2")]
    pub into: String,
    /// As for backfill.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub parallel: Option<u16>,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub jobs: JobsAndDays,
    /// The root of the reproduction to compare with (made by `lakewriter reproduce --into`).
    #[arg(long, value_name = "ROOT2", required_unless_present = "scratch", conflicts_with = "scratch")]
    pub against: Option<String>,
    /// Reproduce the jobs (and the jobs above them) into a temporary local folder first, and
    /// compare with that; the folder is removed afterwards.
    #[arg(long)]
    pub scratch: bool,
}
