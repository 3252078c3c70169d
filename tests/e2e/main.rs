//! End-to-end tests: each drives the real `lakewriter` binary against a fresh lakehouse in a
//! temporary folder, with raw data from `lakewriter-datagen`. One test binary, grouped by what a
//! test is about: `commands` (each command of the CLI), `jobs` (the project file, write modes,
//! statements, checks, values and types), `faults` (bad input, crashes, races, storage faults)
//! and `interop` (other readers, the protocol, S3, orchestrators); `docs_examples` runs the
//! console examples of the README and the guide; `newcomer` a first hour as the README tells it;
//! `support` is what they share.

// A test's notes on stderr are its captured output.
#![allow(clippy::print_stderr)]

mod support;

mod architecture;
mod commands;
mod docs_examples;
mod faults;
mod interop;
mod jobs;
mod matrix;
mod newcomer;
