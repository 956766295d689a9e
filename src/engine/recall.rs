//! What a journalled record answered at its control point, for every engine that resumes
//! a run by answering its control points from the journal: the native engine's replay and
//! the witness of engines that own their tokens (a resumed run on Flowable or Kogito).

use crate::bridge::{ControlPointError, GatewayDecision, HookDecision, TaskOutcome};
use crate::journal::Event;

/// What a journalled record answered at its control point: the answer as the harness
/// gave it then (its model calls are journalled already, and are not given again). The
/// native engine's replay and the witness of engines that own their tokens (a resumed run
/// on Flowable or Kogito) both answer from it, by idempotency key.
pub enum Recalled {
    Task(TaskOutcome),
    Gateway(GatewayDecision),
    Hook(Result<HookDecision, ControlPointError>),
    Timer,
    /// A message or signal delivered from outside (one thrown within the run is thrown
    /// again by the replay itself).
    Message,
}

/// The answer `record` holds, if it answers a control point (or fires a timer).
pub fn recall(record: &Event) -> Option<Recalled> {
    Some(match record.clone() {
        Event::TaskFinished {
            status,
            outputs,
            variables,
            decided_by,
            reason,
            error,
            error_code,
            digest,
            taint,
            ..
        } => Recalled::Task(TaskOutcome {
            status,
            outputs,
            variables,
            decided_by,
            reason,
            error,
            error_code,
            calls: Vec::new(),
            digest,
            taint,
        }),
        Event::GatewayRouted {
            flows,
            decided_by,
            reason,
            digest,
            ..
        } => Recalled::Gateway(GatewayDecision {
            flows,
            decided_by,
            reason,
            calls: Vec::new(),
            digest,
        }),
        Event::HookEvaluated {
            hook,
            answer: Some(answer),
            ..
        } => Recalled::Hook(serde_json::from_value::<HookDecision>(answer).map_err(|e| {
            ControlPointError {
                element: hook,
                message: format!("the journalled answer cannot be read: {e}"),
                ..Default::default()
            }
        })),
        Event::TimerFired { .. } => Recalled::Timer,
        Event::MessageReceived {
            thrown_by: None, ..
        } => Recalled::Message,
        _ => return None,
    })
}
