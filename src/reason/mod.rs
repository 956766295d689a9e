//! Where judgement comes from. The harness asks a [`Reasoner`] at every control point that
//! its conditions cannot decide; the reasoner answers with outputs, a flow, or a hook
//! action, and says who decided. The harness validates every answer against what is
//! permitted before an engine sees it, so a reasoner cannot widen what a flow may do.
//!
//! Reasoners here: [`ScriptedReasoner`] (answers given in advance, from an answers file or
//! a scenario), [`HumanReasoner`] (a person at the terminal), [`Chain`] (try several in
//! order) and [`NoModel`] (nothing to ask: every question is a [`ReasonError::NoAnswer`]).

pub mod human;
pub mod llm;
pub mod park;
pub mod record;
pub mod remote;
pub mod rules;
pub mod scripted;
pub mod tools;

use std::sync::Arc;

use serde::Serialize;

use crate::bpmn::GatewayKind;
use crate::bridge::{BoxFuture, ControlPointContext, FlowOption, NewTask, Variables};
use crate::expr::Truth;
use crate::vocab::{Decider, HookAction, ModelCall, Question};

pub use human::HumanReasoner;
pub use record::Recorder;
pub use rules::Rules;
pub use scripted::ScriptedReasoner;

/// What to do when nothing can answer a control point.
pub const NO_MODEL_HELP: &str = "configure `llm:` in the flow config, pass --answers FILE or \
     --scenario NAME, or run in a terminal to answer yourself";

/// A source of judgement for the control points conditions cannot decide.
pub trait Reasoner: Send + Sync {
    /// A short description for the stream ("scenario `approve`", "answers file x.yaml",
    /// "human at the terminal").
    fn describe(&self) -> String;
    /// Fulfil a task: answer its declared outputs.
    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>>;
    /// Choose the flow(s) a gateway takes, among those offered.
    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>>;
    /// Choose what a hook does, among the permitted actions.
    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>>;
    /// Whether an answer given in advance (a scenario, an answers file, the answers a
    /// caller gave a child run) is there for this visit of the task, so that [`task`]
    /// would be answered without judgement. A command agent's task runs its CLI unless
    /// one is (docs/scenarios: command agents). Wrappers ask what they wrap.
    ///
    /// [`task`]: Reasoner::task
    fn answers_in_advance(&self, _req: &TaskRequest) -> bool {
        false
    }
    /// Confirm or deny a tool call a task's agent asks for (only people, and answers a
    /// person gave in advance, confirm: the default is no answer).
    fn confirm(&self, req: tools::ConfirmRequest) -> tools::Confirming<'_> {
        Box::pin(async move { Err(tools::no_confirmation(&req)) })
    }
}

/// A policy document: where it was read from and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Policy {
    /// The resolved path, for display.
    pub path: String,
    pub text: String,
}

impl Policy {
    /// The first `lines` lines of the policy, and how many lines were left out.
    pub fn excerpt(&self, lines: usize) -> (String, usize) {
        let all: Vec<&str> = self.text.lines().collect();
        if all.len() <= lines {
            return (all.join("\n"), 0);
        }
        (all[..lines].join("\n"), all.len() - lines)
    }
}

/// The model calls made for one control-point question, shared by the clones of its
/// request: a reasoner that calls a model appends each call, and the harness reads them
/// after the answer (or the failure) to hand them to the engine, which journals them. Not
/// part of a request's identity: it never compares, digests or serialises.
#[derive(Clone, Default)]
pub struct CallLog(Arc<std::sync::Mutex<Vec<ModelCall>>>);

impl CallLog {
    pub fn push(&self, call: ModelCall) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(call);
    }

    /// The calls so far, leaving the log empty.
    pub fn take(&self) -> Vec<ModelCall> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for CallLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CallLog({} calls)", self.len())
    }
}

impl PartialEq for CallLog {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A task to fulfil.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRequest {
    pub task_id: String,
    /// The task's name in the model.
    pub name: Option<String>,
    /// The agent's name in the config (`agent.name`).
    pub agent: Option<String>,
    pub instruction: Option<String>,
    pub policy: Option<Policy>,
    /// The task's inputs: `input_mapping` applied to the process variables (all the
    /// variables when the task has no `input_mapping`).
    pub inputs: Variables,
    /// The output keys the task must answer (the keys of `output_mapping`), in order.
    pub outputs: Vec<String>,
    /// Each output's type: the declared default of the variable it is mapped to (an
    /// output mapped to a variable without a typed default takes any value). A value of
    /// another type fails the task; a person is asked again.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub output_kinds: std::collections::BTreeMap<String, crate::vocab::VarKind>,
    /// The BPMN error codes a model may raise instead of answering (the task's `raises`);
    /// empty: a model raises none (answers given in advance and people may raise any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub raises: Vec<String>,
    pub context: ControlPointContext,
    #[serde(skip)]
    pub calls: CallLog,
    /// The tools the task's agent may call at this visit, governed by the harness.
    #[serde(skip)]
    pub tools: tools::ToolAccess,
}

/// How one flow's condition evaluated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowTruth {
    pub flow: String,
    pub condition: String,
    pub truth: Truth,
}

/// A gateway to route.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GatewayRequest {
    pub gateway_id: String,
    pub name: Option<String>,
    pub kind: GatewayKind,
    pub policy: Option<Policy>,
    /// The gateway-level condition from the config, when there is one.
    pub condition: Option<String>,
    /// How that condition evaluated (UNKNOWN when a value it needs is missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition_truth: Option<crate::expr::Truth>,
    /// The flows to choose from (with their conditions and config labels).
    pub flows: Vec<FlowOption>,
    /// How the conditions evaluated, for the flows that have one.
    pub evaluations: Vec<FlowTruth>,
    /// Whether several flows may be chosen (inclusive gateways).
    pub multiple: bool,
    /// Set when the model failed and a person is asked instead (`on_failure: ask`): why.
    #[serde(skip)]
    pub escalation: Option<String>,
    /// Set at a guardrail gateway: who may decide it (empty: anyone). The person at the
    /// terminal answers only when they are one of them.
    #[serde(skip)]
    pub approvers: Option<Vec<String>>,
    pub context: ControlPointContext,
    #[serde(skip)]
    pub calls: CallLog,
}

/// A hook to evaluate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookRequest {
    pub hook_id: String,
    /// The sequence flow the hook sits on.
    pub flow_id: String,
    /// The flow's name in the model.
    pub name: Option<String>,
    pub policy: Option<Policy>,
    pub instruction: Option<String>,
    /// The actions offered: those the permissions allow (`continue` always) that the hook
    /// can take now (skip_to / remove_node need a target left, swap_nodes two, add_node an
    /// insertable task).
    pub permitted: Vec<HookAction>,
    /// The nodes skip_to / remove_node / swap_nodes may name.
    pub allowed_targets: Vec<String>,
    /// The hooked flow's own target: never a skip_to target (going there is `continue`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_target: Option<String>,
    /// The variables `state_updates` may set (the hook's `may_set`); nothing else.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settable: Vec<crate::vocab::Settable>,
    /// Set when the model failed and a person is asked instead (`on_failure: ask`): why.
    /// Models do not answer an escalated request.
    #[serde(skip)]
    pub escalation: Option<String>,
    /// The tasks add_node may insert (a reasoned add_node must name one of them).
    pub insertable_tasks: Vec<NewTask>,
    pub context: ControlPointContext,
    #[serde(skip)]
    pub calls: CallLog,
}

impl HookRequest {
    /// The nodes a skip_to may name: the allowed targets but the hooked flow's own.
    pub fn skip_targets(&self) -> impl Iterator<Item = &String> {
        self.allowed_targets
            .iter()
            .filter(|t| Some(*t) != self.flow_target.as_ref())
    }
}

/// A task's answer: its outputs, or a BPMN error it raises instead (`error: CODE`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskAnswer {
    pub outputs: Variables,
    pub reason: Option<String>,
    pub decided_by: Decider,
    /// The BPMN error the answer raises (its outputs are then not written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raised: Option<crate::vocab::RaisedError>,
}

/// A gateway's answer: the flow ids to take.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GatewayAnswer {
    pub flows: Vec<String>,
    pub reason: Option<String>,
    pub decided_by: Decider,
}

/// The task an add_node answer inserts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AddTask {
    /// One of the hook's insertable tasks, by id.
    Insertable(String),
    /// A task described in full.
    New(NewTask),
}

impl AddTask {
    pub fn id(&self) -> &str {
        match self {
            AddTask::Insertable(id) => id,
            AddTask::New(t) => &t.id,
        }
    }
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookAnswer {
    pub action: HookAction,
    /// skip_to / remove_node: the node.
    pub target: Option<String>,
    /// swap_nodes: the two nodes.
    pub swap: Option<(String, String)>,
    /// add_node: the task to insert.
    pub add: Option<AddTask>,
    pub state_updates: Variables,
    pub message: Option<String>,
    pub reason: Option<String>,
    pub decided_by: Decider,
}

impl HookAnswer {
    /// An answer with just an action.
    pub fn action(action: HookAction, decided_by: Decider) -> Self {
        HookAnswer {
            action,
            target: None,
            swap: None,
            add: None,
            state_updates: Variables::new(),
            message: None,
            reason: None,
            decided_by,
        }
    }
}

/// Why a reasoner gave no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReasonError {
    /// Nothing answers this control point (a [`Chain`] then asks the next reasoner).
    #[error("no answer for control point `{element}`: {help}")]
    NoAnswer { element: String, help: String },
    /// The answer could not be used.
    #[error("invalid answer for control point `{element}`: {message}")]
    Invalid { element: String, message: String },
    /// Answers given in advance could not be read (a bad answers document).
    #[error("{source_name}: {message}")]
    Load {
        source_name: String,
        message: String,
    },
    /// A model was asked but gave no usable answer (invalid answers up to the attempt
    /// limit, an endpoint that failed after its retries, a budget spent). The control
    /// point's `on_failure` decides what happens next.
    #[error("the model gave no usable answer for control point `{element}`: {message}")]
    Failed {
        element: String,
        message: String,
        /// The BPMN error code a task raises for this failure ([`crate::vocab::error_code`]).
        code: &'static str,
    },
    #[error("{0}")]
    Io(String),
    /// A person must answer and none can now: the question parks (see
    /// [`crate::vocab::Question`]); the run waits for `runs answer`.
    #[error("control point `{}` waits for a person: `cuga-flo runs answer`", .0.element)]
    Parked(Box<Question>),
}

impl ReasonError {
    pub fn no_answer(element: impl Into<String>, help: impl Into<String>) -> Self {
        ReasonError::NoAnswer {
            element: element.into(),
            help: help.into(),
        }
    }

    pub fn invalid(element: impl Into<String>, message: impl Into<String>) -> Self {
        ReasonError::Invalid {
            element: element.into(),
            message: message.into(),
        }
    }
}

/// Someone a model may consult (the `consult_user` tool): a person at the terminal, or a
/// remote agent ([`remote::RemoteConsultant`]).
pub trait Consult: Send + Sync {
    /// Ask the consultation's question; the answer as text. What the consultation did (a
    /// remote exchange's steps) goes into its `log`, which is journalled. A consultation
    /// that goes on past its agent's `wait` is [`ReasonError::Parked`], with a question
    /// that names the remote task (the consulting reasoner fills in what it offers).
    fn consult(&self, c: Consultation) -> BoxFuture<'_, Result<Consulted, ReasonError>>;

    /// The conversation a model had when it consulted at the control point with `key`
    /// and the run parked on that consultation (journalled with the remote task): a
    /// resumed run continues it instead of asking the model again.
    fn conversation(&self, _key: &str) -> Option<serde_json::Value> {
        None
    }

    /// The consulting model has decided at this visit (`key`, else `run_id` and
    /// `element`), or failed to: a consultation still waiting for its answer to a
    /// question asked back is given up (its remote task cancelled, journalled in `log`).
    fn settle<'a>(
        &'a self,
        _run_id: &'a str,
        _element: &'a str,
        _key: Option<&'a str>,
        _log: &'a CallLog,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// What a consultation came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Consulted {
    /// The person's answer.
    Answer(String),
    /// The person asks a question back before answering (a remote consultant's
    /// `input-required`): the consulting model's next `consult_user` at the same visit
    /// is its answer, sent to them in the same remote task.
    AskedBack(String),
}

/// One `consult_user` call.
#[derive(Debug, Clone)]
pub struct Consultation {
    /// The control point that consults.
    pub element: String,
    pub question: String,
    pub run_id: String,
    /// The control point's idempotency key (its visit).
    pub key: Option<String>,
    /// What the consulting model said so far (its turns after the prompt), kept with a
    /// remote task that parks the run.
    pub conversation: Option<serde_json::Value>,
    pub log: CallLog,
}

/// Nothing to ask: every control point is [`ReasonError::NoAnswer`], with help on how to
/// provide judgement.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoModel;

impl Reasoner for NoModel {
    fn describe(&self) -> String {
        "no reasoner".to_string()
    }

    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move { Err(ReasonError::no_answer(req.task_id, NO_MODEL_HELP)) })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move { Err(ReasonError::no_answer(req.gateway_id, NO_MODEL_HELP)) })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move { Err(ReasonError::no_answer(req.hook_id, NO_MODEL_HELP)) })
    }
}

/// Reasoners tried in order: a [`ReasonError::NoAnswer`] falls through to the next; an
/// answer or any other error stops. When none answers, the NoAnswer names every reason.
#[derive(Clone)]
pub struct Chain {
    reasoners: Vec<Arc<dyn Reasoner>>,
}

impl Chain {
    pub fn new(reasoners: Vec<Arc<dyn Reasoner>>) -> Self {
        Chain { reasoners }
    }

    pub fn reasoners(&self) -> &[Arc<dyn Reasoner>] {
        &self.reasoners
    }

    async fn first<T, F>(&self, element: &str, mut ask: F) -> Result<T, ReasonError>
    where
        F: FnMut(&Arc<dyn Reasoner>) -> BoxFuture<'_, Result<T, ReasonError>>,
    {
        let mut helps: Vec<String> = Vec::new();
        for r in &self.reasoners {
            match ask(r).await {
                Err(ReasonError::NoAnswer { help, .. }) => {
                    if !helps.contains(&help) {
                        helps.push(help);
                    }
                }
                other => return other,
            }
        }
        if helps.is_empty() {
            helps.push(NO_MODEL_HELP.to_string());
        }
        Err(ReasonError::no_answer(element, helps.join("; ")))
    }
}

impl Reasoner for Chain {
    fn describe(&self) -> String {
        if self.reasoners.is_empty() {
            return NoModel.describe();
        }
        self.reasoners
            .iter()
            .map(|r| r.describe())
            .collect::<Vec<_>>()
            .join(", then ")
    }

    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move {
            let element = req.task_id.clone();
            self.first(&element, |r| r.task(req.clone())).await
        })
    }

    fn answers_in_advance(&self, req: &TaskRequest) -> bool {
        self.reasoners.iter().any(|r| r.answers_in_advance(req))
    }

    fn confirm(&self, req: tools::ConfirmRequest) -> tools::Confirming<'_> {
        Box::pin(async move {
            let element = req.task_id.clone();
            self.first(&element, |r| r.confirm(req.clone())).await
        })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            let element = req.gateway_id.clone();
            self.first(&element, |r| r.gateway(req.clone())).await
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            let element = req.hook_id.clone();
            self.first(&element, |r| r.hook(req.clone())).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway_request() -> GatewayRequest {
        GatewayRequest {
            gateway_id: "G".into(),
            name: None,
            kind: GatewayKind::Exclusive,
            policy: None,
            condition: None,
            condition_truth: None,
            flows: vec![],
            evaluations: vec![],
            multiple: false,
            escalation: None,
            approvers: None,
            context: ControlPointContext::default(),
            calls: Default::default(),
        }
    }

    #[tokio::test]
    async fn no_model_says_how_to_get_an_answer() {
        let err = NoModel.gateway(gateway_request()).await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`G`"), "{text}");
        assert!(text.contains("--answers FILE"), "{text}");
    }

    #[tokio::test]
    async fn chain_falls_through_no_answer_and_stops_on_an_answer() {
        let doc = serde_json::json!({"answers": {"G": {"flow": "F2"}}});
        let scripted = ScriptedReasoner::from_value(doc, "scenario `s`").unwrap();
        let chain = Chain::new(vec![Arc::new(NoModel), Arc::new(scripted)]);
        let answer = chain.gateway(gateway_request()).await.unwrap();
        assert_eq!(answer.flows, vec!["F2".to_string()]);
        assert_eq!(answer.decided_by, Decider::Scripted);
        assert!(chain.describe().contains("scenario `s`"));
    }

    #[tokio::test]
    async fn chain_of_no_answers_is_no_answer_with_every_help() {
        let doc = serde_json::json!({"answers": {}});
        let scripted = ScriptedReasoner::from_value(doc, "scenario `s`").unwrap();
        let chain = Chain::new(vec![Arc::new(scripted), Arc::new(NoModel)]);
        let err = chain.gateway(gateway_request()).await.unwrap_err();
        let ReasonError::NoAnswer { element, help } = err else {
            panic!("expected NoAnswer")
        };
        assert_eq!(element, "G");
        assert!(help.contains("scenario `s`"), "{help}");
        assert!(help.contains("configure `llm:`"), "{help}");
    }

    #[test]
    fn policy_excerpt_counts_the_rest() {
        let p = Policy {
            path: "p.md".into(),
            text: "a\nb\nc\n".into(),
        };
        assert_eq!(p.excerpt(2), ("a\nb".to_string(), 1));
        assert_eq!(p.excerpt(5), ("a\nb\nc".to_string(), 0));
    }
}
