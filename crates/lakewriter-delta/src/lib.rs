//! lakewriter-delta: every call lakewriter makes into delta-rs.
//!
//! - [`session`]: the DataFusion session delta-rs plans and writes with;
//! - [`table`]: opening Delta tables, keeping them and their file lists between a command's writes,
//!   and exposing them to SQL;
//! - [`write`]: the write strategies, each a single Delta commit carrying lakewriter's metadata;
//! - [`state`]: what each commit records — lakewriter's `commitInfo`, the partition state — and
//!   reading it back from the log, a run's commit found by its run id among it;
//! - `files`: the file list of a table kept between a command's writes, read from the log and
//!   brought forward over its commits;
//! - [`schema`]: the types Delta stores, the casts that get a result there, and the
//!   result-versus-table schema check;
//! - [`dates`]: dates and timestamps inside the range Delta stores, checked as a write's rows
//!   pass;
//! - [`nullability`]: the nullable columns of a table lakewriter creates, and the NULLs of a
//!   result in the NOT NULL ones;
//! - [`digest`]: a content digest of a table or partition, independent of file layout, row order
//!   and table version;
//! - [`values`]: Delta's names of types, and empty partition strings written as NULL;
//! - `paths`: the one decoding of the log's data file paths, and the objects they name;
//! - [`maintain`]: compaction, checkpoints, vacuum and log clean-up, none of which changes a row
//!   or the partition state;
//! - [`retry`]: the one retry policy of a commit that conflicts with a concurrent one;
//! - `s3`: how delta-rs reaches S3 — through lakewriter's own object store
//!   ([`lakewriter_storage::Location::object_store`]) and delta-rs's put-if-absent log store.
//!
//! This crate runs the plans it is handed and never writes SQL of its own choosing; its own
//! queries are a digest's scan, after a write refused by the table's data checks a count of the
//! NULLs in its NOT NULL columns and of the rows outside a replaceWhere, and compaction's scan of
//! the files it rewrites.

pub mod dates;
pub mod digest;
pub mod maintain;
pub mod nullability;
pub mod protocol;
pub mod ranges;
pub mod retry;
pub mod schema;
pub mod state;
pub mod table;
pub mod values;
pub mod write;

mod error;
mod files;
mod paths;
mod prune;
mod s3;

pub use digest::{Digest, digest, digest_at, partition_digest, partition_digests};
pub use error::{Error, Result};
pub use write::{
    AppendOutcome, CheckRecord, Clause, CommitMetadata, Committed, FixtureFiles, MergeCounts, MergeSpec,
    MergeStatement, RowCounts, Scanned, Target, append, append_once, create_fixture, delete, drop_columns, merge,
    merge_clauses, merge_in_one_scan, record_state, replace_all, replace_where, update,
};

use std::sync::Arc;

use datafusion::prelude::SessionContext;

/// The `tracing` target of phase events: one `info` event as a write enters each
/// [`Phase`](lakewriter_core::Phase), its name in the field `phase`, with its table and partition
/// (or version). Off by default; `RUST_LOG=lakewriter::phase=info` shows them, which is how the
/// crash tests know when to kill a run (see ARCHITECTURE.md).
pub const PHASE_TARGET: &str = "lakewriter::phase";

/// Logs that the write of `partition` to `table` enters `phase`.
pub fn phase(phase: lakewriter_core::Phase, table: &str, partition: &lakewriter_core::PartitionKey) {
    tracing::info!(target: PHASE_TARGET, phase = phase.as_str(), table, %partition);
}

/// A DataFusion session set up as delta-rs needs it for plan-based writes (its query planner, with
/// lakewriter's plans on an engine besides — see [`Planner`] —, and object-store registration). Note: it plans SQL identifiers case-sensitively, as written.
///
/// DataFusion's list-files cache is off: on a table's first scan it lists every file of the
/// table, whatever the scan's partition filter, and caches that — a cost that grows with a raw
/// dataset's history. Without it, a scan of one day lists that day's folder only.
///
/// SQL is planned with [`lakewriter_core::SQL_SETTINGS`]: decimal literals are exact decimals.
#[must_use]
pub fn session() -> SessionContext {
    use datafusion::execution::cache::cache_manager::CacheManagerConfig;
    use datafusion::execution::runtime_env::RuntimeEnvBuilder;
    s3::register();
    let runtime = RuntimeEnvBuilder::new()
        .with_cache_manager(CacheManagerConfig::default().with_list_files_cache_limit(0))
        .build_arc()
        .expect("a runtime with default pools builds");
    let delta = deltalake::delta_datafusion::DeltaSessionContext::with_runtime_env(runtime).into_inner();
    let state = datafusion::execution::session_state::SessionStateBuilder::new_from_existing(delta.state())
        .with_query_planner(Arc::new(Planner))
        .build();
    let ctx = SessionContext::new_with_state(state);
    {
        let state = ctx.state_ref();
        let mut state = state.write();
        let options = state.config_mut().options_mut();
        for (key, value) in lakewriter_core::SQL_SETTINGS {
            options.set(key, value).expect("lakewriter's SQL settings are DataFusion settings");
        }
        // Where in the SQL a planning error is (its diagnostic's span): errors name the line and
        // column. Spans change no plan.
        options.sql_parser.collect_spans = true;
    }
    ctx
}

/// The session's query planner: DataFusion's, with delta-rs's extension nodes and the plans that
/// run on the session's engine ([`lakewriter_compute::engine::Distributed`]).
#[derive(Debug)]
struct Planner;

#[async_trait::async_trait]
impl datafusion::execution::context::QueryPlanner for Planner {
    async fn create_physical_plan(
        &self,
        plan: &datafusion::logical_expr::LogicalPlan,
        session: &dyn datafusion::catalog::Session,
    ) -> datafusion::error::Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        use datafusion::physical_planner::PhysicalPlanner;
        let planner = datafusion::physical_planner::DefaultPhysicalPlanner::with_extension_planners(vec![
            deltalake::delta_datafusion::planner::DeltaExtensionPlanner::new(),
            Arc::new(lakewriter_compute::engine::DistributedPlanner),
        ]);
        planner.create_physical_plan(plan, session).await
    }
}
