//! The writing of a table's data files as a DataFusion plan node: [`WriteFilesExec`] writes each
//! of its input's partitions with delta-rs's writer into the table's folder, and yields the
//! files' `add` actions — nothing else: the commit is made by whoever collects them. A plan with
//! it runs where the session's engine runs it (see [`lakewriter_compute::engine::execute`]): here,
//! or on a cluster's executors, each task writing the rows it computed. A task that fails leaves
//! only files no commit names.

use std::fmt;
use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties};
use deltalake::kernel::Add;
use object_store::ObjectStore;
use object_store::prefix::PrefixStore;

pub use super::own::FileSpec;
use super::own::FileWriter;

/// The name a process gives the files it writes, in a write's report: an engine's executor sets
/// its own (see [`name_writer`]); any other process is `local`.
static WRITER: OnceLock<String> = OnceLock::new();

/// Names this process, as the writer of the files it writes (an engine's executor).
pub fn name_writer(name: String) {
    let _ = WRITER.set(name);
}

fn writer_name() -> &'static str {
    WRITER.get().map_or("local", String::as_str)
}

/// Writes each partition of `input` as data files of the table `spec` names; yields one row per
/// file (its `add` action as JSON), or one row without an action for a partition that wrote
/// none, each with the task's rows (on its first row), the writer's name and the task's id.
#[derive(Debug)]
pub struct WriteFilesExec {
    spec: FileSpec,
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

impl WriteFilesExec {
    #[must_use]
    pub fn new(spec: FileSpec, input: Arc<dyn ExecutionPlan>) -> Self {
        let partitions = input.properties().partitioning.partition_count();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(output_schema()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        Self { spec, input, properties: Arc::new(properties) }
    }

    #[must_use]
    pub fn spec(&self) -> &FileSpec {
        &self.spec
    }
}

/// The rows a [`WriteFilesExec`] yields.
fn output_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("add", DataType::Utf8, true),
        Field::new("rows", DataType::UInt64, false),
        Field::new("writer", DataType::Utf8, false),
        Field::new("task", DataType::UInt64, false),
    ]))
}

impl DisplayAs for WriteFilesExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WriteFilesExec: table={}", self.spec.table)
    }
}

impl ExecutionPlan for WriteFilesExec {
    fn name(&self) -> &'static str {
        "WriteFilesExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        match children.pop() {
            Some(input) if children.is_empty() => Ok(Arc::new(Self::new(self.spec.clone(), input))),
            _ => Err(DataFusionError::Internal("WriteFilesExec takes one input".to_owned())),
        }
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> DfResult<SendableRecordBatchStream> {
        let url = url::Url::parse(&self.spec.table).map_err(|e| DataFusionError::External(Box::new(e)))?;
        let store_url = datafusion::execution::object_store::ObjectStoreUrl::parse(&url[..url::Position::BeforePath])?;
        let store = context.runtime_env().object_store(store_url)?;
        let folder = crate::paths::folder(&url)?;
        let store: Arc<dyn ObjectStore> = Arc::new(PrefixStore::new(store, folder));
        let writer = FileWriter::new(store, &self.spec, self.input.schema());
        let input = self.input.execute(partition, context)?;
        let written = async move {
            let (adds, rows) =
                super::own::write_stream(writer, input).await.map_err(|e| DataFusionError::External(Box::new(e)))?;
            // An id of its own: an engine's executor may run each task's slice of the plan as
            // partition 0 of its own.
            task_rows(&adds, rows, uuid::Uuid::new_v4().as_u64_pair().0)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(output_schema(), futures::stream::once(written))))
    }
}

/// A task's rows: its files' `add` actions, its rows on the first, the writer's name and the
/// task's id.
fn task_rows(adds: &[Add], rows: u64, task: u64) -> DfResult<RecordBatch> {
    let actions: Vec<Option<String>> = if adds.is_empty() {
        vec![None]
    } else {
        adds.iter()
            .map(|add| serde_json::to_string(add).map(Some))
            .collect::<Result<_, _>>()
            .map_err(|e| DataFusionError::External(Box::new(e)))?
    };
    let n = actions.len();
    let counts = (0..n).map(|i| if i == 0 { rows } else { 0 });
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(actions)),
        Arc::new(UInt64Array::from_iter_values(counts)),
        Arc::new(StringArray::from(vec![writer_name(); n])),
        Arc::new(UInt64Array::from(vec![task; n])),
    ];
    Ok(RecordBatch::try_new(output_schema(), columns)?)
}

/// What the tasks of a [`WriteFilesExec`] wrote: the files' `add` actions, the rows, and how the
/// work was spread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    pub adds: Vec<Add>,
    pub rows: u64,
    /// The writers (processes) that wrote, each once.
    pub writers: std::collections::BTreeSet<String>,
    /// The tasks that ran.
    pub tasks: usize,
}

impl Written {
    /// Reads the rows of a [`WriteFilesExec`].
    pub fn read(batches: &[RecordBatch]) -> DfResult<Self> {
        let mut written = Self::default();
        let mut tasks = std::collections::HashSet::new();
        for batch in batches {
            let column = |i: usize| Arc::clone(batch.column(i));
            let (adds, rows, writers, task) = (column(0), column(1), column(2), column(3));
            let cast = || DataFusionError::Internal("the rows of a WriteFilesExec".to_owned());
            let adds = adds.as_any().downcast_ref::<StringArray>().ok_or_else(cast)?;
            let rows = rows.as_any().downcast_ref::<UInt64Array>().ok_or_else(cast)?;
            let writers = writers.as_any().downcast_ref::<StringArray>().ok_or_else(cast)?;
            let task = task.as_any().downcast_ref::<UInt64Array>().ok_or_else(cast)?;
            for i in 0..batch.num_rows() {
                if adds.is_valid(i) {
                    let add =
                        serde_json::from_str(adds.value(i)).map_err(|e| DataFusionError::External(Box::new(e)))?;
                    written.adds.push(add);
                }
                written.rows += rows.value(i);
                written.writers.insert(writers.value(i).to_owned());
                tasks.insert(task.value(i));
            }
        }
        written.tasks = tasks.len();
        Ok(written)
    }
}
