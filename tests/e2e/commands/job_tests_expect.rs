//! What a test can expect, and `--update` writing it back: an expect file written by `--update`
//! passes the next `lakewriter test` in every format (an empty string apart from NULL, a
//! 30-digit decimal as its digits), a decimal compares at every digit, `rows = []` expects no
//! rows, and `expect.schema` types the expected values and checks the table's columns.

use crate::support::job_test::{JobTest, test_results};
use crate::support::{Lake, daily_orders, parse_lines};

const DAY: &str = "2026-09-30";

const ORDERS: &[&str] = &[
    "{ customer_id = 1, amount = \"123456789012345678901234567890.12\", dt = 2026-09-30 }",
    "{ customer_id = 2, amount = \"7.25\", dt = 2026-09-30 }",
    "{ customer_id = 3, amount = \"1.00\", dt = 2026-09-30 }",
];

/// A test of `sql` on [`ORDERS`] (amounts as `DECIMAL(38,2)`) whose expected rows are in `file`.
fn update_test(file: &str) -> JobTest {
    JobTest::new("daily_orders", DAY)
        .given("raw.orders", ORDERS)
        .given_type("raw.orders", "amount", "DECIMAL(38,2)")
        .expect_file(file)
}

/// `--update` of the test of `sql` into an expect file of each format, each then passing.
#[track_caller]
fn updated(lake: &Lake, sql: &str, formats: &[&str]) {
    let mut project = daily_orders(sql);
    for format in formats {
        project = project.test(format, update_test(&format!("tests/expected.{format}")));
    }
    lake.set_project(&project);
    for format in formats {
        lake.cli(&["test", "--update", format]).assert_code(0);
        let run = lake.cli(&["test", format]);
        assert_eq!(run.code, 0, "{format}:\n{}", run.stdout);
    }
}

/// Each customer with a note: `''` for customer 1, text with a comma and quotes for 2, NULL for 3.
const NOTES_SQL: &str = "SELECT customer_id, \
     CASE WHEN customer_id = 1 THEN '' WHEN customer_id = 2 THEN 'a,\"b\"' END AS note, $dt AS dt \
     FROM raw.orders WHERE dt = $dt";

#[test]
fn update_keeps_an_empty_string_apart_from_null() {
    let lake = Lake::empty(&[]);
    updated(&lake, NOTES_SQL, &["csv", "jsonl", "parquet"]);
    // An empty string is a quoted empty field, NULL an empty one.
    let csv = std::fs::read_to_string(lake.path().join("tests/expected.csv")).expect("the CSV file");
    assert_eq!(csv, "customer_id,note,dt\n1,\"\",2026-09-30\n2,\"a,\"\"b\"\"\",2026-09-30\n3,,2026-09-30\n");
    let jsonl = std::fs::read_to_string(lake.path().join("tests/expected.jsonl")).expect("the JSON Lines file");
    let lines: Vec<serde_json::Value> = parse_lines(&jsonl);
    assert_eq!((&lines[0]["note"], &lines[2]["note"]), (&serde_json::json!(""), &serde_json::Value::Null), "{jsonl}");

    // A job that writes NULL where the file has an empty string fails.
    lake.set_project(
        &daily_orders(&NOTES_SQL.replace("THEN ''", "THEN NULL")).test("csv", update_test("tests/expected.csv")),
    );
    let run = lake.cli(&["test", "csv"]);
    run.assert_code(1);
    run.assert_line("     missing: (customer_id=1, note='', dt=2026-09-30)");
    run.assert_line("     unexpected: (customer_id=1, note=NULL, dt=2026-09-30)");
}

#[test]
fn update_writes_a_decimal_as_its_digits() {
    let lake = Lake::empty(&[]);
    updated(
        &lake,
        "SELECT customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt",
        &["jsonl", "csv", "parquet"],
    );
    let csv = std::fs::read_to_string(lake.path().join("tests/expected.csv")).expect("the CSV file");
    assert_eq!(
        csv,
        "customer_id,amount,dt\n1,123456789012345678901234567890.12,2026-09-30\n2,7.25,2026-09-30\n3,1.00,2026-09-30\n"
    );
    // In JSON Lines, as a string: a JSON number would be read as a float.
    let jsonl = std::fs::read_to_string(lake.path().join("tests/expected.jsonl")).expect("the JSON Lines file");
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().expect("a line")).expect("JSON");
    assert_eq!(first["amount"], "123456789012345678901234567890.12", "{jsonl}");
}

#[test]
fn a_30_digit_decimal_compares_at_every_digit() {
    let lake = Lake::empty(&[]);
    let expecting = |last: &str| {
        JobTest::new("daily_orders", DAY)
            .given("raw.orders", &ORDERS[..1])
            .given_type("raw.orders", "amount", "DECIMAL(38,2)")
            .expect(&[&format!(
                "{{ customer_id = 1, amount = \"123456789012345678901234567890{last}\", dt = 2026-09-30 }}"
            )])
    };
    let sql = "SELECT customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt";
    lake.set_project(&daily_orders(sql).test("same", expecting(".12")).test("last_digit", expecting(".13")));
    lake.cli(&["test", "same"]).assert_code(0);
    let run = lake.cli(&["test", "last_digit"]);
    run.assert_code(1);
    run.assert_line("     missing: (customer_id=1, amount=123456789012345678901234567890.13, dt=2026-09-30)");
}

#[test]
fn an_empty_list_of_rows_expects_no_rows() {
    let lake = Lake::empty(&[]);
    let sql = "SELECT customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt AND amount > 100";
    let none = JobTest::new("daily_orders", DAY)
        .given("raw.orders", &["{ customer_id = 1, amount = 10.0, dt = 2026-09-30 }"])
        .expect(&[]);
    let updated = |format: &str| none.clone().expect_file(&format!("tests/none.{format}"));
    let formats = ["csv", "jsonl", "parquet"];
    let project = formats.iter().fold(daily_orders(sql).test("none", none.clone()), |p, f| p.test(f, updated(f)));
    lake.set_project(&project);
    let run = lake.cli(&["test", "none"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    // No rows written by `--update` read back as no rows.
    for format in formats {
        lake.cli(&["test", "--update", format]).assert_code(0);
        let run = lake.cli(&["test", format]);
        assert_eq!(run.code, 0, "{format}: {}", run.stdout);
    }

    // A job that writes rows fails it, naming them.
    lake.set_project(&daily_orders(&sql.replace(" AND amount > 100", "")).test("none", none));
    let run = lake.cli(&["--json", "test", "none"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let detail = results["none"].check("expected_rows").detail.clone().unwrap_or_default();
    assert_eq!(detail, "expected no rows; the table has 1\nunexpected: (customer_id=1, amount=10.0, dt=2026-09-30)");
}

#[test]
fn expect_schema_types_the_expected_values_and_checks_the_columns() {
    let lake = Lake::empty(&[]);
    let sql = "SELECT customer_id, amount, $dt AS dt FROM raw.orders WHERE dt = $dt";
    let rows = [
        "{ customer_id = 1, amount = \"123456789012345678901234567890.12\", dt = 2026-09-30 }",
        "{ customer_id = 2, amount = 7.25, dt = 2026-09-30 }",
        "{ customer_id = 3, amount = 1, dt = 2026-09-30 }",
    ];
    let test = || {
        JobTest::new("daily_orders", DAY)
            .given("raw.orders", ORDERS)
            .given_type("raw.orders", "amount", "DECIMAL(38,2)")
            .expect(&rows)
    };
    // A column of text and numbers needs one type: the error says which key gives it.
    lake.set_project(&daily_orders(sql).test("t", test()));
    let run = lake.cli(&["test"]);
    run.assert_code(2);
    run.assert_line(
        "ERROR t: key `tests.t.expect.rows`: column `amount` holds a VARCHAR in row 0 and a DOUBLE in row 1: give it one type with `schema`",
    );
    lake.set_project(&daily_orders(sql).test("t", test().expect_type("amount", "DECIMAL(38,2)")));
    let run = lake.cli(&["test"]);
    assert_eq!(run.code, 0, "{}", run.stdout);

    // The table's column must be of the type the schema gives it.
    lake.set_project(&daily_orders(sql).test("t", test().expect_type("amount", "DECIMAL(38,4)")));
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let detail = results["t"].check("expected_rows").detail.clone().unwrap_or_default();
    assert_eq!(detail, "column `amount` is decimal(38,2) in the table, not DECIMAL(38,4) as `expect.schema` says");

    // With no rows, the schema's columns are the ones expected.
    let empty = |types: &[(&str, &str)]| {
        let sql = format!("{sql} AND customer_id > 100");
        let test = types.iter().fold(
            JobTest::new("daily_orders", DAY)
                .given("raw.orders", ORDERS)
                .given_type("raw.orders", "amount", "DECIMAL(38,2)")
                .expect(&[]),
            |test, (column, sql_type)| test.expect_type(column, sql_type),
        );
        daily_orders(&sql).test("t", test)
    };
    let all = [("customer_id", "BIGINT"), ("amount", "DECIMAL(38,2)"), ("dt", "DATE")];
    lake.set_project(&empty(&all));
    let run = lake.cli(&["test"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    lake.set_project(&empty(&all[..2]));
    let run = lake.cli(&["--json", "test"]);
    run.assert_code(1);
    let (results, _) = test_results(&run);
    let detail = results["t"].check("expected_rows").detail.clone().unwrap_or_default();
    assert_eq!(detail, "the expected rows have no column `dt` of the table");
}
