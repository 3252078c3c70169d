//! Dagster Pipes, spoken by `lakewriter run` and `lakewriter backfill` when Dagster launches them
//! (`PipesSubprocessClient` sets `DAGSTER_PIPES_CONTEXT` and `DAGSTER_PIPES_MESSAGES`): the
//! partition key (`run`) or key range (`backfill`) comes from the context where `--dt` (`--from`,
//! `--to`) is not given, and the command reports one asset materialization with its metadata and
//! data version, or its failure, as Pipes messages.
//!
//! The protocol (version 0.1): each variable holds JSON, zlib-compressed and base64-encoded. The
//! context's is `{"path": FILE}` (the context as a JSON file) or `{"data": CONTEXT}`; the
//! messages' is `{"path": FILE}` (JSON Lines appended to it) or `{"stdio" | "buffered_stdio":
//! "stderr" | "stdout"}`. Messages are `{"__dagster_pipes_version": "0.1", "method", "params"}`:
//! `opened`, then `report_asset_materialization`, then `closed` (with the exception of a failure).
//! Messages for stdout go through the [`Output`], which writes them as they are; the messages
//! themselves are in [`message`].

use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use anyhow::{Context as _, Result, anyhow, bail};
use base64::Engine as _;
use chrono::NaiveDate;
use lakewriter::{DateRange, PartitionReport};
use serde_json::Value;

use crate::output::Output;

mod message;

use message::{
    Exception, Extras, Message, Metadata, MetadataValue, PartitionFigures, PartitionMetadata, RangeMetadata,
};

const CONTEXT_VAR: &str = "DAGSTER_PIPES_CONTEXT";
const MESSAGES_VAR: &str = "DAGSTER_PIPES_MESSAGES";

/// Where messages go.
enum Messages {
    File(PathBuf),
    Stderr,
    Stdout,
}

/// A Pipes session with the Dagster process that launched this one.
pub struct Pipes {
    context: Value,
    messages: Messages,
}

/// JSON, zlib-compressed, base64-encoded: a Pipes parameter.
fn decode(name: &str, value: &str) -> Result<Value> {
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .with_context(|| format!("{name}: not base64"))?;
    let mut text = String::new();
    flate2::read::ZlibDecoder::new(compressed.as_slice())
        .read_to_string(&mut text)
        .with_context(|| format!("{name}: not zlib-compressed text"))?;
    serde_json::from_str(&text).with_context(|| format!("{name}: not JSON"))
}

impl Pipes {
    /// The session Dagster opened for this process, if it launched it.
    pub fn from_env(out: &mut dyn Output) -> Result<Option<Self>> {
        let Ok(context_param) = std::env::var(CONTEXT_VAR) else { return Ok(None) };
        let messages_param =
            std::env::var(MESSAGES_VAR).map_err(|_| anyhow!("{CONTEXT_VAR} is set but {MESSAGES_VAR} is not"))?;
        let params = decode(CONTEXT_VAR, &context_param)?;
        let context = match (params.get("path").and_then(Value::as_str), params.get("data")) {
            (Some(path), _) => {
                let text =
                    std::fs::read_to_string(path).with_context(|| format!("cannot read the Pipes context {path}"))?;
                serde_json::from_str(&text).with_context(|| format!("the Pipes context {path} is not JSON"))?
            }
            (None, Some(data)) => data.clone(),
            (None, None) => bail!("{CONTEXT_VAR}: expected a `path` or `data`, got {params}"),
        };
        let params = decode(MESSAGES_VAR, &messages_param)?;
        let stream = params.get("stdio").or_else(|| params.get("buffered_stdio")).and_then(Value::as_str);
        let messages = match (params.get("path").and_then(Value::as_str), stream) {
            (Some(path), _) => Messages::File(PathBuf::from(path)),
            (None, Some("stderr")) => Messages::Stderr,
            (None, Some("stdout")) => Messages::Stdout,
            _ => bail!("{MESSAGES_VAR}: expected a `path` or `stdio`, got {params}"),
        };
        let pipes = Self { context, messages };
        pipes.send(out, &Message::Opened { extras: Extras {} })?;
        Ok(Some(pipes))
    }

    /// The date of the partition Dagster materializes, where it is partitioned.
    pub fn partition_date(&self) -> Result<Option<NaiveDate>> {
        let Some(key) = self.context.get("partition_key").and_then(Value::as_str) else { return Ok(None) };
        lakewriter::parse_date(key).map(Some).map_err(|_| {
            lakewriter::Error::Usage(format!(
                "the Dagster partition key `{key}` is not a date YYYY-MM-DD: use a daily partitions definition"
            ))
            .into()
        })
    }

    /// The days Dagster materializes in this run: the context's partition key range (a run of
    /// several partitions, `BackfillPolicy.single_run()`) — or its extras' `partition_key_range`,
    /// where Dagster leaves the range out of the context —, else its one partition key.
    pub fn partition_range(&self) -> Result<DateRange> {
        let extras = self.context.get("extras").and_then(|e| e.get("partition_key_range"));
        let range = self.context.get("partition_key_range").filter(|r| !r.is_null()).or(extras);
        let (start, end) = if let Some(range) = range {
            (range.get("start").and_then(Value::as_str), range.get("end").and_then(Value::as_str))
        } else {
            let one = self.context.get("partition_key").and_then(Value::as_str);
            (one, one)
        };
        let (Some(start), Some(end)) = (start, end) else {
            let message =
                "launched by Dagster without a partition: give the asset daily partitions, or pass --from and --to";
            return Err(lakewriter::Error::Usage(message.into()).into());
        };
        let day = |key: &str| -> Result<chrono::NaiveDate> {
            lakewriter::parse_date(key).map_err(|_| {
                lakewriter::Error::Usage(format!(
                    "the Dagster partition key `{key}` is not a date YYYY-MM-DD: use a daily partitions definition"
                ))
                .into()
            })
        };
        Ok(DateRange::new(day(start)?, day(end)?).map_err(lakewriter::Error::from)?)
    }

    /// The asset the context names, else the table `target` (`schema/table`).
    fn asset_key(&self, target: &str) -> String {
        match self.context.get("asset_keys").and_then(Value::as_array).map(Vec::as_slice) {
            Some([key]) => key.as_str().unwrap_or(target).to_owned(),
            _ => target.replace('.', "/"),
        }
    }

    /// Reports a backfill of `range` whose partitions all succeeded (`reports`) as the asset's
    /// materialization, which Dagster records for each partition of the range: lakewriter's
    /// figures over the range, each partition's under `by_partition`, and a data version made of
    /// the partitions' input fingerprints. A backfill with a failed partition is reported by
    /// [`Pipes::close`] alone.
    pub fn materialized_range(
        &self,
        out: &mut dyn Output,
        reports: &[PartitionReport],
        range: DateRange,
        code_fingerprint: &str,
    ) -> Result<()> {
        let Some(first) = reports.first().filter(|_| reports.iter().all(|r| r.error.is_none())) else {
            return Ok(());
        };
        let target = first.target.as_ref().map(ToString::to_string).unwrap_or_default();
        let by_partition = reports
            .iter()
            .map(|r| {
                let figures = PartitionFigures {
                    committed: r.committed,
                    fresh_before: r.fresh_before,
                    input_fingerprint: r.input_fingerprint.clone(),
                    rows_written: r.rows_written,
                    run_id: r.run_id.clone(),
                    table_version: r.table_version,
                };
                (r.partition.to_string(), figures)
            })
            .collect();
        let inputs: Vec<&str> = reports.iter().filter_map(|r| r.input_fingerprint.as_deref()).collect();
        let metadata = RangeMetadata {
            by_partition: MetadataValue::ByPartition(by_partition),
            code_fingerprint: MetadataValue::text(code_fingerprint),
            job: MetadataValue::text(&first.job),
            partitions: MetadataValue::int(u64::try_from(reports.len()).ok()),
            range: MetadataValue::text(format!("{}..{}", range.from(), range.to())),
            rows_written: MetadataValue::Int(reports.iter().filter_map(|r| r.rows_written).sum()),
            table_version: MetadataValue::int(reports.iter().filter_map(|r| r.table_version).max()),
        };
        let data_version = lakewriter::stable_hash(inputs.join(",").as_bytes());
        let message = Message::ReportAssetMaterialization {
            asset_key: self.asset_key(&target),
            data_version: Some(data_version),
            metadata: Box::new(Metadata::Range(metadata)),
        };
        self.send(out, &message)
    }

    /// Reports `report`'s partition as an asset materialization: the asset the context names
    /// (the job's target where it names none), lakewriter's figures as metadata, and the input
    /// fingerprint as its data version. A partition that failed is reported by [`Pipes::close`].
    pub fn materialized(&self, out: &mut dyn Output, report: &PartitionReport, code_fingerprint: &str) -> Result<()> {
        if report.error.is_some() {
            return Ok(());
        }
        let target = report.target.as_ref().map(ToString::to_string).unwrap_or_default();
        let text = |value: Option<&str>| MetadataValue::text(value.unwrap_or_default());
        let metadata = PartitionMetadata {
            code_fingerprint: MetadataValue::text(code_fingerprint),
            committed: MetadataValue::Bool(report.committed),
            fresh_before: report.fresh_before.map_or(MetadataValue::Null, MetadataValue::Bool),
            input_fingerprint: text(report.input_fingerprint.as_deref()),
            job: MetadataValue::text(&report.job),
            partition: MetadataValue::text(report.partition.to_string()),
            rows_written: MetadataValue::int(report.rows_written),
            run_id: text(report.run_id.as_deref()),
            status: MetadataValue::text(format!("{:?}", report.status).to_lowercase()),
            table_version: MetadataValue::int(report.table_version),
        };
        let message = Message::ReportAssetMaterialization {
            asset_key: self.asset_key(&target),
            data_version: report.input_fingerprint.clone(),
            metadata: Box::new(Metadata::Partition(metadata)),
        };
        self.send(out, &message)
    }

    /// Closes the session: `error` where the run failed, which Dagster reports as the step's
    /// failure.
    pub fn close(&self, out: &mut dyn Output, error: Option<&str>) -> Result<()> {
        self.send(out, &Message::Closed { exception: error.map(Exception::new) })
    }

    fn send(&self, out: &mut dyn Output, message: &Message) -> Result<()> {
        // One write of the line with its newline: Dagster tails the file line by line, and a
        // newline written apart can be read alone, which its reader takes for a broken message
        // and stops reading (the materialization after it lost).
        let line = message.line()?;
        let written = match &self.messages {
            Messages::File(path) => {
                std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| f.write_all(&line))
            }
            Messages::Stderr => std::io::stderr().lock().write_all(&line),
            Messages::Stdout => out.verbatim(&line),
        };
        written.context("cannot write a Dagster Pipes message")
    }
}
