//! Spark's interval literal with its unit inside the string, read as the parser reads one.

use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

/// Spark's interval literal with its unit inside the string (`INTERVAL '6 days'`, `INTERVAL
/// '-1 month'`), which the parser's Spark dialect does not read, as the same interval with the
/// unit after it (`INTERVAL '6' DAY`); a week is 7 days. A string of several units is left as it
/// is (the parser then says an interval needs its unit).
pub(super) fn spark_intervals(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let significant: Vec<usize> =
        (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    let mut rewrites: Vec<(usize, String, &str)> = Vec::new();
    for (n, &at) in significant.iter().enumerate() {
        let is_interval = matches!(&tokens[at].token, Token::Word(w) if w.keyword == Keyword::INTERVAL);
        let Some(&literal) = significant.get(n + 1) else { continue };
        let Token::SingleQuotedString(text) = &tokens[literal].token else { continue };
        let unit_follows = significant.get(n + 2).is_some_and(|&i| matches!(&tokens[i].token, Token::Word(w) if w.quote_style.is_none() && interval_unit(&w.value).is_some()));
        if !is_interval || unit_follows {
            continue;
        }
        let parts: Vec<&str> = text.split_whitespace().collect();
        let [count, unit] = parts.as_slice() else { continue };
        let (Ok(count), Some((unit, days))) = (count.parse::<i64>(), interval_unit(unit)) else { continue };
        let count = if days { count.checked_mul(7) } else { Some(count) };
        if let Some(count) = count {
            rewrites.push((literal, count.to_string(), unit));
        }
    }
    for (literal, count, unit) in rewrites.into_iter().rev() {
        let span = tokens[literal].span;
        tokens[literal].token = Token::SingleQuotedString(count);
        let unit = [Token::Whitespace(Whitespace::Space), Token::make_keyword(unit)];
        tokens.splice((literal + 1)..=literal, unit.into_iter().map(|token| TokenWithSpan { token, span }));
    }
    tokens
}

/// The interval unit `word` names (singular or plural, any case), and whether it is a week
/// (counted as 7 days).
fn interval_unit(word: &str) -> Option<(&'static str, bool)> {
    let word = word.to_ascii_uppercase();
    let unit = match word.strip_suffix('S').unwrap_or(&word) {
        "YEAR" => "YEAR",
        "MONTH" => "MONTH",
        "WEEK" => return Some(("DAY", true)),
        "DAY" => "DAY",
        "HOUR" => "HOUR",
        "MINUTE" => "MINUTE",
        "SECOND" => "SECOND",
        _ => return None,
    };
    Some((unit, false))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_interval_with_its_unit_inside_the_string_is_read_with_the_unit_after_it() {
        let sql = |text: &str| crate::parser::statements(text, "spark").expect(text)[0].to_string();
        assert_eq!(sql("SELECT d - INTERVAL '6 days'"), "SELECT d - INTERVAL '6' DAY");
        assert_eq!(
            sql("SELECT d + interval '-1 Month', INTERVAL '2 weeks'"),
            "SELECT d + INTERVAL '-1' MONTH, INTERVAL '14' DAY"
        );
        assert_eq!(
            sql("SELECT INTERVAL '3' HOUR, 'INTERVAL' || '1 day'"),
            "SELECT INTERVAL '3' HOUR, 'INTERVAL' || '1 day'"
        );
        assert!(crate::parser::statements("SELECT INTERVAL '1 day 2 hours'", "spark").is_err());
    }
}
