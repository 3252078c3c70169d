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
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::{Error, PartitionReport, PreparedRun, Result, RunStatus};

mod event;
mod facets;
mod transport;

use event::{
    DatasetFacets, EventType, InputDataset, InputFacets, Job, JobFacets, OutputDataset, OutputFacets, Run, RunEvent,
    RunFacets,
};
use facets::{
    DataSource, DatasetVersion, ErrorMessage, Facet, InputStatistics, JobId, JobType, LakewriterRun, NominalTime,
    OutputStatistics, Parent, ProcessingEngine, Root, RunId, Schema, SchemaField, Sql,
};
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

impl ParentRun {
    /// This run as a run's parent, under `root`.
    fn facet(&self, root: &ParentRun) -> Facet<Parent> {
        let job = |run: &ParentRun| JobId { name: run.name.clone(), namespace: run.namespace.clone() };
        let id = |run: &ParentRun| RunId { run_id: run.run_id.clone() };
        Parent { job: job(self), root: Root { job: job(root), run: id(root) }, run: id(self) }.into()
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
    parent: Option<Facet<Parent>>,
    timeout: Duration,
    queue: Mutex<Option<mpsc::UnboundedSender<RunEvent>>>,
    delivery: Mutex<Option<JoinHandle<()>>>,
}

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
        let parent = options.parent.as_ref().map(|parent| parent.facet(options.root.as_ref().unwrap_or(parent)));
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

    fn emit(&self, event: RunEvent) {
        if let Some(queue) = self.queue.lock().expect("the lineage queue's lock is never poisoned").as_ref() {
            // The task ends only when the queue closes: a send cannot fail before.
            let _ = queue.send(event);
        }
    }

    /// `run` starts, as `run_id`, reading `inputs`.
    pub(crate) fn started(&self, run: &PreparedRun<'_>, run_id: &str, inputs: &[Input]) {
        let inputs = inputs.iter().map(|i| InputDataset::at(&i.url)).collect();
        let output = OutputDataset::at(run.job.location.url());
        self.emit(self.event(EventType::Start, run, run_id, inputs, output, None));
    }

    /// `run` ended as `report` says.
    pub(crate) fn finished(&self, run: &PreparedRun<'_>, report: &PartitionReport) {
        let Some(run_id) = report.run_id.as_deref() else { return };
        let io = report.io.as_deref();
        let inputs = io.map_or_else(Vec::new, |io| io.inputs.iter().map(Input::dataset).collect());
        let mut output = OutputDataset::at(run.job.location.url());
        output.facets.version = report.table_version.map(version);
        output.facets.schema = io.filter(|io| !io.columns.is_empty()).map(|io| {
            let fields = io.columns.iter().map(|c| SchemaField { name: c.column.clone(), kind: c.stored.clone() });
            Schema { fields: fields.collect() }.into()
        });
        let statistics = OutputStatistics {
            file_count: report.files_added,
            row_count: report.rows_written,
            size: report.bytes_added,
        };
        output.output_facets = Some(OutputFacets { output_statistics: report.committed.then(|| statistics.into()) });
        let (kind, error) = match (&report.status, &report.error) {
            (RunStatus::Failed, error) => {
                (EventType::Fail, Some(error.as_ref().map_or_else(String::new, ToString::to_string)))
            }
            _ => (EventType::Complete, None),
        };
        let mut event = self.event(kind, run, run_id, inputs, output, error);
        event.run.facets.lakewriter = Some(
            LakewriterRun {
                committed: report.committed,
                duration_ms: report.duration_ms,
                partition: report.partition.to_string(),
                retries: report.retries,
                status: report.status,
                write: report.write.map(|w| w.to_string()),
            }
            .into(),
        );
        self.emit(event);
    }

    /// An event of `run` as `run_id`, reading `inputs` and writing `output`; `error` where it
    /// failed.
    fn event(
        &self,
        kind: EventType,
        run: &PreparedRun<'_>,
        run_id: &str,
        inputs: Vec<InputDataset>,
        output: OutputDataset,
        error: Option<String>,
    ) -> RunEvent {
        let facets = RunFacets {
            error_message: error.map(|message| ErrorMessage::new(message).into()),
            lakewriter: None,
            nominal_time: run.unit.dt.map(nominal_time),
            parent: self.parent.clone(),
            processing_engine: ProcessingEngine::LAKEWRITER.into(),
        };
        let job = Job {
            facets: JobFacets { job_type: JobType::LAKEWRITER.into(), sql: Sql { query: run.job.sql.clone() }.into() },
            name: run.job.spec.name.clone(),
            namespace: self.namespace.clone(),
        };
        RunEvent::new(
            Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
            kind,
            Run { facets, run_id: run_id.to_owned() },
            job,
            inputs,
            vec![output],
        )
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
    /// The table as the event that ends the run names it: with what was read of it.
    fn dataset(&self) -> InputDataset {
        let mut dataset = InputDataset::at(&self.url);
        dataset.facets.version = self.version.map(version);
        let statistics = InputStatistics { file_count: self.files, size: self.bytes };
        dataset.input_facets = Some(InputFacets { input_statistics: statistics.into() });
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

impl InputDataset {
    /// The table at `url`, named, with no facet but its data source.
    fn at(url: &url::Url) -> Self {
        let (namespace, name, facets) = dataset(url);
        Self { facets, input_facets: None, name, namespace }
    }
}

impl OutputDataset {
    /// The table at `url`, named, with no facet but its data source.
    fn at(url: &url::Url) -> Self {
        let (namespace, name, facets) = dataset(url);
        Self { facets, name, namespace, output_facets: None }
    }
}

/// A dataset as OpenLineage's naming convention names a table's folder: namespace `file` and the
/// absolute path, or `s3://bucket` and the key prefix; and its data source facet.
fn dataset(url: &url::Url) -> (String, String, DatasetFacets) {
    let (namespace, name) = match url.to_file_path() {
        Ok(path) if url.scheme() == "file" => {
            ("file".to_owned(), path.display().to_string().trim_end_matches('/').to_owned())
        }
        _ => (
            format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default()),
            url.path().trim_matches('/').to_owned(),
        ),
    };
    let source = DataSource { name: namespace.clone(), uri: url.as_str().trim_end_matches('/').to_owned() };
    (namespace, name, DatasetFacets { data_source: source.into(), schema: None, version: None })
}

/// A Delta table's version, read or committed.
fn version(version: u64) -> Facet<DatasetVersion> {
    DatasetVersion { dataset_version: version.to_string() }.into()
}

/// The logical day `dt` as the run's nominal time: its midnight to the next, UTC.
fn nominal_time(dt: NaiveDate) -> Facet<NominalTime> {
    let midnight = |day: NaiveDate| format!("{day}T00:00:00Z");
    let next = dt.succ_opt().unwrap_or(dt);
    NominalTime { nominal_end_time: midnight(next), nominal_start_time: midnight(dt) }.into()
}

#[cfg(test)]
mod tests;
