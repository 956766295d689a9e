//! A run's state as a fold over its journal: replaying the records in order gives the
//! same [`FlowState`] as watching the run live.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::event::{Event, Record};
use crate::vocab::{
    CallOutcome, Decider, HookAction, ModelCall, Question, RemoteWait, RunStatus, TaskStatus,
    Untrusted, record_provenance,
};

/// What is known about a run after some prefix of its journal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowState {
    pub run_id: String,
    pub app: String,
    pub process_key: String,
    /// `None` until the run has finished.
    pub status: Option<RunStatus>,
    /// The run's final message (a termination or failure reason).
    pub message: Option<String>,
    pub process_variables: Map<String, Value>,
    /// The nodes entered, in order.
    pub execution_path: Vec<String>,
    /// Per gateway, the flows taken at each of its routings.
    pub gateway_decisions: BTreeMap<String, Vec<Vec<String>>>,
    /// Every hook evaluation, in order.
    pub hook_evaluations: Vec<HookRecord>,
    /// Per task, each of its executions.
    pub task_results: BTreeMap<String, Vec<TaskRecord>>,
    /// Node entries counted against the step budget (the final count once finished).
    pub steps: u64,
    /// What the run's model calls cost.
    #[serde(default, skip_serializing_if = "ModelUsage::is_empty")]
    pub model_usage: ModelUsage,
    /// Questions parked and not answered yet, by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub open_questions: BTreeMap<String, Question>,
    /// Answers recorded by `runs answer` that no resumed run has applied yet, by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unapplied_answers: BTreeMap<String, Value>,
    /// Set while the run is parked (its last stop was a `run_waiting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    /// Provenance: the variables that hold untrusted data, and where each came from
    /// (`None` for a run journalled before provenance was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted: Option<Untrusted>,
    /// How many times the run was resumed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub resumes: u64,
    /// Every BPMN error and escalation thrown, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throws: Vec<ThrowRecord>,
    /// The remote (A2A) tasks the run's delegations started and did not finish, by the
    /// control point's key: from `remote_task_started`, updated by a parked question's
    /// `remote`, gone with the visit's `task_finished` (or a withdrawn question). A
    /// resumed run follows them up with `GetTask`; `runs cancel` cancels them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub remote_tasks: BTreeMap<String, RemoteTask>,
    /// The tool conversations of task visits that have not finished, by the visit's key:
    /// the turns the model asked for tools in and each call's state. A resumed run
    /// continues them (a finished call is read from here, never made again).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_visits: BTreeMap<String, ToolVisit>,
}

/// A task visit's tool conversation so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolVisit {
    pub node: String,
    pub turns: Vec<ToolTurn>,
}

/// One turn in which the model asked for tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolTurn {
    pub content: Option<String>,
    pub calls: Vec<ToolCallState>,
}

/// One call the model asked for, and how far it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallState {
    pub requested: super::event::RequestedCall,
    /// Its place among the visit's calls, once it was started or ended.
    pub call: Option<u32>,
    /// Started (`tool_call_started`): the tool, and whether it may be repeated.
    pub started: Option<(String, bool)>,
    /// Ended (`tool_called`): how, and what the model was given.
    pub ended: Option<(super::event::ToolOutcome, String)>,
}

/// A remote task a delegation started and has not finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteTask {
    /// The delegated task.
    pub node: String,
    #[serde(flatten)]
    pub remote: RemoteWait,
    /// A consultation whose remote person asked a question back (`input-required`): the
    /// reply a person gave with `runs answer --reply` (`remote_replied`), sent in the same
    /// A2A task when the run resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
}

/// A BPMN error or escalation thrown, and what caught it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThrowRecord {
    pub kind: super::event::ThrownKind,
    pub code: Option<String>,
    /// The failed task, or the end or throw event.
    pub node: String,
    /// The boundary event that caught it.
    pub caught_by: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Why a parked run waits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Waiting {
    pub reason: String,
    pub questions: Vec<String>,
    pub due_ms: Option<u64>,
    /// When it parked (milliseconds since the Unix epoch).
    pub since_ms: u64,
    /// The messages and signals it waits for (those delivered since it parked are gone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub awaiting: Vec<super::event::Awaited>,
    /// The keys of the messages and signals delivered since it parked, not applied yet
    /// (the run applies them when resumed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivered: Vec<String>,
}

/// Totals over a run's model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelUsage {
    pub calls: u64,
    /// Calls that gave no usable answer (invalid, error, timeout).
    pub failed_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Wall time spent in model calls (summed; calls may overlap).
    pub latency_ms: u64,
}

impl ModelUsage {
    pub fn is_empty(&self) -> bool {
        self.calls == 0
    }

    /// Count a model call (a remote agent's exchange steps are not model calls).
    pub fn add(&mut self, call: &ModelCall) {
        if call.is_remote() {
            return;
        }
        self.calls += 1;
        if matches!(
            call.outcome,
            CallOutcome::Invalid | CallOutcome::Error | CallOutcome::Timeout
        ) {
            self.failed_calls += 1;
        }
        self.prompt_tokens += call.prompt_tokens.unwrap_or(0);
        self.completion_tokens += call.completion_tokens.unwrap_or(0);
        self.latency_ms += call.latency_ms;
    }
}

/// One hook evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRecord {
    pub hook: String,
    pub flow: String,
    pub action: HookAction,
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<String>,
    pub denied: Option<HookAction>,
    pub rejected: Option<String>,
    pub decided_by: Decider,
    pub reason: Option<String>,
}

/// One execution of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub status: TaskStatus,
    pub outputs: Map<String, Value>,
    pub decided_by: Decider,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub error: Option<String>,
}

impl FlowState {
    /// Apply one record. Variables: `RunStarted` sets them, `TaskFinished` and
    /// `VariablesSet` merge theirs in, `RunFinished` replaces them with the final ones.
    /// (Hook state updates arrive as `VariablesSet`; `HookEvaluated` only reports them.)
    pub fn apply(&mut self, record: &Record) {
        if let Some(key) = record.event.key() {
            self.unapplied_answers.remove(key);
            self.open_questions.remove(key);
        }
        match &record.event {
            Event::RunStarted {
                run_id,
                app,
                process_key,
                variables,
                untrusted,
                ..
            } => {
                self.run_id.clone_from(run_id);
                self.app.clone_from(app);
                self.process_key.clone_from(process_key);
                self.process_variables.clone_from(variables);
                self.untrusted.clone_from(untrusted);
            }
            Event::NodeEntered { node, .. } => {
                self.execution_path.push(node.clone());
                self.steps += 1;
            }
            Event::FlowTaken { .. }
            | Event::TopologyChanged { .. }
            | Event::InstanceStarted { .. }
            | Event::ChildStarted { .. } => {}
            Event::TaskFinished {
                node,
                status,
                outputs,
                variables,
                decided_by,
                reason,
                error,
                taint,
                own,
                key,
                ..
            } => {
                if let Some(key) = key {
                    self.remote_tasks.remove(key);
                    self.end_tool_visit(key);
                }
                // What stays a multi-instance instance's own is not the process's.
                let written: Map<String, Value> = (variables.iter())
                    .filter(|(name, _)| !own.contains(name))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                merge(&mut self.process_variables, &written);
                if let Some(u) = &mut self.untrusted {
                    record_provenance(u, written.keys(), taint.as_ref());
                }
                self.task_results
                    .entry(node.clone())
                    .or_default()
                    .push(TaskRecord {
                        status: *status,
                        outputs: outputs.clone(),
                        decided_by: *decided_by,
                        reason: reason.clone(),
                        error: error.clone(),
                    });
            }
            Event::GatewayRouted {
                node, flows, key, ..
            } => {
                // A consultation the gateway parked on has ended with its decision.
                if let Some(key) = key {
                    self.remote_tasks.remove(key);
                }
                self.gateway_decisions
                    .entry(node.clone())
                    .or_default()
                    .push(flows.clone());
            }
            Event::HookEvaluated {
                hook,
                flow,
                action,
                target,
                swap,
                added,
                decided_by,
                reason,
                denied,
                rejected,
                key,
                ..
            } => {
                if let Some(key) = key {
                    self.remote_tasks.remove(key);
                }
                self.hook_evaluations.push(HookRecord {
                    hook: hook.clone(),
                    flow: flow.clone(),
                    action: *action,
                    target: target.clone(),
                    swap: swap.clone(),
                    added: added.clone(),
                    denied: *denied,
                    rejected: rejected.clone(),
                    decided_by: *decided_by,
                    reason: reason.clone(),
                })
            }
            Event::VariablesSet { values, taint, .. } => {
                merge(&mut self.process_variables, values);
                if let Some(u) = &mut self.untrusted {
                    record_provenance(u, values.keys(), taint.as_ref());
                }
            }
            Event::ModelCalled { call, .. } => self.model_usage.add(call),
            Event::QuestionParked { question } => {
                if let Some(remote) = &question.remote {
                    self.remote_tasks.insert(
                        question.key.clone(),
                        RemoteTask {
                            node: question.element.clone(),
                            remote: remote.clone(),
                            reply: None,
                        },
                    );
                }
                self.open_questions
                    .insert(question.key.clone(), (**question).clone());
            }
            Event::QuestionAnswered { key, answer, .. } => {
                self.open_questions.remove(key);
                self.unapplied_answers.insert(key.clone(), answer.clone());
            }
            Event::QuestionWithdrawn { key, .. } => {
                // A tool call's confirmation (`<visit>#<call>`) goes with its visit.
                self.end_tool_visit(key.split_once('#').map_or(key.as_str(), |(v, _)| v));
                self.remote_tasks.remove(key);
                self.open_questions.remove(key);
                self.unapplied_answers.remove(key);
            }
            Event::TimerScheduled { .. }
            | Event::TimerFired { .. }
            | Event::MessageAwaited { .. } => {}
            Event::MessageReceived {
                key,
                variables,
                taint,
                ..
            } => {
                merge(&mut self.process_variables, variables);
                if let Some(u) = &mut self.untrusted {
                    record_provenance(u, variables.keys(), taint.as_ref());
                }
                if let Some(waiting) = &mut self.waiting
                    && let Some(i) = waiting.awaiting.iter().position(|a| &a.key == key)
                {
                    waiting.awaiting.remove(i);
                    waiting.delivered.push(key.clone());
                }
            }
            Event::EventThrown {
                kind,
                code,
                node,
                caught_by,
                ..
            } => self.throws.push(ThrowRecord {
                kind: *kind,
                code: code.clone(),
                node: node.clone(),
                caught_by: caught_by.clone(),
            }),
            Event::RunWaiting {
                reason,
                questions,
                due_ms,
                awaiting,
            } => {
                self.waiting = Some(Waiting {
                    reason: reason.clone(),
                    questions: questions.clone(),
                    due_ms: *due_ms,
                    since_ms: record.at_ms,
                    awaiting: awaiting.clone(),
                    delivered: Vec::new(),
                });
            }
            Event::RemoteTaskStarted { node, key, remote } => {
                self.remote_tasks.insert(
                    key.clone(),
                    RemoteTask {
                        node: node.clone(),
                        remote: remote.clone(),
                        reply: None,
                    },
                );
            }
            Event::RemoteReplied {
                key,
                task_id,
                reply,
                ..
            } => {
                if let Some(task) = self.remote_tasks.get_mut(key)
                    && &task.remote.task_id == task_id
                {
                    task.reply = Some(reply.clone());
                }
            }
            Event::ToolsRequested {
                node,
                key,
                content,
                calls,
                ..
            } => {
                let visit = self.tool_visits.entry(key.clone()).or_default();
                visit.node.clone_from(node);
                visit.turns.push(ToolTurn {
                    content: content.clone(),
                    calls: calls
                        .iter()
                        .map(|c| ToolCallState {
                            requested: c.clone(),
                            call: None,
                            started: None,
                            ended: None,
                        })
                        .collect(),
                });
            }
            Event::ToolCallStarted {
                key,
                call,
                id,
                tool,
                idempotent,
                ..
            } => {
                if let Some(c) = self.tool_call(key, id) {
                    c.call = Some(*call);
                    c.started = Some((tool.clone(), *idempotent));
                }
            }
            Event::ToolCalled {
                key,
                call,
                id,
                outcome,
                result,
                question,
                ..
            } => {
                if let Some(q) = question {
                    self.open_questions.remove(q);
                    self.unapplied_answers.remove(q);
                }
                if let Some(c) = self.tool_call(key, id) {
                    c.call = Some(*call);
                    c.ended = Some((*outcome, result.clone()));
                }
            }
            Event::RunCancelled { .. } => {}
            Event::RunResumed { .. } => {
                self.waiting = None;
                self.resumes += 1;
            }
            Event::RunFinished {
                status,
                message,
                variables,
                steps,
            } => {
                self.status = Some(*status);
                self.waiting = None;
                self.message.clone_from(message);
                self.process_variables.clone_from(variables);
                self.steps = *steps;
            }
        }
    }

    /// The task visit `key` ended: its tool conversation, and the confirmations its calls
    /// asked for (keys `<key>#<call>`), are gone.
    fn end_tool_visit(&mut self, key: &str) {
        if self.tool_visits.remove(key).is_some() {
            let prefix = format!("{key}#");
            self.open_questions.retain(|k, _| !k.starts_with(&prefix));
            self.unapplied_answers
                .retain(|k, _| !k.starts_with(&prefix));
        }
    }

    /// The call with the model's id `id` of the last turn of the visit `key`.
    fn tool_call(&mut self, key: &str, id: &str) -> Option<&mut ToolCallState> {
        let turn = self.tool_visits.get_mut(key)?.turns.last_mut()?;
        turn.calls.iter_mut().find(|c| c.requested.id == id)
    }

    /// The run's status: how it ended, `Waiting` while parked, `None` while it runs (or
    /// after a crash).
    pub fn current_status(&self) -> Option<RunStatus> {
        self.status
            .or_else(|| self.waiting.as_ref().map(|_| RunStatus::Waiting))
    }

    /// Drop the logs of what each visit did (`task_results`, `gateway_decisions`,
    /// `hook_evaluations`, `throws`), which only grow, keeping what says where the run
    /// is: its status, variables, path, open questions and open work. A run's live state
    /// (what `start` shows) then stays the size of its open work, not of its length;
    /// `runs show` folds the journal whole.
    pub fn forget_visits(&mut self) {
        self.task_results.clear();
        self.gateway_decisions.clear();
        self.hook_evaluations.clear();
        self.throws.clear();
    }

    /// The state after `records`, in order.
    pub fn fold<'a>(records: impl IntoIterator<Item = &'a Record>) -> FlowState {
        let mut state = FlowState::default();
        for record in records {
            state.apply(record);
        }
        state
    }
}

fn merge(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (name, value) in from {
        into.insert(name.clone(), value.clone());
    }
}
