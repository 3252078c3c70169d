use datafusion::error::DataFusionError;
use url::Url;

/// Errors from discovering the catalog and planning job SQL.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot list the lakehouse root {root}")]
    ListRoot { root: Url, source: Box<dyn std::error::Error + Send + Sync> },

    /// Listing a folder below the root failed: a schema folder, or a table's `_delta_log/`.
    #[error("cannot list {folder} in the lakehouse root")]
    ListFolder { folder: Url, source: Box<dyn std::error::Error + Send + Sync> },

    #[error("cannot register raw dataset {table} ({url})")]
    RegisterRaw { table: String, url: Url, source: Box<DataFusionError> },

    #[error("raw file {file} of {table} {problem}")]
    RawFile { table: String, file: String, problem: String },

    #[error(
        "{table}: the folder `{folder}` is not a partition ({column} holds dates), and this query lists every {column} folder (its filter does not pin one {column}); move the folder out of the dataset, or read one {column} (`{column} = $dt`)"
    )]
    RawFolder { table: String, folder: String, column: String },

    #[error("cannot register schema {schema}")]
    Register { schema: String, source: Box<DataFusionError> },

    /// `at`: where the error is ([`crate::located`]), where known.
    #[error("the job's SQL is invalid{}", at_text(at.as_deref()))]
    Sql { source: Box<DataFusionError>, at: Option<String> },

    /// A table the SQL names that is not in the lakehouse; `nearest`: the tables of names close
    /// to it, of the `tables` there are.
    #[error("table `{table}` not found{}{}", at_text(at.as_deref()), nearest_text(nearest, *tables))]
    TableNotFound { table: String, at: Option<String>, nearest: Vec<String>, tables: usize },

    /// A table the SQL names failed to open (the catalog opens each on first use).
    #[error("cannot open a table the job's SQL reads")]
    Table { source: Box<dyn std::error::Error + Send + Sync> },

    #[error("the result has no column `{column}`; its columns: {columns}")]
    MissingColumn { column: String, columns: String },

    #[error("the result already has a column `{column}`, which `delete_when` adds as the tombstone flag")]
    ReservedColumn { column: String },

    #[error("`delete_when` is not a valid condition on the result's columns")]
    DeleteWhen { source: Box<DataFusionError> },

    #[error("{count} source row(s) have a NULL in {columns}; e.g. {examples}")]
    NullKeys { count: usize, columns: String, examples: String },

    #[error("{keys} key(s) appear more than once in the source (on_duplicate_keys = \"error\"); e.g. {examples}")]
    DuplicateKeys { keys: usize, examples: String },

    #[error("cannot prepare the keyed source")]
    Keyed { source: Box<DataFusionError> },

    #[error("`predicate` is not a valid condition on the target's columns")]
    Predicate { source: Box<DataFusionError> },

    #[error("cannot compare the two table versions")]
    Diff { source: Box<DataFusionError> },

    /// Running the job's query to hold its result (for checks or a dry run) failed.
    #[error("cannot compute the job's result")]
    Result { source: Box<DataFusionError> },

    #[error("cannot evaluate the job's checks")]
    Checks { source: Box<DataFusionError> },

    #[error("check `{check}`: {problem}")]
    BadCheck { check: String, problem: String },

    /// SQL text that is no statement lakewriter runs, or a clause it does not run.
    #[error("{problem}")]
    Statement { problem: String },

    #[error("`{expression}` is not a valid expression here")]
    Expression { expression: String, source: Box<DataFusionError> },

    #[error("cannot plan the job's SQL for {param}")]
    Plan { param: String, source: Box<DataFusionError> },
}

impl Error {
    /// True for a raw input the plan would read that cannot be read: a bad file or folder.
    #[must_use]
    pub fn is_unreadable_input(&self) -> bool {
        matches!(self, Self::RawFile { .. } | Self::RawFolder { .. })
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// ` (at sql/daily_orders.sql:3:6)`, or nothing.
fn at_text(at: Option<&str>) -> String {
    at.map(|at| format!(" (at {at})")).unwrap_or_default()
}

/// What a table not found is near: `; did you mean raw.orders?`, or how to see the tables there are.
fn nearest_text(nearest: &[String], tables: usize) -> String {
    match nearest {
        [] if tables == 0 => "; the lakehouse has no table yet".to_owned(),
        [] => format!("; the lakehouse has {tables} table(s): `lakewriter sql -e \"SHOW TABLES\"` lists them"),
        [one] => format!("; did you mean {one}?"),
        [first @ .., last] => format!("; did you mean {} or {last}?", first.join(", ")),
    }
}
