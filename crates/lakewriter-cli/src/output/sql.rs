//! `lakewriter sql`: a query's rows (a table, or one JSON object per row), and one line per
//! statement that writes.

use std::io::{self, Write};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use lakewriter::StatementReport;
use serde::Serialize;

use super::{Printer, json_line, line};

/// The `--json` line of a statement that writes.
#[derive(Serialize)]
struct StatementLine<'a> {
    statement: usize,
    of: usize,
    sql: &'a str,
    status: &'static str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    report: Option<&'a StatementReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl Printer {
    /// A statement's text on one line, cut after 100 characters.
    pub fn shorten(sql: &str) -> String {
        let one_line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
        match one_line.char_indices().nth(100) {
            Some((cut, _)) => format!("{}…", &one_line[..cut]),
            None => one_line,
        }
    }

    /// A query's rows: a table, or with `--json` one JSON object per row, holding every column.
    pub fn rows(&self, schema: &SchemaRef, batches: &[RecordBatch]) -> io::Result<()> {
        if self.json {
            // Every column in every row: a NULL as `null`, not left out.
            let mut writer = arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow::json::writer::LineDelimited>(io::stdout().lock());
            writer.write_batches(&batches.iter().collect::<Vec<_>>()).map_err(io::Error::other)?;
            return writer.finish().map_err(io::Error::other);
        }
        let table = if batches.is_empty() {
            arrow::util::pretty::pretty_format_batches(&[RecordBatch::new_empty(schema.clone())])
        } else {
            arrow::util::pretty::pretty_format_batches(batches)
        };
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let mut out = io::stdout().lock();
        writeln!(out, "{}", table.map_err(io::Error::other)?)?;
        writeln!(out, "{rows} row{}", if rows == 1 { "" } else { "s" })
    }

    /// A statement that wrote (or found nothing to change).
    pub fn statement(&self, number: usize, of: usize, sql: &str, report: &StatementReport) -> io::Result<()> {
        if self.json {
            let status = "ok";
            return json_line(&StatementLine { statement: number, of, sql, status, report: Some(report), error: None });
        }
        let mut text = format!("[{number}/{of}] {} {}: ", report.kind, report.table);
        let outcome = match (report.committed, report.table_version) {
            (true, Some(v)) => self.paint(&format!("committed version {v}"), "32"),
            (_, Some(v)) => format!("no new table version (version {v})"),
            (_, None) => "no table".to_owned(),
        };
        text.push_str(&outcome);
        let mut details = Vec::new();
        if let Some(rows) = report.rows_written {
            details.push(format!("{rows} row{} written", if rows == 1 { "" } else { "s" }));
        }
        if let Some(c) = report.changes {
            details.push(format!("{} inserted, {} updated, {} deleted", c.inserted, c.updated, c.deleted));
        }
        if !report.partitions.is_empty() {
            details.push(format!("replaced {}", report.partitions.join(", ")));
        }
        if let Some(note) = &report.note {
            details.push(note.clone());
        }
        if !details.is_empty() {
            text.push_str(" — ");
            text.push_str(&details.join("; "));
        }
        line(&text)
    }

    /// With `--json`, the line of a statement that failed (its error is printed on stderr).
    pub fn statement_failed(&self, number: usize, of: usize, sql: &str, error: &lakewriter::Error) -> io::Result<()> {
        if !self.json {
            return Ok(());
        }
        let error = Some(lakewriter::error_chain(error));
        json_line(&StatementLine { statement: number, of, sql, status: "failed", report: None, error })
    }
}
