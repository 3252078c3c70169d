//! Determinism checks over a job's logical plan (`$dt` still a placeholder): what would make two
//! runs of the same partition write different rows, or make a run fail or grow more costly by
//! itself. Pure: the plan, the job's settings and the declared unique keys in, findings out.
//!
//! - `nondeterministic` (error): a clock-dependent or random function;
//! - `order_not_total` (warning): an order-sensitive window function, or a `LIMIT`, whose order
//!   does not cover a declared unique key, so ties are broken by file or thread order;
//! - `unbounded_scan` (warning): a partitioned raw dataset read with no filter on its partition
//!   column;
//! - `outside_partition` (warning): a job whose write replaces the partition of `$dt` (an
//!   `overwrite_partition`, an `INSERT OVERWRITE … PARTITION`) whose partition column is not
//!   provably `$dt`;
//! - `float_aggregate` (warning): a column of the result computed by a `SUM` or `AVG` of floats
//!   (or a variance, a correlation), whose last bits depend on the order rows are added in.
//!
//! Which rules apply depends on what the job's write does, which the caller says ([`Scope`]) from
//! the mode the job resolves to, however it is written.
//!
//! Columns are matched by name (see docs/guide/lint.md, "Limits", for what that misses).

mod finding;
mod origin;
mod plan;
mod rules;

use std::collections::BTreeMap;

use datafusion::logical_expr::LogicalPlan;
use lakewriter_core::{DedupWindow, JobSpec, SourceSpec, TableRef};

pub use finding::{Finding, Rule, Severity};
use origin::{Origin, origin};
use rules::{float_aggregates, nondeterministic_calls, unbounded_scans, unordered};

/// What a job's write does, as far as the rules care: said by the write mode the job resolves to,
/// so that a job written as a statement and its `write = …` twin are checked alike.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    /// The write reads all history by design (a rebuild): `unbounded_scan` does not apply.
    pub reads_all_history: bool,
    /// The partition column whose `$dt` partition the write replaces: `outside_partition`
    /// checks where its values come from.
    pub day_partition: Option<&'a str>,
    /// An `append_dedup`'s key and `dedup_window`: `dedup_window` checks them.
    pub dedup: Option<(&'a [String], &'a DedupWindow)>,
}

/// Checks `plan`, the logical plan of `job`'s SQL with `$dt` unbound, against the determinism
/// rules that apply to its write (`scope`). `sources` are the unique keys the project declares.
/// With `allow_nondeterministic`, clock and random functions are not reported at all.
#[must_use]
pub fn lint(
    plan: &LogicalPlan,
    job: &JobSpec,
    scope: Scope<'_>,
    sources: &BTreeMap<TableRef, SourceSpec>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut add = |severity, rule, construct: String, message: String| {
        let finding = Finding { severity, rule, job: job.name.clone(), construct, message };
        if !findings.contains(&finding) {
            findings.push(finding);
        }
    };
    if !job.allow_nondeterministic {
        for function in nondeterministic_calls(plan) {
            let message = format!(
                "{function} differs between runs of the same partition; compute from $dt and the data instead, or set `allow_nondeterministic = true` on job `{}` to allow it",
                job.name
            );
            add(Severity::Error, Rule::Nondeterministic, function, message);
        }
    }
    for (construct, why) in unordered(plan, sources) {
        let message = format!(
            "{construct}: {why}, so rows that tie come in file and thread order and the rows it keeps or the numbers it gives can differ between runs; order by a unique key as well, or declare the source's key with [sources.\"schema.table\"] unique = [...]"
        );
        add(Severity::Warning, Rule::OrderNotTotal, construct, message);
    }
    for (column, aggregate) in float_aggregates(plan) {
        let message = format!(
            "`{column}` is {aggregate}, a floating-point sum whose last bits depend on the order rows are added in (file and thread order), so runs of the same partition can write different values (`verify` and `audit` then find it changed); sum a DECIMAL (e.g. CAST(x AS DECIMAL(18, 2))) or ROUND the result"
        );
        add(Severity::Warning, Rule::FloatAggregate, aggregate, message);
    }
    if !scope.reads_all_history {
        for (table, column) in unbounded_scans(plan) {
            let message = format!(
                "{table} is read with no filter on its partition column `{column}`: the run reads all history and its cost grows every day; add e.g. `WHERE {column} = $dt`"
            );
            add(Severity::Warning, Rule::UnboundedScan, table, message);
        }
    }
    if let Some(column) = scope.day_partition {
        let message = match origin(plan, column) {
            Origin::Dt | Origin::Unknown => None,
            Origin::Constant(constant) => Some((
                constant.clone(),
                format!(
                    "the partition column `{column}` is the constant {constant}, not $dt: a run for any other date writes outside its partition and fails (nothing is committed)"
                ),
            )),
            Origin::Unconstrained(source) => Some((
                source.clone(),
                format!(
                    "the partition column `{column}` comes from {source}, which no filter constrains to $dt: rows of other dates make the run fail (nothing is committed); add e.g. `WHERE {column} = $dt`"
                ),
            )),
        };
        if let Some((construct, message)) = message {
            add(Severity::Warning, Rule::OutsidePartition, construct, message);
        }
    }
    if let Some(message) = scope.dedup.and_then(|(key, window)| dedup_window_gap(key, window)) {
        add(Severity::Warning, Rule::DedupWindow, "dedup_window".to_owned(), message);
    }
    findings
}

/// An `append_dedup` window whose key does not hold the column the window counts days in: the
/// same key can then arrive on a later day, and where its earlier row is outside the window it is
/// not looked for, and the key is appended again. A key that holds that column cannot recur on
/// another day, so every duplicate is inside the window.
fn dedup_window_gap(key: &[String], window: &DedupWindow) -> Option<String> {
    if key.contains(&window.column) {
        return None;
    }
    let keys = key.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    let (column, days) = (&window.column, window.days);
    Some(format!(
        "the key ({keys}) does not hold `{column}`, so a key can arrive again on a later day; where its earlier row is more than {days} days away in `{column}`, it is not looked for and the key is appended again (a second row); widen `dedup_window`, or leave it out to check every key the table holds"
    ))
}

#[cfg(test)]
mod tests;
