//! What opening a raw dataset finds: its partition columns from folder names, the folders that
//! are not partitions, and its schema from the newest readable file.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::execution::SessionState;
use lakewriter_core::parse_date;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore};

use super::EXTENSION;

/// A folder name that is not data: `_tmp`, `.staging`, `_SUCCESS`, and the like.
pub(super) fn hidden(name: &str) -> bool {
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

/// The partition level of the folders `prefixes` (the folders below one prefix); `None` where
/// there is no `key=value` folder. Its key and type are `key` where the level was seen already,
/// else the key most folders have, typed `DATE` where most of its values are dates; under a
/// `DATE` key, a value that is not a date makes its folder invalid.
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
pub(super) struct Layout {
    pub(super) partitions: Vec<(String, DataType)>,
    pub(super) bad_values: Vec<String>,
    pub(super) schema: Option<(SchemaRef, Path)>,
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
pub(super) async fn layout(
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
}
