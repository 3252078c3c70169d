//! Splitting SQL text into statements with DataFusion's SQL parser, and the two Spark clauses it
//! does not know: `UPDATE SET *` and `INSERT *` in a MERGE.

use datafusion::sql::sqlparser::ast::Statement as Ast;
use datafusion::sql::sqlparser::dialect::{Dialect, dialect_from_str};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Word};

use crate::{Error, Result};

/// The assignment `UPDATE SET *` is read as: `SET __lakewriter_all = __lakewriter_all`.
pub(super) const ALL_COLUMNS: &str = "__lakewriter_all";

/// Parses `sql` — one statement or several separated by `;` — in the session's dialect.
pub(super) fn statements(sql: &str, dialect: &str) -> Result<Vec<Ast>> {
    let dialect: Box<dyn Dialect> = dialect_from_str(dialect)
        .ok_or_else(|| Error::Statement { problem: format!("unknown SQL dialect `{dialect}`") })?;
    let parse_err = |e: &dyn std::fmt::Display| Error::Statement { problem: format!("cannot parse the SQL: {e}") };
    let tokens = Tokenizer::new(dialect.as_ref(), sql).tokenize_with_location().map_err(|e| parse_err(&e))?;
    Parser::new(dialect.as_ref())
        .with_tokens_with_locations(spark_merge_stars(tokens))
        .parse_statements()
        .map_err(|e| parse_err(&e))
}

/// Rewrites Spark's `UPDATE SET *` to an assignment of [`ALL_COLUMNS`] and `INSERT *` to
/// `INSERT ROW` (BigQuery's spelling of the same: every column from the source), which the
/// parser reads. Only tokens are rewritten, so a `*` inside a string literal or a comment is
/// never touched; `UPDATE SET` and `INSERT` followed by `*` occur in no other statement.
fn spark_merge_stars(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    for token in tokens {
        if token.token == Token::Mul {
            let span = token.span;
            let word = |value: &str, keyword| TokenWithSpan {
                token: Token::Word(Word { value: value.to_owned(), quote_style: None, keyword }),
                span,
            };
            match last_words(&out) {
                [.., Keyword::UPDATE, Keyword::SET] => {
                    out.extend([
                        word(ALL_COLUMNS, Keyword::NoKeyword),
                        TokenWithSpan { token: Token::Eq, span },
                        word(ALL_COLUMNS, Keyword::NoKeyword),
                    ]);
                    continue;
                }
                [.., Keyword::THEN, Keyword::INSERT] => {
                    out.push(word("ROW", Keyword::ROW));
                    continue;
                }
                _ => {}
            }
        }
        out.push(token);
    }
    out
}

/// The keywords of the last two tokens that are not whitespace.
fn last_words(tokens: &[TokenWithSpan]) -> [Keyword; 2] {
    let mut words = tokens.iter().rev().filter(|t| !matches!(t.token, Token::Whitespace(_))).map(|t| match &t.token {
        Token::Word(w) => w.keyword,
        _ => Keyword::NoKeyword,
    });
    let last = words.next().unwrap_or(Keyword::NoKeyword);
    [words.next().unwrap_or(Keyword::NoKeyword), last]
}

/// A statement's text as the parser prints it, with Spark's `UPDATE SET *` and `INSERT *` as
/// written (see [`spark_merge_stars`]).
pub(super) fn as_written(printed: &str) -> String {
    printed
        .replace(&format!("UPDATE SET {ALL_COLUMNS} = {ALL_COLUMNS}"), "UPDATE SET *")
        .replace("THEN INSERT ROW", "THEN INSERT *")
}
