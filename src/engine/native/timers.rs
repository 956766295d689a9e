//! Timers: intermediate timer catch events and timer boundary events (interrupting or
//! not). A timer starts when its token reaches the catch event, or when the activity it
//! is attached to starts; it is journalled (`timer_scheduled`, with the time it is due)
//! and fires (`timer_fired`) when it is due. The coordinator waits for a timer in-process
//! when it is due within the run's wait limit; a timer due later parks the run with its
//! due time (`run_waiting`), and `runs resume --due` or `cuga-flo worker` continues it.
//! A boundary timer is cancelled when its activity ends first.
//!
//! A timer's idempotency key is `<run>:<event>:<visit>` like a control point's; a resumed
//! run takes the due time from the journal rather than computing it again.

use std::collections::BTreeSet;

use super::calls::Answer;
use super::event_subprocess::LISTENER;
use super::replay::Asked;
use super::run::Run;
use super::tokens::{At, TokenId};
use crate::bpmn::NodeKind;
use crate::engine::EngineError;
use crate::journal::Event;
use crate::semantics::topology::LiveNode;

/// A timer started and not fired yet.
#[derive(Debug, Clone)]
pub(super) struct PendingTimer {
    /// The token at the catch event, or the activity's token for a boundary timer.
    pub token: TokenId,
    /// The timer event.
    pub node: String,
    pub due_ms: u64,
    /// For a boundary timer: the activity it is attached to.
    pub activity: Option<String>,
}

impl Run {
    /// Start the timer of `event` for `token` (`activity`: the activity a boundary timer
    /// is attached to). Its key.
    pub(super) fn start_timer(
        &mut self,
        token: TokenId,
        event: &LiveNode,
        activity: Option<String>,
    ) -> Result<String, EngineError> {
        let key = self.next_key(&event.id);
        let due = match self.replayed_due(&key) {
            Some(due) => due,
            None => match self.due_of(event) {
                Ok(due) => due,
                Err(why) => {
                    self.fail(format!("timer `{}`: {why}", event.id));
                    return Ok(key);
                }
            },
        };
        self.emit(Event::TimerScheduled {
            key: key.clone(),
            node: event.id.clone(),
            due_ms: due,
        })?;
        if self.hold_replayed(token, &key, Asked::Timer { node: &event.id }) {
            return Ok(key);
        }
        self.timers.insert(
            key.clone(),
            PendingTimer {
                token,
                node: event.id.clone(),
                due_ms: due,
                activity,
            },
        );
        Ok(key)
    }

    /// When `event`'s timer is due if it starts now.
    fn due_of(&self, event: &LiveNode) -> Result<u64, crate::bpmn::DueError> {
        event
            .timer
            .as_ref()
            .ok_or(crate::bpmn::DueError::NoDefinition)?
            .due_over(&self.variables, crate::clock::now_ms())
    }

    /// Start the timers attached to `activity`, which `token` has just entered.
    pub(super) fn start_boundary_timers(
        &mut self,
        token: TokenId,
        activity: &str,
    ) -> Result<(), EngineError> {
        // A multi-instance activity's timers are its body's, not each instance's.
        if self.is_instance(token) {
            return Ok(());
        }
        let events: Vec<LiveNode> = self.topology.boundary_timers(activity).cloned().collect();
        for event in events {
            self.start_timer(token, &event, Some(activity.to_string()))?;
        }
        Ok(())
    }

    /// `token` leaves `activity`: its boundary timers no longer apply.
    pub(super) fn cancel_boundary_timers(&mut self, token: TokenId, activity: &str) {
        if !self.timers.is_empty() {
            self.timers
                .retain(|_, t| !(t.token == token && t.activity.as_deref() == Some(activity)));
        }
    }

    /// The key of a timer due at `now`, the earliest first.
    pub(super) fn due_timer(&self, now: u64) -> Option<String> {
        self.timers
            .iter()
            .filter(|(_, t)| t.due_ms <= now)
            .min_by_key(|(k, t)| (t.due_ms, (*k).clone()))
            .map(|(k, _)| k.clone())
    }

    /// When the next timer is due.
    pub(super) fn next_due(&self) -> Option<u64> {
        self.timers.values().map(|t| t.due_ms).min()
    }

    /// Fire the timer `key` now.
    pub(super) fn fire_due(&mut self, key: &str) -> Result<(), EngineError> {
        let Some(t) = self.timers.remove(key) else {
            return Ok(());
        };
        crate::crash::point("engine.timer_due");
        self.answer(Answer::Timer {
            token: t.token,
            node: t.node,
            key: key.to_string(),
        })
    }

    /// A timer fired: a catch event's token goes on; a boundary event starts a token on
    /// its path, and (interrupting) cancels its activity.
    pub(super) fn on_timer(
        &mut self,
        token: TokenId,
        node: &str,
        key: String,
    ) -> Result<(), EngineError> {
        let Some(event) = self.topology.node(node).cloned() else {
            self.fail(format!("timer event `{node}` no longer exists"));
            return Ok(());
        };
        self.emit(Event::TimerFired {
            key,
            node: node.to_string(),
        })?;
        let NodeKind::BoundaryEvent {
            attached_to,
            cancel_activity,
            ..
        } = &event.kind
        else {
            // A catch of an event-based gateway: it won the race.
            if let Some(gateway) = self.race_of(token, node) {
                return self.win_race(token, &gateway, node);
            }
            return self.leave(token, node);
        };
        let scope = self.tokens.scope_of(token);
        if *cancel_activity {
            let why = format!("activity `{attached_to}` was interrupted by a timer");
            self.cancel_activity(token, attached_to, &why)?;
        }
        let path = self.tokens.add(scope, At::Node(node.to_string()));
        self.ready.push_back(super::run::Step::Enter {
            token: path,
            node: node.to_string(),
        });
        Ok(())
    }

    /// An interrupting boundary event fired (a timer, an error, an escalation): the activity's token (and, for a
    /// sub-process, every token inside it) is gone, its calls abandoned and its open
    /// questions withdrawn.
    pub(super) fn cancel_activity(
        &mut self,
        token: TokenId,
        activity: &str,
        why: &str,
    ) -> Result<(), EngineError> {
        self.cancel_boundary_timers(token, activity);
        // A multi-instance activity: every instance goes with it.
        self.cancel_instances(token, why)?;
        self.drop_body(token);
        if let Some(scope) = self.tokens.scope_owned_by(token) {
            let scopes = self.tokens.nested(scope);
            self.tokens.discard(&scopes, scope);
            self.joins.retain(|(s, _), _| !scopes.contains(s));
            self.tokens.close_scope(scope);
        }
        self.tokens.remove(token);
        self.withdraw_orphans(Some(activity), why)
    }

    /// After tokens were cancelled (in `container`, an activity; `None`: the process):
    /// withdraw their questions, drop their timers and waits, abandon their calls.
    pub(super) fn withdraw_orphans(
        &mut self,
        container: Option<&str>,
        why: &str,
    ) -> Result<(), EngineError> {
        let gone: BTreeSet<TokenId> = self
            .questions
            .values()
            .copied()
            .filter(|t| !self.tokens.contains(*t))
            .collect();
        let mut withdrawn: BTreeSet<String> = self
            .questions
            .iter()
            .filter(|(_, t)| gone.contains(t))
            .map(|(k, _)| k.clone())
            .collect();
        // Questions parked before a resume whose call is asked again (not parked yet).
        withdrawn.extend(
            self.prior_open
                .iter()
                .filter(|(_, element)| match container {
                    Some(activity) => {
                        *element == activity || self.topology.is_inside(element, activity)
                    }
                    None => true,
                })
                .map(|(k, _)| k.clone()),
        );
        for key in withdrawn {
            self.questions.remove(&key);
            self.prior_open.remove(&key);
            self.emit(Event::QuestionWithdrawn {
                key,
                reason: why.to_string(),
            })?;
        }
        self.timers
            .retain(|_, t| t.token == LISTENER || self.tokens.contains(t.token));
        let tokens = &self.tokens;
        self.mailbox.retain_tokens(|t| tokens.contains(t));
        self.abort_orphaned_calls();
        Ok(())
    }
}
