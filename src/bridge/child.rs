//! Call activities: a run asks whoever started it to run another process as a **child
//! run** ([`ChildRuns`]). The engine decides when (a token enters a call activity that
//! names a process) and what goes in and out (the call's mappings); the one who started
//! the run knows where the called process lives (an app of the apps folder, or another
//! process of the same BPMN file), which control points answer it (the called app's own
//! harness: its rules, policies and answers) and where its journal goes.

use serde_json::{Map, Value};

use super::BoxFuture;
use crate::vocab::{RunStatus, Untrusted};

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
    fn run_child(&self, call: ChildCall) -> BoxFuture<'static, Result<ChildOutcome, String>>;
}

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
