//! The determinism checks of a job (`lakewriter lint`), and the same checks before a run writes.

use datafusion::logical_expr::LogicalPlan;
use lakewriter_compute::{Finding, Rule, Severity};
use lakewriter_core::JobSpec;

use crate::{Error, Job, Result, Runner};

impl Runner {
    /// Checks `job`'s SQL for the functions its dialect refuses to run (rule `refused_function`),
    /// then, planned in this runner's catalog with `$dt` unbound, for what would make its runs
    /// differ (see [`lakewriter_compute::lint`]), and its data checks for a column
    /// its result does not have or a condition that is not one, and a `not_null` column its result
    /// does not have (rule `check`, an error).
    pub async fn lint(&self, job: &Job) -> Result<Vec<Finding>> {
        // Each function the job's dialect refuses (rule `refused_function`, an error): planning
        // would stop at the first.
        let refused = lakewriter_compute::refused_functions(self.session(), &job.query).unwrap_or_default();
        if !refused.is_empty() {
            let finding = |name: String| Finding {
                severity: Severity::Error,
                rule: Rule::RefusedFunction,
                job: job.spec.name.clone(),
                message: format!(
                    "`{name}` has no Spark-exact implementation here; `dialect = \"datafusion\"` runs DataFusion's"
                ),
                construct: name,
            };
            return Ok(refused.into_iter().map(finding).collect());
        }
        let plan = lakewriter_compute::plan_sql(self.session(), &job.query)
            .await
            .map_err(|source| Error::Lint { job: job.spec.name.clone(), source: Box::new(source) })?;
        let scope = job.mode.lint_scope(job.partition_by.as_deref());
        let mut findings = lakewriter_compute::lint(&plan, &job.spec, scope, &self.workspace().project.sources);
        let schema = written_columns(job, plan.schema());
        let problems = check_problems(self.session(), job, &schema);
        findings.extend(problems.into_iter().map(|(check, message)| Finding {
            severity: Severity::Error,
            rule: Rule::Check,
            job: job.spec.name.clone(),
            message: format!("`{check}`: {message}"),
            construct: check,
        }));
        if let Some(column) = missing_not_null(&job.spec, &schema) {
            findings.push(Finding {
                severity: Severity::Error,
                rule: Rule::Check,
                job: job.spec.name.clone(),
                message: format!("key `not_null`: the result has no column `{column}`"),
                construct: "not_null".to_owned(),
            });
        }
        Ok(findings)
    }

    /// Before a run of `job` writes: an error finding fails the run (nothing committed), and
    /// warnings are logged. The findings depend on the job alone, so they are made once per job
    /// and runner, not per partition, and each warning is logged once per command (a test's
    /// scratch runners share it). `bound` is the run's plan, linted
    /// when the SQL cannot be planned with `$dt` unbound (its `$dt` is then a constant, so the
    /// partition column is not checked).
    pub(crate) async fn check_determinism(&self, job: &Job, bound: &LogicalPlan) -> Result<()> {
        let known = self.linted.lock().ok().and_then(|linted| linted.get(&job.spec.name).cloned());
        let findings = if let Some(findings) = known {
            findings
        } else {
            let findings = self.findings(job, bound).await;
            let first = self
                .linted
                .lock()
                .map_or(true, |mut linted| linted.insert(job.spec.name.clone(), findings.clone()).is_none());
            if first {
                for finding in findings.iter().filter(|f| f.severity == Severity::Warning) {
                    if self.workspace().first_time(&finding.to_string()) {
                        tracing::warn!("{finding}");
                    }
                }
            }
            findings
        };
        let errors: Vec<Finding> = findings.into_iter().filter(|f| f.severity == Severity::Error).collect();
        if errors.is_empty() { Ok(()) } else { Err(Error::Nondeterministic { findings: errors }) }
    }

    /// The findings of `job`, from its unbound plan, or else from `bound` without the partition rule.
    async fn findings(&self, job: &Job, bound: &LogicalPlan) -> Vec<Finding> {
        match self.lint(job).await {
            // A run refuses its own bad checks, with their error, before it computes.
            Ok(findings) => findings.into_iter().filter(|f| f.rule != Rule::Check).collect(),
            Err(e) => {
                tracing::debug!(job = %job.spec.name, error = %crate::error_chain(&e), "checking the plan with $dt bound");
                let scope = job.mode.lint_scope(job.partition_by.as_deref());
                let mut findings = lakewriter_compute::lint(bound, &job.spec, scope, &self.workspace().project.sources);
                findings.retain(|f| f.rule != Rule::OutsidePartition);
                findings
            }
        }
    }
}

/// What is wrong with each of `job`'s checks against its result's columns, `schema` (see
/// [`lakewriter_compute::checks::problems`]), for `lint` and for each run before it computes:
/// every check of a job written as MERGE INTO, whose checks would see the MERGE's source, not
/// the rows it writes.
pub(crate) fn check_problems(
    ctx: &datafusion::prelude::SessionContext,
    job: &Job,
    schema: &datafusion::common::DFSchema,
) -> Vec<(String, String)> {
    if matches!(job.statement, Some(crate::sql::JobStatement::Merge(_))) {
        let problem = "checks are not supported for a job written as MERGE INTO: they would see its source, not the rows it writes; give the job `write = \"merge\"` and a SELECT to check its rows";
        return job.spec.checks.checks.iter().map(|c| (c.name(), problem.to_owned())).collect();
    }
    lakewriter_compute::checks::problems(ctx, job.spec.semantics, schema, &job.spec.checks)
}

/// The columns a job's result has: its query's, and for a job written as an INSERT the partition
/// column its `PARTITION (c = $dt)` clause adds (a `DATE`).
fn written_columns(job: &Job, query: &datafusion::common::DFSchemaRef) -> datafusion::common::DFSchema {
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    let query = query.as_ref().clone();
    let Some(column) = job.statement.as_ref().and_then(crate::sql::JobStatement::partition_column) else {
        return query;
    };
    if query.has_column_with_unqualified_name(column) {
        return query;
    }
    let partition = Schema::new(vec![Field::new(column, DataType::Date32, false)]);
    datafusion::common::DFSchema::try_from(partition).and_then(|p| query.join(&p)).unwrap_or(query)
}

/// The first of the job's `not_null` columns that `schema` (its result's) does not have.
pub(crate) fn missing_not_null<'a>(job: &'a JobSpec, schema: &datafusion::common::DFSchema) -> Option<&'a String> {
    job.not_null.iter().find(|c| !schema.has_column_with_unqualified_name(c.as_str()))
}
