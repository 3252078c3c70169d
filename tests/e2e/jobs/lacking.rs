//! A partition whose rows lack a column the job now writes is stale (reason `lacks_column`),
//! whoever wrote it and whenever: a day written by the job's old code after the column was added
//! (another worker, an old deployment, a backfill running beside the new one), and a day written
//! while `on_schema_change = "ignore"` left the column out. A backfill of the stale days fills the
//! column in every such row; a second one changes nothing.

use crate::support::modes::{FAILING, GOOD, WRITTEN, project, table};
use crate::support::{Lake, Project, WriteMode};

use super::schema_changes::{ADDED, Place, filled, fresh, lacking, raw_orders_at, rows_of, with_added};

/// A day's state label and the columns it lacks, stale for `reasons` lacking [`ADDED`].
fn stale(reasons: &str) -> (String, Vec<String>) {
    (format!("stale:{reasons}"), vec![ADDED.to_owned()])
}

/// The job's code before the column: the same policy, the column not in its SQL.
fn old_code(mode: WriteMode) -> Project {
    project(&[mode], GOOD).with_schema_change(mode.as_str(), "append_new_columns")
}

/// `backfill --only stale` over both days runs exactly `days`, filling in every row of them (a
/// keyed mode counts each row it fills as updated); then every day is filled in and fresh, and a
/// second backfill changes nothing.
fn backfill_fills(lake: &Lake, mode: WriteMode, days: &[&str]) {
    let backfill =
        lake.cli(&["--json", "backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
    backfill.assert_code(0);
    let (reports, _) = backfill.json();
    let ran: Vec<String> = reports.iter().map(|r| r.partition.clone()).collect();
    let expected: Vec<String> = days.iter().map(|d| format!("dt={d}")).collect();
    assert_eq!(ran, expected, "{mode:?}");
    for report in &reports {
        if let Some(changes) = &report.changes {
            let day = report.partition.trim_start_matches("dt=");
            let rows = rows_of(lake, mode, day).len() as u64;
            assert_eq!((changes.inserted, changes.updated), (0, rows), "{mode:?} {day}: every row filled in");
        }
    }
    assert_eq!((filled(lake, mode, WRITTEN), filled(lake, mode, FAILING)), (true, true), "{mode:?}");
    assert_eq!(lacking(lake, mode), vec![fresh(), fresh()], "{mode:?}: backfilled");
    let digest = lake.digest(&table(mode), None);
    lake.cli(&["backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING]).assert_code(0);
    assert_eq!(lake.digest(&table(mode), None).digest, digest.digest, "{mode:?}: a second backfill");
}

/// The new code adds the column with the first day; the old code then writes the second day,
/// with the column NULL: that day is stale for its code and for the column it lacks, and a
/// backfill of the stale days fills it in.
fn old_code_after_the_column(mode: WriteMode, on_s3: bool) {
    let place = raw_orders_at(&format!("old-code-{}", mode.as_str().replace('_', "-")), on_s3);
    let lake: &Lake = &place;
    lake.set_project(&with_added(mode, "append_new_columns"));
    lake.cli(&["run", mode.as_str(), "--dt", WRITTEN]).assert_code(0);
    lake.set_project(&old_code(mode));
    lake.cli(&["run", mode.as_str(), "--dt", FAILING]).assert_code(0);
    assert_eq!((filled(lake, mode, WRITTEN), filled(lake, mode, FAILING)), (true, false), "{mode:?}");
    lake.set_project(&with_added(mode, "append_new_columns"));
    assert_eq!(lacking(lake, mode), vec![fresh(), stale("code_changed,lacks_column")], "{mode:?}");
    let plan = lake.cli(&["plan", mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
    plan.assert_code(0);
    assert!(
        plan.stdout.contains("stale: code changed, lacks column; fills `status_code`"),
        "{mode:?}: {}",
        plan.stdout
    );
    backfill_fills(lake, mode, &[FAILING]);
}

#[test]
fn a_day_the_old_code_wrote_after_a_column_was_added_is_stale_and_filled_in_every_mode() {
    for mode in [WriteMode::OverwritePartition, WriteMode::DeleteInsert, WriteMode::Merge, WriteMode::AppendDedup] {
        old_code_after_the_column(mode, false);
    }
}

#[test]
fn on_s3_a_day_the_old_code_wrote_after_a_column_was_added_is_stale_and_filled() {
    old_code_after_the_column(WriteMode::Merge, true);
}

#[test]
fn old_and_new_backfills_at_the_same_time_leave_days_a_backfill_of_the_stale_ones_fills() {
    let mode = WriteMode::Merge;
    let Place::Local(lake) = raw_orders_at("old-and-new", false) else { unreachable!("a local place") };
    lake.set_project(&with_added(mode, "append_new_columns"));
    std::fs::write(lake.path().join("old.toml"), old_code(mode).to_toml()).expect("old project");
    let backfill = |project: &str| {
        let args = ["--project", project, "backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING];
        let piped = std::process::Stdio::piped;
        crate::support::command(&args, lake.path(), &lake.env())
            .stdout(piped())
            .stderr(piped())
            .spawn()
            .expect("a backfill")
    };
    let (old, new) = (backfill("old.toml"), backfill("lakewriter.toml"));
    for child in [old, new] {
        crate::support::finish(child).assert_code(0);
    }
    // Whichever wrote each day last, the days the old code wrote last are stale, and a backfill of
    // the stale days leaves every row filled in.
    let backfill =
        lake.cli(&["--json", "backfill", mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
    backfill.assert_code(0);
    assert_eq!((filled(&lake, mode, WRITTEN), filled(&lake, mode, FAILING)), (true, true));
    assert_eq!(lacking(&lake, mode), vec![fresh(), fresh()]);
}

#[test]
fn days_written_while_ignore_left_a_column_out_are_stale_once_the_job_adds_it() {
    for mode in [WriteMode::OverwritePartition, WriteMode::Merge] {
        let Place::Local(lake) = raw_orders_at(mode.as_str(), false) else { unreachable!("a local place") };
        lake.set_project(&project(&[mode], GOOD));
        lake.cli(&["run", mode.as_str(), "--dt", WRITTEN]).assert_code(0);
        lake.set_project(&with_added(mode, "ignore"));
        for dt in [WRITTEN, FAILING] {
            lake.cli(&["run", mode.as_str(), "--dt", dt]).assert_code(0);
        }
        // The table has no such column: nothing lacks it.
        assert_eq!(lacking(&lake, mode), vec![fresh(), fresh()], "{mode:?}: ignored");
        lake.set_project(&with_added(mode, "append_new_columns"));
        assert_eq!(lacking(&lake, mode), vec![stale("lacks_column"), stale("lacks_column")], "{mode:?}");
        let plan = lake.plan(&[mode.as_str(), "--from", WRITTEN, "--to", FAILING, "--only", "stale"]);
        assert_eq!(plan.runs().len(), 2, "{mode:?}: {plan:?}");
        lake.cli(&["run", mode.as_str(), "--dt", FAILING]).assert_code(0);
        assert_eq!(lacking(&lake, mode), vec![stale("lacks_column"), fresh()], "{mode:?}: one day run");
        backfill_fills(&lake, mode, &[WRITTEN]);
    }
}
