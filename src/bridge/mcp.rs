//! The bridge as an MCP surface (rmcp): the harness tools (`execute_task`,
//! `route_gateway`, `evaluate_hook`), the registry tools (`register_flow`,
//! `get_bpmn_process`, `get_flow_annotations`) and the engine tool (`run_process`) on one
//! server, and [`McpControlPoints`], the client side an engine calls. [`InProcessBridge`]
//! connects the two over an in-memory duplex stream, so even the native engine reaches
//! the harness only through MCP.

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

use super::{
    BoxFuture, ControlPointContext, ControlPointError, ControlPoints, FlowAnnotations,
    GatewayDecision, HookDecision, TaskOutcome,
};
use crate::bpmn::Process;
use crate::engine::{RunRequest, WorkflowEngine};
use crate::journal::EventSink;
use crate::vocab::RunStatus;

/// One app known to the bridge.
pub struct RegisteredFlow {
    pub process_key: String,
    pub process: Arc<Process>,
    pub annotations: FlowAnnotations,
    /// The app's harness: answers its control points.
    pub harness: Arc<dyn ControlPoints>,
}

/// Builds a registered flow from a flow config path (for `register_flow`).
pub type FlowLoader = Arc<dyn Fn(&str) -> Result<RegisteredFlow, String> + Send + Sync>;

/// The state behind the MCP server.
#[derive(Default)]
pub struct Registry {
    flows: RwLock<BTreeMap<String, Arc<RegisteredFlow>>>,
    /// Event sinks of runs started in this process, by run id.
    sinks: RwLock<BTreeMap<String, Arc<dyn EventSink>>>,
}

impl Registry {
    pub fn register(&self, flow: RegisteredFlow) -> String {
        let key = flow.process_key.clone();
        if let Ok(mut flows) = self.flows.write() {
            flows.insert(key.clone(), Arc::new(flow));
        }
        key
    }

    pub fn flow(&self, process_key: &str) -> Result<Arc<RegisteredFlow>, String> {
        let flows = self
            .flows
            .read()
            .map_err(|_| "registry lock poisoned".to_string())?;
        flows.get(process_key).cloned().ok_or_else(|| {
            let known: Vec<&str> = flows.keys().map(String::as_str).collect();
            format!(
                "unknown process key `{process_key}` (registered: {})",
                known.join(", ")
            )
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
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RunProcessResult {
    pub run_id: String,
    pub status: RunStatus,
    pub message: Option<String>,
    pub variables: Map<String, Value>,
    pub steps: u64,
    pub path: Vec<String>,
}

/// The MCP server: every tool of the bridge.
#[derive(Clone)]
pub struct BridgeServer {
    registry: Arc<Registry>,
    engine: Arc<dyn WorkflowEngine>,
    loader: Option<FlowLoader>,
    /// How engines started by `run_process` reach the control points (set once the
    /// in-process client is connected).
    engine_side: Arc<OnceLock<Arc<dyn ControlPoints>>>,
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
            engine_side: Arc::new(OnceLock::new()),
            tool_router: Self::tool_router(),
        }
    }

    /// Fulfil one BPMN task under its policy; returns the outcome and the variables it writes.
    #[tool(
        description = "Fulfil one BPMN task under its policy (TaskAgent). Returns the task's outputs and the process variables it writes."
    )]
    async fn execute_task(
        &self,
        Parameters(a): Parameters<ExecuteTaskArgs>,
    ) -> Result<Json<TaskOutcome>, String> {
        let flow = self.registry.flow(&a.ctx.process_key)?;
        flow.harness
            .execute_task(&a.task_id, a.ctx)
            .await
            .map(Json)
            .map_err(|e| e.message)
    }

    #[tool(
        description = "Choose the outgoing flow(s) of a gateway (DecisionAgent): conditions first, a reasoner only when they are inconclusive."
    )]
    async fn route_gateway(
        &self,
        Parameters(a): Parameters<RouteGatewayArgs>,
    ) -> Result<Json<GatewayDecision>, String> {
        let flow = self.registry.flow(&a.ctx.process_key)?;
        flow.harness
            .route_gateway(&a.gateway_id, a.ctx)
            .await
            .map(Json)
            .map_err(|e| e.message)
    }

    #[tool(
        description = "Evaluate the hook on a sequence flow (FlowAgent): the action to apply, already checked against the app's action_permissions."
    )]
    async fn evaluate_hook(
        &self,
        Parameters(a): Parameters<EvaluateHookArgs>,
    ) -> Result<Json<HookDecision>, String> {
        let flow = self.registry.flow(&a.ctx.process_key)?;
        flow.harness
            .evaluate_hook(&a.hook_id, a.ctx)
            .await
            .map(Json)
            .map_err(|e| e.message)
    }

    #[tool(
        description = "Load an app from its flow config and register it; returns its process key."
    )]
    async fn register_flow(
        &self,
        Parameters(a): Parameters<RegisterFlowArgs>,
    ) -> Result<Json<RegisterFlowResult>, String> {
        let loader = self
            .loader
            .as_ref()
            .ok_or("this bridge does not load flows")?;
        let flow = loader(&a.flow_config_path)?;
        Ok(Json(RegisterFlowResult {
            process_key: self.registry.register(flow),
        }))
    }

    #[tool(description = "The parsed BPMN process of a registered flow.")]
    async fn get_bpmn_process(
        &self,
        Parameters(a): Parameters<ProcessKeyArgs>,
    ) -> Result<Json<BpmnProcessResult>, String> {
        let flow = self.registry.flow(&a.process_key)?;
        let process = serde_json::to_value(flow.process.as_ref()).map_err(|e| e.to_string())?;
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
    ) -> Result<Json<FlowAnnotations>, String> {
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
    ) -> Result<Json<RunProcessResult>, String> {
        let flow = self.registry.flow(&a.process_key)?;
        let control_points = self
            .engine_side
            .get()
            .cloned()
            .ok_or("the bridge has no client for engines yet")?;
        let sink = self
            .registry
            .take_sink(&a.run_id)
            .ok_or_else(|| format!("run `{}` has no journal attached", a.run_id))?;
        let request = RunRequest {
            run_id: a.run_id.clone(),
            process_key: a.process_key.clone(),
            process: flow.process.clone(),
            annotations: flow.annotations.clone(),
            variables: a.variables,
        };
        let outcome = self
            .engine
            .run(request, control_points, sink)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Json(RunProcessResult {
            run_id: a.run_id,
            status: outcome.status,
            message: outcome.message,
            variables: outcome.variables,
            steps: outcome.steps,
            path: outcome.path,
        }))
    }
}

#[tool_handler(router = self.tool_router, name = "cuga-flo-bridge", instructions = "Control points of governed BPMN processes: tasks, gateways and hooks, plus the process registry and the engine.")]
impl ServerHandler for BridgeServer {}

/// The engine's side of the bridge: each control point is an MCP tool call.
#[derive(Clone)]
pub struct McpControlPoints {
    peer: Peer<RoleClient>,
}

impl McpControlPoints {
    pub fn new(peer: Peer<RoleClient>) -> Self {
        McpControlPoints { peer }
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
            return Err(error(text_of(&result.content)));
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
    fn execute_task(
        &self,
        task_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<TaskOutcome, ControlPointError>> {
        let args = ExecuteTaskArgs {
            task_id: task_id.to_string(),
            ctx,
        };
        Box::pin(async move { self.call("execute_task", &args.task_id, &args).await })
    }

    fn route_gateway(
        &self,
        gateway_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<GatewayDecision, ControlPointError>> {
        let args = RouteGatewayArgs {
            gateway_id: gateway_id.to_string(),
            ctx,
        };
        Box::pin(async move { self.call("route_gateway", &args.gateway_id, &args).await })
    }

    fn evaluate_hook(
        &self,
        hook_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<HookDecision, ControlPointError>> {
        let args = EvaluateHookArgs {
            hook_id: hook_id.to_string(),
            ctx,
        };
        Box::pin(async move { self.call("evaluate_hook", &args.hook_id, &args).await })
    }
}

/// A bridge server and a client connected in memory.
pub struct InProcessBridge {
    client: RunningService<RoleClient, ()>,
    server: tokio::task::JoinHandle<()>,
}

impl InProcessBridge {
    /// Start `server` on one end of a duplex stream and connect a client to the other.
    pub async fn start(server: BridgeServer) -> Result<InProcessBridge, String> {
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
        let client = ()
            .serve(client_io)
            .await
            .map_err(|e| format!("cannot connect to the bridge: {e}"))?;
        let _ = engine_side.set(Arc::new(McpControlPoints::new(client.peer().clone())));
        Ok(InProcessBridge {
            client,
            server: server_task,
        })
    }

    /// The client side, as control points (for engines) or for `run_process`.
    pub fn client(&self) -> McpControlPoints {
        McpControlPoints::new(self.client.peer().clone())
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
