//! What happens in a run, as events. A run's journal is the ordered list of its
//! [`Record`]s; its state ([`super::FlowState`]) is a fold over them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::vocab::{Decider, HookAction, ModelCall, RunStatus, TaskStatus};

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
        /// The digest of the app's files the run ran ([`crate::app::LoadedApp::digest`]),
        /// when its owner knows them; part of the journal's anchor.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app_digest: Option<String>,
    },
    /// A token entered a node.
    NodeEntered {
        node: String,
        kind: String,
        name: Option<String>,
        token: u64,
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
        duration_ms: u64,
        /// The digest of the question the reasoner was asked, when one was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
    },
    GatewayRouted {
        node: String,
        flows: Vec<String>,
        decided_by: Decider,
        reason: Option<String>,
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
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
    },
    /// A model was called at a control point (written before the control point's own
    /// event; one per call: re-asks and tool rounds are calls).
    ModelCalled {
        /// The task, gateway or hook.
        node: String,
        #[serde(flatten)]
        call: ModelCall,
    },
    /// The live topology changed (SWAP_NODES, REMOVE_NODE, ADD_NODE).
    TopologyChanged { action: HookAction, detail: String },
    /// Variables set outside a task (hook state updates, inputs).
    VariablesSet {
        source: String,
        values: Map<String, Value>,
    },
    RunFinished {
        status: RunStatus,
        message: Option<String>,
        variables: Map<String, Value>,
        /// Node entries counted against the step budget.
        steps: u64,
    },
}
