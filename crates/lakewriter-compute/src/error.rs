use datafusion::error::DataFusionError;
use url::Url;

/// Errors from discovering the catalog and planning job SQL.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot list the lakehouse root {root}")]
    ListRoot { root: Url, source: Box<dyn std::error::Error + Send + Sync> },

    #[error("cannot register raw dataset {table} ({url})")]
    RegisterRaw { table: String, url: Url, source: Box<DataFusionError> },

    #[error("cannot register table {table}")]
    Register { table: String, source: Box<DataFusionError> },

    #[error("the job's SQL is invalid")]
    Sql { source: Box<DataFusionError> },

    #[error("cannot plan the job's SQL for {param}")]
    Plan { param: String, source: Box<DataFusionError> },
}

impl Error {
    /// True where the job's SQL is at fault, not the storage.
    #[must_use]
    pub fn is_user_error(&self) -> bool {
        matches!(self, Self::Sql { .. } | Self::Plan { .. })
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
