//! The fields of each facet lakewriter's events hold, with the schema each follows: OpenLineage's
//! standard facets, and lakewriter's own run facet (`schema/openlineage-facets.json`). As in
//! [`super::event`], fields are declared in the order of their JSON names, and an optional one is
//! left out where it is `None`.

use serde::Serialize;

use crate::RunStatus;

/// The `producer` of every event and facet.
pub(super) const PRODUCER: &str = concat!("https://github.com/lakewriter/lakewriter/tree/v", env!("CARGO_PKG_VERSION"));

/// The fields of a facet, and the schema they follow.
pub(super) trait FacetFields: Serialize {
    const SCHEMA: &'static str;
}

/// A facet: its fields, after the producer and schema every facet carries.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Facet<T> {
    #[serde(rename = "_producer")]
    producer: &'static str,
    #[serde(rename = "_schemaURL")]
    schema_url: &'static str,
    #[serde(flatten)]
    pub fields: T,
}

impl<T: FacetFields> From<T> for Facet<T> {
    fn from(fields: T) -> Self {
        Self { producer: PRODUCER, schema_url: T::SCHEMA, fields }
    }
}

/// The schema URL of a standard facet, from its path below OpenLineage's facets.
macro_rules! standard {
    ($path:literal) => {
        concat!("https://openlineage.io/spec/facets/", $path)
    };
}

/// A job or run as another event names it.
#[derive(Debug, Clone, Serialize)]
pub(super) struct JobId {
    pub name: String,
    pub namespace: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RunId {
    pub run_id: String,
}

/// The run that started this one, and the root of its hierarchy.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Parent {
    pub job: JobId,
    pub root: Root,
    pub run: RunId,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct Root {
    pub job: JobId,
    pub run: RunId,
}

impl FacetFields for Parent {
    const SCHEMA: &'static str = standard!("1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet");
}

/// A dated run's day: its midnight to the next, UTC.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct NominalTime {
    pub nominal_end_time: String,
    pub nominal_start_time: String,
}

impl FacetFields for NominalTime {
    const SCHEMA: &'static str = standard!("1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet");
}

/// lakewriter, as the engine and the integration.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ProcessingEngine {
    name: &'static str,
    openlineage_adapter_version: &'static str,
    version: &'static str,
}

impl ProcessingEngine {
    /// This build of lakewriter.
    pub const LAKEWRITER: Self = Self {
        name: "lakewriter",
        openlineage_adapter_version: lakewriter_core::VERSION,
        version: lakewriter_core::VERSION,
    };
}

impl FacetFields for ProcessingEngine {
    const SCHEMA: &'static str = standard!("1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet");
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ErrorMessage {
    pub message: String,
    programming_language: &'static str,
}

impl ErrorMessage {
    /// lakewriter's error `message`.
    pub fn new(message: String) -> Self {
        Self { message, programming_language: "Rust" }
    }
}

impl FacetFields for ErrorMessage {
    const SCHEMA: &'static str = standard!("1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet");
}

/// lakewriter's own run facet: how the partition run ended.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LakewriterRun {
    pub committed: bool,
    pub duration_ms: u64,
    pub partition: String,
    pub retries: u32,
    pub status: RunStatus,
    /// The job's write mode; left out where the job is not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
}

impl FacetFields for LakewriterRun {
    const SCHEMA: &'static str =
        "https://github.com/lakewriter/lakewriter/blob/main/schema/openlineage-facets.json#/$defs/LakewriterRunFacet";
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct JobType {
    integration: &'static str,
    job_type: &'static str,
    processing_type: &'static str,
}

impl JobType {
    /// A lakewriter job: a batch job.
    pub const LAKEWRITER: Self = Self { integration: "LAKEWRITER", job_type: "JOB", processing_type: "BATCH" };
}

impl FacetFields for JobType {
    const SCHEMA: &'static str = standard!("2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet");
}

/// The job's query.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Sql {
    pub query: String,
}

impl FacetFields for Sql {
    const SCHEMA: &'static str = standard!("1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet");
}

/// Where a dataset lives.
#[derive(Debug, Clone, Serialize)]
pub(super) struct DataSource {
    pub name: String,
    pub uri: String,
}

impl FacetFields for DataSource {
    const SCHEMA: &'static str = standard!("1-0-1/DatasourceDatasetFacet.json#/$defs/DatasourceDatasetFacet");
}

/// The columns written, with the types Delta stores them as.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Schema {
    pub fields: Vec<SchemaField>,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct SchemaField {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
}

impl FacetFields for Schema {
    const SCHEMA: &'static str = standard!("1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet");
}

/// A Delta table's version: read, or committed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct DatasetVersion {
    pub dataset_version: String,
}

impl FacetFields for DatasetVersion {
    const SCHEMA: &'static str = standard!("1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet");
}

/// The files and bytes a run read of a table.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InputStatistics {
    pub file_count: u64,
    pub size: u64,
}

impl FacetFields for InputStatistics {
    const SCHEMA: &'static str =
        standard!("1-0-0/InputStatisticsInputDatasetFacet.json#/$defs/InputStatisticsInputDatasetFacet");
}

/// The rows, files and bytes a commit wrote, each left out where not known.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct OutputStatistics {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl FacetFields for OutputStatistics {
    const SCHEMA: &'static str =
        standard!("1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet");
}
