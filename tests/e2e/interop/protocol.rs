//! The Delta protocol lakewriter writes — the lowest, with no table feature — and the tables it
//! refuses to write: those whose protocol asks for a feature it does not write with (deletion
//! vectors, column mapping), enabled by another engine. Refused before anything is written.

use serde_json::json;

use crate::support::Lake;
use crate::support::reader::Reader;

const DAYS: [&str; 2] = ["2026-09-01", "2026-09-02"];

/// A demo lakehouse with `daily_orders` and `customers` written for two days.
fn written() -> Lake {
    let lake = Lake::demo();
    for job in ["daily_orders", "customers"] {
        lake.cli(&["backfill", job, "--from", DAYS[0], "--to", DAYS[1]]).assert_code(0);
    }
    lake
}

fn uri(lake: &Lake, table_dir: &str) -> String {
    lake.root().join(table_dir).to_str().expect("utf-8 path").to_owned()
}

#[test]
fn the_tables_lakewriter_writes_ask_for_reader_version_1_writer_version_2_and_no_feature() {
    let lake = written();
    lake.cli(&["sql", "-e", "INSERT INTO analytics.appended SELECT 1 AS a"]).assert_code(0);
    let reader = Reader::new(&lake);
    let lowest =
        json!({"min_reader_version": 1, "min_writer_version": 2, "reader_features": [], "writer_features": []});
    for table_dir in ["analytics/daily_orders", "core/customers", "analytics/appended"] {
        assert_eq!(reader.protocol(&uri(&lake, table_dir)), lowest, "{table_dir}");
    }
}

#[test]
fn a_table_another_engine_gave_deletion_vectors_or_column_mapping_is_refused_and_left_as_it_is() {
    for (feature, named) in [("DeletionVectors", "deletionVectors"), ("ColumnMapping", "columnMapping")] {
        let lake = written();
        let reader = Reader::new(&lake);
        for table_dir in ["analytics/daily_orders", "core/customers"] {
            reader.add_feature(feature, &uri(&lake, table_dir));
        }
        let before = [lake.commit_count("analytics/daily_orders"), lake.commit_count("core/customers")];
        let digests = [lake.digest("analytics.daily_orders", None), lake.digest("core.customers", None)];
        let runs = [
            ("daily_orders", lake.cli(&["run", "daily_orders", "--dt", "2026-09-03"])),
            ("customers", lake.cli(&["run", "customers", "--dt", "2026-09-03"])),
            ("daily_orders", lake.cli(&["sql", "-e", "DELETE FROM analytics.daily_orders WHERE customer_id = 1"])),
        ];
        for (job, run) in &runs {
            run.assert_code(1);
            let table = if *job == "customers" { "core.customers" } else { "analytics.daily_orders" };
            let expected = format!(
                "{table}: the table's protocol asks for {named}, which lakewriter does not write with (another engine enabled it); nothing was written"
            );
            assert!(run.stderr.contains(&expected), "{feature}, {job}:\n{}", run.stderr);
        }
        let after = [lake.commit_count("analytics/daily_orders"), lake.commit_count("core/customers")];
        assert_eq!(after, before, "{feature}: no commit");
        assert_eq!(lake.digest("analytics.daily_orders", None), digests[0], "{feature}");
        assert_eq!(lake.digest("core.customers", None), digests[1], "{feature}");
    }
}
