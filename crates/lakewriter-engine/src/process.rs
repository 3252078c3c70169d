//! The cluster's processes, `lakewriter engine scheduler` and `lakewriter engine executor`:
//! Ballista's scheduler and executor with lakewriter's codec (see [`crate::codec`]) and object
//! stores (see [`crate::stores`]). Each binds where it is told (127.0.0.1 unless told otherwise),
//! logs where it listens, and stops on SIGTERM or Ctrl-C.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ballista_core::extension::SessionConfigExt;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::prelude::SessionConfig;

use crate::codec::Codec;
use crate::stores::Stores;

/// A failure of a scheduler or an executor process.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {message}")]
pub struct ProcessError {
    what: &'static str,
    message: String,
}

fn failed(what: &'static str) -> impl Fn(ballista_core::error::BallistaError) -> ProcessError {
    move |e| ProcessError { what, message: e.to_string() }
}

/// A runtime that reaches the project's stores (and spills under `temp`, where given).
fn runtime(stores: &Arc<Stores>, temp: Option<&PathBuf>) -> datafusion::error::Result<Arc<RuntimeEnv>> {
    let mut builder = RuntimeEnvBuilder::new().with_object_store_registry(Arc::clone(stores) as _);
    if let Some(temp) = temp {
        builder = builder.with_temp_file_path(temp);
    }
    builder.build_arc()
}

/// Runs a scheduler bound to `bind` until SIGTERM or Ctrl-C. An executor silent for
/// `executor_timeout` is given up: its running tasks are run on the others (Ballista's recovery of
/// a lost executor), or, with none left, their jobs fail. `options`: the project's `[storage]`
/// options, with which it lists the raw layer where a plan asks it to.
pub async fn scheduler<S: std::hash::BuildHasher>(
    bind: SocketAddr,
    executor_timeout: Duration,
    options: HashMap<String, String, S>,
    executors_changed: impl Fn(&[String]) + Send + 'static,
) -> Result<(), ProcessError> {
    let stores = Arc::new(Stores::new(options.into_iter().collect()));
    let codec = Arc::new(Codec::default());
    let config = SchedulerConfig {
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        external_host: bind.ip().to_string(),
        override_physical_codec: Some(codec),
        override_session_builder: Some(Arc::new(move |config: SessionConfig| {
            Ok(SessionStateBuilder::new()
                .with_default_features()
                .with_config(config)
                .with_runtime_env(runtime(&stores, None)?)
                .build())
        })),
        override_config_producer: Some(Arc::new(SessionConfig::new_with_ballista)),
        executor_timeout_seconds: executor_timeout.as_secs(),
        // Looked for at a sixth of the timeout: an executor lost is given up at most that late.
        expire_dead_executor_interval_seconds: (executor_timeout.as_secs() / 6).max(1),
        no_executors_grace_period_seconds: executor_timeout.as_secs(),
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config).await.map_err(failed("scheduler"))?;
    tracing::info!(%bind, "engine scheduler listening (gRPC)");
    tokio::spawn(watch_executors(cluster.clone(), executors_changed));
    let served = ballista_scheduler::scheduler_process::start_server(cluster, bind, Arc::new(config));
    tokio::select! {
        served = served => served.map_err(failed("scheduler")),
        () = terminated() => {
            tracing::info!("engine scheduler stopping");
            Ok(())
        }
    }
}

/// Calls `changed` with the executors alive (by id, sorted) each time they change: checked every
/// second, from the scheduler's heartbeats.
async fn watch_executors(cluster: BallistaCluster, changed: impl Fn(&[String])) {
    use ballista_core::serde::protobuf::executor_status::Status;
    let mut known: Option<Vec<String>> = None;
    let mut every = tokio::time::interval(Duration::from_secs(1));
    loop {
        every.tick().await;
        let mut alive: Vec<String> = cluster
            .cluster_state()
            .executor_heartbeats()
            .into_values()
            .filter(|h| matches!(h.status.as_ref().and_then(|s| s.status.as_ref()), Some(Status::Active(_))))
            .map(|h| h.executor_id)
            .collect();
        alive.sort();
        if known.as_ref() != Some(&alive) {
            changed(&alive);
            known = Some(alive);
        }
    }
}

/// Where an executor listens and what it reaches.
#[derive(Debug, Clone)]
pub struct ExecutorSettings {
    /// Its Arrow Flight service, from which others fetch the results of its tasks.
    pub bind: SocketAddr,
    /// The host name the scheduler and the other executors reach it by.
    pub advertise: String,
    /// Its gRPC service, through which the scheduler hands it tasks.
    pub grpc_port: u16,
    pub scheduler: (String, u16),
    /// Tasks run at once.
    pub slots: usize,
    /// Where it keeps the results of its tasks until they are fetched.
    pub work_dir: PathBuf,
    /// How often it tells the scheduler it is alive.
    pub heartbeat: Duration,
    /// The project's `[storage]` options.
    pub options: HashMap<String, String>,
}

/// Runs an executor until SIGTERM, Ctrl-C or the scheduler's stop request.
pub async fn executor(settings: ExecutorSettings) -> Result<(), ProcessError> {
    let ExecutorSettings { bind, advertise, grpc_port, scheduler, slots, work_dir, heartbeat, options } = settings;
    let stores = Arc::new(Stores::new(options));
    let executor_id = format!("{advertise}:{}", bind.port());
    lakewriter_delta::write::files_exec::name_writer(executor_id.clone());
    let temp = work_dir.clone();
    let config = ExecutorProcessConfig {
        executor_id,
        bind_host: bind.ip().to_string(),
        external_host: Some(advertise),
        port: bind.port(),
        grpc_port,
        scheduler_host: scheduler.0.clone(),
        scheduler_port: scheduler.1,
        vcores: slots,
        executor_heartbeat_interval_seconds: heartbeat.as_secs(),
        work_dir: Some(work_dir.to_string_lossy().into_owned()),
        override_physical_codec: Some(Arc::new(Codec::default())),
        override_config_producer: Some(Arc::new(SessionConfig::new_with_ballista)),
        override_runtime_producer: Some(Arc::new(move |_: &SessionConfig| runtime(&stores, Some(&temp)))),
        ..ExecutorProcessConfig::default()
    };
    tracing::info!(flight = %bind, grpc_port, scheduler = %format!("{}:{}", scheduler.0, scheduler.1), slots, "engine executor listening");
    start_executor_process(Arc::new(config)).await.map_err(failed("executor"))
}

/// Resolves on SIGTERM or Ctrl-C.
async fn terminated() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) else {
            return ctrl_c.await;
        };
        tokio::select! {
            () = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}
