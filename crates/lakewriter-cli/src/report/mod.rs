//! The page of `lakewriter report`: one self-contained HTML file written by hand — inline CSS,
//! inline SVG, a few lines of inline script for the hover — that fetches nothing and names no
//! other site. Every piece of text from the project or the lakehouse goes through
//! [`escape`](crate::markup::escape).
//!
//! `calendar` draws a job's partitions (the cells a test counts by their `data-state`), `chart`
//! rows and run times per day, `graph` the job graph; this module lays out the page and each
//! job's section from a [`lakewriter::Overview`].

mod calendar;
mod chart;
mod graph;

use std::fmt::Write as _;

use chrono::{DateTime, NaiveDate, Utc};
use lakewriter::{Freshness, JobOverview, JobStatus, Layout, Overview, Overviewed, format_size};

use crate::markup::escape;
use crate::output::{Maintenance, StateCounts};

const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("script.js");

/// What each state means, in the legend (the states `status` knows: a failed run commits
/// nothing, so a partition is never "failed").
const LEGEND: [(Freshness, &str); 4] = [
    (Freshness::Fresh, "written with the job's current code from its current inputs: a rerun writes the same rows"),
    (
        Freshness::Stale,
        "written, but its inputs, its code or an upstream partition changed since, or its rows lack a column the job writes (hover for which)",
    ),
    (Freshness::Missing, "never written by the job"),
    (
        Freshness::NoInput,
        "a raw dataset the job reads has no file for the day: a run fails until its data arrives (on_missing_input)",
    ),
];

/// The page for `overview` of the project file `project`, generated at `now`.
pub fn page(overview: &Overview, project: &str, now: DateTime<Utc>) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>lakewriter report: {}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n",
        escape(project)
    );
    header(&mut out, overview, project, now);
    out.push_str("<section id=\"graph\">\n<h2>Job graph</h2>\n");
    out.push_str(
        "<p class=\"note\">Each job after the jobs whose tables it reads; dashed: tables no job writes. \
         The bar under a job shows its partitions by state; ↺ marks a job that reads its own table.</p>\n",
    );
    graph::svg(&mut out, overview);
    out.push_str("</section>\n");
    for job in &overview.jobs {
        let target = overview.graph.job(&job.job).map_or("", |g| g.target.as_str());
        section(&mut out, job, target);
    }
    let _ = write!(
        out,
        "</main>\n<div id=\"tip\" role=\"tooltip\" hidden></div>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    );
    out
}

/// The title, what was read and when, the totals and the legend.
fn header(out: &mut String, overview: &Overview, project: &str, now: DateTime<Utc>) {
    let range = overview.range.map_or_else(
        || "each job's partitions from the first to the last it wrote".to_owned(),
        |r| format!("{} to {}", r.from(), r.to()),
    );
    let _ = write!(
        out,
        "<header>\n<h1>lakewriter report</h1>\n<p class=\"meta\">Project <code>{}</code> · {} · generated {} UTC</p>\n",
        escape(project),
        escape(&range),
        now.format("%Y-%m-%d %H:%M:%S")
    );
    let mut total = StateCounts::default();
    for job in &overview.jobs {
        if let Overviewed::Read { status, .. } = &job.state {
            total = total.plus(StateCounts::of(&status.partitions));
        }
    }
    let jobs = overview.jobs.len();
    let _ = write!(out, "<p class=\"counts\" id=\"totals\">{jobs} job{}: ", if jobs == 1 { "" } else { "s" });
    counts(out, total);
    out.push_str("</p>\n<ul class=\"legend\">\n");
    for (state, meaning) in LEGEND {
        let (class, name) = (state.as_str(), state.as_str().replace('_', " "));
        let _ = writeln!(out, "<li><span class=\"swatch {class}\"></span><b>{name}</b>: {meaning}</li>");
    }
    out.push_str("</ul>\n</header>\n");
}

/// `<span>` per state: its swatch and count.
fn counts(out: &mut String, counts: StateCounts) {
    for state in Freshness::ALL {
        let (class, name, n) = (state.as_str(), state.as_str().replace('_', " "), counts.of_state(state));
        let _ = write!(out, "<span><span class=\"swatch {class}\"></span><b>{n}</b> {name}</span>");
    }
}

/// A job's section: its heading, and what could be read of it.
fn section(out: &mut String, job: &JobOverview, target: &str) {
    let name = escape(&job.job);
    let _ = write!(
        out,
        "<section class=\"job\" id=\"job-{name}\" data-job=\"{name}\">\n<h2>{name} <span class=\"target\">→ {}</span></h2>\n",
        escape(target)
    );
    match &job.state {
        Overviewed::Read { status, layout } => read(out, status, layout.as_ref()),
        Overviewed::NothingWritten => {
            out.push_str(
                "<p class=\"note\">Has not written any partition yet. <code>lakewriter report --from D1 --to D2</code> \
                 shows which days of a range are missing.</p>\n",
            );
        }
        Overviewed::Failed(error) => {
            let _ = writeln!(
                out,
                "<p class=\"error\">Its state could not be read: {}</p>",
                escape(&lakewriter::error_chain(error))
            );
        }
    }
    out.push_str("</section>\n");
}

/// A job whose state was read: its counts, table and log, calendar and charts.
fn read(out: &mut String, status: &JobStatus, layout: Option<&Layout>) {
    let _ = write!(out, "<p class=\"meta\">write <code>{}</code> · ", escape(&status.write.to_string()));
    match status.table_version {
        Some(v) => {
            let _ = writeln!(out, "table version {v}</p>");
        }
        None => out.push_str("no table yet</p>\n"),
    }
    out.push_str("<p class=\"counts\">");
    counts(out, StateCounts::of(&status.partitions));
    out.push_str("</p>\n");
    maintenance(out, status, layout);
    out.push_str("<h3>Partitions</h3>\n");
    calendar::svg(out, &status.job, &status.partitions);
    let days: Vec<NaiveDate> = status.partitions.iter().filter_map(|p| p.dt).collect();
    if let (Some(first), Some(last)) = (days.first(), days.last()) {
        let per_day = |value: fn(&lakewriter::PartitionStatus) -> Option<u64>| -> Vec<(NaiveDate, u64)> {
            status.partitions.iter().filter_map(|p| Some((p.dt?, value(p)?))).collect()
        };
        out.push_str("<h3>Rows written per day</h3>\n");
        chart::svg(
            out,
            &chart::Series { class: "rows", points: per_day(|p| p.rows), from: *first, to: *last, format: rows },
        );
        out.push_str("<h3>Run time of each day's last write</h3>\n");
        chart::svg(
            out,
            &chart::Series {
                class: "duration",
                points: per_day(|p| p.duration_ms),
                from: *first,
                to: *last,
                format: duration,
            },
        );
    }
}

/// The table's log and files, and the maintenance due (what `status --maintenance` says).
fn maintenance(out: &mut String, status: &JobStatus, layout: Option<&Layout>) {
    let Some(log) = status.log else { return };
    out.push_str("<ul class=\"facts\">\n");
    let since = match status.checkpoint {
        Some(c) => {
            format!("{} since the last checkpoint (version {c})", plural(log.commits_since_checkpoint, "commit"))
        }
        None => format!("{}, no checkpoint yet", plural(log.commits_since_checkpoint, "commit")),
    };
    let kept = plural(u64::try_from(log.commit_files).unwrap_or(u64::MAX), "commit file");
    let _ = writeln!(out, "<li><span class=\"label\">log</span><span>{since}; {kept} kept</span></li>");
    let unknown = status.partitions.iter().filter(|p| p.state != Freshness::Missing && p.version.is_none()).count();
    if unknown > 0 {
        let _ = writeln!(
            out,
            "<li><span class=\"label\">details</span><span>{}: version, rows and run time unknown (their commit files are no longer kept)</span></li>",
            plural(u64::try_from(unknown).unwrap_or(u64::MAX), "written partition")
        );
    }
    if let Some(layout) = layout {
        let _ = writeln!(
            out,
            "<li><span class=\"label\">files</span><span>{} ({}) in {}, {} below the target size of {}; {} with several small files</span></li>",
            plural(layout.files, "file"),
            format_size(layout.bytes),
            plural(layout.partitions, "partition"),
            layout.small_files,
            format_size(layout.target_file_size),
            plural(u64::try_from(layout.to_compact.len()).unwrap_or(u64::MAX), "partition"),
        );
        let needed = Maintenance::of(layout, status.log).needed;
        let text = if needed.is_empty() {
            "nothing due".to_owned()
        } else {
            format!(
                "<span class=\"due\">{} due</span>: run <code>lakewriter maintain {}</code>",
                needed.join(" and "),
                escape(&status.job)
            )
        };
        let _ = writeln!(out, "<li><span class=\"label\">maintenance</span><span>{text}</span></li>");
    }
    out.push_str("</ul>\n");
}

fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// `37 rows`.
fn rows(n: u64) -> String {
    plural(n, "row")
}

/// `224 ms`, `3.2 s`, `4 min 5 s`.
fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{}.{} s", ms / 1_000, ms % 1_000 / 100),
        _ => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1_000),
    }
}

#[cfg(test)]
mod tests;
