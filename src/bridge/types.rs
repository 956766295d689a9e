//! The contract between an engine (which moves tokens) and the harness (which reasons):
//! what a control point is asked ([`ControlPointContext`]) and what it answers
//! ([`TaskOutcome`], [`GatewayDecision`], [`HookDecision`]). These types are the MCP
//! tools' arguments and results, so they are plain data with JSON schemas.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use super::shared::{History, HistoryView, ScopedVariables};
use crate::bpmn::{Flow, Process};
pub use crate::vocab::{Decider, HookAction, Taint, TaskStatus, Untrusted, record_provenance};
use crate::vocab::{ModelCall, Question};

/// Process variables: a JSON object.
pub type Variables = Map<String, Value>;

/// Everything a control point knows when it is asked.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ControlPointContext {
    /// The run (unique per run, never the process key).
    pub run_id: String,
    pub process_key: String,
    /// The task, gateway or hook being evaluated (for hooks: the hook id).
    pub element_id: String,
    pub element_name: Option<String>,
    // `variables`, `history` and `model` are shared, not copied, by the contexts of one
    // run (the JSON is the same as for plain values).
    /// The process variables as they are now (inside a multi-instance activity, with the
    /// instance's own over them).
    #[serde(default)]
    pub variables: ScopedVariables,
    /// The ids of the nodes entered so far, in order: all of them, or (over MCP) the most
    /// recent [`HISTORY_WINDOW`] with `history_len` counting all.
    #[serde(default)]
    pub history: History,
    /// How many nodes were entered in all, when `history` holds only the most recent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_len: Option<u64>,
    /// A summary of the live process model. May be left out (or null) while the live
    /// topology is still the process registered under `process_key`: the bridge then
    /// supplies the summary of that process. (An empty summary: the harness uses the app's
    /// model.)
    // Engines leave it out only for control points that say they restore it
    // (`ControlPoints::restores_unchanged_model`); read it with `ControlPointContext::model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Arc<ModelSummary>>,
    /// Task instruction (tasks) or hook instruction (hooks), when the config has one.
    pub instruction: Option<String>,
    /// Gateways: the outgoing flows to choose from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowOption>,
    /// Hooks: the sequence flow the token is about to traverse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge: Option<EdgeInfo>,
    /// Hooks: nodes already executed (actions may not touch them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub executed: Vec<String>,
    /// Provenance: the variables that hold untrusted data, with where each came from, as
    /// the engine recorded them (run inputs, and the answers the harness marked with a
    /// [`Taint`]). `None`: the engine records no provenance, and the harness counts as
    /// untrusted every variable whose value differs from its declared default (an
    /// over-approximation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted: Option<Arc<Untrusted>>,
    /// The call's idempotency key, `<run id>:<element>:<visit>` (visit 1, 2, ... per
    /// element in the run). A call asked again after a crash carries the same key, so a
    /// reasoner or a task agent can recognise (and not repeat) a side effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// A task's call made in one instance of a multi-instance activity (the task's own
    /// instance, or the sub-process instance it runs in; the innermost): its
    /// `loop_counter` (1, 2, ...) and how many instances the activity runs. Absent for
    /// every other call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<crate::vocab::InstanceVisit>,
    /// An engine that owns its tokens (an external engine): the records of its own made
    /// since its previous call, which cuga-flo cannot derive from `history` (docs/bridge.md
    /// §12.2). Absent for every other engine; the harness does not read them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<EngineRecord>,
}

/// A journal record an engine that owns its tokens made itself, placed among its node
/// entries: `at` entries of its path come before it (docs/bridge.md §12.2). The record
/// is the journal's own ([`crate::journal::Event`], flattened beside `at`); cuga-flo
/// journals `event_thrown`, `message_received`, `child_started` and `variables_set` (not
/// a hook's: those it derives) records as they are, takes a `node_entered` record as the
/// entry `at` of the path (its `instance`), and ignores the other kinds (it derives them
/// itself).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct EngineRecord {
    /// How many node entries of the run's path come before the record (for a
    /// `node_entered` record: its index in the path).
    pub at: u64,
    /// The record, in the journal's shape (`{"event": "event_thrown", ...}`).
    #[serde(flatten)]
    #[schemars(with = "Map<String, Value>")]
    pub event: crate::journal::Event,
}

/// An empty summary: what a context without one reads.
static NO_MODEL: ModelSummary = ModelSummary {
    process_id: String::new(),
    process_name: None,
    nodes: Vec::new(),
    flows: Vec::new(),
};

/// The most recent node entries a context carries over a transport: a control point's
/// cost does not grow with the run's length (the full path is in the journal).
pub const HISTORY_WINDOW: usize = 256;

impl ControlPointContext {
    /// How many nodes were entered in all (`history` may hold only the latest).
    pub fn history_total(&self) -> u64 {
        self.history_len.unwrap_or(self.history.len() as u64)
    }

    /// Keep only the most recent `window` entries of `history`, counting all in
    /// `history_len` (what a transport sends).
    pub fn window_history(&mut self, window: usize) {
        let len = self.history.len();
        if len > window {
            let total = self.history_total();
            let recent = self.history.view()[len - window..].to_vec();
            self.history = History::from(recent);
            self.history_len = Some(total);
        }
    }

    /// The model summary the context carries (empty when it carries none).
    pub fn model(&self) -> &ModelSummary {
        self.model.as_deref().unwrap_or(&NO_MODEL)
    }
}

/// A compact view of the process model.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ModelSummary {
    pub process_id: String,
    pub process_name: Option<String>,
    pub nodes: Vec<NodeInfo>,
    pub flows: Vec<EdgeInfo>,
}

impl ModelSummary {
    /// The summary of `process` as an engine starts it, before any hook changed it: every
    /// node and flow in document order, conditions as [`EdgeInfo::condition_of`] gives them.
    pub fn of(process: &Process) -> Self {
        ModelSummary {
            process_id: process.id.clone(),
            process_name: process.name.clone(),
            nodes: process
                .nodes
                .iter()
                .map(|n| NodeInfo {
                    id: n.id.clone(),
                    kind: n.kind.tag().to_string(),
                    name: n.name.clone(),
                })
                .collect(),
            flows: process.flows.iter().map(EdgeInfo::of).collect(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct NodeInfo {
    pub id: String,
    /// The BPMN element's local name (`userTask`, `exclusiveGateway`, ...).
    pub kind: String,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct EdgeInfo {
    pub id: String,
    pub source: String,
    pub target: String,
    pub name: Option<String>,
    pub condition: Option<String>,
}

impl EdgeInfo {
    /// A BPMN flow as the context shows it.
    pub fn of(flow: &Flow) -> EdgeInfo {
        EdgeInfo {
            id: flow.id.clone(),
            source: flow.source.clone(),
            target: flow.target.clone(),
            name: flow.name.clone(),
            condition: EdgeInfo::condition_of(flow),
        }
    }

    /// The condition of a BPMN flow as the engine sees it: its body, trimmed, unless that
    /// is empty. A body whose `language` (or the document's `expressionLanguage`) names
    /// FEEL is marked FEEL the way Camunda 8 writes it, with a leading `=`, so that the
    /// text alone says how to read it wherever it is evaluated.
    pub fn condition_of(flow: &Flow) -> Option<String> {
        let c = flow.condition.as_ref()?;
        let body = c.body.trim();
        if body.is_empty() {
            return None;
        }
        let feel = crate::expr::Language::of_attribute(c.language.as_deref())
            == crate::expr::Language::Feel;
        Some(if feel && !body.starts_with('=') {
            format!("={body}")
        } else {
            body.to_string()
        })
    }
}

/// One outgoing flow of a gateway, as offered to the router.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct FlowOption {
    pub id: String,
    pub target: String,
    pub name: Option<String>,
    /// The condition that applies (the config's, else the model's).
    pub condition: Option<String>,
    /// The label the config gives this choice.
    pub decision: Option<String>,
    /// The gateway's default flow (false when left out).
    #[serde(default)]
    pub is_default: bool,
}

impl FlowOption {
    /// A flow offered to the router (no config label yet).
    pub fn of(edge: &EdgeInfo, is_default: bool) -> FlowOption {
        FlowOption {
            id: edge.id.clone(),
            target: edge.target.clone(),
            name: edge.name.clone(),
            condition: edge.condition.clone(),
            decision: None,
            is_default,
        }
    }
}

/// What `execute_task` answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TaskOutcome {
    pub status: TaskStatus,
    /// The task's outputs as answered.
    pub outputs: Variables,
    /// Process variables to set (after `output_mapping`).
    pub variables: Variables,
    pub decided_by: Decider,
    pub reason: Option<String>,
    /// Why the task failed.
    pub error: Option<String>,
    /// A failed task: the BPMN error code it raises (an error boundary event catching it
    /// takes the token; none: the run fails). Left out: [`crate::vocab::error_code::TASK_FAILED`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// The model calls behind this answer, in order (each is journalled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ModelCall>,
    /// The digest of the question a reasoner was asked (`reason::record::context_digest`),
    /// when one was: what `runs replay` checks a re-execution against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Set when `variables` are untrusted (a model answered while its context held
    /// untrusted data): the engine records it for each variable the task writes. `None`:
    /// they are as trusted as `decided_by`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taint: Option<Taint>,
}

/// What `route_gateway` answers: the flows to take (one for exclusive gateways).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct GatewayDecision {
    pub flows: Vec<String>,
    pub decided_by: Decider,
    pub reason: Option<String>,
    /// The model calls behind this answer, in order (each is journalled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ModelCall>,
    /// The digest of the question a reasoner was asked (`reason::record::context_digest`),
    /// when one was: what `runs replay` checks a re-execution against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// A task a hook inserts (ADD_NODE).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct NewTask {
    pub id: String,
    pub name: Option<String>,
    pub instruction: Option<String>,
    /// A remote agent that fulfils it.
    pub agent: Option<String>,
}

/// What `evaluate_hook` answers: the action to apply, already checked against the
/// permissions (a denied action arrives as `continue` with `denied` set).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct HookDecision {
    pub action: HookAction,
    /// SKIP_TO: the node to jump to. REMOVE_NODE: the node to remove.
    pub target: Option<String>,
    /// SWAP_NODES: the two nodes to swap.
    pub swap: Option<(String, String)>,
    /// ADD_NODE: the task to insert before the edge's target.
    pub add: Option<NewTask>,
    /// Variables to set before the action applies.
    pub state_updates: Variables,
    pub message: Option<String>,
    pub decided_by: Decider,
    pub reason: Option<String>,
    /// The action that was asked for but not permitted.
    pub denied: Option<HookAction>,
    /// When set, the run must fail (a denied action under `on_denied: fail`).
    pub fail_run: bool,
    /// The model calls behind this answer, in order (each is journalled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ModelCall>,
    /// The digest of the question a reasoner was asked (`reason::record::context_digest`),
    /// when one was: what `runs replay` checks a re-execution against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Set when `state_updates` are untrusted (a model answered while its context held
    /// untrusted data): the engine records it for each variable they set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taint: Option<Taint>,
}

impl HookDecision {
    /// Go on along the edge, with a reason.
    pub fn proceed(decided_by: Decider, reason: impl Into<Option<String>>) -> Self {
        HookDecision {
            action: HookAction::Continue,
            target: None,
            swap: None,
            add: None,
            state_updates: Variables::new(),
            message: None,
            decided_by,
            reason: reason.into(),
            denied: None,
            fail_run: false,
            calls: Vec::new(),
            digest: None,
            taint: None,
        }
    }
}

/// Why a control-point call could not be answered.
#[derive(
    Debug, Clone, Default, thiserror::Error, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[error("{element}: {message}")]
pub struct ControlPointError {
    pub element: String,
    pub message: String,
    /// The model calls made before the failure (each is journalled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ModelCall>,
    /// Not a failure: the control point needs a person and none could answer now. The
    /// engine keeps the token waiting and journals the question; the run parks when
    /// nothing else can move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parked: Option<Box<Question>>,
}

/// What an engine needs to know about an app beyond its BPMN model: which flows carry
/// hooks, and the run's limits. Answered by the registry tool `get_flow_annotations`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct FlowAnnotations {
    pub process_key: String,
    /// Hooked sequence flows: flow id → hook id (enabled hooks only).
    pub hooks: std::collections::BTreeMap<String, String>,
    /// Tasks a TaskAgent fulfils (the others pass through).
    pub agentic_tasks: Vec<String>,
    /// Gateways a DecisionAgent may route.
    pub decision_gateways: Vec<String>,
    /// Node entries allowed before the run fails (loops are bounded by this).
    pub step_budget: u64,
    /// How long (seconds) an engine waits in-process for a timer; a timer due later parks
    /// the run (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait_secs: Option<u64>,
    /// The config's initial variables (`variables:` defaults); a run's own variables
    /// override them.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub variables: Variables,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpmn::Condition;

    fn flow(language: Option<&str>, body: &str) -> Flow {
        Flow {
            id: "f".into(),
            name: None,
            source: "a".into(),
            target: "b".into(),
            condition: Some(Condition {
                language: language.map(str::to_owned),
                body: body.into(),
                span: Default::default(),
            }),
            span: Default::default(),
            parent: None,
        }
    }

    /// A condition under a FEEL `language` reaches the harness marked `=`, so the text
    /// alone says how to read it; other conditions pass unchanged.
    #[test]
    fn a_feel_language_condition_is_offered_marked_with_equals() {
        let feel = "https://www.omg.org/spec/DMN/20191111/FEEL/";
        let cases = [
            (
                Some(feel),
                " Vacation Approval = \"Approved\" ",
                Some("=Vacation Approval = \"Approved\""),
            ),
            (Some(feel), "=approved", Some("=approved")),
            (Some("FEEL"), "x > 1", Some("=x > 1")),
            (None, "=approved", Some("=approved")),
            (None, "${x} > 1", Some("${x} > 1")),
            (
                Some("http://www.w3.org/1999/XPath"),
                "${x} > 1",
                Some("${x} > 1"),
            ),
            (Some(feel), "  ", None),
        ];
        for (language, body, want) in cases {
            assert_eq!(
                EdgeInfo::condition_of(&flow(language, body)).as_deref(),
                want,
                "{language:?} {body:?}"
            );
        }
    }
}
