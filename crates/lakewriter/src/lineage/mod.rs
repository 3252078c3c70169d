//! OpenLineage run events: each partition run of `run` and `backfill` (dry runs excepted) is a
//! lineage run — a START event as it begins, then COMPLETE or FAIL — of the job named after the
//! lakewriter job, with the partition run's own run id. Its inputs are the raw datasets and Delta
//! tables its plan read (the files and bytes read, a Delta table's version), its output the target
//! (the version committed, rows and files written, its columns).
//!
//! Events are delivered in order by one task, over HTTP (`OPENLINEAGE_URL`) or into a file (one
//! event a line). Delivery never fails a run and never holds one up: runs only queue events, each
//! request is bounded by the timeout, an endpoint that fails three times in a row is given up on
//! for the rest of the command, and closing waits for the queue at most one timeout more.

use std::sync::Mutex;
use std::time::Duration;

use chrono::{NaiveDate, SecondsFormat, Utc};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::{Error, PartitionReport, PreparedRun, Result, RunStatus};

mod transport;

use transport::Sink;
pub use transport::{Auth, Transport};

/// The run that started this one (an orchestrator's task run), as OpenLineage's
/// `OPENLINEAGE_PARENT_ID` convention writes it: `namespace/name/run_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentRun {
    pub namespace: String,
    pub name: String,
    pub run_id: String,
}

impl std::str::FromStr for ParentRun {
    type Err = String;

    /// `namespace/name/run_id`; the namespace may hold `/` itself, the run id is a UUID.
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let mut parts = text.rsplitn(3, '/');
        let (Some(run_id), Some(name), Some(namespace)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("`{text}` is not namespace/job_name/run_id"));
        };
        if namespace.is_empty() || name.is_empty() {
            return Err(format!("`{text}` is not namespace/job_name/run_id"));
        }
        uuid::Uuid::parse_str(run_id).map_err(|_| format!("`{text}`: the run id `{run_id}` is not a UUID"))?;
        Ok(Self { namespace: namespace.to_owned(), name: name.to_owned(), run_id: run_id.to_owned() })
    }
}

/// How to emit lineage.
#[derive(Debug, Clone)]
pub struct LineageOptions {
    pub transport: Transport,
    /// The jobs' namespace (`OPENLINEAGE_NAMESPACE`).
    pub namespace: String,
    /// The parent run (`OPENLINEAGE_PARENT_ID`) and the root of its hierarchy
    /// (`OPENLINEAGE_ROOT_PARENT_ID`, else the parent).
    pub parent: Option<ParentRun>,
    pub root: Option<ParentRun>,
    /// The bound on each request, and on the wait for undelivered events at the end.
    pub timeout: Duration,
}

/// The emitter: events queued by runs, delivered in order by a task of its own.
#[derive(Debug)]
pub struct Lineage {
    namespace: String,
    parent: Option<Value>,
    timeout: Duration,
    queue: Mutex<Option<mpsc::UnboundedSender<Value>>>,
    delivery: Mutex<Option<JoinHandle<()>>>,
}

/// The `producer` of every event and facet.
const PRODUCER: &str = concat!("https://github.com/lakewriter/lakewriter/tree/v", env!("CARGO_PKG_VERSION"));
const SPEC: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";
const FACETS: &str = "https://openlineage.io/spec/facets/";
/// lakewriter's own run facet, described in the repository's `schema/openlineage-facets.json`.
const OWN_FACET: &str =
    "https://github.com/lakewriter/lakewriter/blob/main/schema/openlineage-facets.json#/$defs/LakewriterRunFacet";

impl Lineage {
    /// Starts delivery on the current runtime. A file that cannot be opened for appending is a
    /// usage error naming it.
    pub fn start(options: LineageOptions) -> Result<Self> {
        let sink = match &options.transport {
            Transport::File(path) => {
                let file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| {
                    Error::Usage(format!("--openlineage-file {}: cannot open it for appending: {e}", path.display()))
                })?;
                Sink::File(file)
            }
            Transport::Http { url, auth } => Sink::http(url, auth.clone(), options.timeout)?,
        };
        let parent = options.parent.as_ref().map(|parent| {
            let root = options.root.as_ref().unwrap_or(parent);
            facet(
                "1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet",
                json!({
                    "run": { "runId": parent.run_id },
                    "job": { "namespace": parent.namespace, "name": parent.name },
                    "root": {
                        "run": { "runId": root.run_id },
                        "job": { "namespace": root.namespace, "name": root.name },
                    },
                }),
            )
        });
        let (queue, events) = mpsc::unbounded_channel();
        let delivery = tokio::spawn(sink.deliver(events));
        Ok(Self {
            namespace: options.namespace,
            parent,
            timeout: options.timeout,
            queue: Mutex::new(Some(queue)),
            delivery: Mutex::new(Some(delivery)),
        })
    }

    /// Waits for the events queued to be delivered, at most the timeout; those left are dropped,
    /// and said so. Later events are not sent.
    pub async fn close(&self) {
        drop(self.queue.lock().expect("the lineage queue's lock is never poisoned").take());
        let delivery = self.delivery.lock().expect("the lineage task's lock is never poisoned").take();
        let Some(mut delivery) = delivery else { return };
        if tokio::time::timeout(self.timeout, &mut delivery).await.is_err() {
            delivery.abort();
            tracing::warn!(
                timeout_s = self.timeout.as_secs_f64(),
                "OpenLineage: events still undelivered after the timeout were dropped"
            );
        }
    }

    fn emit(&self, mut event: Value) {
        without_nulls(&mut event);
        if let Some(queue) = self.queue.lock().expect("the lineage queue's lock is never poisoned").as_ref() {
            // The task ends only when the queue closes: a send cannot fail before.
            let _ = queue.send(event);
        }
    }

    /// `run` starts, as `run_id`, reading `inputs`.
    pub(crate) fn started(&self, run: &PreparedRun<'_>, run_id: &str, inputs: &[Input]) {
        let inputs: Vec<Value> = inputs.iter().map(|i| dataset(&i.url, json!({}))).collect();
        let output = dataset(run.job.location.url(), json!({}));
        self.emit(self.event("START", run, run_id, &inputs, &[output], None));
    }

    /// `run` ended as `report` says.
    pub(crate) fn finished(&self, run: &PreparedRun<'_>, report: &PartitionReport) {
        let Some(run_id) = report.run_id.as_deref() else { return };
        let io = report.io.as_deref();
        let inputs: Vec<Value> = io.map_or_else(Vec::new, |io| io.inputs.iter().map(Input::dataset).collect());
        let mut facets = serde_json::Map::new();
        let mut statistics = json!({});
        if let Some(version) = report.table_version {
            facets.insert(
                "version".into(),
                facet(
                    "1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet",
                    json!({ "datasetVersion": version.to_string() }),
                ),
            );
        }
        if let Some(io) = io.filter(|io| !io.columns.is_empty()) {
            let fields: Vec<Value> = io.columns.iter().map(|c| json!({ "name": c.column, "type": c.stored })).collect();
            facets.insert(
                "schema".into(),
                facet("1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet", json!({ "fields": fields })),
            );
        }
        if report.committed {
            statistics = json!({
                "outputStatistics": facet(
                    "1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet",
                    json!({ "rowCount": report.rows_written, "fileCount": report.files_added, "size": report.bytes_added }),
                ),
            });
        }
        let mut output = dataset(run.job.location.url(), Value::Object(facets));
        output["outputFacets"] = statistics;
        let (kind, error) = match (&report.status, &report.error) {
            (RunStatus::Failed, error) => ("FAIL", Some(error.as_ref().map_or_else(String::new, ToString::to_string))),
            _ => ("COMPLETE", None),
        };
        let mut event = self.event(kind, run, run_id, &inputs, &[output], error);
        event["run"]["facets"]["lakewriter"] = facet_at(
            OWN_FACET,
            json!({
                "partition": report.partition.to_string(),
                "write": report.write.map(|w| w.to_string()),
                "status": report.status,
                "committed": report.committed,
                "retries": report.retries,
                "durationMs": report.duration_ms,
            }),
        );
        self.emit(event);
    }

    fn event(
        &self,
        kind: &str,
        run: &PreparedRun<'_>,
        run_id: &str,
        inputs: &[Value],
        outputs: &[Value],
        error: Option<String>,
    ) -> Value {
        let mut facets = serde_json::Map::new();
        if let Some(dt) = run.unit.dt {
            facets.insert("nominalTime".into(), nominal_time(dt));
        }
        if let Some(parent) = &self.parent {
            facets.insert("parent".into(), parent.clone());
        }
        facets.insert(
            "processing_engine".into(),
            facet(
                "1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet",
                json!({ "name": "lakewriter", "version": lakewriter_core::VERSION, "openlineageAdapterVersion": lakewriter_core::VERSION }),
            ),
        );
        if let Some(message) = error {
            facets.insert(
                "errorMessage".into(),
                facet(
                    "1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet",
                    json!({ "message": message, "programmingLanguage": "Rust" }),
                ),
            );
        }
        json!({
            "eventType": kind,
            "eventTime": Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
            "producer": PRODUCER,
            "schemaURL": SPEC,
            "run": { "runId": run_id, "facets": facets },
            "job": {
                "namespace": self.namespace,
                "name": run.job.spec.name,
                "facets": {
                    "jobType": facet(
                        "2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
                        json!({ "processingType": "BATCH", "integration": "LAKEWRITER", "jobType": "JOB" }),
                    ),
                    "sql": facet("1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet", json!({ "query": run.job.sql })),
                },
            },
            "inputs": inputs,
            "outputs": outputs,
        })
    }
}

/// A table a partition's plan read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Input {
    /// Where the table lives.
    pub url: url::Url,
    /// A Delta table's version read; `None` for a raw dataset.
    pub version: Option<u64>,
    pub files: u64,
    pub bytes: u64,
}

impl Input {
    fn dataset(&self) -> Value {
        let facets = match self.version {
            Some(version) => {
                json!({ "version": facet("1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet", json!({ "datasetVersion": version.to_string() })) })
            }
            None => json!({}),
        };
        let mut dataset = dataset(&self.url, facets);
        dataset["inputFacets"] = json!({
            "inputStatistics": facet(
                "1-0-0/InputStatisticsInputDatasetFacet.json#/$defs/InputStatisticsInputDatasetFacet",
                json!({ "fileCount": self.files, "size": self.bytes }),
            ),
        });
        dataset
    }
}

/// What a run read and wrote, beyond its report: for its lineage.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RunIo {
    pub inputs: Vec<Input>,
    /// The columns of the result, with the types Delta stores them as.
    pub columns: Vec<lakewriter_delta::schema::SchemaColumn>,
}

/// A dataset as OpenLineage's naming convention names a table's folder: namespace `file` and the
/// absolute path, or `s3://bucket` and the key prefix.
fn dataset(url: &url::Url, facets: Value) -> Value {
    let (namespace, name) = match url.to_file_path() {
        Ok(path) if url.scheme() == "file" => {
            ("file".to_owned(), path.display().to_string().trim_end_matches('/').to_owned())
        }
        _ => (
            format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default()),
            url.path().trim_matches('/').to_owned(),
        ),
    };
    let mut facets = facets;
    facets["dataSource"] = facet(
        "1-0-1/DatasourceDatasetFacet.json#/$defs/DatasourceDatasetFacet",
        json!({ "name": namespace, "uri": url.as_str().trim_end_matches('/') }),
    );
    json!({ "namespace": namespace, "name": name, "facets": facets })
}

/// The logical day `dt` as the run's nominal time: its midnight to the next, UTC.
fn nominal_time(dt: NaiveDate) -> Value {
    let midnight = |day: NaiveDate| format!("{day}T00:00:00Z");
    let next = dt.succ_opt().unwrap_or(dt);
    facet(
        "1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet",
        json!({ "nominalStartTime": midnight(dt), "nominalEndTime": midnight(next) }),
    )
}

/// `value` without its null fields: the spec's fields are either there, of their type, or left
/// out (a statistic not known, a write mode of a job that is not known).
fn without_nulls(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.retain(|_, v| !v.is_null());
            fields.values_mut().for_each(without_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(without_nulls),
        _ => {}
    }
}

/// A standard facet: `fields` with the producer and the schema at `spec` (below the facets' URL).
fn facet(spec: &str, fields: Value) -> Value {
    facet_at(&format!("{FACETS}{spec}"), fields)
}

fn facet_at(schema: &str, mut fields: Value) -> Value {
    fields["_producer"] = PRODUCER.into();
    fields["_schemaURL"] = schema.into();
    fields
}

#[cfg(test)]
mod tests;
