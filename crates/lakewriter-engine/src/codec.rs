//! lakewriter's plan nodes on the wire: [`WriteFilesExec`] as its [`FileSpec`] in JSON, and the
//! guards of a NOT NULL column and of a column's dates as the column's name; every other node is
//! Ballista's (its shuffles) or DataFusion's. A function travels by its name, and the executors
//! hold DataFusion's functions: one of another definition under a name of theirs (the `spark`
//! dialect's `sum`, `round`, `year`, …) or of a name they lack is not encoded, so that a plan
//! calling it is refused by the engine and computed where it was planned (see
//! `lakewriter_compute::engine`), never with the executor's function of that name.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use ballista_core::serde::BallistaPhysicalExtensionCodec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionStateDefaults;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF, WindowUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use lakewriter_delta::write::files_exec::{FileSpec, WriteFilesExec};
use lakewriter_delta::{dates, nullability};

/// What begins the bytes of a [`WriteFilesExec`] (a protobuf message of Ballista's never does:
/// its first byte would be an end-group tag).
const WRITE_FILES: &[u8] = b"lakewriter.write_files:";

/// The codec of the client, the scheduler and the executors.
#[derive(Debug, Default)]
pub struct Codec {
    ballista: BallistaPhysicalExtensionCodec,
}

/// The functions every executor holds, by name.
struct Defaults {
    scalar: HashMap<String, Arc<ScalarUDF>>,
    aggregate: HashMap<String, Arc<AggregateUDF>>,
    window: HashMap<String, Arc<WindowUDF>>,
}

static DEFAULTS: LazyLock<Defaults> = LazyLock::new(|| Defaults {
    scalar: SessionStateDefaults::default_scalar_functions().into_iter().map(|f| (f.name().to_owned(), f)).collect(),
    aggregate: SessionStateDefaults::default_aggregate_functions()
        .into_iter()
        .map(|f| (f.name().to_owned(), f))
        .collect(),
    window: SessionStateDefaults::default_window_functions().into_iter().map(|f| (f.name().to_owned(), f)).collect(),
});

/// Fails unless `held`, the executors' function of the name of `node`, is `node` itself.
fn held_alike<T: PartialEq + ?Sized>(held: Option<&Arc<T>>, node: &T, name: &str) -> Result<()> {
    match held {
        Some(held) if held.as_ref() == node => Ok(()),
        _ => Err(DataFusionError::NotImplemented(format!(
            "the function `{name}` is not the one the engine's executors hold under that name"
        ))),
    }
}

fn external(e: impl std::error::Error + Send + Sync + 'static) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

impl PhysicalExtensionCodec for Codec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(spec) = buf.strip_prefix(WRITE_FILES) else {
            return self.ballista.try_decode(buf, inputs, ctx, converter);
        };
        let spec: FileSpec = serde_json::from_slice(spec).map_err(external)?;
        let [input] = inputs else {
            return Err(DataFusionError::Internal("WriteFilesExec takes one input".to_owned()));
        };
        Ok(Arc::new(WriteFilesExec::new(spec, Arc::clone(input))))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(write) = node.downcast_ref::<WriteFilesExec>() else {
            return self.ballista.try_encode(node, buf, converter);
        };
        buf.extend_from_slice(WRITE_FILES);
        serde_json::to_writer(buf, write.spec()).map_err(external)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        let guard = match name {
            nullability::GUARD => nullability::guard,
            dates::IN_RANGE => dates::in_range,
            _ => return self.ballista.try_decode_udf(name, buf),
        };
        let column = String::from_utf8(buf.to_vec()).map_err(external)?;
        Ok(Arc::new(guard(column)))
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        if let Some(column) = nullability::guarded_column(node).or_else(|| dates::guarded_column(node)) {
            buf.extend_from_slice(column.as_bytes());
            return Ok(());
        }
        held_alike(DEFAULTS.scalar.get(node.name()), node, node.name())?;
        self.ballista.try_encode_udf(node, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        held_alike(DEFAULTS.aggregate.get(node.name()), node, node.name())?;
        self.ballista.try_encode_udaf(node, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        held_alike(DEFAULTS.window.get(node.name()), node, node.name())?;
        self.ballista.try_encode_udwf(node, buf)
    }
}
