//! Resuming a run: the engine re-executes the run from its start, answering every control
//! point whose answer its journal holds from that record instead of asking, and checking
//! each record it derives against the journal instead of writing it. The run's state
//! (tokens, the live topology with every adaptation, joins, loop counters, the steps
//! spent) is therefore the fold of the journalled answers through the same deterministic
//! engine that produced them: there is no second implementation of the state to drift.
//!
//! Answers are applied in the journal's order: when the engine has nothing left to do
//! without an answer, the journal's next keyed record (a task's, gateway's or hook's
//! record, or a timer firing) names the call to answer next. Calls whose answer is not in
//! the journal were in flight when the run stopped: they are held back until the replay
//! is over, then asked again with the same idempotency key. A record the engine derives
//! that differs from the journal's stops the resume before anything is written
//! ([`EngineError::Diverged`]).
//!
//! Messages and signals delivered from outside (`message_received` without `thrown_by`)
//! are inputs, not derived: each is applied, without being written again, once the
//! replay has derived every record journalled before it.

use crate::engine::recall::{Recalled, recall};
use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::calls::Answer;
use super::tokens::TokenId;
use crate::bpmn::GatewayKind;
use crate::engine::EngineError;
use crate::journal::{Event, Record};

/// A call a resumed run makes again, to be answered from the journal.
pub(super) enum Asked<'a> {
    Task {
        node: &'a str,
    },
    Gateway {
        node: &'a str,
        kind: GatewayKind,
    },
    Hook {
        flow: &'a str,
        hook: &'a str,
    },
    Timer {
        node: &'a str,
    },
    /// A wait for a message or signal: answered by a delivery from outside.
    Message,
}

/// The answer a journalled record gives to the call `asked`, which `token` waits for.
/// `None` when the record does not answer a call of that kind.
pub(super) fn answer_of(
    record: &Event,
    asked: Asked<'_>,
    token: TokenId,
    key: &str,
) -> Option<Answer> {
    let key = key.to_string();
    Some(match (asked, recall(record)?) {
        (Asked::Task { node }, Recalled::Task(outcome)) => Answer::Task {
            token,
            node: node.to_string(),
            key,
            result: Ok(outcome),
            duration_ms: 0,
        },
        (Asked::Gateway { node, kind }, Recalled::Gateway(decision)) => Answer::Gateway {
            token,
            node: node.to_string(),
            key,
            kind,
            result: Ok(decision),
            duration_ms: 0,
        },
        (Asked::Hook { flow, hook }, Recalled::Hook(result)) => Answer::Hook {
            token,
            flow: flow.to_string(),
            hook: hook.to_string(),
            result: result.map_err(|mut e| {
                e.element = hook.to_string();
                e
            }),
            key,
            duration_ms: 0,
        },
        (Asked::Timer { node }, Recalled::Timer) => Answer::Timer {
            token,
            node: node.to_string(),
            key,
        },
        (Asked::Message, Recalled::Message) => Answer::Message {
            key,
            received: super::messages::Received::of(record)?.1,
        },
        _ => return None,
    })
}

pub(super) struct Replay {
    /// The journal's derived records, in order.
    derived: Vec<Event>,
    /// The next derived record to match.
    cursor: usize,
    /// Per idempotency key: the index in `derived` of the record answering it.
    answers: HashMap<String, usize>,
    /// When each timer scheduled in the journal is due, by key.
    timers: HashMap<String, u64>,
    /// The messages and signals delivered from outside (inputs, not derived), in journal
    /// order, each with the number of derived records before it: the run applied it once
    /// it had derived those.
    deliveries: Vec<(usize, Event)>,
    /// The deliveries applied so far (a prefix of `deliveries`).
    delivered: usize,
}

impl Replay {
    pub fn new(records: &[Record]) -> Replay {
        let derived: Vec<Event> = records
            .iter()
            .map(|r| &r.event)
            .filter(|e| e.is_derived())
            .cloned()
            .collect();
        let mut deliveries = Vec::new();
        let mut before = 0;
        for event in records.iter().map(|r| &r.event) {
            if event.is_derived() {
                before += 1;
            } else if matches!(event, Event::MessageReceived { .. }) {
                deliveries.push((before, event.clone()));
            }
        }
        let mut answers = HashMap::new();
        let mut timers = HashMap::new();
        for (i, event) in derived.iter().enumerate() {
            if let Some(key) = event.key() {
                answers.entry(key.to_string()).or_insert(i);
            }
            if let Event::TimerScheduled { key, due_ms, .. } = event {
                timers.insert(key.clone(), *due_ms);
            }
        }
        Replay {
            derived,
            cursor: 0,
            answers,
            timers,
            deliveries,
            delivered: 0,
        }
    }

    /// The delivery from outside for the wait `key`, if the journal holds one.
    pub fn delivery(&self, key: &str) -> Option<&Event> {
        self.deliveries
            .iter()
            .map(|(_, e)| e)
            .find(|e| e.key() == Some(key))
    }

    /// The key of the next delivery from outside to apply now: the run had derived every
    /// record before it when it applied it. Marked applied.
    pub fn next_delivery(&mut self) -> Option<String> {
        let (before, event) = self.deliveries.get(self.delivered)?;
        if *before > self.cursor {
            return None;
        }
        self.delivered += 1;
        event.key().map(str::to_string)
    }

    /// Whether records remain to be derived again.
    pub fn active(&self) -> bool {
        self.cursor < self.derived.len()
    }

    /// When the timer with `key` was due, if the journal scheduled it.
    pub fn due(&self, key: &str) -> Option<u64> {
        self.timers.get(key).copied()
    }

    /// The journalled record that answers the call with `key`, if the journal has one.
    pub fn answer(&self, key: &str) -> Option<&Event> {
        self.answers.get(key).map(|&i| &self.derived[i])
    }

    /// Match `event`, derived by the engine, against the journal. `Ok(true)`: it was
    /// journalled already (not to be written again); `Ok(false)`: the replay is over.
    pub fn consume(&mut self, event: &Event) -> Result<bool, EngineError> {
        let Some(expected) = self.derived.get(self.cursor) else {
            return Ok(false);
        };
        if !same(expected, event) {
            return Err(EngineError::Diverged(format!(
                "the journal's record {} is {}, but the engine now derives {}",
                self.cursor + 1,
                brief(expected),
                brief(event)
            )));
        }
        self.cursor += 1;
        Ok(true)
    }

    /// The key of the answer the journal applies next: the first record of every
    /// answer's application is its keyed record.
    pub fn next_key(&self) -> Option<&str> {
        self.derived.get(self.cursor).and_then(Event::key)
    }

    /// Why the replay cannot go on: the engine waits for answers the journal does not
    /// give next.
    pub fn stalled(&self, waiting: &BTreeSet<&str>) -> EngineError {
        let next = self
            .derived
            .get(self.cursor)
            .map_or_else(|| "nothing".to_string(), brief);
        EngineError::Diverged(format!(
            "the journal's next record is {next}, but the engine waits for {}",
            if waiting.is_empty() {
                "nothing".to_string()
            } else {
                waiting.iter().copied().collect::<Vec<_>>().join(", ")
            }
        ))
    }
}

/// Two records are the same event, whatever their durations.
fn same(a: &Event, b: &Event) -> bool {
    if std::mem::discriminant(a) != std::mem::discriminant(b) {
        return false;
    }
    let strip = |e: &Event| {
        let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.remove("duration_ms");
        }
        v
    };
    strip(a) == strip(b)
}

/// `task_finished Activity_1` and the like, for messages.
fn brief(event: &Event) -> String {
    let what = match event {
        Event::NodeEntered { node, .. }
        | Event::TaskFinished { node, .. }
        | Event::GatewayRouted { node, .. }
        | Event::TimerScheduled { node, .. }
        | Event::TimerFired { node, .. }
        | Event::MessageAwaited { node, .. }
        | Event::MessageReceived { node, .. }
        | Event::EventThrown { node, .. } => node.clone(),
        Event::FlowTaken { flow, .. } => flow.clone(),
        Event::HookEvaluated { hook, flow, .. } => format!("{hook} on {flow}"),
        Event::VariablesSet { source, .. } => source.clone(),
        Event::TopologyChanged { detail, .. } => detail.clone(),
        _ => String::new(),
    };
    format!("{} {what}", event.name()).trim_end().to_string()
}
