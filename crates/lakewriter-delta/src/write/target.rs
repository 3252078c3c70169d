//! The table a strategy writes ([`Target`]), and the check of a result's columns against that
//! table's.

use deltalake::DeltaTable;
use lakewriter_storage::Location;

use crate::state::CommitMetadata;
use crate::{Error, Result};

/// The table a strategy writes.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub location: &'a Location,
    /// The table's name, for messages.
    pub name: &'a str,
    /// The partition columns of a table this write creates (a rebuild: of the table it leaves).
    pub partition_columns: &'a [String],
    /// The columns the job declares NOT NULL (`not_null`): NOT NULL in a table this write creates,
    /// every other column nullable; a NULL in one fails the write, naming it.
    pub not_null: &'a [String],
    pub metadata: &'a CommitMetadata,
    /// The table version the run read before it planned (see [`crate::state::latest_version`]);
    /// `None` where there was no table. The write reads the table as of this version and commits
    /// over it: Delta's conflict checks then cover every commit made since the run read its
    /// inputs — a concurrent writer of the same partition, which may have read newer raw files,
    /// fails this commit as a conflict instead of being overwritten by an older result. A table
    /// created since a run read none is such a commit too.
    pub read_version: Option<u64>,
    /// The tables this command's writes loaded before: a write brings one forward instead of
    /// reading the table's log again.
    pub loaded: &'a crate::table::LoadedTables,
    /// The write adds the result's columns the table lacks (`on_schema_change`; the result was
    /// laid out by [`crate::schema::lay_out`]): at the end of the schema, nullable, in the
    /// commit of its rows. Otherwise a column the table lacks fails the write.
    pub adds_columns: bool,
}

/// Refuses a result whose columns differ from the table's, but for the columns it adds where
/// `target` [adds columns](Target::adds_columns). Returns whether it adds any.
pub(super) fn check_schema(
    table: &DeltaTable,
    result: &datafusion::arrow::datatypes::Schema,
    target: &Target<'_>,
) -> Result<bool> {
    let Ok(state) = table.snapshot() else { return Ok(false) };
    check_columns(&state.snapshot().arrow_schema(), result, target)
}

/// [`check_schema`] against the table's columns `table`.
pub(super) fn check_columns(
    table: &datafusion::arrow::datatypes::Schema,
    result: &datafusion::arrow::datatypes::Schema,
    target: &Target<'_>,
) -> Result<bool> {
    let (added, refused): (Vec<_>, Vec<_>) = crate::schema::column_differences(table, result)
        .into_iter()
        .partition(|d| target.adds_columns && matches!(d, crate::schema::Difference::Extra { .. }));
    if !refused.is_empty() {
        let differences = refused.iter().map(ToString::to_string).collect();
        return Err(Error::SchemaMismatch { table: target.name.to_owned(), differences });
    }
    Ok(!added.is_empty())
}
