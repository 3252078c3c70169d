//! The `lakewriter` command. All logic lives in the `lakewriter` library; this binary parses
//! arguments, builds the one tokio runtime, renders reports and maps outcomes to exit codes.

mod cli;
mod commands;
mod demo;
mod output;

fn main() -> std::process::ExitCode {
    commands::main()
}
