//! Other systems: Delta readers of lakewriter's tables, the Delta protocol it writes, S3, the
//! orchestrators that drive it, and Apache Spark, whose answers the `spark` dialect gives.

#[cfg(feature = "ballista")]
mod engine;
#[cfg(feature = "ballista")]
mod engine_ports;
mod orchestrators;
mod protocol;
mod readers;
mod s3;
mod spark;
