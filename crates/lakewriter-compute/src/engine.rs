//! Where a partition's query runs: in this process (the local engine, the default), or on a
//! cluster that executes physical plans (an [`Engine`]: Apache DataFusion Ballista, behind the
//! CLI's `ballista` feature).
//!
//! Everything is planned here, in the one session: a job's plan is wrapped in a [`Distributed`]
//! node ([`distributed`]), which the session's planner ([`DistributedPlanner`]) makes a
//! [`RemoteExec`]: a leaf to whatever reads the result here — a held result, a keyed source, a
//! write — whose stream is the cluster's execution of the physical plan beneath it. Where the
//! whole plan may run there, [`execute`] sends all of it (a write of data files, say, so that
//! the files are written where the rows are).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchemaRef, Result as DfResult};
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, SessionState, TaskContext};
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, UserDefinedLogicalNode, UserDefinedLogicalNodeCore};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions,
};
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};
use datafusion::prelude::SessionConfig;
use futures::TryStreamExt;

/// A cluster that executes physical plans.
#[async_trait]
pub trait Engine: fmt::Debug + Send + Sync {
    /// The engine's URL as it was given (`df://host:port`).
    fn url(&self) -> &str;

    /// The partitions of each query run there (the tasks of each of its stages), where the engine
    /// sets them; `None`: this machine's cores, as a local query's.
    fn partitions(&self) -> Option<std::num::NonZeroUsize>;

    /// Why the cluster cannot run `plan`, if it cannot: a node it has no way to send there.
    fn refuses(&self, plan: &Arc<dyn ExecutionPlan>) -> Option<String>;

    /// Executes `plan` on the cluster, with the session's settings `config`: its output
    /// partitions' rows, one stream. An error names the engine and the cause.
    async fn execute(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &SessionConfig,
    ) -> DfResult<SendableRecordBatchStream>;
}

/// The session's engine, kept as an extension of its configuration (see [`set_engine`]).
#[derive(Debug, Clone)]
pub struct EngineHandle(pub Arc<dyn Engine>);

/// Makes `engine` the engine the session `config` belongs to runs its [`Distributed`] plans on.
pub fn set_engine(config: &mut SessionConfig, engine: Arc<dyn Engine>) {
    config.set_extension(Arc::new(EngineHandle(engine)));
}

/// The engine of the session `config` belongs to, if it has one.
#[must_use]
pub fn engine(config: &SessionConfig) -> Option<Arc<dyn Engine>> {
    config.get_extension::<EngineHandle>().map(|handle| Arc::clone(&handle.0))
}

/// `plan` to be run on the session's engine where it has one (see [`Distributed`]).
#[must_use]
pub fn distributed(plan: LogicalPlan, state: &SessionState) -> LogicalPlan {
    if engine(state.config()).is_none() {
        return plan;
    }
    LogicalPlan::Extension(Extension { node: Arc::new(Distributed { input: plan }) })
}

/// A plan whose input runs on the session's engine; planned as a [`RemoteExec`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd)]
pub struct Distributed {
    input: LogicalPlan,
}

impl UserDefinedLogicalNodeCore for Distributed {
    fn name(&self) -> &'static str {
        "Distributed"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        self.input.schema()
    }

    fn expressions(&self) -> Vec<Expr> {
        Vec::new()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Distributed")
    }

    fn with_exprs_and_inputs(&self, _exprs: Vec<Expr>, mut inputs: Vec<LogicalPlan>) -> DfResult<Self> {
        match inputs.pop() {
            Some(input) if inputs.is_empty() => Ok(Self { input }),
            _ => Err(DataFusionError::Internal("Distributed takes one input".to_owned())),
        }
    }
}

/// Plans a [`Distributed`] node as a [`RemoteExec`] over its planned input.
#[derive(Debug, Default)]
pub struct DistributedPlanner;

#[async_trait]
impl ExtensionPlanner for DistributedPlanner {
    async fn plan_extension(
        &self,
        _planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        _logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        _session: &dyn Session,
        _planning: &PhysicalPlanningContext,
    ) -> DfResult<Option<Arc<dyn ExecutionPlan>>> {
        if node.as_any().downcast_ref::<Distributed>().is_none() {
            return Ok(None);
        }
        let [input] = physical_inputs else {
            return Err(DataFusionError::Internal("Distributed takes one input".to_owned()));
        };
        Ok(Some(Arc::new(RemoteExec::new(Arc::clone(input)))))
    }
}

/// The rows of `input` as the session's engine computes them: one partition, the cluster's
/// output partitions one after the other.
#[derive(Debug)]
pub struct RemoteExec {
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

impl RemoteExec {
    #[must_use]
    pub fn new(input: Arc<dyn ExecutionPlan>) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(input.schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Self { input, properties: Arc::new(properties) }
    }
}

impl DisplayAs for RemoteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RemoteExec")
    }
}

impl ExecutionPlan for RemoteExec {
    fn name(&self) -> &'static str {
        "RemoteExec"
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
            Some(input) if children.is_empty() => Ok(Arc::new(Self::new(input))),
            _ => Err(DataFusionError::Internal("RemoteExec takes one input".to_owned())),
        }
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> DfResult<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!("RemoteExec has one partition, not {partition}")));
        }
        let config = context.session_config().clone();
        let Some(engine) = engine(&config) else {
            return Err(DataFusionError::Internal("a distributed plan in a session without an engine".to_owned()));
        };
        if let Some(why) = engine.refuses(&self.input) {
            tracing::warn!(engine = engine.url(), "computed here, not on the engine: {why}");
            return datafusion::physical_plan::execute_stream(Arc::clone(&self.input), context);
        }
        let input = Arc::clone(&self.input);
        let stream = futures::stream::once(async move { engine.execute(input, &config).await }).try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.input.schema(), stream)))
    }
}

/// Executes `plan` with `context`: where it reads a [`RemoteExec`], the whole plan runs on the
/// session's engine — the remote parts spliced into it, and the merges into one partition above
/// them left out where nothing needs one partition, so that each of the engine's tasks runs the
/// nodes above its part (a write of data files by each task, say) — and otherwise here (where
/// the engine refuses the whole, its remote parts still run there if they can).
pub fn execute(plan: Arc<dyn ExecutionPlan>, context: Arc<TaskContext>) -> DfResult<SendableRecordBatchStream> {
    let mut remote = false;
    plan.apply(|node| {
        remote |= node.downcast_ref::<RemoteExec>().is_some();
        Ok(if remote { TreeNodeRecursion::Stop } else { TreeNodeRecursion::Continue })
    })?;
    let whole = if remote { Some(spliced(unmerged(Arc::clone(&plan)))?) } else { None };
    if let (Some(whole), Some(engine)) = (whole, engine(context.session_config())) {
        match engine.refuses(&whole) {
            None => return RemoteExec::new(whole).execute(0, context),
            Some(why) => tracing::warn!(engine = engine.url(), "written here, not on the engine: {why}"),
        }
    }
    datafusion::physical_plan::execute_stream(plan, context)
}

/// `plan` without a merge into one partition at its top.
fn unmerged(plan: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
    match plan.downcast_ref::<CoalescePartitionsExec>() {
        Some(merge) if merge.fetch().is_none() => Arc::clone(merge.input()),
        _ => plan,
    }
}

/// `plan` with each [`RemoteExec`] replaced by its input, and, above them, each merge into one
/// partition whose parent does not need one partition left out.
fn spliced(plan: Arc<dyn ExecutionPlan>) -> DfResult<Arc<dyn ExecutionPlan>> {
    if let Some(remote) = plan.downcast_ref::<RemoteExec>() {
        return Ok(Arc::clone(&remote.input));
    }
    let needs: Vec<Distribution> = plan.input_distribution_requirements().into_per_child();
    let mut children = Vec::with_capacity(needs.len());
    for (child, need) in plan.children().into_iter().zip(needs) {
        let child = Arc::clone(child);
        let child = if matches!(need, Distribution::SinglePartition) { child } else { unmerged(child) };
        children.push(spliced(child)?);
    }
    if children.is_empty() {
        return Ok(plan);
    }
    plan.replace_children(children, ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute))
}
