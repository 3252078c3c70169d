//! Unit tests of keyed sources: validation, deduplication and classification, in memory.

use std::collections::BTreeMap;

use datafusion::arrow::array::{ArrayRef, AsArray, Int64Array, StringArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::datasource::MemTable;

use crate::rows::first_rows;

use super::*;

fn key() -> Vec<String> {
    vec!["id".to_owned()]
}

/// A `merge` keyed by `id`: the greatest `version` wins, a row with `op = 'D'` is a delete.
fn merge(key: &[String]) -> KeyedSpec<'_> {
    KeyedSpec {
        key,
        newer_by: Some("version"),
        delete_when: Some("op = 'D'"),
        semantics: lakewriter_core::Semantics::default(),
        duplicates_are_errors: false,
        fill: None,
        scope: None,
        matches: None,
    }
}

/// An `append_dedup` keyed by `id`.
fn append_dedup(key: &[String]) -> KeyedSpec<'_> {
    KeyedSpec {
        key,
        newer_by: None,
        delete_when: None,
        semantics: lakewriter_core::Semantics::default(),
        duplicates_are_errors: false,
        fill: None,
        scope: None,
        matches: None,
    }
}

type Row<'a> = (Option<i64>, Option<i64>, &'a str, &'a str);

/// Source rows `(id, version, op, amount)`, prepared as `spec` says.
async fn prepared(ctx: &SessionContext, rows: &[Row<'_>], spec: &KeyedSpec<'_>) -> Result<KeyedSource> {
    let ids: Int64Array = rows.iter().map(|r| r.0).collect();
    let versions: Int64Array = rows.iter().map(|r| r.1).collect();
    let ops: StringArray = rows.iter().map(|r| Some(r.2)).collect();
    let amounts: StringArray = rows.iter().map(|r| Some(r.3)).collect();
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as ArrayRef),
        ("version", Arc::new(versions) as ArrayRef),
        ("op", Arc::new(ops) as ArrayRef),
        ("amount", Arc::new(amounts) as ArrayRef),
    ])
    .unwrap();
    let plan = ctx.read_batch(batch).unwrap().into_unoptimized_plan();
    prepare(ctx, plan, spec).await
}

/// Rows with every value set.
fn rows<'a>(rows: &[(i64, i64, &'a str, &'a str)]) -> Vec<Row<'a>> {
    rows.iter().map(|&(id, version, op, amount)| (Some(id), Some(version), op, amount)).collect()
}

/// A target table of `(id, version)` rows.
fn target(rows: &[(i64, i64)]) -> Arc<dyn TableProvider> {
    let ids: Int64Array = rows.iter().map(|r| r.0).collect::<Vec<_>>().into();
    let versions: Int64Array = rows.iter().map(|r| r.1).collect::<Vec<_>>().into();
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef), ("version", Arc::new(versions) as ArrayRef)])
            .unwrap();
    Arc::new(MemTable::try_new(batch.schema(), vec![vec![batch]]).unwrap())
}

/// The rows a prepared source kept, by id: (version, is a delete, amount).
fn kept(source: &KeyedSource) -> BTreeMap<i64, (i64, bool, String)> {
    let mut out = BTreeMap::new();
    for batch in source.held.batches() {
        let column = |name: &str| batch.column_by_name(name).unwrap();
        let (ids, versions) = (column("id"), column("version"));
        let (ids, versions) = (ids.as_primitive::<Int64Type>(), versions.as_primitive::<Int64Type>());
        let deleted = column(DELETED);
        let amounts = column("amount");
        for row in 0..batch.num_rows() {
            let amount = array_value_to_string(amounts, row).unwrap();
            out.insert(ids.value(row), (versions.value(row), deleted.as_boolean().value(row), amount));
        }
    }
    out
}

#[tokio::test]
async fn rows_are_inserts_updates_deletes_or_unchanged() {
    let ctx = SessionContext::new();
    let key = key();
    let spec = merge(&key);
    let source = prepared(
        &ctx,
        &rows(&[
            (1, 11, "U", "newer: update"),
            (2, 10, "U", "same version: unchanged"),
            (3, 9, "U", "older: unchanged"),
            (4, 11, "D", "newer delete: deleted"),
            (5, 9, "D", "older delete: unchanged"),
            (6, 1, "D", "delete of a missing key: deleted"),
            (7, 1, "I", "new key: insert"),
        ]),
        &spec,
    )
    .await
    .unwrap();
    assert_eq!((source.held.rows(), source.duplicates_dropped), (7, 0));
    let existing = [(1, 10), (2, 10), (3, 10), (4, 10), (5, 10)];
    let counts = classify(&ctx, &source, Some(target(&existing)), &spec).await.unwrap();
    let expected = KeyedCounts { inserted: 1, updated: 1, deleted: 2, unchanged: 3, duplicates_dropped: 0 };
    assert_eq!(counts, expected);
    assert!(counts.changes_anything());

    let stale = prepared(&ctx, &rows(&[(2, 10, "U", "x"), (3, 9, "D", "y")]), &spec).await.unwrap();
    let counts = classify(&ctx, &stale, Some(target(&existing)), &spec).await.unwrap();
    assert_eq!(counts, KeyedCounts { unchanged: 2, ..KeyedCounts::default() });
    assert!(!counts.changes_anything());
}

#[tokio::test]
async fn duplicate_keys_keep_the_greatest_version_and_on_a_tie_the_delete() {
    let ctx = SessionContext::new();
    let key = key();
    let spec = merge(&key);
    let source = prepared(
        &ctx,
        &rows(&[
            (1, 1, "U", "a"),
            (1, 3, "U", "b"),
            (1, 2, "U", "c"),
            // `op` and `amount` would pick the update: the delete wins before them.
            (2, 5, "D", "x"),
            (2, 5, "U", "y"),
            (3, 4, "U", "y"),
            (3, 4, "D", "x"),
            // A full tie: the greatest value of the remaining columns.
            (4, 7, "U", "x"),
            (4, 7, "U", "y"),
        ]),
        &spec,
    )
    .await
    .unwrap();
    assert_eq!((source.held.rows(), source.duplicates_dropped), (4, 5));
    let expected = BTreeMap::from([
        (1, (3, false, "b".to_owned())),
        (2, (5, true, "x".to_owned())),
        (3, (4, true, "x".to_owned())),
        (4, (7, false, "y".to_owned())),
    ]);
    assert_eq!(kept(&source), expected);

    // No target: every key is new, a delete is a tombstone for a key not seen yet.
    let counts = classify(&ctx, &source, None, &spec).await.unwrap();
    assert_eq!(counts, KeyedCounts { inserted: 2, deleted: 2, duplicates_dropped: 5, ..KeyedCounts::default() });
}

#[tokio::test]
async fn without_a_target_every_row_is_an_insert() {
    let ctx = SessionContext::new();
    let key = key();
    let spec = append_dedup(&key);
    let batch = rows(&[(1, 1, "I", "a"), (2, 1, "I", "b"), (2, 2, "I", "c"), (3, 1, "I", "d")]);
    let source = prepared(&ctx, &batch, &spec).await.unwrap();
    assert_eq!((source.held.rows(), source.duplicates_dropped), (3, 1));
    let counts = classify(&ctx, &source, None, &spec).await.unwrap();
    assert_eq!(counts, KeyedCounts { inserted: 3, duplicates_dropped: 1, ..KeyedCounts::default() });

    // append_dedup: an existing key is unchanged, whatever its version.
    let counts = classify(&ctx, &source, Some(target(&[(2, 0), (9, 1)])), &spec).await.unwrap();
    assert_eq!(counts, KeyedCounts { inserted: 2, unchanged: 1, duplicates_dropped: 1, ..KeyedCounts::default() });
}

#[tokio::test]
async fn null_keys_and_versions_are_refused() {
    let ctx = SessionContext::new();
    let key = key();
    let spec = merge(&key);

    let result = prepared(&ctx, &[(None, Some(1), "U", "a"), (Some(2), Some(1), "U", "b")], &spec).await;
    let Err(Error::NullKeys { count, columns, examples }) = result else { panic!("{result:?}") };
    assert_eq!((count, columns.as_str(), examples.as_str()), (1, "id, version", "id=NULL, version=1"));

    let result =
        prepared(&ctx, &[(Some(1), None, "U", "a"), (Some(2), None, "D", "b"), (Some(3), Some(1), "U", "c")], &spec)
            .await;
    let Err(Error::NullKeys { count, columns, examples }) = result else { panic!("{result:?}") };
    assert_eq!((count, columns.as_str()), (2, "id, version"));
    let mut examples: Vec<&str> = examples.split("; ").collect();
    examples.sort_unstable();
    assert_eq!(examples, ["id=1, version=NULL", "id=2, version=NULL"]);
}

#[tokio::test]
async fn duplicate_keys_are_refused_where_they_are_errors() {
    let ctx = SessionContext::new();
    let key = key();
    let spec = KeyedSpec { duplicates_are_errors: true, ..merge(&key) };
    let batch = rows(&[(3, 1, "U", "a"), (1, 1, "U", "b"), (3, 2, "U", "c"), (2, 1, "U", "d"), (1, 2, "U", "e")]);
    let result = prepared(&ctx, &batch, &spec).await;
    let Err(Error::DuplicateKeys { keys, examples }) = result else { panic!("{result:?}") };
    assert_eq!((keys, examples.as_str()), (2, "id=1; id=3"));
}

#[tokio::test]
async fn a_source_with_no_row_keeps_its_columns_and_changes_nothing() {
    let ctx = SessionContext::new();
    let key = key();
    let spec = merge(&key);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("version", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("op", Arc::new(StringArray::from(vec!["U"])) as ArrayRef),
        ("amount", Arc::new(StringArray::from(vec!["a"])) as ArrayRef),
    ])
    .unwrap();
    // A scan that reads no file yields no batch at all, as this filter does.
    let plan = ctx.read_batch(batch).unwrap().filter(lit(false)).unwrap().into_unoptimized_plan();
    let source = prepare(&ctx, plan, &spec).await.unwrap();
    let names: Vec<&str> = source.held.schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "version", "op", "amount", DELETED]);
    assert_eq!((source.held.rows(), source.duplicates_dropped), (0, 0));
    let counts = classify(&ctx, &source, Some(target(&[(1, 1)])), &spec).await.unwrap();
    assert_eq!(counts, KeyedCounts::default());
    assert_eq!(source.dataframe(&ctx).unwrap().count().await.unwrap(), 0);
}

/// Keys, versions and values SQL names only in quotes — a capital, a space, a quote, a letter
/// outside ASCII — or named like a count of lakewriter's own (`n`) are the columns of those names.
#[tokio::test]
async fn keys_versions_and_values_of_any_name_are_the_columns_of_that_name() {
    let ctx = SessionContext::new();
    let key = vec!["Customer Id".to_owned(), "n".to_owned()];
    let spec = KeyedSpec {
        key: &key,
        newer_by: Some("Updated At"),
        delete_when: Some("\"quo\"\"te\" = 'D'"),
        semantics: lakewriter_core::Semantics::default(),
        duplicates_are_errors: false,
        fill: None,
        scope: None,
        matches: None,
    };
    let int = |v: Vec<i64>| Arc::new(Int64Array::from(v)) as ArrayRef;
    let text = |v: Vec<&str>| Arc::new(StringArray::from(v)) as ArrayRef;
    let batch = RecordBatch::try_from_iter([
        ("Customer Id", int(vec![1, 1, 2])),
        ("n", int(vec![7, 7, 7])),
        ("Updated At", int(vec![1, 2, 1])),
        ("quo\"te", text(vec!["U", "U", "D"])),
        ("Ünïcode", text(vec!["old", "new", "gone"])),
    ])
    .unwrap();
    let source = prepare(&ctx, ctx.read_batch(batch.clone()).unwrap().into_unoptimized_plan(), &spec).await.unwrap();
    assert_eq!(source.duplicates_dropped, 1);
    let shown = ["Customer Id".to_owned(), "Ünïcode".to_owned()];
    let shown = first_rows(source.dataframe(&ctx).unwrap(), &shown, 5).await.unwrap();
    assert_eq!(shown, ["Customer Id=1, Ünïcode=new", "Customer Id=2, Ünïcode=gone"]);

    let target = RecordBatch::try_from_iter([
        ("Customer Id", int(vec![1, 2])),
        ("n", int(vec![7, 7])),
        ("Updated At", int(vec![1, 5])),
    ])
    .unwrap();
    let target = Arc::new(MemTable::try_new(target.schema(), vec![vec![target]]).unwrap());
    let counts = classify(&ctx, &source, Some(target), &spec).await.unwrap();
    let expected = KeyedCounts { inserted: 0, updated: 1, deleted: 0, unchanged: 1, duplicates_dropped: 1 };
    assert_eq!(counts, expected, "key 1 is newer, the delete of key 2 older than its row");

    let strict = KeyedSpec { duplicates_are_errors: true, ..spec.clone() };
    let plan = ctx.read_batch(batch).unwrap().into_unoptimized_plan();
    let error = prepare(&ctx, plan, &strict).await.unwrap_err().to_string();
    assert!(error.contains("e.g. Customer Id=1, n=7"), "{error}");
}
