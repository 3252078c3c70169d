//! What a job writes: the project file, each write mode and jobs written as statements, data
//! checks, and values, names and types as a Spark user expects them.

mod checks;
mod checks_modes;
mod clustered;
mod column_names;
mod dates;
mod dedup_window;
mod delete_insert_nulls;
mod float_keys;
mod lacking;
mod merge_scan;
mod merge_scope;
mod missing_input;
mod nullability;
mod overwrite_partition;
mod partition_values;
mod project_file;
mod raw;
mod rebuild_cost;
mod schema_changes;
mod schema_guidance;
mod schema_merges;
mod schema_statements;
mod spark_semantics;
mod sql_jobs;
mod statement_rules;
mod time_zone;
mod types;
mod values;
mod write_modes;
