//! End-to-end tests: each drives the real `lakewriter` binary against a fresh lakehouse in a
//! temporary folder, with raw data from `lakewriter-datagen`.

mod support;

mod bad_input;
mod checks;
mod checks_modes;
mod cli_errors;
mod column_names;
mod concurrent;
mod crash;
mod demo;
mod digest;
mod dry_run;
mod events_schema;
mod failures;
mod fault_proxy;
mod figures;
mod init;
mod interop;
mod lint;
mod local_faults;
mod log_format;
mod maintain;
mod maintain_races;
mod nullability;
mod orchestrators;
mod overwrite_partition;
mod pause;
mod pipeline;
mod project_file;
mod protocol;
mod races;
mod raw;
mod reader;
mod reports;
mod reproduce;
mod s3;
mod schema_change;
mod sql;
mod sql_errors;
mod sql_jobs;
mod state;
mod storage_faults;
mod types;
mod values;
mod write_modes;
