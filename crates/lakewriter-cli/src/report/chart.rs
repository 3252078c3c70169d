//! A small bar chart of one value per day (rows written, a run's time): one SVG path of vertical
//! bars, so ten years of days cost one element, with the largest value and the range's ends as
//! labels. Days without a known value have no bar.

use std::fmt::Write as _;

use chrono::NaiveDate;

use crate::markup::escape;

const WIDTH: f64 = 736.0;
const HEIGHT: f64 = 96.0;
/// The plot's box inside the chart.
const LEFT: f64 = 34.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 80.0;

/// The values of one chart.
pub struct Series {
    /// Its CSS class (`rows`, `duration`).
    pub class: &'static str,
    /// `(day, value)`, in date order.
    pub points: Vec<(NaiveDate, u64)>,
    /// The days the chart spans.
    pub from: NaiveDate,
    pub to: NaiveDate,
    /// A value as a label: `37 rows`, `224 ms`.
    pub format: fn(u64) -> String,
}

/// The chart of `series`, or a note where no day has a value.
pub fn svg(out: &mut String, series: &Series) {
    let Some(max) = series.points.iter().map(|(_, v)| *v).max() else {
        out.push_str("<p class=\"note\">Not known for any day shown.</p>\n");
        return;
    };
    let days = (series.to - series.from).num_days() + 1;
    let day_width = (WIDTH - LEFT) / as_f64(days);
    let bar = (day_width * 0.8).max(1.0);
    let mut path = String::with_capacity(series.points.len() * 24);
    for (day, value) in &series.points {
        let x = LEFT + as_f64((*day - series.from).num_days()) * day_width + day_width / 2.0;
        let y = BOTTOM - (BOTTOM - TOP) * ratio(*value, max);
        let _ = write!(path, "M{x:.1} {BOTTOM}V{y:.1}");
    }
    let _ = writeln!(
        out,
        "<svg class=\"chart\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{}\">",
        escape(&format!("{} per day, at most {}", series.class, (series.format)(max)))
    );
    let _ = writeln!(out, "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{BOTTOM}\" x2=\"{WIDTH}\" y2=\"{BOTTOM}\"/>");
    let _ = writeln!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{WIDTH}\" y2=\"{TOP}\" stroke-dasharray=\"2 3\"/>"
    );
    let _ = writeln!(out, "<path class=\"bars {}\" stroke-width=\"{bar:.2}\" d=\"{path}\"/>", series.class);
    let _ = writeln!(out, "<text x=\"{LEFT}\" y=\"{}\">{}</text>", TOP - 4.0, escape(&(series.format)(max)));
    let _ = writeln!(out, "<text x=\"0\" y=\"{BOTTOM}\">0</text>");
    let _ = writeln!(out, "<text x=\"{LEFT}\" y=\"{}\">{}</text>", BOTTOM + 13.0, series.from);
    let _ = writeln!(out, "<text x=\"{WIDTH}\" y=\"{}\" text-anchor=\"end\">{}</text>", BOTTOM + 13.0, series.to);
    out.push_str("</svg>\n");
}

/// `value` over `max`, 0 to 1.
fn ratio(value: u64, max: u64) -> f64 {
    if max == 0 {
        return 0.0;
    }
    #[allow(clippy::cast_precision_loss)] // a bar's height, to a tenth of a pixel
    let ratio = value as f64 / max as f64;
    ratio
}

/// A count of days as a coordinate.
fn as_f64(n: i64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // at most 36,525 days
    let n = n as f64;
    n
}
