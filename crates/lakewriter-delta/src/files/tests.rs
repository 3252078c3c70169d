//! The file list read from the log is the one delta-rs's snapshot gives, field by field, on real
//! tables in a temporary folder: every column type, string and date partitions, a checkpoint with
//! commits after it, settings and a CHECK constraint.

use std::collections::{BTreeMap, HashMap};

use deltalake::protocol::SaveMode;
use lakewriter_storage::Location;

use super::{FileList, read};

/// The log store of the table at `location`.
fn log_store(location: &Location) -> deltalake::logstore::LogStoreRef {
    crate::table::unloaded(location).expect("a log store").log_store()
}

fn location(dir: &tempfile::TempDir) -> Location {
    let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
    Location::new(url, HashMap::new(), |_| None).expect("location")
}

/// Rows of every kind of column, partitioned by `region` (a string) and `dt` (a date).
async fn write(location: &Location, region: &str, configuration: &[(&str, &str)]) {
    let ctx = crate::session();
    let sql = format!(
        "SELECT CAST(1 AS BIGINT) AS id, 'a' AS name, CAST(X'0102' AS BYTEA) AS raw, \
         named_struct('inner', 'x', 'n', 2) AS nested, make_array('p', 'q') AS tags, \
         map(['k'], ['v']) AS attrs, CAST('2026-09-30T10:00:00Z' AS TIMESTAMP) AS at, \
         CAST(12.5 AS DECIMAL(10, 2)) AS amount, '{region}' AS region, DATE '2026-09-30' AS dt"
    );
    let batches = ctx.sql(&sql).await.expect("plan").collect().await.expect("rows");
    let table = match crate::table::open_if_exists(location).await.expect("open") {
        Some(table) => table,
        None => deltalake::DeltaTable::try_from_url(deltalake::ensure_table_uri(location.url().as_str()).expect("uri"))
            .await
            .expect("new table"),
    };
    let configuration = configuration.iter().map(|(k, v)| ((*k).to_owned(), Some((*v).to_owned())));
    table
        .write(batches)
        .with_save_mode(SaveMode::Append)
        .with_partition_columns(["region", "dt"])
        .with_configuration(configuration)
        .await
        .expect("write");
}

/// What a file list says, in a form two lists compare by.
fn said(list: &FileList) -> (u64, String, Vec<String>, String, String, Vec<String>, bool, String) {
    let files: BTreeMap<_, _> = list
        .files()
        .map(|(path, live)| {
            let values: BTreeMap<_, _> = live.partition_values.iter().collect();
            (path.clone(), format!("{values:?} {} {:?}", live.size, live.stats))
        })
        .collect();
    let settings = format!(
        "{} {} {:?} {:?}",
        list.settings.target_file_size,
        list.settings.checkpoint_interval,
        list.settings.stats.num_indexed_cols,
        list.settings.stats.stats_columns
    );
    (
        list.version,
        format!("{:?}", list.shape.schema),
        list.shape.partition_columns.clone(),
        format!("{:?}", list.columns),
        settings,
        list.unsupported.to_vec(),
        list.guarded,
        format!("{files:?}"),
    )
}

/// Asserts that the list read from the log at the table's latest version is delta-rs's, and
/// that its columns are those delta-rs's provider exposes.
async fn assert_read_as_delta_rs(location: &Location) {
    let table = crate::table::open_existing(location).await.expect("open");
    let version = table.version().expect("a version");
    let of = FileList::of(location, &table).expect("from the snapshot");
    let read = read::from_log(location, log_store(location), version).await.expect("read").expect("readable");
    assert_eq!(said(&read), said(&of));
    let provided = crate::table::provider_of(location, &table).await.expect("provider").schema();
    assert_eq!(read.columns, provided, "the columns as delta-rs's provider exposes them");
}

#[tokio::test]
async fn a_file_list_read_from_the_log_is_the_one_delta_rs_gives_before_and_after_a_checkpoint() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    write(&location, "eu", &[("delta.targetFileSize", "1048576"), ("delta.dataSkippingNumIndexedCols", "5")]).await;
    write(&location, "us", &[]).await;
    assert_read_as_delta_rs(&location).await;

    // A checkpoint, then commits after it: an append and a removal.
    let table = crate::table::open_existing(&location).await.expect("open");
    deltalake::checkpoints::create_checkpoint(&table, None).await.expect("checkpoint");
    write(&location, "asia", &[]).await;
    let table = crate::table::open_existing(&location).await.expect("open");
    let (table, _) = table
        .delete()
        .with_predicate(datafusion::prelude::col("region").eq(datafusion::prelude::lit("us")))
        .await
        .expect("delete");
    assert_eq!(table.version(), Some(3));
    assert_read_as_delta_rs(&location).await;

    // A version before the checkpoint is left to delta-rs.
    assert!(read::from_log(&location, log_store(&location), 0).await.expect("read").is_none());
    let at = crate::table::LoadedTables::default().list_at(&location, 0).await.expect("list at version 0");
    assert_eq!(at.version, 0);
    assert_eq!(at.files().count(), 1);
}

#[tokio::test]
async fn a_table_with_a_check_constraint_reads_as_guarded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    write(&location, "eu", &[]).await;
    let table = crate::table::open_existing(&location).await.expect("open");
    table.add_constraint().with_constraint("positive", "id > 0").await.expect("constraint");
    let table = crate::table::open_existing(&location).await.expect("open");
    let read = read::from_log(&location, log_store(&location), table.version().expect("version"))
        .await
        .expect("read")
        .expect("readable");
    assert!(read.guarded);
    assert_read_as_delta_rs(&location).await;
}

/// Partition values whose folder names and log paths are percent-encoded (the log's path encoded
/// once more than the folder's name): the list read from the log names each file by its relative
/// path, as delta-rs's snapshot does, from a checkpoint and from the commits after it — a file a
/// later commit removes is gone, whichever of them added it.
#[tokio::test]
async fn a_file_list_names_files_in_encoded_partition_folders_as_delta_rs_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = location(&dir);
    for region in ["ï", "us ", "a%b", "a/b"] {
        write(&location, region, &[]).await;
    }
    assert_read_as_delta_rs(&location).await;

    let table = crate::table::open_existing(&location).await.expect("open");
    deltalake::checkpoints::create_checkpoint(&table, None).await.expect("checkpoint");
    for region in ["a=b", "a#b", "😀"] {
        write(&location, region, &[]).await;
    }
    let table = crate::table::open_existing(&location).await.expect("open");
    let gone = ["ï", "a#b"].map(|r| datafusion::prelude::col("region").eq(datafusion::prelude::lit(r)));
    let (table, _) = table.delete().with_predicate(gone[0].clone().or(gone[1].clone())).await.expect("delete");
    assert_eq!(table.version(), Some(7));
    assert_read_as_delta_rs(&location).await;
    let read = read::from_log(&location, log_store(&location), 7).await.expect("read").expect("readable");
    let mut paths: Vec<&str> = read.files().map(|(path, _)| path.split('/').next().expect("a folder")).collect();
    paths.sort_unstable();
    let expected = ["region=%F0%9F%98%80", "region=a%25b", "region=a%2Fb", "region=a%3Db", "region=us%20"];
    assert_eq!(paths, expected, "the partition folders, as delta-rs names them");
    for (path, _) in read.files() {
        let object =
            crate::paths::object(&crate::paths::folder(location.url()).expect("folder"), path).expect("object");
        let file = std::path::Path::new("/").join(object.as_ref());
        assert!(file.is_file(), "{path} names the file {}", file.display());
    }
}
