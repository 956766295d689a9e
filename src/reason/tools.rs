//! What a reasoner sees of a task's tools: [`ToolAccess`], given with a [`TaskRequest`]
//! by the harness, which governs every call ([`ToolGate`]: only the tools the task names,
//! a person confirms a destructive call, every call journalled, none made twice). A
//! reasoner holds the conversation; it never reaches a tool itself.
//!
//! And the question a person answers before such a call: [`ConfirmRequest`], asked of the
//! reasoner chain like any other question ([`Reasoner::confirm`]): answers given with
//! `runs answer`, an answers file or scenario, the person at the terminal, or the run
//! parks. No model ever confirms a call.
//!
//! [`TaskRequest`]: super::TaskRequest
//! [`Reasoner::confirm`]: super::Reasoner::confirm

use std::sync::Arc;

use serde_json::Value;

use super::ReasonError;
use crate::bridge::{BoxFuture, ControlPointContext};
pub use crate::journal::event::ToolOutcome;
use crate::vocab::Decider;

/// A tool as a model is offered it.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    /// The function name the model uses (`<source>__<tool>`).
    pub name: String,
    pub description: String,
    /// The tool's own JSON Schema of its arguments.
    pub parameters: Value,
}

/// One call a model asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct AskedCall {
    pub id: String,
    pub name: String,
    /// As the model wrote them (JSON text, maybe malformed).
    pub arguments: String,
}

/// A turn of a resumed visit's conversation: what the model asked for, and the results of
/// the calls that ended (`None`: not ended; made now, or repeated, as the gate decides).
#[derive(Debug, Clone, PartialEq)]
pub struct ResumedTurn {
    pub content: Option<String>,
    pub calls: Vec<(AskedCall, Option<String>)>,
}

/// How a call ended, as the gate journalled it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallEnded {
    /// `<source>.<tool>`, or the name the model gave when it names no tool offered.
    pub tool: String,
    /// The result as the model is given it.
    pub result: String,
    pub outcome: ToolOutcome,
    /// A person was asked: whether they approved.
    pub approved: Option<bool>,
}

/// How a call ended in a run being replayed (its journal, or a cassette): the gate
/// governs the call as it would now and, where that agrees, gives this result without
/// calling anything; where it does not, the replay has drifted ([`TOOL_DRIFT`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedCall {
    /// `ok`, `error`, `failed`, `refused`, `denied` or `budget`.
    pub outcome: ToolOutcome,
    /// The result the model was given.
    pub result: String,
}

/// Marks the error of a replayed tool call that the config now governs differently.
pub const TOOL_DRIFT: &str = "tool call drifted from the record";

/// The harness's side of a visit's tools.
pub trait ToolGate: Send + Sync {
    /// The tools offered (reaching their sources when first asked). A source that cannot
    /// be reached fails the task (`TOOL_FAILED`).
    fn offered(&self) -> BoxFuture<'_, Result<Vec<OfferedTool>, ReasonError>>;

    /// Whether `name` is one of the offered tools' function names.
    fn offers(&self, name: &str) -> bool;

    /// Calls allowed in the visit.
    fn max_calls(&self) -> u64;

    /// The conversation of this visit before the run stopped (a resumed run): continued,
    /// never asked again. Empty for a fresh visit.
    fn resumed(&self) -> Vec<ResumedTurn>;

    /// The model asks for these calls (one turn): journalled before any is made.
    fn requested<'a>(
        &'a self,
        content: Option<&'a str>,
        calls: &'a [AskedCall],
    ) -> BoxFuture<'a, Result<(), ReasonError>>;

    /// Make call `call` of the current turn (`said`: what the model said with it), or give
    /// its journalled result; with `recorded` (a replay), govern it and give the recorded
    /// result without calling anything. A tool's own error, a refusal or a denial is a
    /// result too (the model may recover); a call that failed, a budget spent, a
    /// confirmation that parks the run or a replay that drifted is an error.
    fn call<'a>(
        &'a self,
        call: &'a AskedCall,
        said: Option<&'a str>,
        recorded: Option<&'a RecordedCall>,
    ) -> BoxFuture<'a, Result<CallEnded, ReasonError>>;
}

/// The tools of a task visit, if it has any: cloned with its request, never compared,
/// digested or serialised (what a task may call is in its config).
#[derive(Clone, Default)]
pub struct ToolAccess(Option<Arc<dyn ToolGate>>);

impl ToolAccess {
    pub fn new(gate: Arc<dyn ToolGate>) -> ToolAccess {
        ToolAccess(Some(gate))
    }

    pub fn gate(&self) -> Option<&Arc<dyn ToolGate>> {
        self.0.as_ref()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

impl std::fmt::Debug for ToolAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ToolAccess(gated)"
        } else {
            "ToolAccess(none)"
        })
    }
}

impl PartialEq for ToolAccess {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A tool call a person confirms before it is made.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmRequest {
    /// The task whose agent asks for it.
    pub task_id: String,
    pub name: Option<String>,
    /// The question's key: `<task visit key>#<call>`.
    pub key: String,
    /// `<source>.<tool>`.
    pub tool: String,
    pub arguments: Value,
    /// Why a person is asked.
    pub why: String,
    /// What the model said with the call.
    pub said: Option<String>,
    pub context: ControlPointContext,
}

/// What a person decided about a tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    pub approved: bool,
    pub decided_by: Decider,
    /// Who (`runs answer --by`, the person at the terminal), when known.
    pub by: Option<String>,
    pub reason: Option<String>,
}

/// The question a tool call parks on, for [`crate::reason::park`].
pub fn confirm_question(req: &ConfirmRequest) -> crate::vocab::Question {
    crate::vocab::Question {
        key: req.key.clone(),
        kind: crate::vocab::ControlPointKind::Task,
        element: req.task_id.clone(),
        name: req.name.clone(),
        offered: crate::vocab::Offered::ToolCall {
            tool: req.tool.clone(),
            arguments: req.arguments.clone(),
            why: req.why.clone(),
            said: req.said.clone(),
        },
        policy: None,
        policy_path: None,
        instruction: None,
        deadline_ms: None,
        on_timeout: None,
        approval: None,
        remote: None,
    }
}

/// Nothing answered: the default of every reasoner that cannot confirm.
pub fn no_confirmation(req: &ConfirmRequest) -> ReasonError {
    ReasonError::no_answer(&req.task_id, "nobody can confirm a tool call here")
}

/// A boxed future of a confirmation.
pub type Confirming<'a> = BoxFuture<'a, Result<Confirmation, ReasonError>>;
