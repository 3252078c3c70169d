//! The pipeline the pipeline, reproduction and statement-job scenarios run: three jobs, two
//! levels below the raw layer, on the demo's raw layer.

use super::{Job, Lake, Project};

/// `daily_orders` (raw orders of a day), `weekly_revenue` (a 7-day window over it) and
/// `weekly_summary` (one day of `weekly_revenue`): two levels below the raw layer.
pub fn pipeline() -> Project {
    Project::new()
        .job(Job::new("daily_orders", "analytics.daily_orders").sql(
            "SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS revenue, $dt AS dt\n\
             FROM raw.orders WHERE dt = $dt GROUP BY customer_id\n",
        ))
        .job(Job::new("weekly_revenue", "analytics.weekly_revenue").sql(
            "SELECT customer_id, SUM(revenue) AS revenue_7d, SUM(orders) AS orders_7d, $dt AS dt\n\
             FROM analytics.daily_orders\n\
             WHERE dt BETWEEN $dt - INTERVAL '6 days' AND $dt\n\
             GROUP BY customer_id\n",
        ))
        .job(Job::new("weekly_summary", "reports.weekly_summary").sql(
            "SELECT COUNT(*) AS customers, SUM(revenue_7d) AS revenue_7d, $dt AS dt\n\
             FROM analytics.weekly_revenue WHERE dt = $dt\n",
        ))
}

/// The demo's raw layer (September 2026) with `project` as the project file.
pub fn lake(project: &Project) -> Lake {
    let lake = Lake::demo();
    lake.set_project(project);
    lake
}
