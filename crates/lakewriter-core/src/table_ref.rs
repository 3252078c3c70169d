use std::fmt;

use crate::{Error, Result};

/// A table of the lakehouse, `schema.table`, stored at `<root>/<schema>/<table>/`.
///
/// Both parts are plain identifiers, so a name can never escape the root as a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableRef {
    schema: String,
    table: String,
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl TableRef {
    pub fn new(schema: &str, table: &str) -> Result<Self> {
        if is_identifier(schema) && is_identifier(table) {
            Ok(Self { schema: schema.to_owned(), table: table.to_owned() })
        } else {
            Err(Error::InvalidTableRef { value: format!("{schema}.{table}") })
        }
    }

    /// Parses `schema.table`.
    pub fn parse(value: &str) -> Result<Self> {
        let invalid = || Error::InvalidTableRef { value: value.to_owned() };
        let (schema, table) = value.split_once('.').ok_or_else(invalid)?;
        Self::new(schema, table).map_err(|_| invalid())
    }

    #[must_use]
    pub fn schema(&self) -> &str {
        &self.schema
    }

    #[must_use]
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The table's folder relative to the lakehouse root, with a trailing slash.
    #[must_use]
    pub fn relative_dir(&self) -> String {
        format!("{}/{}/", self.schema, self.table)
    }
}

/// As `schema.table`.
impl serde::Serialize for TableRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl fmt::Display for TableRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.schema, self.table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_schema_dot_table() {
        let t = TableRef::parse("analytics.daily_orders").unwrap();
        assert_eq!((t.schema(), t.table()), ("analytics", "daily_orders"));
        assert_eq!(t.relative_dir(), "analytics/daily_orders/");
        assert_eq!(t.to_string(), "analytics.daily_orders");
        for bad in ["orders", "a.b.c", "../x.y", "a./", ".b", "1a.b", "a.b-c", "a b.c"] {
            assert!(TableRef::parse(bad).is_err(), "{bad}");
        }
    }
}
