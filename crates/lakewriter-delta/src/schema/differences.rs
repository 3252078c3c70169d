//! How a result's columns differ from its table's, in Delta's names for types.

use arrow::datatypes::{DataType, Field, Schema};

use super::{same_storage, storage_type};

/// The name Delta gives the type a column of `data_type` is stored as: `string`, `integer`,
/// `long`, `decimal(10,2)`, `timestamp`, `timestamp_ntz`, `date`, `array<string>`,
/// `struct<a:integer,b:string>`, `map<string,long>`; Arrow's name for a type Delta cannot store.
#[must_use]
pub fn delta_type_name(data_type: &DataType) -> String {
    use DataType as D;
    let Ok(stored) = storage_type(data_type) else { return data_type.to_string() };
    let name = match &stored {
        D::Boolean => "boolean",
        D::Int8 => "byte",
        D::Int16 => "short",
        D::Int32 => "integer",
        D::Int64 => "long",
        D::Float32 => "float",
        D::Float64 => "double",
        D::Date32 => "date",
        D::Utf8 => "string",
        D::Binary => "binary",
        D::Timestamp(_, Some(_)) => "timestamp",
        D::Timestamp(_, None) => "timestamp_ntz",
        D::Decimal128(p, s) => return format!("decimal({p},{s})"),
        D::List(item) => return format!("array<{}>", delta_type_name(item.data_type())),
        D::Struct(fields) => {
            let each: Vec<String> =
                fields.iter().map(|f| format!("{}:{}", f.name(), delta_type_name(f.data_type()))).collect();
            return format!("struct<{}>", each.join(","));
        }
        D::Map(entries, _) => match entries.data_type() {
            D::Struct(pair) if pair.len() == 2 => {
                return format!(
                    "map<{},{}>",
                    delta_type_name(pair[0].data_type()),
                    delta_type_name(pair[1].data_type())
                );
            }
            _ => return stored.to_string(),
        },
        other => return other.to_string(),
    };
    name.to_owned()
}

/// One way a result's columns differ from its table's; types are named as Delta names them
/// ([`delta_type_name`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// A column of the table the result does not have.
    Missing { column: String, stored: String },
    /// A column of the result the table does not have.
    Extra { column: String, stored: String },
    /// A column of another type than the table's.
    Changed { column: String, table: String, result: String },
    /// A column of the table missing from the result where the result has a column the table
    /// does not, of the same type and at the same position: most likely renamed.
    Renamed { from: String, to: String, stored: String },
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing { column, stored } => write!(f, "column `{column}` ({stored}) is missing from the result"),
            Self::Extra { column, stored } => write!(f, "column `{column}` ({stored}) is not in the table"),
            Self::Changed { column, table, result } => {
                write!(f, "column `{column}` is {table} in the table but {result} in the result")
            }
            Self::Renamed { from, to, stored } => write!(
                f,
                "column `{from}` ({stored}) is missing from the result and `{to}` ({stored}) in its place is not in the table: it looks like a rename; a table's columns keep their names, so name it `{from}` again (`… AS {from}`), or give the new name a new table (a rebuild, or a new target)"
            ),
        }
    }
}

/// How `result` differs from `table`, column by column; empty where they match by name and
/// stored type (column order and nullability aside).
#[must_use]
pub fn column_differences(table: &Schema, result: &Schema) -> Vec<Difference> {
    let mut out = Vec::new();
    let is_extra = |field: &Field| table.field_with_name(field.name()).is_err();
    let mut renamed_to = Vec::new();
    for (i, field) in table.fields().iter().enumerate() {
        let stored = delta_type_name(field.data_type());
        match result.field_with_name(field.name()) {
            Err(_) => match result.fields().get(i) {
                Some(to) if is_extra(to) && same_storage(field.data_type(), to.data_type()) => {
                    renamed_to.push(to.name().clone());
                    out.push(Difference::Renamed { from: field.name().clone(), to: to.name().clone(), stored });
                }
                _ => out.push(Difference::Missing { column: field.name().clone(), stored }),
            },
            Ok(r) if !same_storage(field.data_type(), r.data_type()) => out.push(Difference::Changed {
                column: field.name().clone(),
                table: stored,
                result: delta_type_name(r.data_type()),
            }),
            Ok(_) => {}
        }
    }
    for field in result.fields() {
        if is_extra(field) && !renamed_to.contains(field.name()) {
            out.push(Difference::Extra { column: field.name().clone(), stored: delta_type_name(field.data_type()) });
        }
    }
    out
}

/// [`column_differences`], one line each.
#[must_use]
pub fn differences(table: &Schema, result: &Schema) -> Vec<String> {
    column_differences(table, result).iter().map(ToString::to_string).collect()
}
