//! The checks of the files a scan reads: not empty, readable Parquet, and columns that read as
//! the dataset's (compatible drift).

use std::borrow::Cow;
use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::Session;
use datafusion::datasource::file_format::FileFormat;
use datafusion::error::Result as DfResult;
use object_store::ObjectMeta;

use super::RawTable;

impl RawTable {
    /// Fails where a file is empty, not readable Parquet, or has drifted incompatibly.
    pub(super) async fn check(&self, state: &dyn Session, files: &[ObjectMeta]) -> DfResult<()> {
        for file in files {
            let key = (file.location.clone(), file.size, file.last_modified);
            if self.checked.lock().is_ok_and(|checked| checked.contains(&key)) {
                continue;
            }
            if file.size == 0 {
                return Err(self.file_error(&file.location, "is empty (0 bytes), not a Parquet file".to_owned()));
            }
            let schema = self
                .format
                .infer_schema(state, &self.store, std::slice::from_ref(file))
                .await
                .map_err(|e| self.file_error(&file.location, format!("is not a readable Parquet file: {e}")))?;
            for field in schema.fields() {
                if let Ok(expected) = self.file_schema.field_with_name(field.name())
                    && !readable_as(field.data_type(), expected.data_type())
                {
                    return Err(self.file_error(
                        &file.location,
                        format!(
                            "has column `{}` as {}, which cannot be read as the dataset's {} (as its newest readable file {} has it)",
                            field.name(),
                            field.data_type(),
                            expected.data_type(),
                            self.display(&self.schema_from)
                        ),
                    ));
                }
            }
            if let Ok(mut checked) = self.checked.lock() {
                checked.insert(key);
            }
        }
        Ok(())
    }
}

/// The type a value is compared by: encodings (views, large and dictionary types) aside.
fn plain(data_type: &DataType) -> Cow<'_, DataType> {
    match data_type {
        DataType::Utf8View | DataType::LargeUtf8 => Cow::Owned(DataType::Utf8),
        DataType::BinaryView | DataType::LargeBinary => Cow::Owned(DataType::Binary),
        DataType::Dictionary(_, value) => plain(value),
        other => Cow::Borrowed(other),
    }
}

/// A time zone, with the spellings of UTC as one.
fn utc(tz: Option<&Arc<str>>) -> Option<&str> {
    tz.map(|z| if matches!(z.as_ref(), "+00:00" | "Z" | "utc") { "UTC" } else { z.as_ref() })
}

/// Whether a column stored as `file` in one file reads losslessly as the dataset's `dataset`.
fn readable_as(file: &DataType, dataset: &DataType) -> bool {
    use DataType as D;
    let (file, dataset) = (plain(file), plain(dataset));
    if file == dataset {
        return true;
    }
    let rank = |t: &D| match t {
        D::Int8 => Some((0, 1)),
        D::Int16 => Some((0, 2)),
        D::Int32 => Some((0, 3)),
        D::Int64 => Some((0, 4)),
        D::UInt8 => Some((1, 1)),
        D::UInt16 => Some((1, 2)),
        D::UInt32 => Some((1, 3)),
        D::UInt64 => Some((1, 4)),
        D::Float16 => Some((2, 1)),
        D::Float32 => Some((2, 2)),
        D::Float64 => Some((2, 3)),
        _ => None,
    };
    match (file.as_ref(), dataset.as_ref()) {
        (D::Timestamp(_, a), D::Timestamp(_, b)) => utc(a.as_ref()) == utc(b.as_ref()),
        (D::Decimal128(p1, s1), D::Decimal128(p2, s2)) => s1 == s2 && p1 <= p2,
        (
            D::List(a) | D::LargeList(a) | D::FixedSizeList(a, _),
            D::List(b) | D::LargeList(b) | D::FixedSizeList(b, _),
        )
        | (D::Map(a, _), D::Map(b, _)) => readable_as(a.data_type(), b.data_type()),
        // By name: a field missing from the file reads as NULL, one the dataset lacks is not read.
        (D::Struct(a), D::Struct(b)) => a
            .iter()
            .all(|f| b.iter().find(|g| g.name() == f.name()).is_none_or(|g| readable_as(f.data_type(), g.data_type()))),
        (a, b) => match (rank(a), rank(b)) {
            (Some((fa, wa)), Some((fb, wb))) => (fa == fb && wa <= wb) || (fa == 1 && fb == 0 && wa < wb),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::Field;

    use super::*;

    #[test]
    fn compatible_drift_reads_and_incompatible_does_not() {
        use datafusion::arrow::datatypes::TimeUnit;
        assert!(readable_as(&DataType::Int32, &DataType::Int64));
        assert!(readable_as(&DataType::UInt32, &DataType::Int64));
        assert!(readable_as(&DataType::Utf8, &DataType::Utf8View));
        assert!(readable_as(&DataType::Decimal128(10, 2), &DataType::Decimal128(12, 2)));
        assert!(readable_as(
            &DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        ));
        assert!(!readable_as(&DataType::Int64, &DataType::Int32), "narrowing");
        assert!(!readable_as(&DataType::Utf8, &DataType::Float64));
        assert!(!readable_as(&DataType::Decimal128(12, 3), &DataType::Decimal128(12, 2)));
        assert!(!readable_as(&DataType::UInt64, &DataType::Int64));

        let item = |t: DataType, nullable: bool| Arc::new(Field::new("item", t, nullable));
        assert!(readable_as(
            &DataType::LargeList(item(DataType::Int32, false)),
            &DataType::List(item(DataType::Int64, true))
        ));
        let st = |fields: Vec<Field>| DataType::Struct(fields.into());
        let dataset = st(vec![Field::new("a", DataType::Int64, true), Field::new("b", DataType::Utf8View, true)]);
        assert!(readable_as(&st(vec![Field::new("a", DataType::Int32, false)]), &dataset), "b missing: NULL");
        assert!(readable_as(&st(vec![Field::new("c", DataType::Int32, false)]), &dataset), "c not read");
        assert!(!readable_as(&st(vec![Field::new("a", DataType::Utf8, true)]), &dataset));
        assert!(readable_as(
            &DataType::Timestamp(TimeUnit::Millisecond, Some("+00:00".into())),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        ));
    }
}
