//! The harness's side of a run on an external engine: [`Witness`] answers the engine's
//! control-point calls through the harness and journals what it sees, so that the run's
//! journal, stream and [`FlowState`](crate::journal::FlowState) read like a native run's:
//! the nodes the engine entered (from each context's `history`, then the result's path),
//! the model calls, the task, gateway and hook records, and the topology changes.
//!
//! A hook's record says what a conforming engine applies (docs/bridge.md §6): the
//! witness checks the harness's decision against its own copy of the live topology with
//! the rules the native engine uses ([`adapt`](crate::engine::adapt)), so an action that
//! cannot apply is journalled as `continue` with the reason, and the changes that do apply
//! are made to the copy too.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Map;

use super::prior::Prior;
use crate::bpmn::{CallSpec, LoopKind, Process, call_spec};
use crate::bridge::child::{ChildCall, ChildRuns, call_outcome, child_run_id};
use crate::bridge::{
    Answer, BoxFuture, ControlPointContext, ControlPointError, ControlPoints, EngineRecord,
    GatewayDecision, HookDecision, TaskOutcome, Variables,
};
use crate::engine::adapt::{self, Applied, Evaluation, Facts, Plan};
use crate::engine::recall::{Recalled, recall};
use crate::journal::event::InstanceVisit;
use crate::journal::{Event, EventSink, JournalError};
use crate::semantics::topology::{LiveFlow, Topology};
use crate::vocab::{
    ControlPointKind, Decider, HookAction, ModelCall, RunStatus, TaskStatus, error_code,
};

/// What a conforming engine applies of a hook decision: the action as checked against
/// the live topology, and the state updates (none when the action was refused).
#[derive(Debug, Clone)]
pub(crate) struct Applying {
    pub plan: Plan,
    pub state_updates: Variables,
}

impl Applying {
    fn nothing() -> Applying {
        Applying {
            plan: Plan::Continue,
            state_updates: Variables::new(),
        }
    }
}

/// Answers control points through `inner` and journals them to `events`. A resumed run's
/// witness answers a control point whose idempotency key its journal holds from that
/// record (no harness, no record written): [`Prior`].
pub struct Witness {
    inner: Arc<dyn ControlPoints>,
    events: Arc<dyn EventSink>,
    state: Mutex<Seen>,
    prior: Option<Prior>,
    /// The calls of the process's call activities that name a process, by call activity.
    calls: BTreeMap<String, CallSpec>,
    /// Who runs them as child runs (none: a call activity is asked as a task).
    children: Option<Children>,
    /// For each node inside (or being) a multi-instance activity, the names its task
    /// writes that stay the innermost instance's own (as the native engine keeps them).
    instance_own: BTreeMap<String, BTreeSet<String>>,
}

/// [`Witness::instance_own`] of `process`.
fn instance_own_names(process: &Process) -> BTreeMap<String, BTreeSet<String>> {
    let multi = |id: &str| {
        let looping = process.node(id)?.looping.as_ref()?;
        matches!(looping.kind, LoopKind::MultiInstance { .. })
            .then(|| crate::semantics::instances::own_names(&looping.multi))
    };
    (process.nodes.iter())
        .filter_map(|n| {
            // The node itself, else its nearest enclosing sub-process that is one.
            let mut at = Some(n.id.as_str());
            while let Some(id) = at {
                if let Some(own) = multi(id) {
                    return Some((n.id.clone(), own));
                }
                at = process.node(id).and_then(|p| p.parent.as_deref());
            }
            None
        })
        .collect()
}

/// Who runs the child runs of a run's call activities, and the run they are children of.
#[derive(Clone)]
struct Children {
    runs: Arc<dyn ChildRuns>,
    parent_run: String,
}

/// What the witness has seen of the run so far.
struct Seen {
    /// Its copy of the live topology (hook changes applied).
    topology: Topology,
    /// Node entries journalled (a prefix of the engine's path).
    entered: usize,
    /// The variables as the engine last reported them, with what the harness set since.
    variables: Variables,
    /// Control-point calls being answered.
    answering: usize,
    /// When a call last started or ended.
    last_activity: Instant,
    /// The first event that could not be journalled.
    journal_error: Option<String>,
    /// Nodes a hook's `skip_node` sends a token to, journalled as skipped when the engine
    /// enters them (as the native engine records them).
    skips: BTreeMap<String, (Decider, Option<String>)>,
    /// The engine's own records not journalled yet (their place is not reached yet).
    pending: Vec<EngineRecord>,
    /// Visits of call activities asked without an idempotency key.
    call_visits: BTreeMap<String, u64>,
    /// Whether a child that parks parks the run ([`Witness::park_children`]).
    parks_children: bool,
    /// The children that parked, by their call's key, not taken by the engine yet.
    waiting_children: BTreeMap<String, String>,
}

impl Witness {
    pub fn new(
        process: &Process,
        variables: Variables,
        inner: Arc<dyn ControlPoints>,
        events: Arc<dyn EventSink>,
    ) -> Witness {
        Witness {
            inner,
            events,
            state: Mutex::new(Seen {
                topology: Topology::from_process(process),
                entered: 0,
                variables,
                answering: 0,
                last_activity: Instant::now(),
                journal_error: None,
                skips: BTreeMap::new(),
                pending: Vec::new(),
                call_visits: BTreeMap::new(),
                parks_children: false,
                waiting_children: BTreeMap::new(),
            }),
            prior: None,
            calls: (process.nodes.iter())
                .filter_map(|n| Some((n.id.clone(), call_spec(n)?)))
                .collect(),
            children: None,
            instance_own: instance_own_names(process),
        }
    }

    /// Run the processes the call activities call as child runs through `children`
    /// (as the native engine does), children of run `parent_run`: the engine asks a call
    /// activity's `execute_task`, and the child's end is the answer.
    pub fn with_children(self, children: Option<Arc<dyn ChildRuns>>, parent_run: &str) -> Witness {
        Witness {
            children: children.map(|runs| Children {
                runs,
                parent_run: parent_run.to_string(),
            }),
            ..self
        }
    }

    /// A child that parks parks the run, as on the native engine, for an engine that can
    /// park and keep the call waiting (Kogito): the call is left unanswered (`Err`, no
    /// `task_finished`), [`Witness::take_waiting_child`] names the child, and the call made
    /// again when the run is resumed resumes the child (or reads its end).
    pub fn park_children(&self) {
        self.seen().parks_children = true;
    }

    /// The child run the call with idempotency key `key` left waiting, if it did.
    pub fn take_waiting_child(&self, key: &str) -> Option<String> {
        self.seen().waiting_children.remove(key)
    }

    /// Run the child of call activity `node` for the call with `ctx` (its key, its
    /// variables) and journal it as the native engine does: `child_started` (once: a
    /// resumed run's call finds it journalled), then the call's `task_finished`. A child
    /// that parks fails the call, unless the run parks for it ([`Witness::park_children`]).
    async fn call_child(
        &self,
        node: &str,
        spec: &CallSpec,
        children: Children,
        mut ctx: ControlPointContext,
    ) -> Result<TaskOutcome, ControlPointError> {
        let started = self.begin(&mut ctx);
        let key = match ctx.idempotency_key.clone() {
            Some(key) => key,
            None => {
                let mut seen = self.seen();
                let visit = seen.call_visits.entry(node.to_string()).or_default();
                *visit += 1;
                format!("{}:{node}:{visit}", children.parent_run)
            }
        };
        let run_id = child_run_id(&key);
        let journalled = self
            .prior
            .as_ref()
            .is_some_and(|p| p.children_started.contains(&key));
        if !journalled {
            let mut seen = self.seen();
            let event = Event::ChildStarted {
                node: node.to_string(),
                key: key.clone(),
                run_id: run_id.clone(),
                process_key: spec.called.clone(),
            };
            self.emit(&mut seen, event);
        }
        // What goes in keeps the provenance of what it comes from.
        let untrusted = ctx.untrusted.as_deref().map(|known| {
            (spec.inputs.sources(&ctx.variables).into_iter())
                .filter_map(|(target, source)| {
                    Some((target.to_string(), known.get(source)?.clone()))
                })
                .collect()
        });
        let call = ChildCall {
            parent_run: children.parent_run.clone(),
            node: node.to_string(),
            key: key.clone(),
            run_id,
            process_key: spec.called.clone(),
            variables: spec.inputs.apply(&ctx.variables),
            untrusted,
        };
        let outcome = children.runs.run_child(call).await;
        if let Ok(child) = &outcome
            && child.status == RunStatus::Waiting
            && self.seen().parks_children
        {
            let waiting = child.run_id.clone();
            self.end(node, &[], |seen| {
                seen.waiting_children.insert(key.clone(), waiting.clone());
                Vec::new()
            });
            return Err(ControlPointError {
                element: node.to_string(),
                message: format!("child run {waiting} waits"),
                calls: Vec::new(),
                parked: None,
            });
        }
        let outcome = outcome.and_then(|child| {
            if child.status == RunStatus::Waiting {
                return Err(format!(
                    "child run {} waits, and a run on an external engine cannot park \
                     (docs/bridge.md §13)",
                    child.run_id
                )
                .into());
            }
            Ok(child)
        });
        let outcome = call_outcome(spec, outcome);
        self.end(node, &[], |seen| {
            seen.variables.extend(outcome.variables.clone());
            vec![Event::TaskFinished {
                key: Some(key),
                node: node.to_string(),
                status: outcome.status,
                outputs: outcome.outputs.clone(),
                variables: outcome.variables.clone(),
                decided_by: outcome.decided_by,
                reason: outcome.reason.clone(),
                error: outcome.error.clone(),
                error_code: outcome.error_code.clone(),
                duration_ms: elapsed_ms(started),
                digest: None,
                taint: outcome.taint.clone(),
                own: Vec::new(),
            }]
        });
        Ok(outcome)
    }

    /// The witness of a resumed run: it goes on from what `prior` journalled (the entries,
    /// the variables, the skipped tasks still to record) and answers from its answers.
    /// The engines that own their tokens cannot change the topology, so the copy of it is
    /// the model's.
    pub fn resuming(
        process: &Process,
        prior: Prior,
        inner: Arc<dyn ControlPoints>,
        events: Arc<dyn EventSink>,
    ) -> Witness {
        let witness = Witness::new(process, prior.variables.clone(), inner, events);
        {
            let mut seen = witness.seen();
            seen.entered = prior.path.len();
            seen.skips = prior.unrecorded_skips.clone();
        }
        Witness {
            prior: Some(prior),
            ..witness
        }
    }

    /// What the run journalled before it was resumed.
    pub fn prior(&self) -> Option<&Prior> {
        self.prior.as_ref()
    }

    /// The journalled answer to the call with `ctx`'s idempotency key, if any.
    fn recalled(&self, ctx: &ControlPointContext) -> Option<Recalled> {
        let key = ctx.idempotency_key.as_deref()?;
        recall(self.prior.as_ref()?.answer(key)?)
    }

    /// Journal a record of the engine's own (its instance), durably: `Err` says why not.
    pub(crate) fn journal(&self, event: Event) -> Result<(), JournalError> {
        self.events
            .emit(event)
            .and_then(|_| self.events.commit())
            .map(drop)
    }

    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Journal `event` (a failure is remembered and reported with the run's end).
    fn emit(&self, seen: &mut Seen, event: Event) {
        // A witness sees one event at a time: each is its own step (committed at once).
        if let Err(e) = self.events.emit(event).and_then(|_| self.events.commit()) {
            seen.journal_error
                .get_or_insert_with(|| JournalError::to_string(&e));
        }
    }

    /// How long the engine has been silent: `None` while a control point is being
    /// answered (a person or a model may take their time).
    pub fn idle_for(&self) -> Option<Duration> {
        let seen = self.seen();
        (seen.answering == 0).then(|| seen.last_activity.elapsed())
    }

    /// The variables as last seen.
    pub fn variables(&self) -> Variables {
        self.seen().variables.clone()
    }

    /// Why the journal could not be written, if it could not.
    pub fn journal_error(&self) -> Option<String> {
        self.seen().journal_error.clone()
    }

    /// Which instance of a multi-instance activity each entry of the engine's `path` is
    /// (by place; `None`: not an instance), for the `node_entered` records still to come:
    /// kept as the engine's own `node_entered` records (replacing those given before).
    pub fn visits(&self, path: &[String], visits: Vec<Option<InstanceVisit>>) {
        let mut seen = self.seen();
        seen.pending
            .retain(|r| !matches!(r.event, Event::NodeEntered { .. }));
        let from = seen.entered;
        for (at, (node, visit)) in path.iter().zip(visits).enumerate().skip(from) {
            if let Some(instance) = visit {
                seen.pending.push(EngineRecord {
                    at: at as u64,
                    event: Event::NodeEntered {
                        node: node.clone(),
                        kind: String::new(),
                        name: None,
                        token: 0,
                        instance: Some(instance),
                    },
                });
            }
        }
    }

    /// Journal the entries of `path` not journalled yet (the engine's path so far), and
    /// every record of the engine's own (the result's `records`, then what is pending)
    /// but the `node_entered` records of entries still to come.
    pub fn entered(&self, path: &[String], records: Vec<EngineRecord>) {
        let mut seen = self.seen();
        Self::take_records(&mut seen, records);
        self.enter_new_from(&mut seen, path, path.len());
        let len = path.len() as u64;
        let (later, now): (Vec<_>, Vec<_>) = std::mem::take(&mut seen.pending)
            .into_iter()
            .partition(|r| r.at >= len && matches!(r.event, Event::NodeEntered { .. }));
        seen.pending = later;
        for record in now {
            self.emit_record(&mut seen, record);
        }
    }

    /// Keep the engine's records that cuga-flo journals until their place is reached.
    fn take_records(seen: &mut Seen, records: Vec<EngineRecord>) {
        for record in records {
            match &record.event {
                Event::NodeEntered { .. }
                | Event::EventThrown { .. }
                | Event::MessageReceived { .. }
                | Event::ChildStarted { .. } => seen.pending.push(record),
                // Variables the engine sets itself (a multi-instance output collection);
                // a hook's state updates are the witness's own.
                Event::VariablesSet { source, .. } if !source.starts_with("hook ") => {
                    seen.pending.push(record)
                }
                other => tracing::warn!(
                    "the engine sent a `{}` record: cuga-flo derives those itself, it is ignored",
                    other.name()
                ),
            }
        }
    }

    /// Journal a pending record whose place is reached (a `node_entered` record whose
    /// entry is behind: it has nothing more to say).
    fn emit_record(&self, seen: &mut Seen, record: EngineRecord) {
        if let Event::VariablesSet { values, .. } = &record.event {
            seen.variables.extend(values.clone());
        }
        if !matches!(record.event, Event::NodeEntered { .. }) {
            self.emit(seen, record.event);
        }
    }

    /// Journal the pending records placed before entry `index` of the path.
    fn emit_records_before(&self, seen: &mut Seen, index: u64) {
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut seen.pending)
            .into_iter()
            .partition(|r| {
                r.at < index || (r.at == index && !matches!(r.event, Event::NodeEntered { .. }))
            });
        seen.pending = later;
        for record in due {
            self.emit_record(seen, record);
        }
    }

    /// The instance the engine's `node_entered` record for entry `index` (of `node`) names.
    fn entry_instance(
        seen: &mut Seen,
        index: u64,
        node: &str,
    ) -> Option<crate::vocab::InstanceVisit> {
        let at = seen.pending.iter().position(|r| {
            r.at == index && matches!(&r.event, Event::NodeEntered { node: n, .. } if n == node)
        })?;
        match seen.pending.remove(at).event {
            Event::NodeEntered { instance, .. } => instance,
            _ => None,
        }
    }

    /// Journal the entries of `path` not journalled yet, with the engine's records placed
    /// among them; `path` holds the latest entries of a path of `total` (a context that
    /// carries a window of its history, `history_len` counting all).
    fn enter_new_from(&self, seen: &mut Seen, path: &[String], total: usize) {
        if total <= seen.entered {
            self.emit_records_before(seen, total as u64);
            return;
        }
        // Entries before the window were sent with earlier calls (an engine sends every
        // entry not sent before); those already journalled are skipped.
        let offset = total - path.len();
        let from = seen.entered.saturating_sub(offset).min(path.len());
        for (i, node) in path[from..].iter().cloned().enumerate() {
            let index = (offset + from + i) as u64;
            self.emit_records_before(seen, index);
            let instance = Self::entry_instance(seen, index, &node);
            let (kind, name) = match seen.topology.node(&node) {
                Some(n) => (n.kind.tag().to_string(), n.name.clone()),
                None => ("unknown".to_string(), None),
            };
            self.emit(
                seen,
                Event::NodeEntered {
                    node: node.clone(),
                    kind,
                    name,
                    token: 0,
                    instance,
                },
            );
            if let Some((decided_by, reason)) = seen.skips.remove(&node) {
                self.emit(
                    seen,
                    Event::TaskFinished {
                        key: None,
                        node,
                        status: TaskStatus::Skipped,
                        outputs: Map::new(),
                        variables: Map::new(),
                        decided_by,
                        reason,
                        error: None,
                        error_code: None,
                        duration_ms: 0,
                        digest: None,
                        taint: None,
                        own: Vec::new(),
                    },
                );
            }
        }
        seen.entered = total;
        self.emit_records_before(seen, total as u64);
    }

    /// A call arrives: journal the nodes entered since the last one.
    fn begin(&self, ctx: &mut ControlPointContext) -> Instant {
        let mut seen = self.seen();
        Self::take_records(&mut seen, std::mem::take(&mut ctx.records));
        self.enter_new_from(&mut seen, &ctx.history.view(), ctx.history_total() as usize);
        seen.variables = Map::clone(&ctx.variables);
        seen.answering += 1;
        seen.last_activity = Instant::now();
        seen.last_activity
    }

    /// A call is answered: its model calls first (whatever the answer), then `record`.
    fn end(&self, node: &str, calls: &[ModelCall], record: impl FnOnce(&mut Seen) -> Vec<Event>) {
        let mut seen = self.seen();
        for call in calls {
            self.emit(
                &mut seen,
                Event::ModelCalled {
                    key: None,
                    node: node.to_string(),
                    call: call.clone(),
                },
            );
        }
        for event in record(&mut seen) {
            self.emit(&mut seen, event);
        }
        seen.answering -= 1;
        seen.last_activity = Instant::now();
    }

    /// The records of a hook decision, as a conforming engine applies it.
    fn hook_events(
        seen: &mut Seen,
        hook: &str,
        key: Option<&str>,
        ctx_executed: &[String],
        edge: Option<&crate::bridge::EdgeInfo>,
        decision: &HookDecision,
        duration_ms: u64,
    ) -> (Vec<Event>, Applying) {
        let flow_id = edge.map(|e| e.id.clone()).unwrap_or_default();
        let record = Evaluation {
            key,
            hook,
            flow: &flow_id,
            decision,
            duration_ms,
        };
        if decision.fail_run {
            let event = record.event(Applied::answered(decision), None, Variables::new());
            return (vec![event], Applying::nothing());
        }
        let live = seen.topology.flow(&flow_id).cloned().or_else(|| {
            edge.map(|e| LiveFlow {
                id: e.id.clone(),
                name: e.name.clone(),
                source: e.source.clone(),
                target: e.target.clone(),
                condition: e.condition.clone(),
                parent: None,
            })
        });
        let Some(live) = live else {
            // No edge to check against: record the decision as answered.
            let event = record.event(
                Applied::answered(decision),
                None,
                decision.state_updates.clone(),
            );
            return (vec![event], Applying::nothing());
        };
        let executed: BTreeSet<String> = ctx_executed.iter().cloned().collect();
        let held = BTreeSet::new();
        let checked = adapt::plan(
            &Facts {
                topology: &seen.topology,
                executed: &executed,
                held: &held,
                flow: &live,
            },
            decision,
        );
        let (plan, rejected) = match checked {
            Ok(plan) => (plan, None),
            Err(refused) => (Plan::Continue, Some(refused.to_string())),
        };
        let updates = match rejected {
            None => decision.state_updates.clone(),
            Some(_) => Variables::new(),
        };
        let mut events = vec![record.event(Applied::plan(&plan), rejected, updates.clone())];
        if !updates.is_empty() {
            seen.variables.extend(updates.clone());
            events.push(Event::VariablesSet {
                source: format!("hook {hook}"),
                values: updates.clone(),
                taint: decision.taint.clone(),
            });
        }
        if let Plan::SkipNode(node) = &plan {
            seen.skips
                .insert(node.clone(), (decision.decided_by, decision.reason.clone()));
        }
        if let Some(detail) = plan.change(&seen.topology, &live) {
            events.push(Event::TopologyChanged {
                action: plan.action(),
                detail,
            });
            plan.apply(&mut seen.topology, &live);
        }
        let applying = Applying {
            plan,
            state_updates: updates,
        };
        (events, applying)
    }
}

impl Witness {
    /// Evaluate a hook and journal it; the decision and what a conforming engine applies
    /// of it (for engines that apply it themselves, like Flowable's adapter). A decision
    /// that fails the run applies `continue` (nothing moves after it anyway).
    pub(crate) async fn hook(
        &self,
        hook_id: &str,
        mut ctx: ControlPointContext,
    ) -> Result<(HookDecision, Applying), ControlPointError> {
        if let Some(Recalled::Hook(result)) = self.recalled(&ctx) {
            let key = ctx.idempotency_key.as_deref().unwrap_or_default();
            let record = self.prior.as_ref().and_then(|p| p.answer(key));
            return result.map(|decision| {
                let applying = record.map_or_else(Applying::nothing, applied_of);
                (decision, applying)
            });
        }
        let started = self.begin(&mut ctx);
        let executed = ctx.executed.clone();
        let edge = ctx.edge.clone();
        let key = ctx.idempotency_key.clone();
        let result = self.inner.evaluate_hook(hook_id, ctx).await;
        match result {
            Ok(decision) => {
                let mut applying = Applying {
                    plan: Plan::Continue,
                    state_updates: Variables::new(),
                };
                self.end(hook_id, &decision.calls, |seen| {
                    let (events, applied) = Self::hook_events(
                        seen,
                        hook_id,
                        key.as_deref(),
                        &executed,
                        edge.as_ref(),
                        &decision,
                        elapsed_ms(started),
                    );
                    applying = applied;
                    events
                });
                Ok((decision, applying))
            }
            Err(e) => {
                self.end(hook_id, &e.calls, |_| Vec::new());
                Err(e)
            }
        }
    }
}

/// What a journalled hook record applied (what the engine must carry out again when its
/// worker was not completed before the run stopped).
fn applied_of(record: &Event) -> Applying {
    let Event::HookEvaluated {
        action,
        target,
        message,
        state_updates,
        ..
    } = record
    else {
        return Applying::nothing();
    };
    let plan = match (action, target) {
        (HookAction::SkipNode, Some(t)) => Plan::SkipNode(t.clone()),
        (HookAction::SkipTo, Some(t)) => Plan::SkipTo(t.clone()),
        (HookAction::Terminate, _) => Plan::Terminate(message.clone()),
        _ => Plan::Continue,
    };
    Applying {
        plan,
        state_updates: state_updates.clone(),
    }
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Witness {
    /// A task: answered by the inner control points and journalled (or recalled, or a
    /// child run for a call activity).
    async fn task(
        &self,
        task_id: String,
        mut ctx: ControlPointContext,
    ) -> Result<TaskOutcome, ControlPointError> {
        {
            if let Some(Recalled::Task(outcome)) = self.recalled(&ctx) {
                return Ok(outcome);
            }
            if let (Some(spec), Some(children)) = (self.calls.get(&task_id), &self.children) {
                return self.call_child(&task_id, spec, children.clone(), ctx).await;
            }
            let started = self.begin(&mut ctx);
            let key = ctx.idempotency_key.clone();
            // A call in an instance of a multi-instance activity: what stays the instance's.
            let own_names = ctx
                .instance
                .is_some()
                .then(|| self.instance_own.get(&task_id))
                .flatten();
            let result = self.inner.execute_task(&task_id, ctx).await;
            match &result {
                Ok(outcome) => self.end(&task_id, &outcome.calls, |seen| {
                    let own: Vec<String> = (outcome.variables.keys())
                        .filter(|k| own_names.is_some_and(|o| o.contains(*k)))
                        .cloned()
                        .collect();
                    seen.variables.extend(outcome.variables.clone());
                    vec![Event::TaskFinished {
                        key: key.clone(),
                        node: task_id.clone(),
                        status: outcome.status,
                        outputs: outcome.outputs.clone(),
                        variables: outcome.variables.clone(),
                        decided_by: outcome.decided_by,
                        reason: outcome.reason.clone(),
                        error: outcome.error.clone(),
                        // A failed task raises a BPMN error: the code it names, else
                        // the generic one (as the native engine records it).
                        error_code: (outcome.status == TaskStatus::Failed).then(|| {
                            outcome
                                .error_code
                                .clone()
                                .unwrap_or_else(|| error_code::TASK_FAILED.to_string())
                        }),
                        duration_ms: elapsed_ms(started),
                        digest: outcome.digest.clone(),
                        taint: outcome.taint.clone(),
                        own,
                    }]
                }),
                // Unanswered, the task failed: a conforming engine raises UNANSWERED (as
                // the native engine journals it).
                Err(e) => self.end(&task_id, &e.calls, |_| {
                    vec![Event::TaskFinished {
                        key: key.clone(),
                        node: task_id.clone(),
                        status: TaskStatus::Failed,
                        outputs: Map::new(),
                        variables: Map::new(),
                        decided_by: Decider::None,
                        reason: None,
                        error: Some(e.message.clone()),
                        error_code: Some(error_code::UNANSWERED.to_string()),
                        duration_ms: elapsed_ms(started),
                        digest: None,
                        taint: None,
                        own: Vec::new(),
                    }]
                }),
            }
            result
        }
    }

    /// A gateway: answered by the inner control points and journalled (or recalled).
    async fn gateway(
        &self,
        gateway_id: String,
        mut ctx: ControlPointContext,
    ) -> Result<GatewayDecision, ControlPointError> {
        {
            if let Some(Recalled::Gateway(decision)) = self.recalled(&ctx) {
                return Ok(decision);
            }
            let started = self.begin(&mut ctx);
            let key = ctx.idempotency_key.clone();
            let result = self.inner.route_gateway(&gateway_id, ctx).await;
            match &result {
                Ok(decision) => self.end(&gateway_id, &decision.calls, |_| {
                    vec![Event::GatewayRouted {
                        key: key.clone(),
                        node: gateway_id.clone(),
                        flows: decision.flows.clone(),
                        decided_by: decision.decided_by,
                        reason: decision.reason.clone(),
                        duration_ms: elapsed_ms(started),
                        digest: decision.digest.clone(),
                    }]
                }),
                Err(e) => self.end(&gateway_id, &e.calls, |_| Vec::new()),
            }
            result
        }
    }
}

impl ControlPoints for Witness {
    fn answer(
        &self,
        kind: ControlPointKind,
        element: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
        let id = element.to_string();
        Box::pin(async move {
            Ok(match kind {
                ControlPointKind::Task => Answer::Task(self.task(id, ctx).await?),
                ControlPointKind::Gateway => Answer::Gateway(self.gateway(id, ctx).await?),
                ControlPointKind::Hook => Answer::Hook(self.hook(&id, ctx).await?.0),
            })
        })
    }

    fn restores_unchanged_model(&self) -> bool {
        self.inner.restores_unchanged_model()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Value, json};

    use super::*;
    use crate::journal::store::MemorySink;

    /// Control points that are never asked (the witness only journals here).
    struct Unasked;

    impl ControlPoints for Unasked {
        fn answer(
            &self,
            _: ControlPointKind,
            _: &str,
            _: ControlPointContext,
        ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
            unreachable!("no control point is asked")
        }
    }

    fn witness() -> (Witness, Arc<MemorySink>) {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d">
<process id="p"><startEvent id="S"/><task id="A"/><endEvent id="E"/><task id="H"/>
<boundaryEvent id="B" attachedToRef="A"><errorEventDefinition/></boundaryEvent>
</process></definitions>"#;
        let doc = crate::bpmn::parse(Path::new("t.bpmn"), xml.as_bytes()).unwrap();
        let sink = Arc::new(MemorySink::new());
        let w = Witness::new(
            &doc.processes[0],
            Variables::new(),
            Arc::new(Unasked),
            sink.clone(),
        );
        (w, sink)
    }

    fn records(values: Vec<Value>) -> Vec<EngineRecord> {
        values
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect()
    }

    fn shape(sink: &MemorySink) -> Vec<String> {
        sink.records()
            .iter()
            .map(|r| match &r.event {
                Event::NodeEntered {
                    node,
                    instance: Some(i),
                    ..
                } => format!("{node}#{}/{}", i.loop_counter, i.instances),
                Event::NodeEntered { node, .. } => node.clone(),
                e => e.name().to_string(),
            })
            .collect()
    }

    /// The engine's records land where it placed them among the node entries: a
    /// `node_entered` record gives its entry's instance, the others are journalled as
    /// sent, and the kinds cuga-flo derives itself are ignored.
    #[test]
    fn engine_records_are_journalled_in_their_place() {
        let (w, sink) = witness();
        let path: Vec<String> = ["S", "A", "A", "B", "H"].map(String::from).to_vec();
        let sent = records(vec![
            json!({"at": 1, "event": "node_entered", "node": "A", "kind": "task", "name": null,
                   "token": 3, "instance": {"loop_counter": 1, "instances": 2}}),
            json!({"at": 2, "event": "node_entered", "node": "A", "kind": "task", "name": null,
                   "token": 4, "instance": {"loop_counter": 2, "instances": 2}}),
            json!({"at": 3, "event": "event_thrown", "kind": "error", "code": "X", "node": "A",
                   "caught_by": "B", "activity": "A", "interrupting": true}),
            json!({"at": 0, "event": "flow_taken", "flow": "f", "source": "S", "target": "A",
                   "token": 1}),
        ]);
        w.entered(&path, sent);
        assert_eq!(
            shape(&sink),
            ["S", "A#1/2", "A#2/2", "event_thrown", "B", "H"]
        );
        let state = crate::journal::FlowState::fold(&sink.records());
        assert_eq!(state.throws.len(), 1);
        assert_eq!(state.throws[0].caught_by.as_deref(), Some("B"));
    }

    /// A context's records are journalled with the entries its history brings; those
    /// placed beyond it wait for the next call or the result.
    #[test]
    fn a_contexts_records_wait_for_their_place() {
        let (w, sink) = witness();
        let mut ctx = ControlPointContext {
            history: vec!["S".to_string(), "A".to_string()].into(),
            records: records(vec![
                json!({"at": 2, "event": "message_received", "key": "r:C:1",
                "node": "C", "kind": "message", "name": "M", "thrown_by": "T"}),
            ]),
            ..ControlPointContext::default()
        };
        w.begin(&mut ctx);
        assert!(ctx.records.is_empty(), "the harness is not given them");
        assert_eq!(shape(&sink), ["S", "A", "message_received"]);
        w.entered(&["S".into(), "A".into(), "E".into()], Vec::new());
        assert_eq!(shape(&sink), ["S", "A", "message_received", "E"]);
    }

    /// A result without records (an engine that sends none) journals its path as before.
    #[test]
    fn an_engine_that_sends_no_records_still_works() {
        let (w, sink) = witness();
        let result: crate::mcp::RunProcessResult = serde_json::from_value(json!({
            "run_id": "r", "status": "completed", "message": null, "variables": {},
            "steps": 2, "path": ["S", "E"]}))
        .unwrap();
        assert!(result.records.is_empty());
        w.entered(&result.path, result.records);
        assert_eq!(shape(&sink), ["S", "E"]);
    }
}
