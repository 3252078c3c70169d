//! `lakewriter init [DIR]`: a new project; `completions SHELL` and `man`: the shell completion
//! script and the manual page, generated from the command-line definition.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use lakewriter::Workspace;

use crate::cli::{Cli, Global};
use crate::demo;
use crate::output::Output;

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
    let project = project_file.display();
    let day = demo::init_day();
    printer.say(&format!(
        "project  {project}\nraw      {}raw/orders/dt={day}/ (sample orders)\n\nnext: lakewriter --project {project} lint\n      lakewriter --project {project} test\n      lakewriter --project {project} run daily_orders --dt {day}",
        workspace.root.url()
    ))?;
    Ok(ExitCode::SUCCESS)
}

pub fn completions(printer: &mut dyn Output, shell: clap_complete::Shell) -> Result<ExitCode> {
    // Written to memory first: clap_complete panics where its writer fails (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "lakewriter", &mut script);
    printer.verbatim(&script)?;
    Ok(ExitCode::SUCCESS)
}

pub fn man(printer: &mut dyn Output) -> Result<ExitCode> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut page)?;
    printer.verbatim(&page)?;
    Ok(ExitCode::SUCCESS)
}
