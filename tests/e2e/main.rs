//! End-to-end tests: each drives the real `lakewriter` binary against a fresh lakehouse in a
//! temporary folder, with raw data from `lakewriter-datagen`. One test binary, grouped by what a
//! test is about: `commands` (each command of the CLI), `jobs` (the project file, write modes,
//! statements, checks, values and types), `faults` (bad input, crashes, races, storage faults)
//! and `interop` (other readers, the protocol, S3, orchestrators); `docs_examples` runs the
//! console examples of the README and the guide; `support` is what they share.

mod support;

mod commands;
mod docs_examples;
mod faults;
mod interop;
mod jobs;
mod matrix;
