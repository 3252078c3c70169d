//! A column added to a job's SQL (`on_schema_change`): the next run adds it to the table in the
//! commit of its rows, the partitions written before read it as NULL and say they lack it, and
//! `backfill --only stale` fills it in day by day — in every mode that can rewrite a partition's
//! rows. A second backfill changes nothing.

use serde_json::Value;

use crate::support::modes::{FAILING, GOOD, WRITTEN, project, table, table_uri};
use crate::support::reader::Reader;
use crate::support::s3::S3;
use crate::support::{Lake, Project, WriteMode, day};

/// The column the edit adds: a day's rows all have it, computed from their `status`.
pub(super) const ADDED: &str = "status_code";

/// `mode`'s job with the column [`ADDED`] after `created_at`, added by `policy`.
pub(super) fn with_added(mode: WriteMode, policy: &'static str) -> Project {
    project(&[mode], GOOD)
        .edited_sql(mode.as_str(), "created_at,", "created_at, upper(status) AS status_code,")
        .with_schema_change(mode.as_str(), policy)
}

/// Where a walk runs: a local lakehouse, or a prefix of the S3 test bucket.
pub(super) enum Place {
    Local(Lake),
    S3(S3),
}

impl std::ops::Deref for Place {
    type Target = Lake;

    fn deref(&self) -> &Lake {
        match self {
            Self::Local(lake) => lake,
            Self::S3(s3) => &s3.lake,
        }
    }
}

/// Raw orders for both days, and `mode`'s table written for both with the columns it had.
fn written_twice(mode: WriteMode) -> Lake {
    let Place::Local(lake) = written_at(mode, false) else { unreachable!("a local place") };
    lake
}

/// [`written_twice`], locally or on S3.
fn written_at(mode: WriteMode, on_s3: bool) -> Place {
    let place = raw_orders_at(&mode.as_str().replace('_', "-"), on_s3);
    place.set_project(&project(&[mode], GOOD));
    for dt in [WRITTEN, FAILING] {
        place.cli(&["run", mode.as_str(), "--dt", dt]).assert_code(0);
    }
    place
}

/// Raw orders for both days, locally or below the S3 prefix `schema-NAME`.
pub(super) fn raw_orders_at(name: &str, on_s3: bool) -> Place {
    if on_s3 {
        let s3 = S3::new(&format!("schema-{name}"));
        for dt in [WRITTEN, FAILING] {
            let batch = lakewriter_datagen::orders_for(day(dt));
            s3.put(
                &format!("raw/orders/dt={dt}/part-00000.parquet"),
                lakewriter_datagen::parquet_bytes(&batch).expect("parquet"),
            );
        }
        Place::S3(s3)
    } else {
        Place::Local(Lake::new(WRITTEN, FAILING))
    }
}

/// The table's rows of `day` as the independent reader reads them.
pub(super) fn rows_of(lake: &Lake, mode: WriteMode, day: &str) -> Vec<serde_json::Map<String, Value>> {
    let rows = Reader::new(lake).rows(&table_uri(lake, mode));
    rows.into_iter().filter(|r| r["dt"] == day).collect()
}

/// An audit against a reproduction: the day written without the column is told as a change of
/// columns, not as rows that differ; the day rerun is equal.
fn audit_tells_the_lacking_day(lake: &Lake, mode: WriteMode) {
    // The day written without the column is told as a change of columns, not as rows that differ.
    let audit = lake.cli(&["--json", "audit", mode.as_str(), "--scratch"]);
    audit.assert_code(1);
    let lines = crate::support::json_lines(&audit);
    let by_day: Vec<(&str, &str, bool)> = lines
        .iter()
        .filter_map(|l| Some((l["partition"].as_str()?, l["verdict"].as_str()?, l["schema_changed"].as_bool()?)))
        .collect();
    let expected = [(format!("dt={WRITTEN}"), "differs", true), (format!("dt={FAILING}"), "equal", false)];
    let expected: Vec<(&str, &str, bool)> = expected.iter().map(|(p, v, c)| (p.as_str(), *v, *c)).collect();
    assert_eq!(by_day, expected, "{mode:?}");
}

/// delta-rs Python, polars and pyarrow read `mode`'s table as lakewriter does.
fn readers_agree(lake: &Lake, mode: WriteMode) {
    let select = lake.cli(&["--json", "sql", "-e", &format!("SELECT * FROM {}", table(mode))]);
    select.assert_code(0);
    let read = Reader::new(lake).interop(&table_uri(lake, mode), &select.stdout);
    for reader in ["deltalake", "polars", "pyarrow_dataset"] {
        assert_eq!(read[reader]["rows"], read["lakewriter"]["rows"], "{mode:?}: {reader} row count");
        assert_eq!(read[reader]["digest"], read["lakewriter"]["digest"], "{mode:?}: {reader} reads other rows");
        let columns = read[reader]["columns"].as_array().expect("columns");
        assert!(columns.iter().any(|c| c == ADDED), "{mode:?}: {reader} sees the added column");
    }
}

/// Whether every row of `day` has [`ADDED`] filled in (its `status` upper-cased), or every row has
/// it NULL; panics on a mix or a wrong value.
pub(super) fn filled(lake: &Lake, mode: WriteMode, day: &str) -> bool {
    let rows = rows_of(lake, mode, day);
    assert!(!rows.is_empty(), "{mode:?} {day}: no rows");
    let nulls = rows.iter().filter(|r| r[ADDED].is_null()).count();
    for row in rows.iter().filter(|r| !r[ADDED].is_null()) {
        let status = row["status"].as_str().expect("a status");
        assert_eq!(row[ADDED], status.to_uppercase(), "{mode:?} {day}: {row:?}");
    }
    assert!(nulls == 0 || nulls == rows.len(), "{mode:?} {day}: {nulls} of {} rows NULL", rows.len());
    nulls == 0
}

/// `status` of `mode` over both days: each partition's label and the columns it lacks.
pub(super) fn lacking(lake: &Lake, mode: WriteMode) -> Vec<(String, Vec<String>)> {
    let status = lake.status(&[mode.as_str(), "--from", WRITTEN, "--to", FAILING]);
    status.partitions.iter().map(|p| (p.label(), p.lacking().into_iter().map(str::to_owned).collect())).collect()
}

fn stale_lacking() -> (String, Vec<String>) {
    ("stale:code_changed,lacks_column".to_owned(), vec![ADDED.to_owned()])
}

pub(super) fn fresh() -> (String, Vec<String>) {
    ("fresh".to_owned(), Vec::new())
}

/// The whole walk for one dated mode that rewrites a partition's rows on a rerun, locally or on
/// S3.
fn walk(mode: WriteMode, on_s3: bool) {
    let place = written_at(mode, on_s3);
    let lake: &Lake = &place;
    lake.set_project(&with_added(mode, "append_new_columns"));
    assert_eq!(lacking(lake, mode), vec![stale_lacking(), stale_lacking()], "{mode:?}: before any run");
    let plan = lake.cli(&["plan", mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
    plan.assert_code(0);
    assert!(
        plan.stdout.contains(
            "a run adds column `status_code` (string); 2 written partitions will read it as NULL until rerun"
        ),
        "{mode:?}: {}",
        plan.stdout
    );

    // `verify` runs the day twice on a scratch copy: the first application adds the column, the
    // second changes nothing; the live table is left as it was.
    if !on_s3 {
        // (`verify` copies a table to a local scratch folder: it refuses an S3 table.)
        lake.cli(&["verify", mode.as_str(), "--dt", FAILING]).assert_code(0);
        assert_eq!(lacking(lake, mode), vec![stale_lacking(), stale_lacking()], "{mode:?}: verified, not written");
    }

    let run = lake.cli(&["--json", "run", mode.as_str(), "--dt", FAILING]);
    run.assert_code(0);
    let report = run.json().0.remove(0);
    let added = serde_json::json!({"added": [{"column": ADDED, "type": "string"}], "missing": [], "ignored": [], "dropped": []});
    assert_eq!(report.schema_change.as_ref(), Some(&added), "{mode:?}");
    assert_eq!(report.note.as_deref(), Some("adds column `status_code` (string)"), "{mode:?}");
    assert_eq!((filled(lake, mode, WRITTEN), filled(lake, mode, FAILING)), (false, true), "{mode:?}");
    readers_agree(lake, mode);
    assert_eq!(lacking(lake, mode), vec![stale_lacking(), fresh()], "{mode:?}: one day run");
    if mode == WriteMode::OverwritePartition && !on_s3 {
        audit_tells_the_lacking_day(lake, mode);
    }
    let schema = Reader::new(lake).schema(&table_uri(lake, mode));
    assert_eq!(schema.last(), Some(&(ADDED.to_owned(), "string".to_owned(), true)), "{mode:?}: added last, nullable");

    let backfill =
        lake.cli(&["--json", "backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
    backfill.assert_code(0);
    let (reports, _) = backfill.json();
    assert_eq!(reports.iter().map(|r| r.partition.as_str()).collect::<Vec<_>>(), [format!("dt={WRITTEN}")], "{mode:?}");
    assert!(reports[0].schema_change.is_none(), "{mode:?}: the column was there: {:?}", reports[0].schema_change);
    if let Some(changes) = &reports[0].changes {
        // A keyed rerun fills in the rows of its keys: each is counted as updated.
        let rows = rows_of(lake, mode, WRITTEN).len() as u64;
        assert_eq!((changes.inserted, changes.updated, changes.unchanged), (0, rows, 0), "{mode:?}");
    }
    assert_eq!((filled(lake, mode, WRITTEN), filled(lake, mode, FAILING)), (true, true), "{mode:?}");
    assert_eq!(lacking(lake, mode), vec![fresh(), fresh()], "{mode:?}: backfilled");

    // An audit against a reproduction with the code now: the same rows, the column in its SQL
    // position there and at the end here.
    let audit = lake.cli(&["--json", "audit", mode.as_str(), "--scratch"]);
    audit.assert_code(0);
    readers_agree(lake, mode);
    let verdicts: Vec<String> =
        crate::support::json_lines(&audit).iter().filter_map(|l| l["verdict"].as_str().map(str::to_owned)).collect();
    assert!(!verdicts.is_empty() && verdicts.iter().all(|v| v == "equal"), "{mode:?}: {}", audit.stdout);

    // Run twice: every partition again changes nothing.
    let digest = lake.digest(&table(mode), None);
    lake.cli(&["backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING]).assert_code(0);
    assert_eq!(lake.digest(&table(mode), None).digest, digest.digest, "{mode:?}: a second backfill");
}

#[test]
fn overwrite_partition_fills_an_added_column_by_backfilling_stale_days() {
    walk(WriteMode::OverwritePartition, false);
}

#[test]
fn delete_insert_fills_an_added_column_by_backfilling_stale_days() {
    walk(WriteMode::DeleteInsert, false);
}

#[test]
fn on_s3_an_added_column_is_filled_by_backfilling_stale_days() {
    walk(WriteMode::OverwritePartition, true);
    walk(WriteMode::Merge, true);
}

#[test]
fn merge_fills_an_added_column_in_the_rows_of_its_keys_by_backfilling_stale_days() {
    walk(WriteMode::Merge, false);
}

#[test]
fn append_dedup_fills_an_added_column_in_the_rows_it_kept_by_backfilling_stale_days() {
    walk(WriteMode::AppendDedup, false);
}

#[test]
fn append_adds_the_column_for_new_days_and_never_rewrites_a_day_it_appended() {
    let mode = WriteMode::Append;
    let lake = written_twice(mode);
    lake.cli(&["run", mode.as_str(), "--dt", WRITTEN]).assert_code(0);
    lake.set_project(&with_added(mode, "append_new_columns"));
    // Both days were appended: a rerun appends nothing, so neither fills the column in.
    let backfill =
        lake.cli(&["--json", "backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
    backfill.assert_code(0);
    let (reports, summary) = backfill.json();
    assert_eq!(
        (summary.skipped, reports[0].note.as_deref()),
        (2, Some("already appended; nothing appended. --force appends again and duplicates these rows"))
    );
    assert_eq!(lacking(&lake, mode), vec![stale_lacking(), stale_lacking()], "still lacking, and said so");
    // A day appended after the edit has it, in the commit that adds it to the table.
    let lake = Lake::new(WRITTEN, FAILING);
    lake.set_project(&project(&[mode], GOOD));
    lake.cli(&["run", mode.as_str(), "--dt", WRITTEN]).assert_code(0);
    lake.set_project(&with_added(mode, "append_new_columns"));
    let run = lake.cli(&["--json", "run", mode.as_str(), "--dt", FAILING]);
    run.assert_code(0);
    assert_eq!(run.json().0[0].note.as_deref(), Some("adds column `status_code` (string)"));
    assert_eq!((filled(&lake, mode, WRITTEN), filled(&lake, mode, FAILING)), (false, true));
    let digest = lake.digest(&table(mode), None);
    lake.cli(&["run", mode.as_str(), "--dt", FAILING]).assert_code(0);
    assert_eq!(lake.digest(&table(mode), None), digest, "run twice: appended once");
}

#[test]
fn rebuild_replaces_the_columns_with_its_results_and_says_which_it_adds() {
    let mode = WriteMode::Rebuild;
    let lake = Lake::new(WRITTEN, FAILING);
    lake.set_project(&project(&[mode], GOOD));
    lake.cli(&["run", mode.as_str()]).assert_code(0);
    lake.set_project(&project(&[mode], GOOD).edited_sql(
        "rebuild",
        "created_at,",
        "created_at, upper(status) AS status_code,",
    ));
    let run = lake.cli(&["--json", "run", mode.as_str()]);
    run.assert_code(0);
    let added = serde_json::json!({"added": [{"column": ADDED, "type": "string"}], "missing": [], "ignored": [], "dropped": []});
    assert_eq!(run.json().0[0].schema_change.as_ref(), Some(&added));
    assert!(filled(&lake, mode, WRITTEN) && filled(&lake, mode, FAILING));
    let digest = lake.digest(&table(mode), None);
    lake.cli(&["run", mode.as_str()]).assert_code(0);
    assert_eq!(lake.digest(&table(mode), None).digest, digest.digest, "run twice");
}

#[test]
fn ignore_leaves_the_new_column_out_and_a_missing_one_is_written_as_null() {
    let mode = WriteMode::OverwritePartition;
    let lake = written_twice(mode);
    let edited = with_added(mode, "ignore").edited_sql(mode.as_str(), "customer_id AS customer_id, ", "");
    lake.set_project(&edited);
    let run = lake.cli(&["--json", "run", mode.as_str(), "--dt", FAILING]);
    run.assert_code(0);
    let report = run.json().0.remove(0);
    let expected = serde_json::json!({
        "added": [], "missing": [{"column": "customer_id", "type": "long"}],
        "ignored": [{"column": ADDED, "type": "string"}], "dropped": []
    });
    assert_eq!(report.schema_change.as_ref(), Some(&expected));
    assert_eq!(
        report.note.as_deref(),
        Some(
            "writes `customer_id` (long) as NULL (not in the result); leaves out `status_code` (string) (not in the table: on_schema_change = \"ignore\")"
        )
    );
    let rows = rows_of(&lake, mode, FAILING);
    assert!(rows.iter().all(|r| r["customer_id"].is_null() && !r.contains_key(ADDED)), "{:?}", rows.first());
    assert!(rows_of(&lake, mode, WRITTEN).iter().all(|r| !r["customer_id"].is_null()), "the other day is as it was");
}

#[test]
fn a_changed_type_is_refused_whatever_the_policy_naming_both_types_and_the_fix() {
    for policy in ["append_new_columns", "ignore", "sync_all_columns"] {
        let mode = WriteMode::DeleteInsert;
        let lake = written_twice(mode);
        let before = lake.digest(&table(mode), None);
        let edited = project(&[mode], GOOD)
            .edited_sql(mode.as_str(), "customer_id AS customer_id", "CAST(customer_id AS STRING) AS customer_id")
            .with_schema_change(mode.as_str(), policy);
        lake.set_project(&edited);
        let run = lake.cli(&["--json", "run", mode.as_str(), "--dt", FAILING]);
        run.assert_code(1);
        let error = run.json().0.remove(0).error.expect("an error");
        assert_eq!(
            error,
            format!(
                "delete_insert dt={FAILING}: failures.delete_insert: the result does not match the table's schema: column `customer_id` is long in the table but string in the result: a column keeps its type (on_schema_change adds and drops columns, and lakewriter never coerces a value); cast it in the job's SQL (`CAST(… AS BIGINT) AS customer_id`), or rebuild the table to give it the new type; nothing was committed"
            ),
            "{policy}"
        );
        assert_eq!(lake.digest(&table(mode), None), before, "{policy}: nothing committed");
    }
}

#[test]
fn sync_all_columns_keeps_a_column_the_result_no_longer_has_where_the_run_replaces_one_day() {
    let mode = WriteMode::OverwritePartition;
    let lake = written_twice(mode);
    let edited = with_added(mode, "sync_all_columns").edited_sql(mode.as_str(), "customer_id AS customer_id, ", "");
    lake.set_project(&edited);
    let run = lake.cli(&["--json", "run", mode.as_str(), "--dt", FAILING]);
    run.assert_code(0);
    let report = run.json().0.remove(0);
    assert_eq!(
        report.note.as_deref(),
        Some(
            "adds column `status_code` (string); writes `customer_id` (long) as NULL (not in the result); kept in the table: sync_all_columns drops a column only in a commit that replaces every row (a rebuild), or after a backfill of every written day with --replace-schema"
        )
    );
    let schema = Reader::new(&lake).schema(&table_uri(&lake, mode));
    let names: Vec<&str> = schema.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(names, ["order_id", "customer_id", "amount", "status", "created_at", "dt", ADDED]);
}

#[test]
fn sync_all_columns_drops_a_column_in_a_rebuild() {
    let mode = WriteMode::Rebuild;
    let lake = Lake::new(WRITTEN, FAILING);
    lake.set_project(&project(&[mode], GOOD));
    lake.cli(&["run", mode.as_str()]).assert_code(0);
    let edited = project(&[mode], GOOD)
        .edited_sql("rebuild", "customer_id AS customer_id, ", "")
        .with_schema_change("rebuild", "sync_all_columns");
    lake.set_project(&edited);
    let run = lake.cli(&["--json", "run", mode.as_str()]);
    run.assert_code(0);
    let dropped = serde_json::json!({"added": [], "missing": [], "ignored": [], "dropped": [{"column": "customer_id", "type": "long"}]});
    assert_eq!(run.json().0[0].schema_change.as_ref(), Some(&dropped));
    let schema = Reader::new(&lake).schema(&table_uri(&lake, mode));
    assert!(schema.iter().all(|(name, _, _)| name != "customer_id"), "{schema:?}");
}

/// `backfill --replace-schema` over every written day: each day is rewritten with the column NULL,
/// then one commit drops it; a second such backfill changes nothing, and a column added again
/// later is one the day not rerun lacks.
#[test]
fn a_whole_table_backfill_with_replace_schema_drops_a_column_the_result_no_longer_has() {
    let mode = WriteMode::OverwritePartition;
    let lake = written_twice(mode);
    let rows = Reader::new(&lake).rows(&table_uri(&lake, mode)).len();
    let without = project(&[mode], GOOD)
        .edited_sql(mode.as_str(), "customer_id AS customer_id, ", "")
        .with_schema_change(mode.as_str(), "sync_all_columns");
    lake.set_project(&without);
    let args = ["backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--replace-schema"];
    let backfill = lake.cli(&[&["--json"][..], &args].concat());
    backfill.assert_code(0);
    let lines = crate::support::json_lines(&backfill);
    let dropped: Vec<&Value> = lines.iter().filter_map(|l| l.get("columns_dropped")).collect();
    assert_eq!(dropped.len(), 1, "{}", backfill.stdout);
    assert_eq!(dropped[0]["dropped"], serde_json::json!([{"column": "customer_id", "type": "long"}]));
    assert!(lines.last().is_some_and(|l| l.get("pipeline").is_some()), "the closing line last: {}", backfill.stdout);
    let schema = Reader::new(&lake).schema(&table_uri(&lake, mode));
    let names: Vec<&str> = schema.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(names, ["order_id", "amount", "status", "created_at", "dt"]);
    assert_eq!(Reader::new(&lake).rows(&table_uri(&lake, mode)).len(), rows, "every row stays");
    assert_eq!(lacking(&lake, mode), vec![fresh(), fresh()]);

    // Run twice: the column is gone, nothing to drop, the same rows.
    let digest = lake.digest(&table(mode), None);
    let again = lake.cli(&args);
    again.assert_code(0);
    assert!(!again.stdout.contains("dropped column"), "{}", again.stdout);
    assert_eq!(lake.digest(&table(mode), None).digest, digest.digest, "a second backfill");

    // The column added again: a day not rerun lacks it, as any day written before an add does.
    lake.set_project(&project(&[mode], GOOD).with_schema_change(mode.as_str(), "append_new_columns"));
    lake.cli(&["run", mode.as_str(), "--dt", FAILING]).assert_code(0);
    let lacks = lacking(&lake, mode);
    assert_eq!(lacks[0], ("stale:code_changed,lacks_column".to_owned(), vec!["customer_id".to_owned()]), "{lacks:?}");
    assert_eq!(lacks[1], fresh(), "{lacks:?}");
}

#[test]
fn replace_schema_is_refused_before_any_day_runs_where_it_could_not_drop() {
    let lake = written_twice(WriteMode::OverwritePartition);
    let merge = written_twice(WriteMode::Merge);
    let without = |mode: WriteMode, policy| {
        project(&[mode], GOOD)
            .edited_sql(mode.as_str(), "customer_id AS customer_id, ", "")
            .with_schema_change(mode.as_str(), policy)
    };
    for (lake, mode, policy, to, expected) in [
        (
            &lake,
            WriteMode::OverwritePartition,
            "append_new_columns",
            FAILING,
            "which on_schema_change = \"sync_all_columns\" asks for; the job has \"append_new_columns\"",
        ),
        (
            &lake,
            WriteMode::OverwritePartition,
            "sync_all_columns",
            WRITTEN,
            "1 written partition(s) are outside 2026-09-01..2026-09-01 (the first: dt=2026-09-02)",
        ),
        (
            &merge,
            WriteMode::Merge,
            "sync_all_columns",
            FAILING,
            "write = \"merge\" keeps the rows a rerun does not replace",
        ),
    ] {
        let before = lake.digest(&table(mode), None);
        lake.set_project(&without(mode, policy));
        let run = lake.cli(&["backfill", mode.as_str(), "--from", WRITTEN, "--to", to, "--replace-schema"]);
        run.assert_code(2);
        assert!(run.stderr.contains(&format!("backfill --replace-schema {}: ", mode.as_str())), "{}", run.stderr);
        assert!(run.stderr.contains(expected), "{mode:?} {policy}: {}", run.stderr);
        assert_eq!(lake.digest(&table(mode), None), before, "nothing ran");
    }
}
