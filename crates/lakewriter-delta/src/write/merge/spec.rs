//! How a keyed source is merged ([`MergeSpec`]), and the merge's condition over the source (`s`)
//! and the target (`t`).

use datafusion::common::{Column, TableReference};
use datafusion::prelude::{Expr, lit};

/// How a keyed source is merged.
#[derive(Debug, Clone, Copy)]
pub struct MergeSpec<'a> {
    pub key: &'a [String],
    /// `Some`: newer-wins upsert (`merge`). `None`: insert unknown keys only (`append_dedup`).
    pub newer_by: Option<&'a str>,
    /// A matched row the source does not replace that it fills in: the condition over `s` and `t`,
    /// and the columns it sets from the source (columns added since the row was written).
    pub fill: Option<(&'a Expr, &'a [String])>,
    /// The target rows a source row may match (the partitions of the source's keys,
    /// `append_dedup`'s `dedup_window`), a condition over `t`: delta-rs prunes the files it scans
    /// by it. `None`: every row.
    pub scope: Option<&'a Expr>,
    /// What a target row of a source row's key must also meet to match it (`append_dedup`'s
    /// `dedup_window` over a column: within the window of the source row's value), a condition
    /// over `t` and `s`. `None`: the key alone.
    pub matches: Option<&'a Expr>,
    /// The source's tombstone column (`delete_when`'s `_deleted`), where it has one: a row whose
    /// flag is set is a delete, counted as one.
    pub tombstone: Option<&'a str>,
    /// The table's `cluster_by` columns: a table the merge creates has its rows sorted by them,
    /// so that each of its files holds a narrow range of them, and a merge in one scan writes its
    /// new keys sorted by them, in files of their own. (A file a merge writes again keeps its
    /// rows' order; delta-rs's MERGE writes its files as it streams them; `maintain` re-sorts
    /// both.)
    pub cluster_by: &'a [String],
    /// The `delta.targetFileSize` of a table the merge creates (delta-rs's default without it).
    pub target_file_size: Option<u64>,
}

/// The merge's condition: the key's columns equal (floating-point ones normalized, as the
/// source's keys were deduplicated: see `lakewriter_compute::floating`), in the scope's rows
/// where it has one, and what a match must meet besides.
pub(super) fn on(spec: &MergeSpec<'_>, source: &datafusion::arrow::datatypes::Schema) -> Expr {
    let side = |relation: &str, k: &str| match source.field_with_name(k) {
        Ok(field) => lakewriter_compute::floating::key(qualified(relation, k), field.data_type()),
        Err(_) => qualified(relation, k),
    };
    let on = spec.key.iter().map(|k| side("t", k).eq(side("s", k))).reduce(Expr::and).unwrap_or_else(|| lit(false));
    spec.scope.into_iter().chain(spec.matches).cloned().fold(on, Expr::and)
}

/// The column `name` of the relation `relation` (`s`, the source; `t`, the target).
pub(super) fn qualified(relation: &str, name: &str) -> Expr {
    Expr::Column(Column::new(Some(TableReference::bare(relation)), name))
}
