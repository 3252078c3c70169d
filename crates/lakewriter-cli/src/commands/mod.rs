//! Each subcommand in its own module: load, call the library, render through the [`Output`],
//! choose the exit code. This module builds the one runtime and maps errors to exit codes.

mod audit;
mod backfill;
mod demo;
mod digest;
mod engine;
mod graph;
mod init;
mod job_test;
mod lint;
mod maintain;
mod plan;
mod report;
mod reproduce;
mod run;
mod sql;
mod status;
mod verify;

use std::io::{self, IsTerminal};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use lakewriter::{PartitionReport, Runner, Summary, Workspace};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::MakeWriterExt as _;

use crate::cli::{Cli, Command, Global, LogFormat};
use crate::output::{self, Output, stderr};

/// Exit codes: 0 all good, 1 a partition or check failed, 2 usage or configuration error.
const FAILED: u8 = 1;
const USAGE: u8 = 2;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(&cli.global);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return report_error(&anyhow::Error::new(e).context("cannot start the async runtime")),
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(e) => report_error(&e),
    }
}

fn init_logging(global: &Global) {
    let default = match (global.quiet, global.verbose) {
        (true, _) => "lakewriter=error",
        // The CLI's own notes (`lakewriter::cli`, log lines only with --log-format json) show
        // as they do in text.
        (false, 0) => "lakewriter=warn,lakewriter::cli=info",
        (false, 1) => "warn,lakewriter=info",
        (false, 2) => "info,lakewriter=debug",
        (false, _) => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let ansi = global.color.enabled(io::stderr().is_terminal());
    // Span openings are logged too: delta-rs opens `commit_with_retries` once a write's data files
    // are written, before its log entry is put (a phase the crash tests kill at; ARCHITECTURE.md).
    // lakewriter's own are not: its `partition` span is of level WARN, so that the warnings of a
    // run carry it, and its opening is no warning.
    let writer = io::stderr
        .with_filter(|meta: &tracing::Metadata<'_>| !(meta.is_span() && meta.target().starts_with("lakewriter")));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_target(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::NEW);
    match global.log_format {
        LogFormat::Text => logs.with_ansi(ansi).init(),
        // Each line carries the spans it is in: a partition's `job`, `partition` and `run_id`.
        LogFormat::Json => logs.json().with_current_span(true).with_span_list(true).init(),
    }
    stderr::set_json_logs(global.log_format == LogFormat::Json);
}

/// Prints `error: …`, the cause chain and a hint; returns the exit code for the error's kind.
fn report_error(error: &anyhow::Error) -> ExitCode {
    if error.chain().any(|e| e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)) {
        return ExitCode::SUCCESS;
    }
    let lib = error.chain().find_map(|e| e.downcast_ref::<lakewriter::Error>());
    let hint = matches!(lib, Some(lakewriter::Error::ReadProject { .. } | lakewriter::Error::NoProject { .. }))
        .then_some("run `lakewriter init DIR` to start a project in DIR (or `lakewriter demo` for a sample one), or pass --project PATH");
    stderr::error_chain(error, hint);
    ExitCode::from(if lib.is_some_and(lakewriter::Error::is_usage) { USAGE } else { FAILED })
}

async fn dispatch(cli: Cli) -> Result<ExitCode> {
    let mut printer = output::printer(&cli.global);
    let printer = printer.as_mut();
    let global = &cli.global;
    match cli.command {
        Command::Run(args) => run::run(global, printer, args).await,
        Command::Backfill(args) => backfill::backfill(global, printer, args).await,
        Command::Graph => graph::graph(global, printer).await,
        Command::Audit(args) => audit::audit(global, printer, args).await,
        Command::Reproduce(args) => reproduce::reproduce(global, printer, args).await,
        Command::Status(args) => status::status(global, printer, args).await,
        Command::Plan(args) => plan::plan(global, printer, args).await,
        Command::Report(args) => report::report(global, printer, args).await,
        Command::Verify(args) => verify::verify(global, printer, args).await,
        Command::Lint(args) => lint::lint(global, printer, args).await,
        Command::Demo(args) => demo::demo(global, printer, args).await,
        Command::Digest(args) => digest::digest(global, printer, args).await,
        Command::Test(args) => job_test::test(global, printer, args).await,
        Command::Sql(args) => sql::sql(global, printer, args).await,
        Command::Init(args) => init::init(global, printer, &args.dir).await,
        Command::Completions(args) => init::completions(printer, args.shell),
        Command::Man(args) => init::man(printer, args.command.as_deref()),
        Command::Maintain(args) => maintain::maintain(global, printer, args).await,
        Command::Engine(command) => engine::engine(global, &command).await,
    }
}

async fn open_runner(global: &Global) -> Result<Runner> {
    let workspace = engine::chosen(global, Workspace::load(global.project.as_deref(), global.root.as_deref())?)?;
    let root = workspace.root.url().clone();
    Runner::open(workspace).await.with_context(|| format!("lakehouse root {root}"))
}

/// The runner of a `run` or `backfill`: in a dry run with `--dry-run`; emitting OpenLineage
/// events where asked to (never in a dry run). The caller closes its lineage
/// ([`Runner::close_lineage`]) once its runs are done.
async fn open_writer(
    global: &Global,
    dry_run: &crate::cli::DryRunArgs,
    lineage: &crate::cli::LineageArgs,
) -> Result<Runner> {
    let lineage = lineage_options(lineage)?;
    let runner = open_runner(global).await?;
    Ok(match (dry_run.dry_run, lineage) {
        (true, _) => runner.dry_run(dry_run.show),
        (false, Some(options)) => runner.with_lineage(lakewriter::Lineage::start(options)?),
        (false, None) => runner,
    })
}

/// The OpenLineage settings of `args` and the convention's environment variables; `None` where
/// no endpoint or file is given, or OPENLINEAGE_DISABLED is true.
fn lineage_options(args: &crate::cli::LineageArgs) -> Result<Option<lakewriter::LineageOptions>> {
    use lakewriter::{Error, ParentRun, Transport};
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if var("OPENLINEAGE_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    let transport = match (&args.openlineage_file, &args.openlineage_url) {
        (Some(file), _) => Transport::File(file.clone()),
        (None, Some(url)) if !url.trim().is_empty() => Transport::http(url, var("OPENLINEAGE_API_KEY"))?,
        _ => return Ok(None),
    };
    let parent = |name: &str| var(name).map(|v| v.parse::<ParentRun>().map_err(|e| format!("{name}: {e}"))).transpose();
    Ok(Some(lakewriter::LineageOptions {
        transport,
        namespace: var("OPENLINEAGE_NAMESPACE").unwrap_or_else(|| "default".to_owned()),
        parent: parent("OPENLINEAGE_PARENT_ID").map_err(Error::Usage)?,
        root: parent("OPENLINEAGE_ROOT_PARENT_ID").map_err(Error::Usage)?,
        timeout: std::time::Duration::from_secs(args.openlineage_timeout),
    }))
}

/// Prints the job's run and each failed partition's error on stderr (unless its line showed it on
/// the same terminal); exit 1 where a partition failed.
fn finish(printer: &mut dyn Output, reports: &[PartitionReport], summary: &Summary) -> Result<ExitCode> {
    printer.job_done(reports, summary)?;
    let errors = reports.iter().filter_map(|r| r.error.as_ref()).filter(|_| !printer.shows_errors());
    for error in errors {
        stderr::error(&error.to_string());
    }
    Ok(if summary.failed > 0 { ExitCode::from(FAILED) } else { ExitCode::SUCCESS })
}
