//! What a resumed run on an engine that owns its tokens (Flowable, Kogito) knew before it
//! stopped, folded from its journal: the instance it started, the answers it journalled
//! (by idempotency key), the nodes it journalled as entered, the `skip_node`s and the
//! terminating hook it had decided. The engine keeps the tokens; [`Prior`] is what the
//! witness and the adapter rebuild their own state from, so that a re-attached run neither
//! asks a journalled control point again nor writes a record twice.

use std::collections::{BTreeMap, HashMap};

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
            Event::RunFinished { variables, .. } => self.variables.clone_from(variables),
            _ => {}
        }
    }

    /// The journalled answer to the control point with `key`.
    pub fn answer(&self, key: &str) -> Option<&Event> {
        self.answers.get(key)
    }
}
