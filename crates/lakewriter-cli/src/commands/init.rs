//! `lakewriter init [DIR]`: a new project; `completions SHELL` and `man`: the shell completion
//! script and the manual pages, generated from the command-line definition.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use lakewriter::Workspace;

use crate::cli::{Cli, Global};
use crate::demo;
use crate::output::{InitWritten, Output};

pub async fn init(global: &Global, printer: &mut dyn Output, dir: &Path) -> Result<ExitCode> {
    let project_file = dir.join(lakewriter::PROJECT_FILE);
    if project_file.exists() {
        bail!(lakewriter::Error::Usage(format!(
            "{} exists: init never overwrites a project file",
            project_file.display()
        )));
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(&project_file, demo::INIT_TOML)
        .with_context(|| format!("cannot write {}", project_file.display()))?;
    let workspace = Workspace::load(Some(&project_file), global.root.as_deref())?;
    demo::write_init_raw(&workspace).await?;
    let days = demo::init_days();
    printer.init_written(&InitWritten {
        project: project_file.display().to_string(),
        raw: format!("{}raw/orders/", workspace.root.url()),
        from: days.from(),
        to: days.to(),
    })?;
    Ok(ExitCode::SUCCESS)
}

pub fn completions(printer: &mut dyn Output, shell: clap_complete::Shell) -> Result<ExitCode> {
    // Written to memory first: clap_complete panics where its writer fails (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "lakewriter", &mut script);
    printer.verbatim(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// lakewriter(1), or the page of `command`, lakewriter-COMMAND(1), which lakewriter(1) names.
pub fn man(printer: &mut dyn Output, command: Option<&str>) -> Result<ExitCode> {
    let mut page_of = Cli::command();
    // `engine-scheduler`: the page of `lakewriter engine scheduler`, which lakewriter-engine(1) names.
    for (depth, name) in command.into_iter().flat_map(|c| c.split('-')).enumerate() {
        let Some(sub) = page_of.find_subcommand(name) else {
            let names: Vec<&str> = page_of.get_subcommands().map(clap::Command::get_name).collect();
            bail!(lakewriter::Error::Usage(format!("no command `{name}`; commands: {}", names.join(", "))));
        };
        let path = command.unwrap_or_default().split('-').take(depth + 1).collect::<Vec<_>>();
        // Names for the page: the command ends with the process (clap keeps a name as `&'static str`).
        let name: &'static str = format!("lakewriter-{}", path.join("-")).leak();
        page_of = sub.clone().name(name).bin_name(format!("lakewriter {}", path.join(" ")));
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(page_of).render(&mut page)?;
    printer.verbatim(&page)?;
    Ok(ExitCode::SUCCESS)
}
