//! The engine a command's partitions run on (`--engine`, `LAKEWRITER_ENGINE`, the project's
//! `[engine] url`), and `lakewriter engine scheduler|executor`: the processes of a Ballista
//! cluster, in a build with the `ballista` feature.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use lakewriter::{Engine, Workspace};

use crate::cli::{EngineCommand, Global};

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
    let default = std::path::Path::new("lakewriter.toml");
    let options = match global.project.as_deref() {
        Some(path) => Workspace::load_without_root(Some(path))?.storage_options()?,
        None if default.exists() => Workspace::load_without_root(None)?.storage_options()?,
        None => std::collections::HashMap::new(),
    };
    match command {
        EngineCommand::Scheduler(args) => {
            eprintln!(
                "lakewriter engine scheduler: gRPC on {}, executors given up after {} s without a heartbeat; \
                 stops on SIGTERM or Ctrl-C",
                args.bind, args.executor_timeout
            );
            let timeout = std::time::Duration::from_secs(args.executor_timeout);
            process::scheduler(args.bind, timeout, options).await?;
        }
        EngineCommand::Executor(args) => {
            let bad = |m: &str| lakewriter::Error::Usage(format!("--scheduler {}: {m}", args.scheduler));
            let (host, port) = args.scheduler.rsplit_once(':').ok_or_else(|| bad("is HOST:PORT"))?;
            let port = port.parse().map_err(|_| bad("the port is not a number"))?;
            let work_dir = match &args.work_dir {
                Some(dir) => dir.clone(),
                None => std::env::temp_dir().join(format!("lakewriter-executor-{}", std::process::id())),
            };
            std::fs::create_dir_all(&work_dir)?;
            let slots =
                args.slots.map_or_else(|| std::thread::available_parallelism().map_or(1, usize::from), usize::from);
            let settings = process::ExecutorSettings {
                bind: args.bind,
                advertise: args.advertise.clone().unwrap_or_else(|| args.bind.ip().to_string()),
                grpc_port: args.grpc_port,
                scheduler: (host.to_owned(), port),
                slots,
                work_dir,
                heartbeat: std::time::Duration::from_secs(args.heartbeat),
                options,
            };
            eprintln!(
                "lakewriter engine executor: Arrow Flight on {}, gRPC on port {}, {} task slots, scheduler {}; \
                 stops on SIGTERM or Ctrl-C",
                settings.bind, settings.grpc_port, settings.slots, args.scheduler
            );
            process::executor(settings).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
