//! `merge` and `append_dedup`: the result is a keyed source — validated, deduplicated (per key
//! the newest row wins) — classified against the table row by row, then merged on its key. A
//! source that changes no row commits at most the partition's new state.

use datafusion::prelude::DataFrame;
use lakewriter_compute::{KeyedCounts, KeyedSource, KeyedSpec, keyed};
use lakewriter_core::DedupWindow;
use lakewriter_core::{CheckKind, JobSpec, OnDuplicateKeys, Semantics, WriteMode};
use lakewriter_delta::schema::Difference;
use lakewriter_delta::{Committed, MergeSpec, Target};

use super::{Attempt, Computed, Mode};
use crate::{Changes, DryRun, Note, PartitionReport, RunError};
use scope::Scope;

mod scope;

#[derive(Debug)]
pub(crate) struct Keyed {
    mode: WriteMode,
    key: Vec<String>,
    /// `merge`: the column whose greatest value wins; `None`: an `append_dedup`.
    newer_by: Option<String>,
    delete_when: Option<String>,
    /// The dialect `delete_when` is written in.
    semantics: Semantics,
    duplicates_are_errors: bool,
    /// `append_dedup`'s `dedup_window`.
    window: Option<DedupWindow>,
}

impl Keyed {
    /// A job's `merge` on `key`, the newest row by `newer_by` winning.
    pub(super) fn merge(
        key: &[String],
        newer_by: &str,
        on_duplicate_keys: OnDuplicateKeys,
        delete_when: Option<&str>,
        semantics: Semantics,
    ) -> Self {
        Self {
            mode: WriteMode::Merge,
            key: key.to_vec(),
            newer_by: Some(newer_by.to_owned()),
            delete_when: delete_when.map(str::to_owned),
            semantics,
            duplicates_are_errors: on_duplicate_keys == OnDuplicateKeys::Error,
            window: None,
        }
    }

    /// A job's `append_dedup` on `key`, within `window` where it has one.
    pub(super) fn append_dedup(key: &[String], window: Option<DedupWindow>) -> Self {
        Self {
            mode: WriteMode::AppendDedup,
            key: key.to_vec(),
            newer_by: None,
            delete_when: None,
            semantics: Semantics::default(),
            duplicates_are_errors: false,
            window,
        }
    }

    fn spec(&self) -> KeyedSpec<'_> {
        KeyedSpec {
            key: &self.key,
            newer_by: self.newer_by.as_deref(),
            delete_when: self.delete_when.as_deref(),
            semantics: self.semantics,
            duplicates_are_errors: self.duplicates_are_errors,
            fill: None,
            scope: None,
            matches: None,
        }
    }

    /// The keyed source this mode's [`Mode::compute`] made.
    fn source(computed: Computed) -> Result<KeyedSource, Box<crate::Error>> {
        match computed {
            Computed::Keyed(source) => Ok(source),
            Computed::Streamed(_) | Computed::Held(_) => {
                Err(Box::new(crate::Error::Usage("a keyed write computes a keyed source".into())))
            }
        }
    }

    /// Checks the source's columns against the table's, then finds the [scope](Self::scope) the
    /// write reads the table in (over `t`).
    async fn scoped(&self, attempt: &Attempt<'_>, source: &KeyedSource) -> Result<Scope, RunError> {
        attempt.refuse_other_columns(&source.held.schema).await?;
        self.scope(attempt, source).await
    }

    /// Classifies the source against the version the write reads and commits over, filling in as
    /// [`Self::fill`] says, in the write's `scope`.
    async fn classified(
        &self,
        attempt: &Attempt<'_>,
        source: &KeyedSource,
        fill: Option<&Fill>,
        scope: &Scope,
    ) -> Result<KeyedCounts, RunError> {
        let spec = KeyedSpec {
            fill: fill.map(|f| &f.condition),
            scope: scope.rows.as_ref(),
            matches: scope.matches.as_ref(),
            ..self.spec()
        };
        attempt.classify(source, &spec).await
    }

    /// What a rerun fills in: the columns of the table the partition's rows lack (added since it
    /// was written, or written as NULL by code without them) and those this write adds, in the rows of its keys that it does not replace
    /// but that are otherwise its own (see [`keyed::fill_condition`]). A merge's newer-wins rule
    /// stands: a row written by a newer version of its key is not the source's row. `None` where
    /// there is nothing to fill.
    async fn fill(&self, attempt: &Attempt<'_>, source: &KeyedSource) -> Result<Option<Fill>, RunError> {
        let Some(table) = attempt.columns().await? else { return Ok(None) };
        let names: Vec<String> = table.fields().iter().map(|f| f.name().clone()).collect();
        let lacks = attempt.previous.map(|r| r.lacks(&names)).unwrap_or_default();
        let added = attempt.columns.added.iter().map(|c| c.column.clone());
        let columns: Vec<String> = lacks.into_iter().cloned().chain(added).collect();
        let condition = keyed::fill_condition(&source.held.schema, &table, &self.key, &columns);
        Ok(condition.map(|condition| Fill { condition, columns }))
    }
}

/// The rows a keyed rerun fills in, and the columns it sets in them.
struct Fill {
    condition: datafusion::prelude::Expr,
    columns: Vec<String>,
}

#[async_trait::async_trait(?Send)]
impl Mode for Keyed {
    fn mode(&self) -> WriteMode {
        self.mode
    }

    fn commits_side_by_side(&self) -> bool {
        false
    }

    fn depends_on_order(&self) -> bool {
        true
    }

    fn fills_in(&self) -> bool {
        true
    }

    fn refuses(&self, check: &CheckKind) -> Option<String> {
        super::mode::refuses_comparison(check, &format!("write = \"{}\"", self.mode))
    }

    fn dedup_window(&self) -> Option<(&[String], &DedupWindow)> {
        self.window.as_ref().map(|window| (self.key.as_slice(), window))
    }

    fn tombstone(&self) -> Option<&'static str> {
        self.delete_when.as_ref().map(|_| keyed::DELETED)
    }

    /// A difference in the tombstone column of `delete_when` is said as the job's `delete_when`
    /// added or removed since the table was created.
    fn explain(&self, job: &JobSpec, difference: &Difference) -> String {
        let flag = keyed::DELETED;
        let recreate = "the table's columns do not change: recreate the table (drop it and backfill the job) or write a new target";
        match difference {
            Difference::Missing { column, .. }
                if self.mode == WriteMode::Merge && column == flag && self.delete_when.is_none() =>
            {
                format!(
                    "column `{flag}` (boolean) is missing from the result: the table was created by a job with `delete_when`, which job `{}` no longer has (its tombstones are rows whose `{flag}` is true); {recreate}, or put `delete_when` back",
                    job.name
                )
            }
            Difference::Extra { column, .. } if column == flag && self.delete_when.is_some() => format!(
                "column `{flag}` (boolean) is not in the table: job `{}`'s `delete_when` was added since the table was created without it (it marks deleted keys in `{flag}`); {recreate}, or take `delete_when` out",
                job.name
            ),
            _ => difference.to_string(),
        }
    }

    async fn compute(
        &self,
        attempt: &Attempt<'_>,
        plan: datafusion::logical_expr::LogicalPlan,
    ) -> Result<Computed, RunError> {
        if let Some(refusal) = attempt.refusal(plan.schema()) {
            return Err(refusal);
        }
        let spec = &attempt.run.job.spec;
        if let Some(missing) = spec.cluster_by.iter().find(|c| plan.schema().field_with_unqualified_name(c).is_err()) {
            return Err(RunError::Setup(crate::Error::Usage(format!(
                "job `{}`: cluster_by column `{missing}` is not a column of the job's result",
                spec.name
            ))));
        }
        Ok(Computed::Keyed(keyed::prepare(attempt.lake.ctx, plan, &self.spec()).await?))
    }

    async fn preview(
        &self,
        attempt: &Attempt<'_>,
        computed: Computed,
        _replaced: Option<DataFrame>,
        report: &mut PartitionReport,
    ) -> Result<DryRun, RunError> {
        let source = Self::source(computed).map_err(|e| *e)?;
        let fill = self.fill(attempt, &source).await?;
        let scope = self.scoped(attempt, &source).await?;
        let counts = self.classified(attempt, &source, fill.as_ref(), &scope).await?;
        report.changes = Some(Changes::Keyed(counts));
        if !counts.changes_anything() && !attempt.fresh && attempt.read_version.is_some() {
            report.note = Some(Note::StateAlone { dry_run: true });
        }
        // An `append_dedup` adds its new keys' rows whole; a merge's changes are counted by key.
        let (rows_added, rows_removed) =
            if self.spec().newer_by.is_none() { (Some(counts.inserted), Some(0)) } else { (None, None) };
        Ok(DryRun { changes: counts.changes_anything(), rows_added, rows_removed, ..DryRun::default() })
    }

    async fn commit(
        &self,
        attempt: &Attempt<'_>,
        target: Target<'_>,
        computed: Computed,
        report: &mut PartitionReport,
    ) -> Result<Option<Committed>, RunError> {
        let source = Self::source(computed).map_err(|e| *e)?;
        let fill = self.fill(attempt, &source).await?;
        let scope = self.scoped(attempt, &source).await?;
        let ctx = attempt.lake.ctx;
        let df = source.dataframe(ctx)?;
        let spec = self.spec();
        let job = &attempt.run.job.spec;
        let merge = MergeSpec {
            key: spec.key,
            newer_by: spec.newer_by,
            fill: fill.as_ref().map(|f| (&f.condition, f.columns.as_slice())),
            scope: scope.rows.as_ref(),
            matches: scope.matches.as_ref(),
            tombstone: spec.delete_when.map(|_| keyed::DELETED),
            cluster_by: &job.cluster_by,
            target_file_size: job.target_file_size,
        };
        let state = ctx.state();
        // Into an existing table, lakewriter's own merge classifies the source in the scan that
        // rewrites the table's files; else the source is classified first, then delta-rs merges it.
        if let Some(scanned) = lakewriter_delta::merge_in_one_scan(&state, target, df.clone(), merge).await? {
            let counts = scanned.counts;
            report.changes = Some(Changes::Keyed(KeyedCounts {
                inserted: counts.inserted,
                updated: counts.updated,
                deleted: counts.deleted,
                unchanged: counts.unchanged,
                duplicates_dropped: source.duplicates_dropped as u64,
            }));
            return match scanned.committed {
                Some(committed) => Ok(Some(committed)),
                None => attempt.record_state_alone(target, &source.held.schema, report).await,
            };
        }
        let counts = self.classified(attempt, &source, fill.as_ref(), &scope).await?;
        report.changes = Some(Changes::Keyed(counts));
        if !counts.changes_anything() {
            return attempt.record_state_alone(target, &source.held.schema, report).await;
        }
        Ok(Some(lakewriter_delta::merge(&state, target, df, merge).await?))
    }
}

#[cfg(test)]
mod tests;
