//! The error of a function the `spark` dialect does not run ([`super::functions`]).

/// The planning error refusing the function `name`, naming the dialect that runs DataFusion's.
pub(crate) fn refusal(name: &str) -> datafusion::error::DataFusionError {
    datafusion::error::DataFusionError::Plan(format!(
        "`{name}` has no Spark-exact implementation here; `dialect = \"datafusion\"` runs DataFusion's"
    ))
}
