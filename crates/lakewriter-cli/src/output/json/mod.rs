//! The JSON printer: one JSON object per line of stdout, each an [`Event`] written in its
//! [`Shape`]; text for people and the progress bar are left out.

mod events;
mod floats;

use std::collections::BTreeMap;
use std::io::{self, Write};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use lakewriter::{
    Action, AuditSummary, Digest, Finding, JobGraph, JobStatus, Layout, MaintainSummary, Only, PartitionAudit,
    PartitionKey, PartitionReport, PlannedPartition, StatementReport, StepReport, Summary, TableRef, VerifyReport,
};
use serde::Serialize;

use self::events::{
    DigestLine, Event, GraphSummary, JobFailed, JobLine, NotRun, PlanSummary, RerunLine, SCHEMA_VERSION, Shape,
    StatementError, StatementLine, StatusSummary, Versioned,
};
use super::fields::{Maintenance, StateCounts};
use super::{
    DemoLaid, JobOverviewLine, LateDelivered, LintCounts, Output, OverviewTotals, PipelineSummary, ReportWritten,
    Rerun, SqlSummary, stderr,
};

/// JSON Lines on `out`.
pub struct JsonPrinter<W: Write> {
    out: W,
}

impl<W: Write> JsonPrinter<W> {
    pub fn new(out: W) -> Self {
        Self { out }
    }

    /// `event` on a line of its own, in its [`Shape`].
    fn emit<E: Event>(&mut self, event: &E) -> io::Result<()> {
        let versioned = || Versioned { value: event, schema_version: SCHEMA_VERSION };
        match E::SHAPE {
            Shape::Item => self.line(event),
            Shape::Only => self.line(&versioned()),
            Shape::Closing(tag) => self.line(&BTreeMap::from([(tag, versioned())])),
            Shape::Tagged(tag) => self.line(&BTreeMap::from([(tag, event)])),
        }
    }

    fn line(&mut self, value: &impl Serialize) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, value).map_err(io::Error::other)?;
        writeln!(self.out)
    }
}

impl<W: Write> Output for JsonPrinter<W> {
    fn say(&mut self, _text: &str) -> io::Result<()> {
        Ok(())
    }

    fn verbatim(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.out.flush()
    }

    fn start_progress(&mut self, _total: usize, _label: &str) {}

    fn partition_done(&mut self, report: &PartitionReport) -> io::Result<()> {
        self.emit(report)
    }

    fn finish_progress(&mut self) {}

    fn job_done(&mut self, _reports: &[PartitionReport], summary: &Summary) -> io::Result<()> {
        self.emit(summary)
    }

    fn not_run(&mut self, job: &str, reason: &str) -> io::Result<()> {
        self.emit(&NotRun { job, reason })
    }

    fn columns_dropped(&mut self, dropped: &lakewriter::ColumnsDropped) -> io::Result<()> {
        self.emit(dropped)
    }

    fn job_failed(&mut self, job: &str, error: &lakewriter::Error) -> io::Result<()> {
        self.emit(&JobFailed { job, error: stderr::one_line(error) })
    }

    fn pipeline_done(&mut self, summary: &PipelineSummary) -> io::Result<()> {
        self.emit(summary)
    }

    fn merged(&mut self, _reports: &[PartitionReport]) -> io::Result<()> {
        Ok(())
    }

    fn rerun(&mut self, rerun: &Rerun<'_>) -> io::Result<()> {
        self.emit(&RerunLine {
            job: rerun.job,
            rerun: rerun.report.partition.to_string(),
            digest_before: &rerun.before.digest,
            digest_after: &rerun.after.digest,
            unchanged: rerun.unchanged(),
        })
    }

    fn demo_laid(&mut self, laid: &DemoLaid, closing: bool) -> io::Result<()> {
        if closing { self.emit(laid) } else { Ok(()) }
    }

    fn late_delivered(&mut self, late: &LateDelivered) -> io::Result<()> {
        self.emit(late)
    }

    fn init_written(&mut self, init: &super::InitWritten) -> io::Result<()> {
        self.emit(init)
    }

    fn verdict(&mut self, verdict: &VerifyReport) -> io::Result<()> {
        self.emit(verdict)
    }

    fn digest(&mut self, table: &TableRef, partition: Option<&PartitionKey>, digest: &Digest) -> io::Result<()> {
        self.emit(&DigestLine { table: table.to_string(), partition, digest })
    }

    fn finding(&mut self, finding: &Finding) -> io::Result<()> {
        self.emit(finding)
    }

    fn lint_counts(&mut self, counts: &LintCounts) -> io::Result<()> {
        self.emit(counts)
    }

    fn status(&mut self, status: &JobStatus, layout: Option<&Layout>) -> io::Result<()> {
        for partition in &status.partitions {
            self.emit(&JobLine { job: &status.job, line: partition })?;
        }
        self.emit(&StatusSummary {
            job: &status.job,
            target: &status.target,
            table_version: status.table_version,
            checkpoint: status.checkpoint,
            log: status.log,
            maintenance: layout.map(|layout| Maintenance::of(layout, status.log)),
            rebuild: status.rebuild,
            counts: StateCounts::of(&status.partitions),
        })
    }

    fn overview(&mut self, jobs: &[JobOverviewLine], totals: &OverviewTotals) -> io::Result<()> {
        for job in jobs {
            self.emit(job)?;
        }
        self.emit(totals)
    }

    fn plan(&mut self, status: &JobStatus, planned: &[PlannedPartition], only: Only) -> io::Result<()> {
        for partition in planned {
            self.emit(&JobLine { job: &status.job, line: partition })?;
        }
        let run = planned.iter().filter(|p| p.action == Action::Run).count();
        self.emit(&PlanSummary {
            job: &status.job,
            only,
            run,
            skip: planned.len() - run,
            adds: &status.adds,
            refused: status.refusal(),
            rebuild: status.rebuild,
        })
    }

    fn partition_audit(&mut self, audit: &PartitionAudit) -> io::Result<()> {
        self.emit(audit)
    }

    fn audit_summary(&mut self, summary: &AuditSummary) -> io::Result<()> {
        self.emit(summary)
    }

    fn graph(&mut self, graph: &JobGraph) -> io::Result<()> {
        for job in &graph.jobs {
            self.emit(job)?;
        }
        let edges = graph.jobs.iter().map(|j| j.upstream.len()).sum();
        self.emit(&GraphSummary { jobs: graph.jobs.len(), edges })
    }

    fn maintain(&mut self, reports: &[StepReport], summary: &MaintainSummary) -> io::Result<()> {
        for report in reports {
            self.emit(report)?;
        }
        self.emit(summary)
    }

    fn report_written(&mut self, written: &ReportWritten) -> io::Result<()> {
        self.emit(written)
    }

    /// Each row as `{"statement":N,"row":{…}}`, the row as Arrow writes it: every column, a NULL
    /// as `null`, not left out; a NaN or an infinity as a string (see `floats`).
    fn rows(&mut self, number: usize, _schema: &SchemaRef, batches: &[RecordBatch]) -> io::Result<()> {
        let mut rows = Vec::new();
        let mut writer = arrow::json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .with_encoder_factory(floats::Floats::factory())
            .build::<_, arrow::json::writer::LineDelimited>(&mut rows);
        writer.write_batches(&batches.iter().collect::<Vec<_>>()).map_err(io::Error::other)?;
        writer.finish().map_err(io::Error::other)?;
        // Arrow escapes a line break inside a value: each line is one row's object.
        for row in rows.split(|&b| b == b'\n').filter(|row| !row.is_empty()) {
            write!(self.out, "{{\"statement\":{number},\"row\":")?;
            self.out.write_all(row)?;
            writeln!(self.out, "}}")?;
        }
        Ok(())
    }

    fn statement(&mut self, number: usize, of: usize, sql: &str, report: &StatementReport) -> io::Result<()> {
        let status = "ok";
        self.emit(&StatementLine { statement: number, of, sql, status, outcome: report })
    }

    fn statement_failed(&mut self, number: usize, of: usize, sql: &str, error: &lakewriter::Error) -> io::Result<()> {
        let outcome = StatementError { error: stderr::one_line(error) };
        self.emit(&StatementLine { statement: number, of, sql, status: "failed", outcome })
    }

    fn sql_done(&mut self, summary: &SqlSummary) -> io::Result<()> {
        self.emit(summary)
    }

    fn test_done(&mut self, report: &lakewriter::TestReport) -> io::Result<()> {
        self.emit(report)
    }

    fn tests_done(&mut self, summary: &crate::output::TestSummary) -> io::Result<()> {
        self.emit(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(print: impl FnOnce(&mut JsonPrinter<Vec<u8>>) -> io::Result<()>) -> String {
        let mut printer = JsonPrinter::new(Vec::new());
        print(&mut printer).expect("written");
        String::from_utf8(printer.out).expect("UTF-8")
    }

    #[test]
    fn a_closing_line_carries_the_schema_version_and_a_tagged_line_that_closes_nothing_does_not() {
        let counts = LintCounts { jobs: 3, errors: 1, warnings: 2, unchecked: 0, waiting: 1 };
        assert_eq!(
            lines(|p| p.lint_counts(&counts)),
            "{\"summary\":{\"jobs\":3,\"errors\":1,\"warnings\":2,\"unchecked\":0,\"waiting\":1,\"schema_version\":4}}\n"
        );
        assert_eq!(
            lines(|p| p.not_run("weekly", "its upstream job daily failed")),
            "{\"not_run\":{\"job\":\"weekly\",\"reason\":\"its upstream job daily failed\"}}\n"
        );
        assert_eq!(lines(|p| p.say("text for people")), "", "no text in JSON");
    }

    #[test]
    fn verbatim_output_is_written_as_it_is() {
        let message = b"{\"__dagster_pipes_version\":\"0.1\",\"method\":\"closed\",\"params\":{}}\n";
        assert_eq!(lines(|p| p.verbatim(message)).as_bytes(), message);
    }
}
