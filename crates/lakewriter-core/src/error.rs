use std::path::PathBuf;

/// Errors in user input: dates, table names, the project file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid date `{value}`: expected a calendar date as YYYY-MM-DD")]
    InvalidDate { value: String },

    #[error("invalid date range: --from {from} is after --to {to}")]
    InvalidRange { from: String, to: String },

    #[error(
        "date range too long: --from {from} --to {to} holds {days} days, more than {max} (100 years of daily partitions); check the years, or split the range"
    )]
    RangeTooLong { from: String, to: String, days: usize, max: usize },

    #[error("invalid partition `{value}`: expected `column=YYYY-MM-DD` or `all`")]
    InvalidPartition { value: String },

    #[error("invalid table name `{value}`: expected `schema.table` (letters, digits, `_`; not starting with a digit)")]
    InvalidTableRef { value: String },

    #[error("{}: {message}", file.display())]
    Config { file: PathBuf, message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
