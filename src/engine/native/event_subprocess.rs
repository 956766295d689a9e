//! Event sub-processes (`<subProcess triggeredByEvent="true">`). Each is started by the
//! event its start event names, while the scope that holds it (the process, or one
//! running instance of a sub-process) runs:
//! - **error** and **escalation** starts catch what is thrown inside their scope
//!   ([`super::throws`]): the thrower's own scope first, before the boundary events of the
//!   activity around it; a start with the thrown code first, else a catch-all;
//! - **message** and **signal** starts wait like catch events ([`super::messages`]:
//!   `message_awaited` when the scope starts, a delivery or a throw within the run starts
//!   the event sub-process);
//! - **timer** starts are scheduled when the scope starts (`timer_scheduled`) and start
//!   the event sub-process when due.
//!
//! An interrupting start (`isInterrupting`, the default; errors always interrupt) cancels
//! every other token of the scope (their calls abandoned, their questions withdrawn, their
//! timers and waits dropped) and the scope's other event sub-processes; the event
//! sub-process runs, and the scope completes when it does. A non-interrupting start runs
//! the event sub-process alongside the scope's tokens; a message or signal start goes on
//! waiting for the next one. When the scope ends, its event sub-processes stop waiting.
//!
//! The waits and timers of a scope's event sub-processes belong to no token: they are
//! held for [`LISTENER`], and remembered by key with their scope.

use std::collections::{BTreeMap, BTreeSet};

use super::messages::Received;
use super::run::{Run, Step};
use super::tokens::{At, ROOT, ScopeId, TokenId};
use crate::bpmn::{EventDefinition, NodeKind};
use crate::engine::EngineError;
use crate::journal::Event;
use crate::semantics::events::signature;
use crate::semantics::topology::LiveNode;

/// The token a scope's event sub-process waits and timers are held for (live tokens are
/// numbered from 1).
pub(super) const LISTENER: TokenId = 0;

/// An event sub-process waiting for its message, signal or timer.
#[derive(Debug, Clone)]
pub(super) struct Listener {
    /// The running scope that holds it.
    pub scope: ScopeId,
    pub subprocess: String,
    /// Its start event.
    pub start: String,
    pub interrupting: bool,
}

/// The event sub-processes of a run that wait, by the key of their wait or timer, and
/// the event sub-processes about to start, by the token entering them.
#[derive(Debug, Default)]
pub(super) struct Listeners {
    pub waiting: BTreeMap<String, Listener>,
    starting: BTreeMap<TokenId, String>,
}

/// The first start event of event sub-process `subprocess` that has a definition.
fn start_of<'a>(run: &'a Run, subprocess: &'a str) -> Option<&'a LiveNode> {
    run.topology.children(Some(subprocess)).find(|n| {
        matches!(n.kind, NodeKind::StartEvent { .. }) && !n.kind.event_definitions().is_empty()
    })
}

fn is_interrupting(start: &LiveNode) -> bool {
    !matches!(
        start.kind,
        NodeKind::StartEvent {
            interrupting: false,
            ..
        }
    )
}

impl Run {
    /// The sub-process a running scope is an instance of (`None`: the process level).
    fn container_of(&self, scope: ScopeId) -> Option<String> {
        if scope == ROOT {
            return None;
        }
        self.tokens.scope(scope).map(|s| s.subprocess.clone())
    }

    fn scope_alive(&self, scope: ScopeId) -> bool {
        if scope == ROOT {
            !self.tokens.is_empty()
        } else {
            self.tokens.scope(scope).is_some()
        }
    }

    /// The event sub-processes directly in `scope`, with their start event.
    fn event_subprocesses(&self, scope: ScopeId) -> Vec<(String, LiveNode)> {
        let container = self.container_of(scope);
        if scope != ROOT && container.is_none() {
            return Vec::new();
        }
        self.topology
            .children(container.as_deref())
            .filter(|n| n.is_event_subprocess())
            .filter_map(|e| start_of(self, &e.id).map(|s| (e.id.clone(), s.clone())))
            .collect()
    }

    /// A scope has started: its message, signal and timer event sub-processes wait.
    pub(super) fn arm_event_subprocesses(&mut self, scope: ScopeId) -> Result<(), EngineError> {
        for (subprocess, start) in self.event_subprocesses(scope) {
            self.arm_listener(scope, subprocess, &start)?;
        }
        Ok(())
    }

    fn arm_listener(
        &mut self,
        scope: ScopeId,
        subprocess: String,
        start: &LiveNode,
    ) -> Result<(), EngineError> {
        let definitions = start.kind.event_definitions();
        let key = if definitions.contains(&EventDefinition::Timer) {
            self.start_timer(LISTENER, start, None)?
        } else if let Some((kind, name)) = signature(start) {
            self.await_catch(LISTENER, start, kind, name, None)?
        } else {
            // Errors and escalations are found when thrown.
            return Ok(());
        };
        self.listeners.waiting.insert(
            key,
            Listener {
                scope,
                subprocess,
                start: start.id.clone(),
                interrupting: is_interrupting(start),
            },
        );
        Ok(())
    }

    /// The event sub-process of `scope` whose error or escalation start catches `code`:
    /// one with that code first, else a catch-all. Its id and start event.
    pub(super) fn catching_event_subprocess(
        &self,
        scope: ScopeId,
        definition: EventDefinition,
        code: Option<&str>,
    ) -> Option<(String, LiveNode)> {
        let candidates: Vec<(String, LiveNode)> = self
            .event_subprocesses(scope)
            .into_iter()
            .filter(|(_, s)| s.kind.event_definitions().contains(&definition))
            .collect();
        let caught = |s: &LiveNode| s.event_ref.as_ref().and_then(|r| r.code.clone());
        candidates
            .iter()
            .find(|(_, s)| code.is_some() && caught(s).as_deref() == code)
            .or_else(|| candidates.iter().find(|(_, s)| caught(s).is_none()))
            .cloned()
    }

    /// Whether the wait `key` is an event sub-process's that can still start.
    pub(super) fn listener_alive(&self, key: &str) -> bool {
        self.listeners
            .waiting
            .get(key)
            .is_some_and(|l| self.scope_alive(l.scope))
    }

    /// A message or signal reached an event sub-process's start (journalled already).
    pub(super) fn on_listener_message(&mut self, key: &str) -> Result<(), EngineError> {
        let Some(listener) = self.listeners.waiting.remove(key) else {
            return Ok(());
        };
        if !listener.interrupting {
            // It goes on waiting for the next one.
            if let Some(start) = self.topology.node(&listener.start).cloned() {
                self.arm_listener(listener.scope, listener.subprocess.clone(), &start)?;
            }
        }
        self.start_event_subprocess(&listener)
    }

    /// An event sub-process's timer is due.
    pub(super) fn on_listener_timer(&mut self, node: &str, key: String) -> Result<(), EngineError> {
        if !self.listener_alive(&key) {
            self.listeners.waiting.remove(&key);
            return Ok(());
        }
        self.emit(Event::TimerFired {
            key: key.clone(),
            node: node.to_string(),
        })?;
        let Some(listener) = self.listeners.waiting.remove(&key) else {
            return Ok(());
        };
        self.start_event_subprocess(&listener)
    }

    /// Start an instance of `listener`'s event sub-process in its scope; an interrupting
    /// one first cancels everything else in the scope.
    pub(super) fn start_event_subprocess(
        &mut self,
        listener: &Listener,
    ) -> Result<(), EngineError> {
        if listener.interrupting {
            let why = format!("interrupted by event sub-process `{}`", listener.subprocess);
            self.clear_scope(listener.scope, &why)?;
        }
        let holder = self
            .tokens
            .add(listener.scope, At::Node(listener.subprocess.clone()));
        self.listeners
            .starting
            .insert(holder, listener.start.clone());
        self.ready.push_back(Step::Enter {
            token: holder,
            node: listener.subprocess.clone(),
        });
        Ok(())
    }

    /// `token` enters an event sub-process: its instance starts at the start event that
    /// triggered it (a token that reaches one otherwise passes on).
    pub(super) fn enter_event_subprocess(
        &mut self,
        token: TokenId,
        node: &LiveNode,
    ) -> Result<(), EngineError> {
        let Some(start) = self.listeners.starting.remove(&token) else {
            return self.leave(token, &node.id);
        };
        let scope = self.tokens.open_scope(&node.id, token);
        let inner = self.tokens.add(scope, At::Node(start.clone()));
        self.ready.push_back(Step::Enter {
            token: inner,
            node: start,
        });
        self.arm_event_subprocesses(scope)
    }

    /// An interrupting event sub-process starts: every token of `scope` (and of the
    /// scopes in it) is gone, with its calls, questions, timers and waits, and so are the
    /// scope's other event sub-processes.
    fn clear_scope(&mut self, scope: ScopeId, why: &str) -> Result<(), EngineError> {
        let scopes = self.tokens.nested(scope);
        self.tokens.discard(&scopes, scope);
        self.joins.retain(|(s, _), _| !scopes.contains(s));
        let container = self.container_of(scope);
        self.listeners
            .waiting
            .retain(|_, l| !scopes.contains(&l.scope));
        self.withdraw_orphans(container.as_deref(), why)?;
        self.drop_dead_listeners();
        Ok(())
    }

    /// Forget the event sub-processes whose scope has ended, with their waits and timers.
    pub(super) fn drop_dead_listeners(&mut self) {
        let dead: BTreeSet<String> = self
            .listeners
            .waiting
            .iter()
            .filter(|(_, l)| !self.scope_alive(l.scope))
            .map(|(k, _)| k.clone())
            .collect();
        self.listeners.waiting.retain(|k, _| !dead.contains(k));
        let live: BTreeSet<String> = self.listeners.waiting.keys().cloned().collect();
        self.timers
            .retain(|k, t| t.token != LISTENER || live.contains(k));
        self.mailbox.retain_listeners(|k| live.contains(k));
    }

    /// A delivery for an event sub-process's wait: journal it, merge its variables, and
    /// start the event sub-process.
    pub(super) fn deliver_to_listener(
        &mut self,
        key: String,
        node: String,
        kind: crate::journal::event::CatchKind,
        name: String,
        received: Received,
    ) -> Result<(), EngineError> {
        if !self.listener_alive(&key) {
            return Ok(());
        }
        if !received.journalled {
            self.emit(Event::MessageReceived {
                delivery: None,
                key: key.clone(),
                node,
                kind,
                name,
                variables: received.variables.clone(),
                thrown_by: received.thrown_by.clone(),
                taint: received.taint.clone(),
            })?;
        }
        self.merge_variables(received.variables, received.taint.as_ref());
        self.on_listener_message(&key)
    }
}
