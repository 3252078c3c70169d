//! The client side: a partition's physical plan, planned in lakewriter's session, sent to a
//! Ballista scheduler as it is (Ballista's physical-plan submission), its result streamed back.

use std::num::NonZeroUsize;
use std::sync::Arc;

use async_trait::async_trait;
use ballista_core::config::BallistaConfig;
use ballista_core::execution_plans::execute_physical_plan;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{ChildrenPropertiesMode, ExecutionPlan, ReplaceChildrenOptions};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::PhysicalPlanNode;
use futures::{StreamExt, TryStreamExt};

use crate::codec::Codec;

/// What went wrong on the engine: its URL and the cause.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL is not one, or names a scheduler that cannot be reached.
    #[error("engine {url}: {message}")]
    Url { url: String, message: String },
    #[error("engine {url}: {source}")]
    Failed {
        url: String,
        #[source]
        source: DataFusionError,
    },
}

/// A Ballista cluster, reached through its scheduler.
#[derive(Debug)]
pub struct Ballista {
    /// `df://HOST:PORT[?partitions=N]`, as given.
    url: String,
    /// The `partitions` the URL asks each query for.
    partitions: Option<NonZeroUsize>,
    /// The scheduler's gRPC endpoint (`http://HOST:PORT`).
    scheduler: String,
    /// The Ballista session this command's plans run in.
    session_id: String,
    codec: Codec,
}

impl Ballista {
    /// The engine at `url`, `df://HOST:PORT[?partitions=N]`: `partitions`, the partitions of each
    /// query (the tasks of each of its stages; this machine's cores where not given). Nothing is
    /// contacted yet: a scheduler that cannot be reached fails the first plan sent to it.
    pub fn new(url: &str) -> Result<Self, Error> {
        let bad = |message: &str| Error::Url { url: url.to_owned(), message: message.to_owned() };
        let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
        if parsed.scheme() != "df" {
            return Err(bad("an engine is `local` or `df://HOST:PORT` (a Ballista scheduler)"));
        }
        let host = parsed.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("names no host"))?;
        let port = parsed.port().ok_or_else(|| bad("names no port"))?;
        if !parsed.path().trim_matches('/').is_empty() {
            return Err(bad("is only `df://HOST:PORT[?partitions=N]`"));
        }
        let mut partitions = None;
        for (key, value) in parsed.query_pairs() {
            match (key.as_ref(), value.parse::<NonZeroUsize>()) {
                ("partitions", Ok(n)) if partitions.is_none() => partitions = Some(n),
                ("partitions", _) => return Err(bad("`partitions` is one number, 1 or more")),
                (other, _) => return Err(bad(&format!("`{other}` is no setting of an engine (`partitions` is)"))),
            }
        }
        Ok(Self {
            url: url.to_owned(),
            partitions,
            scheduler: format!("http://{host}:{port}"),
            session_id: uuid::Uuid::new_v4().to_string(),
            codec: Codec::default(),
        })
    }

    fn failed(&self, source: DataFusionError) -> DataFusionError {
        let text = source.to_string();
        if text.contains("ConnectError") {
            let why = if text.contains("ConnectionRefused") { "connection refused" } else { "cannot connect" };
            let host = self.scheduler.trim_start_matches("http://");
            let message = format!("the scheduler at {host} cannot be reached ({why})");
            return DataFusionError::External(Box::new(Error::Url { url: self.url.clone(), message }));
        }
        DataFusionError::External(Box::new(Error::Failed { url: self.url.clone(), source }))
    }
}

/// A leaf in place of `child`, to try its parent alone.
fn leaf(child: &Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
    Arc::new(datafusion::physical_plan::empty::EmptyExec::new(child.schema()))
}

/// The name of the first node of `plan` (top down) that is `unsent`.
fn first(plan: &Arc<dyn ExecutionPlan>, unsent: &dyn Fn(&Arc<dyn ExecutionPlan>) -> bool) -> Option<String> {
    if unsent(plan) {
        return Some(plan.name().to_owned());
    }
    plan.children().into_iter().find_map(|child| first(child, unsent))
}

#[async_trait]
impl lakewriter_compute::engine::Engine for Ballista {
    fn url(&self) -> &str {
        &self.url
    }

    fn partitions(&self) -> Option<NonZeroUsize> {
        self.partitions
    }

    fn refuses(&self, plan: &Arc<dyn ExecutionPlan>) -> Option<String> {
        use datafusion_proto::physical_plan::AsExecutionPlan;
        let encoded = PhysicalPlanNode::try_from_physical_plan(Arc::clone(plan), &self.codec);
        let unsent = |node: &Arc<dyn ExecutionPlan>| {
            let leaves = node.children().into_iter().map(leaf).collect();
            let alone = Arc::clone(node)
                .replace_children(leaves, ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute));
            alone.is_ok_and(|alone| PhysicalPlanNode::try_from_physical_plan(alone, &self.codec).is_err())
        };
        encoded.err().map(|error| {
            let why = error.strip_backtrace();
            match first(plan, &unsent) {
                Some(name) => format!("its plan reads {name}, which cannot be sent to the engine: {why}"),
                None => format!("its plan cannot be sent to the engine: {why}"),
            }
        })
    }

    async fn execute(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &SessionConfig,
    ) -> DfResult<SendableRecordBatchStream> {
        let schema = plan.schema();
        let stream = execute_physical_plan::<PhysicalPlanNode>(
            self.scheduler.clone(),
            &BallistaConfig::default(),
            plan,
            &self.codec,
            self.session_id.clone(),
            config.clone(),
        )
        .await
        .map_err(|e| self.failed(e))?;
        let url = self.url.clone();
        let named = stream
            .map_err(move |source| DataFusionError::External(Box::new(Error::Failed { url: url.clone(), source })));
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, named.boxed())))
    }
}
