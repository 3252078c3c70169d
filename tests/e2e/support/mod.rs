//! What every e2e test stands on: a lakehouse in a temporary folder ([`Lake`]), its project file
//! built from typed parts ([`Project`]), typed views of the binary's output ([`Run`], [`status`],
//! [`plan`], [`logs`]), the independent reader ([`reader`]) and computation ([`duckdb`]), the S3 test server ([`s3`]) and its fault proxy
//! ([`fault_proxy`]), pausing a run at a phase ([`pause`]), the counted trials of the fault
//! scenarios ([`figures`]), and the fixtures several scenario files share. Scenario files import
//! from here, never from each other.

pub mod checks;
mod data;
pub mod duckdb;
#[cfg(feature = "ballista")]
pub mod engine;
pub mod fault_proxy;
pub mod figures;
pub mod job_test;
mod lake;
pub mod logs;
pub mod maintain;
pub mod modes;
mod output;
pub mod pause;
pub mod pipeline;
pub mod place;
pub mod plan;
mod project;
pub mod reader;
pub mod s3;
pub mod sql;
pub mod status;

pub use data::*;
pub use lake::*;
pub use logs::{LogLine, log_lines};
pub use output::*;
pub use project::*;
pub use status::{PartitionStatus, Status, StatusSummary};
