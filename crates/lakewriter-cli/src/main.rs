//! The `lakewriter` command. The logic lives in the `lakewriter` library; this binary parses
//! arguments, builds the one tokio runtime, renders reports, maps outcomes to exit codes, and
//! lays out the demo's sample project and raw data.

mod cli;
mod commands;
mod demo;
mod junit;
mod markup;
mod output;
mod panic;
mod pipes;
#[cfg(test)]
mod reference;
mod report;

fn main() -> std::process::ExitCode {
    panic::install();
    commands::main()
}
