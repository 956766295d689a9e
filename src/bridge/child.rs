//! Call activities: a run asks whoever started it to run another process as a **child
//! run** ([`ChildRuns`]). The engine decides when (a token enters a call activity that
//! names a process) and what goes in and out (the call's mappings); the one who started
//! the run knows where the called process lives (an app of the apps folder, or another
//! process of the same BPMN file), which control points answer it (the called app's own
//! harness: its rules, policies and answers) and where its journal goes.

use serde_json::{Map, Value};

use super::{BoxFuture, TaskOutcome};
use crate::bpmn::CallSpec;
use crate::vocab::{Decider, RunStatus, Taint, TaskStatus, Untrusted};

/// The error code a failed child raises when it names none.
pub const CHILD_FAILED: &str = "CHILD_FAILED";

pub use crate::journal::event::ParentRun;

/// One call of a call activity.
#[derive(Debug, Clone)]
pub struct ChildCall {
    /// The calling run.
    pub parent_run: String,
    /// The call activity.
    pub node: String,
    /// The call's idempotency key (`<run>:<call activity>:<visit>`).
    pub key: String,
    /// The child run's id, derived from the key: a call made again (a resumed parent)
    /// finds the child it started, and resumes it or reads how it ended.
    pub run_id: String,
    /// The called process's key.
    pub process_key: String,
    /// The child's initial variables (the call's `in` mappings applied).
    pub variables: Map<String, Value>,
    /// Which of them are untrusted (the caller's provenance of their sources; `None`:
    /// unknown).
    pub untrusted: Option<Untrusted>,
}

/// How a child run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildOutcome {
    pub run_id: String,
    pub status: RunStatus,
    pub message: Option<String>,
    /// The child's final variables (before the `out` mappings).
    pub variables: Map<String, Value>,
    /// The BPMN error code the child ended with (its uncaught error), if any.
    pub error_code: Option<String>,
    /// Which of its final variables are untrusted (`None`: unknown).
    pub untrusted: Option<Untrusted>,
}

/// Runs called processes as child runs.
pub trait ChildRuns: Send + Sync {
    /// Run (or resume, or read the end of) the child run of `call`. `Err`: the child
    /// could not be run at all (an unknown process, a journal that cannot be written).
    fn run_child(&self, call: ChildCall) -> BoxFuture<'static, Result<ChildOutcome, ChildError>>;
}

/// Why a child run could not be run at all, its causes kept (the host's own error).
pub type ChildError = Box<dyn std::error::Error + Send + Sync>;

/// The id of the child run a call with idempotency key `key` starts: `<run>.<call
/// activity>.<visit>` (the key's `:` become `.`; a run id allows letters, digits, `-`,
/// `_` and `.`).
pub fn child_run_id(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '.'
            }
        })
        .collect()
}

/// The call activity's outcome for how its child ended (or why it could not run): the
/// answer to the call activity's `execute_task`, on every engine.
pub fn call_outcome(spec: &CallSpec, outcome: Result<ChildOutcome, ChildError>) -> TaskOutcome {
    let failed = |error: String, code: String| TaskOutcome {
        status: TaskStatus::Failed,
        outputs: Map::new(),
        variables: Map::new(),
        decided_by: Decider::None,
        reason: None,
        error: Some(error),
        error_code: Some(code),
        calls: Vec::new(),
        digest: None,
        taint: None,
    };
    let child = match outcome {
        Ok(child) => child,
        Err(why) => return failed(crate::diag::chain(&*why), CHILD_FAILED.to_string()),
    };
    match child.status {
        RunStatus::Completed => {
            let variables = spec.outputs.apply(&child.variables);
            // Untrusted in the child, untrusted back (all of them, over-approximated: an
            // outcome carries one taint); unknown provenance counts as untrusted.
            let sources = spec.outputs.sources(&child.variables);
            let taint = match &child.untrusted {
                Some(known) => sources
                    .iter()
                    .find_map(|(_, source)| known.get(*source).cloned())
                    .map(|t| Taint {
                        source: format!("{} (child run {})", t.source, child.run_id),
                        ..t
                    }),
                None => (!variables.is_empty()).then(|| {
                    Taint::input(format!(
                        "from child run {} (provenance unknown)",
                        child.run_id
                    ))
                }),
            };
            TaskOutcome {
                status: TaskStatus::Completed,
                outputs: variables.clone(),
                variables,
                decided_by: Decider::None,
                reason: Some(format!("child run {} completed", child.run_id)),
                error: None,
                error_code: None,
                calls: Vec::new(),
                digest: None,
                taint,
            }
        }
        status => failed(
            format!(
                "child run {} {}: {}",
                child.run_id,
                status.as_str(),
                child.message.as_deref().unwrap_or("no reason given")
            ),
            child.error_code.unwrap_or_else(|| CHILD_FAILED.to_string()),
        ),
    }
}
