//! What a write plans and reads with: the command's DataFusion session (the lakehouse's catalog
//! registered in it) and the Delta tables its writes loaded. The runner lends it to each attempt
//! of a write mode ([`crate::write::Attempt`]) and to `lakewriter sql`'s statements, which reach
//! nothing else of the runner's.

use datafusion::prelude::SessionContext;
use lakewriter_delta::table::LoadedTables;

/// The session and the loaded tables of one command.
#[derive(Clone, Copy)]
pub(crate) struct Lakehouse<'a> {
    pub ctx: &'a SessionContext,
    pub loaded: &'a LoadedTables,
}
