//! The bridge as an MCP surface (rmcp): the harness tools (`execute_task`,
//! `route_gateway`, `evaluate_hook`), the registry tools (`register_flow`,
//! `get_bpmn_process`, `get_flow_annotations`) and the engine tool (`run_process`) on one
//! server, and [`McpControlPoints`], the client side an engine calls. [`InProcessBridge`]
//! connects the two over an in-memory duplex stream, so the native engine can reach the
//! harness through MCP as an engine in another process does (`--bridge mcp`); by default
//! it calls the harness directly ([`RegisteredControlPoints`]).
//!
//! # The model summary of a context
//! A harness tool's `ctx.model` may be left out (or `null`) while the run's live topology
//! is still the registered process: the server then gives the harness the summary of the
//! process registered under `ctx.process_key` ([`ModelSummary::of`]), computed once at
//! registration. The in-process bridge's client leaves it out in that case, so a call
//! does not carry the whole model; once a hook has changed the topology, every context
//! carries its summary. An empty summary keeps its meaning: the harness falls back on the
//! app's model.

pub mod http;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::{Json, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::bpmn::Process;
use crate::bridge::run::{EngineError, Resume, RunOutcome, RunRequest, WorkflowEngine};
use crate::bridge::{
    Answer, BoxFuture, ControlPointContext, ControlPointError, ControlPoints, FlowAnnotations,
    GatewayDecision, HISTORY_WINDOW, HookDecision, ModelSummary, TaskOutcome,
};
use crate::journal::EventSink;
use crate::journal::event::CatchKind;
use crate::journal::mailbox::{self, Delivery};
use crate::vocab::{ControlPointKind, RunStatus, Untrusted};

/// One app known to the bridge.
pub struct RegisteredFlow {
    pub process_key: String,
    pub process: Arc<Process>,
    pub annotations: FlowAnnotations,
    /// The app's harness: answers its control points.
    pub harness: Arc<dyn ControlPoints>,
}

/// An error of the host's own (a flow that could not be loaded, a journal that could not
/// be opened), its causes kept.
pub type HostError = Box<dyn std::error::Error + Send + Sync>;

/// Builds a registered flow from a flow config path (for `register_flow`).
pub type FlowLoader = Arc<dyn Fn(&str) -> Result<RegisteredFlow, HostError> + Send + Sync>;

/// Opens the journal of a `run_process` call that has no sink attached (a client of a
/// served bridge starts the run): the sink for the run, or why the run cannot start
/// (an unusable run id, a run id that already has a journal...).
pub type JournalFactory =
    Arc<dyn Fn(&RunProcessArgs) -> Result<Arc<dyn EventSink>, HostError> + Send + Sync>;

/// Why the bridge cannot do what a tool call or its host asks.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error("unknown process key `{key}` (registered: {})", .known.join(", "))]
    UnknownProcess { key: String, known: Vec<String> },
    /// This bridge was not set up for it: what it does not do.
    #[error("{0}")]
    NotSetUp(&'static str),
    #[error("the journal of run `{0}` does not start with `run_started`")]
    NoStart(String),
    #[error("run `{0}` has no journal attached")]
    NoJournal(String),
    /// The host could not load a flow or open a run's journal.
    #[error(transparent)]
    Host(HostError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The run's task on its thread panicked or was stopped.
    #[error("the run's task failed")]
    Task(#[source] tokio::task::JoinError),
    #[error(transparent)]
    Delivery(#[from] mailbox::DeliveryError),
    #[error("cannot connect to the bridge")]
    Connect(#[source] Box<rmcp::service::ClientInitializeError>),
    /// A control point could not be answered: sent to the engine as the error's JSON, so
    /// that it gets back the element, the model calls made and a parked question.
    #[error("{}", serde_json::to_string(.0).unwrap_or_else(|_| .0.message.clone()))]
    ControlPoint(ControlPointError),
    #[error("the process cannot be shown as JSON")]
    Json(#[from] serde_json::Error),
    /// A delivery nobody takes, or one asked for wrongly: nothing was written.
    #[error("{0}")]
    Undelivered(String),
}

/// A tool call's error, for its caller: the message with its causes.
impl rmcp::model::IntoContents for BridgeError {
    fn into_contents(self) -> Vec<ContentBlock> {
        vec![ContentBlock::text(crate::diag::chain(&self))]
    }
}

/// A tool call's error as its caller reads it: the message with its causes.
impl From<BridgeError> for String {
    fn from(e: BridgeError) -> String {
        crate::diag::chain(&e)
    }
}

/// How long a retried `run_process` waits for the run an earlier call started to end or
/// park.
const RETRY_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// The state behind the MCP server.
#[derive(Default)]
pub struct Registry {
    flows: RwLock<BTreeMap<String, Registered>>,
    /// Event sinks of runs started in this process, by run id.
    sinks: RwLock<BTreeMap<String, Arc<dyn EventSink>>>,
    /// Journals of runs to resume rather than start, by run id.
    resumes: RwLock<BTreeMap<String, Arc<Resume>>>,
    /// Who runs the child runs of runs started in this process, by run id.
    children: RwLock<BTreeMap<String, Arc<dyn crate::bridge::child::ChildRuns>>>,
    /// Where the engine shows what a run waits for, by run id (`start`: a Ctrl-C parks
    /// the run with it).
    awaiting: RwLock<BTreeMap<String, Arc<crate::bridge::run::Awaiting>>>,
}

/// A registered flow and the summary of its process, computed once.
#[derive(Clone)]
struct Registered {
    flow: Arc<RegisteredFlow>,
    model: Arc<ModelSummary>,
}

impl Registry {
    pub fn register(&self, flow: RegisteredFlow) -> String {
        let key = flow.process_key.clone();
        let model = Arc::new(ModelSummary::of(&flow.process));
        if let Ok(mut flows) = self.flows.write() {
            let flow = Arc::new(flow);
            flows.insert(key.clone(), Registered { flow, model });
        }
        key
    }

    pub fn flow(&self, process_key: &str) -> Result<Arc<RegisteredFlow>, BridgeError> {
        self.registered(process_key).map(|r| r.flow)
    }

    /// The flow that answers a harness tool's call, and the call's context with its model
    /// summary restored when it was left out.
    fn answering(
        &self,
        mut ctx: ControlPointContext,
    ) -> Result<(Arc<RegisteredFlow>, ControlPointContext), BridgeError> {
        let registered = self.registered(&ctx.process_key)?;
        if ctx.model.is_none() {
            ctx.model = Some(registered.model);
        }
        Ok((registered.flow, ctx))
    }

    fn registered(&self, process_key: &str) -> Result<Registered, BridgeError> {
        let flows = self
            .flows
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        flows
            .get(process_key)
            .cloned()
            .ok_or_else(|| BridgeError::UnknownProcess {
                key: process_key.to_string(),
                known: flows.keys().cloned().collect(),
            })
    }

    /// Route the events of run `run_id` to `sink` (before calling `run_process`).
    pub fn attach_sink(&self, run_id: &str, sink: Arc<dyn EventSink>) {
        if let Ok(mut sinks) = self.sinks.write() {
            sinks.insert(run_id.to_string(), sink);
        }
    }

    fn take_sink(&self, run_id: &str) -> Option<Arc<dyn EventSink>> {
        self.sinks.write().ok()?.remove(run_id)
    }

    /// Make the next `run_process` of `run_id` continue the run from its journal
    /// (`runs resume`), with the sink attached for it.
    pub fn attach_resume(&self, run_id: &str, resume: Arc<Resume>) {
        if let Ok(mut resumes) = self.resumes.write() {
            resumes.insert(run_id.to_string(), resume);
        }
    }

    fn take_resume(&self, run_id: &str) -> Option<Arc<Resume>> {
        self.resumes.write().ok()?.remove(run_id)
    }

    /// Make the next `run_process` of `run_id` run its call activities' processes as
    /// child runs through `children` (`start`, whatever the engine).
    pub fn attach_children(
        &self,
        run_id: &str,
        children: Arc<dyn crate::bridge::child::ChildRuns>,
    ) {
        if let Ok(mut all) = self.children.write() {
            all.insert(run_id.to_string(), children);
        }
    }

    fn take_children(&self, run_id: &str) -> Option<Arc<dyn crate::bridge::child::ChildRuns>> {
        self.children.write().ok()?.remove(run_id)
    }

    /// Make the next `run_process` of `run_id` show in `awaiting` what the run waits for
    /// ([`RunRequest::awaiting`]), as a run started directly does (`start --bridge mcp`).
    pub fn attach_awaiting(&self, run_id: &str, awaiting: Arc<crate::bridge::run::Awaiting>) {
        if let Ok(mut all) = self.awaiting.write() {
            all.insert(run_id.to_string(), awaiting);
        }
    }

    fn take_awaiting(&self, run_id: &str) -> Option<Arc<crate::bridge::run::Awaiting>> {
        self.awaiting.write().ok()?.remove(run_id)
    }
}

/// A server's hold on the runs it started that park (`cuga-flo serve`): it keeps their
/// journals (and locks), resumes each in-process when it can go on (its timer is due, a
/// message or signal was delivered to it, the child run it waits for ended), and takes
/// the deliveries to them.
pub trait Parking: Send + Sync {
    /// Run `run_id` has parked (its journal ends with `run_waiting`): resolves once it can
    /// go on, with the records to resume it from; `None` when it stays parked here for
    /// good (the server stops, or the run was ended meanwhile).
    fn until_due(&self, run_id: &str) -> BoxFuture<'static, Option<Vec<crate::journal::Record>>>;

    /// Journal `delivery` to run `run_id` when this server holds it (and wake it); `None`
    /// when it does not hold the run.
    fn deliver(
        &self,
        run_id: &str,
        delivery: &Delivery,
    ) -> Option<Result<Vec<crate::journal::Record>, mailbox::DeliveryError>>;
}

/// How a run that parked goes on: its journal's first record gives its initial variables
/// and their provenance; the request continues it from `records` ([`Resume`]).
pub fn resumed_request(
    run_id: &str,
    process_key: &str,
    process: Arc<Process>,
    annotations: FlowAnnotations,
    records: Vec<crate::journal::Record>,
) -> Result<RunRequest, BridgeError> {
    let Some(crate::journal::Event::RunStarted {
        variables,
        untrusted,
        ..
    }) = records.first().map(|r| r.event.clone())
    else {
        return Err(BridgeError::NoStart(run_id.to_string()));
    };
    let mut request = RunRequest::new(
        run_id.to_string(),
        process_key.to_string(),
        process,
        annotations,
        variables,
        Some(Arc::new(Resume { records })),
    );
    request.untrusted = untrusted;
    Ok(request)
}

/// A parked run a server holds: what resuming it takes.
pub struct Parked {
    pub run_id: String,
    pub process_key: String,
    pub process: Arc<Process>,
    pub annotations: FlowAnnotations,
    /// Its journal, open here (its lock held).
    pub sink: Arc<dyn EventSink>,
    pub children: Option<Arc<dyn crate::bridge::child::ChildRuns>>,
}

/// Hold `parked` with `parking` and resume it with `run` each time it can go on (journalling
/// `run_resumed` first), until it ends, fails, or stays parked for good (the server stops).
/// What every server that keeps its parked runs does with them: `run_process`'s runs, and
/// the runs a server adopts.
pub async fn keep_parked<F, Fut>(parking: Arc<dyn Parking>, parked: Parked, run: F)
where
    F: Fn(RunRequest, Arc<dyn EventSink>) -> Fut,
    Fut: std::future::Future<Output = Result<RunOutcome, BridgeError>>,
{
    let Parked {
        run_id,
        process_key,
        process,
        annotations,
        sink,
        children,
    } = parked;
    loop {
        let Some(records) = parking.until_due(&run_id).await else {
            return;
        };
        let resumed = crate::journal::Event::RunResumed {
            from_seq: records.len() as u64,
            repaired: None,
        };
        if let Err(e) = sink.emit(resumed).and_then(|_| sink.commit()) {
            tracing::error!("run {run_id}: cannot resume it: {e}");
            return;
        }
        let request = resumed_request(
            &run_id,
            &process_key,
            process.clone(),
            annotations.clone(),
            records,
        );
        let outcome = match request {
            Ok(mut request) => {
                request.children = children.clone();
                run(request, sink.clone()).await
            }
            Err(e) => Err(e),
        };
        match outcome {
            Ok(o) if o.status == RunStatus::Waiting => {
                tracing::info!("run {run_id}: parked again");
            }
            Ok(o) => {
                tracing::info!("run {run_id}: {}", o.status.as_str());
                return;
            }
            Err(e) => {
                let e = crate::diag::chain(&e);
                tracing::error!("run {run_id}: resumed, it stopped: {e}");
                return;
            }
        }
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExecuteTaskArgs {
    /// The BPMN task id.
    pub task_id: String,
    pub ctx: ControlPointContext,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RouteGatewayArgs {
    /// The BPMN gateway id.
    pub gateway_id: String,
    pub ctx: ControlPointContext,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EvaluateHookArgs {
    /// The hook id (for Flowable and Kogito apps, the sequence flow id).
    pub hook_id: String,
    pub ctx: ControlPointContext,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ProcessKeyArgs {
    pub process_key: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RegisterFlowArgs {
    /// Path of a flow config (`<app>_config.yaml`) or of an app folder.
    pub flow_config_path: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RegisterFlowResult {
    pub process_key: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BpmnProcessResult {
    pub process_key: String,
    /// The parsed model: nodes (with kind, parent sub-process, default flow), flows (with
    /// conditions), lanes and properties.
    pub process: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunProcessArgs {
    pub process_key: String,
    /// The run's id (unique per run; events are journalled under it).
    pub run_id: String,
    /// Initial process variables.
    #[serde(default)]
    pub variables: Map<String, Value>,
    /// Which of `variables` are untrusted, and where each came from. Left out: those that
    /// differ from their declared default (or have none) are untrusted run inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted: Option<Untrusted>,
    /// Where an external engine reaches the harness and registry tools for this run
    /// (cuga-flo's own engine ignores it: it is called back in-process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<BridgeEndpoint>,
    /// Take over this instance of the engine, started outside cuga-flo, instead of
    /// starting one ([`RunRequest::adopt`]; an engine that cannot refuses the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt: Option<String>,
    /// Park the run instead of failing it when the engine stops answering
    /// ([`RunRequest::lost_parks`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost_parks: bool,
}

/// An MCP endpoint serving the harness and registry tools (streamable HTTP).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct BridgeEndpoint {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The bearer token the endpoint requires, when it requires one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DeliverMessageArgs {
    /// The message's name (the BPMN `<message>`'s `name`).
    pub message: String,
    /// The parked run to deliver it to; or leave it out and give `correlate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Find the run by a variable's value instead (exactly one parked run must hold it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlate: Option<Correlation>,
    /// The message's correlation key value (the model's, e.g. Camunda 8's
    /// `zeebe:subscription correlationKey`): alone, every parked run with a wait for the
    /// message under that key receives it; with `run_id`, only that run's wait under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Variables the message sets in the run (untrusted, like every run input).
    #[serde(default)]
    pub variables: Map<String, Value>,
    /// Your id for this delivery (an idempotency key): the same delivery sent again (a
    /// retry after a lost reply) is not journalled again; the first one's result is given.
    #[serde(default)]
    pub delivery_id: Option<String>,
}

/// A variable and the value a run must hold in it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Correlation {
    pub name: String,
    pub value: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SendSignalArgs {
    /// The signal's name (the BPMN `<signal>`'s `name`).
    pub signal: String,
    /// Variables the signal sets in each run (untrusted, like every run input).
    #[serde(default)]
    pub variables: Map<String, Value>,
    /// Your id for this delivery (an idempotency key): the same signal sent again (a retry
    /// after a lost reply) is not journalled again in a run that took it.
    #[serde(default)]
    pub delivery_id: Option<String>,
}

/// The runs a message or signal was journalled for, and the elements that receive it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct DeliveryResult {
    pub delivered: Vec<DeliveredTo>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct DeliveredTo {
    pub run_id: String,
    pub nodes: Vec<String>,
}

/// A delivery sent again (its `delivery_id` already journalled by some run, which may
/// have moved on or finished since): what it was delivered to then, and nothing more is
/// delivered. `None`: no id, or nothing took it yet.
fn already_taken(dir: &RunDir, id: Option<&str>) -> Option<DeliveryResult> {
    let taken = mailbox::taken(&dir.base, id?);
    if taken.is_empty() {
        return None;
    }
    Some(DeliveryResult {
        delivered: (taken.into_iter())
            .map(|(run, records)| DeliveredTo::of(run, &records))
            .collect(),
    })
}

/// Where `deliver_message` and `send_signal` find parked runs.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub base: std::path::PathBuf,
    pub durability: crate::journal::Durability,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RunProcessResult {
    pub run_id: String,
    pub status: RunStatus,
    pub message: Option<String>,
    pub variables: Map<String, Value>,
    pub steps: u64,
    pub path: Vec<String>,
    /// An engine that owns its tokens: its records not sent with a context yet
    /// ([`crate::bridge::EngineRecord`], docs/bridge.md §12.2). cuga-flo's own engines
    /// journal theirs themselves and send none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<crate::bridge::EngineRecord>,
}

/// The registry's flows as control points, called in-process through the bridge
/// contract (no transport): each call goes to the harness of the flow registered under
/// its context's process key, with the model summary restored when it was left out. The
/// harness tools answer a call that arrives over MCP through it, and `run_process`'s
/// engine calls it directly when the server is asked to
/// ([`BridgeServer::with_direct_callbacks`]).
#[derive(Clone)]
pub struct RegisteredControlPoints {
    registry: Arc<Registry>,
}

impl RegisteredControlPoints {
    pub fn new(registry: Arc<Registry>) -> Self {
        RegisteredControlPoints { registry }
    }

    fn answering(
        &self,
        element: &str,
        ctx: ControlPointContext,
    ) -> Result<(Arc<RegisteredFlow>, ControlPointContext), ControlPointError> {
        self.registry.answering(ctx).map_err(|e| ControlPointError {
            element: element.to_string(),
            message: e.into(),
            calls: Vec::new(),
            ..Default::default()
        })
    }
}

impl ControlPoints for RegisteredControlPoints {
    fn resuming(&self, records: &[crate::journal::Record]) {
        let key = records.first().and_then(|r| match &r.event {
            crate::journal::Event::RunStarted { process_key, .. } => Some(process_key),
            _ => None,
        });
        if let Some(flow) = key.and_then(|k| self.registry.flow(k).ok()) {
            flow.harness.resuming(records);
        }
    }

    fn answer(
        &self,
        kind: ControlPointKind,
        element: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
        let id = element.to_string();
        Box::pin(async move {
            let (flow, ctx) = self.answering(&id, ctx)?;
            flow.harness.answer(kind, &id, ctx).await
        })
    }

    fn restores_unchanged_model(&self) -> bool {
        true
    }
}

/// The control points of a [`BridgeServer`]'s engine, reached over its in-process MCP
/// client; a resumed run restores the registered harness directly, as the MCP tools carry
/// no journal.
struct OverMcp {
    mcp: Arc<dyn ControlPoints>,
    registered: RegisteredControlPoints,
}

impl ControlPoints for OverMcp {
    fn answer(
        &self,
        kind: ControlPointKind,
        element: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
        self.mcp.answer(kind, element, ctx)
    }

    fn restores_unchanged_model(&self) -> bool {
        self.mcp.restores_unchanged_model()
    }

    fn resuming(&self, records: &[crate::journal::Record]) {
        self.registered.resuming(records);
    }
}

/// The MCP server: every tool of the bridge.
#[derive(Clone)]
pub struct BridgeServer {
    registry: Arc<Registry>,
    engine: Arc<dyn WorkflowEngine>,
    loader: Option<FlowLoader>,
    /// Journals for runs started without an attached sink (none: such runs are refused).
    journals: Option<JournalFactory>,
    /// Where parked runs are journalled, for deliveries (none: they are refused).
    run_dir: Option<RunDir>,
    /// How engines started by `run_process` reach the control points over MCP (set once
    /// the in-process client is connected).
    engine_side: Arc<OnceLock<Arc<dyn ControlPoints>>>,
    /// `run_process`'s engine calls the registered harnesses directly
    /// ([`RegisteredControlPoints`]) instead of through the in-process MCP bridge.
    direct_callbacks: bool,
    /// Where `run_process` runs the runs: spread over the cores, or (`None`) in the
    /// calling task.
    cores: Option<Arc<crate::serving::Cores>>,
    /// Who holds the runs that park and resumes them (none: a parked run is left to
    /// `runs resume`).
    parking: Option<Arc<dyn Parking>>,
    /// How long a run waits in-process for a timer (`FlowAnnotations::max_wait_secs`).
    max_wait_secs: Option<u64>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl BridgeServer {
    pub fn new(
        registry: Arc<Registry>,
        engine: Arc<dyn WorkflowEngine>,
        loader: Option<FlowLoader>,
    ) -> Self {
        BridgeServer {
            registry,
            engine,
            loader,
            journals: None,
            run_dir: None,
            engine_side: Arc::new(OnceLock::new()),
            direct_callbacks: false,
            cores: None,
            parking: None,
            max_wait_secs: None,
            tool_router: portable_schemas(Self::tool_router()),
        }
    }

    /// Fulfil one BPMN task under its policy; returns the outcome and the variables it writes.
    #[tool(
        description = "Fulfil one BPMN task under its policy (TaskAgent). Returns the task's outputs and the process variables it writes."
    )]
    async fn execute_task(
        &self,
        Parameters(a): Parameters<ExecuteTaskArgs>,
    ) -> Result<Json<TaskOutcome>, BridgeError> {
        RegisteredControlPoints::new(self.registry.clone())
            .execute_task(&a.task_id, a.ctx)
            .await
            .map(Json)
            .map_err(BridgeError::ControlPoint)
    }

    #[tool(
        description = "Choose the outgoing flow(s) of a gateway (DecisionAgent): conditions first, a reasoner only when they are inconclusive."
    )]
    async fn route_gateway(
        &self,
        Parameters(a): Parameters<RouteGatewayArgs>,
    ) -> Result<Json<GatewayDecision>, BridgeError> {
        RegisteredControlPoints::new(self.registry.clone())
            .route_gateway(&a.gateway_id, a.ctx)
            .await
            .map(Json)
            .map_err(BridgeError::ControlPoint)
    }

    #[tool(
        description = "Evaluate the hook on a sequence flow (FlowAgent): the action to apply, already checked against the app's action_permissions."
    )]
    async fn evaluate_hook(
        &self,
        Parameters(a): Parameters<EvaluateHookArgs>,
    ) -> Result<Json<HookDecision>, BridgeError> {
        RegisteredControlPoints::new(self.registry.clone())
            .evaluate_hook(&a.hook_id, a.ctx)
            .await
            .map(Json)
            .map_err(BridgeError::ControlPoint)
    }

    #[tool(
        description = "Load an app from its flow config and register it; returns its process key."
    )]
    async fn register_flow(
        &self,
        Parameters(a): Parameters<RegisterFlowArgs>,
    ) -> Result<Json<RegisterFlowResult>, BridgeError> {
        let loader = self
            .loader
            .as_ref()
            .ok_or(BridgeError::NotSetUp("this bridge does not load flows"))?;
        let flow = loader(&a.flow_config_path).map_err(BridgeError::Host)?;
        Ok(Json(RegisterFlowResult {
            process_key: self.registry.register(flow),
        }))
    }

    #[tool(description = "The parsed BPMN process of a registered flow.")]
    async fn get_bpmn_process(
        &self,
        Parameters(a): Parameters<ProcessKeyArgs>,
    ) -> Result<Json<BpmnProcessResult>, BridgeError> {
        let flow = self.registry.flow(&a.process_key)?;
        let process = serde_json::to_value(flow.process.as_ref())?;
        Ok(Json(BpmnProcessResult {
            process_key: a.process_key,
            process,
        }))
    }

    #[tool(
        description = "What an engine needs beyond the model: hooked flows, agentic tasks, decision gateways, the step budget."
    )]
    async fn get_flow_annotations(
        &self,
        Parameters(a): Parameters<ProcessKeyArgs>,
    ) -> Result<Json<FlowAnnotations>, BridgeError> {
        Ok(Json(
            self.registry.flow(&a.process_key)?.annotations.clone(),
        ))
    }

    #[tool(
        description = "Run a registered process to its end on this bridge's engine; control points are called back through this bridge."
    )]
    async fn run_process(
        &self,
        Parameters(a): Parameters<RunProcessArgs>,
        ctx: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<Json<RunProcessResult>, BridgeError> {
        // The caller's trace context (an HTTP `traceparent` header, or MCP's
        // `_meta.traceparent`): the run joins the caller's trace.
        if let Some(t) = crate::telemetry::active() {
            let header = (ctx.extensions.get::<axum::http::request::Parts>())
                .and_then(|p| p.headers.get("traceparent"))
                .and_then(|v| v.to_str().ok())
                .and_then(crate::telemetry::TraceParent::parse);
            let meta = (ctx.meta.get("traceparent"))
                .and_then(Value::as_str)
                .and_then(crate::telemetry::TraceParent::parse);
            if let Some(tp) = header.or(meta) {
                t.inbound(&a.run_id, tp);
            }
        }
        if a.adopt.is_some() && self.engine.name() != "flowable" {
            return Err(BridgeError::NotSetUp(
                "taking over an instance started outside cuga-flo (only Flowable can)",
            ));
        }
        let flow = self.registry.flow(&a.process_key)?;
        let control_points = self.engine_control_points()?;
        let sink = match (self.registry.take_sink(&a.run_id), &self.journals) {
            (Some(sink), _) => sink,
            (None, Some(open)) => {
                // A retry of a call whose answer was lost: the run it started answers it,
                // never a second run and never a refusal.
                if let Some(done) = self.started_already(&a.run_id).await? {
                    return Ok(Json(done));
                }
                open(&a).map_err(BridgeError::Host)?
            }
            (None, None) => return Err(BridgeError::NoJournal(a.run_id)),
        };
        let mut annotations = flow.annotations.clone();
        if self.max_wait_secs.is_some() {
            annotations.max_wait_secs = self.max_wait_secs;
        }
        let mut request = RunRequest::new(
            a.run_id.clone(),
            a.process_key.clone(),
            flow.process.clone(),
            annotations.clone(),
            a.variables,
            self.registry.take_resume(&a.run_id),
        );
        if a.untrusted.is_some() {
            request.untrusted = a.untrusted;
        }
        request.children = self.registry.take_children(&a.run_id);
        request.awaiting = self.registry.take_awaiting(&a.run_id);
        request.adopt = a.adopt;
        request.lost_parks = a.lost_parks;
        let children = request.children.clone();
        let outcome = self
            .run_here(request, control_points.clone(), sink.clone())
            .await?;
        // A run that parks stays this server's: it goes on here when it can.
        if outcome.status == RunStatus::Waiting
            && let Some(parking) = self.parking.clone()
        {
            let server = self.clone();
            let parked = Parked {
                run_id: a.run_id.clone(),
                process_key: a.process_key,
                process: flow.process.clone(),
                annotations,
                sink: sink.clone(),
                children,
            };
            tokio::spawn(keep_parked(parking, parked, move |request, sink| {
                let (server, control_points) = (server.clone(), control_points.clone());
                async move { server.run_here(request, control_points, sink).await }
            }));
        }
        Ok(Json(RunProcessResult::of(a.run_id, outcome)))
    }

    #[tool(
        description = "Deliver a message to a run waiting for it (by run_id, or by a variable's value with correlate), or with key alone to every run waiting for it under that correlation key. It is journalled in the run's journal; a run this server started goes on here at once, any other when resumed (`cuga-flo worker`, `runs resume --due`). A run not waiting for it is refused and nothing is written."
    )]
    async fn deliver_message(
        &self,
        Parameters(a): Parameters<DeliverMessageArgs>,
    ) -> Result<Json<DeliveryResult>, BridgeError> {
        let dir = self.deliveries()?;
        if let Some(done) = already_taken(dir, a.delivery_id.as_deref()) {
            return Ok(Json(done));
        }
        let delivery = Delivery {
            id: a.delivery_id.clone(),
            kind: CatchKind::Message,
            name: a.message.clone(),
            variables: a.variables.clone(),
            source: "from the bridge's `deliver_message`".to_string(),
            correlation: a.key.clone(),
        };
        if let (Some(key), None, None) = (&a.key, &a.run_id, &a.correlate) {
            let runs = mailbox::waiting_runs(&dir.base, &delivery);
            if runs.is_empty() {
                return Err(BridgeError::Undelivered(format!(
                    "no waiting run waits for message `{}` with correlation key {key:?}",
                    a.message
                )));
            }
            let delivered = self.deliver_to_each(dir, runs, &delivery);
            return Ok(Json(DeliveryResult { delivered }));
        }
        let run = match (&a.run_id, &a.correlate) {
            (Some(run), None) => run.clone(),
            (None, Some(c)) => {
                let value = match &c.value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                match mailbox::correlated(&dir.base, &c.name, &value).as_slice() {
                    [one] => one.clone(),
                    [] => {
                        return Err(BridgeError::Undelivered(format!(
                            "no waiting run has `{}` = {value}",
                            c.name
                        )));
                    }
                    many => {
                        return Err(BridgeError::Undelivered(format!(
                            "{} waiting runs have `{}` = {value}: {}; give run_id",
                            many.len(),
                            c.name,
                            many.join(", ")
                        )));
                    }
                }
            }
            _ => {
                return Err(BridgeError::Undelivered(
                    "give either run_id or correlate (or key alone)".to_string(),
                ));
            }
        };
        let written = self.deliver_one(dir, &run, &delivery)?;
        Ok(Json(DeliveryResult {
            delivered: vec![DeliveredTo::of(run, &written)],
        }))
    }

    #[tool(
        description = "Deliver a signal to every run waiting for it. It is journalled in each run's journal; a run this server started goes on here at once, any other when resumed (`cuga-flo worker`, `runs resume --due`)."
    )]
    async fn send_signal(
        &self,
        Parameters(a): Parameters<SendSignalArgs>,
    ) -> Result<Json<DeliveryResult>, BridgeError> {
        let dir = self.deliveries()?;
        if let Some(done) = already_taken(dir, a.delivery_id.as_deref()) {
            return Ok(Json(done));
        }
        let delivery = Delivery {
            id: a.delivery_id.clone(),
            kind: CatchKind::Signal,
            name: a.signal,
            variables: a.variables,
            source: "from the bridge's `send_signal`".to_string(),
            correlation: None,
        };
        let runs = mailbox::waiting_runs(&dir.base, &delivery);
        let delivered = self.deliver_to_each(dir, runs, &delivery);
        if delivered.is_empty() {
            return Err(BridgeError::Undelivered(format!(
                "no waiting run waits for signal `{}`",
                delivery.name
            )));
        }
        Ok(Json(DeliveryResult { delivered }))
    }
}

impl DeliveredTo {
    fn of(run_id: String, written: &[crate::journal::Record]) -> DeliveredTo {
        DeliveredTo {
            run_id,
            nodes: written
                .iter()
                .filter_map(|r| match &r.event {
                    crate::journal::Event::MessageReceived { node, .. } => Some(node.clone()),
                    _ => None,
                })
                .collect(),
        }
    }
}

impl RunProcessResult {
    /// What `run_process` answers for run `run_id` that ended as `outcome`.
    pub fn of(run_id: String, outcome: RunOutcome) -> RunProcessResult {
        RunProcessResult {
            run_id,
            status: outcome.status,
            message: outcome.message,
            variables: outcome.variables,
            steps: outcome.steps,
            path: outcome.path,
            records: Vec::new(),
        }
    }
}

impl BridgeServer {
    /// Journal the runs that `run_process` starts without an attached sink with
    /// `factory`, instead of refusing them (`cuga-flo serve`).
    pub fn with_journals(mut self, factory: JournalFactory) -> Self {
        self.journals = Some(factory);
        self
    }

    /// Have the engine `run_process` starts call the registered harnesses directly,
    /// through the bridge contract ([`RegisteredControlPoints`]), instead of back through
    /// the in-process MCP bridge as an engine in another process would (`cuga-flo serve`
    /// unless `--bridge mcp`). What the harness sees is the same, except that a direct
    /// call's history is not cut to the MCP window.
    pub fn with_direct_callbacks(mut self) -> Self {
        self.direct_callbacks = true;
        self
    }

    /// Run each `run_process` run on one of `cores`' threads, where it stays
    /// ([`crate::serving::Cores`]), instead of in the tool call's own task (`cuga-flo serve`).
    pub fn with_cores(mut self, cores: Arc<crate::serving::Cores>) -> Self {
        self.cores = Some(cores);
        self
    }

    /// Let `deliver_message` and `send_signal` journal deliveries to the parked runs
    /// under `dir` (`cuga-flo serve`).
    pub fn with_run_dir(mut self, dir: RunDir) -> Self {
        self.run_dir = Some(dir);
        self
    }

    /// Hold the runs `run_process` starts that park, and resume them here when they can
    /// go on (`cuga-flo serve`).
    /// How an engine `run_process` starts reaches the control points: the registered
    /// harnesses directly, or through the in-process MCP client (whose resumed runs still
    /// restore the harness here: [`OverMcp`]).
    fn engine_control_points(&self) -> Result<Arc<dyn ControlPoints>, BridgeError> {
        let registered = RegisteredControlPoints::new(self.registry.clone());
        if self.direct_callbacks {
            return Ok(Arc::new(registered));
        }
        let mcp = self
            .engine_side
            .get()
            .cloned()
            .ok_or(BridgeError::NotSetUp(
                "the bridge has no client for engines yet",
            ))?;
        Ok(Arc::new(OverMcp { mcp, registered }))
    }

    pub fn with_parking(mut self, parking: Arc<dyn Parking>) -> Self {
        self.parking = Some(parking);
        self
    }

    /// Wait in-process for a timer due within `secs` seconds; a later one parks the run
    /// (`serve --max-wait`; default: the engine's).
    pub fn with_max_wait(mut self, secs: Option<u64>) -> Self {
        self.max_wait_secs = secs;
        self
    }

    /// Take over run `run_id` of `process_key`, parked, whose journal `sink` this server
    /// has just opened (`serve` adopting a run the server that held it left parked): held
    /// here and resumed here when it can go on, as a run `run_process` started that parked.
    /// Refused when the process is not registered or the server holds no waiting runs.
    pub fn adopt_parked(
        &self,
        run_id: &str,
        process_key: &str,
        sink: Arc<dyn EventSink>,
    ) -> Result<(), BridgeError> {
        let flow = self.registry.flow(process_key)?;
        let parking = (self.parking.clone())
            .ok_or(BridgeError::NotSetUp("this server holds no waiting runs"))?;
        let control_points = self.engine_control_points()?;
        let mut annotations = flow.annotations.clone();
        if self.max_wait_secs.is_some() {
            annotations.max_wait_secs = self.max_wait_secs;
        }
        let parked = Parked {
            run_id: run_id.to_string(),
            process_key: process_key.to_string(),
            process: flow.process.clone(),
            annotations,
            sink,
            children: None,
        };
        let server = self.clone();
        tokio::spawn(keep_parked(parking, parked, move |request, sink| {
            let (server, control_points) = (server.clone(), control_points.clone());
            async move { server.run_here(request, control_points, sink).await }
        }));
        Ok(())
    }

    /// Run `request` on this server's engine: on one of the cores, or here.
    async fn run_here(
        &self,
        request: RunRequest,
        control_points: Arc<dyn ControlPoints>,
        sink: Arc<dyn EventSink>,
    ) -> Result<RunOutcome, BridgeError> {
        let run = self.engine.run(request, control_points, sink);
        Ok(match &self.cores {
            Some(cores) => cores.spawn(run).await.map_err(BridgeError::Task)?,
            None => run.await,
        }?)
    }

    /// Journal `delivery` to run `run`: through this server when it holds the run, else
    /// under the run's lock (or posted to the server that holds it).
    fn deliver_one(
        &self,
        dir: &RunDir,
        run: &str,
        delivery: &Delivery,
    ) -> Result<Vec<crate::journal::Record>, mailbox::DeliveryError> {
        if let Some(held) = (self.parking.as_ref()).and_then(|p| p.deliver(run, delivery)) {
            return held;
        }
        mailbox::deliver_to_run(&dir.base, run, delivery, dir.durability)
    }

    /// [`BridgeServer::deliver_one`] to each of `runs`; a run another process is running,
    /// or that moved on meanwhile, is left out (logged).
    fn deliver_to_each(
        &self,
        dir: &RunDir,
        runs: Vec<String>,
        delivery: &Delivery,
    ) -> Vec<DeliveredTo> {
        let mut delivered = Vec::new();
        for run in runs {
            match self.deliver_one(dir, &run, delivery) {
                Ok(written) => delivered.push(DeliveredTo::of(run, &written)),
                Err(e) => tracing::warn!(
                    "{} `{}` to run {run}: {e}",
                    delivery.kind.as_str(),
                    delivery.name
                ),
            }
        }
        delivered
    }

    /// The end of run `run_id` when a `run_process` call started it already (its journal
    /// is under the run dir): its result once it has ended or parked, waited for while it
    /// goes on (at most [`RETRY_WAIT`]). `None`: no run has that id yet.
    async fn started_already(&self, run_id: &str) -> Result<Option<RunProcessResult>, BridgeError> {
        let Some(dir) = &self.run_dir else {
            return Ok(None);
        };
        let path = crate::journal::store::run_dir(&dir.base, run_id)
            .join(crate::journal::store::JOURNAL_FILE);
        if crate::journal::store::check_run_id(run_id).is_err() || !path.is_file() {
            return Ok(None);
        }
        let waited = std::time::Instant::now();
        loop {
            let state = crate::journal::store::read_journal(&path)
                .map(|r| crate::journal::FlowState::fold(r.records.iter()))
                .ok();
            if let Some(state) = state.filter(|s| s.status.is_some() || s.waiting.is_some()) {
                return Ok(Some(RunProcessResult {
                    run_id: run_id.to_string(),
                    status: state.status.unwrap_or(RunStatus::Waiting),
                    message: state.message,
                    variables: state.process_variables,
                    steps: state.steps,
                    path: state.execution_path,
                    records: Vec::new(),
                }));
            }
            if waited.elapsed() > RETRY_WAIT {
                return Err(BridgeError::Undelivered(format!(
                    "run `{run_id}` was started by an earlier call and has not ended: \
                     `cuga-flo runs show {run_id}` says where it stands"
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    fn deliveries(&self) -> Result<&RunDir, BridgeError> {
        self.run_dir.as_ref().ok_or(BridgeError::NotSetUp(
            "this bridge delivers no messages: it journals no runs",
        ))
    }
}

/// The tools' schemas as any JSON Schema validator reads them: schemars marks Rust's
/// integer widths with formats of its own (`uint32`, `uint64`, `int64`, `double`…), which
/// are not JSON Schema formats. Validators in strict mode (Ajv, which the official MCP
/// TypeScript SDK runs on every tool result) warn about or refuse them; the bounds that
/// matter stay as `minimum`/`maximum`.
fn portable_schemas<S>(mut router: ToolRouter<S>) -> ToolRouter<S> {
    for route in router.map.values_mut() {
        let tool = &mut route.attr;
        strip_width_formats(Arc::make_mut(&mut tool.input_schema));
        if let Some(output) = tool.output_schema.as_mut() {
            strip_width_formats(Arc::make_mut(output));
        }
    }
    router
}

/// Removes schemars's numeric width formats from a schema object and everything in it.
fn strip_width_formats(schema: &mut Map<String, Value>) {
    const WIDTHS: &[&str] = &[
        "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32", "uint64",
        "uint128", "float", "double",
    ];
    if schema
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| WIDTHS.contains(&f))
    {
        schema.remove("format");
    }
    for value in schema.values_mut() {
        strip_width_formats_in(value);
    }
}

fn strip_width_formats_in(value: &mut Value) {
    match value {
        Value::Object(map) => strip_width_formats(map),
        Value::Array(items) => items.iter_mut().for_each(strip_width_formats_in),
        _ => {}
    }
}

#[tool_handler(router = self.tool_router, name = "cuga-flo-bridge", instructions = "Control points of governed BPMN processes: tasks, gateways and hooks, plus the process registry and the engine.")]
impl ServerHandler for BridgeServer {}

/// The engine's side of the bridge: each control point is an MCP tool call.
#[derive(Clone)]
pub struct McpControlPoints {
    peer: Peer<RoleClient>,
    /// The server is a [`BridgeServer`], which restores a model summary left out.
    server_restores_model: bool,
}

impl McpControlPoints {
    /// Control points served by any MCP server with the bridge's tools: every context
    /// carries its model summary.
    pub fn new(peer: Peer<RoleClient>) -> Self {
        McpControlPoints {
            peer,
            server_restores_model: false,
        }
    }

    /// Control points served by a [`BridgeServer`]: contexts leave the model summary out
    /// while the live topology is unchanged (see the module documentation).
    fn of_bridge_server(peer: Peer<RoleClient>) -> Self {
        McpControlPoints {
            peer,
            server_restores_model: true,
        }
    }

    async fn call<A: Serialize, T: DeserializeOwned>(
        &self,
        tool: &'static str,
        element: &str,
        args: &A,
    ) -> Result<T, ControlPointError> {
        let error = |message: String| ControlPointError {
            element: element.to_string(),
            message,
            calls: Vec::new(),
            ..Default::default()
        };
        let arguments = match serde_json::to_value(args) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(error("tool arguments must be an object".into())),
            Err(e) => return Err(error(e.to_string())),
        };
        let result = self
            .peer
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
            .await
            .map_err(|e| error(format!("`{tool}` over MCP failed: {e}")))?;
        if result.is_error == Some(true) {
            let text = text_of(&result.content);
            // A harness error is a ControlPointError as JSON; other errors are plain text.
            return Err(
                serde_json::from_str::<ControlPointError>(&text).unwrap_or_else(|_| error(text))
            );
        }
        let value = result
            .structured_content
            .ok_or_else(|| error(format!("`{tool}` returned no structured content")))?;
        serde_json::from_value(value)
            .map_err(|e| error(format!("`{tool}` returned an invalid answer: {e}")))
    }

    /// Call `run_process` (used by the CLI; engines started elsewhere implement it too).
    pub async fn run_process(
        &self,
        args: &RunProcessArgs,
    ) -> Result<RunProcessResult, ControlPointError> {
        self.call("run_process", &args.process_key, args).await
    }
}

/// A control-point error as a tool error's text: its JSON (element, message and the
/// model calls made before it), so an engine can journal the calls.
fn text_of(content: &[ContentBlock]) -> String {
    let texts: Vec<String> = content
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .filter_map(|v| v.get("text").and_then(Value::as_str).map(str::to_string))
        .collect();
    if texts.is_empty() {
        "tool error".to_string()
    } else {
        texts.join("\n")
    }
}

impl ControlPoints for McpControlPoints {
    fn answer(
        &self,
        kind: ControlPointKind,
        element: &str,
        mut ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
        ctx.window_history(HISTORY_WINDOW);
        let id = element.to_string();
        Box::pin(async move {
            Ok(match kind {
                ControlPointKind::Task => {
                    let args = ExecuteTaskArgs { task_id: id, ctx };
                    Answer::Task(self.call("execute_task", &args.task_id, &args).await?)
                }
                ControlPointKind::Gateway => {
                    let args = RouteGatewayArgs {
                        gateway_id: id,
                        ctx,
                    };
                    Answer::Gateway(self.call("route_gateway", &args.gateway_id, &args).await?)
                }
                ControlPointKind::Hook => {
                    let args = EvaluateHookArgs { hook_id: id, ctx };
                    Answer::Hook(self.call("evaluate_hook", &args.hook_id, &args).await?)
                }
            })
        })
    }

    fn restores_unchanged_model(&self) -> bool {
        self.server_restores_model
    }
}

/// A bridge server and a client connected in memory.
pub struct InProcessBridge {
    client: RunningService<RoleClient, ()>,
    server: tokio::task::JoinHandle<()>,
}

impl InProcessBridge {
    /// Start `server` on one end of a duplex stream and connect a client to the other.
    pub async fn start(server: BridgeServer) -> Result<InProcessBridge, BridgeError> {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let engine_side = server.engine_side.clone();
        let server_task = tokio::spawn(async move {
            match server.serve(server_io).await {
                Ok(running) => {
                    let _ = running.waiting().await;
                }
                Err(e) => tracing::error!("bridge server failed to start: {e}"),
            }
        });
        let client = ().serve(client_io).await.map_err(|e| BridgeError::Connect(Box::new(e)))?;
        let engine_side_client = McpControlPoints::of_bridge_server(client.peer().clone());
        let _ = engine_side.set(Arc::new(engine_side_client));
        Ok(InProcessBridge {
            client,
            server: server_task,
        })
    }

    /// The client side, as control points (for engines) or for `run_process`.
    pub fn client(&self) -> McpControlPoints {
        McpControlPoints::of_bridge_server(self.client.peer().clone())
    }

    /// The MCP peer (to list tools, call registry tools...).
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.client.peer()
    }

    pub async fn shutdown(self) {
        let _ = self.client.cancel().await;
        let _ = self.server.await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::engine::native::NativeEngine;
    use crate::vocab::{Decider, TaskStatus};

    /// Every schema the tool list publishes uses only JSON Schema's own formats: a strict
    /// validator (the TypeScript SDK's Ajv) would otherwise warn about or refuse them.
    #[test]
    fn the_published_tool_schemas_carry_no_rust_width_formats() {
        fn formats(value: &Value, out: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    if let Some(Value::String(f)) = map.get("format") {
                        out.push(f.clone());
                    }
                    map.values().for_each(|v| formats(v, out));
                }
                Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
                _ => {}
            }
        }
        let raw = BridgeServer::tool_router();
        let mut before = Vec::new();
        for tool in raw.list_all() {
            formats(&Value::Object((*tool.input_schema).clone()), &mut before);
            if let Some(o) = &tool.output_schema {
                formats(&Value::Object((**o).clone()), &mut before);
            }
        }
        assert!(
            before.iter().any(|f| f == "uint64"),
            "schemars no longer writes width formats: this test checks nothing ({before:?})"
        );
        let mut after = Vec::new();
        for tool in portable_schemas(raw).list_all() {
            formats(&Value::Object((*tool.input_schema).clone()), &mut after);
            if let Some(o) = &tool.output_schema {
                formats(&Value::Object((**o).clone()), &mut after);
            }
        }
        assert!(after.is_empty(), "non-standard formats left: {after:?}");
    }

    /// Control points that pass every task and remember the contexts they were given.
    #[derive(Default)]
    struct Recorder {
        seen: Mutex<Vec<ControlPointContext>>,
    }

    impl ControlPoints for Recorder {
        fn answer(
            &self,
            kind: ControlPointKind,
            _element: &str,
            ctx: ControlPointContext,
        ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
            assert_eq!(kind, ControlPointKind::Task, "only tasks here");
            self.seen.lock().unwrap().push(ctx);
            Box::pin(async {
                Ok(Answer::Task(TaskOutcome {
                    status: TaskStatus::Completed,
                    outputs: Map::new(),
                    variables: Map::new(),
                    decided_by: Decider::None,
                    reason: None,
                    error: None,
                    error_code: None,
                    calls: Vec::new(),
                    digest: None,
                    taint: None,
                }))
            })
        }
    }

    fn process() -> Process {
        let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
            <process id="P"><startEvent id="s"/><task id="a"/><endEvent id="e"/>
              <sequenceFlow id="f1" sourceRef="s" targetRef="a"/>
              <sequenceFlow id="f2" sourceRef="a" targetRef="e"/>
            </process></definitions>"#;
        let doc = crate::bpmn::parse(std::path::Path::new("t.bpmn"), xml.as_bytes()).unwrap();
        doc.main_process().unwrap().clone()
    }

    #[tokio::test]
    async fn a_model_summary_left_out_is_restored_from_the_registered_process() {
        let recorder = Arc::new(Recorder::default());
        let registry = Arc::new(Registry::default());
        registry.register(RegisteredFlow {
            process_key: "k".into(),
            process: Arc::new(process()),
            annotations: FlowAnnotations::default(),
            harness: recorder.clone(),
        });
        let server = BridgeServer::new(registry, Arc::new(NativeEngine::new()), None);
        let bridge = InProcessBridge::start(server).await.unwrap();
        let client = bridge.client();
        assert!(client.restores_unchanged_model());
        assert!(!McpControlPoints::new(bridge.peer().clone()).restores_unchanged_model());

        let mut ctx = ControlPointContext {
            process_key: "k".into(),
            ..ControlPointContext::default()
        };
        let sent = serde_json::to_value(&ctx).unwrap();
        assert!(sent.get("model").is_none(), "{sent}");
        client.execute_task("a", ctx.clone()).await.unwrap();
        let live = ModelSummary {
            process_id: "live".into(),
            ..ModelSummary::default()
        };
        ctx.model = Some(Arc::new(live.clone()));
        client.execute_task("a", ctx).await.unwrap();
        bridge.shutdown().await;

        let seen = recorder.seen.lock().unwrap();
        assert_eq!(
            seen[0].model.as_deref(),
            Some(&ModelSummary::of(&process()))
        );
        assert_eq!(seen[1].model.as_deref(), Some(&live));
    }
}
