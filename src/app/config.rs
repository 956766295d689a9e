//! The flow configuration as authored (`<app>_config.yaml`): every key the original
//! project reads, its legacy spellings, and cuga-flo's additions. Each value keeps the
//! span it was read from, so later checks can point at it. Decoding (and its
//! diagnostics) lives in [`super::decode`].

use std::fmt;

use crate::source::{SourceFile, Span};
pub use crate::vocab::HookAction;

/// A value with the place in the config file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Located<T> {
    pub fn new(value: T, span: Span) -> Self {
        Located { value, span }
    }
}

impl Located<String> {
    pub fn as_str(&self) -> &str {
        &self.value
    }
}

#[derive(Debug, Clone)]
pub struct FlowConfig {
    pub source: SourceFile,
    pub flow: FlowSection,
    pub engine: EngineConfig,
    pub variables: Vec<Variable>,
    /// What the declared variables mean as run inputs (`inputs:`).
    pub inputs: Vec<Input>,
    pub llm: Option<LlmConfig>,
    pub tasks: Vec<TaskConfig>,
    pub gateways: Vec<GatewayConfig>,
    pub hooks: Vec<HookConfig>,
    pub permissions: Permissions,
    /// What every run must keep, whatever the hooks do (`guarantees:`).
    pub guarantees: Vec<Guarantee>,
    pub remote_agents: Vec<RemoteAgent>,
    /// Where task agents' tools come from (`mcp_servers:` and `openapi:`), by name.
    pub tool_sources: Vec<ToolSourceConfig>,
    /// `questions: park`: a question for a person always parks the run (nobody is asked
    /// at the terminal), as `start --no-prompt` does.
    pub park_questions: bool,
    /// Graph mode (`graph:`): the run is written into an RDF store as it goes.
    pub graph: Option<GraphConfig>,
    /// Where each task, gateway, hook and variable is in its list (built on first use).
    pub(crate) ids: ConfigIds,
}

/// Where each task and gateway (by id), hook (by location) and variable (by name) of a
/// [`FlowConfig`] is in its list (the first of a key, as a scan would find it), so that
/// looking one up does not scan the list. Built once, on first use; a lookup made after a
/// list changed length scans instead, so it is never wrong.
#[derive(Debug, Clone, Default)]
pub struct ConfigIds(std::sync::OnceLock<ConfigPositions>);

#[derive(Debug, Clone)]
struct ConfigPositions {
    tasks: Positions,
    gateways: Positions,
    hooks: Positions,
    variables: Positions,
    /// The lengths of the lists when the maps were built.
    lens: [usize; 4],
}

type Positions = foldhash::HashMap<Box<str>, usize>;

fn positions<'a, T: 'a>(
    list: impl Iterator<Item = &'a T>,
    key: impl Fn(&T) -> Option<&str>,
) -> Positions {
    let mut map = Positions::default();
    for (i, item) in list.enumerate() {
        if let Some(k) = key(item) {
            map.entry(k.into()).or_insert(i);
        }
    }
    map
}

/// The first item of `list` whose key is `wanted`, through `map` when it is there.
fn find<'a, T>(
    list: &'a [T],
    map: Option<&Positions>,
    wanted: &str,
    key: impl Fn(&T) -> Option<&str>,
) -> Option<&'a T> {
    let scan = || list.iter().find(|t| key(t) == Some(wanted));
    match map {
        Some(map) => match map.get(wanted).map(|&i| &list[i]) {
            Some(t) if key(t) == Some(wanted) => Some(t),
            Some(_) => scan(),
            None => None,
        },
        None => scan(),
    }
}

fn task_key(t: &TaskConfig) -> Option<&str> {
    Some(&t.id.value)
}

fn gateway_key(g: &GatewayConfig) -> Option<&str> {
    Some(&g.id.value)
}

fn hook_key(h: &HookConfig) -> Option<&str> {
    h.location.as_ref().map(|l| l.value.as_str())
}

fn variable_key(v: &Variable) -> Option<&str> {
    Some(&v.name.value)
}

/// Where graph mode writes a run (`graph:`; docs/graph.md).
#[derive(Debug, Clone)]
pub struct GraphConfig {
    pub store: GraphBackend,
    /// The embedded store's folder (on disk; needs the `graph-rocksdb` feature).
    pub path: Option<Located<String>>,
    /// The SPARQL 1.1 endpoint's base URL.
    pub endpoint: Option<Located<String>>,
    /// The dataset under the endpoint (`<endpoint>/<dataset>/query|update|data`).
    pub dataset: Option<Located<String>>,
    /// The environment variables holding the endpoint's user and password.
    pub user_env: Option<Located<String>>,
    pub password_env: Option<Located<String>>,
    /// A user or password written into the file (reported; never used).
    pub user_written: bool,
    /// Seconds one request to the endpoint may take (30 by default).
    pub timeout: Option<Located<f64>>,
    pub span: Span,
}

/// The store behind graph mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphBackend {
    /// oxigraph, in the process (in memory unless `path:`).
    Embedded,
    /// Any SPARQL 1.1 endpoint (SPARQL Protocol and Graph Store Protocol).
    Endpoint,
}

#[derive(Debug, Clone, Default)]
pub struct FlowSection {
    pub name: Option<Located<String>>,
    pub id: Option<Located<String>>,
    pub version: Option<Located<String>>,
    pub bpmn_file: Option<Located<String>>,
    /// The id of the `<process>` to run, for a file with several (`process:`).
    pub process: Option<Located<String>>,
    pub description: Option<Located<String>>,
    /// Upstream schema only; not used at run time.
    pub agent_type: Option<Located<String>>,
    pub span: Span,
}

/// Which workflow engine moves the tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// cuga-flo's in-process engine (upstream's `langgraph` is read as this).
    #[default]
    Native,
    Flowable,
    Kogito,
    /// An external engine speaking the bridge over MCP.
    Mcp,
}

impl EngineKind {
    pub const NAMES: [&'static str; 5] = ["native", "langgraph", "flowable", "kogito", "mcp"];

    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Native => "native",
            EngineKind::Flowable => "flowable",
            EngineKind::Kogito => "kogito",
            EngineKind::Mcp => "mcp",
        }
    }

    /// Engines that run the process outside cuga-flo and call back by hook id.
    pub fn is_external_bpm(self) -> bool {
        matches!(self, EngineKind::Flowable | EngineKind::Kogito)
    }

    /// Reached at a URL (a BPM server or an MCP engine).
    pub fn is_remote(self) -> bool {
        self != EngineKind::Native
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Default)]
pub struct EngineConfig {
    pub kind: EngineKind,
    /// The `type:` value as written, when present.
    pub kind_written: Option<Located<String>>,
    pub url: Option<Located<String>>,
    pub username: Option<Located<String>>,
    /// A password written into the file (reported: use `password_env`).
    pub password: Option<Located<String>>,
    pub password_env: Option<Located<String>>,
    pub deploy: Option<Located<bool>>,
    pub process_definition_key: Option<Located<String>>,
    pub process_id: Option<Located<String>>,
    pub callback_host: Option<Located<String>>,
    pub callback_port: Option<Located<u16>>,
    /// The environment variable holding the bearer token of the engine's own endpoint
    /// (`mcp`).
    pub token_env: Option<Located<String>>,
    /// How long the engine may go without calling a control point or finishing the run
    /// before the run fails (seconds; none by default).
    pub idle_timeout: Option<Located<f64>>,
    /// How long connecting to the engine may take (seconds; 10 by default).
    pub connect_timeout: Option<Located<f64>>,
    pub span: Option<Span>,
}

#[derive(Debug, Clone)]
pub struct Variable {
    pub name: Located<String>,
    pub default: serde_json::Value,
}

/// `inputs: {name: {required: true, description: ...}}`: what a declared variable means
/// to whoever starts a run. A required input must be given (`--var`, `--input`, a
/// scenario's `inputs:`, an A2A caller's message): a run without it is refused.
#[derive(Debug, Clone)]
pub struct Input {
    /// A declared variable's name.
    pub name: Located<String>,
    pub required: bool,
    pub description: Option<String>,
}

/// Model settings: the app's `llm:` block, or a control point's own `llm:` block, which
/// overrides the app's key by key.
#[derive(Debug, Clone, Default)]
pub struct LlmConfig {
    pub provider: Option<Located<String>>,
    pub model: Option<Located<String>>,
    pub temperature: Option<Located<f64>>,
    pub base_url: Option<Located<String>>,
    pub api_key_env: Option<Located<String>>,
    /// A key written into the file (reported: use `api_key_env`; never used).
    pub api_key: Option<Located<String>>,
    pub max_tokens: Option<Located<u64>>,
    pub seed: Option<Located<u64>>,
    /// `auto`, `json_schema`, `json_object` or `prompt`.
    pub response_format: Option<Located<String>>,
    /// Ask for OpenAI's strict structured outputs.
    pub strict: Option<Located<bool>>,
    /// Seconds allowed for one HTTP request.
    pub timeout: Option<Located<f64>>,
    pub connect_timeout: Option<Located<f64>>,
    /// Retries of one call on 429, 5xx, timeouts and connection failures.
    pub retries: Option<Located<u64>>,
    /// Asks per control point when answers are invalid (1 + re-asks).
    pub max_attempts: Option<Located<u64>>,
    /// App level only: requests in flight at once to the endpoint.
    pub max_concurrency: Option<Located<u64>>,
    /// App level: limits over the whole run. Control point: limits per visit.
    pub budget: Option<BudgetConfig>,
    /// App level only: limits per control-point visit.
    pub control_point_budget: Option<BudgetConfig>,
    /// Prompt templates (minijinja). App level: `task`, `gateway`, `hook`; a control
    /// point's block has a single `prompt`.
    pub prompts: PromptPaths,
    pub span: Span,
}

/// Limits on model use (`budget:`).
#[derive(Debug, Clone, Default)]
pub struct BudgetConfig {
    pub calls: Option<Located<u64>>,
    pub tokens: Option<Located<u64>>,
    pub seconds: Option<Located<f64>>,
    pub span: Span,
}

/// Prompt template files, relative to the config's folder.
#[derive(Debug, Clone, Default)]
pub struct PromptPaths {
    pub task: Option<Located<String>>,
    pub gateway: Option<Located<String>>,
    pub hook: Option<Located<String>>,
    /// A control point's own template (`llm.prompt`).
    pub own: Option<Located<String>>,
}

/// What a control point does when its model gives no usable answer (invalid answers up to
/// the attempt limit, an endpoint failing after its retries, a budget spent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// Fail the run (the default for tasks).
    Fail,
    /// Gateways: take the default flow.
    Default,
    /// Hooks: go on along the edge.
    Continue,
    /// Gateways and hooks (their default): a person decides: at the terminal, else the
    /// question parks for `runs answer`; with nobody to ask, the run fails. Fail-safe:
    /// nothing proceeds on a failed model without a decision.
    Ask,
}

impl OnFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Fail => "fail",
            OnFailure::Default => "default",
            OnFailure::Continue => "continue",
            OnFailure::Ask => "ask",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskMode {
    /// Reasoned by a TaskAgent.
    TaskAgent,
    /// Pass-through (or a named tool); no reasoning.
    Native,
}

#[derive(Debug, Clone)]
pub struct TaskConfig {
    pub id: Located<String>,
    /// The effective mode: `task_agent` when written so, or when unwritten and an
    /// `agent:` block is present; otherwise `native`.
    pub mode: TaskMode,
    pub mode_written: Option<Located<String>>,
    pub agent: Option<AgentConfig>,
    /// The effective instruction: `agent.system_instruction`, else the legacy `instruction`.
    pub instruction: Option<Located<String>>,
    /// The effective policy path: `agent.policy`, else the legacy `policy`.
    pub policy: Option<Located<String>>,
    pub tool: Option<Located<String>>,
    pub input_mapping: Vec<(Located<String>, Located<String>)>,
    pub output_mapping: Vec<(Located<String>, Located<String>)>,
    /// The BPMN error codes the task's model may raise instead of answering (`raises`).
    pub raises: Vec<Located<String>>,
    /// The task's own model settings.
    pub llm: Option<LlmConfig>,
    pub on_failure: Option<Located<OnFailure>>,
    /// How long a parked question waits, and what answers it then.
    pub deadline: Option<Deadline>,
    /// `untrusted_outputs: true`: the task brings data from outside the run into it (an
    /// order that arrives, a message, a document it reads), so a model's outputs here are
    /// untrusted even when nothing untrusted was in its context.
    pub untrusted_outputs: bool,
    pub span: Span,
}

#[derive(Debug, Clone, Default)]
pub struct AgentConfig {
    pub name: Option<Located<String>>,
    pub system_instruction: Option<Located<String>>,
    pub policy: Option<Located<String>>,
    /// A built-in kind (`cuga_agent`, ...) or the name of a `remote_agents` entry.
    pub agent_type: Option<Located<String>>,
    /// The tools the agent may call: built-in ones (`read_variable`, `consult_user`),
    /// `server.tool` of a tool source, or `server.*` for all of a source's tools.
    pub tools: Vec<Located<String>>,
    /// Tool calls allowed per visit of the task (`max_tool_calls`, default
    /// [`DEFAULT_MAX_TOOL_CALLS`]); one more fails the task with `BUDGET_EXHAUSTED`.
    pub max_tool_calls: Option<Located<u64>>,
    /// `pre_execute`: rules checked before the agent is asked (they may refuse the task
    /// with a BPMN error or rewrite its inputs).
    pub pre_execute: Vec<StepRule>,
    /// `post_execute`: rules checked on the agent's answer (they may refuse it with a
    /// BPMN error or rewrite its outputs).
    pub post_execute: Vec<StepRule>,
    /// `type: command`: the task runs an external CLI (docs/config.md, "Command agents").
    pub command: Option<CommandAgent>,
    pub span: Span,
}

/// `agent: {type: command, recipe: FILE, command: [...], timeout: 5m}`: each visit runs an
/// external CLI (a Goose recipe by default) with the task's declared parameters only.
#[derive(Debug, Clone, Default)]
pub struct CommandAgent {
    /// The recipe file (Goose format), relative to the config file.
    pub recipe: Option<Located<String>>,
    /// The command line, as a vector (no shell): `{recipe}` is the recipe's path,
    /// `{config_dir}` the config's folder and `{params}` expands to `--params k=v` per parameter. Default:
    /// `goose run --recipe {recipe} {params}`.
    pub command: Vec<Located<String>>,
    /// How long the CLI may run before its process group is killed (default 5 minutes).
    pub timeout: Option<Located<std::time::Duration>>,
    pub span: Span,
}

/// `approval:` on a gateway: a guardrail whose route an approver decides (docs/graph.md,
/// "Guardrail gateways").
#[derive(Debug, Clone, Default)]
pub struct Approval {
    /// No decision by then: DENIED, decided by `timeout` (default one hour).
    pub timeout: Option<Located<std::time::Duration>>,
    /// Who may approve (`runs answer --by`); empty: anyone.
    pub approvers: Vec<Located<String>>,
    /// The variable the gateway's conditions test (default: the one its conditions
    /// compare, else `approval_status`).
    pub variable: Option<Located<String>>,
    pub span: Span,
}

/// Tool calls a task agent may make per visit when its config says nothing.
pub const DEFAULT_MAX_TOOL_CALLS: u64 = 8;

/// One rule of an agent's `pre_execute` or `post_execute`: when `when` holds (TRUE; FALSE
/// and UNKNOWN skip it), raise the BPMN error `raise` (the task fails with it), or set
/// each of `set` (an input parameter before the agent, an output after it). Rules are
/// checked in order; a raise ends the check.
#[derive(Debug, Clone)]
pub struct StepRule {
    pub when: Located<String>,
    pub raise: Option<Located<String>>,
    pub set: Vec<(Located<String>, Located<serde_json::Value>)>,
    pub because: Option<Located<String>>,
    pub span: Span,
}

/// A source of tools (`mcp_servers.<name>` or `openapi.<name>`).
#[derive(Debug, Clone)]
pub struct ToolSourceConfig {
    /// The name tasks use (`<name>.<tool>`).
    pub name: Located<String>,
    pub kind: ToolSourceKind,
    /// How long one call may take (`timeout`; default 60 s).
    pub timeout: Option<Located<std::time::Duration>>,
    /// How long the server may take to start and answer `initialize` (`connect_timeout`;
    /// default 30 s).
    pub connect_timeout: Option<Located<std::time::Duration>>,
    /// Per-tool settings (`tools: {<tool>: {confirm, idempotent}}`).
    pub tools: Vec<ToolSetting>,
    pub span: Span,
}

/// How a tool source is reached.
#[derive(Debug, Clone)]
pub enum ToolSourceKind {
    /// `command: [...]`: an MCP server over stdio, started for the run (no shell; paths
    /// relative to the config's folder), with only `env` and the `pass_env` variables of
    /// cuga-flo's environment (and PATH, HOME, LANG, ...) in its environment.
    McpStdio {
        command: Vec<Located<String>>,
        env: Vec<(Located<String>, Located<String>)>,
        pass_env: Vec<Located<String>>,
        cwd: Option<Located<String>>,
    },
    /// `url:`: an MCP server over streamable HTTP (`token_env`: the variable holding its
    /// bearer token).
    McpHttp {
        url: Located<String>,
        token_env: Option<Located<String>>,
    },
    /// `openapi.<name>`: an HTTP API described by an OpenAPI 3 document, each operation a
    /// tool named by its `operationId`.
    OpenApi {
        spec: Located<String>,
        base_url: Option<Located<String>>,
        token_env: Option<Located<String>>,
    },
}

impl ToolSourceKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            ToolSourceKind::McpStdio { .. } => "mcp (stdio)",
            ToolSourceKind::McpHttp { .. } => "mcp (streamable HTTP)",
            ToolSourceKind::OpenApi { .. } => "openapi",
        }
    }
}

/// One tool's settings under its source's `tools:`.
#[derive(Debug, Clone)]
pub struct ToolSetting {
    pub name: Located<String>,
    /// `confirm: true` (a person confirms every call) or `confirm: never` (nobody does,
    /// whatever the tool's annotations say); absent: as its annotations say.
    pub confirm: Option<Located<Confirm>>,
    /// `idempotent: true|false`: overrides the tool's annotations (a call in flight at a
    /// crash is repeated only when the tool is idempotent).
    pub idempotent: Option<Located<bool>>,
}

/// Who confirms a tool's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confirm {
    /// Every call, whatever the annotations say.
    Always,
    /// None: the calls go ahead unconfirmed (an explicit opt-out `validate` warns about).
    Never,
}

impl FlowConfig {
    /// The required inputs (`inputs:`) not among `given`, in the config's order.
    pub fn missing_inputs(&self, given: &[String]) -> Vec<&Input> {
        (self.inputs.iter())
            .filter(|i| i.required && !given.contains(&i.name.value))
            .collect()
    }

    /// What `inputs:` says of variable `name`.
    pub fn input(&self, name: &str) -> Option<&Input> {
        self.inputs.iter().find(|i| i.name.value == name)
    }

    /// The tool source named `name`.
    pub fn tool_source(&self, name: &str) -> Option<&ToolSourceConfig> {
        self.tool_sources.iter().find(|s| s.name.value == name)
    }
}

impl ToolSourceConfig {
    /// The settings of tool `tool` of this source.
    pub fn setting(&self, tool: &str) -> Option<&ToolSetting> {
        self.tools.iter().find(|t| t.name.value == tool)
    }
}

/// Agent kinds that run locally; any other `agent_type` names a remote agent.
pub const BUILTIN_AGENT_TYPES: [&str; 5] =
    ["cuga_agent", "claude_agent", "langgraph", "crewAI", "wxo"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GatewayMode {
    DecisionAgent,
    Native,
}

#[derive(Debug, Clone)]
pub struct GatewayConfig {
    pub id: Located<String>,
    pub mode: GatewayMode,
    pub condition: Option<Located<String>>,
    pub policy: Option<Located<String>>,
    pub flows: Vec<GatewayFlow>,
    pub human_consultation: Option<Located<String>>,
    pub agent_type: Option<Located<String>>,
    /// The gateway's own model settings.
    pub llm: Option<LlmConfig>,
    pub on_failure: Option<Located<OnFailure>>,
    /// How long a parked question waits, and what answers it then.
    pub deadline: Option<Deadline>,
    /// A model's choice here is consequential: on untrusted data it needs
    /// `action_permissions.on_untrusted` (a person's confirmation by default).
    pub consequential: bool,
    /// A guardrail: an approver decides the route.
    pub approval: Option<Approval>,
    pub span: Span,
}

impl GatewayConfig {
    /// Whether the gateway's `condition` is the question its `human_consultation` asks
    /// rather than a condition: a decision agent that consults a person may carry prose
    /// there (the original project's apps do, by design). Prose is text that does not
    /// parse as a condition and has none of a condition's marks (`${`, `#{`, a leading
    /// `=`, `==`, `!=`, `<=`, `>=`, `&&`, `||`), so a mistyped condition is still one.
    pub fn condition_is_question(&self) -> bool {
        let Some(c) = &self.condition else {
            return false;
        };
        if self.mode != GatewayMode::DecisionAgent || self.human_consultation.is_none() {
            return false;
        }
        let text = c.value.trim();
        let marked = text.starts_with('=')
            || ["${", "#{", "==", "!=", "<=", ">=", "&&", "||"]
                .iter()
                .any(|m| text.contains(m));
        !marked && crate::expr::parse(text).is_err()
    }
}

#[derive(Debug, Clone)]
pub struct GatewayFlow {
    pub id: Located<String>,
    pub decision: Option<Located<String>>,
    pub condition: Option<Located<String>>,
}

/// A static hook action with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionSpec {
    Continue,
    SkipNode,
    SkipTo(Located<String>),
    SwapNodes(Located<String>, Located<String>),
    Terminate(Option<String>),
    RemoveNode(Located<String>),
    AddNode(TaskSpec),
}

impl ActionSpec {
    pub fn action(&self) -> HookAction {
        match self {
            ActionSpec::Continue => HookAction::Continue,
            ActionSpec::SkipNode => HookAction::SkipNode,
            ActionSpec::SkipTo(_) => HookAction::SkipTo,
            ActionSpec::SwapNodes(..) => HookAction::SwapNodes,
            ActionSpec::Terminate(_) => HookAction::Terminate,
            ActionSpec::RemoveNode(_) => HookAction::RemoveNode,
            ActionSpec::AddNode(_) => HookAction::AddNode,
        }
    }
}

/// A task that a hook may insert into the running process.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSpec {
    pub id: Located<String>,
    pub name: Option<Located<String>>,
    pub instruction: Option<Located<String>>,
    /// A remote agent (by name) that fulfils the inserted task.
    pub agent: Option<Located<String>>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct HookConfig {
    pub id: Located<String>,
    /// `type:` as written (`edge`; the legacy `pre_edge` is read as `edge`).
    pub kind: Option<Located<String>>,
    pub location: Option<Located<String>>,
    pub policy: Option<Located<String>>,
    pub action: Option<Located<ActionSpec>>,
    pub message: Option<Located<String>>,
    pub condition: Option<Located<String>>,
    pub enabled: bool,
    pub instruction: Option<Located<String>>,
    pub human_consultation: Option<Located<String>>,
    /// Nodes a reasoned skip_to / swap_nodes / remove_node may name (empty: none, unless
    /// `any_target`).
    pub allowed_targets: Vec<Located<String>>,
    /// `allowed_targets: any`: the explicit opt-in to offering every node not yet run
    /// (never a start or end event, nor a skip_to to the hooked flow's own target).
    pub any_target: Option<Span>,
    /// Whether `allowed_targets:` is written at all (`[]` says "none" on purpose).
    pub targets_declared: bool,
    /// Tasks a reasoned add_node may insert.
    pub insertable_tasks: Vec<TaskSpec>,
    /// The variables a reasoned answer's `state_updates` may set (`may_set:`); nothing
    /// else.
    pub may_set: Vec<Located<String>>,
    /// The hook's own model settings.
    pub llm: Option<LlmConfig>,
    pub on_failure: Option<Located<OnFailure>>,
    /// How long a parked question waits, and what answers it then.
    pub deadline: Option<Deadline>,
    pub span: Span,
}

/// How long a question for a person may wait (`deadline:`, ISO 8601), and the answer
/// given when it times out (`on_timeout:`, in the form `runs answer` records: tasks
/// `{outputs: {...}}`, gateways `{flow: F}`, hooks `{action: A, target: X}`), journalled
/// as decided by `timeout`.
#[derive(Debug, Clone, PartialEq)]
pub struct Deadline {
    pub after: Located<std::time::Duration>,
    pub on_timeout: Option<Located<serde_json::Value>>,
}

/// What happens when a hook chooses an action the permissions deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDenied {
    /// Record the denial and continue along the edge.
    #[default]
    Continue,
    /// Record the denial and fail the run.
    Fail,
}

#[derive(Debug, Clone, Default)]
pub struct Permissions {
    pub permitted: Vec<Located<HookAction>>,
    pub prohibited: Vec<Located<HookAction>>,
    pub on_denied: OnDenied,
    /// What a consequential action a model proposed on untrusted data needs.
    pub on_untrusted: OnUntrusted,
    pub span: Option<Span>,
}

/// What happens to a consequential action (terminate, skip_to, skip_node, remove_node,
/// add_node; a gateway choice marked `consequential`) that a model proposed while its
/// context held untrusted data (run inputs, or what was derived from them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnUntrusted {
    /// A person confirms (or decides otherwise) at the terminal, or the run parks for
    /// `runs answer`; with nobody to ask, the action is denied.
    #[default]
    Confirm,
    /// The action is denied (recorded); the run goes on as for any denial.
    Deny,
    /// Applied as proposed (the previous behaviour).
    Allow,
}

impl OnUntrusted {
    pub fn as_str(self) -> &'static str {
        match self {
            OnUntrusted::Confirm => "confirm",
            OnUntrusted::Deny => "deny",
            OnUntrusted::Allow => "allow",
        }
    }
}

impl Permissions {
    /// Whether a hook may take `action`: an empty permitted list means "everything not
    /// prohibited" (upstream's rule).
    pub fn allows(&self, action: HookAction) -> bool {
        let permitted =
            self.permitted.is_empty() || self.permitted.iter().any(|p| p.value == action);
        permitted && !self.prohibited.iter().any(|p| p.value == action)
    }

    /// Every action a hook may take.
    pub fn allowed(&self) -> Vec<HookAction> {
        HookAction::ALL
            .into_iter()
            .filter(|a| self.allows(*a))
            .collect()
    }
}

/// A property every run must keep (`guarantees:`): `validate` proves it on the model under
/// every adaptation the hooks are permitted ([`crate::govern`]), and the harness refuses
/// an adaptation that would break it in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Guarantee {
    pub id: Located<String>,
    pub rule: GuaranteeRule,
    pub span: Span,
}

/// What a guarantee says. "Reach" a node: a token enters it (a node skipped by
/// `skip_node` is entered, a removed one is not); "execute" a node: enter it and complete
/// it (not skipped, not removed).
#[derive(Debug, Clone, PartialEq)]
pub enum GuaranteeRule {
    /// `reach: N` with `only_after: [Y, ...]`: whenever a run reaches N, each Y has been
    /// executed before.
    OnlyAfter {
        reach: Located<String>,
        after: Vec<Located<String>>,
    },
    /// `always_visit: [Y, ...]`: every run that completes has executed each Y (a
    /// terminated or failed run does not complete).
    AlwaysVisit(Vec<Located<String>>),
    /// `never_reach: N` (or a list): no run ever reaches N.
    NeverReach(Vec<Located<String>>),
}

impl GuaranteeRule {
    /// Every node id the guarantee names, with its place.
    pub fn names(&self) -> Vec<&Located<String>> {
        match self {
            GuaranteeRule::OnlyAfter { reach, after } => {
                std::iter::once(reach).chain(after.iter()).collect()
            }
            GuaranteeRule::AlwaysVisit(ids) | GuaranteeRule::NeverReach(ids) => {
                ids.iter().collect()
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct RemoteAgent {
    pub name: Located<String>,
    pub url: Option<Located<String>>,
    pub protocol: Option<Located<String>>,
    pub timeout_secs: Option<Located<f64>>,
    /// Names of the `auth` keys (values are secrets and are not kept).
    pub auth_keys: Vec<Located<String>>,
    /// How the agent is authenticated: the environment variable that holds the secret.
    pub auth: Option<RemoteAuth>,
    /// `connect_timeout`: seconds to open the connection (the total is `timeout`).
    pub connect_timeout_secs: Option<Located<f64>>,
    /// `wait`: how long a run stays live waiting for a delegated task's reply before it
    /// parks (the remote task goes on; `runs resume` polls it). Absent: the exchange waits
    /// up to `timeout`, then cancels the task.
    pub wait: Option<Located<std::time::Duration>>,
    pub span: Span,
}

/// A remote agent's credentials, named by environment variable (never written inline).
#[derive(Debug, Clone, PartialEq)]
pub enum RemoteAuth {
    /// `Authorization: Bearer $token_env`.
    Bearer { token_env: Located<String> },
    /// `<header>: $key_env` (header `X-API-Key` when not given).
    ApiKey {
        header: Option<Located<String>>,
        key_env: Located<String>,
    },
}

impl FlowConfig {
    /// The process key: `flow.id`, else `flow.name`, else `process` (upstream's rule).
    pub fn process_key(&self) -> &str {
        self.flow
            .id
            .as_ref()
            .or(self.flow.name.as_ref())
            .map_or("process", |l| l.as_str())
    }

    /// The lists' positions by key, when they still describe the lists.
    fn positions(&self) -> Option<&ConfigPositions> {
        let lens = [
            self.tasks.len(),
            self.gateways.len(),
            self.hooks.len(),
            self.variables.len(),
        ];
        let built = self.ids.0.get_or_init(|| ConfigPositions {
            tasks: positions(self.tasks.iter(), task_key),
            gateways: positions(self.gateways.iter(), gateway_key),
            hooks: positions(self.hooks.iter(), hook_key),
            variables: positions(self.variables.iter(), variable_key),
            lens,
        });
        (built.lens == lens).then_some(built)
    }

    pub fn task(&self, id: &str) -> Option<&TaskConfig> {
        find(
            &self.tasks,
            self.positions().map(|p| &p.tasks),
            id,
            task_key,
        )
    }

    pub fn gateway(&self, id: &str) -> Option<&GatewayConfig> {
        find(
            &self.gateways,
            self.positions().map(|p| &p.gateways),
            id,
            gateway_key,
        )
    }

    pub fn hook_on(&self, flow: &str) -> Option<&HookConfig> {
        find(
            &self.hooks,
            self.positions().map(|p| &p.hooks),
            flow,
            hook_key,
        )
    }

    pub fn remote_agent(&self, name: &str) -> Option<&RemoteAgent> {
        self.remote_agents.iter().find(|r| r.name.value == name)
    }

    pub fn variable(&self, name: &str) -> Option<&Variable> {
        find(
            &self.variables,
            self.positions().map(|p| &p.variables),
            name,
            variable_key,
        )
    }

    /// The type of the variable `name`, as its declared default says; `None` when it is
    /// not declared or its default is null (it takes any value).
    pub fn declared_kind(&self, name: &str) -> Option<crate::vocab::VarKind> {
        let kind = crate::vocab::VarKind::of(&self.variable(name)?.default);
        (kind != crate::vocab::VarKind::Any).then_some(kind)
    }
}

/// `PT10M`, `30s`, `10m`, `2h`, `1d` or a number of seconds; positive.
pub fn parse_timeout(text: &str) -> Option<std::time::Duration> {
    let t = text.trim();
    if t.starts_with('P') {
        return crate::bpmn::parse_duration(t).ok().filter(|d| !d.is_zero());
    }
    let (number, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let n: f64 = number.trim().parse().ok()?;
    let scale = match unit.trim() {
        "s" | "sec" | "secs" => 1.0,
        "m" | "min" | "mins" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return None,
    };
    let secs = n * scale;
    (secs.is_finite() && secs > 0.0 && secs <= 1.0e9)
        .then(|| std::time::Duration::from_secs_f64(secs))
}
