//! The engine a command's partitions run on (`--engine`, `LAKEWRITER_ENGINE`, the project's
//! `[engine] url`), and `lakewriter engine scheduler|executor`: the processes of a Ballista
//! cluster, in a build with the `ballista` feature.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use lakewriter::{Engine, Workspace};

use crate::cli::{EngineCommand, Global};
#[cfg(feature = "ballista")]
use crate::output::stderr;

/// What a build without the `ballista` feature says to an engine other than `local`.
#[cfg(not(feature = "ballista"))]
const NOT_BUILT: &str = "this lakewriter was built without the `ballista` feature \
     (build it with `cargo build --release -p lakewriter-cli --features ballista`)";

/// `workspace` on the engine chosen for its partitions (`--engine`, else its `[engine] url`).
pub(super) fn chosen(global: &Global, workspace: Workspace) -> Result<Workspace> {
    let url = global.engine.as_deref().or(workspace.project.engine.as_deref()).map(str::trim);
    let engine = match url {
        None | Some("local") => None,
        Some(url) => remote(url)?,
    };
    Ok(workspace.on_engine(engine))
}

#[cfg(feature = "ballista")]
fn remote(url: &str) -> Result<Option<Arc<dyn Engine>>> {
    let engine = lakewriter_engine::Ballista::new(url).map_err(|e| lakewriter::Error::Usage(e.to_string()))?;
    Ok(Some(Arc::new(engine)))
}

#[cfg(not(feature = "ballista"))]
fn remote(url: &str) -> Result<Option<Arc<dyn Engine>>> {
    Err(lakewriter::Error::Usage(format!("engine `{url}`: {NOT_BUILT}")).into())
}

#[cfg(not(feature = "ballista"))]
#[expect(clippy::unused_async, reason = "the signature of the build with the feature")]
pub(super) async fn engine(_global: &Global, _command: &EngineCommand) -> Result<ExitCode> {
    Err(lakewriter::Error::Usage(format!("lakewriter engine: {NOT_BUILT}")).into())
}

#[cfg(feature = "ballista")]
pub(super) async fn engine(global: &Global, command: &EngineCommand) -> Result<ExitCode> {
    use lakewriter_engine::process;
    // The project's `[storage]` options, where there is a project file.
    let options = match Workspace::load_without_root(global.project.as_deref()) {
        Ok(workspace) => workspace.storage_options()?,
        Err(lakewriter::Error::NoProject { .. }) => std::collections::HashMap::new(),
        Err(e) => return Err(e.into()),
    };
    match command {
        EngineCommand::Scheduler(args) => {
            free(args.bind, "--bind")?;
            stderr::line(&format!(
                "lakewriter engine scheduler: gRPC on {}, executors given up after {} s without a heartbeat; \
                 stops on SIGTERM or Ctrl-C",
                args.bind, args.executor_timeout
            ));
            let timeout = std::time::Duration::from_secs(args.executor_timeout);
            let executors = |alive: &[String]| {
                let listed = if alive.is_empty() { String::new() } else { format!(": {}", alive.join(", ")) };
                stderr::line(&format!(
                    "lakewriter engine scheduler: {} registered{listed}",
                    plural(alive.len(), "executor")
                ));
            };
            process::scheduler(args.bind, timeout, options, executors).await?;
        }
        EngineCommand::Executor(args) => {
            let settings = executor_settings(args, options)?;
            stderr::line(&format!(
                "lakewriter engine executor: Arrow Flight on {}, gRPC on port {}, {} task slots, scheduler {}; \
                 stops on SIGTERM or Ctrl-C",
                settings.bind, settings.grpc_port, settings.slots, args.scheduler
            ));
            process::executor(settings).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// An executor's settings from its arguments: its ports checked free (its gRPC port, unless given,
/// the one above its --bind port, so that executors given their own --bind on one machine do not
/// share a default), its work folder made.
#[cfg(feature = "ballista")]
fn executor_settings(
    args: &crate::cli::ExecutorArgs,
    options: std::collections::HashMap<String, String>,
) -> Result<lakewriter_engine::process::ExecutorSettings> {
    let bad = |m: &str| lakewriter::Error::Usage(format!("--scheduler {}: {m}", args.scheduler));
    let (host, port) = args.scheduler.rsplit_once(':').ok_or_else(|| bad("is HOST:PORT"))?;
    let port = port.parse().map_err(|_| bad("the port is not a number"))?;
    let slots = args.slots.map_or_else(|| std::thread::available_parallelism().map_or(1, usize::from), usize::from);
    let grpc_port = match args.grpc_port {
        Some(port) => port,
        None => args.bind.port().checked_add(1).ok_or_else(|| {
            lakewriter::Error::Usage(format!("--bind {}: no port above it for gRPC; give --grpc-port", args.bind))
        })?,
    };
    free(args.bind, "--bind")?;
    free(std::net::SocketAddr::new(args.bind.ip(), grpc_port), "--grpc-port")?;
    let work_dir = match &args.work_dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("lakewriter-executor-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work_dir)?;
    Ok(lakewriter_engine::process::ExecutorSettings {
        bind: args.bind,
        advertise: args.advertise.clone().unwrap_or_else(|| args.bind.ip().to_string()),
        grpc_port,
        scheduler: (host.to_owned(), port),
        slots,
        work_dir,
        heartbeat: std::time::Duration::from_secs(args.heartbeat),
        options,
    })
}

/// Refuses (a usage error) an address another process listens on, naming the flag that gave it:
/// a server that fails to bind later would leave the process running without it.
#[cfg(feature = "ballista")]
fn free(address: std::net::SocketAddr, flag: &str) -> Result<()> {
    match std::net::TcpListener::bind(address) {
        Ok(_) => Ok(()),
        Err(e) => Err(lakewriter::Error::Usage(format!(
            "{flag}: cannot listen on {address}: {e} (is another executor or scheduler there? give another port with {flag})"
        ))
        .into()),
    }
}

#[cfg(feature = "ballista")]
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
