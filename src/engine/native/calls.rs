//! Control-point calls for tasks and gateways, and what the engine does with their
//! answers. Each call runs as its own tokio task; its [`Answer`] names the token that
//! waits for it, so an answer for a token discarded meanwhile is dropped.

use std::time::Instant;

use serde_json::Map;

use super::event_subprocess::LISTENER;
use super::messages::Received;
use super::replay::Asked;
use super::run::Run;
use super::throws::Throw;
use super::tokens::{At, TokenId};
use crate::bpmn::GatewayKind;
use crate::bridge::{ControlPointError, FlowOption, GatewayDecision, HookDecision, TaskOutcome};
use crate::engine::EngineError;
use crate::engine::check_choice;
use crate::journal::Event;
use crate::journal::event::ThrownKind;
use crate::semantics::topology::LiveNode;
use crate::vocab::{Decider, ModelCall, TaskStatus, error_code};

/// The answer to one control-point call.
pub(super) enum Answer {
    Task {
        token: TokenId,
        node: String,
        key: String,
        result: Result<TaskOutcome, ControlPointError>,
        duration_ms: u64,
    },
    Gateway {
        token: TokenId,
        node: String,
        key: String,
        kind: GatewayKind,
        result: Result<GatewayDecision, ControlPointError>,
        duration_ms: u64,
    },
    Hook {
        token: TokenId,
        flow: String,
        hook: String,
        key: String,
        result: Result<HookDecision, ControlPointError>,
        duration_ms: u64,
    },
    /// A timer is due (see [`super::timers`]).
    Timer {
        token: TokenId,
        node: String,
        key: String,
    },
    /// A message or signal delivered to the wait `key` (see [`super::messages`]).
    Message { key: String, received: Received },
    /// A call activity's child run parked (see [`super::call`]).
    ChildWaiting {
        token: TokenId,
        key: String,
        run_id: String,
    },
}

impl Answer {
    /// The token waiting for the answer, and the call's idempotency key.
    fn waiter(&self) -> (TokenId, &str) {
        match self {
            Answer::Task { token, key, .. }
            | Answer::Gateway { token, key, .. }
            | Answer::Hook { token, key, .. }
            | Answer::Timer { token, key, .. }
            | Answer::ChildWaiting { token, key, .. } => (*token, key),
            // Applied by its wait's key: the wait knows its token.
            Answer::Message { key, .. } => (0, key),
        }
    }

    /// The question parked instead of an answer, if the call parked.
    fn take_parked(&mut self) -> Option<Box<crate::vocab::Question>> {
        match self {
            Answer::Task { result: Err(e), .. }
            | Answer::Gateway { result: Err(e), .. }
            | Answer::Hook { result: Err(e), .. } => e.parked.take(),
            _ => None,
        }
    }

    /// The model calls the answer (or its error) carries, with the control point's id.
    /// Whether a model was called for this answer (an external effect, paid for).
    pub(super) fn made_calls(&self) -> bool {
        let calls = |result: &Result<&Vec<ModelCall>, &ControlPointError>| match result {
            Ok(calls) => !calls.is_empty(),
            Err(e) => !e.calls.is_empty(),
        };
        match self {
            Answer::Task { result, .. } => calls(&result.as_ref().map(|o| &o.calls)),
            Answer::Gateway { result, .. } => calls(&result.as_ref().map(|d| &d.calls)),
            Answer::Hook { result, .. } => calls(&result.as_ref().map(|d| &d.calls)),
            Answer::Timer { .. } | Answer::Message { .. } | Answer::ChildWaiting { .. } => false,
        }
    }

    fn take_calls(&mut self) -> Vec<(String, ModelCall)> {
        fn take<T>(
            result: &mut Result<T, ControlPointError>,
            calls: impl FnOnce(&mut T) -> &mut Vec<ModelCall>,
        ) -> Vec<ModelCall> {
            match result {
                Ok(v) => std::mem::take(calls(v)),
                Err(e) => std::mem::take(&mut e.calls),
            }
        }
        let (id, calls) = match self {
            Answer::Task { node, result, .. } => (node, take(result, |o| &mut o.calls)),
            Answer::Gateway { node, result, .. } => (node, take(result, |d| &mut d.calls)),
            Answer::Hook { hook, result, .. } => (hook, take(result, |d| &mut d.calls)),
            Answer::Timer { .. } | Answer::Message { .. } | Answer::ChildWaiting { .. } => {
                return Vec::new();
            }
        };
        calls.into_iter().map(|c| (id.clone(), c)).collect()
    }
}

pub(super) fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Run {
    /// Ask the harness to fulfil a task (or call activity, or inserted task).
    pub(super) fn ask_task(&mut self, token: TokenId, node: &LiveNode) {
        let key = self.next_key(&node.id);
        if self.hold_replayed(token, &key, Asked::Task { node: &node.id }) {
            return;
        }
        let mut ctx = self.context(&node.id, node.name.clone());
        ctx.idempotency_key = Some(key.clone());
        self.with_instance_variables(token, &mut ctx);
        ctx.instance = self.innermost_instance(token);
        ctx.instruction = self
            .inserted
            .get(&node.id)
            .and_then(|task| task.instruction.clone());
        let control_points = self.control_points.clone();
        let id = node.id.clone();
        self.spawn_call(token, format!("execute_task `{id}`"), async move {
            let started = Instant::now();
            let result = control_points.execute_task(&id, ctx).await;
            Answer::Task {
                token,
                node: id,
                key,
                result,
                duration_ms: elapsed_ms(started),
            }
        });
    }

    /// Ask the harness which outgoing flows of a splitting gateway to take.
    pub(super) fn ask_gateway(&mut self, token: TokenId, node: &LiveNode, kind: GatewayKind) {
        let key = self.next_key(&node.id);
        let asked = Asked::Gateway {
            node: &node.id,
            kind,
        };
        if self.hold_replayed(token, &key, asked) {
            return;
        }
        let mut ctx = self.context(&node.id, node.name.clone());
        ctx.idempotency_key = Some(key.clone());
        self.with_instance_variables(token, &mut ctx);
        ctx.flows = self
            .topology
            .outgoing(&node.id)
            .map(|f| {
                let is_default = node.default_flow.as_deref() == Some(f.id.as_str());
                FlowOption::of(&self.topology.edge_info(f), is_default)
            })
            .collect();
        let control_points = self.control_points.clone();
        let id = node.id.clone();
        self.spawn_call(token, format!("route_gateway `{id}`"), async move {
            let started = Instant::now();
            let result = control_points.route_gateway(&id, ctx).await;
            Answer::Gateway {
                token,
                node: id,
                key,
                kind,
                result,
                duration_ms: elapsed_ms(started),
            }
        });
    }

    /// Apply a control-point answer, unless its token is gone. The model calls behind it
    /// are journalled first, whatever becomes of the answer.
    pub(super) fn answer(&mut self, mut answer: Answer) -> Result<(), EngineError> {
        let key = answer.waiter().1.to_string();
        for (node, call) in answer.take_calls() {
            self.emit(Event::ModelCalled {
                node,
                key: Some(key.clone()),
                call,
            })?;
        }
        if let Answer::Message { key, received } = answer {
            return self.on_message(&key, received);
        }
        // An event sub-process's timer belongs to no token.
        if let Answer::Timer {
            token: LISTENER,
            node,
            key,
        } = answer
        {
            return self.on_listener_timer(&node, key);
        }
        let token = answer.waiter().0;
        if !self.tokens.contains(token) {
            return Ok(());
        }
        if let Some(question) = answer.take_parked() {
            return self.park_question(token, *question);
        }
        match answer {
            Answer::Task {
                token,
                node,
                key,
                result,
                duration_ms,
            } => self.on_task(token, &node, key, result, duration_ms),
            Answer::Gateway {
                token,
                node,
                key,
                kind,
                result,
                duration_ms,
            } => self.on_gateway(token, &node, key, kind, result, duration_ms),
            Answer::Hook {
                token,
                flow,
                hook,
                key,
                result,
                duration_ms,
            } => self.on_hook(token, &flow, &hook, key, result, duration_ms),
            Answer::Timer { token, node, key } => self.on_timer(token, &node, key),
            Answer::Message { key, received } => self.on_message(&key, received),
            Answer::ChildWaiting { token, key, run_id } => {
                self.children_waiting.insert(key, (token, run_id));
                Ok(())
            }
        }
    }

    fn on_task(
        &mut self,
        token: TokenId,
        node: &str,
        key: String,
        result: Result<TaskOutcome, ControlPointError>,
        duration_ms: u64,
    ) -> Result<(), EngineError> {
        let outcome = result.unwrap_or_else(|e| TaskOutcome {
            status: TaskStatus::Failed,
            outputs: Map::new(),
            variables: Map::new(),
            decided_by: Decider::None,
            reason: None,
            error: Some(e.message),
            error_code: Some(error_code::UNANSWERED.to_string()),
            calls: Vec::new(),
            digest: None,
            taint: None,
        });
        // A failed task raises a BPMN error: the code it names, else the generic one.
        let code = (outcome.status == TaskStatus::Failed).then(|| {
            outcome
                .error_code
                .clone()
                .unwrap_or_else(|| error_code::TASK_FAILED.to_string())
        });
        self.emit(Event::TaskFinished {
            node: node.to_string(),
            status: outcome.status,
            outputs: outcome.outputs,
            variables: outcome.variables.clone(),
            decided_by: outcome.decided_by,
            reason: outcome.reason,
            error: outcome.error.clone(),
            error_code: code.clone(),
            duration_ms,
            digest: outcome.digest,
            key: Some(key),
            taint: outcome.taint.clone(),
            own: self.instance_own_names(token, &outcome.variables),
        })?;
        if let Some(code) = code {
            let throw = Throw {
                kind: ThrownKind::Error,
                code: Some(code),
                node: node.to_string(),
                message: Some(outcome.error.unwrap_or_else(|| "no reason given".into())),
                from_task: true,
            };
            return self.throw(token, throw);
        }
        let variables = self.keep_instance_locals(token, outcome.variables, outcome.taint.as_ref());
        self.merge_variables(variables, outcome.taint.as_ref());
        self.leave(token, node)
    }

    fn on_gateway(
        &mut self,
        token: TokenId,
        node: &str,
        key: String,
        kind: GatewayKind,
        result: Result<GatewayDecision, ControlPointError>,
        duration_ms: u64,
    ) -> Result<(), EngineError> {
        let decision = match result {
            Ok(decision) => decision,
            Err(e) => {
                self.fail(format!(
                    "gateway `{node}` could not be routed: {}",
                    e.message
                ));
                return Ok(());
            }
        };
        let outgoing: Vec<&str> = self
            .topology
            .outgoing(node)
            .map(|f| f.id.as_str())
            .collect();
        if let Err(why) = check_choice(kind, &outgoing, &decision.flows) {
            self.fail(format!("gateway `{node}` ({}): {why}", kind.tag()));
            return Ok(());
        }
        self.emit(Event::GatewayRouted {
            node: node.to_string(),
            flows: decision.flows.clone(),
            decided_by: decision.decided_by,
            reason: decision.reason,
            duration_ms,
            digest: decision.digest,
            key: Some(key),
        })?;
        self.tokens.place(token, At::Node(node.to_string()));
        self.send(token, decision.flows);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chosen(flows: &[&str]) -> Vec<String> {
        flows.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn exclusive_gateways_take_exactly_one_outgoing_flow() {
        let out = ["f1", "f2"];
        assert!(check_choice(GatewayKind::Exclusive, &out, &chosen(&["f2"])).is_ok());
        assert!(check_choice(GatewayKind::Exclusive, &out, &chosen(&["f1", "f2"])).is_err());
        assert!(check_choice(GatewayKind::Exclusive, &out, &chosen(&[])).is_err());
        assert!(check_choice(GatewayKind::EventBased, &out, &chosen(&["f9"])).is_err());
    }

    #[test]
    fn inclusive_gateways_take_distinct_outgoing_flows() {
        let out = ["f1", "f2", "f3"];
        assert!(check_choice(GatewayKind::Inclusive, &out, &chosen(&["f1", "f3"])).is_ok());
        assert!(check_choice(GatewayKind::Inclusive, &out, &chosen(&["f1", "f1"])).is_err());
        assert!(check_choice(GatewayKind::Inclusive, &out, &chosen(&["f4"])).is_err());
    }
}
