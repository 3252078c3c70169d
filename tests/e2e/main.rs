//! End-to-end tests: each drives the real `lakewriter` binary against a fresh lakehouse in a
//! temporary folder, with raw data from `lakewriter-datagen`.

mod support;

mod bad_input;
mod cli_errors;
mod crash;
mod demo;
mod digest;
mod failures;
mod figures;
mod lint;
mod overwrite_partition;
mod project_file;
mod races;
mod raw;
mod s3;
mod schema_change;
mod state;
mod storage_faults;
mod types;
mod write_modes;
