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
use crate::bpmn::Process;
use crate::bridge::{
    BoxFuture, ControlPointContext, ControlPointError, ControlPoints, GatewayDecision,
    HookDecision, TaskOutcome, Variables,
};
use crate::engine::adapt::{self, Applied, Evaluation, Facts, Plan};
use crate::engine::native::replay::{Recalled, recall};
use crate::engine::topology::{LiveFlow, Topology};
use crate::journal::event::InstanceVisit;
use crate::journal::{Event, EventSink, JournalError};
use crate::vocab::{Decider, HookAction, ModelCall, TaskStatus};

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
    /// The instance of a multi-instance activity each entry of the path is, when the
    /// engine says ([`Witness::visits`]), by the entry's place in the path.
    visits: Vec<Option<InstanceVisit>>,
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
                visits: Vec::new(),
            }),
            prior: None,
        }
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
    pub(crate) fn journal(&self, event: Event) -> Result<(), String> {
        self.events
            .emit(event)
            .and_then(|_| self.events.commit())
            .map(drop)
            .map_err(|e| format!("the journal could not be written: {e}"))
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

    /// Which instance of a multi-instance activity each entry of the engine's path is
    /// (by place; `None`: not an instance), for the `node_entered` records still to come.
    pub fn visits(&self, visits: Vec<Option<InstanceVisit>>) {
        self.seen().visits = visits;
    }

    /// Journal the entries of `path` not journalled yet (the engine's path so far).
    pub fn entered(&self, path: &[String]) {
        let mut seen = self.seen();
        self.enter_new(&mut seen, path);
    }

    fn enter_new(&self, seen: &mut Seen, path: &[String]) {
        self.enter_new_from(seen, path, path.len());
    }

    /// [`Self::enter_new`] for the latest entries of a path of `total` entries (a context
    /// that carries a window of its history, `history_len` counting all).
    fn enter_new_from(&self, seen: &mut Seen, path: &[String], total: usize) {
        if total <= seen.entered {
            return;
        }
        // Entries before the window were sent with earlier calls (an engine sends every
        // entry not sent before); those already journalled are skipped.
        let offset = total - path.len();
        let from = seen.entered.saturating_sub(offset).min(path.len());
        for (at, node) in path.iter().cloned().enumerate().skip(from) {
            let instance = seen.visits.get(offset + at).copied().flatten();
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
                    },
                );
            }
        }
        seen.entered = total;
    }

    /// A call arrives: journal the nodes entered since the last one.
    fn begin(&self, ctx: &ControlPointContext) -> Instant {
        let mut seen = self.seen();
        self.enter_new_from(&mut seen, &ctx.history, ctx.history_total() as usize);
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
            Err(why) => (Plan::Continue, Some(why)),
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
        ctx: ControlPointContext,
    ) -> Result<(HookDecision, Applying), ControlPointError> {
        if let Some(Recalled::Hook(result)) = self.recalled(&ctx) {
            let key = ctx.idempotency_key.as_deref().unwrap_or_default();
            let record = self.prior.as_ref().and_then(|p| p.answer(key));
            return result.map(|decision| {
                let applying = record.map_or_else(Applying::nothing, applied_of);
                (decision, applying)
            });
        }
        let started = self.begin(&ctx);
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

impl ControlPoints for Witness {
    fn execute_task(
        &self,
        task_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<TaskOutcome, ControlPointError>> {
        let task_id = task_id.to_string();
        Box::pin(async move {
            if let Some(Recalled::Task(outcome)) = self.recalled(&ctx) {
                return Ok(outcome);
            }
            let started = self.begin(&ctx);
            let key = ctx.idempotency_key.clone();
            let result = self.inner.execute_task(&task_id, ctx).await;
            match &result {
                Ok(outcome) => self.end(&task_id, &outcome.calls, |seen| {
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
                        error_code: outcome.error_code.clone(),
                        duration_ms: elapsed_ms(started),
                        digest: outcome.digest.clone(),
                        taint: outcome.taint.clone(),
                    }]
                }),
                Err(e) => self.end(&task_id, &e.calls, |_| Vec::new()),
            }
            result
        })
    }

    fn route_gateway(
        &self,
        gateway_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<GatewayDecision, ControlPointError>> {
        let gateway_id = gateway_id.to_string();
        Box::pin(async move {
            if let Some(Recalled::Gateway(decision)) = self.recalled(&ctx) {
                return Ok(decision);
            }
            let started = self.begin(&ctx);
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
        })
    }

    fn evaluate_hook(
        &self,
        hook_id: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<HookDecision, ControlPointError>> {
        let hook_id = hook_id.to_string();
        Box::pin(async move { self.hook(&hook_id, ctx).await.map(|(d, _)| d) })
    }

    fn restores_unchanged_model(&self) -> bool {
        self.inner.restores_unchanged_model()
    }
}
