//! Commits without data files: the partition state alone ([`record_state`]), with the columns a
//! result adds, and the metadata action of a schema change (also `drop`'s).

use std::sync::Arc;

use deltalake::DeltaTable;
use deltalake::protocol::SaveMode;

use super::commit::{Landed, finish, properties_over, write_error};
use super::own;
use super::target::{Target, check_columns, check_schema};
use crate::state::Committed;
use crate::{Error, Result};

/// Records the partition state of `target.metadata` in a commit without data: for a run whose
/// write changes no row (a `merge` with nothing new) but whose code or inputs differ from what the
/// table recorded. The commit is made over `target.read_version`, the version the run found
/// nothing to change in, and not rebased, so any commit since then fails this one as a conflict
/// and the run is made again. A result with columns the table lacks, where the target
/// [adds columns](Target::adds_columns), adds them in this commit (a metadata action).
///
/// Where the table asks for nothing lakewriter's own commits do not check and the result adds no
/// column, the commit is lakewriter's own over the kept file list ([`own::commit`]), without
/// loading delta-rs's snapshot.
pub async fn record_state(target: Target<'_>, result: &datafusion::arrow::datatypes::Schema) -> Result<Committed> {
    let url = target.location.url();
    let open_err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let Some(read_version) = target.read_version else { return Err(Error::NotATable { url: url.clone() }) };
    let list = target.loaded.list_at(target.location, read_version).await?;
    if !list.guarded && list.unsupported.is_empty() && !check_columns(&list.shape.schema, result, &target)? {
        let never_rebased = |_: &[u8]| Some("committed first (a commit of the partition state alone is never rebased)");
        let operation = ("WRITE", serde_json::json!({ "mode": "Append" }));
        let metrics = serde_json::json!({});
        return own::commit(&target, &list, operation, (&[], &[]), &metrics, never_rebased, uuid::Uuid::new_v4()).await;
    }
    let (table, _) = target.loaded.table_at(target.location, read_version).await?;
    crate::protocol::check(&table, target.name)?;
    let adds = check_schema(&table, result, &target)?;
    let props = properties_over(&target, Some(&table), Some(result.fields().len())).await?.with_max_retries(0);
    let snapshot = table.snapshot().map_err(open_err)?;
    let actions = if adds { vec![added_columns(snapshot, result, target.name)?] } else { Vec::new() };
    commit_actions(&target, table, read_version, props, actions).await
}

/// Commits `actions` (no data files) over `table` at `read_version` with `props`, then
/// [`finish`]es: a commit of the partition state alone, or of a schema change.
pub(super) async fn commit_actions(
    target: &Target<'_>,
    mut table: DeltaTable,
    read_version: u64,
    props: deltalake::kernel::transaction::CommitProperties,
    actions: Vec<deltalake::kernel::Action>,
) -> Result<Committed> {
    use deltalake::kernel::transaction::CommitBuilder;
    use deltalake::protocol::DeltaOperation;
    let url = target.location.url();
    let open_err = |source| Error::Open { url: url.clone(), source: Box::new(source) };
    let snapshot = table.snapshot().map_err(open_err)?;
    let operation = DeltaOperation::Write { mode: SaveMode::Append, partition_by: None, predicate: None };
    let commit = CommitBuilder::from(props).with_actions(actions);
    let outcome = match commit.build(Some(snapshot), table.log_store(), operation).await {
        Ok(commit) => table.load_version(commit.version()).await.map(|()| Landed::Table(table)).map_err(open_err),
        Err(e) => Err(write_error(target, e)),
    };
    finish(target, Some(read_version), outcome).await
}

/// The metadata action that adds `result`'s columns the table of `snapshot` lacks at the end of
/// its schema, nullable (as Delta's schema merge adds them); the table's id, name and settings
/// stay.
fn added_columns(
    snapshot: &deltalake::table::state::DeltaTableState,
    result: &datafusion::arrow::datatypes::Schema,
    name: &str,
) -> Result<deltalake::kernel::Action> {
    let table = snapshot.snapshot().arrow_schema();
    let mut fields: Vec<_> = table.fields().iter().cloned().collect();
    for field in result.fields().iter().filter(|f| table.field_with_name(f.name()).is_err()) {
        fields.push(Arc::new(field.as_ref().clone().with_nullable(true)));
    }
    metadata_with(snapshot, fields, name)
}

/// The metadata action that gives the table of `snapshot` the columns `fields`; its id, name and
/// settings stay.
pub(super) fn metadata_with(
    snapshot: &deltalake::table::state::DeltaTableState,
    fields: Vec<datafusion::arrow::datatypes::FieldRef>,
    name: &str,
) -> Result<deltalake::kernel::Action> {
    use deltalake::kernel::MetadataExt;
    use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
    let invalid = |e: String| Error::SchemaMismatch { table: name.to_owned(), differences: vec![e] };
    let schema: deltalake::kernel::StructType =
        (&datafusion::arrow::datatypes::Schema::new(fields)).try_into_kernel().map_err(|e| invalid(e.to_string()))?;
    let metadata = snapshot.metadata().clone().with_schema(&schema).map_err(|e| invalid(e.to_string()))?;
    Ok(deltalake::kernel::Action::Metadata(metadata))
}
