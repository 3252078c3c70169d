//! `lakewriter digest`: content, not layout.

use crate::support::{Job, Lake, Project, customers_with_orders, daily_orders_rows};

const BASE: &str = "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id";

#[test]
fn the_digest_ignores_row_order_files_and_versions_but_not_content() {
    let lake = Lake::new("2026-09-01", "2026-09-03");
    let changed = "SELECT customer_id, COUNT(*) + CASE WHEN customer_id = 7 THEN 1 ELSE 0 END AS orders, \
                   SUM(amount) AS revenue, $dt AS dt FROM raw.orders WHERE dt = $dt GROUP BY customer_id";
    lake.set_project(
        &Project::new()
            .job(Job::new("asc", "t.asc").sql(format!("{BASE} ORDER BY customer_id")))
            .job(Job::new("desc", "t.desc").sql(format!("{BASE} ORDER BY customer_id DESC")))
            .job(Job::new("changed", "t.changed").sql(changed)),
    );
    lake.cli(&["backfill", "asc", "--from", "2026-09-01", "--to", "2026-09-03", "--parallel", "1"]).assert_code(0);
    // Another order of days, so another order of versions and files.
    for day in ["2026-09-03", "2026-09-01", "2026-09-02", "2026-09-01"] {
        lake.cli(&["run", "desc", "--dt", day]).assert_code(0);
    }
    lake.cli(&["backfill", "changed", "--from", "2026-09-01", "--to", "2026-09-03"]).assert_code(0);

    let asc = lake.digest("t.asc", None);
    let desc = lake.digest("t.desc", None);
    let changed = lake.digest("t.changed", None);
    assert_eq!((asc.version, desc.version), (2, 3));
    assert_eq!((asc.rows, &asc.digest), (desc.rows, &desc.digest));
    assert_eq!(asc.rows, daily_orders_rows("2026-09-01", "2026-09-03"));
    assert_eq!(changed.rows, asc.rows);
    assert_ne!(changed.digest, asc.digest, "one changed value changes the digest");
    // A function of the rows alone (XXH3-128 of each row, summed): the same on any machine.
    assert_eq!(asc.digest, "662039bf0d9a7a240af796bf62ee07e0");

    let day = lake.digest("t.asc", Some("2026-09-02"));
    assert_eq!(day.rows, customers_with_orders("2026-09-02"));
    assert_eq!(day.digest, lake.digest("t.desc", Some("2026-09-02")).digest);
    assert_ne!(day.digest, lake.digest("t.asc", Some("2026-09-01")).digest);
    assert_eq!(lake.digest("t.asc", Some("2026-10-01")).rows, 0);
}

#[test]
fn digest_of_a_missing_table_is_an_error() {
    let lake = Lake::new("2026-09-01", "2026-09-01");
    let run = lake.cli(&["digest", "analytics.nothing_here"]);
    run.assert_code(1);
    let table = format!("file://{}/analytics/nothing_here/", lake.root().display());
    assert_eq!(
        run.stderr,
        format!("error: cannot compute the digest of analytics.nothing_here\n  caused by: no Delta table at {table}\n")
    );
}
