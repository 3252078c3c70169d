use lakewriter_core::TableRef;

use super::{Insert, MergeAction, MergeClause, MergeSource, PartitionColumn, Statement, Write, parse};

/// DataFusion's dialect, whose literals stay as written (Spark's is tested below).
const DATAFUSION: lakewriter_core::Semantics = lakewriter_core::Semantics {
    dialect: lakewriter_core::Dialect::DataFusion,
    ansi: true,
    time_zone: lakewriter_core::TimeZone::UTC,
};

fn one(sql: &str) -> super::Parsed {
    let mut parsed = parse(sql, DATAFUSION).expect("parses");
    assert_eq!(parsed.len(), 1, "{sql}");
    parsed.remove(0)
}

fn error(sql: &str) -> String {
    parse(sql, DATAFUSION).expect_err(sql).to_string()
}

fn table(name: &str) -> TableRef {
    TableRef::parse(name).expect("table")
}

/// An expression as the parser prints it back.
fn text(expr: Option<&super::SqlExpr>) -> Option<String> {
    expr.map(ToString::to_string)
}

/// A MERGE clause in words: when, its condition, what it does (expressions as printed).
fn described(clause: &MergeClause) -> String {
    let action = match &clause.action {
        MergeAction::Update(set) => {
            let set: Vec<String> = set.iter().map(|(c, v)| format!("{c} = {v}")).collect();
            format!("UPDATE SET {}", set.join(", "))
        }
        MergeAction::Insert { columns, values } => {
            let values: Vec<String> = values.iter().map(ToString::to_string).collect();
            format!("INSERT ({}) VALUES ({})", columns.join(", "), values.join(", "))
        }
        other => format!("{other:?}"),
    };
    format!("{:?} {:?} {action}", clause.when, text(clause.predicate.as_ref()))
}

#[test]
fn a_static_partition_overwrite_keeps_its_partition_value_and_query() {
    let parsed = one("INSERT OVERWRITE TABLE analytics.daily_orders PARTITION (dt = '2026-09-30') \
         SELECT customer_id, COUNT(*) AS orders FROM raw.orders WHERE dt = '2026-09-30' GROUP BY customer_id");
    let Statement::Write(Write::Insert(Insert { table: t, overwrite, columns, partition, query, .. })) =
        parsed.statement
    else {
        panic!("an insert")
    };
    assert_eq!(t, table("analytics.daily_orders"));
    assert!(overwrite && columns.is_empty());
    let partition: Vec<_> = partition.iter().map(|p| (p.column.as_str(), text(p.value.as_ref()))).collect();
    assert_eq!(partition, [("dt", Some("'2026-09-30'".to_owned()))]);
    assert!(query.to_string().starts_with("SELECT customer_id, COUNT(*) AS orders FROM raw.orders"), "{query}");
    assert!(!parsed.uses_dt);
}

#[test]
fn dynamic_partitions_columns_and_dt_are_read() {
    let parsed = one("INSERT INTO analytics.t (a, b) PARTITION (dt = $dt, region) SELECT 1, 2, 'eu'");
    let Statement::Write(Write::Insert(insert)) = parsed.statement else { panic!("an insert") };
    assert!(!insert.overwrite);
    assert_eq!(insert.columns, ["a", "b"]);
    assert_eq!(text(insert.partition[0].value.as_ref()).as_deref(), Some("$dt"));
    assert!(insert.partition[0].is_dt() && !insert.partition[1].is_dt());
    assert_eq!(insert.partition[1], PartitionColumn { column: "region".into(), value: None });
    assert!(parsed.uses_dt);
}

#[test]
fn a_column_list_after_the_partition_clause_as_spark_writes_it_is_read_as_one_before_it() {
    for sql in [
        "INSERT OVERWRITE TABLE analytics.t PARTITION (dt = $dt, region) (a, `b c`) SELECT 1, 2, 'eu'",
        "INSERT INTO analytics.t PARTITION (dt = $dt, region)(a, `b c`) VALUES (1, 2, 'eu')",
        "INSERT OVERWRITE analytics.t (a, `b c`) PARTITION (dt = $dt, region) SELECT 1, 2, 'eu'",
    ] {
        let parsed = one(sql);
        let Statement::Write(Write::Insert(insert)) = parsed.statement else { panic!("an insert: {sql}") };
        assert_eq!(insert.columns, ["a", "b c"], "{sql}");
        assert_eq!(insert.partition.len(), 2, "{sql}");
        assert!(insert.partition[0].is_dt(), "{sql}");
    }
    // A parenthesized query after the partition clause is the query, not a column list.
    let parsed = one("INSERT OVERWRITE analytics.t PARTITION (dt = $dt) (SELECT 1 AS a)");
    let Statement::Write(Write::Insert(insert)) = parsed.statement else { panic!("an insert") };
    assert!(insert.columns.is_empty());
    // A window's PARTITION BY is not touched.
    one("INSERT INTO analytics.t SELECT ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) FROM raw.x");
}

#[test]
fn a_merge_keeps_every_clause_in_order_with_spark_stars() {
    let parsed =
        one("MERGE INTO analytics.customers t USING (SELECT * FROM raw.c WHERE dt = $dt) AS s ON t.id = s.id \
         WHEN MATCHED AND s.u > t.u THEN UPDATE SET * \
         WHEN MATCHED THEN DELETE \
         WHEN NOT MATCHED BY SOURCE AND t.id > 5 THEN UPDATE SET tier = 'gone' \
         WHEN NOT MATCHED BY SOURCE THEN DELETE \
         WHEN NOT MATCHED AND s.id > 0 THEN INSERT (id, email) VALUES (s.id, s.email) \
         WHEN NOT MATCHED BY TARGET THEN INSERT *");
    assert!(
        parsed.text.contains("THEN UPDATE SET * WHEN MATCHED") && parsed.text.ends_with("THEN INSERT *"),
        "{}",
        parsed.text
    );
    let Statement::Write(Write::Merge(merge)) = parsed.statement else { panic!("a merge") };
    assert_eq!((merge.target, merge.target_alias.as_str()), (table("analytics.customers"), "t"));
    assert!(matches!(&merge.source, MergeSource::Query(q) if q.to_string().contains("$dt")));
    assert_eq!((merge.source_alias.as_str(), merge.on.to_string().as_str()), ("s", "t.id = s.id"));
    assert_eq!(
        merge.clauses.iter().map(described).collect::<Vec<_>>(),
        [
            "Matched Some(\"s.u > t.u\") UpdateAll",
            "Matched None Delete",
            "NotMatchedBySource Some(\"t.id > 5\") UPDATE SET tier = 'gone'",
            "NotMatchedBySource None Delete",
            "NotMatched Some(\"s.id > 0\") INSERT (id, email) VALUES (s.id, s.email)",
            "NotMatched None InsertAll",
        ]
    );
}

#[test]
fn a_star_in_a_string_or_a_query_is_left_alone() {
    let parsed = one("MERGE INTO a.t USING a.s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = 'UPDATE SET *'");
    let Statement::Write(Write::Merge(merge)) = parsed.statement else { panic!("a merge") };
    assert_eq!((merge.target_alias.as_str(), merge.source_alias.as_str()), ("t", "s"));
    assert_eq!(merge.source, MergeSource::Table(table("a.s")));
    assert_eq!(described(&merge.clauses[0]), "Matched None UPDATE SET v = 'UPDATE SET *'");
    assert!(matches!(one("SELECT * FROM raw.orders").statement, Statement::Query(_)));
}

#[test]
fn several_statements_delete_update_and_explain() {
    let parsed = parse(
        "DELETE FROM analytics.t WHERE dt = $dt; UPDATE analytics.t u SET v = v + 1, w = 'x' WHERE k = 3;\nEXPLAIN SELECT 1;",
        DATAFUSION,
    )
    .expect("parses");
    assert_eq!(parsed.len(), 3);
    assert!(
        matches!(&parsed[0].statement, Statement::Write(Write::Delete { predicate: Some(p), .. }) if p.to_string() == "dt = $dt")
    );
    let Statement::Write(Write::Update { alias, assignments, predicate, .. }) = &parsed[1].statement else {
        panic!("an update")
    };
    assert_eq!(alias.as_deref(), Some("u"));
    let assignments: Vec<(&str, String)> = assignments.iter().map(|(c, v)| (c.as_str(), v.to_string())).collect();
    assert_eq!(assignments, [("v", "v + 1".to_owned()), ("w", "'x'".to_owned())]);
    assert_eq!(text(predicate.as_ref()).as_deref(), Some("k = 3"));
    assert_eq!(parsed[2].statement.kind().as_str(), "query");
}

#[test]
fn what_lakewriter_does_not_run_is_named() {
    for (sql, expected) in [
        ("CREATE TABLE analytics.x (a INT)", "CREATE TABLE is not supported"),
        ("DROP TABLE analytics.x", "DROP TABLE is not supported"),
        ("INSERT INTO orders SELECT 1", "name the table `orders` as schema.table"),
        ("INSERT INTO a.t SELECT 1 RETURNING *", "INSERT … RETURNING is not supported"),
        (
            "MERGE INTO a.t USING (SELECT 1 AS k) ON t.k = k WHEN MATCHED THEN DELETE",
            "give the MERGE's source query an alias",
        ),
        ("MERGE INTO a.t x USING a.u x ON x.k = x.k WHEN MATCHED THEN DELETE", "both called `x`"),
        (
            "MERGE INTO a.t USING a.s ON t.k = s.k WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k)",
            "names 2 column(s) and gives 1",
        ),
        ("UPDATE a.t SET v = 1 FROM a.s", "UPDATE … FROM is not supported"),
        ("DELETE FROM a.t USING a.s WHERE t.k = s.k", "DELETE … USING is not supported"),
        ("INSERT OVERWRITE a.t PARTITION (dt > 3) SELECT 1", "write `column = value` or `column`"),
        ("SELEC 1", "cannot parse the SQL"),
        ("", "no SQL statement"),
    ] {
        let message = error(sql);
        assert!(message.contains(expected), "{sql}: {message}");
    }
}

#[test]
fn in_sparks_dialect_a_merges_stars_parse_and_each_statement_keeps_its_text_as_written() {
    let spark = lakewriter_core::Semantics {
        dialect: lakewriter_core::Dialect::Spark,
        ..lakewriter_core::Semantics::default()
    };
    let parsed = parse(
        "DELETE FROM a.t WHERE k = 1;\n\
         MERGE INTO a.t USING a.s ON t.k = s.k WHEN MATCHED AND s.v > 2 THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;\n\
         SELECT d - INTERVAL '6 days' FROM a.t",
        spark,
    )
    .expect("parses");
    let texts: Vec<&str> = parsed.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "DELETE FROM a.t WHERE k = 1",
            "MERGE INTO a.t USING a.s ON t.k = s.k WHEN MATCHED AND s.v > 2 THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
            "SELECT d - INTERVAL '6' DAY FROM a.t",
        ]
    );
    let Statement::Write(Write::Merge(merge)) = &parsed[1].statement else { panic!("a merge") };
    let clauses: Vec<String> = merge.clauses.iter().map(described).collect();
    // The literal is Spark's INT, as planning reads it.
    assert_eq!(clauses, ["Matched Some(\"s.v > CAST(2 AS Int32)\") UpdateAll", "NotMatched None InsertAll"]);
}
