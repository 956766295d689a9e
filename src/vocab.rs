//! The shared vocabulary of runs: what a hook may do ([`HookAction`]), who decided
//! ([`Decider`]), how a task and a run ended. Used by the config, the harness, the bridge,
//! the engines and the journal; it imports nothing of the crate.

use std::fmt;
use std::str::FromStr;

/// What a hook may do to the flow. Wire names are upstream's lower-case strings.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HookAction {
    Continue,
    SkipNode,
    SkipTo,
    SwapNodes,
    Terminate,
    RemoveNode,
    AddNode,
}

impl HookAction {
    pub const ALL: [HookAction; 7] = [
        HookAction::Continue,
        HookAction::SkipNode,
        HookAction::SkipTo,
        HookAction::SwapNodes,
        HookAction::Terminate,
        HookAction::RemoveNode,
        HookAction::AddNode,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookAction::Continue => "continue",
            HookAction::SkipNode => "skip_node",
            HookAction::SkipTo => "skip_to",
            HookAction::SwapNodes => "swap_nodes",
            HookAction::Terminate => "terminate",
            HookAction::RemoveNode => "remove_node",
            HookAction::AddNode => "add_node",
        }
    }

    pub fn names() -> impl Iterator<Item = &'static str> {
        Self::ALL.iter().map(|a| a.as_str())
    }
}

impl fmt::Display for HookAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HookAction {
    type Err = ();

    /// Accepts upstream's lower-case names and the upper-case spelling (`SKIP_TO`).
    fn from_str(s: &str) -> Result<Self, ()> {
        let lower = s.trim().to_ascii_lowercase();
        HookAction::ALL
            .into_iter()
            .find(|a| a.as_str() == lower)
            .ok_or(())
    }
}

/// Who or what made a decision (shown in the stream, kept in the journal).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Decider {
    /// A condition evaluated deterministically.
    Condition,
    /// The gateway's default flow.
    Default,
    /// A deterministic policy rule.
    Rule,
    /// A model.
    Model,
    /// A person at the terminal.
    Human,
    /// Answers given in advance (scenario or answers file).
    Scripted,
    /// A hook's static action from the config.
    Static,
    /// Nothing to decide (pass-through task, single flow, disabled hook, guard not met).
    None,
    /// The control point's `on_failure` after its reasoner failed (a model that gave no
    /// valid answer within its attempts or budget).
    Fallback,
    /// A question's deadline passed: its `on_timeout` outcome decided.
    Timeout,
    /// A remote agent the task was delegated to (A2A).
    Remote,
    /// An external CLI agent (`agent: {type: command}`) did the task.
    Command,
}

impl Decider {
    pub fn as_str(self) -> &'static str {
        match self {
            Decider::Condition => "condition",
            Decider::Default => "default",
            Decider::Rule => "rule",
            Decider::Model => "model",
            Decider::Human => "human",
            Decider::Scripted => "scripted",
            Decider::Static => "static",
            Decider::None => "none",
            Decider::Fallback => "fallback",
            Decider::Timeout => "timeout",
            Decider::Remote => "remote",
            Decider::Command => "command",
        }
    }
}

/// How a task ended.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Completed,
    /// Skipped by a hook (SKIP_NODE).
    Skipped,
    Failed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Completed => "completed",
            TaskStatus::Skipped => "skipped",
            TaskStatus::Failed => "failed",
        }
    }
}

/// A BPMN error raised by a task: explicitly (`error: CODE` in an answer, a person's
/// answer, a model's reply where the task's `raises` allows it) or by failing (the codes
/// in [`error_code`]). The engine takes it to the innermost error boundary event that
/// catches `code`; nothing catching it, the run fails.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct RaisedError {
    /// The error code an error boundary event matches (`errorCode` of its `<error>`).
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The BPMN error codes a task raises when it fails without naming one.
pub mod error_code {
    /// The task agent's answer could not be used (an invalid answer).
    pub const TASK_FAILED: &str = "TASK_FAILED";
    /// The answer lacks an output the task declares (`output_mapping`).
    pub const OUTPUT_MISSING: &str = "OUTPUT_MISSING";
    /// The model gave no usable answer (its endpoint failed after its retries, or every
    /// attempt was invalid).
    pub const MODEL_FAILED: &str = "MODEL_FAILED";
    /// A model budget (the run's or the control point's) is spent.
    pub const BUDGET_EXHAUSTED: &str = "BUDGET_EXHAUSTED";
    /// The control point could not be answered at all (no reasoner, a transport failure).
    pub const UNANSWERED: &str = "UNANSWERED";

    /// A task delegated to a remote agent (A2A) was not fulfilled: the agent was
    /// unreachable, refused, failed the task, timed out, or sent an unusable reply.
    pub const REMOTE_FAILED: &str = "REMOTE_FAILED";

    /// A command agent's CLI failed: it could not start, exited non-zero, timed out,
    /// printed no JSON object, or its output violated the recipe's schema.
    pub const COMMAND_FAILED: &str = "COMMAND_FAILED";
    /// A tool source could not be started or reached, or a call failed (not a tool's own
    /// error, which its agent is given).
    pub const TOOL_FAILED: &str = "TOOL_FAILED";

    /// The codes above: what a task raises by failing, not by an answer naming a code.
    pub const GENERIC: [&str; 8] = [
        TASK_FAILED,
        REMOTE_FAILED,
        COMMAND_FAILED,
        TOOL_FAILED,
        OUTPUT_MISSING,
        MODEL_FAILED,
        BUDGET_EXHAUSTED,
        UNANSWERED,
    ];

    /// Whether `code` may be raised explicitly by an answer: letters, digits, `_`, `-`,
    /// `.` and `:`, 1 to 128 characters (what `errorCode` values are in practice).
    pub fn is_valid(code: &str) -> bool {
        (1..=128).contains(&code.len())
            && code
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    }
}

/// How a run ended.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every token reached an end.
    Completed,
    /// A hook (or a terminate end event) ended the run.
    Terminated,
    /// Something went wrong (a failed task, no flow to take, the step budget, a crash).
    Failed,
    /// Not ended: the run is parked until a question is answered or a timer is due
    /// (`runs answer`, `runs resume`). Never a `run_finished` status.
    Waiting,
    /// Cancelled from outside while it was parked or stopped (`runs cancel`; its
    /// `run_cancelled` record says who and why).
    Cancelled,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Terminated => "terminated",
            RunStatus::Failed => "failed",
            RunStatus::Waiting => "waiting",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

/// The kind of a control point.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ControlPointKind {
    Task,
    Gateway,
    Hook,
}

impl ControlPointKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ControlPointKind::Task => "task",
            ControlPointKind::Gateway => "gateway",
            ControlPointKind::Hook => "hook",
        }
    }
}

/// Where an untrusted variable's value came from (its provenance). A variable with no
/// taint is trusted: a config default, or set by a condition, a rule, a static action, a
/// scripted answer or a person. Run inputs (`--var`, `--input`, a scenario's inputs, data
/// sent to the run) are untrusted, and so is whatever a model derived while its context
/// held untrusted data.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Taint {
    /// Where the value came from, as a phrase: `from --var`, `from --input`, `model output
    /// on task `Check credit``, ...
    pub source: String,
    /// The untrusted variables it was derived from (a model's answer: those its context
    /// held), sorted; empty for a run input.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived_from: Vec<String>,
}

impl Taint {
    /// A value that entered the run from outside (`source`: `from --var`, ...).
    pub fn input(source: impl Into<String>) -> Taint {
        Taint {
            source: source.into(),
            derived_from: Vec::new(),
        }
    }
}

impl fmt::Display for Taint {
    /// `from --var`, or `model output on task `Check credit`, derived from applicant_name`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)?;
        if !self.derived_from.is_empty() {
            write!(f, ", derived from {}", self.derived_from.join(", "))?;
        }
        Ok(())
    }
}

/// The untrusted variables of a run, by name, with where each came from.
pub type Untrusted = std::collections::BTreeMap<String, Taint>;

/// Record in `untrusted` that `written` were set by an answer carrying `taint`: each is
/// untrusted with that taint, or trusted again (removed) when the answer carries none, as
/// when a person overwrites a value. What an engine that tracks provenance does with every
/// variable it writes; the engine records, the harness judges.
pub fn record_provenance<'a>(
    untrusted: &mut Untrusted,
    written: impl IntoIterator<Item = &'a String>,
    taint: Option<&Taint>,
) {
    for name in written {
        match taint {
            Some(t) => {
                untrusted.insert(name.clone(), t.clone());
            }
            None => {
                untrusted.remove(name);
            }
        }
    }
}

/// A question for a person that no one could answer when it was asked: the run parks
/// until it is answered (`cuga-flo runs answer`), and the answer is checked against what
/// the question offers, exactly as a live answer is.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Question {
    /// The control point's idempotency key: `<run id>:<element>:<visit>`.
    pub key: String,
    pub kind: ControlPointKind,
    /// The task, gateway or hook.
    pub element: String,
    pub name: Option<String>,
    /// What may be answered.
    pub offered: Offered,
    /// The first lines of the control point's policy, and where it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// When the question times out (milliseconds since the Unix epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    /// The answer given when the deadline passes (in the form `runs answer` records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_timeout: Option<serde_json::Value>,
    /// A guardrail gateway's approval: the flows `approve` and `deny` take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalAsk>,
    /// The run waits for a remote agent (A2A) still working on a delegated task, not for a
    /// person: the task to follow up on (`runs resume` polls it; `runs answer` refuses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteWait>,
}

/// A delegated task that a remote agent (A2A) was still working on when the run parked.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RemoteWait {
    /// The `remote_agents` entry.
    pub agent: String,
    /// The A2A task id the agent assigned (polled with `GetTask`, never sent again).
    pub task_id: String,
    /// The A2A context id of the exchange.
    pub context_id: String,
    /// The task's state when the run parked: `working`, `submitted`, `input-required`.
    pub state: String,
    /// A consultation's end (ms since the epoch): its agent's `timeout` from when it was
    /// sent. Past it the task is cancelled and the reasoner decides without the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// What the consulting model had said when it consulted (its turns after the prompt:
    /// the tool calls and the results so far), so that a resumed run continues the
    /// conversation where it stood instead of asking the model again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<serde_json::Value>,
}

/// What a guardrail gateway's approver decides (docs/graph.md, "Guardrail gateways").
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ApprovalAsk {
    /// The variable the gateway's conditions test (`APPROVED` or `DENIED`).
    pub variable: String,
    /// The flow taken when approved.
    pub approve_flow: String,
    /// The flow taken when denied (and when the deadline passes).
    pub deny_flow: String,
    /// Who may approve; empty: anyone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvers: Vec<String>,
}

/// What a parked question accepts.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Offered {
    /// A gateway: one of these flows (several when `multiple`).
    Flows {
        flows: Vec<OfferedFlow>,
        multiple: bool,
    },
    /// A hook: one of the permitted actions, with a target among `targets` for skip_to,
    /// remove_node and swap_nodes (two), or one of `insertable` for add_node.
    Actions {
        actions: Vec<HookAction>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        targets: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        insertable: Vec<String>,
        /// The variables the answer's `state_updates` may set.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        settable: Vec<Settable>,
        /// The hooked flow's own target: among `targets` for remove_node and swap_nodes,
        /// never for skip_to (that is `continue`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flow_target: Option<String>,
    },
    /// A tool call a task's agent asked for that a person confirms first: `approve`
    /// (it is made) or `deny` (it is not; the agent is told so, with the reason).
    ToolCall {
        /// `<source>.<tool>`.
        tool: String,
        arguments: serde_json::Value,
        /// Why it is asked: the tool may destroy or overwrite, the config asks for every
        /// call, or its arguments may carry untrusted data.
        why: String,
        /// What the model said with the call, if anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        said: Option<String>,
    },
    /// A task: a JSON object with exactly these outputs, each of its type in `kinds`
    /// (an output not there takes any value).
    Outputs {
        outputs: Vec<String>,
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        kinds: std::collections::BTreeMap<String, VarKind>,
    },
}

/// A variable a hook's answer may set in its `state_updates` (the hook's `may_set`),
/// typed by the variable's declared default.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Settable {
    pub name: String,
    pub kind: VarKind,
}

/// The JSON type a variable holds, as its declared default says (`any` for a null
/// default).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum VarKind {
    String,
    Number,
    Boolean,
    List,
    Object,
    Any,
}

/// What a JSON value is, for messages: "null", "a boolean", "a number", "a string", "a
/// list", "an object".
pub fn kind_of(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

impl VarKind {
    pub fn of(default: &serde_json::Value) -> Self {
        use serde_json::Value;
        match default {
            Value::Null => VarKind::Any,
            Value::Bool(_) => VarKind::Boolean,
            Value::Number(_) => VarKind::Number,
            Value::String(_) => VarKind::String,
            Value::Array(_) => VarKind::List,
            Value::Object(_) => VarKind::Object,
        }
    }

    /// Whether `value` is of this kind (null never is: a variable is set to a value).
    pub fn admits(self, value: &serde_json::Value) -> bool {
        use serde_json::Value;
        match (self, value) {
            (_, Value::Null) => false,
            (VarKind::Any, _) => true,
            (VarKind::String, Value::String(_))
            | (VarKind::Number, Value::Number(_))
            | (VarKind::Boolean, Value::Bool(_))
            | (VarKind::List, Value::Array(_))
            | (VarKind::Object, Value::Object(_)) => true,
            _ => false,
        }
    }

    /// Whether `value` may be given as an output of this kind: a value of the kind, or
    /// null (the value is unknown).
    pub fn admits_output(self, value: &serde_json::Value) -> bool {
        value.is_null() || self.admits(value)
    }

    /// `string`, `number`, `boolean`, `list`, `object`, `any`.
    pub fn as_str(self) -> &'static str {
        match self {
            VarKind::String => "string",
            VarKind::Number => "number",
            VarKind::Boolean => "boolean",
            VarKind::List => "list",
            VarKind::Object => "object",
            VarKind::Any => "any",
        }
    }

    /// "a string", "a number", ...
    pub fn described(self) -> &'static str {
        match self {
            VarKind::String => "a string",
            VarKind::Number => "a number",
            VarKind::Boolean => "a boolean",
            VarKind::List => "a list",
            VarKind::Object => "an object",
            VarKind::Any => "any value",
        }
    }

    /// The JSON schema of a value of this kind.
    pub fn schema(self) -> serde_json::Value {
        use serde_json::json;
        match self {
            VarKind::String => json!({"type": "string"}),
            VarKind::Number => json!({"type": "number"}),
            VarKind::Boolean => json!({"type": "boolean"}),
            VarKind::List => json!({"type": "array"}),
            VarKind::Object => json!({"type": "object"}),
            VarKind::Any => json!({"type": ["string", "number", "boolean"]}),
        }
    }
}

/// Check a hook answer's `state_updates` against what it may set: every key settable,
/// every value of its variable's kind.
pub fn check_state_updates(
    settable: &[Settable],
    updates: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), String> {
    for (key, value) in updates {
        let Some(s) = settable.iter().find(|s| &s.name == key) else {
            let names: Vec<&str> = settable.iter().map(|s| s.name.as_str()).collect();
            return Err(if names.is_empty() {
                format!("`state_updates` may set no variable here; got `{key}`")
            } else {
                format!(
                    "`state_updates` may set only {}; got `{key}`",
                    names.join(", ")
                )
            });
        };
        if !s.kind.admits(value) {
            return Err(format!(
                "`state_updates.{key}` must be {}; got {value}",
                s.kind.described()
            ));
        }
    }
    Ok(())
}

/// One flow a parked gateway question offers.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct OfferedFlow {
    pub id: String,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// How one call to a model ended.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// A usable answer (valid against the schema and the permitted set).
    Answered,
    /// The model asked for a tool; its result was sent back in the next call.
    ToolUse,
    /// An answer that failed the schema or named something not permitted.
    Invalid,
    /// The endpoint failed (HTTP status, connection, garbage), after its retries.
    Error,
    /// No answer within the timeout.
    Timeout,
}

impl CallOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Answered => "answered",
            CallOutcome::ToolUse => "tool_use",
            CallOutcome::Invalid => "invalid",
            CallOutcome::Error => "error",
            CallOutcome::Timeout => "timeout",
        }
    }
}

/// One call to a model at a control point: what it cost and how it ended. Decisions carry
/// their calls across the bridge, and the engine journals each as an event.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct ModelCall {
    /// The model asked (as configured).
    pub model: String,
    /// 1, 2, ... within the control point (re-asks and tool rounds count).
    pub attempt: u32,
    pub outcome: CallOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Wall time of the call, retries included.
    pub latency_ms: u64,
    /// HTTP requests behind this call (more than 1 after retries on 429/5xx/timeouts).
    pub http_attempts: u32,
    /// What was wrong (an invalid answer, an error); never a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Why the model stopped, as its server said (`stop`, `length`, `tool_calls`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reasons: Option<Vec<String>>,
}

/// The `model` of a call record that is a step of an A2A exchange (`a2a:<agent>`), not a
/// model call: it spends no model budget.
pub const REMOTE_CALL_PREFIX: &str = "a2a:";

impl ModelCall {
    /// Whether the record is a step of an exchange with a remote agent (A2A).
    pub fn is_remote(&self) -> bool {
        self.model.starts_with(REMOTE_CALL_PREFIX)
    }
}

/// How the client asks for structured output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    /// `json_schema` first; on a server that refuses it, `json_object` with the schema;
    /// on one that refuses that too, the schema in the prompt. The fallback is kept for
    /// the client's later calls.
    #[default]
    Auto,
    /// OpenAI's `{"type":"json_schema","json_schema":{"name","schema","strict"}}`.
    JsonSchema,
    /// `{"type":"json_object","schema":{...}}` (llama-cpp-python, some gateways).
    JsonObject,
    /// No `response_format`: the schema is described in the prompt only.
    Prompt,
}

impl ResponseFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseFormat::Auto => "auto",
            ResponseFormat::JsonSchema => "json_schema",
            ResponseFormat::JsonObject => "json_object",
            ResponseFormat::Prompt => "prompt",
        }
    }

    pub const NAMES: [&'static str; 4] = ["auto", "json_schema", "json_object", "prompt"];

    pub fn parse(s: &str) -> Option<ResponseFormat> {
        match s {
            "auto" => Some(ResponseFormat::Auto),
            "json_schema" => Some(ResponseFormat::JsonSchema),
            "json_object" => Some(ResponseFormat::JsonObject),
            "prompt" => Some(ResponseFormat::Prompt),
            _ => None,
        }
    }
}

/// One instance of a multi-instance activity: its `loopCounter` (1, 2, ...; 0 for an
/// activity that runs no instance at all) and how many instances the activity runs. In a
/// `node_entered` record, and in the context of a call an instance makes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct InstanceVisit {
    pub loop_counter: u64,
    pub instances: u64,
}

/// The tool a task agent may be given to read a process variable its inputs leave out.
pub const READ_VARIABLE: &str = "read_variable";
/// The tool a task agent may be given to ask a person (bound only when someone can answer).
pub const CONSULT_USER: &str = "consult_user";
/// The tools a task's `agent.tools` may name.
pub const BUILTIN_TOOLS: [&str; 2] = [READ_VARIABLE, CONSULT_USER];
