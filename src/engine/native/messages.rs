//! Messages and signals. A message or signal intermediate catch event, a receive task, a
//! message or signal boundary event (armed while its activity runs) and the catches after
//! an event-based gateway wait: each wait is journalled (`message_awaited`, keyed
//! `<run>:<element>:<visit>` like a control point) and, when nothing else can move, the
//! run parks with what it waits for in its `run_waiting`. A delivery (`runs message`,
//! `runs signal`, the bridge's tools) is journalled as `message_received` before the
//! engine applies it, so a resumed run applies it exactly once; a message or signal
//! thrown within the run (intermediate throw or end event) reaches the run's own catches
//! at once, journalled the same way with `thrown_by`.
//!
//! A message reaches one catch (the one that started waiting first), a signal every
//! catch waiting for it. Names: the `<message>`'s / `<signal>`'s `name` (through
//! `messageRef` / `signalRef`), else the reference, else the element's name, else its id.
//! A message or signal thrown with nothing in the run waiting for it passes.
//!
//! An event-based gateway whose outgoing flows all lead to catch events (message,
//! signal, timer) or receive tasks arms them all; the first to be triggered wins: the
//! others are cancelled and the token goes along the winner's flow, through the catch,
//! which has happened already.

use crate::semantics::events::{correlation_over, signature};
use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::event_subprocess::LISTENER;
use super::replay::Asked;
use super::run::{Run, Step};
use super::tokens::{At, TokenId};
use crate::bpmn::{EventDefinition, GatewayKind, NodeKind, TaskKind};
use crate::engine::EngineError;
use crate::journal::Event;
use crate::journal::event::{Awaited, CatchKind};
use crate::semantics::topology::LiveNode;
use crate::vocab::Taint;

/// A catching element waiting for a message or signal.
#[derive(Debug, Clone)]
pub(super) struct Waiter {
    /// The token at the catch, the activity's token for a boundary event, or the
    /// gateway's token for the catches of an event-based gateway.
    pub token: TokenId,
    /// The catching element.
    pub node: String,
    pub kind: CatchKind,
    pub name: String,
    /// A boundary event's activity, or the event-based gateway whose race this is.
    pub activity: Option<String>,
    /// A message's correlation value (its correlation key's value when the wait began).
    pub correlation: Option<String>,
}

/// A message or signal delivered to a wait.
#[derive(Debug, Clone)]
pub(super) struct Received {
    /// Delivered from outside and journalled already (by the delivering command).
    pub journalled: bool,
    pub variables: Map<String, Value>,
    pub thrown_by: Option<String>,
    pub taint: Option<Taint>,
}

impl Received {
    /// The delivery a `message_received` record holds.
    pub fn of(event: &Event) -> Option<(String, Received)> {
        let Event::MessageReceived {
            key,
            variables,
            thrown_by,
            taint,
            ..
        } = event
        else {
            return None;
        };
        Some((
            key.clone(),
            Received {
                journalled: thrown_by.is_none(),
                variables: variables.clone(),
                thrown_by: thrown_by.clone(),
                taint: taint.clone(),
            },
        ))
    }
}

/// The waits of a run, in the order they started.
#[derive(Debug, Default)]
pub(super) struct Mailbox {
    waiters: Vec<(String, Waiter)>,
    /// Catches an event-based gateway's race has triggered already: the token passes
    /// them when it enters.
    fired: BTreeSet<(TokenId, String)>,
}

impl Mailbox {
    pub fn is_empty(&self) -> bool {
        self.waiters.is_empty()
    }

    /// What the run waits for, as `run_waiting` journals it.
    pub fn awaited(&self) -> Vec<Awaited> {
        self.waiters
            .iter()
            .map(|(key, w)| Awaited {
                key: key.clone(),
                node: w.node.clone(),
                kind: w.kind,
                name: w.name.clone(),
                correlation: w.correlation.clone(),
            })
            .collect()
    }

    /// Forget the waits whose token is gone (an event sub-process's wait stays).
    pub fn retain_tokens(&mut self, alive: impl Fn(TokenId) -> bool) {
        self.waiters
            .retain(|(_, w)| w.token == LISTENER || alive(w.token));
        self.fired.retain(|(t, _)| alive(*t));
    }

    /// Keep the event sub-processes' waits whose key `keep` accepts.
    pub fn retain_listeners(&mut self, keep: impl Fn(&str) -> bool) {
        self.waiters.retain(|(k, w)| w.token != LISTENER || keep(k));
    }
}

/// A catch an event-based gateway can race: a message, signal or timer catch event, or a
/// receive task.
fn is_race_catch(node: &LiveNode) -> bool {
    match &node.kind {
        NodeKind::IntermediateCatchEvent { definitions } => definitions.iter().any(|d| {
            matches!(
                d,
                EventDefinition::Message | EventDefinition::Signal | EventDefinition::Timer
            )
        }),
        NodeKind::Task(TaskKind::Receive) => true,
        _ => false,
    }
}

impl Run {
    /// An intermediate catch event or a receive task: wait for its timer, message or
    /// signal (or pass, when an event-based gateway's race triggered it already).
    pub(super) fn enter_catch(
        &mut self,
        token: TokenId,
        node: &LiveNode,
    ) -> Result<(), EngineError> {
        if self.mailbox.fired.remove(&(token, node.id.clone())) {
            return self.leave(token, &node.id);
        }
        let is_receive = matches!(node.kind, NodeKind::Task(TaskKind::Receive));
        if is_receive {
            self.arm_boundaries(token, &node.id)?;
        }
        if node
            .kind
            .event_definitions()
            .contains(&EventDefinition::Timer)
        {
            return self.start_timer(token, node, None).map(|_| ());
        }
        match signature(node) {
            Some((kind, name)) => self.await_catch(token, node, kind, name, None).map(|_| ()),
            None => self.leave(token, &node.id),
        }
    }

    /// Start the boundary timers and the message and signal boundary events of
    /// `activity`, which `token` has just entered.
    pub(super) fn arm_boundaries(
        &mut self,
        token: TokenId,
        activity: &str,
    ) -> Result<(), EngineError> {
        self.start_boundary_timers(token, activity)?;
        let events: Vec<LiveNode> = self
            .topology
            .boundary_events(activity)
            .filter(|n| signature(n).is_some())
            .cloned()
            .collect();
        for event in events {
            if let Some((kind, name)) = signature(&event) {
                self.await_catch(token, &event, kind, name, Some(activity.to_string()))?;
            }
        }
        Ok(())
    }

    /// `node` starts waiting for the message or signal `name`. The wait's key.
    pub(super) fn await_catch(
        &mut self,
        token: TokenId,
        node: &LiveNode,
        kind: CatchKind,
        name: String,
        activity: Option<String>,
    ) -> Result<String, EngineError> {
        let key = self.next_key(&node.id);
        let correlation = match self.correlation_of(token, node, kind) {
            Ok(correlation) => correlation,
            Err(why) => {
                self.fail(format!("message `{name}` at `{}`: {why}", node.id));
                return Ok(key);
            }
        };
        self.emit(Event::MessageAwaited {
            key: key.clone(),
            node: node.id.clone(),
            kind,
            name: name.clone(),
        })?;
        self.mailbox.waiters.push((
            key.clone(),
            Waiter {
                token,
                node: node.id.clone(),
                kind,
                name,
                activity,
                correlation,
            },
        ));
        // A delivery journalled while the run was parked: applied when the replay
        // reaches it.
        self.hold_replayed(token, &key, Asked::Message);
        Ok(key)
    }

    /// The correlation value of a message catch whose message has a correlation key,
    /// read in the variables `token` sees ([`correlation_over`]).
    fn correlation_of(
        &self,
        token: TokenId,
        node: &LiveNode,
        kind: CatchKind,
    ) -> Result<Option<String>, crate::semantics::events::CorrelationError> {
        correlation_over(
            node.event_ref.as_ref(),
            kind,
            &crate::semantics::instances::Layered(self.layers(token)),
        )
    }

    /// `token` leaves `activity`: its message and signal boundary events no longer wait.
    pub(super) fn cancel_boundary_waits(&mut self, token: TokenId, activity: &str) {
        self.mailbox
            .waiters
            .retain(|(_, w)| !(w.token == token && w.activity.as_deref() == Some(activity)));
    }

    /// An event-based gateway whose outgoing flows all lead to catches: arm them all (the
    /// first triggered wins). `false` when the gateway is not of that shape.
    pub(super) fn race(&mut self, token: TokenId, gateway: &LiveNode) -> Result<bool, EngineError> {
        let targets: Vec<LiveNode> = self
            .topology
            .outgoing(&gateway.id)
            .filter_map(|f| self.topology.node(&f.target).cloned())
            .collect();
        if targets.is_empty() || !targets.iter().all(is_race_catch) {
            return Ok(false);
        }
        for target in targets {
            if target
                .kind
                .event_definitions()
                .contains(&EventDefinition::Timer)
            {
                self.start_timer(token, &target, Some(gateway.id.clone()))?;
            } else if let Some((kind, name)) = signature(&target) {
                self.await_catch(token, &target, kind, name, Some(gateway.id.clone()))?;
            }
        }
        Ok(true)
    }

    /// The event-based gateway whose race `catch` belongs to, when `token` waits at one.
    pub(super) fn race_of(&self, token: TokenId, catch: &str) -> Option<String> {
        match self.tokens.at(token)? {
            At::Node(at) if at != catch => self
                .topology
                .node(at)
                .filter(|n| matches!(n.kind, NodeKind::Gateway(GatewayKind::EventBased)))
                .map(|n| n.id.clone()),
            _ => None,
        }
    }

    /// `catch` won `gateway`'s race: the others are cancelled and the token goes along
    /// the winner's flow (through the catch, which has happened).
    pub(super) fn win_race(
        &mut self,
        token: TokenId,
        gateway: &str,
        catch: &str,
    ) -> Result<(), EngineError> {
        self.cancel_boundary_timers(token, gateway);
        self.cancel_boundary_waits(token, gateway);
        let flow = self
            .topology
            .outgoing(gateway)
            .find(|f| f.target == catch)
            .map(|f| f.id.clone());
        let Some(flow) = flow else {
            self.fail(format!(
                "event-based gateway `{gateway}` no longer leads to `{catch}`"
            ));
            return Ok(());
        };
        self.mailbox.fired.insert((token, catch.to_string()));
        self.send(token, vec![flow]);
        Ok(())
    }

    /// A delivery for the wait `key` (journalled already when it came from outside and
    /// the run replays it): journal it, merge its variables, and let the catch go on. A
    /// delivery for a wait that is over (its activity ended) is dropped.
    pub(super) fn on_message(&mut self, key: &str, received: Received) -> Result<(), EngineError> {
        let Some(i) = self.mailbox.waiters.iter().position(|(k, _)| k == key) else {
            return Ok(());
        };
        let (key, waiter) = self.mailbox.waiters.remove(i);
        if waiter.token == LISTENER {
            return self.deliver_to_listener(key, waiter.node, waiter.kind, waiter.name, received);
        }
        if !self.tokens.contains(waiter.token) {
            return Ok(());
        }
        if !received.journalled {
            self.emit(Event::MessageReceived {
                delivery: None,
                key,
                node: waiter.node.clone(),
                kind: waiter.kind,
                name: waiter.name.clone(),
                variables: received.variables.clone(),
                thrown_by: received.thrown_by.clone(),
                taint: received.taint.clone(),
            })?;
        }
        self.merge_variables(received.variables, received.taint.as_ref());
        let Some(node) = self.topology.node(&waiter.node).cloned() else {
            self.fail(format!("`{}` no longer exists", waiter.node));
            return Ok(());
        };
        let token = waiter.token;
        if let NodeKind::BoundaryEvent {
            attached_to,
            cancel_activity,
            ..
        } = &node.kind
        {
            let scope = self.tokens.scope_of(token);
            if *cancel_activity {
                let why = format!(
                    "activity `{attached_to}` was interrupted by {} `{}`",
                    waiter.kind.as_str(),
                    waiter.name
                );
                self.cancel_activity(token, attached_to, &why)?;
            } else {
                // A non-interrupting boundary event goes on waiting while its activity runs.
                self.await_catch(
                    token,
                    &node,
                    waiter.kind,
                    waiter.name.clone(),
                    Some(attached_to.clone()),
                )?;
            }
            let path = self.tokens.add(scope, At::Node(node.id.clone()));
            self.ready.push_back(Step::Enter {
                token: path,
                node: node.id.clone(),
            });
            return Ok(());
        }
        if let Some(gateway) = self.race_of(token, &node.id) {
            return self.win_race(token, &gateway, &node.id);
        }
        self.leave(token, &node.id)
    }

    /// A message or signal intermediate throw or end event: deliver it to the run's own
    /// catches (a message to the first waiting for it, a signal to all), then the thrower
    /// goes on (an end event ends its token).
    pub(super) fn throw_message(
        &mut self,
        token: TokenId,
        node: &LiveNode,
    ) -> Result<(), EngineError> {
        if let Some((kind, name)) = signature(node) {
            let mut keys: Vec<String> = self
                .mailbox
                .waiters
                .iter()
                .filter(|(_, w)| w.kind == kind && w.name == name)
                .map(|(k, _)| k.clone())
                .collect();
            if kind == CatchKind::Message {
                keys.truncate(1);
            }
            for key in keys {
                let received = Received {
                    journalled: false,
                    variables: Map::new(),
                    thrown_by: Some(node.id.clone()),
                    taint: None,
                };
                self.on_message(&key, received)?;
            }
        }
        if !self.tokens.contains(token) {
            return Ok(());
        }
        if node.kind.is_end_event() {
            self.end_token(token);
            Ok(())
        } else {
            self.leave(token, &node.id)
        }
    }
}
