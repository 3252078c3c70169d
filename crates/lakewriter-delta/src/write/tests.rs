//! The replaceWhere data checks, against a real table in a temporary folder.

use std::collections::HashMap;

use chrono::NaiveDate;
use lakewriter_compute::partition_predicate;
use lakewriter_core::{PartitionKey, stable_hash};
use lakewriter_storage::Location;

use crate::table::LoadedTables;
use crate::{CommitMetadata, Error, Target, replace_where};

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 9, d).expect("date")
}

/// Overwrites partition `dt` of the table at `location` with the rows of `select`, over its latest
/// version.
async fn overwrite(location: &Location, dt: NaiveDate, select: &str) -> crate::Result<u64> {
    overwrite_over(location, dt, select, crate::state::latest_version(location).await?).await
}

/// Overwrites partition `dt` of the table at `location` with the rows of `select`, reading the
/// table as of `read_version`.
async fn overwrite_over(
    location: &Location,
    dt: NaiveDate,
    select: &str,
    read_version: Option<u64>,
) -> crate::Result<u64> {
    overwrite_with(location, dt, select, read_version, &LoadedTables::default()).await
}

/// [`overwrite_over`], bringing forward a table of `loaded` where it holds one.
async fn overwrite_with(
    location: &Location,
    dt: NaiveDate,
    select: &str,
    read_version: Option<u64>,
    loaded: &LoadedTables,
) -> crate::Result<u64> {
    overwrite_declaring(location, (dt, select), read_version, loaded, &[]).await
}

/// [`overwrite_with`] by a job that declares the columns `not_null` NOT NULL.
async fn overwrite_declaring(
    location: &Location,
    (dt, select): (NaiveDate, &str),
    read_version: Option<u64>,
    loaded: &LoadedTables,
    not_null: &[String],
) -> crate::Result<u64> {
    let ctx = crate::session();
    let plan = ctx.sql(select).await.expect("plan").logical_plan().clone();
    let metadata = CommitMetadata {
        job: "j".into(),
        partition: PartitionKey::of(None, Some(dt)),
        write: "overwrite_partition".into(),
        lakewriter_version: "test".into(),
        sql_hash: stable_hash(select.as_bytes()),
        code_fingerprint: stable_hash(select.as_bytes()),
        input_fingerprint: stable_hash(b"inputs"),
        inputs: None,
        run_id: format!("run-{select}"),
        started_at: None,
        forced: false,
        checks: Vec::new(),
        unwritten: Vec::new(),
    };
    let partition_columns = ["dt".to_owned()];
    let target = Target {
        location,
        name: "a.t",
        partition_columns: &partition_columns,
        not_null,
        metadata: &metadata,
        read_version,
        loaded,
        adds_columns: false,
    };
    let predicate = partition_predicate("dt", dt);
    Ok(replace_where(&ctx.state(), target, plan, predicate, &format!("rows whose `dt` is not {dt}")).await?.version)
}

/// The table's columns and whether each is nullable.
async fn nullable(location: &Location) -> Vec<(String, bool)> {
    let version = crate::state::latest_version(location).await.expect("version");
    let shape = LoadedTables::default().shape(location, version).await.expect("shape").expect("a table");
    shape.schema.fields().iter().map(|f| (f.name().clone(), f.is_nullable())).collect()
}

#[tokio::test]
async fn a_created_table_is_nullable_but_for_declared_columns_and_nulls_there_are_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = |name: &str| {
        let url = url::Url::from_directory_path(dir.path().join(name)).expect("url");
        Location::new(url, HashMap::new(), |_| None).expect("location")
    };
    let (free, strict, guarded) = (location("free"), location("strict"), location("guarded"));
    let one = "SELECT CAST(1 AS BIGINT) AS n, DATE '2026-09-01' AS dt";
    let null = "SELECT CAST(NULL AS BIGINT) AS n, DATE '2026-09-01' AS dt";
    let declared = ["n".to_owned()];
    let loaded = LoadedTables::default();

    // Literals are NOT NULL in the result; the table takes them as nullable.
    assert_eq!(overwrite(&free, day(1), one).await.expect("create"), 0);
    assert_eq!(nullable(&free).await, [("n".to_owned(), true), ("dt".to_owned(), true)]);
    assert_eq!(overwrite(&free, day(1), null).await.expect("a NULL where the first run had none"), 1);

    // Declared, `n` is NOT NULL in the table: a NULL there is counted and named.
    assert_eq!(overwrite_declaring(&strict, (day(1), one), None, &loaded, &declared).await.expect("create"), 0);
    assert_eq!(nullable(&strict).await, [("n".to_owned(), false), ("dt".to_owned(), true)]);
    let two_nulls = "SELECT CAST(NULL AS BIGINT) AS n, DATE '2026-09-01' AS dt UNION ALL \
                     SELECT CAST(NULL AS BIGINT) AS n, DATE '2026-09-01' AS dt";
    let error = overwrite(&strict, day(1), two_nulls).await.expect_err("NULLs in a NOT NULL column");
    assert!(matches!(error, Error::NullInNotNull { .. }), "{error:?}");
    assert!(
        error.to_string().starts_with(
            "a.t: the result for dt=2026-09-01 has a NULL in column `n` (2 rows), NOT NULL in the table; nothing was \
             committed. Where the column must hold a value"
        ),
        "{error}"
    );
    assert!(
        error.to_string().ends_with("run `ALTER TABLE a.t ALTER COLUMN n DROP NOT NULL` in another engine (Spark)")
    );
    let outside = overwrite(&strict, day(1), "SELECT CAST(2 AS BIGINT) AS n, DATE '2026-09-02' AS dt").await;
    assert_eq!(
        outside.expect_err("a row outside").to_string(),
        "a.t: the result has 1 rows whose `dt` is not 2026-09-01; nothing was committed"
    );
    assert_eq!(crate::table::version(&strict).await.expect("version"), Some(0), "nothing committed");

    // A declared column of a nullable result: the write that would create the table fails.
    let error = overwrite_declaring(&guarded, (day(1), null), None, &loaded, &declared).await.expect_err("a NULL");
    assert!(error.to_string().starts_with("a.t: the result for dt=2026-09-01 has a NULL in column `n` (1 row), "));
    assert_eq!(crate::table::version(&guarded).await.expect("version"), None, "no table created");
}

#[tokio::test]
async fn a_write_conflicts_with_a_commit_of_its_partition_since_the_version_it_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = |name: &str| {
        let url = url::Url::from_directory_path(dir.path().join(name)).expect("url");
        Location::new(url, HashMap::new(), |_| None).expect("location")
    };
    let (t, new) = (location("t"), location("new"));
    let rows = |n: u32, d: u32| format!("SELECT CAST({n} AS BIGINT) AS n, DATE '2026-09-{d:02}' AS dt");
    assert_eq!(overwrite(&t, day(1), &rows(1, 1)).await.expect("create"), 0);
    assert_eq!(overwrite(&t, day(2), &rows(2, 2)).await.expect("another partition"), 1);
    // A commit to another partition since the version read: rebased.
    assert_eq!(overwrite_over(&t, day(1), &rows(3, 1), Some(0)).await.expect("rebased"), 2);
    assert_eq!(overwrite(&t, day(1), &rows(4, 1)).await.expect("the same partition"), 3);
    // A commit to the same partition since the version read: a conflict, nothing committed.
    let stale = overwrite_over(&t, day(1), &rows(5, 1), Some(2)).await;
    assert!(stale.as_ref().is_err_and(Error::is_conflict), "{stale:?}");
    assert_eq!(crate::state::latest_version(&t).await.expect("version"), Some(3));
    // A table created since the run found none: a conflict.
    assert_eq!(overwrite(&new, day(1), &rows(1, 1)).await.expect("create"), 0);
    let late = overwrite_over(&new, day(1), &rows(2, 1), None).await;
    assert!(late.as_ref().is_err_and(Error::is_conflict), "{late:?}");
    assert_eq!(crate::state::latest_version(&new).await.expect("version"), Some(0));
}

/// A write brings forward the file list its command kept from an earlier write — over every
/// commit since, another writer's included — and leaves what a write reading the table afresh
/// leaves.
#[tokio::test]
async fn a_write_brings_a_kept_table_forward_over_another_writer_s_commits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
    let location = Location::new(url, HashMap::new(), |_| None).expect("location");
    let rows = |n: u32| format!("SELECT CAST({n} AS BIGINT) AS n, DATE '2026-09-01' AS dt");
    let loaded = LoadedTables::default();

    assert_eq!(overwrite_with(&location, day(1), &rows(1), None, &loaded).await.expect("create"), 0);
    assert_eq!(overwrite_with(&location, day(1), &rows(2), Some(0), &loaded).await.expect("rewrite"), 1);
    assert_eq!(loaded.versions(&location), [0, 1], "a write keeps the file list it committed");
    // Another writer, which loads the table afresh, rewrites the same partition.
    assert_eq!(overwrite_over(&location, day(1), &rows(3), Some(1)).await.expect("the other writer"), 2);

    let version = overwrite_with(&location, day(1), &rows(4), Some(2), &loaded).await.expect("over the kept table");
    assert_eq!(version, 3);
    assert_eq!(loaded.versions(&location), [0, 1, 2, 3]);
    let ctx = crate::session();
    let table = crate::table::provider(&location).await.expect("the table");
    let batches =
        ctx.read_table(table).expect("scan").select_columns(&["n"]).expect("n").collect().await.expect("rows");
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches).expect("text").to_string();
    assert_eq!(text.lines().filter(|l| l.starts_with("| ") && !l.contains(" n ")).collect::<Vec<_>>(), ["| 4 |"]);
}

/// The digests of every partition, made in one scan, are each partition's own digest; a range
/// keeps the partitions in it, and a missing table has none.
#[tokio::test]
async fn partition_digests_in_one_scan_equal_each_partition_s_digest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
    let location = Location::new(url, HashMap::new(), |_| None).expect("location");
    assert_eq!(crate::partition_digests(&location, None).await.expect("no table"), None);
    for d in 1..=3 {
        let select = format!(
            "SELECT * FROM (VALUES (CAST({d} AS BIGINT)), (7)) AS v(n) CROSS JOIN (SELECT DATE '2026-09-0{d}' AS dt)"
        );
        overwrite(&location, day(d), &select).await.expect("write");
    }
    let all = crate::partition_digests(&location, None).await.expect("digests").expect("a table");
    assert_eq!(all.keys().collect::<Vec<_>>(), ["2026-09-01", "2026-09-02", "2026-09-03"]);
    for (d, key) in [(1, "2026-09-01"), (2, "2026-09-02"), (3, "2026-09-03")] {
        let one = crate::digest(&location, Some(lakewriter_compute::date_literal(day(d)))).await.expect("digest");
        assert_eq!(all[key], one, "{key}");
        assert_eq!(one.rows, 2);
    }
    assert_ne!(all["2026-09-01"].digest, all["2026-09-02"].digest);
    let between = Some((lakewriter_compute::date_literal(day(2)), lakewriter_compute::date_literal(day(3))));
    let some = crate::partition_digests(&location, between).await.expect("digests").expect("a table");
    assert_eq!(some.keys().collect::<Vec<_>>(), ["2026-09-02", "2026-09-03"]);
}

/// Drops column `c` of the table at `location` over `version`, for two partitions of it.
async fn drop_c(location: &Location, version: u64) -> crate::Result<crate::Committed> {
    let metadata = CommitMetadata {
        job: "j".into(),
        partition: PartitionKey::All,
        write: "drop_columns".into(),
        lakewriter_version: "test".into(),
        sql_hash: String::new(),
        code_fingerprint: String::new(),
        input_fingerprint: String::new(),
        inputs: None,
        run_id: format!("drop-{version}"),
        started_at: None,
        forced: false,
        checks: Vec::new(),
        unwritten: Vec::new(),
    };
    let loaded = LoadedTables::default();
    let target = Target {
        location,
        name: "a.t",
        partition_columns: &[],
        not_null: &[],
        metadata: &metadata,
        read_version: Some(version),
        loaded: &loaded,
        adds_columns: false,
    };
    let partitions =
        [(PartitionKey::of(None, Some(day(1))), 4), (PartitionKey::of(None, Some(day(2))), 1)].into_iter().collect();
    crate::drop_columns(&crate::session().state(), target, &["c".to_owned()], &partitions).await
}

/// A column is dropped only once no row holds a value of it; the drop keeps the table's other
/// columns and rows, and each partition's column count shrinks by the dropped columns it had.
#[tokio::test]
async fn a_column_is_dropped_only_where_no_row_holds_a_value_of_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
    let location = Location::new(url, HashMap::new(), |_| None).expect("location");
    let with = |d: u32, c: &str| {
        format!("SELECT CAST(1 AS BIGINT) AS n, CAST({c} AS BIGINT) AS c, 'x' AS s, DATE '2026-09-0{d}' AS dt")
    };
    overwrite(&location, day(1), &with(1, "NULL")).await.expect("write");
    overwrite(&location, day(2), &with(2, "5")).await.expect("write");
    let refused = drop_c(&location, 1).await.expect_err("day 2 holds a value of `c`");
    assert!(
        matches!(&refused, Error::ColumnHoldsValues { values, .. } if values == &[("c".to_owned(), 1)]),
        "{refused}"
    );
    assert!(refused.to_string().contains("cannot drop `c`, which 1 row(s) hold a value of"), "{refused}");
    assert_eq!(crate::state::latest_version(&location).await.expect("version"), Some(1), "nothing committed");

    overwrite(&location, day(2), &with(2, "NULL")).await.expect("write");
    let dropped = drop_c(&location, 2).await.expect("no row holds a value of `c`");
    assert_eq!(dropped.version, 3);
    let provider = crate::table::provider_at(&location, 3).await.expect("provider");
    let names: Vec<String> = provider.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["n", "s", "dt"]);
    let state =
        crate::state::read(&location, "j", crate::state::LogScope::Whole).await.expect("state").expect("a table");
    let columns: Vec<Option<u64>> = state.partitions.values().map(|r| r.columns).collect();
    assert_eq!(columns, [Some(3), Some(1)], "day 1 had `c` (4 → 3), a partition written with one column had not");
    assert_eq!(crate::digest(&location, None).await.expect("digest").rows, 2, "the rows stay");
}

/// The actions of commit `version` of the table at `location`, one JSON value each.
fn commit_actions(location: &Location, version: u64) -> Vec<serde_json::Value> {
    let path = location.url().to_file_path().expect("a local table").join(format!("_delta_log/{version:020}.json"));
    crate::state::actions(&std::fs::read(path).expect("the commit file")).collect()
}

/// The `commitInfo.clientVersion` of commit `version`: who made it.
fn made_by(location: &Location, version: u64) -> String {
    let actions = commit_actions(location, version);
    let info = actions.iter().find_map(|a| a.get("commitInfo")).expect("a commitInfo");
    info["clientVersion"].as_str().expect("a client version").to_owned()
}

/// A partition overwrite of an existing table is lakewriter's own commit, over the file list a
/// command keeps: the partition's files removed, the new one added, the partition state recorded.
/// The table reads as the same table written by delta-rs alone, and Delta's checkpoint cadence
/// holds (its interval changed by a metadata commit, which the file list is read again after).
#[tokio::test]
async fn a_partition_overwrite_is_lakewriter_s_own_commit_over_the_kept_file_list() {
    let dir = tempfile::tempdir().expect("temp dir");
    let location = |name: &str| {
        let url = url::Url::from_directory_path(dir.path().join(name)).expect("url");
        Location::new(url, HashMap::new(), |_| None).expect("location")
    };
    let (own, fresh) = (location("own"), location("fresh"));
    let rows = |n: u32, d: u32| format!("SELECT CAST({n} AS BIGINT) AS n, 'x{n}' AS s, DATE '2026-09-{d:02}' AS dt");
    let loaded = LoadedTables::default();
    assert_eq!(overwrite_with(&own, day(1), &rows(1, 1), None, &loaded).await.expect("create"), 0);
    assert_eq!(overwrite_with(&own, day(2), &rows(2, 2), Some(0), &loaded).await.expect("day 2"), 1);
    assert_eq!(overwrite_with(&own, day(1), &rows(3, 1), Some(1), &loaded).await.expect("day 1 again"), 2);
    assert!(made_by(&own, 2).starts_with("lakewriter."), "{}", made_by(&own, 2));
    let actions = commit_actions(&own, 2);
    let kinds = |kind: &str| actions.iter().filter_map(|a| a.get(kind)).cloned().collect::<Vec<_>>();
    let (removes, adds, txns) = (kinds("remove"), kinds("add"), kinds("txn"));
    assert_eq!(removes.len(), 1, "{actions:?}");
    assert_eq!(removes[0]["partitionValues"]["dt"], "2026-09-01");
    assert_eq!(adds.len(), 1);
    assert_eq!(adds[0]["partitionValues"]["dt"], "2026-09-01");
    assert!(adds[0]["stats"].as_str().is_some_and(|s| s.contains("\"numRecords\":1")), "{:?}", adds[0]);
    let ids: Vec<_> = txns.iter().filter_map(|t| t["appId"].as_str()).collect();
    assert_eq!(
        ids,
        ["lakewriter/j/dt=2026-09-01/code", "lakewriter/j/dt=2026-09-01/inputs", "lakewriter/j/dt=2026-09-01/columns"]
    );
    let info = actions.iter().find_map(|a| a.get("commitInfo")).expect("commitInfo");
    assert_eq!(info["operationMetrics"]["num_added_rows"], 1);
    assert_eq!(info["lakewriter"]["partition"], "dt=2026-09-01");

    // The same rows written by delta-rs alone: the same content.
    let ctx = crate::session();
    let select = format!("{} UNION ALL {}", rows(2, 2), rows(3, 1));
    let batches = ctx.sql(&select).await.expect("plan").collect().await.expect("rows");
    let table = crate::table::unloaded(&fresh).expect("a table to be");
    table.write(batches).with_partition_columns(["dt"]).await.expect("delta-rs's write");
    let (a, b) = (crate::digest(&own, None).await.expect("digest"), crate::digest(&fresh, None).await.expect("digest"));
    assert_eq!((a.rows, a.digest), (b.rows, b.digest));

    // A checkpoint every 3 commits, set by a metadata commit (version 3) the file list is read
    // again after: versions 5 and 8 are checkpointed, by lakewriter's own commits.
    let table = crate::table::open_existing(&own).await.expect("open");
    let properties = HashMap::from([("delta.checkpointInterval".to_owned(), "3".to_owned())]);
    table.set_tbl_properties().with_properties(properties).await.expect("set the interval");
    for (read, d) in (3..8).zip([1, 2, 1, 2, 1]) {
        assert_eq!(overwrite_with(&own, day(d), &rows(10 + d, d), Some(read), &loaded).await.expect("write"), read + 1);
        assert!(made_by(&own, read + 1).starts_with("lakewriter."));
    }
    let log = own.url().to_file_path().expect("local").join("_delta_log");
    let last: serde_json::Value =
        serde_json::from_slice(&std::fs::read(log.join("_last_checkpoint")).expect("a checkpoint")).expect("json");
    assert_eq!(last["version"], 8);
    assert!(log.join(format!("{:020}.checkpoint.parquet", 5)).exists());
    assert_eq!(loaded.versions(&own).last(), Some(&8));
}

/// A table's first write is lakewriter's own commit too: delta-rs's protocol and metadata for the
/// result's columns (nullable but for the declared ones), the partition state, the adds; no
/// `readVersion`.
#[tokio::test]
async fn a_table_s_first_write_is_lakewriter_s_own_commit_that_creates_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
    let location = Location::new(url, HashMap::new(), |_| None).expect("location");
    let select = "SELECT CAST(1 AS BIGINT) AS n, 'x' AS s, DATE '2026-09-01' AS dt";
    let loaded = LoadedTables::default();
    let declared = ["s".to_owned()];
    assert_eq!(overwrite_declaring(&location, (day(1), select), None, &loaded, &declared).await.expect("create"), 0);
    assert!(made_by(&location, 0).starts_with("lakewriter."), "{}", made_by(&location, 0));
    let created = commit_actions(&location, 0);
    let protocol = created.iter().find_map(|a| a.get("protocol")).expect("a protocol");
    assert_eq!((&protocol["minReaderVersion"], &protocol["minWriterVersion"]), (&1.into(), &2.into()));
    let metadata = created.iter().find_map(|a| a.get("metaData")).expect("a metaData");
    assert_eq!(metadata["partitionColumns"], serde_json::json!(["dt"]));
    assert!(created.iter().find_map(|a| a.get("commitInfo")).is_some_and(|i| i.get("readVersion").is_none()));
    assert_eq!(created.iter().filter(|a| a.get("add").is_some()).count(), 1);
    assert_eq!(created.iter().filter(|a| a.get("txn").is_some()).count(), 3);
    let columns = vec![("n".to_owned(), true), ("s".to_owned(), false), ("dt".to_owned(), true)];
    assert_eq!(nullable(&location).await, columns);
}

/// A table whose writers must check what lakewriter's own commit does not (a CHECK constraint,
/// here) is written by delta-rs's write, which enforces it.
#[tokio::test]
async fn a_table_with_a_constraint_is_written_by_delta_rs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = url::Url::from_directory_path(dir.path().join("t")).expect("url");
    let location = Location::new(url, HashMap::new(), |_| None).expect("location");
    let rows = |n: i32| format!("SELECT CAST({n} AS BIGINT) AS n, DATE '2026-09-01' AS dt");
    assert_eq!(overwrite(&location, day(1), &rows(1)).await.expect("create"), 0);
    let table = crate::table::open_existing(&location).await.expect("open");
    table.add_constraint().with_constraint("positive", "n > 0").await.expect("a constraint");
    let refused = overwrite(&location, day(1), &rows(-1)).await.expect_err("the constraint refuses it");
    assert!(matches!(refused, Error::Invalid { .. }), "{refused:?}");
    assert_eq!(overwrite(&location, day(1), &rows(5)).await.expect("a row it takes"), 2);
    assert!(made_by(&location, 2).starts_with("delta-rs."), "{}", made_by(&location, 2));
}

/// A replaceWhere predicate reads the partition values the log records: exactly, as the rows of
/// the partition read it, for the partition columns whose values it records exactly; any other
/// predicate is delta-rs's write's.
#[test]
fn a_replace_where_reads_the_partition_values_the_log_records() {
    use super::slice::Partitions;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::prelude::{col, lit};
    let schema = Schema::new(vec![
        Field::new("v", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("n", DataType::Int32, true),
        Field::new("dt", DataType::Date32, true),
    ]);
    let shape = crate::table::Shape {
        schema: std::sync::Arc::new(schema),
        partition_columns: vec!["s".into(), "n".into(), "dt".into()],
        properties: std::collections::BTreeMap::new(),
    };
    let date = |d: &str| {
        let days = (NaiveDate::parse_from_str(d, "%Y-%m-%d").expect("date") - NaiveDate::default()).num_days();
        lit(datafusion::common::ScalarValue::Date32(Some(i32::try_from(days).expect("days"))))
    };
    let values = |pairs: &[(&str, Option<&str>)]| -> HashMap<String, Option<String>> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned))).collect()
    };
    let files = [
        values(&[("s", Some("a")), ("n", Some("1")), ("dt", Some("2026-09-01"))]),
        values(&[("s", Some("a")), ("n", Some("7")), ("dt", Some("2026-09-02"))]),
        values(&[("s", Some("b")), ("n", None), ("dt", Some("2026-09-03"))]),
        values(&[("s", Some("b")), ("n", Some("2")), ("dt", Some(""))]),
        values(&[("s", Some("b")), ("n", Some("3"))]),
    ];
    let refs: Vec<_> = files.iter().collect();
    let session = crate::session().state();
    let hold = |predicate: datafusion::prelude::Expr| {
        Partitions::of(&session, &predicate, &shape).map(|p| p.hold(&refs).expect("read against the values"))
    };
    // A missing value and an empty one read as NULL, as readers read them.
    assert_eq!(hold(col("dt").eq(date("2026-09-02"))), Some(vec![false, true, false, false, false]));
    let between = col("dt").between(date("2026-09-01"), date("2026-09-02"));
    assert_eq!(hold(between), Some(vec![true, true, false, false, false]));
    assert_eq!(hold(col("n").gt(lit(1))), Some(vec![false, true, false, true, true]), "a NULL is not > 1");
    assert_eq!(
        hold(col("n").is_null().and(col("dt").gt(date("2026-09-01")))),
        Some(vec![false, false, true, false, false])
    );
    // Planned as a query's filter: types coerced (a BIGINT literal, a string against a DATE).
    assert_eq!(hold(col("n").eq(lit(7_i64))), Some(vec![false, true, false, false, false]));
    assert_eq!(hold(col("dt").gt_eq(lit("2026-09-02"))), Some(vec![false, true, true, false, false]));
    let random = datafusion::functions::math::expr_fn::random();
    assert_eq!(hold(col("n").lt(random)), None, "a volatile predicate");
    // A commit's file without a value of the column may hold rows of the partitions: a conflict.
    let day = Partitions::of(&session, &col("dt").eq(date("2026-09-02")), &shape).expect("a predicate");
    assert_eq!(files.iter().map(|f| day.touched_by(f)).collect::<Vec<_>>(), [false, true, false, false, true]);
    assert_eq!(hold(col("s").eq(lit("a"))), None, "a string's values are not recorded exactly");
    assert_eq!(hold(col("v").eq(lit(1_i64))), None, "not a partition column");
    assert_eq!(hold(lit(true)), None, "no column");
}
