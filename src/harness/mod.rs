//! The harness: the reasoning side of the control points. A [`FlowAgent`] is built from a
//! loaded app (its flow config and BPMN model) and a [`Reasoner`]; it answers the engine's
//! control-point calls ([`ControlPoints`]) and never moves tokens.
//!
//! Deterministic first: pass-through tasks, conditions, default flows, disabled hooks,
//! guards and static hook actions are decided without asking anyone. Only what they cannot
//! decide goes to the reasoner, and every answer is checked against what the config
//! permits (declared outputs, offered flows, permitted actions, allowed targets, insertable
//! tasks) before the engine sees it, whatever engine runs the process.
//!
//! - [`task`]: `execute_task` (TaskAgent: input and output mapping).
//! - [`gateway`]: `route_gateway` (conditions, default flows, DecisionAgent).
//! - [`hook`]: `evaluate_hook` (guards, static actions, reasoned actions, permissions).
//! - [`context`]: what the harness reads from a [`ControlPointContext`] and the model.
//! - [`policy`]: policy documents, read once.

pub mod command;
pub mod context;
pub mod gateway;
mod guardrail;
pub mod hook;
pub mod policy;
pub mod remote;
pub mod task;
mod tools;
mod trust;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::app::{FlowConfig, GatewayMode, LoadedApp, TaskMode};
use crate::bpmn::Process;
use crate::bridge::{
    Answer, BoxFuture, ControlPointContext, ControlPointError, ControlPoints, FlowAnnotations,
    ModelSummary,
};
use crate::expr::{self, Expr};
use crate::govern::Governance;
use crate::reason::record::{ContextDigest, context_digest};
use crate::reason::{
    CallLog, GatewayRequest, HookRequest, Policy, ReasonError, Reasoner, TaskRequest,
};
use crate::vocab::{ControlPointKind, ModelCall};

/// Node entries allowed in one run before it fails. (The same value as the engine's
/// default step budget; kept here so the harness does not depend on an engine.)
pub const DEFAULT_STEP_BUDGET: u64 = 10_000;

/// Why a [`FlowAgent`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HarnessError {
    #[error("app `{0}` has no flow config that could be read")]
    NoConfig(String),
    #[error("the policy of {owner} cannot be read: {path}: {message}")]
    Policy {
        owner: String,
        path: String,
        message: String,
    },
    #[error("{what} cannot be read: `{text}`: {message}")]
    Condition {
        what: String,
        text: String,
        message: String,
    },
}

/// The conditions of the config, parsed once.
#[derive(Debug, Default)]
pub(crate) struct Conditions {
    /// Gateway-level conditions of decision-agent gateways.
    pub gateways: HashMap<String, Expr>,
    /// Flow conditions from the config: (gateway id, flow id) → condition.
    pub flows: HashMap<(String, String), Expr>,
    /// Hook guards, by hook id.
    pub guards: HashMap<String, Expr>,
}

/// The policies of the control points that can reason, read once.
#[derive(Debug, Default)]
pub(crate) struct Policies {
    pub tasks: HashMap<String, Policy>,
    pub gateways: HashMap<String, Policy>,
    pub hooks: HashMap<String, Policy>,
}

/// The harness of one app: answers `execute_task`, `route_gateway` and `evaluate_hook`.
pub struct FlowAgent {
    pub(crate) config: FlowConfig,
    pub(crate) process: Option<Arc<Process>>,
    /// The summary of `process`, built once (what a context without one is given).
    pub(crate) model: Option<Arc<ModelSummary>>,
    pub(crate) reasoner: Arc<dyn Reasoner>,
    pub(crate) policies: Policies,
    pub(crate) conditions: Conditions,
    /// The config's guarantees, which every adaptation is checked against.
    pub(crate) governance: Option<Governance>,
    /// The app's remote agents (A2A), with their clients.
    pub(crate) remotes: Arc<remote::Remotes>,
    /// The app's tool sources (MCP servers, OpenAPI), reached when a task first uses one.
    pub(crate) toolbox: Arc<crate::tools::Toolbox>,
    /// A resumed run's unfinished tool conversations, by task visit key (each taken once).
    pub(crate) tool_visits: std::sync::Mutex<HashMap<String, crate::journal::state::ToolVisit>>,
}

impl std::fmt::Debug for FlowAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowAgent")
            .field("process_key", &self.config.process_key())
            .field("reasoner", &self.reasoner.describe())
            .finish_non_exhaustive()
    }
}

impl FlowAgent {
    /// Build the harness of a loaded app. Every policy a control point can use is read
    /// now (a missing one is an error naming it), and every condition of the config is
    /// parsed.
    pub fn new(app: &LoadedApp, reasoner: Arc<dyn Reasoner>) -> Result<FlowAgent, HarnessError> {
        let config = app
            .config
            .clone()
            .ok_or_else(|| HarnessError::NoConfig(app.name.clone()))?;
        let policies = policy::load(&config)?;
        let conditions = compile_conditions(&config)?;
        let process = app.shared_process();
        let governance = process.as_ref().and_then(|p| Governance::new(&config, p));
        Ok(FlowAgent {
            remotes: Arc::new(remote::Remotes::of(&config)),
            toolbox: Arc::new(crate::tools::Toolbox::of(&config)),
            tool_visits: Default::default(),
            governance,
            model: process.as_ref().map(|p| Arc::new(ModelSummary::of(p))),
            process,
            config,
            reasoner,
            policies,
            conditions,
        })
    }

    /// Use these clients of the app's remote agents (those the reasoners' consultations
    /// use too), so that a consultation's remote task is journalled and followed up as a
    /// delegation's is.
    pub fn with_remotes(mut self, remotes: Arc<remote::Remotes>) -> Self {
        self.remotes = remotes;
        self
    }

    /// A replay (`runs replay`) is read-only against remote agents: a delegation is
    /// answered from the journal, never sent.
    pub fn remotes_offline(&self) {
        self.remotes.offline();
    }

    /// A resumed run's remote tasks (its state's `remote_tasks`): the delegations that
    /// were still going when it parked or stopped are followed up on their A2A task, not
    /// sent again.
    pub fn resume_remote<'q>(
        &self,
        tasks: impl IntoIterator<Item = (&'q String, &'q crate::journal::state::RemoteTask)>,
    ) {
        self.remotes.resume_waiting(tasks);
    }

    /// A resumed run's tool conversations that had not finished (its state's
    /// `tool_visits`): each is continued from the journal, its ended calls never made
    /// again.
    pub fn resume_tools<'q>(
        &self,
        visits: impl IntoIterator<Item = (&'q String, &'q crate::journal::state::ToolVisit)>,
    ) {
        let mut mine = self.tool_visits.lock().unwrap_or_else(|e| e.into_inner());
        for (key, visit) in visits {
            mine.insert(key.clone(), visit.clone());
        }
    }

    /// Use these tool sources (shared by the harnesses of one server's runs, so that a
    /// stdio server is started once).
    pub fn with_toolbox(mut self, toolbox: Arc<crate::tools::Toolbox>) -> Self {
        self.toolbox = toolbox;
        self
    }

    /// The app's tool sources.
    pub fn toolbox(&self) -> &Arc<crate::tools::Toolbox> {
        &self.toolbox
    }

    /// Journal the run's remote tasks into `sink` as soon as each agent assigns one
    /// (`remote_task_started`, inside the delegated task's visit).
    pub fn journal_remote_tasks(&self, sink: Arc<dyn crate::journal::EventSink>) {
        self.remotes.journal_to(sink);
    }

    /// Journal the remote tasks of the many runs this harness serves (`serve --http`):
    /// each into the journal `find` gives for its run id.
    pub fn journal_remote_tasks_by_run(&self, find: crate::reason::remote::RunJournals) {
        self.remotes.journal_by_run(find);
    }

    pub fn config(&self) -> &FlowConfig {
        &self.config
    }

    /// The process of the app's model, when it was read.
    pub fn process(&self) -> Option<&Process> {
        self.process.as_deref()
    }

    /// The summary of the app's process model, when it was read.
    pub(crate) fn model(&self) -> Option<&Arc<ModelSummary>> {
        self.model.as_ref()
    }

    pub fn reasoner(&self) -> &Arc<dyn Reasoner> {
        &self.reasoner
    }

    /// What an engine needs to know beyond the model ([`annotations`]).
    pub fn annotations(&self) -> FlowAnnotations {
        annotations(&self.config)
    }
}

/// What an engine needs to know beyond the model: hooked flows (enabled hooks only),
/// agentic tasks, decision gateways and the step budget.
pub fn annotations(config: &FlowConfig) -> FlowAnnotations {
    // One hook per flow: the first enabled one, as `evaluate_hook` finds it.
    let mut hooks: BTreeMap<String, String> = BTreeMap::new();
    for h in config.hooks.iter().filter(|h| h.enabled) {
        if let Some(flow) = &h.location {
            hooks
                .entry(flow.value.clone())
                .or_insert_with(|| h.id.value.clone());
        }
    }
    FlowAnnotations {
        process_key: config.process_key().to_string(),
        hooks,
        agentic_tasks: config
            .tasks
            .iter()
            .filter(|t| t.mode == TaskMode::TaskAgent)
            .map(|t| t.id.value.clone())
            .collect(),
        decision_gateways: config
            .gateways
            .iter()
            .filter(|g| g.mode == GatewayMode::DecisionAgent)
            .map(|g| g.id.value.clone())
            .collect(),
        step_budget: DEFAULT_STEP_BUDGET,
        max_wait_secs: None,
        variables: config
            .variables
            .iter()
            .map(|v| (v.name.value.clone(), v.default.clone()))
            .collect(),
    }
}

fn compile_conditions(config: &FlowConfig) -> Result<Conditions, HarnessError> {
    let parse = |what: String, text: &str| {
        expr::parse(text).map_err(|e| HarnessError::Condition {
            what,
            text: text.to_string(),
            message: e.to_string(),
        })
    };
    let mut out = Conditions::default();
    for gw in &config.gateways {
        // With `human_consultation`, prose in `condition` is the question to ask: the
        // reasoner gets it as the gateway's condition text, and nothing is evaluated.
        if gw.mode == GatewayMode::DecisionAgent
            && !gw.condition_is_question()
            && let Some(c) = &gw.condition
        {
            let e = parse(
                format!("the condition of gateway `{}`", gw.id.value),
                &c.value,
            )?;
            out.gateways.insert(gw.id.value.clone(), e);
        }
        for flow in &gw.flows {
            if let Some(c) = &flow.condition {
                let e = parse(
                    format!(
                        "the condition of flow `{}` (gateway `{}`)",
                        flow.id.value, gw.id.value
                    ),
                    &c.value,
                )?;
                out.flows
                    .insert((gw.id.value.clone(), flow.id.value.clone()), e);
            }
        }
    }
    for hook in &config.hooks {
        if let Some(c) = &hook.condition {
            let e = parse(format!("the guard of hook `{}`", hook.id.value), &c.value)?;
            out.guards.insert(hook.id.value.clone(), e);
        }
    }
    Ok(out)
}

impl ControlPoints for FlowAgent {
    fn resuming(&self, records: &[crate::journal::Record]) {
        let state = crate::journal::FlowState::fold(records.iter());
        // Delegations still going when the run stopped are followed up, never sent again.
        self.resume_remote(state.remote_tasks.iter());
        // Tool conversations left mid-way: continued, their ended calls never made again.
        self.resume_tools(state.tool_visits.iter());
    }

    fn answer(
        &self,
        kind: ControlPointKind,
        element: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
        let id = element.to_string();
        // The requests the answer makes (the model, an agent, a tool) carry the run's
        // trace context (telemetry on; off, nothing is looked up or kept).
        let parent = crate::telemetry::control_point(&ctx.run_id, ctx.idempotency_key.as_deref());
        let answer = async move {
            Ok(match kind {
                ControlPointKind::Task => Answer::Task(task::execute(self, &id, ctx).await?),
                ControlPointKind::Gateway => Answer::Gateway(gateway::route(self, &id, ctx).await?),
                ControlPointKind::Hook => Answer::Hook(hook::evaluate(self, &id, ctx).await?),
            })
        };
        match parent {
            Some(parent) => Box::pin(crate::telemetry::within(parent, answer)),
            None => Box::pin(answer),
        }
    }
}

/// A control-point error for `element`.
pub(crate) fn cp_error(element: &str, message: impl Into<String>) -> ControlPointError {
    ControlPointError {
        element: element.to_string(),
        message: message.into(),
        calls: Vec::new(),
        ..Default::default()
    }
}

/// What asking the reasoner leaves besides its answer: the model calls it made and the
/// digest of the question (what a replay checks).
#[derive(Debug, Default)]
pub(crate) struct Trace {
    pub calls: Vec<ModelCall>,
    pub digest: Option<String>,
}

impl Trace {
    /// Ask the reasoner one question (`ask` gets the request) and keep its trace.
    pub(crate) async fn ask<R, A, F>(req: R, ask: F) -> (Result<A, ReasonError>, Trace)
    where
        R: ContextDigest + Asked,
        F: AsyncFnOnce(R) -> Result<A, ReasonError>,
    {
        let log = req.call_log().clone();
        let digest = context_digest(&req);
        let result = ask(req).await;
        let trace = Trace {
            calls: log.take(),
            digest: Some(digest),
        };
        (result, trace)
    }

    /// A control-point error for `element` that keeps the calls made.
    pub(crate) fn error(self, element: &str, message: impl Into<String>) -> ControlPointError {
        let mut e = cp_error(element, message);
        e.calls = self.calls;
        e
    }

    /// The control-point error for a reasoner's error: a parked question stays one (the
    /// engine keeps the token waiting), anything else stops the control point.
    pub(crate) fn fail(self, element: &str, e: ReasonError) -> ControlPointError {
        let message = e.to_string();
        let mut err = self.error(element, message);
        if let ReasonError::Parked(question) = e {
            err.parked = Some(question);
        }
        err
    }
}

/// A question for a reasoner, with the log its model calls go to.
pub(crate) trait Asked {
    fn call_log(&self) -> &CallLog;
}

/// A question that can be put to a person instead of a model.
pub(crate) trait Escalate: Sized {
    /// The same question, escalated to a person because of `why` (the model failed, or
    /// its proposal must be confirmed), with a fresh call log: no model answers it.
    fn escalated(self, why: String) -> Self;
}

impl Escalate for GatewayRequest {
    fn escalated(mut self, why: String) -> Self {
        self.escalation = Some(why);
        self.calls = CallLog::default();
        self
    }
}

impl Escalate for HookRequest {
    fn escalated(mut self, why: String) -> Self {
        self.escalation = Some(why);
        self.calls = CallLog::default();
        self
    }
}

/// Ask `req` again of a person (`why`): their answer, `Ok(None)` when nobody can answer
/// it now, or the error that stops the control point (a parked question among them).
pub(crate) async fn ask_person<R: Escalate, A>(
    req: R,
    why: String,
    ask: impl AsyncFnOnce(R) -> Result<A, ReasonError>,
) -> Result<Option<A>, ReasonError> {
    match ask(req.escalated(why)).await {
        Ok(answer) => Ok(Some(answer)),
        Err(ReasonError::NoAnswer { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Asked for TaskRequest {
    fn call_log(&self) -> &CallLog {
        &self.calls
    }
}

impl Asked for GatewayRequest {
    fn call_log(&self) -> &CallLog {
        &self.calls
    }
}

impl Asked for HookRequest {
    fn call_log(&self) -> &CallLog {
        &self.calls
    }
}
