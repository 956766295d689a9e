//! Apache KIE (Kogito) as the workflow engine (`workflow_engine: {type: kogito, url,
//! process_id}`), on a service built by `cuga-flo kogito build` ([`project`]) from the
//! model rewritten so that every control point is a user task of cuga-flo's actor
//! ([`augment`]).
//!
//! cuga-flo pulls, as with Flowable: it starts an instance over Kogito's REST API, finds
//! the user tasks waiting for it through the process-management add-on, asks the harness
//! ([`crate::engine::pull`], journalled by a [`Witness`]) and completes each task with
//! every process variable; Kogito moves the tokens synchronously and never calls
//! cuga-flo, so a control point may take as long as a person needs (only each REST call
//! is bounded, by `workflow_engine.idle_timeout`, 120 s by default). The path, the end and
//! the final variables come from the service's trace listener. Hook actions: `continue`,
//! `terminate`, `skip_to` (the target triggered and the hook's node cancelled) and
//! `skip_node`; topology changes are not possible, as on Flowable.
//!
//! BPMN errors and escalations are Kogito's (the rewrite keeps their events, as for
//! Flowable): a failed task raises its error at its user task through the service's
//! `/cugaflo/error` endpoint, jBPM takes the token to the boundary event that catches
//! it, and cuga-flo journals each throw where the native engine catches it (a failed
//! task's when it fails, an error or escalation event's when the path enters it). Message
//! and signal catches the run's own throws reach wait as jBPM signals
//! ([`augment::event_type`]), and so do the message and signal event sub-processes they
//! start ([`augment::start_event_type`]); a throw is a user task where cuga-flo delivers
//! it through the service's `/cugaflo/deliver` endpoint and journals each wait and
//! delivery.
//!
//! Timers are cuga-flo's, as on the native engine: a timer catch event, timer boundary
//! event or timer event sub-process start waits in jBPM for a signal of its own
//! ([`augment::timer_type`]); the service's `GET /cugaflo/waits` lists what the instance
//! waits for, cuga-flo journals each timer when it starts waiting (`timer_scheduled`,
//! due as the native engine computes it, from the run's variables) and fires it when it
//! is due (`POST /cugaflo/signal`, `timer_fired`), racing the answer of a task it is
//! attached to. jBPM's own job service is not used: a timer cuga-flo fires keeps the due
//! time the journal holds, follows cuga-flo's clock, and can park the run. When no user
//! task waits, a timer due within the run's wait limit is waited for in-process; else the
//! run **parks** (`run_waiting`, the Kogito instance kept) with its earliest timer and the
//! catches waiting for a message or signal (a receive task is one; one nothing in the
//! process throws waits for `runs message` / `runs signal`; a message wait carries the
//! value its message's correlation key had in the instance when it began, as on the
//! native engine, which `runs message --key` matches). `runs resume` (`--due`,
//! `worker`) re-attaches, delivers what was journalled for those catches meanwhile (its
//! variables set first) and fires the timers that are due.
//!
//! A call activity is a user task like a task's: its answer is the child run the
//! [`Witness`] runs (the called app, `child_started`, `in`/`out` mappings, the child's
//! uncaught error raised at the user task), as on Flowable. A child that parks parks the
//! run, as on the native engine: the call's user task is left waiting
//! ([`Witness::park_children`]), the run parks (`run_waiting`, reason `child run <id>`)
//! once nothing else moves, and the resumed run's call resumes the child or reads its
//! end.
//!
//! A multi-instance task is jBPM's multi-instance user task over the loop counters
//! cuga-flo's step in front of it sets ([`pull::MultiTask`], as on Flowable): each
//! instance's work item shows its loop counter ([`augment::SLOT`]) and is asked as the
//! native engine asks it, under its own key. jBPM records no node entry for an
//! instance, so the path has them from what cuga-flo sees: all at once when parallel,
//! each when it waits when sequential, the activity once when it has no instance.

pub mod augment;

pub use augment::Persistence;
pub mod project;
pub mod rest;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Map, Value};

use self::rest::{Client, Endpoint, RestError, WorkItem};
use super::external::{Prior, RunFailure as _, Witness, witnessed};
use super::pull::{
    self, Asker, Ended, HookMove, Idle, Look, MultiTask, PullError, Pulled, TaskAnswer, call,
    is_sync_join, user_variables, visit_key,
};
use super::{
    EngineError, RunOutcome, RunRequest, SettingsError, WorkflowEngine, engine_block, engine_url,
    seconds,
};
use crate::app::{EngineConfig, EngineKind};
use crate::bridge::{BoxFuture, ControlPoints};
use crate::journal::event::{CatchKind, InstanceVisit, ThrownKind};
use crate::journal::{Event, EventSink};
use crate::semantics::rewrite::{self, Element, Rewritten, Role, Thrown};
use crate::semantics::topology::Topology;

/// How the adapter reaches the service.
#[derive(Debug, Clone)]
pub struct KogitoSettings {
    pub endpoint: Endpoint,
    /// The process id (the REST path); the model's process id when `None`.
    pub process_id: Option<String>,
    /// Before every id in the service (a service built with an id prefix).
    pub id_prefix: String,
}

impl KogitoSettings {
    /// From the app's `workflow_engine:` block (`url` replaced by `url` when given).
    pub fn from_config(config: &EngineConfig, url: Option<&str>) -> Result<Self, SettingsError> {
        let config = engine_block(config, EngineKind::Kogito);
        let url = engine_url(config, url, EngineKind::Kogito)?;
        Ok(KogitoSettings {
            endpoint: Endpoint {
                url,
                connect_timeout: seconds(&config.connect_timeout, Duration::from_secs(10)),
                timeout: seconds(&config.idle_timeout, Duration::from_secs(120)),
            },
            process_id: config.process_id.as_ref().map(|p| p.value.clone()),
            id_prefix: String::new(),
        })
    }
}

/// Runs processes on a Kogito service.
pub struct KogitoEngine {
    settings: KogitoSettings,
}

impl KogitoEngine {
    pub fn new(settings: KogitoSettings) -> Self {
        KogitoEngine { settings }
    }
}

impl WorkflowEngine for KogitoEngine {
    fn name(&self) -> &'static str {
        "kogito"
    }

    fn run(
        &self,
        request: RunRequest,
        control_points: Arc<dyn ControlPoints>,
        events: Arc<dyn EventSink>,
    ) -> BoxFuture<'static, Result<RunOutcome, EngineError>> {
        let settings = self.settings.clone();
        Box::pin(witnessed(
            "kogito",
            request,
            control_points,
            events,
            move |witness, request| run(settings, witness, request),
        ))
    }

    fn reachable(
        &self,
        process_id: &str,
    ) -> BoxFuture<'static, Result<(), crate::bridge::run::Unreachable>> {
        let settings = self.settings.clone();
        let process_id = process_id.to_string();
        Box::pin(async move {
            settings
                .reachable(&process_id)
                .await
                .map_err(|e| Box::new(e) as crate::bridge::run::Unreachable)
        })
    }
}

async fn run(
    settings: KogitoSettings,
    witness: Arc<Witness>,
    request: RunRequest,
) -> Result<RunOutcome, PullError> {
    // A child that parks parks the run: the call's user task waits meanwhile.
    witness.park_children();
    let run = Run::start(&settings, request, witness).await?;
    let ended = pull::drive(&run).await;
    Ok(run.finish(ended).await)
}

impl KogitoSettings {
    /// The service's process id for a model whose process is `process_id`.
    fn process_for(&self, process_id: &str) -> String {
        augment::java_identifier(self.process_id.as_deref().unwrap_or(process_id))
    }

    /// Whether the service answers and serves the process: what `runs resume` checks
    /// before it writes anything.
    pub async fn reachable(&self, process_id: &str) -> Result<(), PullError> {
        let process = self.process_for(process_id);
        let client = Client::new(self.endpoint.clone())?;
        client
            .ping(&process)
            .await
            .map_err(|e| unreachable(client.url(), &process, e))
    }
}

/// Why the first call to the service failed.
fn unreachable(url: &str, process: &str, source: RestError) -> PullError {
    if source.status == Some(404) {
        return PullError::Failed(format!(
            "the Kogito service at {url} has no process `{process}` (build the app's service \
             with `cuga-flo kogito build`)"
        ));
    }
    PullError::Unreachable {
        engine: "Kogito",
        url: url.to_string(),
        source,
    }
}

/// A wait of the instance that cuga-flo delivers to and has journalled: a timer it fires
/// (`timer_scheduled`), or a catch waiting for a message or signal from outside
/// (`message_awaited`).
#[derive(Debug, Clone)]
struct Pending {
    key: String,
    /// The jBPM signal that ends it.
    event_type: String,
    what: Awaits,
}

#[derive(Debug, Clone)]
enum Awaits {
    Timer {
        due_ms: u64,
    },
    /// `correlation`: the value of the message's correlation key when the wait began.
    Message {
        kind: CatchKind,
        name: String,
        correlation: Option<String>,
    },
}

struct Run {
    client: Client,
    witness: Arc<Witness>,
    request: RunRequest,
    rewritten: Rewritten,
    process: String,
    instance: String,
    id_prefix: String,
    state: Mutex<Known>,
}

#[derive(Default)]
struct Known {
    path: Vec<String>,
    skips: HashSet<String>,
    terminated: Option<String>,
    /// The trace once the instance has ended.
    last: Option<rest::Trace>,
    /// The error and escalation events of the path whose throw is journalled (Kogito
    /// delivers what they throw; cuga-flo journals it when it sees them entered).
    throws: usize,
    /// The waits of each message or signal catch, and of each timer, journalled so far.
    awaits: std::collections::HashMap<String, u64>,
    /// The waits cuga-flo delivers to that are journalled and not delivered yet, by the
    /// model's node.
    pending: HashMap<String, Pending>,
    /// Deliveries from outside (`runs message`, `runs signal`) journalled while the run
    /// was parked and not delivered to the instance yet: their variables, by key.
    inbox: HashMap<String, Map<String, Value>>,
    /// The timers fired, by the model's node: an event sub-process's timer start fires
    /// once (jBPM goes on listing its start while the scope runs).
    fired: HashSet<String>,
    /// Per multi-instance task, the number of instances of each of its runs so far (as
    /// its step set them), and the last one a resumed run found set.
    multi_counts: HashMap<String, Vec<u64>>,
    multi_latest: HashMap<String, u64>,
    /// Per multi-instance task, its visits before its latest run's instances (instance
    /// k of that run is visit `base + k`).
    multi_base: HashMap<String, usize>,
    /// Per sequential multi-instance task, the instances of each of its runs started so
    /// far (jBPM records no entry for an instance: cuga-flo sees each when it waits).
    multi_started: HashMap<String, Vec<u64>>,
    /// The call activities' user tasks whose child run parked (work item → child run):
    /// left waiting until the run is resumed.
    held: HashMap<String, String>,
}

impl Run {
    async fn start(
        settings: &KogitoSettings,
        request: RunRequest,
        witness: Arc<Witness>,
    ) -> Result<Run, PullError> {
        let rewritten = rewrite::rewrite(
            &request.process,
            &request.annotations,
            crate::app::EngineKind::Kogito,
        )
        .map_err(|problems| PullError::Unsupported {
            engine: "Kogito",
            problems,
        })?;
        let process = settings.process_for(&request.process.id);
        let client = Client::new(settings.endpoint.clone())?;
        let url = client.url().to_string();
        client
            .ping(&process)
            .await
            .map_err(|e| unreachable(&url, &process, e))?;
        let instance = match witness.prior().and_then(|p| p.instance.as_ref()) {
            Some(journalled) => journalled.instance.clone(),
            // A new run, or one stopped before its instance was journalled (Kogito finds
            // no instance by business key: the one started then, if any, is left).
            None => {
                let instance = client
                    .start(&process, &request.run_id, &request.variables)
                    .await
                    .map_err(|e| call(format!("Kogito could not start `{process}`"), e))?;
                // Durable before any task is worked: `runs resume` re-attaches to it.
                witness.journal(Event::InstanceStarted {
                    instance: instance.clone(),
                    definition: process.clone(),
                    deployment: None,
                    topic: None,
                    worker: None,
                })?;
                instance
            }
        };
        let run = Run {
            client,
            witness,
            request,
            rewritten,
            process,
            instance,
            id_prefix: settings.id_prefix.clone(),
            state: Mutex::new(Known::default()),
        };
        if let Some(prior) = run.witness.prior()
            && prior.instance.is_some()
        {
            run.reattach(prior).await?;
        }
        Ok(run)
    }

    /// Re-attach to the instance a resumed run's journal names: check that the service
    /// still has it, and rebuild what cuga-flo knows of it from the journal.
    async fn reattach(&self, prior: &Prior) -> Result<(), PullError> {
        let url = self.client.url();
        let trace = match self.client.trace(&self.instance).await {
            Ok(trace) => trace,
            Err(e) if e.status == Some(404) => {
                return Err(PullError::Failed(format!(
                    "the run's Kogito instance {} no longer exists at {url} (a service \
                     restarted with in-memory persistence forgets its instances)",
                    self.instance
                )));
            }
            Err(e) => return Err(self.lost(e)),
        };
        if trace.state == "aborted" || trace.state == "error" {
            return Err(PullError::Failed(format!(
                "the run's Kogito instance {} ended {} at {url} while cuga-flo was away",
                self.instance, trace.state
            )));
        }
        let waiting = if trace.state == "active" {
            self.client
                .waiting(&self.process, &self.instance)
                .await
                .map_err(|e| self.lost(e))?
        } else {
            Vec::new()
        };
        // The throws the journal holds are not journalled again.
        let throws = prior
            .path
            .iter()
            .filter(|id| self.rewritten.thrown_at(id).is_some())
            .count();
        // The number of instances of the multi-instance tasks running (for the records of
        // their instances still to come).
        if trace.state == "active" && self.has_multi() {
            let variables = self
                .client
                .variables(&self.process, &self.instance)
                .await
                .map_err(|e| self.lost(e))?;
            let mut known = self.known();
            for role in self.rewritten.roles.values() {
                if let Role::Multi { node, variable, .. } = role
                    && let Some(count) = variables.get(variable).and_then(Value::as_u64)
                {
                    known.multi_latest.insert(node.clone(), count);
                    // The instances completed were entered (a waiting one is when asked).
                    let [_, _, completed, _] = rewrite::multi_variables(variable);
                    let completed = variables.get(&completed).and_then(Value::as_u64);
                    known
                        .multi_started
                        .insert(node.clone(), vec![completed.unwrap_or(0)]);
                }
            }
        }
        let mut known = self.known();
        known.throws = throws;
        known.terminated.clone_from(&prior.terminated);
        if let Some(resume) = &self.request.resume {
            rebuild_waits(&mut known, &resume.records);
        }
        // A skip whose task's entry is journalled may have been carried out already: it
        // stands while the task still waits.
        known.skips = prior
            .skips
            .iter()
            .filter(|(task, entered)| {
                !**entered
                    || waiting
                        .iter()
                        .any(|w| self.model_id(&w.element_id) == task.as_str())
            })
            .map(|(task, _)| task.clone())
            .collect();
        Ok(())
    }

    /// The model's id behind a service id (jBPM gives the task of a multi-instance task
    /// its id suffixed `_1`).
    fn model_id<'s>(&self, id: &'s str) -> &'s str {
        let id = id.strip_prefix(self.id_prefix.as_str()).unwrap_or(id);
        match id.strip_suffix("_1") {
            Some(task)
                if self
                    .rewritten
                    .nodes
                    .iter()
                    .any(|n| n.id == task && matches!(n.element, Element::MultiWorker { .. })) =>
            {
                task
            }
            _ => id,
        }
    }

    fn known(&self) -> MutexGuard<'_, Known> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lost(&self, e: RestError) -> PullError {
        PullError::at("Kogito", self.client.url(), e)
    }

    fn asker(&self) -> Asker<'_> {
        Asker {
            witness: &self.witness,
            run_id: &self.request.run_id,
            process_key: &self.request.process_key,
            process: &self.request.process,
        }
    }

    /// Whether the join entered just before `after` fired: a node its outgoing flows lead
    /// to (or the merge cuga-flo put in front of one) comes before the join is entered
    /// again; where in `after`.
    fn fired(&self, join: &crate::bpmn::Node, after: &[&str]) -> Option<usize> {
        let next: Vec<String> = self
            .request
            .process
            .flows
            .iter()
            .filter(|f| f.source == join.id)
            .flat_map(|f| {
                let arrival = self.rewritten.arrival(f);
                let merge = format!("{}merge__{arrival}", rewrite::PREFIX);
                [arrival, merge]
            })
            .collect();
        for (at, id) in after.iter().enumerate() {
            if *id == join.id {
                return None;
            }
            if next.iter().any(|n| n == id) {
                return Some(at);
            }
        }
        None
    }

    /// Read the path from the service's trace; the trace itself.
    async fn refresh(&self) -> Result<rest::Trace, PullError> {
        let trace = self
            .client
            .trace(&self.instance)
            .await
            .map_err(|e| self.lost(e))?;
        let process = &self.request.process;
        let ids: Vec<&str> = trace.path.iter().map(|id| self.model_id(id)).collect();
        let mut path: Vec<String> = Vec::new();
        let mut visits: Vec<Option<InstanceVisit>> = Vec::new();
        // Raced catches that won, by the index of the entry they precede.
        let mut won: HashMap<usize, Vec<String>> = Default::default();
        // Per multi-instance task: its run (its step's entries so far) and the instances
        // entered since.
        let mut runs: HashMap<&str, (usize, u64)> = HashMap::new();
        let mut bases: HashMap<String, usize> = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            if let Some(catches) = won.remove(&i) {
                visits.extend(catches.iter().map(|_| None));
                path.extend(catches);
            }
            if let Some(Role::Multi { node, .. }) = self.rewritten.roles.get(*id) {
                let run = runs.entry(node.as_str()).or_insert((0, 0));
                *run = (run.0 + 1, 0);
                bases.insert(node.clone(), path.iter().filter(|p| *p == node).count());
                continue;
            }
            let Some(node) = self.rewritten.original(id).and_then(|id| process.node(id)) else {
                continue;
            };
            // A multi-instance task (jBPM's for-each node, entered once per run) is
            // entered once per instance: all at once when parallel, one after the other
            // when sequential; one with no instance to run is entered once.
            if let Some((run, entered)) = runs.get_mut(node.id.as_str())
                && let Some(multi) = self.multi_of(&node.id)
            {
                let count = self.count_of(&node.id, *run).unwrap_or(0);
                let started = if multi.sequential {
                    let known = self.known();
                    let runs = known.multi_started.get(&node.id);
                    // (A resumed run knows its latest run's only.)
                    let started = runs.and_then(|r| r.get(run.saturating_sub(1)).or(r.last()));
                    let started = started.copied();
                    started.unwrap_or(0).min(count)
                } else {
                    count
                };
                if count == 0 && *entered == 0 {
                    path.push(node.id.clone());
                    visits.push(Some(InstanceVisit {
                        loop_counter: 0,
                        instances: 0,
                    }));
                }
                while *entered < started {
                    *entered += 1;
                    path.push(node.id.clone());
                    visits.push(Some(InstanceVisit {
                        loop_counter: *entered,
                        instances: count,
                    }));
                }
                continue;
            }
            // jBPM records a join once per arriving token: it counts as entered when it
            // fires, i.e. when one of its successors follows before it is entered again.
            if is_sync_join(process, node) && self.fired(node, &ids[i + 1..]).is_none() {
                continue;
            }
            // jBPM enters every catch an event-based gateway races when the gateway is
            // reached: one counts when it wins, just before its successor.
            if self.races(node) {
                if let Some(next) = self.fired(node, &ids[i + 1..]) {
                    won.entry(i + 1 + next).or_default().push(node.id.clone());
                }
                continue;
            }
            path.push(node.id.clone());
            visits.push(None);
        }
        if self.has_multi() {
            self.witness.visits(&path, visits);
        }
        let mut known = self.known();
        known.multi_base.extend(bases);
        known.path = path;
        let known = &mut *known;
        pull::journal_throws(
            &self.witness,
            &self.request,
            &self.rewritten,
            &known.path,
            &mut known.throws,
        )?;
        Ok(trace)
    }

    /// The idempotency key of the task `item`: its latest entry's place among the
    /// trace's entries of the same control point.
    fn key_of(&self, item: &WorkItem, trace: &rest::Trace) -> String {
        let entries: Vec<&str> = trace.path.iter().map(|id| self.model_id(id)).collect();
        let worker = self.model_id(&item.element_id);
        let own = entries.iter().rposition(|id| *id == worker);
        visit_key(&self.request.run_id, &self.rewritten, &entries, own, worker)
    }

    async fn answer(&self, item: &WorkItem, trace: &rest::Trace) -> Result<(), PullError> {
        let key = self.key_of(item, trace);
        let role = self
            .rewritten
            .roles
            .get(self.model_id(&item.element_id))
            .cloned()
            .ok_or_else(|| {
                PullError::Failed(format!(
                    "Kogito shows a task at `{}`, which is no control point of this run",
                    item.element_id
                ))
            })?;
        let all = self
            .client
            .variables(&self.process, &self.instance)
            .await
            .map_err(|e| self.lost(e))?;
        let variables = user_variables(all.clone());
        let path = self.known().path.clone();
        let complete = |writes: Map<String, Value>| {
            let mut full = all.clone();
            full.extend(writes);
            async move {
                // The answer is journalled; a run stopped here completes the task when
                // resumed.
                crate::crash::point("engine.before_complete");
                self.client
                    .complete(&self.process, &self.instance, item, &full)
                    .await
                    .map_err(|e| self.lost(e))?;
                crate::crash::point("engine.after_complete");
                Ok(())
            }
        };
        match role {
            Role::Task(task) if let Some(multi) = self.multi_of(&task) => {
                self.multi_instance(item, &task, &multi, all.clone(), &path)
                    .await
            }
            Role::Task(task) => {
                if self.known().skips.remove(&task) {
                    return complete(Map::new()).await;
                }
                // A resumed run whose answer is journalled journalled its throw too.
                let fresh = self
                    .witness
                    .prior()
                    .is_none_or(|p| p.answer(&key).is_none());
                let answer = self
                    .asker()
                    .answer_task(&task, &key, variables, &path, None)
                    .await;
                let answer = match answer {
                    Ok(answer) => answer,
                    // A call activity whose child run parked: its task waits, the run
                    // parks when nothing else moves (as on the native engine).
                    Err(why) => match self.witness.take_waiting_child(&key) {
                        Some(child) => {
                            self.known().held.insert(item.id.clone(), child);
                            return Ok(());
                        }
                        None => return Err(why),
                    },
                };
                match answer {
                    TaskAnswer::Done(writes) => complete(writes).await,
                    TaskAnswer::Raised { code, error } => {
                        self.raise(item, &task, fresh, code, error).await
                    }
                }
            }
            Role::Uncaught { node, code } => {
                // The end event's worker: the run fails here, as on the native engine.
                self.witness.entered(&path, Vec::new());
                let thrown = Thrown {
                    kind: ThrownKind::Error,
                    code,
                };
                pull::journal_throw(
                    &self.witness,
                    &self.request.process,
                    &node,
                    &thrown,
                    false,
                    None,
                )?;
                Err(PullError::Failed(format!(
                    "error end event `{node}` raised BPMN error {}, which nothing catches",
                    thrown.code.as_deref().unwrap_or("(no code)")
                )))
            }
            Role::Send { node, kind, name } => {
                if self.send(item, &node, kind, &name, &path).await? {
                    // An interrupting event sub-process it started ends the thrower's
                    // token (jBPM leaves the user task it is delivered from waiting).
                    return self
                        .client
                        .cancel_node(&self.process, &self.instance, &item.node_instance_id)
                        .await
                        .map_err(|e| self.lost(e));
                }
                complete(Map::new()).await
            }
            Role::Multi { node, variable, .. } => {
                // The step in front of a multi-instance task: what it runs over, as the
                // native engine evaluates it, and its instances' loop counters.
                let multi = self.multi_of(&node).ok_or_else(|| {
                    PullError::Failed(format!("`{node}` is no multi-instance task of this run"))
                })?;
                let (mut set, count) = multi.start(&node, &variables)?;
                set.insert(
                    augment::slots(&variable),
                    Value::Array((1..=count).map(Value::from).collect()),
                );
                {
                    let mut known = self.known();
                    known
                        .multi_counts
                        .entry(node.clone())
                        .or_default()
                        .push(count);
                    known.multi_started.entry(node.clone()).or_default().push(0);
                }
                if count == 0 {
                    set.extend(multi.no_instance(&self.witness, &node)?);
                }
                complete(set).await
            }
            // `engine::support` refuses multi-instance sub-processes on Kogito.
            Role::InstanceEnd { node, .. } => Err(PullError::Failed(format!(
                "multi-instance sub-process `{node}` does not run on Kogito"
            ))),
            Role::Route { gateway, variable } => {
                let chosen = self.asker().route(&gateway, &key, variables, &path).await?;
                let mut set = Map::new();
                set.insert(variable, Value::String(chosen));
                complete(set).await
            }
            Role::Hook {
                hook,
                flow,
                variable,
            } => {
                let move_ = self
                    .asker()
                    .hook(&hook, &key, &flow, &variable, variables, &path, "Kogito")
                    .await?;
                match move_ {
                    HookMove::Continue(set) => complete(set).await,
                    HookMove::SkipNode(set, task) => {
                        self.known().skips.insert(task);
                        complete(set).await
                    }
                    HookMove::Terminate(set, message) => {
                        self.known().terminated = Some(message);
                        complete(set).await
                    }
                    HookMove::SkipTo(set, target) => {
                        let to = self.rewritten.entry.get(&target).cloned().unwrap_or(target);
                        let to = format!("{}{to}", self.id_prefix);
                        if !set.is_empty() {
                            self.client
                                .patch(&self.process, &self.instance, &set)
                                .await
                                .map_err(|e| self.lost(e))?;
                        }
                        self.client
                            .move_token(&self.process, &self.instance, &item.node_instance_id, &to)
                            .await
                            .map_err(|e| {
                                call(format!("Kogito could not move the token to `{to}`"), e)
                            })
                    }
                }
            }
        }
    }

    /// Multi-instance task `task` as the run runs it.
    fn multi_of(&self, task: &str) -> Option<MultiTask> {
        MultiTask::of(&self.rewritten, &self.request.process, task)
    }

    fn has_multi(&self) -> bool {
        self.rewritten
            .roles
            .values()
            .any(|r| matches!(r, Role::Multi { .. }))
    }

    /// How many instances run `run` (1, 2, ...) of multi-instance task `node` had (its
    /// step set it).
    fn count_of(&self, node: &str, run: usize) -> Option<u64> {
        let known = self.known();
        known
            .multi_counts
            .get(node)
            .and_then(|counts| counts.get(run.saturating_sub(1)))
            .or_else(|| known.multi_latest.get(node))
            .copied()
    }

    /// An instance of multi-instance task `task` waits at `item` (`all`: every variable):
    /// asked as the native engine asks it (its own variables over the process's, its own
    /// visit), and completed with what the native engine goes on with (the outputs so
    /// far, the count, whether the completion condition held: jBPM's own completion
    /// condition reads it and cancels the instances still waiting).
    async fn multi_instance(
        &self,
        item: &WorkItem,
        task: &str,
        multi: &MultiTask,
        all: Map<String, Value>,
        path: &[String],
    ) -> Result<(), PullError> {
        let loop_counter = item.slot.ok_or_else(|| {
            PullError::Failed(format!(
                "Kogito's task at `{task}` does not show which instance of it waits"
            ))
        })?;
        let [_, _, _, done] = rewrite::multi_variables(&multi.variable);
        if all.get(&done) == Some(&Value::Bool(true)) {
            // A parallel instance still waiting once the completion condition held: the
            // native engine cancels it (it is not asked).
            return self
                .client
                .complete(&self.process, &self.instance, item, &all)
                .await
                .map_err(|e| self.lost(e));
        }
        // A sequential instance is entered when it waits.
        let mut path = path.to_vec();
        if multi.sequential {
            let later = {
                let mut known = self.known();
                let runs = known.multi_started.entry(task.to_string()).or_default();
                match runs.last_mut() {
                    Some(started) if *started >= loop_counter => false,
                    Some(started) => {
                        *started = loop_counter;
                        true
                    }
                    None => {
                        runs.push(loop_counter);
                        true
                    }
                }
            };
            if later {
                self.refresh().await?;
                path = self.known().path.clone();
                if let Some(why) = self.over_budget() {
                    return Err(why);
                }
            }
        }
        let path = path.as_slice();
        let base = self.known().multi_base.get(task).copied().unwrap_or(0);
        let key = format!(
            "{}:{task}:{}",
            self.request.run_id,
            base as u64 + loop_counter
        );
        let instance = multi.instance(&all, loop_counter);
        let mut variables = user_variables(all.clone());
        variables.extend(instance.locals.clone());
        let fresh = self
            .witness
            .prior()
            .is_none_or(|p| p.answer(&key).is_none());
        let visit = instance.visit();
        let answer = self
            .asker()
            .answer_task(task, &key, variables.clone(), path, Some(visit))
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            // An instance of a call activity whose child run parked: it waits.
            Err(why) => match self.witness.take_waiting_child(&key) {
                Some(child) => {
                    self.known().held.insert(item.id.clone(), child);
                    return Ok(());
                }
                None => return Err(why),
            },
        };
        match answer {
            TaskAnswer::Done(writes) => {
                let set = multi.instance_done(&self.witness, task, instance, variables, writes)?;
                let mut full = all;
                full.extend(set);
                crate::crash::point("engine.before_complete");
                self.client
                    .complete(&self.process, &self.instance, item, &full)
                    .await
                    .map_err(|e| self.lost(e))?;
                crate::crash::point("engine.after_complete");
                Ok(())
            }
            TaskAnswer::Raised { code, error } => self.raise(item, task, fresh, code, error).await,
        }
    }

    /// Task `task` failed with BPMN error `code`: journal the throw (unless a resumed
    /// run journalled it), fail the run when nothing catches it, else raise it at the
    /// task's user task, where jBPM delivers it.
    async fn raise(
        &self,
        item: &WorkItem,
        task: &str,
        fresh: bool,
        code: String,
        error: String,
    ) -> Result<(), PullError> {
        pull::task_raised(
            &self.witness,
            &self.request.process,
            task,
            fresh,
            &code,
            &error,
        )?;
        crate::crash::point("engine.before_complete");
        self.client
            .raise(&self.process, &self.instance, item, &code)
            .await
            .map_err(|e| {
                call(
                    format!("Kogito could not raise BPMN error {code} at `{task}`"),
                    e,
                )
            })?;
        crate::crash::point("engine.after_complete");
        Ok(())
    }

    /// A message or signal throw or end event: deliver it to the instance's catches
    /// waiting for it (the service signals them), each wait and its delivery journalled
    /// as the native engine journals them (a message is received by the catch that started
    /// waiting first; nothing waiting: it passes). Whether it started an interrupting
    /// event sub-process around the thrower ([`pull::interrupts_thrower`]).
    async fn send(
        &self,
        item: &WorkItem,
        node: &str,
        kind: CatchKind,
        name: &str,
        path: &[String],
    ) -> Result<bool, PullError> {
        self.witness.entered(path, Vec::new());
        let event_type = augment::event_type(kind, name);
        let mut caught = self
            .client
            .deliver(&self.process, &self.instance, item, &event_type)
            .await
            .map_err(|e| {
                PullError::Failed(format!(
                    "Kogito could not deliver the {} `{name}`: {e}",
                    kind.as_str()
                ))
            })?;
        if kind == CatchKind::Message {
            caught.truncate(1);
        }
        let caught: Vec<String> = caught
            .iter()
            .map(|c| self.model_id(c).to_string())
            .collect();
        let interrupted = pull::interrupts_thrower(&self.request.process, node, &caught);
        for catch in caught {
            // A wait journalled when the run idled keeps its key.
            let journalled = self
                .known()
                .pending
                .remove(&catch)
                .filter(|p| matches!(p.what, Awaits::Message { .. }));
            let key = match journalled {
                Some(pending) => pending.key,
                None => {
                    let key = self.next_wait_key(&catch);
                    self.witness.journal(Event::MessageAwaited {
                        key: key.clone(),
                        node: catch.clone(),
                        kind,
                        name: name.to_string(),
                    })?;
                    key
                }
            };
            self.witness.journal(Event::MessageReceived {
                delivery: None,
                key,
                node: catch,
                kind,
                name: name.to_string(),
                variables: Map::new(),
                thrown_by: Some(node.to_string()),
                taint: None,
            })?;
        }
        Ok(interrupted)
    }

    /// The key of the next wait at the model's `node` (`<run>:<node>:<visit>`).
    fn next_wait_key(&self, node: &str) -> String {
        let mut known = self.known();
        let visit = known.awaits.entry(node.to_string()).or_insert(0);
        *visit += 1;
        format!("{}:{node}:{visit}", self.request.run_id)
    }

    fn has_timers(&self) -> bool {
        self.rewritten
            .nodes
            .iter()
            .any(|n| matches!(n.element, Element::Timer { .. }))
    }

    /// Read what the instance waits for that cuga-flo delivers, and bring the journal up
    /// to date: a timer that started waiting is scheduled (`timer_scheduled`, due as the
    /// native engine computes it), and a catch that started waiting is awaited
    /// (`message_awaited`); a wait that ended otherwise (its activity or scope ended, an
    /// event-based gateway's race was lost) is dropped.
    async fn sync_waits(&self) -> Result<Vec<(String, String)>, PullError> {
        let waits: Vec<(String, String)> = self
            .client
            .waits(&self.process, &self.instance)
            .await
            .map_err(|e| self.lost(e))?
            .into_iter()
            .map(|(node, event_type)| (self.model_id(&node).to_string(), event_type))
            .collect();
        let waits = race_order(&self.request.process, waits);
        // (A resumed run's waits learn their signal here.)
        self.known().pending.retain(|node, p| {
            let found = waits
                .iter()
                .find(|(n, t)| n == node && (p.event_type.is_empty() || *t == p.event_type));
            match found {
                Some((_, t)) => {
                    p.event_type.clone_from(t);
                    true
                }
                None => false,
            }
        });
        let mut variables: Option<Map<String, Value>> = None;
        for (node, event_type) in &waits {
            {
                let known = self.known();
                let started = known.fired.contains(node)
                    && self
                        .request
                        .process
                        .node(node)
                        .is_some_and(|n| n.kind.is_start_event());
                if started || known.pending.contains_key(node) {
                    continue;
                }
            }
            let what = if event_type.starts_with(augment::TIMER_TYPE) {
                if variables.is_none() {
                    variables = Some(self.user_variables().await?);
                }
                let event = self.request.process.node(node).ok_or_else(|| {
                    PullError::Failed(format!(
                        "Kogito waits at timer `{node}`, which the model lacks"
                    ))
                })?;
                let due_ms = pull::timer_due(
                    event,
                    variables.as_ref().unwrap_or(&Map::new()),
                    crate::clock::now_ms(),
                )
                .map_err(|why| PullError::Failed(format!("timer `{node}`: {why}")))?;
                Awaits::Timer { due_ms }
            } else {
                let topology = Topology::from_process(&self.request.process);
                let Some(catch) = topology.node(node) else {
                    continue;
                };
                let Some((kind, name)) = crate::semantics::events::signature(catch) else {
                    continue;
                };
                // A message with a correlation key waits under the key's value now (as
                // the native engine reads it when the wait begins): `runs message --key`
                // finds the run by it.
                let keyed = catch
                    .event_ref
                    .as_ref()
                    .is_some_and(|r| r.correlation_key.is_some());
                if keyed && variables.is_none() {
                    variables = Some(self.user_variables().await?);
                }
                let correlation = crate::semantics::events::correlation_over(
                    catch.event_ref.as_ref(),
                    kind,
                    variables.as_ref().unwrap_or(&Map::new()),
                )
                .map_err(|why| {
                    PullError::Failed(format!("{} `{name}` at `{node}`: {why}", kind.as_str()))
                })?;
                Awaits::Message {
                    kind,
                    name,
                    correlation,
                }
            };
            // A wait is journalled after the entry of what waits, as the native engine
            // journals it.
            let path = self.known().path.clone();
            self.witness.entered(&path, Vec::new());
            let key = self.next_wait_key(node);
            self.witness.journal(match &what {
                Awaits::Timer { due_ms } => Event::TimerScheduled {
                    key: key.clone(),
                    node: node.clone(),
                    due_ms: *due_ms,
                },
                Awaits::Message { kind, name, .. } => Event::MessageAwaited {
                    key: key.clone(),
                    node: node.clone(),
                    kind: *kind,
                    name: name.clone(),
                },
            })?;
            self.known().pending.insert(
                node.clone(),
                Pending {
                    key,
                    event_type: event_type.clone(),
                    what,
                },
            );
        }
        Ok(waits)
    }

    /// The instance's variables cuga-flo's harness sees.
    async fn user_variables(&self) -> Result<Map<String, Value>, PullError> {
        let all = self
            .client
            .variables(&self.process, &self.instance)
            .await
            .map_err(|e| self.lost(e))?;
        Ok(user_variables(all))
    }

    /// When the next timer of the instance is due, and its node.
    fn next_timer(&self) -> Option<(u64, String)> {
        self.known()
            .pending
            .iter()
            .filter_map(|(node, p)| match p.what {
                Awaits::Timer { due_ms } => Some((due_ms, node.clone())),
                Awaits::Message { .. } => None,
            })
            .min()
    }

    /// Fire the earliest timer that is due, if any: cuga-flo signals it to the instance
    /// and journals it fired. Whether one fired.
    async fn fire_due(&self) -> Result<bool, PullError> {
        let Some((due_ms, node)) = self.next_timer() else {
            return Ok(false);
        };
        if due_ms > crate::clock::now_ms() {
            return Ok(false);
        }
        let Some(pending) = self.known().pending.remove(&node) else {
            return Ok(false);
        };
        crate::crash::point("engine.timer_due");
        let caught = self
            .client
            .signal(&self.process, &self.instance, &pending.event_type)
            .await
            .map_err(|e| call(format!("Kogito could not fire timer `{node}`"), e))?;
        self.known().fired.insert(node.clone());
        if !caught.is_empty() {
            self.witness.journal(Event::TimerFired {
                key: pending.key,
                node,
            })?;
        }
        Ok(true)
    }

    /// Nothing waits for cuga-flo's answer: deliver what came from outside while the run
    /// was parked, fire a timer when it is due (waiting for it in-process within the
    /// run's wait limit, as the native engine does), else park the run on what the
    /// instance waits for.
    async fn idle_for(&self) -> Result<Idle, PullError> {
        self.sync_waits().await?;
        // A delivery `runs message` or `runs signal` journalled for a wait of the instance.
        let delivery = {
            let mut known = self.known();
            let found = known
                .pending
                .iter()
                .find(|(_, p)| known.inbox.contains_key(&p.key))
                .map(|(node, p)| (node.clone(), p.clone()));
            found.map(|(node, p)| {
                known.pending.remove(&node);
                let variables = known.inbox.remove(&p.key).unwrap_or_default();
                (node, p, variables)
            })
        };
        if let Some((node, pending, variables)) = delivery {
            if !variables.is_empty() {
                self.client
                    .patch(&self.process, &self.instance, &variables)
                    .await
                    .map_err(|e| self.lost(e))?;
            }
            crate::crash::point("engine.before_complete");
            self.client
                .signal(&self.process, &self.instance, &pending.event_type)
                .await
                .map_err(|e| call(format!("Kogito could not deliver to `{node}`"), e))?;
            return Ok(Idle::Again);
        }
        if self.fire_due().await? {
            return Ok(Idle::Again);
        }
        let limit = self
            .request
            .annotations
            .max_wait_secs
            .unwrap_or(crate::engine::native::DEFAULT_WAIT_LIMIT_SECS)
            .saturating_mul(1000);
        let next = self.next_timer();
        let now = crate::clock::now_ms();
        if let Some((due_ms, _)) = next
            && due_ms.saturating_sub(now) <= limit
        {
            tokio::time::sleep(Duration::from_millis(due_ms.saturating_sub(now))).await;
            return Ok(Idle::Again);
        }
        let awaiting: Vec<crate::journal::event::Awaited> = {
            let known = self.known();
            let mut awaiting: Vec<_> = known
                .pending
                .iter()
                .filter_map(|(node, p)| match &p.what {
                    Awaits::Message {
                        kind,
                        name,
                        correlation,
                    } => Some(crate::journal::event::Awaited {
                        key: p.key.clone(),
                        node: node.clone(),
                        kind: *kind,
                        name: name.clone(),
                        correlation: correlation.clone(),
                    }),
                    Awaits::Timer { .. } => None,
                })
                .collect();
            awaiting.sort_by(|a, b| a.key.cmp(&b.key));
            awaiting
        };
        let mut children: Vec<String> = self.known().held.values().cloned().collect();
        children.sort();
        if next.is_none() && awaiting.is_empty() && children.is_empty() {
            return Err(PullError::Failed("the instance is active but waits for nothing cuga-flo can answer (a join waiting for a branch that will not come?)".to_string()));
        }
        // The path so far is journalled before the run parks.
        let path = self.known().path.clone();
        self.witness.entered(&path, Vec::new());
        self.witness.journal(Event::RunWaiting {
            // What the native engine names first: a timer, a message, its children.
            reason: if next.is_some() {
                "timer".to_string()
            } else if !awaiting.is_empty() {
                "message".to_string()
            } else {
                format!("child run {}", children.join(", "))
            },
            questions: Vec::new(),
            due_ms: next.map(|(due, _)| due),
            awaiting,
        })?;
        Ok(Idle::Park)
    }

    /// Work `item`, firing the instance's timers that come due while the harness answers
    /// (a boundary timer on the task): when one ends the task (an interrupting one), its
    /// question is dropped, as the native engine cancels the call of an activity its
    /// timer interrupts; a non-interrupting one leaves it to be answered.
    async fn work_racing_timers(
        &self,
        item: &WorkItem,
        trace: &rest::Trace,
    ) -> Result<(), PullError> {
        let work = self.answer(item, trace);
        tokio::pin!(work);
        loop {
            let Some((due_ms, _)) = self.next_timer() else {
                return work.await;
            };
            let wait = Duration::from_millis(due_ms.saturating_sub(crate::clock::now_ms()));
            tokio::select! {
                done = &mut work => return done,
                () = tokio::time::sleep(wait) => {
                    self.fire_due().await?;
                    let waiting = self
                        .client
                        .waiting(&self.process, &self.instance)
                        .await
                        .map_err(|e| self.lost(e))?;
                    if !waiting.iter().any(|w| w.id == item.id) {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Whether the model's `node` is a catch an event-based gateway races (jBPM enters
    /// every raced catch when the gateway is reached).
    fn races(&self, node: &crate::bpmn::Node) -> bool {
        matches!(
            node.kind,
            crate::bpmn::NodeKind::IntermediateCatchEvent { .. }
        ) && self.request.process.flows.iter().any(|f| {
            f.target == node.id
                && self.rewritten.nodes.iter().any(|n| {
                    n.id == f.source
                        && n.element == Element::Gateway(rewrite::GatewayTag::EventBased)
                })
        })
    }

    async fn finish(&self, ended: Ended) -> RunOutcome {
        let _ = self.refresh().await;
        let (path, last, terminated) = {
            let known = self.known();
            (
                known.path.clone(),
                known.last.clone(),
                known.terminated.clone(),
            )
        };
        let variables = match last.and_then(|t| t.variables) {
            Some(vars) => user_variables(vars),
            None => self.witness.variables(),
        };
        pull::outcome(
            &self.witness,
            &self.request,
            path,
            variables,
            ended,
            terminated,
        )
    }
}

impl Pulled for Run {
    type Seen = rest::Trace;
    type Work = WorkItem;

    async fn observe(&self) -> Result<Option<rest::Trace>, PullError> {
        let trace = self.refresh().await?;
        if trace.state != "active" {
            self.known().last = Some(trace);
            return Ok(None);
        }
        Ok(Some(trace))
    }

    fn over_budget(&self) -> Option<PullError> {
        pull::over_budget(&self.known().path, self.request.annotations.step_budget)
    }

    async fn waiting(&self, _: &rest::Trace) -> Result<Look<WorkItem>, PullError> {
        let mut items =
            (self.client.waiting(&self.process, &self.instance).await).map_err(|e| self.lost(e))?;
        // The instances of a multi-instance task in order (jBPM starts parallel ones in
        // item order; the native engine asks them so).
        items.sort_by_key(|i| i.slot.unwrap_or(0));
        // Timers start with what they wait at: journalled as soon as they wait; one due
        // fires before anything else moves.
        if self.has_timers() {
            self.sync_waits().await?;
            if self.fire_due().await? {
                return Ok(Look::Again);
            }
        }
        // A call whose child parked waits for the run to be resumed.
        let mut known = self.known();
        known.held.retain(|id, _| items.iter().any(|i| i.id == *id));
        Ok(
            match items.into_iter().find(|i| !known.held.contains_key(&i.id)) {
                Some(item) => Look::Work(vec![item]),
                None => Look::Idle,
            },
        )
    }

    async fn idle(&self) -> Result<Idle, PullError> {
        self.idle_for().await
    }

    async fn work(&self, trace: &rest::Trace, item: WorkItem) -> Result<(), PullError> {
        self.work_racing_timers(&item, trace).await
    }

    async fn fail(&self, why: PullError) -> Ended {
        let why = why.message();
        if let Err(e) = self.client.abort(&self.process, &self.instance).await {
            tracing::warn!("could not abort Kogito instance {}: {e}", self.instance);
        }
        Ended::Failed(why)
    }
}

/// Rebuild a resumed run's waits from its journal: the visits of each catch and timer, the
/// timers scheduled and not fired, the catches awaited and not reached, and the deliveries
/// from outside journalled for them (delivered to the instance when it is re-attached).
/// A wait keeps the correlation value the run parked with.
fn rebuild_waits(known: &mut Known, records: &[crate::journal::Record]) {
    let correlations: HashMap<&str, &str> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::RunWaiting { awaiting, .. } => Some(awaiting),
            _ => None,
        })
        .flatten()
        .filter_map(|a| Some((a.key.as_str(), a.correlation.as_deref()?)))
        .collect();
    let visit = |key: &str| {
        key.rsplit(':')
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    for record in records {
        match &record.event {
            Event::TimerScheduled { key, node, due_ms } => {
                let seen = known.awaits.entry(node.clone()).or_insert(0);
                *seen = (*seen).max(visit(key));
                known.pending.insert(
                    node.clone(),
                    Pending {
                        key: key.clone(),
                        event_type: String::new(),
                        what: Awaits::Timer { due_ms: *due_ms },
                    },
                );
            }
            Event::MessageAwaited {
                key,
                node,
                kind,
                name,
            } => {
                let seen = known.awaits.entry(node.clone()).or_insert(0);
                *seen = (*seen).max(visit(key));
                known.pending.insert(
                    node.clone(),
                    Pending {
                        key: key.clone(),
                        event_type: String::new(),
                        what: Awaits::Message {
                            kind: *kind,
                            name: name.clone(),
                            correlation: correlations.get(key.as_str()).map(|c| c.to_string()),
                        },
                    },
                );
            }
            Event::TimerFired { key, node } => {
                known.fired.insert(node.clone());
                if known.pending.get(node).is_some_and(|p| p.key == *key) {
                    known.pending.remove(node);
                }
            }
            Event::MessageReceived {
                key,
                node,
                thrown_by: Some(_),
                ..
            } if known.pending.get(node).is_some_and(|p| p.key == *key) => {
                known.pending.remove(node);
            }
            Event::MessageReceived {
                thrown_by: Some(_), ..
            } => {}
            Event::MessageReceived {
                key,
                variables,
                thrown_by: None,
                ..
            } => {
                known.inbox.insert(key.clone(), variables.clone());
            }
            _ => {}
        }
    }
}

/// `waits` (model ids, as the service listed them) in the order the native engine arms
/// them: the catches an event-based gateway races are armed in the order of its outgoing
/// flows, where the first of them was listed. (A service with persistence lists the node
/// instances of an instance it read back in no particular order.)
fn race_order(
    process: &crate::bpmn::Process,
    waits: Vec<(String, String)>,
) -> Vec<(String, String)> {
    let topology = Topology::from_process(process);
    let race = |node: &str| -> Option<(String, usize)> {
        topology.incoming(node).find_map(|f| {
            let gateway = topology.node(&f.source)?;
            matches!(
                gateway.kind,
                crate::bpmn::NodeKind::Gateway(crate::bpmn::GatewayKind::EventBased)
            )
            .then(|| {
                let at = topology
                    .outgoing(&gateway.id)
                    .position(|o| o.target == node)
                    .unwrap_or(0);
                (gateway.id.clone(), at)
            })
        })
    };
    let mut keyed: Vec<((usize, usize), (String, String))> = Vec::with_capacity(waits.len());
    let mut first: std::collections::HashMap<String, usize> = Default::default();
    for (i, wait) in waits.into_iter().enumerate() {
        let key = match race(&wait.0) {
            Some((gateway, at)) => (*first.entry(gateway).or_insert(i), at),
            None => (i, 0),
        };
        keyed.push((key, wait));
    }
    keyed.sort_by_key(|(key, _)| *key);
    keyed.into_iter().map(|(_, wait)| wait).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Record;
    use crate::journal::event::Awaited;

    fn record(seq: u64, event: Event) -> Record {
        Record {
            seq,
            at_ms: 0,
            prev: String::new(),
            event,
        }
    }

    /// A resumed run's message wait keeps the correlation value it parked with (a run that
    /// parks again is found by `runs message --key` again), and a delivery journalled
    /// while it was parked waits in the inbox.
    #[test]
    fn a_rebuilt_message_wait_keeps_its_correlation_value() {
        let awaited = |correlation: Option<&str>| Awaited {
            key: "r:Catch_Paid:1".into(),
            node: "Catch_Paid".into(),
            kind: CatchKind::Message,
            name: "PaymentReceived".into(),
            correlation: correlation.map(str::to_string),
        };
        let records = [
            record(
                1,
                Event::MessageAwaited {
                    key: "r:Catch_Paid:1".into(),
                    node: "Catch_Paid".into(),
                    kind: CatchKind::Message,
                    name: "PaymentReceived".into(),
                },
            ),
            record(
                2,
                Event::RunWaiting {
                    reason: "message".into(),
                    questions: Vec::new(),
                    due_ms: None,
                    awaiting: vec![awaited(Some("A-1"))],
                },
            ),
        ];
        let mut known = Known::default();
        rebuild_waits(&mut known, &records);
        let pending = &known.pending["Catch_Paid"];
        assert_eq!(pending.key, "r:Catch_Paid:1");
        match &pending.what {
            Awaits::Message { correlation, .. } => {
                assert_eq!(correlation.as_deref(), Some("A-1"));
            }
            Awaits::Timer { .. } => panic!("a message wait"),
        }
        assert_eq!(known.awaits["Catch_Paid"], 1);

        // Without a correlation key, none.
        let mut records = records.to_vec();
        records[1].event = Event::RunWaiting {
            reason: "message".into(),
            questions: Vec::new(),
            due_ms: None,
            awaiting: vec![awaited(None)],
        };
        let mut known = Known::default();
        rebuild_waits(&mut known, &records);
        assert!(matches!(
            known.pending["Catch_Paid"].what,
            Awaits::Message {
                correlation: None,
                ..
            }
        ));
    }
}
