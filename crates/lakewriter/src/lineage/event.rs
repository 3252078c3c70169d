//! The OpenLineage run event lakewriter sends (spec 2-0-2), as the types it is serialized from:
//! the event, its run and job, the datasets read and written, and the facets each part holds by
//! name. A facet's own fields are in [`super::facets`].
//!
//! Each struct declares its fields in the order of their JSON names (bytes, as a JSON object with
//! sorted keys has them), so an event is written with its keys sorted; an optional field is left
//! out where it is `None`, never written as `null`.

use serde::Serialize;

use super::facets::{
    DataSource, DatasetVersion, ErrorMessage, Facet, InputStatistics, JobType, LakewriterRun, NominalTime,
    OutputStatistics, PRODUCER, Parent, ProcessingEngine, Schema, Sql,
};

const SPEC: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";

/// One run event.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RunEvent {
    /// When it was made: RFC 3339, milliseconds, UTC.
    pub event_time: String,
    pub event_type: EventType,
    pub inputs: Vec<InputDataset>,
    pub job: Job,
    pub outputs: Vec<OutputDataset>,
    producer: &'static str,
    pub run: Run,
    #[serde(rename = "schemaURL")]
    schema_url: &'static str,
}

impl RunEvent {
    pub(super) fn new(
        event_time: String,
        event_type: EventType,
        run: Run,
        job: Job,
        inputs: Vec<InputDataset>,
        outputs: Vec<OutputDataset>,
    ) -> Self {
        Self { event_time, event_type, inputs, job, outputs, producer: PRODUCER, run, schema_url: SPEC }
    }
}

/// Where the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(super) enum EventType {
    Start,
    Complete,
    Fail,
}

/// The run: a partition run, by its own run id.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Run {
    pub facets: RunFacets,
    pub run_id: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RunFacets {
    /// A failed run's error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<Facet<ErrorMessage>>,
    /// lakewriter's own facet, on the event that ends the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lakewriter: Option<Facet<LakewriterRun>>,
    /// A dated run's day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nominal_time: Option<Facet<NominalTime>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<Facet<Parent>>,
    #[serde(rename = "processing_engine")]
    pub processing_engine: Facet<ProcessingEngine>,
}

/// The job: the lakewriter job, in the namespace given.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Job {
    pub facets: JobFacets,
    pub name: String,
    pub namespace: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct JobFacets {
    pub job_type: Facet<JobType>,
    pub sql: Facet<Sql>,
}

/// A table read. Its input facets are on the event that ends the run, whose reads are known.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InputDataset {
    pub facets: DatasetFacets,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_facets: Option<InputFacets>,
    pub name: String,
    pub namespace: String,
}

/// The target. Its output facets are on the event that ends the run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct OutputDataset {
    pub facets: DatasetFacets,
    pub name: String,
    pub namespace: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_facets: Option<OutputFacets>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct DatasetFacets {
    pub data_source: Facet<DataSource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Facet<Schema>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Facet<DatasetVersion>>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InputFacets {
    pub input_statistics: Facet<InputStatistics>,
}

/// Empty where nothing was committed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct OutputFacets {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_statistics: Option<Facet<OutputStatistics>>,
}
