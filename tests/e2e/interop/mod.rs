//! Other systems: Delta readers of lakewriter's tables, the Delta protocol it writes, S3 and the
//! orchestrators that drive it.

#[cfg(feature = "ballista")]
mod engine;
mod orchestrators;
mod protocol;
mod readers;
mod s3;
