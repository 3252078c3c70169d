//! Each command of the CLI, by its name: what it prints (text and `--json`), its exit codes and
//! what it leaves in the lakehouse.

mod cli_errors;
mod demo;
mod digest;
mod dry_run;
mod events_schema;
mod init;
mod job_tests;
mod job_tests_exact;
mod job_tests_expect;
mod job_tests_io;
mod job_tests_modes;
mod lineage;
mod lint;
mod log_format;
mod maintain;
mod output;
mod overview;
mod pipeline;
mod project_discovery;
mod report;
mod reports;
mod reproduce;
mod sql;
mod sql_catalog;
mod sql_errors;
mod sql_values;
mod state;
