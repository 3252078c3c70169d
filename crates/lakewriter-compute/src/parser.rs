//! SQL text read into the parser's statements in a dialect's grammar: DataFusion's SQL parser, and
//! what of Spark's grammar it does not know — `UPDATE SET *` and `INSERT *` in a MERGE, an
//! INSERT's column list after its `PARTITION` clause, Spark's escapes, typed literals and
//! intervals. What `statement` classifies, and the text of a query where it is planned.

mod intervals;

use datafusion::sql::sqlparser::ast::Statement as Ast;
use datafusion::sql::sqlparser::dialect::{Dialect, GenericDialect, SparkSqlDialect, dialect_from_str};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Whitespace, Word};

use crate::{Error, Result};

/// The assignment `UPDATE SET *` is read as: `SET __lakewriter_all = __lakewriter_all`.
pub(crate) const ALL_COLUMNS: &str = "__lakewriter_all";

/// The SQL parser's dialect statements of `dialect` are read in: DataFusion's own (`generic`),
/// or Spark's.
#[must_use]
pub fn parser_dialect(dialect: lakewriter_core::Dialect) -> &'static str {
    match dialect {
        lakewriter_core::Dialect::DataFusion => "generic",
        lakewriter_core::Dialect::Spark => "spark",
    }
}

/// The statements of `sql` in Spark's grammar, as the parser reads them.
pub(crate) fn spark_statements(sql: &str) -> datafusion::error::Result<Vec<Ast>> {
    // The parser's message once: `cannot parse the SQL: Expected: …, found: … at Line: L, Column: C`.
    let statements = statements(sql, parser_dialect(lakewriter_core::Dialect::Spark))
        .map_err(|e| datafusion::error::DataFusionError::Plan(e.to_string().replacen("sql parser error: ", "", 1)))?;
    Ok(statements)
}

/// Parses `sql` — one statement or several separated by `;` — in the parser's `dialect`.
pub(crate) fn statements(sql: &str, dialect: &str) -> Result<Vec<Ast>> {
    let dialect: Box<dyn Dialect> = dialect_from_str(dialect)
        .ok_or_else(|| Error::Statement { problem: format!("unknown SQL dialect `{dialect}`") })?;
    let parse_err = |e: &dyn std::fmt::Display| Error::Statement { problem: format!("cannot parse the SQL: {e}") };
    let sql = if dialect.is::<SparkSqlDialect>() { spark_escapes(sql) } else { std::borrow::Cow::Borrowed(sql) };
    let mut tokens = Tokenizer::new(dialect.as_ref(), &sql).tokenize_with_location().map_err(|e| parse_err(&e))?;
    if dialect.is::<SparkSqlDialect>() {
        tokens = intervals::spark_intervals(spark_extract(spark_literals(tokens)));
    }
    let tokens = describe_table(spark_insert_columns(spark_merge_stars(tokens)));
    if !dialect.is::<SparkSqlDialect>() {
        return Parser::new(dialect.as_ref())
            .with_tokens_with_locations(tokens)
            .parse_statements()
            .map_err(|e| parse_err(&e));
    }
    // The parser reads `INSERT ROW` (what `INSERT *` is rewritten to) in its generic dialect only:
    // a MERGE is parsed in that one, every other statement in Spark's.
    let mut parsed = Vec::new();
    for statement in split_statements(tokens) {
        let merge = statement.iter().find(|t| !matches!(t.token, Token::Whitespace(_)));
        let merge = merge.is_some_and(|t| matches!(&t.token, Token::Word(w) if w.keyword == Keyword::MERGE));
        let dialect: &dyn Dialect = if merge { &GenericDialect {} } else { dialect.as_ref() };
        parsed.extend(
            Parser::new(dialect).with_tokens_with_locations(statement).parse_statements().map_err(|e| parse_err(&e))?,
        );
    }
    Ok(parsed)
}

/// `DESCRIBE [EXTENDED | FORMATTED] TABLE table`, as Spark writes it: the parser reads `TABLE`
/// there only in the dialects that require it, so it is taken out.
fn describe_table(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out = Vec::with_capacity(tokens.len());
    // The keywords of the statement so far (`NoKeyword` for any other token).
    let mut seen: Vec<Keyword> = Vec::new();
    for token in tokens {
        match &token.token {
            Token::Whitespace(_) => {}
            Token::SemiColon => seen.clear(),
            Token::Word(word) => {
                let describe = matches!(seen.first(), Some(Keyword::DESC | Keyword::DESCRIBE))
                    && seen[1..].iter().all(|k| matches!(k, Keyword::EXTENDED | Keyword::FORMATTED));
                seen.push(word.keyword);
                if describe && word.keyword == Keyword::TABLE {
                    continue;
                }
            }
            _ => seen.push(Keyword::NoKeyword),
        }
        out.push(token);
    }
    out
}

/// `tokens` split into statements at each `;` (strings and comments are single tokens, so only a
/// separator is one).
fn split_statements(tokens: Vec<TokenWithSpan>) -> Vec<Vec<TokenWithSpan>> {
    let mut statements = vec![Vec::new()];
    for token in tokens {
        let separator = token.token == Token::SemiColon;
        statements.last_mut().expect("one statement at least").push(token);
        if separator {
            statements.push(Vec::new());
        }
    }
    statements.retain(|s| s.iter().any(|t| !matches!(t.token, Token::Whitespace(_) | Token::SemiColon | Token::EOF)));
    statements
}

/// Spark's escapes in string literals (`unescapeSQLString`): `\'`, `\"`, `\\`, `\n`, `\t`,
/// `\r`, `\b`, `\0`, `\Z` and `\uXXXX` are the characters they name, `\%` and `\_` stay as
/// written (for `LIKE`), and a backslash before any other character is dropped. The text is
/// rewritten with each literal in the standard form the tokenizer reads (a quote doubled);
/// comments and quoted identifiers are left as they are.
fn spark_escapes(sql: &str) -> std::borrow::Cow<'_, str> {
    if !sql.contains('\\') {
        return std::borrow::Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\'' | '"' => {
                while let Some(inner) = chars.next() {
                    match inner {
                        '\\' => {
                            let escaped = unescaped(&mut chars);
                            for e in escaped.chars() {
                                out.push(e);
                                if e == c {
                                    out.push(c);
                                }
                            }
                        }
                        q if q == c && chars.peek() == Some(&c) => {
                            out.push(q);
                            out.push(chars.next().expect("peeked"));
                        }
                        q if q == c => {
                            out.push(q);
                            break;
                        }
                        other => out.push(other),
                    }
                }
            }
            '`' => out.extend(chars.by_ref().take_while(|&x| x != '`').chain(std::iter::once('`'))),
            '-' if chars.peek() == Some(&'-') => {
                out.extend(chars.by_ref().take_while(|&x| x != '\n').chain(std::iter::once('\n')));
            }
            '/' if chars.peek() == Some(&'*') => {
                let mut previous = ' ';
                for x in chars.by_ref() {
                    out.push(x);
                    if previous == '*' && x == '/' {
                        break;
                    }
                    previous = x;
                }
            }
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// What the escape the next characters of `chars` (those after a backslash) stands for.
fn unescaped(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    match chars.next() {
        Some('0') => "\0".to_owned(),
        Some('b') => "\u{8}".to_owned(),
        Some('n') => "\n".to_owned(),
        Some('r') => "\r".to_owned(),
        Some('t') => "\t".to_owned(),
        Some('Z') => "\u{1a}".to_owned(),
        Some(k @ ('%' | '_')) => format!("\\{k}"),
        Some('u') => {
            let hex: String = (0..4).filter_map(|_| chars.next()).collect();
            u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32).map_or(hex, String::from)
        }
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Spark's typed number literals (`10L`, `7S`, `1Y`, `1.5D`, `1.5F`, `1.5BD`: a number and, with
/// no space between, a suffix the tokenizer reads as a word), as the casts they mean:
/// `CAST('1.5' AS DOUBLE)` — from the literal's text, so that the value is the one the text
/// names, not a decimal's conversion —, `CAST(10 AS BIGINT)`; `BD` is a `DECIMAL` of the digits
/// written (`1.5BD` is a `decimal(2,1)`, `10BD` a `decimal(2,0)`).
fn spark_literals(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        let suffix = match (&token.token, tokens.peek().map(|t| &t.token)) {
            (Token::Number(_, false), Some(Token::Word(w))) if w.quote_style.is_none() => w.value.to_uppercase(),
            _ => {
                out.push(token);
                continue;
            }
        };
        let Token::Number(number, _) = &token.token else { unreachable!("matched a number") };
        let digits = number.chars().filter(char::is_ascii_digit).count();
        let scale = number.split_once('.').map_or(0, |(_, fraction)| fraction.len());
        let (type_name, quoted) = match suffix.as_str() {
            "L" => ("BIGINT".to_owned(), false),
            "S" => ("SMALLINT".to_owned(), false),
            "Y" => ("TINYINT".to_owned(), false),
            "D" => ("DOUBLE".to_owned(), true),
            "F" => ("FLOAT".to_owned(), true),
            "BD" => (format!("DECIMAL({}, {scale})", digits.max(1)), false),
            _ => {
                out.push(token);
                continue;
            }
        };
        tokens.next();
        let span = token.span;
        let text = format!("CAST({} AS {type_name})", if quoted { format!("'{number}'") } else { number.clone() });
        let cast = Tokenizer::new(&SparkSqlDialect {}, &text).tokenize().unwrap_or_default();
        out.extend(cast.into_iter().map(|token| TokenWithSpan { token, span }));
    }
    out
}

/// `EXTRACT(field FROM x)` as `date_part('field', x)`, which Spark's `EXTRACT` is: the parser
/// knows not every field Spark does (`DAYOFWEEK_ISO`, `YEAROFWEEK`).
fn spark_extract(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let significant: Vec<usize> =
        (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    let word = |token: &Token, keyword: Option<&str>| match token {
        Token::Word(w) if w.quote_style.is_none() => keyword.is_none_or(|k| w.value.eq_ignore_ascii_case(k)),
        _ => false,
    };
    let calls: Vec<[usize; 4]> = significant
        .windows(4)
        .map(|w| [w[0], w[1], w[2], w[3]])
        .filter(|&[extract, open, field, from]| {
            word(&tokens[extract].token, Some("EXTRACT"))
                && tokens[open].token == Token::LParen
                && word(&tokens[field].token, None)
                && word(&tokens[from].token, Some("FROM"))
        })
        .collect();
    for [extract, _, field, from] in calls {
        let Token::Word(name) = &tokens[field].token else { continue };
        tokens[field].token = Token::SingleQuotedString(name.value.clone());
        tokens[extract].token = Token::make_word("date_part", None);
        tokens[from].token = Token::Comma;
    }
    tokens
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

/// Moves the column list Spark's grammar puts after an INSERT's `PARTITION` clause
/// (`INSERT OVERWRITE t PARTITION (dt = $dt) (a, b) SELECT …`) before it, where the parser reads
/// it (`INSERT OVERWRITE t (a, b) PARTITION (dt = $dt) SELECT …`). Only a parenthesized list of
/// names directly after the `PARTITION (…)` of an INSERT moves; a parenthesized query stays.
fn spark_insert_columns(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let words: Vec<usize> = (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    // The group opened at `words[open]`: the index of its closing parenthesis in `words`.
    let group = |open: usize| {
        let opens = words.get(open).is_some_and(|&i| tokens[i].token == Token::LParen);
        if opens { closing(&tokens, &words, open) } else { None }
    };
    let mut in_insert = false;
    let mut moves = Vec::new();
    for (at, &i) in words.iter().enumerate() {
        let keyword = if let Token::Word(w) = &tokens[i].token { w.keyword } else { Keyword::NoKeyword };
        match keyword {
            _ if tokens[i].token == Token::SemiColon => in_insert = false,
            Keyword::SELECT | Keyword::VALUES | Keyword::WITH => in_insert = false,
            Keyword::INSERT => in_insert = true,
            Keyword::PARTITION if in_insert => {
                in_insert = false;
                let Some(spec_close) = group(at + 1) else { continue };
                let Some(list_close) = group(spec_close + 1) else { continue };
                if names_only(&tokens, &words[spec_close + 2..list_close]) {
                    moves.push((i, words[spec_close + 1], words[list_close]));
                }
            }
            _ => {}
        }
    }
    for (partition, list_open, list_close) in moves.into_iter().rev() {
        let list: Vec<TokenWithSpan> = tokens.drain(list_open..=list_close).collect();
        let space = TokenWithSpan { token: Token::Whitespace(Whitespace::Space), span: list[0].span };
        tokens.splice(partition..partition, list.into_iter().chain(std::iter::once(space)));
    }
    tokens
}

/// The closing parenthesis of the group `words[open]` opens, as an index into `words` (the tokens
/// that are not whitespace).
fn closing(tokens: &[TokenWithSpan], words: &[usize], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (at, &i) in words.iter().enumerate().skip(open) {
        match tokens[i].token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether `words` are names separated by commas: a column list, not a query.
fn names_only(tokens: &[TokenWithSpan], words: &[usize]) -> bool {
    !words.is_empty()
        && words.iter().all(|&j| match &tokens[j].token {
            Token::Word(w) => {
                w.quote_style.is_some() || !matches!(w.keyword, Keyword::SELECT | Keyword::VALUES | Keyword::WITH)
            }
            Token::Comma => true,
            _ => false,
        })
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
pub(crate) fn as_written(printed: &str) -> String {
    printed
        .replace(&format!("UPDATE SET {ALL_COLUMNS} = {ALL_COLUMNS}"), "UPDATE SET *")
        .replace("THEN INSERT ROW", "THEN INSERT *")
}

#[cfg(test)]
mod tests {
    use super::spark_escapes;

    #[test]
    fn spark_escapes_become_the_characters_they_name() {
        assert_eq!(
            spark_escapes(r"SELECT 'it\'s', 'a\tb', 'x\%', 'caf\u00e9'"),
            "SELECT 'it''s', 'a\tb', 'x\\%', 'café'"
        );
        // Comments and identifiers keep their backslashes.
        assert_eq!(spark_escapes("SELECT `a\\b` -- c\\d\n"), "SELECT `a\\b` -- c\\d\n");
        assert_eq!(spark_escapes(r#"SELECT "say \"hi\"""#), r#"SELECT "say ""hi""""#);
    }
}
