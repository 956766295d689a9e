//! BPMN errors and escalations. A failed task raises an error (its code: what the answer
//! raised, else why it failed); an error or escalation end event, or an escalation
//! intermediate throw event, throws its `errorRef`'s / `escalationRef`'s code.
//!
//! What is thrown is caught by the start event of an event sub-process of the thrower's
//! scope ([`super::event_subprocess`]), else by a boundary event of the same kind attached to the
//! innermost activity that encloses the thrower (the failed task itself, then the
//! sub-processes around it, outwards): one whose code is the thrown code first, else a
//! catch-all (no reference, or a reference without a code). An interrupting boundary
//! (`cancelActivity`, the default; errors always interrupt) cancels its activity and
//! everything in it; a non-interrupting escalation boundary starts a token on its path
//! while the activity goes on. Nothing catching it, an error fails the run (naming its
//! code) and an escalation passes: the end event ends its token, the throw event goes on.
//!
//! Every throw is journalled (`event_thrown`: kind, code, thrower, catching boundary)
//! before any token moves; a resumed run derives the same record from the same answer.

use super::run::{Run, Step};
use super::tokens::{At, ROOT, TokenId};
use crate::bpmn::{EventDefinition, NodeKind};
use crate::engine::EngineError;
use crate::journal::Event;
use crate::journal::event::ThrownKind;
use crate::semantics::topology::LiveNode;

/// What is thrown, and by what.
pub(super) struct Throw {
    pub kind: ThrownKind,
    pub code: Option<String>,
    /// The failed task, or the end or throw event.
    pub node: String,
    pub message: Option<String>,
    /// The thrower is a task (its own boundary events are the first to look at), not an
    /// event inside a sub-process.
    pub from_task: bool,
}

impl Run {
    /// An error or escalation end event, or an escalation intermediate throw event.
    pub(super) fn throw_event(
        &mut self,
        token: TokenId,
        node: &LiveNode,
        kind: ThrownKind,
    ) -> Result<(), EngineError> {
        let event_ref = node.event_ref.as_ref();
        let throw = Throw {
            kind,
            code: event_ref.and_then(|r| r.code.clone()),
            node: node.id.clone(),
            message: event_ref.and_then(|r| r.name.clone()),
            from_task: false,
        };
        self.throw(token, throw)
    }

    /// Deliver `throw`, made by `token`, to the boundary event that catches it.
    pub(super) fn throw(&mut self, token: TokenId, throw: Throw) -> Result<(), EngineError> {
        let definition = match throw.kind {
            ThrownKind::Error => EventDefinition::Error,
            ThrownKind::Escalation => EventDefinition::Escalation,
        };
        // Outwards from the thrower: the failed task's boundary events (an instance of a
        // multi-instance activity: the activity's, held by its body), then the event
        // sub-processes of the scope it runs in, then the boundary events of the
        // sub-process that scope is an instance of, then the event sub-processes around
        // that, ...
        let mut at = throw
            .from_task
            .then(|| (self.activity_holder(token), throw.node.clone()));
        let mut holder = token;
        let mut caught = None;
        let mut event_subprocess = None;
        loop {
            if let Some((h, activity)) = &at {
                if let Some(boundary) =
                    self.topology
                        .catching_boundary(activity, definition, throw.code.as_deref())
                {
                    caught = Some((*h, activity.clone(), boundary.clone()));
                    break;
                }
                holder = *h;
            }
            let scope = self.tokens.scope_of(holder);
            if let Some((subprocess, start)) =
                self.catching_event_subprocess(scope, definition, throw.code.as_deref())
            {
                event_subprocess = Some((scope, subprocess, start));
                break;
            }
            at = self.enclosing(holder);
            if at.is_none() {
                break;
            }
        }
        if let Some((scope, subprocess, start)) = event_subprocess {
            return self.throw_to_event_subprocess(token, &throw, scope, subprocess, &start);
        }
        let interrupting = caught.as_ref().is_some_and(|(_, _, b)| {
            throw.kind == ThrownKind::Error
                || matches!(
                    b.kind,
                    NodeKind::BoundaryEvent {
                        cancel_activity: true,
                        ..
                    }
                )
        });
        self.emit(Event::EventThrown {
            kind: throw.kind,
            code: throw.code.clone(),
            node: throw.node.clone(),
            name: self.topology.node(&throw.node).and_then(|n| n.name.clone()),
            message: throw.message.clone(),
            caught_by: caught.as_ref().map(|(_, _, b)| b.id.clone()),
            activity: caught.as_ref().map(|(_, a, _)| a.clone()),
            interrupting,
        })?;
        let Some((holder, activity, boundary)) = caught else {
            return self.uncaught(token, &throw);
        };
        let scope = self.tokens.scope_of(holder);
        if interrupting {
            let why = format!(
                "activity `{activity}` was interrupted by {} {}",
                throw.kind.as_str(),
                throw.code.as_deref().unwrap_or("(no code)")
            );
            self.cancel_activity(holder, &activity, &why)?;
        }
        let path = self.tokens.add(scope, At::Node(boundary.id.clone()));
        self.ready.push_back(Step::Enter {
            token: path,
            node: boundary.id,
        });
        if !interrupting {
            self.pass_thrower(token, &throw)?;
        }
        Ok(())
    }

    /// `throw` is caught by the start event of event sub-process `subprocess` of `scope`:
    /// it starts (an error, or an interrupting escalation start, cancels the scope's
    /// other tokens first).
    fn throw_to_event_subprocess(
        &mut self,
        token: TokenId,
        throw: &Throw,
        scope: super::tokens::ScopeId,
        subprocess: String,
        start: &LiveNode,
    ) -> Result<(), EngineError> {
        let interrupting = throw.kind == ThrownKind::Error
            || !matches!(
                start.kind,
                NodeKind::StartEvent {
                    interrupting: false,
                    ..
                }
            );
        self.emit(Event::EventThrown {
            kind: throw.kind,
            code: throw.code.clone(),
            node: throw.node.clone(),
            name: self.topology.node(&throw.node).and_then(|n| n.name.clone()),
            message: throw.message.clone(),
            caught_by: Some(start.id.clone()),
            activity: Some(subprocess.clone()),
            interrupting,
        })?;
        let listener = super::event_subprocess::Listener {
            scope,
            subprocess,
            start: start.id.clone(),
            interrupting,
        };
        self.start_event_subprocess(&listener)?;
        if !interrupting {
            self.pass_thrower(token, throw)?;
        }
        Ok(())
    }

    /// Nothing caught `throw`: an error fails the run; an escalation passes.
    fn uncaught(&mut self, token: TokenId, throw: &Throw) -> Result<(), EngineError> {
        let code = throw.code.as_deref().unwrap_or("(no code)");
        match throw.kind {
            ThrownKind::Error if throw.from_task => {
                let error = throw.message.as_deref().unwrap_or("no reason given");
                self.fail(format!(
                    "task `{}` failed: {error} (BPMN error {code}, not caught)",
                    throw.node
                ));
                Ok(())
            }
            ThrownKind::Error => {
                self.fail(format!(
                    "error end event `{}` raised BPMN error {code}, which nothing catches",
                    throw.node
                ));
                Ok(())
            }
            ThrownKind::Escalation => self.pass_thrower(token, throw),
        }
    }

    /// The thrower goes on after a throw that did not cancel it: an end event ends its
    /// token, a throw event passes it on.
    fn pass_thrower(&mut self, token: TokenId, throw: &Throw) -> Result<(), EngineError> {
        if !self.tokens.contains(token) {
            return Ok(());
        }
        let is_end = self
            .topology
            .node(&throw.node)
            .is_some_and(|n| n.kind.is_end_event());
        if is_end {
            self.end_token(token);
            Ok(())
        } else {
            self.leave(token, &throw.node)
        }
    }

    /// The sub-process instance `token` runs in: the token waiting at its node, and the
    /// node. `None` at process level.
    fn enclosing(&self, token: TokenId) -> Option<(TokenId, String)> {
        let scope = self.tokens.scope_of(token);
        if scope == ROOT {
            return None;
        }
        let s = self.tokens.scope(scope)?;
        Some((self.activity_holder(s.parent_token), s.subprocess.clone()))
    }
}
