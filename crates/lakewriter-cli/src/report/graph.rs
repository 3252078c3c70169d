//! The job graph as SVG: the tables no job writes in the first column, then each job one column
//! right of the furthest job whose table it reads; an arrow from what a job reads to the job. A
//! job's box links to its section and shows its partitions by state in a bar.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use lakewriter::{Overview, Overviewed};

use crate::markup::escape;
use crate::output::StateCounts;

const BOX_WIDTH: i64 = 200;
const BOX_HEIGHT: i64 = 58;
const COLUMN: i64 = 250;
const ROW: i64 = 76;
const MARGIN: i64 = 12;

/// A box of the graph.
struct Node<'a> {
    /// A job's name, or a table no job writes.
    name: &'a str,
    /// A job's target; `None` for a table.
    target: Option<&'a str>,
    column: i64,
    row: i64,
}

impl Node<'_> {
    fn x(&self) -> i64 {
        MARGIN + self.column * COLUMN
    }

    fn y(&self) -> i64 {
        MARGIN + self.row * ROW
    }
}

/// The graph of `overview`'s jobs.
pub fn svg(out: &mut String, overview: &Overview) {
    let jobs = &overview.graph.jobs;
    let targets: BTreeSet<&str> = jobs.iter().map(|j| j.target.as_str()).collect();
    let inputs: BTreeSet<&str> =
        jobs.iter().flat_map(|j| &j.reads).map(String::as_str).filter(|t| !targets.contains(t)).collect();
    let first = i64::from(!inputs.is_empty());
    let mut rows: BTreeMap<i64, i64> = BTreeMap::new();
    let mut place = |column: i64| {
        let row = rows.entry(column).or_insert(0);
        *row += 1;
        *row - 1
    };
    let mut nodes: Vec<Node<'_>> =
        inputs.iter().map(|t| Node { name: t, target: None, column: 0, row: place(0) }).collect();
    let mut column_of: BTreeMap<&str, i64> = BTreeMap::new();
    // In dependency order, a job's upstream jobs are placed before it.
    for job in jobs {
        let column =
            job.upstream.iter().filter_map(|u| column_of.get(u.as_str())).map(|c| c + 1).max().unwrap_or(first);
        column_of.insert(&job.job, column);
        nodes.push(Node { name: &job.job, target: Some(&job.target), column, row: place(column) });
    }
    let columns = nodes.iter().map(|n| n.column).max().map_or(1, |c| c + 1);
    let height = rows.values().max().copied().unwrap_or(1);
    let (width, height) =
        (2 * MARGIN + (columns - 1) * COLUMN + BOX_WIDTH, 2 * MARGIN + (height - 1) * ROW + BOX_HEIGHT);
    let _ = writeln!(
        out,
        "<svg class=\"graph\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"the job graph\">"
    );
    out.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L10 5L0 10z\" fill=\"#8c959f\"/></marker></defs>\n");
    edges(out, overview, &nodes);
    for node in &nodes {
        match node.target {
            Some(target) => job_box(out, overview, node, target),
            None => input_box(out, node),
        }
    }
    out.push_str("</svg>\n");
}

/// An arrow from each table a job reads (or the job that writes it) to the job.
fn edges(out: &mut String, overview: &Overview, nodes: &[Node<'_>]) {
    let by_name = |name: &str| nodes.iter().find(|n| n.name == name);
    for job in &overview.graph.jobs {
        let Some(to) = nodes.iter().find(|n| n.target.is_some() && n.name == job.job) else { continue };
        let mut from: Vec<&Node<'_>> = job.upstream.iter().filter_map(|u| by_name(u)).collect();
        from.extend(job.reads.iter().filter_map(|t| nodes.iter().find(|n| n.target.is_none() && n.name == t)));
        for from in from {
            let (x1, y1) = (from.x() + BOX_WIDTH, from.y() + BOX_HEIGHT / 2);
            let (x2, y2) = (to.x() - 2, to.y() + BOX_HEIGHT / 2);
            let bend = (x2 - x1) / 2;
            let _ = writeln!(
                out,
                "<path class=\"edge\" d=\"M{x1} {y1}C{} {y1} {} {y2} {x2} {y2}\" marker-end=\"url(#arrow)\"/>",
                x1 + bend,
                x2 - bend
            );
        }
    }
}

/// A table no job writes.
fn input_box(out: &mut String, node: &Node<'_>) {
    let (x, y) = (node.x(), node.y());
    let _ = writeln!(
        out,
        "<g class=\"node input\"><rect class=\"box\" x=\"{x}\" y=\"{y}\" width=\"{BOX_WIDTH}\" height=\"{BOX_HEIGHT}\" rx=\"6\"/>\
         <text class=\"name\" x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\">read, written by no job</text></g>",
        x + 10,
        y + 24,
        escape(node.name),
        x + 10,
        y + 40
    );
}

/// A job: its name, its target, and a bar of its partitions by state, linking to its section.
fn job_box(out: &mut String, overview: &Overview, node: &Node<'_>, target: &str) {
    let (x, y) = (node.x(), node.y());
    let state = overview.jobs.iter().find(|j| j.job == node.name).map(|j| &j.state);
    let own = overview.graph.job(node.name).is_some_and(|j| j.reads_own_target);
    let class = if matches!(state, Some(Overviewed::Failed(_))) { "node failed" } else { "node" };
    let name = escape(node.name);
    let _ = writeln!(
        out,
        "<g class=\"{class}\" data-job=\"{name}\"><a href=\"#job-{name}\"><rect class=\"box\" x=\"{x}\" y=\"{y}\" width=\"{BOX_WIDTH}\" height=\"{BOX_HEIGHT}\" rx=\"6\"/>\
         <text class=\"name\" x=\"{}\" y=\"{}\">{name}{}</text><text x=\"{}\" y=\"{}\">→ {}</text>",
        x + 10,
        y + 18,
        if own { " ↺" } else { "" },
        x + 10,
        y + 33,
        escape(target)
    );
    let (bar_x, bar_y, bar_width) = (x + 10, y + 42, BOX_WIDTH - 20);
    match state {
        Some(Overviewed::Read { status, .. }) if !status.partitions.is_empty() => {
            let counts = StateCounts::of(&status.partitions);
            let total = i64::try_from(status.partitions.len()).unwrap_or(i64::MAX);
            let mut left = bar_x;
            for state in lakewriter::Freshness::ALL {
                let class = state.as_str();
                let n = i64::try_from(counts.of_state(state)).unwrap_or(i64::MAX);
                let width = if n == 0 { 0 } else { (n * bar_width / total).max(2) };
                let _ = write!(
                    out,
                    "<rect class=\"share {class}\" x=\"{left}\" y=\"{bar_y}\" width=\"{width}\" height=\"7\"><title>{n} {class}</title></rect>"
                );
                left += width;
            }
        }
        Some(Overviewed::Failed(_)) => {
            let _ = write!(out, "<text x=\"{bar_x}\" y=\"{}\">state could not be read</text>", bar_y + 8);
        }
        _ => {
            let _ = write!(out, "<text x=\"{bar_x}\" y=\"{}\">nothing written yet</text>", bar_y + 8);
        }
    }
    out.push_str("</a></g>\n");
}
