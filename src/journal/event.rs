//! What happens in a run, as events. A run's journal is the ordered list of its
//! [`Record`]s; its state ([`super::FlowState`]) is a fold over them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::vocab::{
    Decider, HookAction, ModelCall, Question, RemoteWait, RunStatus, Taint, TaskStatus, Untrusted,
};

/// One journal line: a sequence number, a wall-clock time, the hash chain's link and the
/// event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 1, 2, 3... within the run.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The hash chain (lowercase hex SHA-256): for record 1 the run's anchor
    /// ([`super::chain::anchor`]), for record n the hash of record n-1's line (its exact
    /// bytes, without the newline). Empty in journals written before the chain, and in
    /// records of sinks that keep no file.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prev: String,
    #[serde(flatten)]
    pub event: Event,
}

/// The run a child run was called from (a call activity's), in the child's `run_started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentRun {
    pub run_id: String,
    /// The call activity.
    pub node: String,
}

/// How a run was started: what a resumed run needs to ask the same sources and count
/// against the same budget.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    /// The app folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// `--answers FILE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_model: bool,
    /// `--no-prompt` (formerly `--detach`): questions park even at a terminal.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detach: bool,
    /// `--step-budget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_budget: Option<u64>,
    /// `--engine-url`: where the run's engine is, when not the config's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_url: Option<String>,
    /// Started by `cuga-flo serve`: a later server of the same app takes the run over
    /// when the server that held it parked is gone (docs/durable.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub served: bool,
    /// The engine's instance the run took over (started outside cuga-flo: a worker
    /// fleet's), which a resume re-attaches to even before its `instance_started`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<String>,
}

/// A remote task a cancelled run waited for, and how its `CancelTask` went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteCancelled {
    /// The `remote_agents` entry.
    pub agent: String,
    pub task_id: String,
    /// The control point that waited for it.
    pub node: String,
    /// The task's state in the agent's reply (`canceled`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Why `CancelTask` failed (the run is cancelled all the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What an `event_thrown` record threw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrownKind {
    Error,
    Escalation,
}

pub use crate::vocab::InstanceVisit;

impl ThrownKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ThrownKind::Error => "error",
            ThrownKind::Escalation => "escalation",
        }
    }
}

/// What a run waits to receive: a message (one catch receives it) or a signal (every
/// catch waiting for it receives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CatchKind {
    Message,
    Signal,
}

impl CatchKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CatchKind::Message => "message",
            CatchKind::Signal => "signal",
        }
    }
}

/// A message or signal a parked run waits for, at one catching element (a message or
/// signal catch event, a receive task, a boundary event, an event sub-process's start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Awaited {
    /// The wait's idempotency key (`<run>:<element>:<visit>`): a delivery names it.
    pub key: String,
    /// The catching element.
    pub node: String,
    pub kind: CatchKind,
    /// The message's or signal's name.
    pub name: String,
    /// A message's correlation value: its correlation key's value when the catch started
    /// waiting (`runs message --key` finds the run by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation: Option<String>,
}

/// One call a model asked for, as it wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestedCall {
    /// The model's id of the call.
    pub id: String,
    /// The function name the model used (`<source>__<tool>`, a built-in tool's name, or
    /// something not offered).
    pub name: String,
    /// The arguments as the model wrote them (JSON text, not necessarily valid).
    pub arguments: String,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool answered.
    Ok,
    /// The tool answered with an error of its own (MCP `isError`, HTTP 4xx/5xx): the model
    /// is given it and may recover.
    Error,
    /// The call failed (a timeout, the server gone): the task fails with `TOOL_FAILED`.
    Failed,
    /// Not made: the tool is not one the task may call, or its arguments are not a JSON
    /// object.
    Refused,
    /// Not made: a person (or `on_untrusted: deny`) denied it.
    Denied,
    /// Not made: the task's budget of tool calls is spent.
    Budget,
}

impl ToolOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolOutcome::Ok => "ok",
            ToolOutcome::Error => "error",
            ToolOutcome::Failed => "failed",
            ToolOutcome::Refused => "refused",
            ToolOutcome::Denied => "denied",
            ToolOutcome::Budget => "budget",
        }
    }

    /// Whether the tool was called.
    pub fn called(self) -> bool {
        matches!(
            self,
            ToolOutcome::Ok | ToolOutcome::Error | ToolOutcome::Failed
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    RunStarted {
        run_id: String,
        app: String,
        process_key: String,
        process_id: String,
        engine: String,
        /// Where judgement comes from (`scenario standard`, `answers file`, `human`, ...).
        reasoner: String,
        /// The initial variables.
        variables: Map<String, Value>,
        /// Which initial variables are untrusted, and where each came from (absent in
        /// journals written before provenance was recorded: unknown).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        untrusted: Option<Untrusted>,
        /// How the run was started, so that a resumed run is wired the same way.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        launch: Option<Launch>,
        /// The digest of the app's files the run ran ([`crate::app::LoadedApp::digest`]),
        /// when its owner knows them; part of the journal's anchor.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app_digest: Option<String>,
        /// A child run: the run and the call activity that called it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<ParentRun>,
        /// The trace the run's spans belong to (telemetry on): its caller's, or its own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace: Option<TraceRef>,
    },
    /// A call activity started (or, resumed, found) its child run: the call's
    /// `task_finished` (same `key`) says how the child ended.
    ChildStarted {
        /// The call activity.
        node: String,
        /// The call's idempotency key (`<run>:<call activity>:<visit>`).
        key: String,
        /// The child run's id (its journal is `runs/<run_id>/`).
        run_id: String,
        /// The called process's key.
        process_key: String,
    },
    /// An engine that owns the tokens (Flowable, Kogito) started the run's instance: what
    /// `runs resume` needs to re-attach to it (written before the instance is worked).
    InstanceStarted {
        /// The instance's id on the engine.
        instance: String,
        /// What it runs: Flowable's process definition id, Kogito's process id.
        definition: String,
        /// Flowable: the deployment of the definition.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deployment: Option<String>,
        /// Flowable: the topic of the run's external-worker jobs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic: Option<String>,
        /// Flowable: the worker id the run's jobs are locked to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<String>,
    },
    /// A token entered a node.
    NodeEntered {
        node: String,
        kind: String,
        name: Option<String>,
        token: u64,
        /// The instance of a multi-instance activity this entry is (`None`: an ordinary
        /// entry).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instance: Option<InstanceVisit>,
    },
    /// A token traversed a sequence flow.
    FlowTaken {
        flow: String,
        source: String,
        target: String,
        token: u64,
    },
    TaskFinished {
        node: String,
        status: TaskStatus,
        outputs: Map<String, Value>,
        /// Variables written by the task (after output mapping).
        variables: Map<String, Value>,
        decided_by: Decider,
        reason: Option<String>,
        error: Option<String>,
        /// A failed task: the BPMN error code it raised (see `event_thrown`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_code: Option<String>,
        duration_ms: u64,
        /// The digest of the question the reasoner was asked, when one was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
        /// The control point's idempotency key (`<run id>:<element>:<visit>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// Set when `variables` are untrusted (a model derived them from untrusted data).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        taint: Option<Taint>,
        /// The names of `variables` that stay the task's multi-instance instance's own
        /// (its element variable, its output element...): not written to the process.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        own: Vec<String>,
    },
    GatewayRouted {
        node: String,
        flows: Vec<String>,
        decided_by: Decider,
        reason: Option<String>,
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
        /// The control point's idempotency key (`<run id>:<element>:<visit>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
    },
    /// A hook was evaluated and its decision applied (or refused).
    HookEvaluated {
        hook: String,
        flow: String,
        /// The action applied.
        action: HookAction,
        target: Option<String>,
        swap: Option<(String, String)>,
        /// ADD_NODE: the id of the inserted task.
        added: Option<String>,
        state_updates: Map<String, Value>,
        decided_by: Decider,
        reason: Option<String>,
        message: Option<String>,
        /// An action that was asked for but not permitted (replaced by `action`).
        denied: Option<HookAction>,
        /// Why the engine refused the asked action (e.g. it names an executed node).
        rejected: Option<String>,
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
        /// The control point's idempotency key (`<run id>:<element>:<visit>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// The harness's answer as given (the applied action may differ: refused, or a
        /// run failed by the hook), so that a resumed run applies it again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<Value>,
    },
    /// A model was called at a control point (written before the control point's own
    /// event; one per call: re-asks and tool rounds are calls).
    ModelCalled {
        /// The task, gateway or hook.
        node: String,
        /// The control point's idempotency key (`<run id>:<element>:<visit>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        #[serde(flatten)]
        call: ModelCall,
    },
    /// The live topology changed (SWAP_NODES, REMOVE_NODE, ADD_NODE).
    TopologyChanged { action: HookAction, detail: String },
    /// Variables set outside a task (hook state updates, inputs).
    VariablesSet {
        source: String,
        values: Map<String, Value>,
        /// Set when `values` are untrusted (where they came from).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        taint: Option<Taint>,
    },
    /// A control point needs a person and none could answer: the question waits for
    /// `runs answer` (the run goes on elsewhere, or parks).
    QuestionParked { question: Box<Question> },
    /// A parked question was answered (durable before the answer is applied).
    QuestionAnswered {
        key: String,
        /// The answer, as `runs answer` checked it: `{"flows": [...]}`, `{"action": ...,
        /// "target": ..., "swap": [..], "add": ...}` or `{"outputs": {...}}`, with
        /// optional `state_updates`.
        answer: Value,
        decided_by: Decider,
        /// Who answered (`--by`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A parked question no longer needs an answer (its activity was interrupted).
    QuestionWithdrawn { key: String, reason: String },
    /// A BPMN error or escalation was thrown (a failed task, an error or escalation end or
    /// throw event) and, when something caught it, which boundary event did. Written
    /// before the token moves (to the boundary event, or on).
    EventThrown {
        kind: ThrownKind,
        /// The error or escalation code (none: thrown without a code).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// Where it was thrown: the failed task, or the end or throw event.
        node: String,
        /// That node's name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// The boundary event that caught it; none: nothing did (an error then fails
        /// the run; an escalation does not).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caught_by: Option<String>,
        /// The activity the catching boundary event is attached to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        activity: Option<String>,
        /// Whether catching it cancelled the activity (`cancelActivity`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        interrupting: bool,
    },
    /// A timer started: it is due at `due_ms` (milliseconds since the Unix epoch).
    TimerScheduled {
        key: String,
        node: String,
        due_ms: u64,
    },
    /// A timer fired.
    TimerFired { key: String, node: String },
    /// A catching element starts waiting for a message or signal.
    MessageAwaited {
        key: String,
        node: String,
        kind: CatchKind,
        name: String,
    },
    /// A message or signal reached the catching element waiting with `key`: delivered
    /// from outside (`runs message`, `runs signal`, the bridge's tools; its variables
    /// untrusted, `taint` saying so) or thrown within the run (`thrown_by`).
    MessageReceived {
        key: String,
        node: String,
        kind: CatchKind,
        name: String,
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        variables: Map<String, Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thrown_by: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        taint: Option<Taint>,
        /// The delivery's id, when its sender gave one: the same delivery sent again is
        /// not taken again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delivery: Option<String>,
    },
    /// Nothing can move until a question is answered, a timer is due or a message or
    /// signal arrives: the run parks (the process that ran it exits; `runs resume`,
    /// `runs answer`, `runs message` or `runs signal` continues it).
    RunWaiting {
        /// Why (`question`, `timer`, `message`, `interrupted`).
        reason: String,
        /// The keys of the open questions.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        questions: Vec<String>,
        /// The earliest timer due.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        due_ms: Option<u64>,
        /// The messages and signals the run waits for.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        awaiting: Vec<Awaited>,
    },
    /// A run continues from its journal (`runs resume`, `runs answer`, `worker`).
    RunResumed {
        /// Records in the journal before this one.
        from_seq: u64,
        /// A torn last line that was cut off before resuming.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repaired: Option<String>,
    },
    /// A delegated task's remote agent (A2A) assigned it a task id: journalled (and
    /// committed) as soon as `SendMessage` returns, inside the control point's visit,
    /// before the run waits for the agent. A resumed run whose visit has this record and
    /// no `task_finished` reads the task with `GetTask` instead of sending it again.
    RemoteTaskStarted {
        /// The delegated task.
        node: String,
        /// The control point's idempotency key (`<run id>:<element>:<visit>`).
        key: String,
        /// The agent, the A2A task and context ids, and the task's state when sent.
        remote: RemoteWait,
    },
    /// A task agent's model asked for tools: one turn of its conversation (its calls are
    /// then made one after another, in order). Journalled and committed before any of
    /// them is made, so that a resumed run continues the conversation where it stood
    /// instead of asking the model again.
    ToolsRequested {
        /// The task.
        node: String,
        /// The task visit's idempotency key (`<run id>:<element>:<visit>`).
        key: String,
        /// The turn's place among the visit's turns that asked for tools (1, 2, ...).
        turn: u32,
        /// What the model said with its calls, if anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        calls: Vec<RequestedCall>,
    },
    /// A tool call is about to be made: committed before the request leaves. A crash
    /// between this and its `tool_called` leaves the call in flight: a resumed run repeats
    /// it only when the tool is idempotent, and otherwise asks a person.
    ToolCallStarted {
        node: String,
        key: String,
        /// The call's place among the visit's calls (1, 2, ...): with `key`, its
        /// idempotency key (`<key>#<call>`), sent with the request.
        call: u32,
        /// The model's id of the call.
        id: String,
        /// `<source>.<tool>`.
        tool: String,
        arguments: Value,
        /// Whether the call may be repeated (the tool's annotations or the config).
        idempotent: bool,
    },
    /// A tool call ended, or was not made: what the model is given as its result.
    ToolCalled {
        node: String,
        key: String,
        call: u32,
        id: String,
        /// `<source>.<tool>`, or the name the model gave when it names no tool offered.
        tool: String,
        /// The arguments (as the model wrote them, a string, when they are not JSON).
        arguments: Value,
        outcome: ToolOutcome,
        /// The result as the model is given it (cut at 32 KiB), or why there is none.
        result: String,
        duration_ms: u64,
        /// Who confirmed or denied the call, when a person was asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        /// Why it was denied or refused, or what the person said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The key of the confirmation question this call's answer closed, if one was asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question: Option<String>,
        /// The call was in flight when the run stopped and was made again (its tool is
        /// idempotent).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        repeated: bool,
        /// A replay: the call was not made; its result is the one recorded.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        replayed: bool,
    },
    /// A person replied (`runs answer --reply`) to the question a consulted remote person
    /// asked back (`input-required`) while the run was parked on the consultation: the
    /// resumed run sends the reply in the same A2A task.
    RemoteReplied {
        /// The gateway or hook that consulted.
        node: String,
        /// The control point's idempotency key (`<run id>:<element>:<visit>`).
        key: String,
        /// The consultation's A2A task.
        task_id: String,
        reply: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// The run was cancelled (`runs cancel`): who, why, and what each remote agent the
    /// run waited for answered to `CancelTask`. The `run_finished` (status `cancelled`)
    /// follows it.
    RunCancelled {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The remote tasks the run waited for, each with the agent's reply to
        /// `CancelTask` (the task's state) or why it failed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        remote: Vec<RemoteCancelled>,
    },
    RunFinished {
        status: RunStatus,
        message: Option<String>,
        variables: Map<String, Value>,
        /// Node entries counted against the step budget.
        steps: u64,
    },
}

impl Event {
    /// The idempotency key of the control point (or timer) whose answer this record
    /// applies: a task's, gateway's or hook's record, or a timer firing. `None` for the
    /// records that answer nothing (model calls included).
    pub fn key(&self) -> Option<&str> {
        match self {
            Event::TaskFinished { key, .. }
            | Event::GatewayRouted { key, .. }
            | Event::HookEvaluated { key, .. } => key.as_deref(),
            Event::TimerFired { key, .. } | Event::MessageReceived { key, .. } => Some(key),
            _ => None,
        }
    }

    /// The event's name as journalled (`node_entered`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Event::RunStarted { .. } => "run_started",
            Event::InstanceStarted { .. } => "instance_started",
            Event::ChildStarted { .. } => "child_started",
            Event::NodeEntered { .. } => "node_entered",
            Event::FlowTaken { .. } => "flow_taken",
            Event::TaskFinished { .. } => "task_finished",
            Event::GatewayRouted { .. } => "gateway_routed",
            Event::HookEvaluated { .. } => "hook_evaluated",
            Event::ModelCalled { .. } => "model_called",
            Event::TopologyChanged { .. } => "topology_changed",
            Event::VariablesSet { .. } => "variables_set",
            Event::QuestionParked { .. } => "question_parked",
            Event::QuestionAnswered { .. } => "question_answered",
            Event::QuestionWithdrawn { .. } => "question_withdrawn",
            Event::EventThrown { .. } => "event_thrown",
            Event::TimerScheduled { .. } => "timer_scheduled",
            Event::TimerFired { .. } => "timer_fired",
            Event::MessageAwaited { .. } => "message_awaited",
            Event::MessageReceived { .. } => "message_received",
            Event::RunWaiting { .. } => "run_waiting",
            Event::RunResumed { .. } => "run_resumed",
            Event::RemoteTaskStarted { .. } => "remote_task_started",
            Event::RemoteReplied { .. } => "remote_replied",
            Event::ToolsRequested { .. } => "tools_requested",
            Event::ToolCallStarted { .. } => "tool_call_started",
            Event::ToolCalled { .. } => "tool_called",
            Event::RunCancelled { .. } => "run_cancelled",
            Event::RunFinished { .. } => "run_finished",
        }
    }

    /// Whether an engine derives this record again when it re-executes the run from its
    /// answers (what a resumed run checks against the journal). Model calls, questions,
    /// answers, parking and resuming are not derived: they record what happened outside
    /// the engine's deterministic movement.
    pub fn is_derived(&self) -> bool {
        // A message or signal delivered from outside is an input (like an answer given
        // with `runs answer`); one thrown within the run is derived.
        if let Event::MessageReceived { thrown_by, .. } = self {
            return thrown_by.is_some();
        }
        matches!(
            self,
            Event::NodeEntered { .. }
                | Event::FlowTaken { .. }
                | Event::TaskFinished { .. }
                | Event::GatewayRouted { .. }
                | Event::HookEvaluated { .. }
                | Event::TopologyChanged { .. }
                | Event::VariablesSet { .. }
                | Event::TimerScheduled { .. }
                | Event::TimerFired { .. }
                | Event::MessageAwaited { .. }
                | Event::EventThrown { .. }
                | Event::QuestionWithdrawn { .. }
                | Event::ChildStarted { .. }
        )
    }
}

/// The trace a run belongs to, journalled in its `run_started`.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct TraceRef {
    /// The trace id (32 lowercase hex digits).
    pub trace_id: String,
    /// The caller's span, when the run was started by a request that carried a
    /// `traceparent` (16 lowercase hex digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<String>,
}
