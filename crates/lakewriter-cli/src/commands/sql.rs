//! `lakewriter sql [-e SQL | FILE] [--dt D] [--replace-all]`: statements run in order, each one
//! commit; the first failure stops the rest.

use std::process::ExitCode;

use anyhow::{Context, Result};
use lakewriter::{Executed, Runner, SqlOptions};

use crate::cli::{Global, SqlArgs};
use crate::output::{Output, SqlSummary};

pub async fn sql(global: &Global, printer: &mut dyn Output, args: SqlArgs) -> Result<ExitCode> {
    let text = match (&args.execute, &args.file) {
        (Some(sql), _) => sql.clone(),
        (None, Some(path)) => {
            std::fs::read_to_string(path).with_context(|| format!("cannot read the SQL file {}", path.display()))?
        }
        (None, None) => unreachable!("clap requires a file or -e"),
    };
    let runner = super::open_runner(global).await?;
    let statements = runner.parse_sql(&text)?;
    let options = SqlOptions { dt: args.dt, replace_all: args.replace_all };
    Runner::require_dt(&statements, options)?;
    let total = statements.len();
    for (i, parsed) in statements.iter().enumerate() {
        let number = i + 1;
        match runner.execute(parsed, options).await {
            Ok(Executed::Rows { schema, batches }) => printer.rows(number, &schema, &batches)?,
            Ok(Executed::Written(report)) => printer.statement(number, total, &parsed.text, &report)?,
            Err(error) => {
                printer.statement_failed(number, total, &parsed.text, &error)?;
                printer.sql_done(&SqlSummary { statements: total, ok: i, failed: 1, not_run: total - number })?;
                let rest = match total - number {
                    0 => String::new(),
                    1 => format!("; statement {total} not run"),
                    _ => format!("; statements {} to {total} not run", number + 1),
                };
                let which = format!("statement {number} of {total} failed{rest}: {}", shorten(&parsed.text));
                return Err(anyhow::Error::new(error).context(which));
            }
        }
    }
    printer.sql_done(&SqlSummary { statements: total, ok: total, failed: 0, not_run: 0 })?;
    Ok(ExitCode::SUCCESS)
}

/// A statement's text on one line, cut after 100 characters.
fn shorten(sql: &str) -> String {
    let one_line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}
