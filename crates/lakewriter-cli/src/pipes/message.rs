//! The Dagster Pipes messages lakewriter sends, as the types they are serialized from: the
//! envelope, each method with its params, an asset materialization's metadata and its values
//! (`{"raw_value": …, "type": …}`). Fields are declared in the order of their JSON names, so a
//! message is written with its keys sorted.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::{SerializeStruct as _, Serializer};

const PROTOCOL_VERSION: &str = "0.1";

/// A message to Dagster: `{"__dagster_pipes_version", "method", "params"}`.
#[derive(Debug, Serialize)]
struct Envelope<'a> {
    #[serde(rename = "__dagster_pipes_version")]
    version: &'static str,
    #[serde(flatten)]
    message: &'a Message,
}

/// A message's method and its params.
#[derive(Debug, Serialize)]
#[serde(tag = "method", content = "params", rename_all = "snake_case")]
pub(super) enum Message {
    /// The session is open; lakewriter sends no extras.
    Opened { extras: Extras },
    ReportAssetMaterialization {
        asset_key: String,
        /// The input fingerprint; `null` where there is none.
        data_version: Option<String>,
        metadata: Box<Metadata>,
    },
    /// The session ends: with the exception of a failure, none for a success (Dagster reads any
    /// `exception` key as a failure).
    Closed {
        #[serde(skip_serializing_if = "Option::is_none")]
        exception: Option<Exception>,
    },
}

impl Message {
    /// The message as Dagster reads it: a line of JSON, with its newline.
    pub(super) fn line(&self) -> serde_json::Result<Vec<u8>> {
        let mut line = serde_json::to_vec(&Envelope { version: PROTOCOL_VERSION, message: self })?;
        line.push(b'\n');
        Ok(line)
    }
}

/// No extras: `{}`.
#[derive(Debug, Serialize)]
pub(super) struct Extras {}

/// A failure, as Dagster's serialized error: lakewriter's message, without stack or cause.
#[derive(Debug, Serialize)]
pub(super) struct Exception {
    cause: (),
    context: (),
    message: String,
    name: &'static str,
    stack: [&'static str; 0],
}

impl Exception {
    pub(super) fn new(message: &str) -> Self {
        Self { cause: (), context: (), message: message.to_owned(), name: "LakewriterError", stack: [] }
    }
}

/// A materialization's metadata: a partition's figures, or a backfill range's.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Metadata {
    Partition(PartitionMetadata),
    Range(RangeMetadata),
}

#[derive(Debug, Serialize)]
pub(super) struct PartitionMetadata {
    pub(super) code_fingerprint: MetadataValue,
    pub(super) committed: MetadataValue,
    pub(super) fresh_before: MetadataValue,
    pub(super) input_fingerprint: MetadataValue,
    pub(super) job: MetadataValue,
    pub(super) partition: MetadataValue,
    pub(super) rows_written: MetadataValue,
    pub(super) run_id: MetadataValue,
    pub(super) status: MetadataValue,
    pub(super) table_version: MetadataValue,
}

#[derive(Debug, Serialize)]
pub(super) struct RangeMetadata {
    pub(super) by_partition: MetadataValue,
    pub(super) code_fingerprint: MetadataValue,
    pub(super) job: MetadataValue,
    pub(super) partitions: MetadataValue,
    pub(super) range: MetadataValue,
    pub(super) rows_written: MetadataValue,
    pub(super) table_version: MetadataValue,
}

/// One partition's figures of a backfill range, in its `by_partition` (`null` where not known).
#[derive(Debug, Serialize)]
pub(super) struct PartitionFigures {
    pub(super) committed: bool,
    pub(super) fresh_before: Option<bool>,
    pub(super) input_fingerprint: Option<String>,
    pub(super) rows_written: Option<u64>,
    pub(super) run_id: Option<String>,
    pub(super) table_version: Option<u64>,
}

/// A metadata entry: `{"raw_value": VALUE, "type": "text" | "int" | "bool" | "null" | "json"}`.
#[derive(Debug)]
pub(super) enum MetadataValue {
    Text(String),
    Int(u64),
    Bool(bool),
    Null,
    /// A backfill's partitions, by partition.
    ByPartition(BTreeMap<String, PartitionFigures>),
}

impl MetadataValue {
    /// A number; `null` where there is none.
    pub(super) fn int(value: Option<u64>) -> Self {
        value.map_or(Self::Null, Self::Int)
    }

    /// Text.
    pub(super) fn text(value: impl Into<String>) -> Self {
        Self::Text(value.into())
    }
}

impl Serialize for MetadataValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut entry = serializer.serialize_struct("MetadataValue", 2)?;
        let kind = match self {
            Self::Text(text) => entry.serialize_field("raw_value", text).map(|()| "text"),
            Self::Int(number) => entry.serialize_field("raw_value", number).map(|()| "int"),
            Self::Bool(flag) => entry.serialize_field("raw_value", flag).map(|()| "bool"),
            Self::Null => entry.serialize_field("raw_value", &()).map(|()| "null"),
            Self::ByPartition(figures) => entry.serialize_field("raw_value", figures).map(|()| "json"),
        }?;
        entry.serialize_field("type", kind)?;
        entry.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(message: &Message) -> String {
        String::from_utf8(message.line().expect("JSON")).expect("UTF-8")
    }

    #[test]
    fn messages_are_the_lines_dagster_reads() {
        let opened = r#"{"__dagster_pipes_version":"0.1","method":"opened","params":{"extras":{}}}"#;
        assert_eq!(line(&Message::Opened { extras: Extras {} }), format!("{opened}\n"));
        let closed = r#"{"__dagster_pipes_version":"0.1","method":"closed","params":{}}"#;
        assert_eq!(line(&Message::Closed { exception: None }), format!("{closed}\n"));
        let failed = Message::Closed { exception: Some(Exception::new("it failed")) };
        let exception = r#"{"cause":null,"context":null,"message":"it failed","name":"LakewriterError","stack":[]}"#;
        let closed =
            format!(r#"{{"__dagster_pipes_version":"0.1","method":"closed","params":{{"exception":{exception}}}}}"#);
        assert_eq!(line(&failed), format!("{closed}\n"));
    }

    #[test]
    fn a_materialization_holds_each_value_as_raw_value_and_type() {
        let figures = PartitionFigures {
            committed: true,
            fresh_before: None,
            input_fingerprint: Some("f".into()),
            rows_written: Some(2),
            run_id: None,
            table_version: Some(3),
        };
        let metadata = RangeMetadata {
            by_partition: MetadataValue::ByPartition(BTreeMap::from([("dt=2026-09-30".to_owned(), figures)])),
            code_fingerprint: MetadataValue::text("c"),
            job: MetadataValue::text("daily"),
            partitions: MetadataValue::int(Some(1)),
            range: MetadataValue::Bool(false),
            rows_written: MetadataValue::Int(2),
            table_version: MetadataValue::int(None),
        };
        let message = Message::ReportAssetMaterialization {
            asset_key: "daily".into(),
            data_version: None,
            metadata: Box::new(Metadata::Range(metadata)),
        };
        let figures = r#"{"committed":true,"fresh_before":null,"input_fingerprint":"f","rows_written":2,"run_id":null,"table_version":3}"#;
        let metadata = [
            format!(r#""by_partition":{{"raw_value":{{"dt=2026-09-30":{figures}}},"type":"json"}}"#),
            r#""code_fingerprint":{"raw_value":"c","type":"text"}"#.to_owned(),
            r#""job":{"raw_value":"daily","type":"text"}"#.to_owned(),
            r#""partitions":{"raw_value":1,"type":"int"}"#.to_owned(),
            r#""range":{"raw_value":false,"type":"bool"}"#.to_owned(),
            r#""rows_written":{"raw_value":2,"type":"int"}"#.to_owned(),
            r#""table_version":{"raw_value":null,"type":"null"}"#.to_owned(),
        ];
        let params = format!(r#"{{"asset_key":"daily","data_version":null,"metadata":{{{}}}}}"#, metadata.join(","));
        let expected =
            format!(r#"{{"__dagster_pipes_version":"0.1","method":"report_asset_materialization","params":{params}}}"#);
        assert_eq!(line(&message), format!("{expected}\n"));
    }
}
