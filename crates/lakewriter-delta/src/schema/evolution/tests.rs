use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::prelude::{DataFrame, SessionContext};

use super::*;

fn table() -> Schema {
    Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("note", DataType::Utf8, true),
        Field::new("dt", DataType::Utf8, true),
    ])
}

/// A result of rows `(id, discount, dt)`: the table's `note` missing, `discount` new (NOT NULL,
/// as a literal or a `COUNT` would make it).
fn result(ctx: &SessionContext) -> LogicalPlan {
    let schema = Arc::new(Schema::new(vec![
        Field::new("dt", DataType::Utf8, false),
        Field::new("id", DataType::Int64, true),
        Field::new("discount", DataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec!["d1", "d1"])),
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(Int64Array::from(vec![10, 20])),
        ],
    )
    .expect("batch");
    ctx.read_batch(batch).expect("read").into_unoptimized_plan()
}

async fn rows(ctx: &SessionContext, plan: LogicalPlan) -> Vec<String> {
    let batches = DataFrame::new(ctx.state(), plan).collect().await.expect("collect");
    let text = arrow::util::pretty::pretty_format_batches(&batches).expect("format").to_string();
    text.lines().map(str::to_owned).collect()
}

#[tokio::test]
async fn append_new_columns_adds_them_at_the_end_nullable_and_writes_missing_ones_as_null() {
    let ctx = SessionContext::new();
    let dt = ["dt".to_owned()];
    let (plan, changes) =
        lay_out(result(&ctx), &table(), OnSchemaChange::AppendNewColumns, &dt, &[], "s.t").expect("laid out");
    let names: Vec<(String, bool)> =
        plan.schema().fields().iter().map(|f| (f.name().clone(), f.is_nullable())).collect();
    let expected = [("id", true), ("note", true), ("dt", false), ("discount", true)];
    assert_eq!(names, expected.map(|(n, b)| (n.to_owned(), b)));
    assert_eq!(changes.added, [SchemaColumn { column: "discount".into(), stored: "long".into() }]);
    assert_eq!(changes.missing, [SchemaColumn { column: "note".into(), stored: "string".into() }]);
    assert!(changes.ignored.is_empty() && changes.dropped.is_empty() && changes.changes_schema());
    assert_eq!(changes.describe(), "adds column `discount` (long); writes `note` (string) as NULL (not in the result)");
    assert_eq!(
        rows(&ctx, plan).await,
        [
            "+----+------+----+----------+",
            "| id | note | dt | discount |",
            "+----+------+----+----------+",
            "| 1  |      | d1 | 10       |",
            "| 2  |      | d1 | 20       |",
            "+----+------+----+----------+",
        ]
    );
}

#[tokio::test]
async fn ignore_leaves_new_columns_out_and_fail_changes_nothing() {
    let ctx = SessionContext::new();
    let (plan, changes) = lay_out(result(&ctx), &table(), OnSchemaChange::Ignore, &[], &[], "s.t").expect("laid out");
    let names: Vec<&str> = plan.schema().fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "note", "dt"]);
    assert_eq!(changes.ignored, [SchemaColumn { column: "discount".into(), stored: "long".into() }]);
    assert!(!changes.changes_schema());

    let original = result(&ctx);
    let (plan, changes) = lay_out(original.clone(), &table(), OnSchemaChange::Fail, &[], &[], "s.t").expect("fail");
    assert_eq!((plan, changes.is_empty()), (original, true));
}

#[test]
fn a_changed_type_a_case_only_rename_and_a_missing_partition_column_are_refused_with_their_fix() {
    let ctx = SessionContext::new();
    let table = Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("Discount", DataType::Decimal128(12, 2), true),
        Field::new("day", DataType::Utf8, true),
    ]);
    let error = lay_out(result(&ctx), &table, OnSchemaChange::SyncAllColumns, &["day".to_owned()], &[], "s.t")
        .expect_err("refused")
        .to_string();
    assert_eq!(
        error,
        "s.t: the result does not match the table's schema: \
         column `id` is integer in the table but long in the result: a column keeps its type (on_schema_change adds and drops columns, and lakewriter never coerces a value); cast it in the job's SQL (`CAST(… AS INT) AS id`), or rebuild the table to give it the new type; \
         column `discount` of the result differs from the table's `Discount` only by case: Delta reads column names case-insensitively, so it cannot be a new column; name it `Discount`; \
         column `day` is the table's partition column and is missing from the result: every row needs its partition; \
         nothing was committed"
    );
}

#[test]
fn a_replacing_write_adds_and_drops() {
    let ctx = SessionContext::new();
    let changes = replaced(&table(), result(&ctx).schema().as_arrow());
    assert_eq!(changes.added, [SchemaColumn { column: "discount".into(), stored: "long".into() }]);
    assert_eq!(changes.dropped, [SchemaColumn { column: "note".into(), stored: "string".into() }]);
    assert_eq!(changes.describe(), "adds column `discount` (long); drops column `note` (string)");
}
