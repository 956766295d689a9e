//! Token movement: traversing flows, reaching and entering nodes, what each kind of node
//! does with a token, leaving nodes, ending tokens and sub-process instances.

use serde_json::Map;

use super::run::{Run, Step};
use super::tokens::{At, ROOT, ScopeId, TokenId};
use crate::bpmn::{EventDefinition, GatewayKind, NodeKind, SubProcessKind, TaskKind};
use crate::engine::EngineError;
use crate::journal::Event;
use crate::journal::event::{InstanceVisit, ThrownKind};
use crate::semantics::topology::LiveNode;
use crate::vocab::{Decider, TaskStatus};

impl Run {
    /// Traverse `flow`: evaluate its hook first (unless done), else take it.
    pub(super) fn traverse(
        &mut self,
        token: TokenId,
        flow: &str,
        hook_done: bool,
    ) -> Result<(), EngineError> {
        let Some(live) = self.topology.flow(flow).cloned() else {
            self.fail(format!("sequence flow `{flow}` no longer exists"));
            return Ok(());
        };
        self.tokens.place(token, At::Flow(live.id.clone()));
        if !hook_done && let Some(hook) = self.request.annotations.hooks.get(flow).cloned() {
            self.ask_hook(token, &live, hook);
            return Ok(());
        }
        self.emit(Event::FlowTaken {
            flow: live.id.clone(),
            source: live.source.clone(),
            target: live.target.clone(),
            token,
        })?;
        self.tokens.place(token, At::Node(live.target.clone()));
        self.ready.push_back(Step::Arrive {
            token,
            node: live.target,
            via: Some(live.id),
        });
        Ok(())
    }

    /// Reach `node`: a synchronising join holds the token; any other node is entered.
    pub(super) fn arrive(
        &mut self,
        token: TokenId,
        node: &str,
        via: Option<String>,
    ) -> Result<(), EngineError> {
        let Some(live) = self.topology.node(node) else {
            self.fail(format!("node `{node}` no longer exists"));
            return Ok(());
        };
        if self.topology.is_sync_join(live) {
            self.park(token, node, via);
            Ok(())
        } else {
            self.enter(token, node)
        }
    }

    /// Count a node entry against the step budget and record it. `false`: the budget is
    /// spent and the run has failed.
    pub(super) fn record_entry(
        &mut self,
        token: TokenId,
        node: &LiveNode,
        instance: Option<InstanceVisit>,
    ) -> Result<bool, EngineError> {
        if self.steps >= self.budget {
            self.fail(format!(
                "the step budget of {} node entries is spent: entering `{}` would exceed it",
                self.budget, node.id
            ));
            return Ok(false);
        }
        self.emit(Event::NodeEntered {
            node: node.id.clone(),
            kind: node.kind.tag().to_string(),
            name: node.name.clone(),
            token,
            instance,
        })?;
        self.steps += 1;
        self.path.push(node.id.clone());
        if self.executed.insert(node.id.clone()) {
            self.executed_order.push(node.id.clone());
        }
        Ok(true)
    }

    /// Enter `node` and do what its kind does.
    pub(super) fn enter(&mut self, token: TokenId, node: &str) -> Result<(), EngineError> {
        let Some(live) = self.topology.node(node).cloned() else {
            self.fail(format!("node `{node}` no longer exists"));
            return Ok(());
        };
        if self.starts_multi(token, &live.id) {
            return self.enter_multi(token, &live);
        }
        self.tokens.place(token, At::Node(live.id.clone()));
        if !self.record_entry(token, &live, self.instance_visit(token))? {
            return Ok(());
        }
        match &live.kind {
            // Catches wait for their timer, message or signal.
            NodeKind::Task(TaskKind::Receive) | NodeKind::IntermediateCatchEvent { .. } => {
                self.enter_catch(token, &live)
            }
            NodeKind::Task(_) | NodeKind::CallActivity { .. } => {
                // A call activity that names a process calls it ([`super::call`]).
                if !self.call_child(token, &live)? {
                    self.ask_task(token, &live);
                }
                self.arm_boundaries(token, &live.id)
            }
            // Started by its event ([`super::event_subprocess`]).
            NodeKind::SubProcess(SubProcessKind::Embedded {
                triggered_by_event: true,
            }) => self.enter_event_subprocess(token, &live),
            NodeKind::SubProcess(_) => {
                self.start_scope(token, &live)?;
                // An instance that started (its token waits at the sub-process node).
                if self.tokens.scope_owned_by(token).is_some() {
                    self.arm_boundaries(token, &live.id)?;
                }
                Ok(())
            }
            NodeKind::IntermediateThrowEvent { .. } if live.is_link_throw() => {
                self.jump_link(token, &live);
                Ok(())
            }
            NodeKind::EndEvent { .. } if live.is_terminate_end() => {
                self.terminate_end(token, &live);
                Ok(())
            }
            // Errors and escalations go to the boundary event that catches them.
            NodeKind::EndEvent { definitions } if definitions.contains(&EventDefinition::Error) => {
                self.throw_event(token, &live, ThrownKind::Error)
            }
            NodeKind::EndEvent { definitions }
            | NodeKind::IntermediateThrowEvent { definitions }
                if definitions.contains(&EventDefinition::Escalation) =>
            {
                self.throw_event(token, &live, ThrownKind::Escalation)
            }
            // Messages and signals go to the run's own catches.
            NodeKind::EndEvent { definitions }
            | NodeKind::IntermediateThrowEvent { definitions }
                if definitions.contains(&EventDefinition::Message)
                    || definitions.contains(&EventDefinition::Signal) =>
            {
                self.throw_message(token, &live)
            }
            NodeKind::EndEvent { .. } => {
                self.end_token(token);
                Ok(())
            }
            NodeKind::Gateway(kind) => self.gateway(token, &live, *kind),
            NodeKind::Unsupported { tag } => {
                self.fail(format!(
                    "`{node}` is a <{tag}>, which the native engine cannot run"
                ));
                Ok(())
            }
            NodeKind::StartEvent { .. }
            | NodeKind::IntermediateThrowEvent { .. }
            | NodeKind::BoundaryEvent { .. } => self.leave(token, node),
        }
    }

    /// Enter an activity and record it as skipped (SKIP_NODE), then leave it.
    pub(super) fn skip(
        &mut self,
        token: TokenId,
        node: &str,
        decided_by: Decider,
        reason: Option<String>,
    ) -> Result<(), EngineError> {
        let Some(live) = self.topology.node(node).cloned() else {
            self.fail(format!("node `{node}` no longer exists"));
            return Ok(());
        };
        if !self.record_entry(token, &live, None)? {
            return Ok(());
        }
        self.emit(Event::TaskFinished {
            node: node.to_string(),
            status: TaskStatus::Skipped,
            outputs: Map::new(),
            variables: Map::new(),
            decided_by,
            reason,
            error: None,
            error_code: None,
            duration_ms: 0,
            digest: None,
            key: None,
            taint: None,
            own: Vec::new(),
        })?;
        self.leave(token, node)
    }

    /// A gateway: parallel ones and those with fewer than two outgoing flows pass the
    /// token on; the others ask the harness which flows to take.
    fn gateway(
        &mut self,
        token: TokenId,
        node: &LiveNode,
        kind: GatewayKind,
    ) -> Result<(), EngineError> {
        let splits = self.topology.outgoing(&node.id).count() >= 2;
        if kind == GatewayKind::Parallel || !splits {
            return self.leave(token, &node.id);
        }
        // An event-based gateway before catches: the first event to happen decides.
        if kind == GatewayKind::EventBased && self.race(token, node)? {
            return Ok(());
        }
        self.ask_gateway(token, node, kind);
        Ok(())
    }

    /// Leave `node` along all its outgoing flows (none: the token ends).
    pub(super) fn leave(&mut self, token: TokenId, node: &str) -> Result<(), EngineError> {
        // An instance of a multi-instance activity completes into its body.
        if self.instance_left(token)? {
            return Ok(());
        }
        self.cancel_boundary_timers(token, node);
        self.cancel_boundary_waits(token, node);
        let flows: Vec<String> = self.topology.outgoing(node).map(|f| f.id.clone()).collect();
        self.send(token, flows);
        Ok(())
    }

    /// Send `token` along `flows`: one flow keeps the token, several split it, none ends it.
    pub(super) fn send(&mut self, token: TokenId, flows: Vec<String>) {
        match flows.as_slice() {
            [] => self.end_token(token),
            [flow] => {
                self.tokens.place(token, At::Flow(flow.clone()));
                self.ready.push_back(Step::Traverse {
                    token,
                    flow: flow.clone(),
                    hook_done: false,
                });
            }
            _ => {
                let scope = self.tokens.scope_of(token);
                for flow in flows {
                    let branch = self.tokens.add(scope, At::Flow(flow.clone()));
                    self.ready.push_back(Step::Traverse {
                        token: branch,
                        flow,
                        hook_done: false,
                    });
                }
                self.tokens.remove(token);
            }
        }
    }

    /// A token ends; a sub-process instance left without tokens completes.
    pub(super) fn end_token(&mut self, token: TokenId) {
        let Some(ended) = self.tokens.remove(token) else {
            return;
        };
        if ended.scope != ROOT && self.tokens.count_in(ended.scope) == 0 {
            self.complete_scope(ended.scope);
        }
    }

    /// A sub-process instance is done: its token continues on the sub-process's flows.
    fn complete_scope(&mut self, scope: ScopeId) {
        self.joins.retain(|(s, _), _| *s != scope);
        if let Some(done) = self.tokens.close_scope(scope) {
            self.ready.push_back(Step::Leave {
                token: done.parent_token,
                node: done.subprocess,
            });
        }
    }

    /// Start an instance of a sub-process: a token at each of its start nodes. The
    /// sub-process's own token waits at it until the instance completes.
    fn start_scope(&mut self, token: TokenId, node: &LiveNode) -> Result<(), EngineError> {
        let starts = self.topology.start_nodes(Some(&node.id));
        if starts.is_empty() {
            return self.leave(token, &node.id);
        }
        let scope = self.tokens.open_scope(&node.id, token);
        for start in starts {
            let inner = self.tokens.add(scope, At::Node(start.clone()));
            self.ready.push_back(Step::Enter {
                token: inner,
                node: start,
            });
        }
        self.arm_event_subprocesses(scope)
    }

    /// A terminate end event: at process level the run ends `Terminated`; inside a
    /// sub-process, only that instance's tokens end, and the sub-process completes.
    fn terminate_end(&mut self, token: TokenId, node: &LiveNode) {
        let scope = self.tokens.scope_of(token);
        if scope == ROOT {
            self.terminate(format!("terminate end event {}", node.id));
            return;
        }
        let scopes = self.tokens.nested(scope);
        self.tokens.discard(&scopes, scope);
        self.joins.retain(|(s, _), _| !scopes.contains(s));
        // The discarded tokens wait for nothing any more.
        let tokens = &self.tokens;
        self.mailbox.retain_tokens(|t| tokens.contains(t));
        self.abort_orphaned_calls();
        self.complete_scope(scope);
    }

    /// A link throw event: continue at the link catch event of the same name.
    fn jump_link(&mut self, token: TokenId, node: &LiveNode) {
        let Some(catch) = self.topology.link_catch(node).map(|c| c.id.clone()) else {
            self.fail(format!(
                "link throw event `{}` has no link catch event with the same name in its scope",
                node.id
            ));
            return;
        };
        self.tokens.place(token, At::Node(catch.clone()));
        self.ready.push_back(Step::Enter { token, node: catch });
    }
}
