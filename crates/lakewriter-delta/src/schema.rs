//! Comparing a result's schema with its target table's.
//!
//! delta-rs casts a result to the table's types where it can (a string column into a decimal
//! one, say). lakewriter refuses instead: a job whose output changed shape is a bug to fix, not
//! data to coerce.

use arrow::datatypes::{DataType, Schema};

/// The type a column is compared and hashed as: string and binary views and dictionaries are
/// physical encodings of the plain types, not different types; and Delta has no unsigned
/// integers, so a table stores an unsigned column (`ROW_NUMBER()`'s, say) as the signed type of
/// the same width.
#[must_use]
pub fn canonical_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Dictionary(_, value) => canonical_type(value),
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        DataType::BinaryView | DataType::LargeBinary => DataType::Binary,
        DataType::UInt8 => DataType::Int8,
        DataType::UInt16 => DataType::Int16,
        DataType::UInt32 => DataType::Int32,
        DataType::UInt64 => DataType::Int64,
        other => other.clone(),
    }
}

/// How `result` differs from `table`, one line per column; empty where they match by name and
/// type (column order and nullability aside).
#[must_use]
pub fn differences(table: &Schema, result: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    for field in table.fields() {
        match result.field_with_name(field.name()) {
            Err(_) => out.push(format!("column `{}` ({}) is missing from the result", field.name(), field.data_type())),
            Ok(r) if canonical_type(r.data_type()) != canonical_type(field.data_type()) => out.push(format!(
                "column `{}` is {} in the table but {} in the result",
                field.name(),
                field.data_type(),
                r.data_type()
            )),
            Ok(_) => {}
        }
    }
    for field in result.fields() {
        if table.field_with_name(field.name()).is_err() {
            out.push(format!("column `{}` ({}) is not in the table", field.name(), field.data_type()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::Field;

    #[test]
    fn names_every_difference_and_ignores_encodings() {
        let table = Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("v", DataType::Decimal128(22, 2), true),
        ]);
        let same = Schema::new(vec![
            Field::new("s", DataType::Utf8View, false),
            Field::new("k", DataType::UInt64, true),
            Field::new("v", DataType::Decimal128(22, 2), true),
        ]);
        assert!(differences(&table, &same).is_empty(), "an unsigned long is stored as a long");
        let other = Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("v", DataType::Utf8, true),
            Field::new("extra", DataType::Int32, true),
        ]);
        assert_eq!(
            differences(&table, &other),
            [
                "column `s` (Utf8) is missing from the result",
                "column `v` is Decimal128(22, 2) in the table but Utf8 in the result",
                "column `extra` (Int32) is not in the table",
            ]
        );
    }
}
