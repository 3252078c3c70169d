//! Text put into markup: the one escaping of the report's HTML page and the JUnit XML file.

/// `text` as the character data or an attribute's value of XML 1.0 or HTML: `&`, `<`, `>`, `"`
/// and `'` as references (`'` as `&#39;`, which both read), and the control characters XML cannot
/// hold (all but tab, line feed and carriage return) written as `?`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_and_the_control_characters_xml_cannot_hold_are_escaped() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
        assert_eq!(escape("a\u{1}\tb\r\nc\u{FFFE}"), "a?\tb\r\nc?");
    }
}
