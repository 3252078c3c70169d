//! `lakewriter sql` as text: a query's rows as a table, a line per statement that writes.

use std::io::{self, Write};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use lakewriter::StatementReport;

use super::TextPrinter;

impl<W: Write> TextPrinter<W> {
    /// The rows as a table (its header alone where there are none), then their count.
    pub(super) fn print_rows(&mut self, schema: &SchemaRef, batches: &[RecordBatch]) -> io::Result<()> {
        let table = if batches.is_empty() {
            arrow::util::pretty::pretty_format_batches(&[RecordBatch::new_empty(schema.clone())])
        } else {
            arrow::util::pretty::pretty_format_batches(batches)
        };
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        writeln!(self.out, "{}", table.map_err(io::Error::other)?)?;
        writeln!(self.out, "{rows} row{}", if rows == 1 { "" } else { "s" })
    }

    /// `[N/OF] KIND TABLE: OUTCOME — details`.
    pub(super) fn print_statement(&mut self, number: usize, of: usize, report: &StatementReport) -> io::Result<()> {
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
        self.line(&text)
    }
}
