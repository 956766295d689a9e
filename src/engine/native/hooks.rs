//! Hooked sequence flows: asking `evaluate_hook` before a token traverses one, and
//! applying the decision (state updates, then the action checked by [`crate::engine::adapt`]).

use std::collections::BTreeSet;
use std::time::Instant;

use super::calls::{Answer, elapsed_ms};
use super::replay::Asked;
use super::run::{Run, Step};
use super::tokens::{At, TokenId};
use crate::bridge::{ControlPointError, HookDecision, Variables};
use crate::engine::EngineError;
use crate::engine::adapt::{self, Applied, Evaluation, Facts, Plan};
use crate::journal::Event;
use crate::semantics::topology::LiveFlow;

impl Run {
    /// Ask the harness what happens on `flow` (hooked by `hook`) before `token` takes it.
    pub(super) fn ask_hook(&mut self, token: TokenId, flow: &LiveFlow, hook: String) {
        let key = self.next_key(&hook);
        let asked = Asked::Hook {
            flow: &flow.id,
            hook: &hook,
        };
        if self.hold_replayed(token, &key, asked) {
            return;
        }
        let mut ctx = self.context(&hook, None);
        ctx.idempotency_key = Some(key.clone());
        self.with_instance_variables(token, &mut ctx);
        ctx.edge = Some(self.topology.edge_info(flow));
        ctx.executed = self.executed_order.clone();
        let control_points = self.control_points.clone();
        let flow = flow.id.clone();
        self.spawn_call(token, format!("evaluate_hook `{hook}`"), async move {
            let started = Instant::now();
            let result = control_points.evaluate_hook(&hook, ctx).await;
            Answer::Hook {
                token,
                flow,
                hook,
                key,
                result,
                duration_ms: elapsed_ms(started),
            }
        });
    }

    pub(super) fn on_hook(
        &mut self,
        token: TokenId,
        flow: &str,
        hook: &str,
        key: String,
        result: Result<HookDecision, ControlPointError>,
        duration_ms: u64,
    ) -> Result<(), EngineError> {
        let decision = match result {
            Ok(decision) => decision,
            Err(e) => {
                self.fail(format!(
                    "hook `{hook}` on flow `{flow}` could not be evaluated: {}",
                    e.message
                ));
                return Ok(());
            }
        };
        let Some(live) = self.topology.flow(flow).cloned() else {
            self.fail(format!("sequence flow `{flow}` no longer exists"));
            return Ok(());
        };
        let record = Evaluation {
            hook,
            flow,
            decision: &decision,
            duration_ms,
            key: Some(&key),
        };
        if decision.fail_run {
            self.emit(record.event(Applied::answered(&decision), None, Variables::new()))?;
            let message = decision
                .message
                .clone()
                .unwrap_or_else(|| format!("hook `{hook}` on flow `{flow}` failed the run"));
            self.fail(message);
            return Ok(());
        }
        let checked = {
            let held: BTreeSet<&str> = self.tokens.held_nodes();
            let facts = Facts {
                topology: &self.topology,
                executed: &self.executed,
                held: &held,
                flow: &live,
            };
            adapt::plan(&facts, &decision)
        };
        let (plan, rejected) = match checked {
            Ok(plan) => (plan, None),
            Err(refused) => (Plan::Continue, Some(refused.to_string())),
        };
        // A refused action changes nothing, its state updates included (as a denial by
        // the harness); an applied one sets them before anything moves.
        let updates = match rejected {
            None => decision.state_updates.clone(),
            Some(_) => Variables::new(),
        };
        // The hook's record first (the answer, as every control point's first record),
        // then the variables it sets.
        self.emit(record.event(Applied::plan(&plan), rejected, updates.clone()))?;
        if !updates.is_empty() {
            self.emit(Event::VariablesSet {
                source: format!("hook {hook}"),
                values: updates.clone(),
                taint: decision.taint.clone(),
            })?;
            self.merge_variables(updates, decision.taint.as_ref());
        }
        if let Some(detail) = plan.change(&self.topology, &live) {
            self.emit(Event::TopologyChanged {
                action: plan.action(),
                detail,
            })?;
            plan.apply(&mut self.topology, &live);
            if let Plan::Add(task) = &plan {
                self.inserted.insert(task.id.clone(), task.clone());
            }
        }
        self.move_after_hook(token, &live, hook, plan, &decision)
    }

    /// Move the token as the applied action says.
    fn move_after_hook(
        &mut self,
        token: TokenId,
        flow: &LiveFlow,
        hook: &str,
        plan: Plan,
        decision: &HookDecision,
    ) -> Result<(), EngineError> {
        match plan {
            Plan::Continue | Plan::Swap(..) | Plan::Remove(_) | Plan::Add(_) => {
                self.ready.push_back(Step::Traverse {
                    token,
                    flow: flow.id.clone(),
                    hook_done: true,
                });
            }
            Plan::SkipNode(node) => {
                self.emit(Event::FlowTaken {
                    flow: flow.id.clone(),
                    source: flow.source.clone(),
                    target: node.clone(),
                    token,
                })?;
                self.tokens.place(token, At::Node(node.clone()));
                self.ready.push_back(Step::Skip {
                    token,
                    node,
                    decided_by: decision.decided_by,
                    reason: decision.reason.clone(),
                });
            }
            Plan::SkipTo(node) => {
                self.tokens.place(token, At::Node(node.clone()));
                self.ready.push_back(Step::Arrive {
                    token,
                    node,
                    via: None,
                });
            }
            Plan::Terminate(message) => {
                self.terminate(message.unwrap_or_else(|| format!("terminated by hook {hook}")));
            }
        }
        Ok(())
    }
}
