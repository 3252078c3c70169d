//! A keyed write into an existing table in one scan of it, committed over lakewriter's file list
//! ([`crate::files`]) as lakewriter's own commit ([`super::super::own`]).
//!
//! The source (one row per key) is held in memory, its keys in a hash table. The files its keys
//! can be in — pruned by the write's scope and the source's smallest and greatest key, against
//! each file's partition values and statistics ([`crate::prune`]) — are read one by one, a few at
//! once, each row looked up by its key: the same pass classifies every source row (inserted,
//! updated, deleted, unchanged) and finds the files a change falls in. Each such file is written
//! again with its changed rows replaced (copy-on-write, as Delta's MERGE does); a file without a
//! change is left as it is; the source's new keys are written as new files, sorted by the table's
//! `cluster_by` where it has one. A write that can change no existing row (an `append_dedup`)
//! reads only the key and scope columns.
//!
//! Each file in flight is scanned in a task of its own and written again by a writer of its own
//! (one file in, its own files out) in a second task, fed as the scan goes: decoding and encoding
//! use every core, whether a merge rewrites one file or many.
//!
//! Here the write's course and its commit; the source held in memory is in `source`, the files to
//! read in `prune`, one file's scan in `file_scan`, the plan and the writes in `rewrite`.
//!
//! Memory: the source, and for each file in flight its rows read before the first change that
//! falls in it (held until then, as delta-rs's MERGE holds a file) and its writer's row group.

use std::sync::Arc;

use datafusion::execution::SessionState;
use datafusion::prelude::DataFrame;
use lakewriter_core::Phase;
use serde_json::json;

use super::rewrite::{Plan, RowCounts};
use super::spec::MergeSpec;
use crate::Result;
use crate::files::FileList;
use crate::state::Committed;
use crate::write::commit::finish;
use crate::write::own;
use crate::write::target::Target;

/// A keyed write made in one scan: its counts, and its commit (`None`: the source changes no
/// row, and nothing was written).
#[derive(Debug, Clone, Copy)]
pub struct Scanned {
    pub counts: RowCounts,
    pub committed: Option<Committed>,
}

/// Merges `source` into the table `list` describes (at `target.read_version`) in one scan, and
/// commits the result as the next version or not at all: the write is never rebased (its
/// classification read this version), so a commit that won that version fails it as a conflict.
/// Nothing is committed before every file is written; a failure leaves unreferenced files at
/// most (`VACUUM` removes them).
pub(super) async fn merge(
    session: &SessionState,
    target: &Target<'_>,
    source: DataFrame,
    spec: &MergeSpec<'_>,
    list: Arc<FileList>,
) -> Result<Scanned> {
    crate::phase(Phase::Writing, target.name, &target.metadata.partition);
    let started = std::time::Instant::now();
    let operation_id = uuid::Uuid::new_v4();
    let planned = Plan::new(session, target, source, spec, &list).await;
    let written = match planned {
        Ok(plan) => plan.write(target, &list, spec.cluster_by, operation_id).await.map(|written| (plan, written)),
        Err(error) => Err(error),
    };
    let (plan, written) = match written {
        Ok(written) => written,
        // As every write's failure: looked for in the log by run id, which tells a store that
        // cannot be read (whether it committed is unknown) from one that holds no such commit.
        Err(error) => {
            let found = finish(target, Some(list.version), Err(error)).await?;
            return Ok(Scanned { counts: RowCounts::default(), committed: Some(found) });
        }
    };
    let counts = plan.counts(&written.flags);
    if written.adds.is_empty() && written.removes.is_empty() {
        return Ok(Scanned { counts, committed: None });
    }
    let scanned = plan.candidates.len();
    let metrics = json!({
        "num_source_rows": plan.shared.source.batch.num_rows(),
        "num_target_rows_inserted": written.inserted,
        "num_target_rows_updated": written.changed,
        "num_target_rows_deleted": 0,
        "num_target_rows_copied": written.copied,
        "num_output_rows": written.inserted + written.changed + written.copied,
        "num_target_files_scanned": scanned,
        "num_target_files_skipped_during_scan": list.files().count() - scanned,
        "num_target_files_added": written.adds.len(),
        "num_target_files_removed": written.removes.len(),
        "execution_time_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    let updates = spec.newer_by.is_some() || spec.fill.is_some();
    let parameters = json!({
        "mergePredicate": super::spec::on(spec, &plan.shared.source.batch.schema()).to_string(),
        "matchedPredicates": if updates { r#"[{"actionType":"update"}]"# } else { "[]" },
        "notMatchedPredicates": r#"[{"actionType":"insert"}]"#,
        "notMatchedBySourcePredicates": "[]",
    });
    let never_rebased = |_: &[u8]| Some("committed first (a keyed write is never rebased)");
    let files = (written.adds.as_slice(), written.removes.as_slice());
    let committed = own::commit(target, &list, ("MERGE", parameters), files, &metrics, never_rebased, operation_id);
    Ok(Scanned { counts, committed: Some(committed.await?) })
}
