//! The paths by which the Delta log names a table's data files, read and written one way.
//!
//! A data file lives at an object below the table's folder; its key there is the file's *relative
//! path* (`region=%C3%AF/part-00000-….parquet`: the partition folder as its writer named it, then
//! the file). The log's `add` and `remove` actions hold that path URI-encoded, as the Delta
//! protocol says (`region=%25C3%25AF/part-00000-….parquet`), and a reader decodes it once.
//!
//! - Reading the log, lakewriter [`decode`]s each path once, as delta-rs does: the relative path
//!   is what lakewriter's file list, its own commits and delta-rs's `Add` and `Remove` hold.
//! - Writing the log, the relative path is encoded once, by delta-rs's serialization of `add` and
//!   `remove` ([`spelled`] is that encoding, for delta-rs's file selection, which compares paths
//!   as the log spells them).
//! - A relative path becomes an object's location below the table's folder as it is
//!   ([`object`]): never decoded nor encoded again (object_store's `Path::from` would encode its
//!   `%` a second time, `Path::from_url_path` decode it a second time).
//!
//! Partition folders are named by delta-rs's writer, the one writer of lakewriter's data files:
//! `column=value` with the value percent-encoded (RFC 3986: every character but letters, digits
//! and `-._~`, non-ASCII ones as their UTF-8 bytes), a NULL value as `__HIVE_DEFAULT_PARTITION__`.
//! Spark names them otherwise (it leaves a non-ASCII letter as it is); a reader never parses a
//! folder's name, since the log holds each file's partition values.

use object_store::path::Path;
use percent_encoding::percent_decode_str;
use url::Url;

/// A path the log holds that is no relative path of a data file (as the log spells it).
#[derive(Debug, thiserror::Error)]
#[error("the Delta log names a data file `{spelled}`, which is not a path below the table's folder")]
pub(crate) struct InvalidPath {
    spelled: String,
    source: Box<dyn std::error::Error + Send + Sync>,
}

/// The relative path of the data file the log names `spelled` (an `add` or `remove` action's
/// `path`): decoded once, as delta-rs decodes it.
pub(crate) fn decode(spelled: &str) -> Result<String, InvalidPath> {
    percent_decode_str(spelled)
        .decode_utf8()
        .map(std::borrow::Cow::into_owned)
        .map_err(|e| InvalidPath { spelled: spelled.to_owned(), source: e.into() })
}

/// `relative` (a data file's relative path) as the log spells it: encoded once, as delta-rs
/// serializes an `add` or `remove` action's path.
pub(crate) fn spelled(relative: &str) -> String {
    let remove = deltalake::kernel::Remove { path: relative.to_owned(), data_change: false, ..Default::default() };
    serde_json::to_value(remove).ok().and_then(|v| v["path"].as_str().map(str::to_owned)).unwrap_or_default()
}

/// The table folder of `url` (its location) as an object path: the URL's path, decoded once
/// (URL encoding, not the log's).
pub(crate) fn folder(url: &Url) -> Result<Path, object_store::path::Error> {
    Path::from_url_path(url.path())
}

/// The object of the data file at `relative` below the table folder `folder`: the relative path
/// as it is (see the module's header).
pub(crate) fn object(folder: &Path, relative: &str) -> Result<Path, InvalidPath> {
    let joined = if folder.as_ref().is_empty() { relative.to_owned() } else { format!("{folder}/{relative}") };
    Path::parse(joined).map_err(|e| InvalidPath { spelled: spelled(relative), source: e.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folder names and log paths delta-rs (and so lakewriter) writes for string partition
    /// values, and the Spark table of delta-rs's test data (`x=A%2FA`, logged as `x=A%252FA`).
    #[test]
    fn a_log_path_is_decoded_once_and_its_object_taken_as_it_is() {
        let folder = Path::from_url_path("/lake/s/t%20x").expect("folder");
        assert_eq!(folder.as_ref(), "lake/s/t x");
        let cases = [
            ("region=%25C3%25AF/p.parquet", "region=%C3%AF/p.parquet"),
            ("region=us%2520/p.parquet", "region=us%20/p.parquet"),
            ("region=a%2525b/p.parquet", "region=a%25b/p.parquet"),
            ("region=a%252Fb/p.parquet", "region=a%2Fb/p.parquet"),
            ("region=a%253Db/p.parquet", "region=a%3Db/p.parquet"),
            ("region=a%2523b/p.parquet", "region=a%23b/p.parquet"),
            ("region=__HIVE_DEFAULT_PARTITION__/p.parquet", "region=__HIVE_DEFAULT_PARTITION__/p.parquet"),
            ("x=A%252FA/part-00007.c000.snappy.parquet", "x=A%2FA/part-00007.c000.snappy.parquet"),
            // Spark leaves a non-ASCII letter in its folder's name and its log path.
            ("region=ï/p.parquet", "region=ï/p.parquet"),
        ];
        for (log, relative_path) in cases {
            let decoded = decode(log).expect("decodes");
            assert_eq!(decoded, relative_path, "{log}");
            let object = object(&folder, &decoded).expect("an object");
            assert_eq!(object.as_ref(), format!("lake/s/t x/{relative_path}"), "{log}");
        }
        for (log, relative_path) in &cases[..8] {
            assert_eq!(spelled(relative_path), *log, "delta-rs spells the path as the log holds it");
        }
        assert_eq!(spelled("region=ï/p.parquet"), "region=%C3%AF/p.parquet");
        assert_eq!(object(&Path::default(), "a=%2F/p").expect("object").as_ref(), "a=%2F/p");
        assert!(decode("a=%FF/p").is_err(), "not UTF-8");
        assert!(object(&folder, "a//p").is_err(), "an empty segment");
        assert!(object(&folder, "../p").is_err(), "a relative segment");
    }
}
