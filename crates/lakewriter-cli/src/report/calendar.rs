//! A job's partitions as a calendar: a block per year, a column per week (Monday first), a cell
//! per day of the range coloured by its state. Each cell carries its job, state and partition as
//! attributes (`data-job`, `data-state`, `data-partition`: what a reader or a test counts) and
//! its details as a `<title>`: what a hover shows.

use std::fmt::Write as _;

use chrono::{Datelike, NaiveDate};
use lakewriter::{Freshness, PartitionStatus};

use super::duration;
use crate::markup::escape;

/// A cell's side, and the distance from one cell to the next.
const CELL: i64 = 11;
const STEP: i64 = 13;
/// Room for the year and the weekdays on the left, the months on top.
const LEFT: i64 = 34;
const TOP: i64 = 16;
/// The height of a year's block.
const YEAR: i64 = TOP + 7 * STEP + 10;

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The calendar of `partitions` (in date order) of `job`; a job without dates (a `rebuild`) has
/// one cell, for its one partition.
pub fn svg(out: &mut String, job: &str, partitions: &[PartitionStatus]) {
    let dated: Vec<(NaiveDate, &PartitionStatus)> = partitions.iter().filter_map(|p| Some((p.dt?, p))).collect();
    let (Some((first, _)), Some((last, _))) = (dated.first(), dated.last()) else {
        out.push_str("<svg class=\"calendar\" width=\"260\" height=\"24\" viewBox=\"0 0 260 24\">\n");
        for p in partitions {
            cell(out, job, p, (0, 6));
            let _ =
                writeln!(out, "<text x=\"18\" y=\"16\">{} (the whole table)</text>", escape(&p.partition.to_string()));
        }
        out.push_str("</svg>\n");
        return;
    };
    let (first_year, years) = (first.year(), i64::from(last.year() - first.year()) + 1);
    // The weeks some year of the range has days in: all of them over a year or more.
    let columns = Columns {
        first: dated.iter().map(|(d, _)| position(*d).0).min().unwrap_or(0),
        last: dated.iter().map(|(d, _)| position(*d).0).max().unwrap_or(0),
    };
    let (width, height) = (LEFT + (columns.last - columns.first + 1) * STEP + 14, years * YEAR);
    let _ = writeln!(
        out,
        "<svg class=\"calendar\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"partitions of {} by day\">",
        escape(job)
    );
    for year in first.year()..=last.year() {
        labels(out, year, i64::from(year - first_year) * YEAR, columns);
    }
    for (day, p) in &dated {
        let top = i64::from(day.year() - first_year) * YEAR + TOP;
        let (column, row) = position(*day);
        cell(out, job, p, (LEFT + (column - columns.first) * STEP, top + row * STEP));
    }
    out.push_str("</svg>\n");
}

/// The week columns drawn, the same for every year.
#[derive(Clone, Copy)]
struct Columns {
    first: i64,
    last: i64,
}

/// A day's week column in its year's block, and its row (Monday 0).
fn position(day: NaiveDate) -> (i64, i64) {
    let january = NaiveDate::from_ymd_opt(day.year(), 1, 1).unwrap_or(day);
    let offset = i64::from(january.weekday().num_days_from_monday());
    let row = i64::from(day.weekday().num_days_from_monday());
    ((i64::from(day.ordinal0()) + offset) / 7, row)
}

/// The year, its months and three weekdays, for the block at `top` showing `columns`.
fn labels(out: &mut String, year: i32, top: i64, columns: Columns) {
    let _ = writeln!(out, "<text class=\"year\" x=\"0\" y=\"{}\">{year}</text>", top + 10);
    // Each month with a week shown, over its first week shown; a month begun before the first
    // column yields to the next where their names would overlap.
    let mut shown: Vec<(i64, &str)> = Vec::new();
    for (month, name) in (1..=12).zip(MONTHS) {
        let Some(start) = NaiveDate::from_ymd_opt(year, month, 1) else { continue };
        let end = start.checked_add_months(chrono::Months::new(1)).and_then(|d| d.pred_opt()).unwrap_or(start);
        let column = position(start).0.max(columns.first);
        if position(end).0 >= columns.first && column <= columns.last {
            if shown.len() == 1 && shown[0].0 + 3 > column {
                shown.clear();
            }
            if shown.last().is_none_or(|(last, _)| last + 3 <= column) {
                shown.push((column, name));
            }
        }
    }
    for (column, name) in shown {
        let _ =
            writeln!(out, "<text x=\"{}\" y=\"{}\">{name}</text>", LEFT + (column - columns.first) * STEP, top + 10);
    }
    for (row, name) in [(0, "Mon"), (2, "Wed"), (4, "Fri")] {
        let _ = writeln!(out, "<text x=\"0\" y=\"{}\">{name}</text>", top + TOP + row * STEP + 9);
    }
}

/// One partition's cell at `(x, y)`.
fn cell(out: &mut String, job: &str, p: &PartitionStatus, (x, y): (i64, i64)) {
    let state = p.state.as_str();
    let _ = writeln!(
        out,
        "<rect class=\"cell\" x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" rx=\"2\" data-job=\"{}\" data-state=\"{state}\" data-partition=\"{}\"><title>{}</title></rect>",
        escape(job),
        escape(&p.partition.to_string()),
        escape(&tip(job, p))
    );
}

/// What a hover over a partition's cell shows: the job, partition and weekday, the state and why,
/// and the last write's version, rows, time and run time.
pub fn tip(job: &str, p: &PartitionStatus) -> String {
    let weekday = p.dt.map(|d| format!(" ({})", d.format("%a"))).unwrap_or_default();
    let mut lines = vec![format!("{job} {}{weekday}", p.partition)];
    if p.state == Freshness::Missing {
        lines.push("missing: never written".to_owned());
        return lines.join("\n");
    }
    lines.push(p.label());
    match (p.version, p.rows) {
        (Some(version), rows) => {
            let rows = rows.map_or_else(|| "rows unknown".to_owned(), |r| format!("{r} rows"));
            lines.push(format!("version {version}, {rows}"));
        }
        (None, _) => lines.push("version and rows unknown: the commit file is no longer kept".to_owned()),
    }
    if let Some(at) = p.written_at {
        lines.push(format!("written at {} UTC", at.format("%Y-%m-%d %H:%M:%S")));
    }
    if let Some(ms) = p.duration_ms {
        lines.push(format!("run took {}", duration(ms)));
    }
    if !p.lacks.is_empty() {
        let columns: Vec<String> = p.lacks.iter().map(|c| c.column.clone()).collect();
        lines.push(format!("lacks {} (a rerun fills them in)", columns.join(", ")));
    }
    lines.join("\n")
}
