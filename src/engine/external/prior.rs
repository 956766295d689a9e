//! What a resumed run on an engine that owns its tokens (Flowable, Kogito) knew before it
//! stopped, folded from its journal: the instance it started, the answers it journalled
//! (by idempotency key), the nodes it journalled as entered, the `skip_node`s and the
//! terminating hook it had decided. The engine keeps the tokens; [`Prior`] is what the
//! witness and the adapter rebuild their own state from, so that a re-attached run neither
//! asks a journalled control point again nor writes a record twice.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::bridge::Variables;
use crate::journal::{Event, Record};
use crate::vocab::{Decider, HookAction, TaskStatus};

/// The instance a run started on its engine (its `instance_started` record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub instance: String,
    pub definition: String,
    pub deployment: Option<String>,
    pub topic: Option<String>,
    pub worker: Option<String>,
}

/// A resumed run's journal, folded.
#[derive(Debug, Clone, Default)]
pub struct Prior {
    /// The instance, when its `instance_started` was journalled.
    pub instance: Option<Instance>,
    /// Journalled answers (task, gateway and hook records), by idempotency key.
    pub answers: HashMap<String, Event>,
    /// The nodes journalled as entered, in order.
    pub path: Vec<String>,
    /// The variables as last journalled.
    pub variables: Variables,
    /// The message of a journalled hook that terminated the run.
    pub terminated: Option<String>,
    /// Tasks a journalled `skip_node` sends a token to whose job may still wait to be
    /// completed as skipped: `true` when the task's entry (and its skipped record) is
    /// journalled already, so that the job may have been completed too (the adapter
    /// checks whether the task still waits).
    pub skips: BTreeMap<String, bool>,
    /// `skip_node`s whose skipped task record is not journalled yet (the witness writes
    /// it when the task's entry is journalled).
    pub(crate) unrecorded_skips: BTreeMap<String, (Decider, Option<String>)>,
    /// The keys of the calls whose `child_started` is journalled.
    pub children: BTreeSet<String>,
}

impl Prior {
    /// Fold `records` (a run's journal, `run_started` first).
    pub fn of(records: &[Record]) -> Prior {
        let mut prior = Prior::default();
        for record in records {
            prior.apply(&record.event);
        }
        prior
    }

    fn apply(&mut self, event: &Event) {
        if let Some(key) = event.key()
            && !matches!(event, Event::TimerFired { .. })
        {
            self.answers.insert(key.to_string(), event.clone());
        }
        match event {
            Event::RunStarted { variables, .. } => self.variables.clone_from(variables),
            Event::InstanceStarted {
                instance,
                definition,
                deployment,
                topic,
                worker,
            } => {
                self.instance = Some(Instance {
                    instance: instance.clone(),
                    definition: definition.clone(),
                    deployment: deployment.clone(),
                    topic: topic.clone(),
                    worker: worker.clone(),
                });
            }
            Event::NodeEntered { node, .. } => {
                self.path.push(node.clone());
                if let Some(entered) = self.skips.get_mut(node) {
                    if *entered {
                        // Entered again after its skipped entry: that job was worked.
                        self.skips.remove(node);
                    } else {
                        *entered = true;
                    }
                }
                self.unrecorded_skips.remove(node);
            }
            Event::TaskFinished {
                node,
                status,
                variables,
                key,
                ..
            } => {
                self.variables.extend(variables.clone());
                if key.is_some() && *status != TaskStatus::Skipped {
                    // Asked: the skip (if any) was behind it.
                    self.skips.remove(node);
                }
            }
            Event::HookEvaluated {
                hook,
                action,
                target,
                message,
                decided_by,
                reason,
                ..
            } => match (action, target) {
                (HookAction::SkipNode, Some(task)) => {
                    self.skips.insert(task.clone(), false);
                    self.unrecorded_skips
                        .insert(task.clone(), (*decided_by, reason.clone()));
                }
                (HookAction::Terminate, _) => {
                    self.terminated = Some(
                        message
                            .clone()
                            .unwrap_or_else(|| format!("terminated by hook {hook}")),
                    );
                }
                _ => {}
            },
            Event::VariablesSet { values, .. } => self.variables.extend(values.clone()),
            Event::ChildStarted { key, .. } => {
                self.children.insert(key.clone());
            }
            Event::RunFinished { variables, .. } => self.variables.clone_from(variables),
            _ => {}
        }
    }

    /// The journalled answer to the control point with `key`.
    pub fn answer(&self, key: &str) -> Option<&Event> {
        self.answers.get(key)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::*;

    fn record(seq: u64, event: Value) -> Record {
        let mut line = json!({"seq": seq, "at_ms": 0});
        line.as_object_mut()
            .unwrap()
            .extend(event.as_object().unwrap().clone());
        serde_json::from_value(line).unwrap()
    }

    fn hook(action: &str, target: Option<&str>, key: &str) -> Value {
        json!({"event": "hook_evaluated", "hook": "H", "flow": "F", "action": action,
               "target": target, "swap": null, "added": null, "state_updates": {},
               "decided_by": "rule", "reason": null, "message": null, "denied": null,
               "rejected": null, "duration_ms": 0, "key": key, "answer": {}})
    }

    fn entered(node: &str) -> Value {
        json!({"event": "node_entered", "node": node, "kind": "task", "name": null, "token": 0})
    }

    fn task(node: &str, status: &str, key: Option<&str>) -> Value {
        json!({"event": "task_finished", "node": node, "status": status, "outputs": {},
               "variables": {"x": 1}, "decided_by": "rule", "reason": null, "error": null,
               "duration_ms": 0, "key": key})
    }

    fn fold(events: Vec<Value>) -> Prior {
        let mut all = vec![json!({"event": "run_started", "run_id": "r", "app": "a",
            "process_key": "k", "process_id": "p", "engine": "flowable", "reasoner": "",
            "variables": {"v": true}})];
        all.extend(events);
        let records: Vec<Record> = all
            .into_iter()
            .enumerate()
            .map(|(i, e)| record(i as u64 + 1, e))
            .collect();
        Prior::of(&records)
    }

    #[test]
    fn a_prior_keeps_the_instance_the_keyed_answers_and_the_variables() {
        let prior = fold(vec![
            json!({"event": "instance_started", "instance": "i-1", "definition": "d:1",
                   "topic": "t", "worker": "w"}),
            entered("A"),
            task("A", "completed", Some("r:A:1")),
        ]);
        let instance = prior.instance.clone().unwrap();
        assert_eq!(
            (instance.instance.as_str(), instance.worker.as_deref()),
            ("i-1", Some("w"))
        );
        assert!(prior.answer("r:A:1").is_some());
        assert!(prior.answer("r:A:2").is_none());
        assert_eq!(prior.path, ["A"]);
        let mut want = Map::new();
        want.insert("v".into(), json!(true));
        want.insert("x".into(), json!(1));
        assert_eq!(prior.variables, want);
    }

    #[test]
    fn a_skip_stands_until_its_task_is_entered_twice_or_asked() {
        // Decided, the task not entered yet: the job is still to be completed as skipped.
        let prior = fold(vec![hook("skip_node", Some("T"), "r:H:1")]);
        assert_eq!(prior.skips.get("T"), Some(&false));
        assert!(prior.unrecorded_skips.contains_key("T"));
        // Entered and recorded as skipped: the job may or may not have been completed.
        let prior = fold(vec![
            hook("skip_node", Some("T"), "r:H:1"),
            entered("T"),
            task("T", "skipped", None),
        ]);
        assert_eq!(prior.skips.get("T"), Some(&true));
        assert!(prior.unrecorded_skips.is_empty());
        // Entered again, or asked: the skip is behind.
        let again = fold(vec![
            hook("skip_node", Some("T"), "r:H:1"),
            entered("T"),
            entered("T"),
        ]);
        assert!(again.skips.is_empty());
        let asked = fold(vec![
            hook("skip_node", Some("T"), "r:H:1"),
            task("T", "completed", Some("r:T:2")),
        ]);
        assert!(asked.skips.is_empty());
    }

    #[test]
    fn a_terminating_hook_is_remembered_with_its_message() {
        let prior = fold(vec![hook("terminate", None, "r:H:1")]);
        assert_eq!(prior.terminated.as_deref(), Some("terminated by hook H"));
    }
}
