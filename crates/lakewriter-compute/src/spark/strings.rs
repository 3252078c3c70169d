//! Spark's string functions where DataFusion's answer differs: `initcap` (`InitCap`, Spark's
//! `UTF8String.toLowerCase().toTitleCase()`) lowers the whole text and title-cases the first
//! character and each one after a space, and only those (`a,b` stays `A,b`, where DataFusion's
//! starts a word after any character that is not a letter or digit).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

/// The functions of this module.
pub(crate) fn functions() -> Vec<Arc<ScalarUDF>> {
    vec![Arc::new(ScalarUDF::new_from_impl(InitCap { signature: Signature::string(1, Volatility::Immutable) }))]
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct InitCap {
    signature: Signature,
}

/// Java's `Character.toTitleCase(char)`: the simple title-case mapping of a character of the
/// Basic Multilingual Plane (one UTF-16 unit; the others stay as they are, as Java's `char` does).
fn title_case(c: char) -> char {
    match u32::from(c) {
        // The digraphs, whose title case is their middle form (`ǆ` → `ǅ`).
        0x01c4..=0x01c6 => '\u{01c5}',
        0x01c7..=0x01c9 => '\u{01c8}',
        0x01ca..=0x01cc => '\u{01cb}',
        0x01f1..=0x01f3 => '\u{01f2}',
        // Greek with a subscript iota: the title-case form keeps the iota as a subscript.
        n @ (0x1f80..=0x1f87 | 0x1f90..=0x1f97 | 0x1fa0..=0x1fa7) => char::from_u32(n + 8).unwrap_or(c),
        0x1fb3 => '\u{1fbc}',
        0x1fc3 => '\u{1fcc}',
        0x1ff3 => '\u{1ffc}',
        n if n > 0xffff => c,
        _ => {
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(one), None) => one,
                // No single character (`ß`): Java's simple mapping keeps it.
                _ => c,
            }
        }
    }
}

/// `text` as Spark's `initcap` gives it.
fn initcap(text: &str) -> String {
    let mut after_space = true;
    text.to_lowercase()
        .chars()
        .map(|c| {
            let out = if after_space { title_case(c) } else { c };
            after_space = c == ' ';
            out
        })
        .collect()
}

impl ScalarUDFImpl for InitCap {
    fn name(&self) -> &'static str {
        "initcap"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        if args.len() == 1 { Ok(DataType::Utf8) } else { exec_err!("initcap takes one argument, not {}", args.len()) }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let text: ArrayRef = cast(&args.args[0].to_array(args.number_rows)?, &DataType::Utf8)?;
        let Some(text) = text.as_any().downcast_ref::<StringArray>() else {
            return exec_err!("initcap of {}", text.data_type());
        };
        let out: StringArray = text.iter().map(|v| v.map(initcap)).collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::initcap;

    #[test]
    fn initcap_starts_a_word_only_after_a_space() {
        assert_eq!(initcap("spark SQL a,b"), "Spark Sql A,b");
        assert_eq!(initcap("  padded-text"), "  Padded-text");
        assert_eq!(initcap("ünïcödé straße ǆemal"), "Ünïcödé Straße ǅemal");
        assert_eq!(initcap("\u{10428}x"), "\u{10428}x");
    }
}
