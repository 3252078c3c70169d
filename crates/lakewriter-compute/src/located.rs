//! A query's SQL error, made one: a table that failed to open is that table's error; any other is
//! the SQL's, with where it is: the file its text is written in (a job's `sql_file`, or
//! the project file's key) and the line and column — from DataFusion's diagnostic span, the
//! parser's `Line: L, Column: C`, or the name the error is about found in the text —; and a table
//! not found, named as the user writes it (no catalog prefix) with the nearest tables there are.

use datafusion::error::DataFusionError;
use datafusion::execution::SessionState;

use crate::Error;

/// Where a query's text is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file (`sql/daily_orders.sql`), or where in the project file (`lakewriter.toml`, or
    /// `jobs.daily_orders.sql of lakewriter.toml` where the text is not found in it verbatim).
    pub file: String,
    /// The line and column (from 1) of the file its first character is at.
    pub line: u64,
    pub column: u64,
}

impl Origin {
    /// `FILE:LINE:COLUMN` of the text's `line` and `column` (from 1).
    fn at(&self, line: u64, column: u64) -> String {
        let column = if line == 1 { self.column + column - 1 } else { column };
        format!("{}:{}:{column}", self.file, self.line + line - 1)
    }
}

/// `source`, an error planning the SQL `text` written at `origin` in the session `state`: a table
/// not found ([`Error::TableNotFound`]), or the SQL's error ([`Error::Sql`]), with where it is.
pub(crate) fn sql_error(
    state: &SessionState,
    text: Option<&str>,
    origin: Option<&Origin>,
    source: DataFusionError,
) -> Error {
    match source {
        // A table the SQL names that failed to open (the catalog reports that as an external
        // error) is that table's error.
        DataFusionError::External(table) => return Error::Table { source: table },
        DataFusionError::Context(_, inner) if matches!(*inner, DataFusionError::External(_)) => {
            return sql_error(state, text, origin, *inner);
        }
        _ => {}
    }
    let missing = table_not_found(&source, state);
    let position = span(&source)
        .or_else(|| parser_position(&source.to_string()))
        .or_else(|| position_of(text?, missing.as_deref().or(missing_column(&source).as_deref())?));
    let at = match (origin, position) {
        (Some(origin), Some((line, column))) => Some(origin.at(line, column)),
        (Some(origin), None) => Some(origin.file.clone()),
        (None, Some((line, column))) => Some(format!("line {line}, column {column}")),
        (None, None) => None,
    };
    match missing {
        Some(table) => {
            let tables = catalog_tables(state);
            let nearest = nearest_tables(&table, &tables);
            Error::TableNotFound { table, at, nearest, tables: tables.len() }
        }
        None => Error::Sql { source: Box::new(source), at },
    }
}

/// A raw input that cannot be read ([`Error::RawFile`], [`Error::RawFolder`]) is the error
/// itself, not a planning error that wraps it.
pub(crate) fn unwrap_input_error(
    error: datafusion::error::DataFusionError,
) -> std::result::Result<Error, datafusion::error::DataFusionError> {
    match error {
        DataFusionError::External(inner) => match inner.downcast::<Error>() {
            Ok(ours) if ours.is_unreadable_input() => Ok(*ours),
            Ok(ours) => Err(DataFusionError::External(ours)),
            Err(other) => Err(DataFusionError::External(other)),
        },
        DataFusionError::Context(context, inner) => {
            unwrap_input_error(*inner).map_err(|e| DataFusionError::Context(context, Box::new(e)))
        }
        other => Err(other),
    }
}

/// The start of the error's diagnostic span (DataFusion's, with `collect_spans`).
fn span(error: &DataFusionError) -> Option<(u64, u64)> {
    let span = error.diagnostic()?.span?;
    (span.start.line > 0).then_some((span.start.line, span.start.column))
}

/// `Line: L, Column: C` of a parser error's message.
fn parser_position(message: &str) -> Option<(u64, u64)> {
    let rest = &message[message.rfind("Line: ")? + "Line: ".len()..];
    let (line, rest) = rest.split_once(", Column: ")?;
    let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((line.parse().ok()?, column.parse().ok()?))
}

/// The line and column of the first whole word `name` in `text`, case aside.
fn position_of(text: &str, name: &str) -> Option<(u64, u64)> {
    let lower = text.to_lowercase();
    let name = name.to_lowercase();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(found) = lower[from..].find(&name) {
        let start = from + found;
        let end = start + name.len();
        let before = lower[..start].chars().next_back().is_none_or(|c| !is_word(c));
        let after = lower[end..].chars().next().is_none_or(|c| !is_word(c));
        if before && after && text.is_char_boundary(start) {
            return Some(line_and_column(text, start));
        }
        from = end;
    }
    None
}

/// The line and column (from 1, in characters) of the byte `offset` of `text`.
pub fn line_and_column(text: &str, offset: usize) -> (u64, u64) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (u64::try_from(line).unwrap_or(u64::MAX), u64::try_from(column).unwrap_or(u64::MAX))
}

/// The table of a `table '…' not found` planning error, as the user names it: the default
/// catalog's prefix taken off.
fn table_not_found(error: &DataFusionError, state: &SessionState) -> Option<String> {
    let message = match error.find_root() {
        DataFusionError::Plan(message) => message.as_str(),
        _ => return None,
    };
    let name = message.strip_prefix("table '")?.strip_suffix("' not found")?;
    let catalog = &state.config().options().catalog.default_catalog;
    Some(name.strip_prefix(&format!("{catalog}.")).unwrap_or(name).to_owned())
}

/// The column of a `No field named …` schema error.
fn missing_column(error: &DataFusionError) -> Option<String> {
    let message = error.find_root().to_string();
    let rest = &message[message.find("No field named ")? + "No field named ".len()..];
    let name: String = rest.chars().take_while(|c| !c.is_whitespace() && *c != ',').collect();
    let name = name.trim_end_matches('.');
    Some(name.rsplit('.').next().unwrap_or(name).trim_matches('"').to_owned())
}

/// Every `schema.table` of the session's default catalog, sorted.
pub fn catalog_tables(state: &SessionState) -> Vec<String> {
    let options = state.config().options();
    let Some(catalog) = state.catalog_list().catalog(&options.catalog.default_catalog) else { return Vec::new() };
    let mut tables: Vec<String> = catalog
        .schema_names()
        .into_iter()
        .filter(|schema| schema != "information_schema")
        .filter_map(|schema| Some((catalog.schema(&schema)?, schema)))
        .flat_map(|(provider, schema)| provider.table_names().into_iter().map(move |t| format!("{schema}.{t}")))
        .collect();
    tables.sort();
    tables
}

/// The tables of `tables` nearest to `name` (at most three, nearest first): those within a third
/// of its length in edits, of the name as written or of its table part alone.
pub fn nearest_tables(name: &str, tables: &[String]) -> Vec<String> {
    let name = name.to_lowercase();
    let bare = name.rsplit('.').next().unwrap_or(&name);
    let limit = |name: &str| (name.chars().count() / 3).max(2);
    // By edits, then those near as a whole name first.
    let mut scored: Vec<(usize, usize, &String)> = tables
        .iter()
        .filter_map(|t| {
            let lower = t.to_lowercase();
            let table = lower.rsplit('.').next().unwrap_or(&lower);
            let whole = strsim::levenshtein(&name, &lower);
            let near = Some(whole).filter(|&d| d <= limit(&name));
            let part = Some(strsim::levenshtein(bare, table)).filter(|&d| d <= limit(bare));
            Some((near.into_iter().chain(part).min()?, whole, t))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(.., t)| t.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_is_found_as_a_whole_word_and_counted_from_one() {
        let text = "SELECT a\nFROM raw.orders o\nJOIN raw.order x ON o.id = x.id";
        assert_eq!(position_of(text, "raw.order"), Some((3, 6)));
        assert_eq!(position_of(text, "orders"), Some((2, 10)));
        assert_eq!(position_of(text, "nope"), None);
    }

    #[test]
    fn a_parser_error_gives_its_line_and_column() {
        let message = "SQL error: ParserError(\"Expected: end of statement, found: x at Line: 3, Column: 12\")";
        assert_eq!(parser_position(message), Some((3, 12)));
        assert_eq!(parser_position("no position"), None);
    }

    #[test]
    fn an_origin_shifts_the_first_line_only_by_its_column() {
        let origin = Origin { file: "lakewriter.toml".into(), line: 8, column: 7 };
        assert_eq!(origin.at(1, 3), "lakewriter.toml:8:9");
        assert_eq!(origin.at(2, 3), "lakewriter.toml:9:3");
    }

    #[test]
    fn the_nearest_tables_are_those_a_few_edits_away() {
        let tables: Vec<String> =
            ["analytics.daily_orders", "core.customers", "raw.customers", "raw.orders"].map(String::from).to_vec();
        assert_eq!(nearest_tables("raw.order", &tables), ["raw.orders"]);
        assert_eq!(nearest_tables("orders", &tables), ["raw.orders"]);
        assert_eq!(nearest_tables("raw.customer", &tables), ["raw.customers", "core.customers"]);
        assert!(nearest_tables("warehouse.inventory", &tables).is_empty());
    }
}
