//! `lakewriter reproduce (JOB… | --all) [--from D1 --to D2] --into ROOT2`: the jobs' tables rebuilt
//! from the raw layer under another root, in dependency order.

use std::process::ExitCode;

use anyhow::Result;
use lakewriter::{Only, Runner};

use crate::cli::{Global, ReproduceArgs};
use crate::output::Printer;

pub async fn reproduce(global: &Global, printer: &mut Printer, args: ReproduceArgs) -> Result<ExitCode> {
    let range = super::optional_range(&args.jobs)?;
    let live = super::open_runner(global).await?;
    let into = live.workspace().with_root(&args.into, "--into")?;
    apart(live.workspace().root.url().as_str(), into.root.url().as_str())?;
    let graph = live.graph()?;
    let selected: Vec<&str> = args.jobs.names.iter().map(String::as_str).collect();
    for name in &selected {
        live.workspace().job(name)?;
    }
    let plan = live.reproduction(&graph, &selected, range).await?;
    printer.say(&format!(
        "reproducing into {} from the raw layer of {}",
        into.root.url(),
        live.workspace().root.url()
    ))?;
    let runner = Runner::open_with_inputs(into, live.workspace().root.clone()).await?;
    let jobs: Vec<_> = plan.iter().map(|r| (r.job, r.range)).collect();
    let parallel = args.parallel.map(usize::from);
    super::backfill::pipeline(&runner, printer, &jobs, (Only::All, None), parallel).await
}

/// Refuses a reproduction root that is the project's root, or inside it, or holds it: the
/// reproduction would write into the live lakehouse, or be read as part of it. Roots are compared
/// as resolved: `..` removed, a local path through its symbolic links, `s3a://` as `s3://`.
fn apart(live: &str, into: &str) -> Result<()> {
    let (a, b) = (resolved(live), resolved(into));
    if a.starts_with(&b) || b.starts_with(&a) {
        return Err(lakewriter::Error::Usage(format!(
            "--into {into}: the reproduction's root must be apart from the project's root {live} (neither inside the other)"
        ))
        .into());
    }
    Ok(())
}

/// A root URL's scheme and path segments, resolved (see [`apart`]).
fn resolved(root: &str) -> Vec<String> {
    // `.` and `..` segments are resolved already (`lakewriter_core::root_url`).
    let (scheme, rest) = root.split_once("://").unwrap_or(("", root));
    let scheme = if scheme == "s3a" { "s3" } else { scheme };
    let mut path = std::path::PathBuf::from(rest);
    if scheme == "file" {
        // The nearest folder that exists, through its links, then the rest as written.
        let existing = path.ancestors().find(|a| a.exists()).map(std::path::Path::to_path_buf);
        if let Some((real, tail)) =
            existing.and_then(|a| Some((a.canonicalize().ok()?, path.strip_prefix(&a).ok()?.to_path_buf())))
        {
            path = real.join(tail);
        }
    }
    std::iter::once(scheme.to_owned())
        .chain(path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()))
        .filter(|c| !c.is_empty() && c != "/")
        .collect()
}
