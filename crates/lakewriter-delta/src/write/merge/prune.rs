//! What a keyed merge in one scan reads: the files its source's keys can be in, pruned by the
//! write's scope and the range of the source's keys against each file's partition values and
//! statistics ([`crate::prune`]), in the order of their smallest key; and, where no row can
//! change, only the key's and the scope's columns.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::execution::SessionState;
use datafusion::functions_aggregate::min_max::{MaxAccumulator, MinAccumulator};
use datafusion::logical_expr::Accumulator;
use datafusion::prelude::{Expr, lit};

use super::source::Source;
use super::spec::MergeSpec;
use crate::files::{FileList, Live};

/// The columns a write that changes no existing row reads: its key's and its scope's, in the
/// layout's order.
pub(super) fn narrow(layout: &SchemaRef, spec: &MergeSpec<'_>) -> SchemaRef {
    let scoped: Vec<String> = spec
        .scope
        .into_iter()
        .chain(spec.matches)
        .flat_map(|e| e.column_refs().into_iter().filter(|c| c.relation.as_ref().is_none_or(|r| r.table() == "t")))
        .map(|c| c.name.clone())
        .collect();
    let fields: Vec<_> =
        layout.fields().iter().filter(|f| spec.key.contains(f.name()) || scoped.contains(f.name())).cloned().collect();
    Arc::new(datafusion::arrow::datatypes::Schema::new(fields))
}

/// The files of `list` the source's keys can be in, in their order (see `Plan::candidates`):
/// those the write's scope and the range of each key column among the source's keys (its
/// smallest to its greatest, for the types whose statistics are true bounds) can hold, by their
/// partition values and statistics. None where the source has no row.
pub(super) fn candidates(
    session: &SessionState,
    list: &FileList,
    layout: &SchemaRef,
    spec: &MergeSpec<'_>,
    source: &Source,
) -> datafusion::error::Result<Vec<(String, Live)>> {
    if source.batch.num_rows() == 0 {
        return Ok(Vec::new());
    }
    let mut filters: Vec<Expr> = spec.scope.cloned().into_iter().collect();
    for name in spec.key {
        let field = layout.field_with_name(name)?;
        let data_type = field.data_type();
        if !(data_type.is_integer() || crate::values::is_text(data_type) || *data_type == DataType::Date32) {
            continue;
        }
        let values = source.batch.column(layout.index_of(name)?);
        let (mut min, mut max) = (MinAccumulator::try_new(data_type)?, MaxAccumulator::try_new(data_type)?);
        min.update_batch(std::slice::from_ref(values))?;
        max.update_batch(std::slice::from_ref(values))?;
        let column = Expr::Column(datafusion::common::Column::new(Some("t"), name.as_str()));
        filters.push(column.between(lit(min.evaluate()?), lit(max.evaluate()?)));
    }
    let files: Vec<(&String, &Live)> = list.files().collect();
    let mut files = match filters.into_iter().reduce(Expr::and) {
        Some(filter) => {
            let over_t = DFSchema::try_from_qualified_schema("t", layout)?;
            let predicate = session.create_physical_expr(filter, &over_t)?;
            crate::prune::matching(files, layout, &list.shape.partition_columns, predicate)
        }
        None => files,
    };
    let first = spec
        .key
        .first()
        .and_then(|k| layout.field_with_name(k).ok())
        .map(|f| (f.name().clone(), f.data_type().clone()));
    let smallest = |live: &Live| {
        let (name, data_type) = first.as_ref()?;
        crate::ranges::range(live.stats.as_deref()?, name, data_type).map(|(min, _)| min)
    };
    let mut keyed: Vec<(Option<ScalarValue>, &String, &Live)> =
        files.drain(..).map(|(p, l)| (smallest(l), p, l)).collect();
    keyed.sort_by(|a, b| match (&a.0, &b.0) {
        (Some(x), Some(y)) => crate::ranges::order(x, y).then_with(|| a.1.cmp(b.1)),
        (x, y) => y.is_none().cmp(&x.is_none()).then_with(|| a.1.cmp(b.1)),
    });
    Ok(keyed.into_iter().map(|(_, path, live)| (path.clone(), live.clone())).collect())
}
