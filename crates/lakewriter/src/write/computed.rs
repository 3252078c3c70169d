//! What passes between an attempt's steps: the result its mode computed, and the rows its write
//! replaces.

use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, SessionContext};
use lakewriter_compute::{KeyedSource, Materialized};

use crate::error::result_err;

/// The rows a mode's write replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replaces {
    /// None: it adds rows, or changes them by key.
    Nothing,
    /// A slice of the table: [`super::Mode::slice`].
    Slice,
    /// The whole table, its columns included.
    Table,
}

/// A partition's computed result.
pub(crate) enum Computed {
    /// Not held: streamed into the write (a job without checks, outside a dry run).
    Streamed(LogicalPlan),
    /// Computed once and held, to be checked and compared, then written.
    Held(Materialized),
    /// A `merge` or `append_dedup` source, validated and deduplicated (always held).
    Keyed(KeyedSource),
}

impl Computed {
    /// The rows held, where they are.
    pub(super) fn held(&self) -> Option<Materialized> {
        match self {
            Self::Streamed(_) => None,
            Self::Held(held) => Some(held.clone()),
            Self::Keyed(source) => Some(source.held.clone()),
        }
    }

    /// The result's rows: read back where they are held, computed where they are streamed.
    pub(crate) fn dataframe(self, ctx: &SessionContext) -> Result<DataFrame, lakewriter_compute::Error> {
        match self {
            Self::Streamed(plan) => Ok(DataFrame::new(ctx.state(), plan)),
            Self::Held(held) => held.dataframe(ctx).map_err(result_err),
            Self::Keyed(source) => source.dataframe(ctx),
        }
    }
}
