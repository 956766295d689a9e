//! Replaying a journalled run (`runs replay`) and what tells the two apart: the decisions
//! of each run per control point ([`decisions`], [`compare`]), the control points whose
//! question drifted from the recorded one ([`drifts`]) and the tool calls the config now
//! governs differently ([`tool_drifts`]).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::journal::{Event, EventSink, FlowState, Record};
use crate::vocab::{Decider, HookAction};

/// Who decided, as a replay must reproduce it: a model's, a person's or a script's answer,
/// or a model's fallback, is replayed from the journal (so all read as `judgement`);
/// conditions, rules, defaults and static actions decide again by themselves.
fn decider(by: Decider) -> &'static str {
    match by {
        Decider::Model | Decider::Human | Decider::Scripted | Decider::Fallback => "judgement",
        other => other.as_str(),
    }
}

/// Per control point, what was decided at each visit (the decider, the choice), as text.
pub fn decisions(records: &[Record]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in records {
        // The run's own outcome is kept under the empty id (`compare` calls it "the run").
        let (id, text): (&str, String) = match &r.event {
            Event::TaskFinished {
                node,
                status,
                outputs,
                decided_by,
                ..
            } => (
                node,
                format!(
                    "task {status:?} by {} with {}",
                    decider(*decided_by),
                    serde_json::Value::Object(outputs.clone())
                ),
            ),
            Event::GatewayRouted {
                node,
                flows,
                decided_by,
                ..
            } => (
                node,
                format!("gateway → {} by {}", flows.join(", "), decider(*decided_by)),
            ),
            Event::HookEvaluated {
                hook,
                action,
                target,
                swap,
                added,
                denied,
                decided_by,
                ..
            } => {
                let mut text = format!("hook {action} by {}", decider(*decided_by));
                if let Some(t) = target {
                    text.push_str(&format!(" target {t}"));
                }
                if let Some((a, b)) = swap {
                    text.push_str(&format!(" swap {a}↔{b}"));
                }
                if let Some(a) = added {
                    text.push_str(&format!(" add {a}"));
                }
                if let Some(d) = denied.filter(|d| *d != HookAction::Continue) {
                    text.push_str(&format!(" (denied {d})"));
                }
                (hook, text)
            }
            Event::RunFinished { status, .. } => {
                ("", format!("run {}", format!("{status:?}").to_lowercase()))
            }
            _ => continue,
        };
        out.entry(id.to_string()).or_default().push(text);
    }
    out
}

/// The differences between two runs' decisions, one line each.
pub fn compare(
    original: &BTreeMap<String, Vec<String>>,
    replayed: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let mut out = Vec::new();
    let name = |id: &str| {
        if id.is_empty() {
            "the run".to_string()
        } else {
            format!("`{id}`")
        }
    };
    let ids: std::collections::BTreeSet<&String> = original.keys().chain(replayed.keys()).collect();
    for id in ids {
        let a = original.get(id).map(Vec::as_slice).unwrap_or_default();
        let b = replayed.get(id).map(Vec::as_slice).unwrap_or_default();
        for i in 0..a.len().max(b.len()) {
            match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) if x == y => {}
                (Some(x), Some(y)) => {
                    out.push(format!("{} visit {}: was {x}; now {y}", name(id), i + 1))
                }
                (Some(x), None) => out.push(format!(
                    "{} visit {}: was {x}; not reached now",
                    name(id),
                    i + 1
                )),
                (None, Some(y)) => out.push(format!(
                    "{} visit {}: not reached before; now {y}",
                    name(id),
                    i + 1
                )),
                (None, None) => {}
            }
        }
    }
    out
}

/// What the replay found drifted at one control point: its question's context differs
/// from the recorded one. The journal keeps a question's digest, not the question, so
/// the recorded side is rebuilt from the journal: the process variables as they were when
/// the control point was asked (the fold of the records before its decision).
#[derive(Debug)]
pub struct Drift {
    element: String,
    /// The element's name in the model, when the journal gives one.
    name: Option<String>,
    visit: usize,
    diff: crate::reason::record::ContextDiff,
    /// The app's files differ from those the run ran (by their digests).
    app_changed: bool,
}

/// The replayed tool calls that the config now governs differently from the record,
/// each named: `<task>: tool call drifted from the record: call N, `<tool>` ...`.
pub fn tool_drifts(replayed: &[Record]) -> Vec<String> {
    use crate::reason::tools::TOOL_DRIFT;
    (replayed.iter())
        .filter_map(|r| match &r.event {
            Event::TaskFinished {
                node,
                error: Some(error),
                ..
            } => error
                .find(TOOL_DRIFT)
                .map(|at| format!("`{node}`: {}", &error[at..])),
            _ => None,
        })
        .collect()
}

/// Marks the message of a refused answer (reason::scripted).
const DRIFTED: &str = "context drifted since recording";

/// The control points whose recorded answers the replay refused as drifted, each with
/// the difference between its recorded and its new context.
pub fn drifts(original: &[Record], replayed: &[Record]) -> Vec<Drift> {
    let app_digest = |records: &[Record]| match records.first().map(|r| &r.event) {
        Some(Event::RunStarted { app_digest, .. }) => app_digest.clone(),
        _ => None,
    };
    let app_changed = match (app_digest(original), app_digest(replayed)) {
        (Some(a), Some(b)) => a != b,
        _ => false,
    };
    let mut out: Vec<Drift> = Vec::new();
    for (at, r) in replayed.iter().enumerate() {
        let texts: Vec<&str> = match &r.event {
            Event::TaskFinished { error, .. } => error.iter().map(String::as_str).collect(),
            Event::HookEvaluated {
                rejected, reason, ..
            } => rejected.iter().chain(reason).map(String::as_str).collect(),
            Event::RunFinished { message, .. } => message.iter().map(String::as_str).collect(),
            _ => continue,
        };
        let Some(element) = texts
            .iter()
            .filter(|t| t.contains(DRIFTED))
            .find_map(|t| drifted_element(t))
        else {
            continue;
        };
        if out.iter().any(|d| d.element == element) {
            continue;
        }
        // Which visit: the decisions at the element before this record, plus one.
        let visit = decision_positions(&replayed[..at], &element).len() + 1;
        let before_new = &replayed[..at];
        let before_old = match decision_positions(original, &element).get(visit - 1) {
            Some(&i) => &original[..i],
            None => original,
        };
        let vars = |records: &[Record]| FlowState::fold(records).process_variables;
        let name = original
            .iter()
            .chain(replayed)
            .find_map(|r| match &r.event {
                Event::NodeEntered { node, name, .. } if *node == element => name.clone(),
                _ => None,
            });
        out.push(Drift {
            diff: crate::reason::record::ContextDiff::of(&vars(before_old), &vars(before_new)),
            element,
            name,
            visit,
            app_changed,
        });
    }
    out
}

/// `X` in "… control point `X`: …".
fn drifted_element(text: &str) -> Option<String> {
    let rest = &text[text.find("control point `")? + "control point `".len()..];
    Some(rest[..rest.find('`')?].to_owned())
}

/// The positions of the records deciding at `element` (task, gateway or hook).
fn decision_positions(records: &[Record], element: &str) -> Vec<usize> {
    (records.iter().enumerate())
        .filter(|(_, r)| match &r.event {
            Event::TaskFinished { node, .. } | Event::GatewayRouted { node, .. } => node == element,
            Event::HookEvaluated { hook, flow, .. } => hook == element || flow == element,
            _ => false,
        })
        .map(|(i, _)| i)
        .collect()
}

impl Drift {
    pub fn lines(&self) -> Vec<String> {
        let who = match &self.name {
            Some(n) => format!("{n} (`{}`)", self.element),
            None => format!("`{}`", self.element),
        };
        let mut lines = vec![format!(
            "drift at {who}, visit {}: its question is not the one recorded",
            self.visit
        )];
        if self.diff.is_empty() {
            lines.push("  the variables are the same as when it was recorded".to_owned());
        } else {
            lines.push("  variables, recorded → now:".to_owned());
            lines.extend(
                self.diff
                    .lines(DRIFT_LINES)
                    .into_iter()
                    .map(|l| format!("    {l}")),
            );
        }
        if self.app_changed {
            lines.push(
                "  the app's files changed since the run (config, model or policies): its \
                 policy, instruction, outputs or flows may differ too"
                    .to_owned(),
            );
        } else if self.diff.is_empty() {
            lines.push(
                "  the app's files are the same: the choices offered there differ (an earlier \
                 decision or condition went another way)"
                    .to_owned(),
            );
        }
        lines
    }

    pub fn to_json(&self) -> Value {
        json!({
            "element": self.element,
            "name": self.name,
            "visit": self.visit,
            "variables": self.diff.to_json(),
            "app_changed": self.app_changed,
        })
    }
}

/// At most this many changed keys are listed per drift.
const DRIFT_LINES: usize = 12;
/// The messages and signals a run received from outside, in the batches they came in
/// (those delivered while it was parked once): what a replay delivers again.
pub fn delivery_batches(original: &[Record]) -> Vec<Vec<&Event>> {
    let external = |e: &Event| {
        matches!(
            e,
            Event::MessageReceived {
                thrown_by: None,
                ..
            }
        )
    };
    let mut batches: Vec<Vec<&Event>> = Vec::new();
    let mut previous_was_delivery = false;
    for event in original.iter().map(|r| &r.event) {
        let delivery = external(event);
        if delivery {
            match batches.last_mut() {
                Some(batch) if previous_was_delivery => batch.push(event),
                _ => batches.push(vec![event]),
            }
        }
        previous_was_delivery = delivery;
    }
    batches
}

/// Why a delivery could not be made again to a replayed run.
#[derive(Debug, thiserror::Error)]
pub enum RedeliveryError {
    #[error("cannot reopen the replayed run: {0}")]
    Reopen(#[source] crate::journal::JournalError),
    #[error("cannot journal the delivery: {0}")]
    Journal(#[source] crate::journal::JournalError),
}

/// Deliver `batch` again to the replayed run `new_id`, parked waiting for it: each to
/// the same element, journalled under the run's lock. The run to resume from; `None`
/// when it has ended or waits for something else (the comparison reports it).
pub fn deliver_again(
    run_dir: &std::path::Path,
    durability: crate::journal::Durability,
    new_id: &str,
    batch: &[&Event],
) -> Result<Option<super::plan::Resumed>, RedeliveryError> {
    let (journal, reopened) =
        crate::journal::Journal::open(&crate::journal::store::run_dir(run_dir, new_id), durability)
            .map_err(RedeliveryError::Reopen)?;
    let mut records = reopened.records;
    let state = FlowState::fold(records.iter());
    let Some(waiting) = state.waiting.as_ref().filter(|_| state.status.is_none()) else {
        return Ok(None);
    };
    let mut open = waiting.awaiting.clone();
    for event in batch {
        let Event::MessageReceived {
            node,
            kind,
            name,
            variables,
            taint,
            ..
        } = event
        else {
            continue;
        };
        let Some(i) = open
            .iter()
            .position(|a| &a.node == node && a.kind == *kind && &a.name == name)
        else {
            return Ok(None);
        };
        let wait = open.remove(i);
        let record = journal
            .emit(Event::MessageReceived {
                delivery: None,
                key: wait.key,
                node: node.clone(),
                kind: *kind,
                name: name.clone(),
                variables: variables.clone(),
                thrown_by: None,
                taint: taint.clone(),
            })
            .and_then(|r| journal.commit().map(|()| r))
            .map_err(RedeliveryError::Journal)?;
        records.push(record);
    }
    let Some(Event::RunStarted {
        variables,
        untrusted,
        ..
    }) = records.first().map(|r| r.event.clone())
    else {
        return Ok(None);
    };
    Ok(Some(super::plan::Resumed {
        run_id: new_id.to_string(),
        journal,
        variables,
        untrusted,
        model_usage: state.model_usage,
        records,
        answers: crate::reason::park::Answers::default(),
        repaired: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drifted_element_is_read_from_the_refusal() {
        let text = "invalid answer for control point `Task_1`: the context drifted since \
                    recording (…)";
        assert_eq!(drifted_element(text).as_deref(), Some("Task_1"));
        assert_eq!(drifted_element("no element here"), None);
    }

    #[test]
    fn compare_names_each_visit_that_differs() {
        let mut a = BTreeMap::new();
        a.insert("G".to_string(), vec!["gateway → F1 by model".to_string()]);
        a.insert(String::new(), vec!["run completed".to_string()]);
        let mut b = a.clone();
        assert!(compare(&a, &b).is_empty());
        b.insert(
            "G".to_string(),
            vec!["gateway → F2 by scripted".to_string()],
        );
        b.insert(
            "T".to_string(),
            vec!["task Completed by none with {}".to_string()],
        );
        let diffs = compare(&a, &b);
        assert_eq!(diffs.len(), 2, "{diffs:?}");
        assert!(diffs[0].contains("`G` visit 1: was gateway → F1 by model"));
        assert!(diffs[1].contains("`T` visit 1: not reached before"));
    }
}
