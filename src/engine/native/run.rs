//! One run: a coordinator that owns all of the run's state (topology, tokens, joins,
//! variables) and changes it one step at a time. Token movement that needs no judgement
//! happens synchronously from a queue of [`Step`]s; control-point calls run as tokio
//! tasks in a `JoinSet`, so the calls of different branches overlap, and their answers
//! come back to the coordinator, which applies them in the order they arrive. A call that
//! answers at once (a pass-through task, a gateway its conditions decide) needs no task:
//! it is polled once when it is made, and its answer waits in a queue of its own.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::task::{AbortHandle, Id, JoinSet};

use super::calls::Answer;
use super::event_subprocess::Listeners;
use super::joins::JoinState;
use super::messages::Mailbox;
use super::replay::{Asked, Replay};
use super::tokens::{At, ROOT, ScopeId, TokenId, Tokens};
use crate::app::EngineKind;
use crate::bridge::{ControlPoints, History, NewTask, Taint, Untrusted, record_provenance};
use crate::engine::{DEFAULT_STEP_BUDGET, EngineError, RunOutcome, RunRequest};
use crate::journal::{Event, EventSink};
use crate::semantics::support;
use crate::semantics::topology::Topology;
use crate::vocab::{Decider, RunStatus};

/// A movement of one token that needs no control point (or whose answer is in).
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// Traverse a flow; its hook, if any, is evaluated first unless `hook_done`.
    Traverse {
        token: TokenId,
        flow: String,
        hook_done: bool,
    },
    /// Reach a node, along `via` or by a jump (`None`); joins wait here.
    Arrive {
        token: TokenId,
        node: String,
        via: Option<String>,
    },
    /// Enter a node and do what its kind does.
    Enter { token: TokenId, node: String },
    /// Enter an activity and record it as skipped (SKIP_NODE).
    Skip {
        token: TokenId,
        node: String,
        decided_by: Decider,
        reason: Option<String>,
    },
    /// Leave a node along all its outgoing flows.
    Leave { token: TokenId, node: String },
}

impl Step {
    fn token(&self) -> TokenId {
        match self {
            Step::Traverse { token, .. }
            | Step::Arrive { token, .. }
            | Step::Enter { token, .. }
            | Step::Skip { token, .. }
            | Step::Leave { token, .. } => *token,
        }
    }
}

/// A control-point call in flight.
struct Call {
    token: TokenId,
    label: String,
    handle: AbortHandle,
}

/// A call made while a resumed run replays its journal, whose answer the journal does
/// not hold: it is made once the replay is over.
struct Deferred {
    token: TokenId,
    label: String,
    call: std::pin::Pin<Box<dyn Future<Output = Answer> + Send>>,
}

pub(super) struct Run {
    pub request: RunRequest,
    pub budget: u64,
    pub control_points: Arc<dyn ControlPoints>,
    /// The control points restore the model summary while the topology is unchanged, so
    /// contexts leave it out until then.
    pub model_restored: bool,
    sink: Arc<dyn EventSink>,
    pub topology: Topology,
    /// Tasks inserted by ADD_NODE, by id.
    pub inserted: BTreeMap<String, NewTask>,
    /// The process variables, shared with the contexts of the calls in flight (changed
    /// through [`Run::merge_variables`], which copies them only while a call holds them).
    pub variables: Arc<Map<String, Value>>,
    /// Provenance: the untrusted variables and where each came from, shared likewise
    /// (`None`: unknown, for a run journalled before provenance was recorded). Recorded
    /// from the request and the answers' taints, never judged here.
    pub untrusted: Option<Arc<Untrusted>>,
    /// Node entries, in order: an append-only log the contexts share.
    pub path: History,
    /// The nodes entered so far, as a set and in order of first entry.
    pub executed: BTreeSet<String>,
    pub executed_order: Vec<String>,
    pub steps: u64,
    pub tokens: Tokens,
    pub joins: BTreeMap<(ScopeId, String), JoinState>,
    pub ready: VecDeque<Step>,
    calls: JoinSet<Answer>,
    /// The calls in flight: the token waiting for each, and what it is.
    in_flight: HashMap<Id, Call>,
    /// The answers of calls that answered as soon as they were made, in order.
    answered: VecDeque<Answer>,
    /// Set once the run has ended (terminated or failed); nothing moves after that.
    pub end: Option<(RunStatus, Option<String>)>,
    /// Calls made so far per control point (the visit number of its idempotency key).
    visits: HashMap<String, u64>,
    /// Tokens waiting for a parked question, by the question's key.
    pub questions: BTreeMap<String, TokenId>,
    /// Questions the journal already holds (a resumed run does not journal them again).
    /// The questions journalled, with the remote task each waits for (if any): a question
    /// is journalled again only when what it waits for changed.
    known_questions: BTreeMap<String, Option<crate::vocab::RemoteWait>>,
    /// The questions a resumed run's journal leaves open, by key: their element.
    pub prior_open: BTreeMap<String, String>,
    /// Set while a resumed run re-executes its journal.
    replay: Option<Replay>,
    /// Answers taken from the journal, waiting for their turn, by key.
    held: HashMap<String, Answer>,
    /// Calls to make once the replay is over.
    deferred: Vec<Deferred>,
    /// Timers started and not fired yet, by key.
    pub timers: BTreeMap<String, super::timers::PendingTimer>,
    /// How long the coordinator waits in-process for a timer; one due later parks the run.
    wait_limit_ms: u64,
    /// The deadlines of the parked questions (they park the run with a due time too).
    deadlines: BTreeMap<String, u64>,
    /// The multi-instance activities running, and their instances.
    pub multi: super::multi::Multi,
    /// The waits for messages and signals ([`super::messages`]).
    pub(super) mailbox: Mailbox,
    /// The event sub-processes that wait ([`super::event_subprocess`]).
    pub(super) listeners: Listeners,
    /// Call activities whose child run parked, by the call's key: the token and the
    /// child's id ([`super::call`]).
    pub children_waiting: BTreeMap<String, (TokenId, String)>,
}

/// Steps the coordinator takes before it yields to the runtime (and commits), when no
/// answer makes it wait.
const YIELD_EVERY: u32 = 1024;

/// How long a run waits in-process for a timer by default (`start --max-wait`).
pub const DEFAULT_WAIT_LIMIT_SECS: u64 = 60;

impl Run {
    pub fn new(
        request: RunRequest,
        control_points: Arc<dyn ControlPoints>,
        sink: Arc<dyn EventSink>,
    ) -> Self {
        let budget = match request.annotations.step_budget {
            0 => DEFAULT_STEP_BUDGET,
            n => n,
        };
        let prior = request.resume.as_ref().map(|r| r.records.as_slice());
        if let Some(records) = prior {
            control_points.resuming(records);
        }
        let known_questions = prior
            .unwrap_or_default()
            .iter()
            .filter_map(|r| match &r.event {
                Event::QuestionParked { question } => {
                    Some((question.key.clone(), question.remote.clone()))
                }
                _ => None,
            })
            .collect();
        let replay = prior.map(Replay::new);
        let prior_open = prior
            .map(|records| {
                crate::journal::FlowState::fold(records)
                    .open_questions
                    .into_iter()
                    .map(|(key, q)| (key, q.element))
                    .collect()
            })
            .unwrap_or_default();
        let wait_limit_ms = request
            .annotations
            .max_wait_secs
            .unwrap_or(DEFAULT_WAIT_LIMIT_SECS)
            .saturating_mul(1000);
        Run {
            topology: Topology::from_process(&request.process),
            variables: Arc::new(request.variables.clone()),
            untrusted: request.untrusted.clone().map(Arc::new),
            request,
            budget,
            model_restored: control_points.restores_unchanged_model(),
            control_points,
            sink,
            inserted: BTreeMap::new(),
            path: History::default(),
            executed: BTreeSet::new(),
            executed_order: Vec::new(),
            steps: 0,
            tokens: Tokens::default(),
            joins: BTreeMap::new(),
            ready: VecDeque::new(),
            calls: JoinSet::new(),
            in_flight: HashMap::new(),
            answered: VecDeque::new(),
            end: None,
            visits: HashMap::new(),
            questions: BTreeMap::new(),
            known_questions,
            prior_open,
            replay,
            held: HashMap::new(),
            deferred: Vec::new(),
            timers: BTreeMap::new(),
            wait_limit_ms,
            deadlines: BTreeMap::new(),
            multi: Default::default(),
            mailbox: Mailbox::default(),
            listeners: Listeners::default(),
            children_waiting: BTreeMap::new(),
        }
    }

    /// Run to the end and report how it ended.
    pub async fn execute(mut self) -> Result<RunOutcome, EngineError> {
        let driven = self.drive().await;
        // Nothing moves once the run has ended: calls still in flight are abandoned.
        self.calls.abort_all();
        driven?;
        let (status, message) = self.end.take().unwrap_or((RunStatus::Completed, None));
        let variables = Arc::unwrap_or_clone(std::mem::take(&mut self.variables));
        // A parked run journalled its `run_waiting` already; it has not finished.
        if status != RunStatus::Waiting {
            self.emit(Event::RunFinished {
                status,
                message: message.clone(),
                variables: variables.clone(),
                steps: self.steps,
            })?;
        }
        self.commit()?;
        Ok(RunOutcome {
            status,
            message,
            variables,
            steps: self.steps,
            path: std::mem::take(&mut self.path).into_vec(),
        })
    }

    async fn drive(&mut self) -> Result<(), EngineError> {
        // A resumed run's `run_started` is its journal's first record already.
        if self.replay.is_none() {
            self.emit(Event::RunStarted {
                run_id: self.request.run_id.clone(),
                app: self.request.process_key.clone(),
                process_key: self.request.process_key.clone(),
                process_id: self.request.process.id.clone(),
                engine: "native".into(),
                reasoner: String::new(),
                variables: Map::clone(&self.variables),
                untrusted: self.request.untrusted.clone(),
                launch: None,
                app_digest: None,
                parent: self.request.parent.clone(),
                trace: None,
            })?;
            // The run exists (and can be resumed) from here on.
            self.commit()?;
        }
        self.start()?;
        let mut since_yield = 0u32;
        loop {
            while self.end.is_none() {
                let Some(step) = self.ready.pop_front() else {
                    break;
                };
                if self.tokens.contains(step.token()) {
                    self.step(step)?;
                }
                // A run whose answers all come at once never waits: let the runtime
                // see a stop signal now and then, and commit what is done so far.
                since_yield += 1;
                if since_yield >= YIELD_EVERY {
                    since_yield = 0;
                    self.commit()?;
                    tokio::task::yield_now().await;
                }
            }
            if self.end.is_some() {
                return Ok(());
            }
            if self.release_joins() {
                continue;
            }
            if self.replay.is_some() {
                self.replay_next()?;
                continue;
            }
            if let Some(answer) = self.answered.pop_front() {
                crate::crash::point("engine.answer_received");
                self.apply_answer(answer)?;
                continue;
            }
            let now = crate::clock::now_ms();
            if let Some(key) = self.due_timer(now) {
                self.fire_due(&key)?;
                continue;
            }
            // Event sub-processes wait only while their scope runs.
            self.drop_dead_listeners();
            // Nothing left to wait for: the run is over, and its last step is committed
            // with its `run_finished` ([`Run::execute`]), one sync for both.
            if self.tokens.is_empty() && self.calls.is_empty() {
                return Ok(());
            }
            // Everything this step emitted is made durable (and shown) before waiting.
            self.commit()?;
            // The run may be stopped while it waits below: show what it waits for.
            if let Some(awaiting) = &self.request.awaiting
                && let Ok(mut shown) = awaiting.lock()
            {
                *shown = self.mailbox.awaited();
            }
            let next_due = self.next_due();
            if self.calls.is_empty() {
                match next_due {
                    Some(due) if due.saturating_sub(now) <= self.wait_limit_ms => {
                        tokio::time::sleep(Duration::from_millis(due.saturating_sub(now))).await;
                    }
                    Some(_) => self.wait("timer")?,
                    None if !self.questions.is_empty() => self.wait("question")?,
                    None if !self.mailbox.is_empty() => self.wait("message")?,
                    None if !self.children_waiting.is_empty() => {
                        let ids: Vec<&str> = (self.children_waiting.values())
                            .map(|(_, id)| id.as_str())
                            .collect();
                        let reason = format!("child run {}", ids.join(", "));
                        self.wait(&reason)?
                    }
                    None if !self.tokens.is_empty() => {
                        let message = self.stuck_message();
                        self.fail(message);
                    }
                    None => {}
                }
                if self.end.is_some() || self.tokens.is_empty() {
                    return Ok(());
                }
                continue;
            }
            let joined = match next_due {
                Some(due) => {
                    let sleep = Duration::from_millis(due.saturating_sub(now));
                    tokio::select! {
                        joined = self.calls.join_next_with_id() => joined,
                        () = tokio::time::sleep(sleep) => continue,
                    }
                }
                None => self.calls.join_next_with_id().await,
            };
            let Some(joined) = joined else {
                continue;
            };
            match joined {
                Ok((id, answer)) => {
                    self.in_flight.remove(&id);
                    // An answer is in (a model's reply, a person's) but not journalled yet.
                    crate::crash::point("engine.answer_received");
                    self.apply_answer(answer)?;
                }
                Err(e) => {
                    let call = self.in_flight.remove(&e.id());
                    if let Some(call) = call.filter(|c| self.tokens.contains(c.token)) {
                        self.fail(format!(
                            "the control-point call {} did not finish: {e}",
                            call.label
                        ));
                    }
                }
            }
        }
    }

    /// Apply an answer that came in. One that cost a model call is made durable as soon
    /// as it is applied, before any step it enables runs (and before any call such a
    /// step makes): a crash from then on never asks the model again, whatever the batch.
    fn apply_answer(&mut self, answer: Answer) -> Result<(), EngineError> {
        let paid_for = answer.made_calls();
        self.answer(answer)?;
        if paid_for {
            self.commit()?;
        }
        Ok(())
    }

    /// While replaying: apply the answer the journal applies next, or end the replay
    /// when the journal has nothing more (the calls held back are made then).
    fn replay_next(&mut self) -> Result<(), EngineError> {
        // A message or signal delivered from outside, due at this point of the replay.
        while let Some(key) = self.replay.as_mut().and_then(|r| r.next_delivery()) {
            if let Some(answer) = self.held.remove(&key) {
                return self.answer(answer);
            }
        }
        let Some(replay) = &self.replay else {
            return Ok(());
        };
        if !replay.active() {
            self.replay = None;
            for d in std::mem::take(&mut self.deferred) {
                if self.tokens.contains(d.token) {
                    self.spawn_call(d.token, d.label, d.call);
                }
            }
            return Ok(());
        }
        let next = replay.next_key().map(str::to_string);
        match next.and_then(|key| self.held.remove(&key)) {
            Some(answer) => self.answer(answer),
            None => {
                let waiting = self.held.keys().map(String::as_str).collect();
                Err(replay.stalled(&waiting))
            }
        }
    }

    /// Nothing can move until a question is answered: journal why, and end the run here
    /// as waiting (it is resumed later from its journal).
    pub fn wait(&mut self, reason: &str) -> Result<(), EngineError> {
        let due = self
            .next_due()
            .into_iter()
            .chain(self.deadlines.values().copied())
            .min();
        self.emit(Event::RunWaiting {
            reason: reason.to_string(),
            questions: self.questions.keys().cloned().collect(),
            due_ms: due,
            awaiting: self.mailbox.awaited(),
        })?;
        if self.end.is_none() {
            self.end = Some((RunStatus::Waiting, None));
        }
        Ok(())
    }

    /// The idempotency key of the next call about `element`: `<run>:<element>:<visit>`.
    pub fn next_key(&mut self, element: &str) -> String {
        let visit = self.visits.entry(element.to_string()).or_insert(0);
        *visit += 1;
        format!("{}:{element}:{visit}", self.request.run_id)
    }

    /// While replaying, when the timer with `key` was due.
    pub fn replayed_due(&self, key: &str) -> Option<u64> {
        self.replay.as_ref()?.due(key)
    }

    /// While replaying: when the journal holds the answer to the call with `key` that
    /// `token` makes (`asked`), keep it until the journal says it is applied, and say so
    /// (the call is not made).
    pub fn hold_replayed(&mut self, token: TokenId, key: &str, asked: Asked<'_>) -> bool {
        let answer = self
            .replay
            .as_ref()
            .and_then(|r| r.answer(key).or_else(|| r.delivery(key)))
            .and_then(|record| super::replay::answer_of(record, asked, token, key));
        match answer {
            Some(answer) => {
                self.held.insert(key.to_string(), answer);
                true
            }
            None => false,
        }
    }

    /// A question is parked: its token waits (the run goes on elsewhere, and parks when
    /// nothing else can move). Journalled once, even across resumes.
    pub fn park_question(
        &mut self,
        token: TokenId,
        question: crate::vocab::Question,
    ) -> Result<(), EngineError> {
        let key = question.key.clone();
        if let Some(deadline) = question.deadline_ms {
            self.deadlines.insert(key.clone(), deadline);
        }
        // A remote task that changed state while the run was parked (working, then
        // input-required) is journalled again: `runs show` shows what it waits for now.
        let known = self.known_questions.get(&key);
        if known.is_none_or(|remote| *remote != question.remote) {
            self.known_questions
                .insert(key.clone(), question.remote.clone());
            self.emit(Event::QuestionParked {
                question: Box::new(question),
            })?;
        }
        self.questions.insert(key, token);
        Ok(())
    }

    /// Put a token on each process-level start node, unless the process holds an element
    /// the engine cannot run; the process's event sub-processes wait.
    fn start(&mut self) -> Result<(), EngineError> {
        // `validate` refuses these; a caller that did not validate gets a failed run
        // rather than a mis-run one.
        let refused = support::unsupported(&self.request.process, EngineKind::Native);
        if let Some(first) = refused.first() {
            self.fail(format!(
                "`{}` cannot run on the native engine: it is {}{}",
                first.id,
                first.why,
                match refused.len() {
                    1 => String::new(),
                    n => format!(" (and {} more element(s) cannot)", n - 1),
                }
            ));
            return Ok(());
        }
        let starts = self.topology.start_nodes(None);
        if starts.is_empty() {
            self.fail("the process has no start event at process level");
            return Ok(());
        }
        for node in starts {
            let token = self.tokens.add(ROOT, At::Node(node.clone()));
            self.ready.push_back(Step::Enter { token, node });
        }
        self.arm_event_subprocesses(ROOT)
    }

    fn step(&mut self, step: Step) -> Result<(), EngineError> {
        match step {
            Step::Traverse {
                token,
                flow,
                hook_done,
            } => self.traverse(token, &flow, hook_done),
            Step::Arrive { token, node, via } => self.arrive(token, &node, via),
            Step::Enter { token, node } => self.enter(token, &node),
            Step::Skip {
                token,
                node,
                decided_by,
                reason,
            } => self.skip(token, &node, decided_by, reason),
            Step::Leave { token, node } => self.leave(token, &node),
        }
    }

    /// Merge `values` into the process variables, recording their provenance: untrusted
    /// with `taint`, else trusted.
    pub fn merge_variables(&mut self, values: Map<String, Value>, taint: Option<&Taint>) {
        if values.is_empty() {
            return;
        }
        if let Some(untrusted) = &mut self.untrusted {
            // Copied only when the record changes (contexts in flight share it).
            if values.keys().any(|name| untrusted.get(name) != taint) {
                record_provenance(Arc::make_mut(untrusted), values.keys(), taint);
            }
        }
        Arc::make_mut(&mut self.variables).extend(values);
    }

    /// Append an event to the journal; an event that cannot be written stops the run.
    /// While replaying, a derived event is checked against the journal instead.
    pub fn emit(&mut self, event: Event) -> Result<(), EngineError> {
        if let Some(replay) = &mut self.replay
            && event.is_derived()
            && replay.consume(&event)?
        {
            return Ok(());
        }
        self.sink
            .emit(event)
            .map(|_| ())
            .map_err(|e| EngineError::Journal(e.to_string()))
    }

    /// Make the records emitted so far durable: the end of a step (group commit).
    pub fn commit(&self) -> Result<(), EngineError> {
        self.sink
            .commit()
            .map_err(|e| EngineError::Journal(e.to_string()))
    }

    /// End the run `Failed` (the first ending wins).
    pub fn fail(&mut self, message: impl Into<String>) {
        if self.end.is_none() {
            self.end = Some((RunStatus::Failed, Some(message.into())));
        }
    }

    /// End the run `Terminated` (the first ending wins).
    pub fn terminate(&mut self, message: String) {
        if self.end.is_none() {
            self.end = Some((RunStatus::Terminated, Some(message)));
        }
    }

    /// Start a control-point call for `token`; its answer comes back through
    /// [`Run::answer`]. The call is polled once now: if it answers at once, its answer is
    /// queued; otherwise it goes on as a task of its own.
    pub fn spawn_call(
        &mut self,
        token: TokenId,
        label: String,
        call: impl Future<Output = Answer> + Send + 'static,
    ) {
        let mut call = Box::pin(call);
        if self.replay.is_some() {
            self.deferred.push(Deferred { token, label, call });
            return;
        }
        let mut now = Context::from_waker(Waker::noop());
        let handle = match panic::catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(&mut now))) {
            Ok(Poll::Ready(answer)) => {
                self.answered.push_back(answer);
                return;
            }
            Ok(Poll::Pending) => self.calls.spawn(call),
            // A call that panics fails the run as a task that panics does (see `drive`).
            Err(panicked) => self.calls.spawn(async move { resume_panic(panicked) }),
        };
        let id = handle.id();
        self.in_flight.insert(
            id,
            Call {
                token,
                label,
                handle,
            },
        );
    }

    /// Abort the calls whose token has been discarded.
    pub fn abort_orphaned_calls(&mut self) {
        for call in self.in_flight.values() {
            if !self.tokens.contains(call.token) {
                call.handle.abort();
            }
        }
    }
}

/// Go on panicking with the payload of a panic that was caught.
fn resume_panic(payload: Box<dyn Any + Send>) -> Answer {
    panic::resume_unwind(payload)
}
