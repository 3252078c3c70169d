//! Raw Parquet datasets: `<root>/<schema>/<table>/` folders of Parquet files, with hive-style
//! `key=value` folders as partition columns. Only ever read.
//!
//! Opening a dataset costs the same whatever its history:
//! - **Partition columns** come from folder names. The top folder is listed once (names only), and
//!   then only the newest folder is descended. A key is typed `DATE` where its values are dates
//!   (`YYYY-MM-DD`), else `STRING`. Folders whose name starts with `_` or `.` (`_tmp`, `.staging`)
//!   are not partitions and are never read; neither are folders that are not `key=value` or whose
//!   value is not a date under a `DATE` key (`dt=2026-13-45`): they are logged, and they change no
//!   column's type.
//! - **The schema** is that of the newest readable file: the newest partition's files, newest
//!   first, skipping (with a warning) a file that is empty or cannot be read. Every column is
//!   nullable.
//!
//! Reading checks only the files a scan reads (after partition pruning), before DataFusion opens
//! them: a zero-byte file, a file that is not readable Parquet, or one whose columns drifted
//! incompatibly from the dataset's schema fails the scan with an error naming the file and what
//! is wrong with it. Compatible drift is read: a column missing from an older file reads as NULL,
//! a column a file has beyond the dataset's is not read, nullability may differ, and a column may
//! be narrower in a file than in the dataset (an integer, float or decimal that widens losslessly,
//! a timestamp of another unit) or be another encoding of the same type (string views, large
//! strings, dictionaries).

use std::borrow::Cow;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{ScanArgs, ScanResult, Session, TableProvider};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::datasource::TableType;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::helpers::{
    evaluate_partition_prefix, expr_applicable_for_cols, filter_partitioned_file, parse_partitions_for_path,
};
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl, PartitionedFile,
};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::SessionState;
use datafusion::logical_expr::TableProviderFilterPushDown;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::Expr;
use futures::TryStreamExt;
use lakewriter_core::parse_date;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore};

use crate::catalog::TableEntry;
use crate::{Error, Result};

const EXTENSION: &str = ".parquet";

/// A raw dataset as DataFusion reads it: a listing table, and the checks of the files a scan reads.
#[derive(Debug)]
pub struct RawTable {
    name: String,
    /// The dataset's folder, for naming its files in errors.
    folder: url::Url,
    url: ListingTableUrl,
    store: Arc<dyn ObjectStore>,
    format: Arc<ParquetFormat>,
    partitions: Vec<(String, DataType)>,
    /// The dataset's columns without its partition columns.
    file_schema: SchemaRef,
    /// The file that set them (its newest readable file), for errors.
    schema_from: Path,
    /// The files checked so far in this command, as they were: each is read once.
    checked: std::sync::Mutex<std::collections::HashSet<(Path, u64, chrono::DateTime<chrono::Utc>)>>,
    /// Top-level folders DataFusion would misread as partitions (see [`Level`]): a scan that lists
    /// them fails, naming one.
    bad_values: Vec<String>,
    inner: ListingTable,
}

/// A folder name that is not data: `_tmp`, `.staging`, `_SUCCESS`, and the like.
fn hidden(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.')
}

/// One level of hive folders: its key and type, its partition folders oldest first, the folders
/// that are not partitions of it, and among those the ones DataFusion would read as partitions of
/// it although their value is not of its type (`dt=2026-13-45` under a `DATE` key).
struct Level {
    key: String,
    data_type: DataType,
    folders: Vec<Path>,
    invalid: Vec<String>,
    bad_values: Vec<String>,
}

/// The partition level below `prefix`, from the folder names in `prefixes`; `None` where there is
/// no `key=value` folder. The key is the one most folders have; it is `DATE` where any of its
/// values is a date, and then a value that is not one makes its folder invalid.
fn level(prefixes: Vec<Path>, key: Option<&(String, DataType)>) -> Option<Level> {
    let mut named: Vec<(String, String, Path)> = Vec::new();
    let mut invalid = Vec::new();
    for path in prefixes {
        let Some(name) = path.filename().map(str::to_owned) else { continue };
        if hidden(&name) {
            continue;
        }
        match name.split_once('=') {
            Some((k, v)) if !k.is_empty() => named.push((k.to_owned(), v.to_owned(), path)),
            _ => invalid.push(name),
        }
    }
    if named.is_empty() {
        return None;
    }
    let (key, data_type) = if let Some((key, data_type)) = key {
        (key.clone(), data_type.clone())
    } else {
        let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for (k, _, _) in &named {
            *counts.entry(k).or_default() += 1;
        }
        let key = counts.iter().max_by_key(|(_, n)| **n)?.0.to_string();
        // DATE where most values are dates: one odd folder changes no type, either way.
        let values: Vec<&String> = named.iter().filter(|(k, _, _)| *k == key).map(|(_, v, _)| v).collect();
        let dates = values.iter().filter(|v| parse_date(v).is_ok()).count();
        let data_type = if dates * 2 > values.len() { DataType::Date32 } else { DataType::Utf8 };
        (key, data_type)
    };
    let mut folders: Vec<(String, Path)> = Vec::new();
    let mut bad_values = Vec::new();
    for (k, v, path) in named {
        if k != key {
            invalid.push(format!("{k}={v}"));
        } else if data_type == DataType::Date32 && parse_date(&v).is_err() {
            invalid.push(format!("{k}={v}"));
            bad_values.push(format!("{k}={v}"));
        } else {
            folders.push((v, path));
        }
    }
    folders.sort();
    Some(Level { key, data_type, folders: folders.into_iter().map(|(_, p)| p).collect(), invalid, bad_values })
}

/// What opening a dataset finds: its partition columns, the top-level folders DataFusion would
/// misread (see [`Level`]), and its schema (`None` where no file is readable).
struct Layout {
    partitions: Vec<(String, DataType)>,
    bad_values: Vec<String>,
    schema: Option<(SchemaRef, Path)>,
}

/// The folders directly below `prefix`, and the files there where the listing gave them. On a
/// local disk the folder names come from the directory alone: object_store's local listing reads
/// the metadata of every entry, which for the top folder of a raw dataset is one per day of its
/// history.
async fn list_level(
    store: &dyn ObjectStore,
    prefix: &Path,
    local_dir: Option<std::path::PathBuf>,
) -> object_store::Result<(Vec<Path>, Option<Vec<ObjectMeta>>)> {
    if let Some(dir) = local_dir {
        let names =
            folder_names(&dir).map_err(|e| object_store::Error::Generic { store: "local", source: e.into() })?;
        // Parsed, not joined: `join` would percent-encode a name (`ts=10%3A00`) that object_store's
        // own listing keeps as it is, and the folder would no longer map back to the disk.
        let folders = names.into_iter().filter_map(|n| Path::parse(format!("{prefix}/{n}")).ok()).collect();
        return Ok((folders, None));
    }
    let listing = store.list_with_delimiter(Some(prefix)).await?;
    Ok((listing.common_prefixes, Some(listing.objects)))
}

/// The names of the folders in `dir` (none where it does not exist).
fn folder_names(dir: &std::path::Path) -> std::io::Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry?;
        let is_dir = match entry.file_type()? {
            t if t.is_symlink() => std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()),
            t => t.is_dir(),
        };
        if is_dir && let Ok(name) = entry.file_name().into_string() {
            names.push(name);
        }
    }
    Ok(names)
}

/// Walks the dataset depth first, newest folder first, down to the first leaf folder with a
/// readable file: one listing per level in the usual case, whatever the history.
async fn layout(
    state: &SessionState,
    store: &Arc<dyn ObjectStore>,
    format: &ParquetFormat,
    folder: &url::Url,
    root: &Path,
    table: &str,
) -> object_store::Result<Layout> {
    let mut found = Layout { partitions: Vec::new(), bad_values: Vec::new(), schema: None };
    let local_root = folder.to_file_path().ok().filter(|_| folder.scheme() == "file");
    let mut stack = vec![(root.clone(), 0_usize)];
    while let Some((prefix, depth)) = stack.pop() {
        let local_dir = local_root.as_ref().map(|dir| {
            prefix.prefix_match(root).into_iter().flatten().fold(dir.clone(), |d, part| d.join(part.as_ref()))
        });
        let (folders, objects) = list_level(store.as_ref(), &prefix, local_dir).await?;
        match level(folders, found.partitions.get(depth)) {
            Some(level) => {
                if !level.invalid.is_empty() {
                    let below: Vec<String> =
                        prefix.prefix_match(root).into_iter().flatten().map(|p| p.as_ref().to_owned()).collect();
                    let folders: Vec<String> = level
                        .invalid
                        .iter()
                        .map(|name| [below.as_slice(), std::slice::from_ref(name)].concat().join("/"))
                        .collect();
                    tracing::warn!(%table, ?folders, "folders that are not partitions are not read");
                }
                if depth == 0 {
                    found.bad_values = level.bad_values;
                }
                if found.partitions.len() == depth {
                    found.partitions.push((level.key, level.data_type));
                }
                stack.extend(level.folders.into_iter().map(|p| (p, depth + 1)));
            }
            None if depth == found.partitions.len() => {
                let objects = match objects {
                    Some(objects) => objects,
                    None => store.list_with_delimiter(Some(&prefix)).await?.objects,
                };
                let mut files: Vec<ObjectMeta> = objects
                    .into_iter()
                    .filter(|o| o.location.filename().is_some_and(|n| n.ends_with(EXTENSION) && !hidden(n)))
                    .collect();
                files.sort_by(|a, b| (b.last_modified, &b.location).cmp(&(a.last_modified, &a.location)));
                found.schema = newest_schema(state, store, format, table, files).await;
                if found.schema.is_some() {
                    break;
                }
            }
            None => {}
        }
    }
    Ok(found)
}

/// The schema of the newest readable file of `files` (newest first), every column nullable, and
/// that file.
async fn newest_schema(
    state: &SessionState,
    store: &Arc<dyn ObjectStore>,
    format: &ParquetFormat,
    table: &str,
    files: Vec<ObjectMeta>,
) -> Option<(SchemaRef, Path)> {
    for file in files {
        if file.size == 0 {
            tracing::warn!(%table, file = %file.location, "an empty file: the schema is read from an older one");
            continue;
        }
        match format.infer_schema(state, store, std::slice::from_ref(&file)).await {
            Ok(schema) => {
                let fields: Vec<Field> =
                    schema.fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect();
                return Some((Arc::new(Schema::new(fields)), file.location));
            }
            Err(e) => {
                tracing::warn!(%table, file = %file.location, error = %e, "an unreadable file: the schema is read from an older one");
            }
        }
    }
    None
}

impl RawTable {
    /// Opens the raw dataset `entry`; `None` for one with no readable Parquet file yet (a query
    /// naming it then fails with "table not found"). `state` needs only the session's object stores.
    pub async fn open(state: &SessionState, entry: &TableEntry) -> Result<Option<Arc<dyn TableProvider>>> {
        let name = entry.name.to_string();
        let err = |source| Error::RegisterRaw { table: name.clone(), url: entry.url.clone(), source: Box::new(source) };
        let url = ListingTableUrl::parse(entry.url.as_str()).map_err(err)?;
        let store = state.runtime_env().object_store(&url).map_err(err)?;
        let format = Arc::new(ParquetFormat::default());
        let Layout { partitions, bad_values, schema } = layout(state, &store, &format, &entry.url, url.prefix(), &name)
            .await
            .map_err(|e| err(DataFusionError::ObjectStore(Box::new(e))))?;
        let Some((file_schema, schema_from)) = schema else {
            tracing::warn!(table = %name, "no readable Parquet file yet: not queryable");
            return Ok(None);
        };
        let options = ListingOptions::new(format.clone())
            .with_file_extension(EXTENSION)
            .with_table_partition_cols(partitions.clone());
        let config =
            ListingTableConfig::new(url.clone()).with_listing_options(options).with_schema(file_schema.clone());
        let inner = ListingTable::try_new(config).map_err(err)?;
        Ok(Some(Arc::new(Self {
            name,
            folder: entry.url.clone(),
            url,
            store,
            format,
            partitions,
            file_schema,
            schema_from,
            checked: std::sync::Mutex::default(),
            bad_values,
            inner,
        })))
    }

    /// The dataset's partition columns, in folder order.
    #[must_use]
    pub fn partitions(&self) -> &[(String, DataType)] {
        &self.partitions
    }

    /// `file` as a URL below the dataset's folder.
    fn display(&self, file: &Path) -> String {
        let relative = self.url.strip_prefix(file).map(|parts| parts.collect::<Vec<_>>().join("/"));
        relative.map_or_else(|| file.to_string(), |r| format!("{}{r}", self.folder))
    }

    fn file_error(&self, file: &Path, problem: String) -> DataFusionError {
        DataFusionError::External(Box::new(Error::RawFile {
            table: self.name.clone(),
            file: self.display(file),
            problem,
        }))
    }

    /// The files a scan with `filters` reads — DataFusion's pruning, but keeping the zero-byte
    /// files it would silently skip.
    async fn files(&self, state: &dyn Session, filters: &[Expr]) -> DfResult<Vec<ObjectMeta>> {
        let names: Vec<&str> = self.partitions.iter().map(|(n, _)| n.as_str()).collect();
        let filters: Vec<Expr> =
            filters.iter().filter(|f| !names.is_empty() && expr_applicable_for_cols(&names, f)).cloned().collect();
        let prefix = evaluate_partition_prefix(&self.partitions, &filters);
        if prefix.is_none()
            && let Some(folder) = self.bad_values.first()
        {
            let (column, _) = &self.partitions[0];
            return Err(DataFusionError::External(Box::new(Error::RawFolder {
                table: self.name.clone(),
                folder: folder.clone(),
                column: column.clone(),
            })));
        }
        let schema = DFSchema::from_unqualified_fields(
            self.partitions.iter().map(|(n, t)| Field::new(n, t.clone(), true)).collect(),
            std::collections::HashMap::default(),
        )?;
        let listed: Vec<ObjectMeta> =
            self.url.list_prefixed_files(state, self.store.as_ref(), prefix, EXTENSION).await?.try_collect().await?;
        let mut files = Vec::new();
        for meta in listed {
            if meta.location.filename().is_some_and(hidden) {
                continue;
            }
            let Some(values) = parse_partitions_for_path(&self.url, &meta.location, names.iter().copied()) else {
                // DataFusion would skip it without a word: a day's files in folders other than
                // the ones the newest partition has would read as no rows.
                let layout: Vec<String> = names.iter().map(|n| format!("{n}=…")).collect();
                return Err(self.file_error(
                    &meta.location,
                    format!(
                        "lies outside the dataset's partition folders `{}/` (as its newest partition has them), so it would not be read",
                        layout.join("/")
                    ),
                ));
            };
            let mut file = PartitionedFile::from(meta.clone());
            for (value, (column, data_type)) in values.into_iter().zip(&self.partitions) {
                let value = ScalarValue::try_from_string(value.clone().into_owned(), data_type).map_err(|_| {
                    self.file_error(
                        &meta.location,
                        format!("lies in a folder whose `{column}` is not a {data_type}: `{value}`"),
                    )
                })?;
                file.partition_values.push(value);
            }
            if filter_partitioned_file(file, &filters, &schema)?.is_some() {
                files.push(meta);
            }
        }
        Ok(files)
    }

    /// Fails where a file is empty, not readable Parquet, or has drifted incompatibly.
    async fn check(&self, state: &dyn Session, files: &[ObjectMeta]) -> DfResult<()> {
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

#[async_trait]
impl TableProvider for RawTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> DfResult<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let args = ScanArgs::default()
            .with_projection(projection.map(Vec::as_slice))
            .with_filters(Some(filters))
            .with_limit(limit);
        Ok(self.scan_with_args(state, args).await?.into_inner())
    }

    async fn scan_with_args<'a>(&self, state: &dyn Session, args: ScanArgs<'a>) -> DfResult<ScanResult> {
        let files = self.files(state, args.filters().unwrap_or_default()).await?;
        self.check(state, &files).await?;
        self.inner.scan_with_args(state, args).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(names: &[&str]) -> Vec<Path> {
        names.iter().map(|n| Path::from(format!("raw/orders/{n}"))).collect()
    }

    #[test]
    fn a_bad_folder_changes_no_type_and_hidden_ones_are_not_data() {
        let found =
            level(paths(&["dt=2026-09-02", "dt=2026-13-45", "_tmp", ".staging", "dt=2026-09-01", "misc"]), None)
                .expect("a level");
        assert_eq!((found.key.as_str(), &found.data_type), ("dt", &DataType::Date32));
        let names: Vec<_> = found.folders.iter().filter_map(|p| p.filename().map(str::to_owned)).collect();
        assert_eq!(names, ["dt=2026-09-01", "dt=2026-09-02"], "oldest first");
        assert_eq!(found.invalid, ["misc", "dt=2026-13-45"]);
        assert_eq!(found.bad_values, ["dt=2026-13-45"]);

        let strings = level(paths(&["region=eu", "region=us"]), None).expect("a level");
        assert_eq!(strings.data_type, DataType::Utf8);
        assert!(strings.invalid.is_empty() && strings.bad_values.is_empty());
        assert!(level(paths(&["_tmp", "notes"]), None).is_none(), "no partition folder");

        let one_date = level(paths(&["region=eu", "region=us", "region=2026-01-01"]), None).expect("a level");
        assert_eq!(one_date.data_type, DataType::Utf8, "one date-like value types no key DATE");
        assert_eq!(one_date.folders.len(), 3);
    }

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
