//! lakewriter-engine: lakewriter on Apache DataFusion Ballista, built with the CLI's `ballista`
//! feature.
//!
//! - [`Ballista`]: the client side, an [`Engine`](lakewriter_compute::engine::Engine) that sends
//!   a physical plan planned in lakewriter's session to a Ballista scheduler (`df://HOST:PORT`)
//!   and streams back its result;
//! - [`codec`]: how lakewriter's own plan nodes travel in a plan (the writing of a table's data
//!   files, the guards of a NOT NULL column and of a column's dates), beside Ballista's;
//! - [`stores`]: the object stores of the scheduler and executors, made from the project's
//!   `[storage]` options as the CLI makes them;
//! - [`process`]: the scheduler and executor processes (`lakewriter engine scheduler|executor`).

pub mod codec;
pub mod process;
pub mod stores;

mod client;

pub use client::{Ballista, Error};
