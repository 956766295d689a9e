//! Flowable as the workflow engine (`workflow_engine: {type: flowable, url, ...}`).
//!
//! The app's process is rewritten ([`augment`]) so that every control point is an
//! external-worker task on the instance's own topic; it is deployed over REST (once per
//! content: the deployment is named after its hash), an instance is started with the run's
//! variables (or one started outside cuga-flo is taken over, [`RunRequest::adopt`]: a
//! worker fleet's), and cuga-flo then works as the instance's only worker ([`rest`]): it
//! acquires the jobs of its topic, asks the harness (through the bridge, journalled by a
//! [`Witness`] as for any engine that owns its tokens), and completes each job with the
//! answer's variables, until the instance has ended. Flowable persists and moves the
//! tokens (joins, sub-processes, terminate ends); it never calls cuga-flo back.
//!
//! BPMN the rewrite keeps for Flowable to run: error and escalation events (a failed
//! task's job is completed with a BPMN error; the throw is journalled where the native
//! engine catches it, and a fired boundary event enters the path where it fires),
//! error and escalation event sub-processes, multi-instance tasks (each instance a job,
//! asked with the native engine's instance variables; cuga-flo evaluates what they run
//! over and their completion condition, and keeps their state in the instance's
//! variables), multi-instance sub-processes ([`multi`]: the control points inside an
//! instance see its variables, a worker in front of each end event ends it), message and
//! signal catches and receive tasks (cuga-flo delivers the run's
//! own throws to the waiting catches' executions), and timers (Flowable's timer jobs).
//!
//! Waiting: when the instance has no job to work and nothing moving, cuga-flo fires the
//! timers that are due by its own clock (it moves their jobs to the executable jobs:
//! Flowable's executor would fire them by Flowable's clock and only on its acquisition
//! cycle), sleeps until one due within the run's wait limit, and otherwise parks the run
//! (`run_waiting`: the earliest due time, the catches waiting in `awaiting`). The resumed
//! run re-attaches and delivers what `runs message` / `runs signal` journalled meanwhile.
//! A call activity's job runs the called app as a child run of cuga-flo's (the witness's);
//! a child that parks leaves the job locked to the run's worker, and once nothing else
//! moves the run parks (`run_waiting`, reason `child run <id>`); the resumed run gets the
//! job back and calls again (the child is resumed, or its end read).
//!
//! Hook actions on Flowable: `continue`, `terminate` (a terminate end event behind the
//! hook), `skip_to` (the token is moved with `change-state`), `skip_node` (the skipped
//! task's job is completed without asking the harness). `swap_nodes`, `remove_node` and
//! `add_node` change the topology, which a deployed definition cannot: `validate`
//! rejects Flowable apps that permit them.

pub mod augment;
mod cluster;
mod multi;
pub mod rest;

pub use cluster::{Cluster, Deployed, Variables};

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Map, Value};

use self::augment::Augmented;
use self::rest::{Activity, Client, Endpoint, Job, RestError};
use super::external::{Prior, RunFailure as _, Witness, witnessed};
use super::pull::{
    self, Asker, Ended, HookMove, Idle, Instance, Look, MultiTask, PullError, Pulled, TaskAnswer,
    call, is_sync_join, user_variables, visit_key,
};
use super::{
    EngineError, RunOutcome, RunRequest, SettingsError, WorkflowEngine, engine_block, engine_url,
    seconds,
};
use crate::app::{EngineConfig, EngineKind};
use crate::bpmn::{LoopKind, NodeKind};
use crate::bridge::{BoxFuture, ControlPoints};
use crate::journal::event::{CatchKind, InstanceVisit, ThrownKind};
use crate::journal::{Event, EventSink};
use crate::secret::Secret;
use crate::semantics::rewrite::{Element, GatewayTag, Role, Thrown, TimerOn};

/// How the adapter reaches Flowable.
#[derive(Debug, Clone)]
pub struct FlowableSettings {
    pub endpoint: Endpoint,
    /// Deploy the augmented model before starting (once per content).
    pub deploy: bool,
    /// The process definition key; the model's process id when `None`.
    pub definition_key: Option<String>,
    /// How long a job stays locked to this worker (a person may answer slowly).
    pub lock: Duration,
}

impl FlowableSettings {
    /// From the app's `workflow_engine:` block (`url` replaced by `url` when given). The
    /// password comes from the variable `password_env` names (else `FLOWABLE_PASSWORD`),
    /// the user from `username` (else `FLOWABLE_USER`).
    pub fn from_config(config: &EngineConfig, url: Option<&str>) -> Result<Self, SettingsError> {
        let config = engine_block(config, EngineKind::Flowable);
        let url = engine_url(config, url, EngineKind::Flowable)?;
        let username = config
            .username
            .as_ref()
            .map(|u| u.value.clone())
            .or_else(|| std::env::var("FLOWABLE_USER").ok());
        let password_var = config
            .password_env
            .as_ref()
            .map_or("FLOWABLE_PASSWORD", |v| v.value.as_str());
        let password = std::env::var(password_var).ok().map(Secret::new);
        if username.is_some() && password.is_none() {
            return Err(SettingsError::NoPassword(password_var.to_string()));
        }
        Ok(FlowableSettings {
            endpoint: Endpoint {
                jobs_url: Endpoint::jobs_url_for(&url),
                url,
                username,
                password,
                connect_timeout: seconds(&config.connect_timeout, Duration::from_secs(10)),
                timeout: seconds(&config.idle_timeout, Duration::from_secs(120)),
            },
            deploy: config.deploy.as_ref().is_none_or(|d| d.value),
            definition_key: config
                .process_definition_key
                .as_ref()
                .map(|k| k.value.clone()),
            lock: Duration::from_secs(3600),
        })
    }
}

/// Runs processes on a Flowable server.
pub struct FlowableEngine {
    settings: FlowableSettings,
}

impl FlowableEngine {
    pub fn new(settings: FlowableSettings) -> Self {
        FlowableEngine { settings }
    }
}

impl WorkflowEngine for FlowableEngine {
    fn name(&self) -> &'static str {
        "flowable"
    }

    fn run(
        &self,
        request: RunRequest,
        control_points: Arc<dyn ControlPoints>,
        events: Arc<dyn EventSink>,
    ) -> BoxFuture<'static, Result<RunOutcome, EngineError>> {
        let settings = self.settings.clone();
        Box::pin(witnessed(
            "flowable",
            request,
            control_points,
            events,
            move |witness, request| run(settings, witness, request),
        ))
    }

    fn reachable(
        &self,
        _process_id: &str,
    ) -> BoxFuture<'static, Result<(), crate::bridge::run::Unreachable>> {
        let settings = self.settings.clone();
        Box::pin(async move {
            (settings.reachable().await).map_err(|e| Box::new(e) as crate::bridge::run::Unreachable)
        })
    }
}

async fn run(
    settings: FlowableSettings,
    witness: Arc<Witness>,
    request: RunRequest,
) -> Result<RunOutcome, PullError> {
    // A call activity whose child run parks waits (its job kept) and parks the run.
    witness.park_children();
    let run = Arc::new(Run::prepare(&settings, &request, witness).await?);
    let ended = pull::drive(&*run).await;
    Ok(run.finish(ended).await)
}

impl FlowableSettings {
    /// Whether Flowable answers at the configured URL (and accepts the credentials): what
    /// `runs resume` checks before it writes anything.
    pub async fn reachable(&self) -> Result<(), PullError> {
        let client = Client::new(self.endpoint.clone())?;
        client
            .ping()
            .await
            .map_err(|e| unreachable(client.url(), e))
    }
}

/// The variable an instance `start` started carries: the id of the run that drives it
/// (a worker fleet takes over only instances without one).
pub const RUN_VARIABLE: &str = "cugaRun";

/// The topic of an instance's external-worker jobs (the rewritten model's
/// `cuga-flo.${execution.processInstanceId}`): every instance its own, whoever started it.
pub fn topic_of(instance: &str) -> String {
    format!("cuga-flo.{instance}")
}

/// The definition to start for `augmented` under `key`, and its deployment: the one of
/// the deployment of exactly this model (deployed now unless it is already; another model
/// under the same key may have been deployed since), or with `deploy` off the latest
/// definition of `key`.
async fn deployed(
    client: &Client,
    settings: &FlowableSettings,
    augmented: &Augmented,
    key: &str,
) -> Result<(String, Option<String>), PullError> {
    let url = client.url().to_string();
    let (definition, deployment) = if settings.deploy {
        let name = deployment_name(key, &augmented.xml);
        let at = |e: RestError| call(format!("Flowable at {url}"), e);
        let deployment = match client.deployment_named(&name).await.map_err(at)? {
            Some(id) => id,
            None => match client
                .deploy(&name, &format!("{key}.bpmn20.xml"), &augmented.xml)
                .await
            {
                Ok(id) => id,
                // Another process deploying the same content at the same moment may win
                // the definition's version (Flowable refuses the second one): its
                // deployment serves as well.
                Err(e) => {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    match client.deployment_named(&name).await.map_err(at)? {
                        Some(id) => id,
                        None => {
                            return Err(call(
                                format!("Flowable refused the deployment of `{key}`"),
                                e,
                            ));
                        }
                    }
                }
            },
        };
        let definition = client
            .definition(key, Some(&deployment))
            .await
            .map_err(at)?;
        (definition, Some(deployment))
    } else {
        let definition = client
            .definition(key, None)
            .await
            .map_err(|e| call(format!("Flowable at {url}"), e))?;
        (definition, None)
    };
    let definition = definition.ok_or_else(|| {
        PullError::Failed(format!(
            "Flowable at {url} has no process definition `{key}`{}",
            if settings.deploy {
                " in cuga-flo's deployment"
            } else {
                " (and `deploy` is off)"
            }
        ))
    })?;
    Ok((definition, deployment))
}

/// The name of the deployment of `xml` under `key`: one deployment per content.
fn deployment_name(key: &str, xml: &str) -> String {
    format!(
        "cuga-flo {key} {:012x}",
        rest::fxhash(xml) & 0xffff_ffff_ffff
    )
}

/// Why the first call to Flowable failed.
fn unreachable(url: &str, source: RestError) -> PullError {
    PullError::Unreachable {
        engine: "Flowable",
        url: url.to_string(),
        source,
    }
}

/// How a job is completed.
enum Completion<'a> {
    /// With these variables.
    Variables(&'a Map<String, Value>),
    /// With a BPMN error of this code (a failed task).
    Error(&'a str),
}

/// What [`Run::wait_or_park`] did.
enum Waited {
    /// A timer fired, or one is due now: look again.
    Moved,
    Parked,
    /// The instance waits for no timer and no message or signal.
    Nothing,
}

/// What an instance with no job to work is doing.
enum Settled {
    Moving,
    Ended,
    /// Waiting at these activities, with nothing queued.
    Stuck(Vec<String>),
    /// Flowable could not continue after a completed job.
    Failed(String),
}

/// One run on Flowable: the instance and what cuga-flo knows of it.
struct Run {
    client: Client,
    witness: Arc<Witness>,
    augmented: Augmented,
    request: RunRequest,
    instance: String,
    topic: String,
    worker: String,
    lock: Duration,
    state: Mutex<Known>,
}

#[derive(Default)]
struct Known {
    /// The waits of each message or signal catch journalled so far.
    awaits: HashMap<String, u64>,
    /// Per multi-instance task, the number of instances of each of its runs so far (as
    /// its step set them), and the last one a resumed run found set.
    multi_counts: HashMap<String, Vec<u64>>,
    multi_latest: HashMap<String, u64>,
    /// The loop counter of each waiting instance of a multi-instance task, by its
    /// execution.
    loop_counters: HashMap<String, u64>,
    /// The error and escalation events of the path whose throw is journalled (Flowable
    /// delivers what they throw; cuga-flo journals it when it sees them entered).
    throws: usize,
    /// The model's nodes entered so far, in order (from Flowable's history).
    path: Vec<String>,
    /// Tasks a hook's `skip_node` sends a token to.
    skips: HashSet<String>,
    /// Set by a hook that terminated the run.
    terminated: Option<String>,
    /// The timers journalled as scheduled and not fired: by Flowable's timer job, the
    /// timer's key and event.
    timers: HashMap<String, (String, String)>,
    /// The visits of each timer event so far (their keys' last number).
    timer_visits: HashMap<String, u64>,
    /// A resumed run's timers journalled as scheduled and not fired, by event, in order:
    /// the keys the instance's timer jobs take again.
    prior_timers: HashMap<String, Vec<String>>,
    /// A resumed run's waits journalled by `run_waiting` and not received, by catch, in
    /// order: the keys the instance's waiting catches take again.
    prior_awaits: HashMap<String, Vec<String>>,
    /// The waits journalled (`message_awaited`) for catches waiting now: by the
    /// subscription's execution and catch, the key.
    awaited: HashMap<(String, String), String>,
    /// The child runs that call activities wait for (each call's job kept locked to
    /// this worker until the run parks; the resumed run calls again).
    children_waiting: Vec<String>,
    /// Joins cuga-flo released (none of their missing branches could still come), and
    /// multi-instance tasks with no instance to run (Flowable passes them without
    /// entering them; the native engine enters them once): where in the path each was
    /// entered, since Flowable's history does not show it.
    released: Vec<(usize, String)>,
    /// Looks in a row that found the instance running at no activity (an execution
    /// between two activities: Flowable's async executor is still carrying out a
    /// continuation, which takes seconds on a loaded machine), and since when.
    between: u32,
    between_since: Option<std::time::Instant>,
}

impl Run {
    /// Augment, then start the instance (deployed unless deployed already) and journal
    /// it; or, for a resumed run, re-attach to the instance its journal names.
    async fn prepare(
        settings: &FlowableSettings,
        request: &RunRequest,
        witness: Arc<Witness>,
    ) -> Result<Run, PullError> {
        let key = settings
            .definition_key
            .clone()
            .unwrap_or_else(|| request.process.id.clone());
        let augmented =
            augment::augment(&request.process, &request.annotations, &key).map_err(|problems| {
                PullError::Unsupported {
                    engine: "Flowable",
                    problems,
                }
            })?;
        let client = Client::new(settings.endpoint.clone())?;
        let url = client.url().to_string();
        client.ping().await.map_err(|e| unreachable(&url, e))?;
        let run = Run {
            client,
            witness: witness.clone(),
            augmented,
            request: request.clone(),
            instance: String::new(),
            worker: format!("cuga-flo-{}", request.run_id),
            topic: String::new(),
            lock: settings.lock,
            state: Mutex::new(Known::default()),
        };
        match (witness.prior(), &request.adopt) {
            (Some(prior), _) => run.attach(settings, &key, prior).await,
            (None, Some(instance)) => run.adopt(settings, &key, instance, &Prior::default()).await,
            (None, None) => run.start(settings, &key).await,
        }
    }

    /// Take over `instance`, started outside cuga-flo from the definition deployed from
    /// this model's content (another definition is another model: refused), and journal
    /// it; then go on as a re-attached run (`prior`: what a resumed run's journal holds).
    async fn adopt(
        mut self,
        settings: &FlowableSettings,
        key: &str,
        instance: &str,
        prior: &Prior,
    ) -> Result<Run, PullError> {
        let url = self.client.url().to_string();
        let (definition, deployment) =
            deployed(&self.client, settings, &self.augmented, key).await?;
        let history = match self.client.historic_instance(instance).await {
            Ok(h) => h,
            Err(e) if e.status == Some(404) => {
                return Err(PullError::Failed(format!(
                    "Flowable at {url} has no instance {instance}"
                )));
            }
            Err(e) => return Err(self.lost(e)),
        };
        let runs = history["processDefinitionId"].as_str().unwrap_or_default();
        // Deployed from this very model (processes deploying at once may have deployed
        // it more than once), or with `deploy` off, the definition the settings name.
        let ours = if deployment.is_some() {
            let name = deployment_name(key, &self.augmented.xml);
            let mut ours = Vec::new();
            for d in (self.client.deployments_named(&name).await).map_err(|e| self.lost(e))? {
                ours.extend(
                    (self.client.definition(key, Some(&d)).await).map_err(|e| self.lost(e))?,
                );
            }
            ours
        } else {
            vec![definition.clone()]
        };
        if !ours.iter().any(|d| d == runs) {
            return Err(PullError::Failed(format!(
                "Flowable instance {instance} runs definition `{runs}`, not one deployed from \
                 this app's model (`{definition}`): cuga-flo serves only the model it deployed"
            )));
        }
        let definition = runs.to_string();
        if !history["endTime"].is_null() {
            return Err(PullError::Failed(format!(
                "Flowable instance {instance} has ended already"
            )));
        }
        self.instance = instance.to_string();
        self.topic = topic_of(instance);
        self.journal_instance(definition, deployment)?;
        self.reattached(prior).await
    }

    /// Deploy (unless deployed already), start the instance and journal it.
    async fn start(mut self, settings: &FlowableSettings, key: &str) -> Result<Run, PullError> {
        let (definition, deployment) =
            deployed(&self.client, settings, &self.augmented, key).await?;
        let client = &self.client;
        // The run that drives it: a worker fleet leaves the instance to it.
        let mut variables = self.request.variables.clone();
        variables.insert(
            RUN_VARIABLE.into(),
            Value::String(self.request.run_id.clone()),
        );
        let instance = client
            .start(&definition, &self.request.run_id, &variables)
            .await
            .map_err(|e| call(format!("Flowable could not start `{key}`"), e))?;
        self.topic = topic_of(&instance);
        self.instance = instance;
        self.journal_instance(definition, deployment)?;
        Ok(self)
    }

    /// Journal the instance the run works (`instance_started`: its definition, deployment,
    /// topic and worker), durable before any job is worked: a resume re-attaches to it.
    fn journal_instance(
        &self,
        definition: String,
        deployment: Option<String>,
    ) -> Result<(), PullError> {
        self.witness.journal(Event::InstanceStarted {
            instance: self.instance.clone(),
            definition,
            deployment,
            topic: Some(self.topic.clone()),
            worker: Some(self.worker.clone()),
        })?;
        Ok(())
    }

    /// Re-attach to the instance a resumed run's journal names: check that it is still
    /// there, give back the jobs the dead process held (locked to its worker for an
    /// hour), and rebuild what cuga-flo knows of it from the journal and the history.
    async fn attach(
        mut self,
        settings: &FlowableSettings,
        key: &str,
        prior: &Prior,
    ) -> Result<Run, PullError> {
        let url = self.client.url().to_string();
        let Some(instance) = &prior.instance else {
            // Stopped between taking over an instance and journalling it.
            if let Some(adopted) = self.request.adopt.clone() {
                return self.adopt(settings, key, &adopted, prior).await;
            }
            // Stopped between starting the instance and journalling it: the instance
            // carries the run id as its business key.
            match self
                .client
                .instance_by_business_key(&self.request.run_id)
                .await
                .map_err(|e| self.lost(e))?
            {
                Some(id) => {
                    self.topic = topic_of(&id);
                    self.instance = id;
                    self.journal_instance(String::new(), None)?;
                }
                None => return self.start(settings, key).await,
            }
            return self.reattached(prior).await;
        };
        self.instance = instance.instance.clone();
        self.topic = instance
            .topic
            .clone()
            .unwrap_or_else(|| topic_of(&self.instance));
        if let Some(worker) = &instance.worker {
            self.worker.clone_from(worker);
        }
        let history = match self.client.historic_instance(&self.instance).await {
            Ok(h) => h,
            Err(e) if e.status == Some(404) => {
                return Err(PullError::Failed(format!(
                    "the run's Flowable instance {} no longer exists at {url} (deleted with \
                     its history)",
                    self.instance
                )));
            }
            Err(e) => return Err(self.lost(e)),
        };
        if !history["endTime"].is_null()
            && let Some(reason) = history["deleteReason"].as_str()
        {
            return Err(PullError::Failed(format!(
                "the run's Flowable instance {} was deleted at {url} while cuga-flo was away: \
                 {reason}",
                self.instance
            )));
        }
        self.reattached(prior).await
    }

    /// The known state of a re-attached instance, its jobs given back.
    async fn reattached(self, prior: &Prior) -> Result<Run, PullError> {
        self.client
            .unacquire_all(&self.worker)
            .await
            .map_err(|e| self.lost(e))?;
        // The number of instances of the multi-instance tasks running (for the records of
        // their instances still to come).
        if self.has_multi() {
            let variables = match self.client.variables(&self.instance).await {
                Ok(variables) => variables,
                // The instance ended while cuga-flo was away: no instance is to come.
                Err(e) if e.status == Some(404) => Map::new(),
                Err(e) => return Err(self.lost(e)),
            };
            let mut known = self.known();
            for role in self.augmented.rewritten.roles.values() {
                if let Role::Multi { node, variable, .. } = role
                    && let Some(count) = variables.get(variable).and_then(Value::as_u64)
                {
                    known.multi_latest.insert(node.clone(), count);
                }
            }
        }
        // The throws the journal holds are not journalled again.
        self.known().throws = prior
            .path
            .iter()
            .filter(|id| self.augmented.rewritten.thrown_at(id).is_some())
            .count();
        let activities = self.refresh_path().await?;
        {
            let mut known = self.known();
            known.released = released_joins(&self.request.process, &prior.path, &known.path);
            known.terminated.clone_from(&prior.terminated);
            // A skip whose task's entry is journalled may have been carried out already:
            // it stands while the task still waits for its job.
            known.skips = prior
                .skips
                .iter()
                .filter(|(task, entered)| {
                    !**entered
                        || activities
                            .iter()
                            .any(|a| &a.activity_id == *task && a.end_time.is_none())
                })
                .map(|(task, _)| task.clone())
                .collect();
        }
        self.refresh_path().await?;
        self.rebuild_waits();
        self.deliver_from_outside().await?;
        Ok(self)
    }

    fn known(&self) -> MutexGuard<'_, Known> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// With no job to work: whether the instance ended, is still moving (Flowable's
    /// async executor continues it after a completed job; wait for it), or is stuck.
    async fn settled(&self) -> Result<Settled, RestError> {
        let mut pause = Duration::from_millis(10);
        let mut quiet = 0;
        loop {
            if !self.client.historic_instance(&self.instance).await?["endTime"].is_null() {
                return Ok(Settled::Ended);
            }
            if self.client.pending_jobs(&self.instance).await? > 0 {
                quiet = 0;
            } else {
                quiet += 1;
            }
            // A completion Flowable accepted but could not carry out.
            let failed = self.client.failed_jobs(&self.instance).await?;
            if !failed.is_empty() {
                return Ok(Settled::Failed(failed.join("; ")));
            }
            // New jobs for this worker (unless the run is terminating)?
            if self.known().terminated.is_none()
                && self.client.has_jobs(&self.topic, &self.instance).await?
            {
                return Ok(Settled::Moving);
            }
            // Nothing queued, twice with a pause in between: nothing will move.
            if quiet >= 2 {
                let at: BTreeSet<String> = self
                    .client
                    .waiting_at(&self.instance)
                    .await?
                    .into_iter()
                    .collect();
                return Ok(Settled::Stuck(at.into_iter().collect()));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    fn lost(&self, e: RestError) -> PullError {
        PullError::at("Flowable", self.client.url(), e)
    }

    /// The records of the run's journal before this resume.
    fn prior_records(&self) -> &[crate::journal::Record] {
        self.request
            .resume
            .as_deref()
            .map_or(&[][..], |r| r.records.as_slice())
    }

    /// From a resumed run's journal: the visits of each timer and catch so far, the
    /// timers scheduled and not fired, the waits awaited and not received.
    fn rebuild_waits(&self) {
        let mut known = self.known();
        let mut scheduled: Vec<(String, String)> = Vec::new();
        let mut awaited: Vec<(String, String)> = Vec::new();
        for record in self.prior_records() {
            match &record.event {
                Event::TimerScheduled { key, node, .. } => {
                    *known.timer_visits.entry(node.clone()).or_insert(0) += 1;
                    scheduled.push((key.clone(), node.clone()));
                }
                Event::TimerFired { key, .. } => scheduled.retain(|(k, _)| k != key),
                Event::MessageAwaited { key, node, .. } => {
                    *known.awaits.entry(node.clone()).or_insert(0) += 1;
                    awaited.push((key.clone(), node.clone()));
                }
                Event::MessageReceived { key, .. } => awaited.retain(|(k, _)| k != key),
                _ => {}
            }
        }
        for (key, node) in scheduled {
            known.prior_timers.entry(node).or_default().push(key);
        }
        for (key, node) in awaited {
            known.prior_awaits.entry(node).or_default().push(key);
        }
    }

    /// Deliver to the instance what `runs message` and `runs signal` journalled for the
    /// run since it parked (each to the catch that waited with its key, with its
    /// variables), unless that catch waits no more (delivered before a crash).
    async fn deliver_from_outside(&self) -> Result<(), PullError> {
        let records = self.prior_records();
        let since = records
            .iter()
            .rposition(|r| matches!(r.event, Event::RunWaiting { .. }))
            .map_or(0, |i| i + 1);
        for record in &records[since..] {
            let Event::MessageReceived {
                node,
                kind,
                name,
                variables,
                thrown_by: None,
                ..
            } = &record.event
            else {
                continue;
            };
            let waiting = self
                .client
                .subscriptions(&self.instance, *kind, name)
                .await
                .map_err(|e| self.lost(e))?;
            let Some((execution, _)) = waiting.into_iter().find(|(_, c)| c == node) else {
                tracing::debug!("`{node}` waits for `{name}` no more: delivered already");
                continue;
            };
            if !variables.is_empty() {
                self.client
                    .set_variables(&self.instance, variables)
                    .await
                    .map_err(|e| self.lost(e))?;
            }
            self.client
                .deliver(&execution, *kind, name)
                .await
                .map_err(|e| {
                    PullError::Failed(format!(
                        "Flowable could not deliver the {} `{name}` to `{node}`: {e}",
                        kind.as_str()
                    ))
                })?;
            self.quiet().await?;
        }
        Ok(())
    }

    /// How long the run waits in-process for a timer (`start --max-wait`).
    fn wait_limit_ms(&self) -> u64 {
        self.request
            .annotations
            .max_wait_secs
            .unwrap_or(crate::engine::native::DEFAULT_WAIT_LIMIT_SECS)
            .saturating_mul(1000)
    }

    /// Journal the timers that started since the last look (`timer_scheduled`), and
    /// the ones Flowable fired itself meanwhile (`timer_fired`).
    async fn track_timers(&self, timers: &[rest::TimerJob]) -> Result<(), PullError> {
        let gone: Vec<(String, String, String)> = {
            let known = self.known();
            known
                .timers
                .iter()
                .filter(|(job, _)| !timers.iter().any(|t| &t.id == *job))
                .map(|(job, (key, node))| (job.clone(), key.clone(), node.clone()))
                .collect()
        };
        if !gone.is_empty() {
            let activities = self
                .client
                .activities(&self.instance)
                .await
                .map_err(|e| self.lost(e))?;
            for (job, key, node) in gone {
                self.known().timers.remove(&job);
                // Fired (by Flowable's own executor) when its event went on; a timer
                // whose activity ended first was cancelled.
                let fired = activities
                    .iter()
                    .any(|a| a.activity_id == node && a.end_time.is_some())
                    && self.known().path.iter().any(|n| n == &node);
                if fired {
                    self.witness.journal(Event::TimerFired { key, node })?;
                }
            }
        }
        for timer in timers {
            if self.known().timers.contains_key(&timer.id) {
                continue;
            }
            let node = timer.element_id.clone();
            let prior = {
                let mut known = self.known();
                known
                    .prior_timers
                    .get_mut(&node)
                    .filter(|keys| !keys.is_empty())
                    .map(|keys| keys.remove(0))
            };
            let key = match prior {
                Some(key) => key,
                None => {
                    let visit = {
                        let mut known = self.known();
                        let visit = known.timer_visits.entry(node.clone()).or_insert(0);
                        *visit += 1;
                        *visit
                    };
                    let key = format!("{}:{node}:{visit}", self.request.run_id);
                    self.witness.journal(Event::TimerScheduled {
                        key: key.clone(),
                        node: node.clone(),
                        due_ms: timer.due_ms.unwrap_or_else(crate::clock::now_ms),
                    })?;
                    key
                }
            };
            self.known().timers.insert(timer.id.clone(), (key, node));
        }
        // A resumed run's timers whose job is gone fired while cuga-flo was away (or
        // just before it stopped) when their event went on.
        let left: Vec<(String, Vec<String>)> = self.known().prior_timers.drain().collect();
        for (node, keys) in left {
            if self.known().path.iter().any(|n| n == &node) {
                for key in keys {
                    self.witness.journal(Event::TimerFired {
                        key,
                        node: node.clone(),
                    })?;
                }
            }
        }
        Ok(())
    }

    /// The instance has no job to work and nothing moving: fire the timers that are due
    /// (cuga-flo's clock decides, as for the native engine: Flowable's executor would
    /// fire them by its own clock, and only every few seconds), wait in-process for one
    /// due within the run's wait limit, or park the run (`run_waiting`) with the timer
    /// due later and the messages and signals its catches wait for.
    async fn wait_or_park(&self) -> Result<Waited, PullError> {
        let timers = self
            .client
            .timers(&self.instance)
            .await
            .map_err(|e| self.lost(e))?;
        let _ = self.refresh_path().await?;
        self.track_timers(&timers).await?;
        let now = crate::clock::now_ms();
        let due: Vec<&rest::TimerJob> = timers
            .iter()
            .filter(|t| t.due_ms.is_none_or(|d| d <= now))
            .collect();
        if !due.is_empty() {
            for timer in due {
                let Some((key, node)) = self.known().timers.remove(&timer.id) else {
                    continue;
                };
                // Journalled once moved: a run stopped before finds the job still there
                // under its key, one stopped after finds it gone and its event gone on.
                tracing::debug!("firing timer {node} ({key})");
                self.client
                    .fire_timer(&timer.id)
                    .await
                    .map_err(|e| self.lost(e))?;
                self.witness.journal(Event::TimerFired { key, node })?;
            }
            self.quiet().await?;
            return Ok(Waited::Moved);
        }
        let next = timers.iter().filter_map(|t| t.due_ms).min();
        if let Some(next) = next
            && next.saturating_sub(now) <= self.wait_limit_ms()
        {
            self.show_awaiting().await?;
            tokio::time::sleep(Duration::from_millis(next.saturating_sub(now))).await;
            return Ok(Waited::Moved);
        }
        // The catches waiting are entered before their waits are journalled.
        let path = self.known().path.clone();
        self.witness.entered(&path, Vec::new());
        let awaiting = self.awaiting().await?;
        let children = self.known().children_waiting.clone();
        if next.is_none() && awaiting.is_empty() && children.is_empty() {
            return Ok(Waited::Nothing);
        }
        // As on the native engine: a timer first, then messages, then child runs (a
        // parent waiting for a child is due once the child has finished).
        let reason = if next.is_some() {
            "timer".to_string()
        } else if !awaiting.is_empty() {
            "message".to_string()
        } else {
            format!("child run {}", children.join(", "))
        };
        self.witness.journal(Event::RunWaiting {
            reason,
            questions: Vec::new(),
            due_ms: next,
            awaiting,
        })?;
        Ok(Waited::Parked)
    }

    /// Show whoever may stop the run while it waits for a timer what it waits for.
    async fn show_awaiting(&self) -> Result<(), PullError> {
        if let Some(shown) = &self.request.awaiting {
            let awaiting = self.awaiting().await?;
            if let Ok(mut shown) = shown.lock() {
                *shown = awaiting;
            }
        }
        Ok(())
    }

    /// The messages and signals the instance's catches wait for now, each wait journalled
    /// (`message_awaited`) once.
    async fn awaiting(&self) -> Result<Vec<crate::journal::event::Awaited>, PullError> {
        let waiting = self
            .client
            .all_subscriptions(&self.instance)
            .await
            .map_err(|e| self.lost(e))?;
        let mut out = Vec::new();
        // Read once, when a message with a correlation key waits.
        let mut variables: Option<Map<String, Value>> = None;
        for (execution, catch, kind, name) in waiting {
            // A message with a correlation key waits under the key's value (read in the
            // instance's variables, as the native engine reads it when the wait begins):
            // `runs message --key` finds the run by it.
            let event_ref = self
                .request
                .process
                .node(&catch)
                .and_then(|n| n.event_ref.as_ref());
            if kind == CatchKind::Message
                && event_ref.is_some_and(|r| r.correlation_key.is_some())
                && variables.is_none()
            {
                let all = self
                    .client
                    .variables(&self.instance)
                    .await
                    .map_err(|e| self.lost(e))?;
                variables = Some(super::pull::user_variables(all));
            }
            let correlation = crate::semantics::events::correlation_over(
                event_ref,
                kind,
                variables.as_ref().unwrap_or(&Map::new()),
            )
            .map_err(|why| {
                PullError::Failed(format!("{} `{name}` at `{catch}`: {why}", kind.as_str()))
            })?;
            let place = (execution, catch.clone());
            let known_key = self.known().awaited.get(&place).cloned();
            let key = match known_key {
                Some(key) => key,
                None => {
                    let prior = {
                        let mut known = self.known();
                        known
                            .prior_awaits
                            .get_mut(&catch)
                            .filter(|keys| !keys.is_empty())
                            .map(|keys| keys.remove(0))
                    };
                    let key = match prior {
                        Some(key) => key,
                        None => {
                            let key = {
                                let mut known = self.known();
                                let visit = known.awaits.entry(catch.clone()).or_insert(0);
                                *visit += 1;
                                format!("{}:{catch}:{visit}", self.request.run_id)
                            };
                            self.witness.journal(Event::MessageAwaited {
                                key: key.clone(),
                                node: catch.clone(),
                                kind,
                                name: name.clone(),
                            })?;
                            key
                        }
                    };
                    self.known().awaited.insert(place, key.clone());
                    key
                }
            };
            out.push(crate::journal::event::Awaited {
                key,
                node: catch,
                kind,
                name,
                correlation,
            });
        }
        Ok(out)
    }

    /// Read the model's nodes entered so far from Flowable's history. A synchronising
    /// join is recorded once per arriving token; it counts as entered once, when it
    /// fires: the arrival whose execution goes on past it. A boundary event is recorded
    /// when its activity starts (it waits there); it counts as entered when it fires,
    /// where its execution goes on (just before the next node on it).
    async fn refresh_path(&self) -> Result<Vec<Activity>, PullError> {
        let activities = self
            .client
            .activities(&self.instance)
            .await
            .map_err(|e| self.lost(e))?;
        let process = &self.request.process;
        let same_execution = |a: &Activity, later: &Activity| {
            later.execution_id.is_some() && later.execution_id == a.execution_id
        };
        let mut path: Vec<(String, Option<InstanceVisit>)> = Vec::new();
        // Fired boundary events, by the index of the activity they precede.
        let mut fired_at: HashMap<usize, Vec<String>> = HashMap::new();
        // Per multi-instance task: its run (the entries of its step so far) and the
        // instances entered since.
        let mut runs: HashMap<&str, (usize, u64)> = HashMap::new();
        let mut loop_counters = HashMap::new();
        for (i, a) in activities.iter().enumerate() {
            if a.activity_type.as_deref() == Some("sequenceFlow") {
                continue;
            }
            if let Some(boundaries) = fired_at.remove(&i) {
                path.extend(boundaries.into_iter().map(|b| (b, None)));
            }
            if let Some(Role::Multi { node, .. }) =
                self.augmented.rewritten.roles.get(&a.activity_id)
            {
                let run = runs.entry(node.as_str()).or_insert((0, 0));
                *run = (run.0 + 1, 0);
                continue;
            }
            let Some(node) = self
                .augmented
                .rewritten
                .original(&a.activity_id)
                .and_then(|id| process.node(id))
            else {
                continue;
            };
            if is_sync_join(process, node) {
                let fired = activities[i + 1..]
                    .iter()
                    .any(|later| same_execution(a, later));
                if !fired {
                    continue;
                }
            }
            // A catch after an event-based gateway waits from the gateway on, winner or
            // not: it counts when the token leaves it (along one of its flows).
            let raced = self.races(&node.id);
            if raced
                && !activities[i + 1..].iter().any(|later| {
                    later.activity_type.as_deref() == Some("sequenceFlow")
                        && process
                            .flows
                            .iter()
                            .any(|f| f.source == node.id && f.id == later.activity_id)
                })
            {
                continue;
            }
            if raced || matches!(node.kind, NodeKind::BoundaryEvent { .. }) {
                let next = activities[i + 1..].iter().position(|later| {
                    later.activity_type.as_deref() != Some("sequenceFlow")
                        && same_execution(a, later)
                });
                if let Some(next) = next {
                    fired_at
                        .entry(i + 1 + next)
                        .or_default()
                        .push(node.id.clone());
                }
                continue;
            }
            let visit = runs.get_mut(node.id.as_str()).map(|(run, entered)| {
                *entered += 1;
                (*run, *entered)
            });
            let visit = visit.map(|(run, loop_counter)| {
                if a.end_time.is_none()
                    && let Some(execution) = &a.execution_id
                {
                    loop_counters.insert(execution.clone(), loop_counter);
                }
                InstanceVisit {
                    loop_counter,
                    instances: self.instances_of(&node.id, run),
                }
            });
            path.push((node.id.clone(), visit));
        }
        let mut known = self.known();
        for (at, node) in &known.released {
            // A released join, or a multi-instance task entered with no instance to run.
            let visit = self.multi_of(node).map(|_| InstanceVisit {
                loop_counter: 0,
                instances: 0,
            });
            path.insert((*at).min(path.len()), (node.clone(), visit));
        }
        let (path, visits): (Vec<String>, Vec<Option<InstanceVisit>>) = path.into_iter().unzip();
        self.witness.visits(&path, visits);
        known.loop_counters = loop_counters;
        known.path = path;
        let known = &mut *known;
        pull::journal_throws(
            &self.witness,
            &self.request,
            &self.augmented.rewritten,
            &known.path,
            &mut known.throws,
        )?;
        Ok(activities)
    }

    /// The idempotency key of `job`: its activity's place among the history's entries of
    /// the same control point.
    fn key_of(&self, job: &Job, activities: &[Activity]) -> String {
        let entries: Vec<&str> = activities
            .iter()
            .filter(|a| a.activity_type.as_deref() != Some("sequenceFlow"))
            .map(|a| a.activity_id.as_str())
            .collect();
        let own = activities
            .iter()
            .filter(|a| a.activity_type.as_deref() != Some("sequenceFlow"))
            .enumerate()
            .filter(|(_, a)| {
                a.activity_id == job.element_id
                    && a.end_time.is_none()
                    && (job.execution_id.is_none() || a.execution_id == job.execution_id)
            })
            .map(|(i, _)| i)
            .last();
        visit_key(
            &self.request.run_id,
            &self.augmented.rewritten,
            &entries,
            own,
            &job.element_id,
        )
    }

    /// Of `jobs`, those whose answer the journal holds; the others are given back.
    async fn journalled_only(&self, jobs: Vec<Job>) -> Result<Vec<Job>, PullError> {
        if jobs.is_empty() {
            return Ok(jobs);
        }
        let activities = self.refresh_path().await?;
        let mut kept = Vec::new();
        for job in jobs {
            let key = self.key_of(&job, &activities);
            let journalled = self
                .witness
                .prior()
                .is_some_and(|p| p.answer(&key).is_some());
            if journalled {
                kept.push(job);
            } else if let Err(e) = self.client.unacquire(&job.id, &self.worker).await {
                // The instance is ending: Flowable may be removing the job meanwhile (it
                // answers 500 for a job whose end it is carrying out). Nothing is lost.
                if e.is_unreachable() {
                    return Err(self.lost(e));
                }
                tracing::debug!("job {} left as the instance ends: {e}", job.id);
            }
        }
        Ok(kept)
    }

    fn all_joins(&self, at: &[String]) -> bool {
        let process = &self.request.process;
        at.iter()
            .all(|id| process.node(id).is_some_and(|n| is_sync_join(process, n)))
    }

    /// Fire joins that wait for branches no token can bring any more (a hook skipped or
    /// ended them), as the native engine does: the waiting token is moved to where the
    /// join's outgoing flows lead, and the join is recorded as entered.
    async fn release(&self, joins: &[String]) -> Result<(), PullError> {
        let _ = self.refresh_path().await?;
        for join in joins {
            let targets: Vec<String> = self
                .request
                .process
                .flows
                .iter()
                .filter(|f| &f.source == join)
                .map(|f| self.augmented.rewritten.arrival(f))
                .collect();
            if targets.is_empty() {
                return Err(PullError::Failed(format!(
                    "join `{join}` has no outgoing flow"
                )));
            }
            {
                let mut known = self.known();
                let at = known.path.len();
                known.released.push((at, join.clone()));
            }
            tracing::debug!("releasing join {join} towards {}", targets.join(", "));
            self.client
                .move_tokens(&self.instance, std::slice::from_ref(join), &targets)
                .await
                .map_err(|e| call(format!("Flowable could not release join `{join}`"), e))?;
        }
        Ok(())
    }

    /// Answer one job through the harness and complete it.
    async fn work_job(&self, job: Job) -> Result<(), PullError> {
        let role = self
            .augmented
            .rewritten
            .roles
            .get(&job.element_id)
            .cloned()
            .ok_or_else(|| {
                PullError::Failed(format!(
                    "Flowable handed over a job at `{}`, which is no control point of this run",
                    job.element_id
                ))
            })?;
        let variables = match &job.variables {
            Some(vars) => rest::from_rest(vars),
            None => self
                .client
                .variables(&self.instance)
                .await
                .map_err(|e| self.lost(e))?,
        };
        // cuga-flo's own variables (a multi-instance task's) before they are left out.
        let raw = variables.clone();
        let variables = user_variables(variables);
        // The job's activity has started since the last look at the history, and may be
        // the entry that spends the step budget: then it is not asked about.
        let activities = self.refresh_path().await?;
        if let Some(why) = self.over_budget() {
            return Err(why);
        }
        let key = self.key_of(&job, &activities);
        // A job inside an instance of a multi-instance sub-process sees that instance.
        let within = match multi::enclosing(&self.augmented.rewritten, &job.element_id) {
            Some((node, _)) => match self.within(&job, node, &raw).await? {
                Some(within) => Some(within),
                // The completion condition cancelled the instance meanwhile.
                None => return Ok(()),
            },
            None => None,
        };
        let inside = within.is_some();
        let variables = within.as_ref().map_or(variables, multi::Within::variables);
        let worked = self.work_as(job, role, key, raw, variables, within).await;
        if inside && worked.is_ok() {
            // What the instance's next job reads (its state, a routing variable) is set
            // when Flowable continues this one: before another instance's job is worked.
            self.quiet().await?;
        }
        worked
    }

    /// Work `job` as what its worker stands for.
    async fn work_as(
        &self,
        job: Job,
        role: Role,
        key: String,
        raw: Map<String, Value>,
        variables: Map<String, Value>,
        within: Option<multi::Within>,
    ) -> Result<(), PullError> {
        match role {
            Role::Task(task) => self.task(&job, &task, &key, raw, within).await,
            Role::InstanceEnd { node, .. } => {
                let within = within.ok_or_else(|| {
                    PullError::Failed(format!(
                        "Flowable's job at `{}` is in no instance of `{node}`",
                        job.element_id
                    ))
                })?;
                // The token goes on to the end event: it is entered before the instance
                // ends (and its output collection is set), as the native engine records it.
                // (Nothing else moves meanwhile: every job inside an instance is worked
                // once the instance is quiet.)
                let end = (self.augmented.rewritten.flows.iter())
                    .find(|f| f.source == job.element_id)
                    .map(|f| f.target.clone());
                let mut path = self.known().path.clone();
                if let Some(end) = end
                    && (path.len() as u64) < self.request.annotations.step_budget
                {
                    path.push(end);
                    self.witness.entered(&path, Vec::new());
                }
                let set = within.end(&self.witness)?;
                self.complete(&job, &set).await
            }
            Role::Multi { node, .. } => self.multi_start(&job, &node, variables).await,
            Role::Send { node, kind, name } => self.send(&job, &node, kind, &name).await,
            Role::Uncaught { node, code } => {
                // The end event's worker: the run fails here, as on the native engine.
                let path = self.known().path.clone();
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
            Role::Route { gateway, variable } => {
                self.route(&job, &gateway, &key, &variable, variables).await
            }
            Role::Hook {
                hook,
                flow,
                variable,
            } => {
                self.hook(&job, &hook, &key, &flow, &variable, variables)
                    .await
            }
        }
    }

    fn asker(&self) -> Asker<'_> {
        Asker {
            witness: &self.witness,
            run_id: &self.request.run_id,
            process_key: &self.request.process_key,
            process: &self.request.process,
        }
    }

    /// Complete `job` with `variables`.
    async fn complete(&self, job: &Job, variables: &Map<String, Value>) -> Result<(), PullError> {
        self.finish_job(job, Completion::Variables(variables)).await
    }

    /// Complete `job` as `how` says: the one place a job's answer reaches Flowable.
    async fn finish_job(&self, job: &Job, how: Completion<'_>) -> Result<(), PullError> {
        // The answer is journalled; a run stopped here completes the job when resumed.
        crate::crash::point("engine.before_complete");
        let done = match how {
            Completion::Variables(variables) => {
                self.client.complete(&job.id, &self.worker, variables).await
            }
            Completion::Error(code) => self.client.bpmn_error(&job.id, &self.worker, code).await,
        };
        match done {
            // The job is gone: Flowable ended its execution meanwhile (a multi-instance
            // activity whose completion condition held cancels its other instances).
            Err(e) if e.status == Some(404) => {
                tracing::debug!(
                    "job {} ended by Flowable before it was completed: {e}",
                    job.id
                );
            }
            done => done.map_err(|e| self.lost(e))?,
        }
        crate::crash::point("engine.after_complete");
        Ok(())
    }

    /// A task's job (`raw`: the variables with cuga-flo's own): its answer completes it,
    /// or raises a BPMN error.
    async fn task(
        &self,
        job: &Job,
        task: &str,
        key: &str,
        raw: Map<String, Value>,
        within: Option<multi::Within>,
    ) -> Result<(), PullError> {
        if self.known().skips.remove(task) {
            // Entered and recorded as skipped (the witness journals it from the path).
            return self.complete(job, &Map::new()).await;
        }
        let path = self.known().path.clone();
        // A resumed run whose answer is journalled journalled its throw too.
        let fresh = self.witness.prior().is_none_or(|p| p.answer(key).is_none());
        let multi = self.multi_of(task);
        let (variables, instance) = match (&multi, &within) {
            // A task inside an instance of a multi-instance sub-process.
            (_, Some(within)) => (within.variables(), None),
            (Some(m), None) => {
                // What the instances completed before wrote (their outputs, the count)
                // is set when Flowable continues their completion: wait for it, then
                // read it.
                self.quiet().await?;
                // An instance the completion condition cancelled meanwhile is not asked.
                if let Some(execution) = &job.execution_id
                    && !self
                        .client
                        .execution_exists(execution)
                        .await
                        .map_err(|e| self.lost(e))?
                {
                    return Ok(());
                }
                let raw = self
                    .client
                    .variables(&self.instance)
                    .await
                    .map_err(|e| self.lost(e))?;
                let instance = self.instance(job, task, m, &raw)?;
                let mut variables = strip_engine_locals(user_variables(raw));
                variables.extend(instance.locals.clone());
                (variables, Some(instance))
            }
            (None, None) => (user_variables(raw), None),
        };
        // A task inside a sub-process instance is asked as the instance's, as on the
        // native engine.
        let visit = instance
            .as_ref()
            .or(within.as_ref().map(|w| &w.instance))
            .map(Instance::visit);
        let answer = match self
            .asker()
            .answer_task(task, key, variables.clone(), &path, visit)
            .await
        {
            Ok(answer) => answer,
            // A call activity whose child run parked: its job waits (locked to this
            // worker) and the run parks once nothing else moves.
            Err(why) => match self.witness.take_waiting_child(key) {
                Some(child) => {
                    tracing::debug!("call activity `{task}` waits for child run {child}");
                    self.known().children_waiting.push(child);
                    return Ok(());
                }
                None => return Err(why),
            },
        };
        match answer {
            TaskAnswer::Done(writes) => {
                let set = match (&multi, instance, within) {
                    (_, _, Some(within)) => within.wrote(writes),
                    (Some(m), Some(instance), None) => {
                        m.instance_done(&self.witness, task, instance, variables, writes)?
                    }
                    _ => writes,
                };
                self.complete(job, &set).await
            }
            TaskAnswer::Raised { code, error } => {
                pull::task_raised(
                    &self.witness,
                    &self.request.process,
                    task,
                    fresh,
                    &code,
                    &error,
                )?;
                // Flowable takes the token to the boundary event that catches it, once
                // what earlier completions continue has run (the error interrupts the
                // activity; a continuation running beside it could complete it instead).
                self.quiet().await?;
                self.finish_job(job, Completion::Error(&code)).await?;
                self.quiet().await
            }
        }
    }

    /// Wait until Flowable's async executor has run what the instance's completed jobs
    /// continue (bounded: a job that keeps failing is reported by [`Self::settled`]).
    async fn quiet(&self) -> Result<(), PullError> {
        let mut pause = Duration::from_millis(10);
        for _ in 0..100 {
            if self
                .client
                .pending_jobs(&self.instance)
                .await
                .map_err(|e| self.lost(e))?
                == 0
            {
                return Ok(());
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
        Ok(())
    }

    /// A message or signal throw or end event: deliver it to the instance's catches
    /// waiting for it, as the native engine does (a message to the one that started
    /// waiting first, a signal to all; nothing waiting: it passes), each wait and its
    /// delivery journalled; then the thrower goes on.
    async fn send(
        &self,
        job: &Job,
        node: &str,
        kind: CatchKind,
        name: &str,
    ) -> Result<(), PullError> {
        // The catches other branches reach have started waiting.
        self.quiet().await?;
        let mut waiting = self
            .client
            .subscriptions(&self.instance, kind, name)
            .await
            .map_err(|e| self.lost(e))?;
        if kind == CatchKind::Message {
            waiting.truncate(1);
        }
        let path = self.known().path.clone();
        self.witness.entered(&path, Vec::new());
        let catches: Vec<String> = waiting.iter().map(|(_, c)| c.clone()).collect();
        let interrupted = pull::interrupts_thrower(&self.request.process, node, &catches);
        for (execution, catch) in waiting {
            let key = {
                let mut known = self.known();
                let visit = known.awaits.entry(catch.clone()).or_insert(0);
                *visit += 1;
                format!("{}:{catch}:{visit}", self.request.run_id)
            };
            self.witness.journal(Event::MessageAwaited {
                key: key.clone(),
                node: catch.clone(),
                kind,
                name: name.to_string(),
            })?;
            self.witness.journal(Event::MessageReceived {
                delivery: None,
                key,
                node: catch.clone(),
                kind,
                name: name.to_string(),
                variables: Map::new(),
                thrown_by: Some(node.to_string()),
                taint: None,
            })?;
            self.client
                .deliver(&execution, kind, name)
                .await
                .map_err(|e| {
                    PullError::Failed(format!(
                        "Flowable could not deliver the {} `{name}` to `{catch}`: {e}",
                        kind.as_str()
                    ))
                })?;
        }
        if interrupted {
            // An interrupting event sub-process it started ended the thrower's job.
            return Ok(());
        }
        self.complete(job, &Map::new()).await
    }

    /// Multi-instance task `task`'s loop characteristics and its step's variable.
    fn multi_of(&self, task: &str) -> Option<MultiTask> {
        MultiTask::of(&self.augmented.rewritten, &self.request.process, task)
    }

    /// Whether `node` is a catch an event-based gateway races (Flowable's).
    fn races(&self, node: &str) -> bool {
        let process = &self.request.process;
        // A catch event, or a receive task (which waits as one).
        self.augmented.rewritten.nodes.iter().any(|n| {
            n.id == node
                && matches!(
                    n.element,
                    Element::Catch { .. }
                        | Element::Timer {
                            on: TimerOn::Catch,
                            ..
                        }
                )
        }) && process.flows.iter().any(|f| {
            f.target == node
                && self.augmented.rewritten.nodes.iter().any(|n| {
                    n.id == f.source && n.element == Element::Gateway(GatewayTag::EventBased)
                })
        })
    }

    fn has_timers(&self) -> bool {
        self.augmented
            .rewritten
            .nodes
            .iter()
            .any(|n| matches!(n.element, Element::Timer { .. }))
    }

    fn has_multi(&self) -> bool {
        self.augmented
            .rewritten
            .roles
            .values()
            .any(|r| matches!(r, Role::Multi { .. }))
    }

    /// How many instances run `run` (1, 2, ...) of multi-instance task `node` had.
    fn instances_of(&self, node: &str, run: usize) -> u64 {
        let known = self.known();
        known
            .multi_counts
            .get(node)
            .and_then(|counts| counts.get(run.saturating_sub(1)))
            .or_else(|| known.multi_latest.get(node))
            .copied()
            .unwrap_or(0)
    }

    /// The step in front of multi-instance task `node`: evaluate what it runs over (as
    /// the native engine does) and set up its instances' variables.
    async fn multi_start(
        &self,
        job: &Job,
        node: &str,
        variables: Map<String, Value>,
    ) -> Result<(), PullError> {
        let multi = self.multi_of(node).ok_or_else(|| {
            PullError::Failed(format!("`{node}` is no multi-instance task of this run"))
        })?;
        let (mut set, count) = multi.start(node, &variables)?;
        if self
            .request
            .process
            .node(node)
            .is_some_and(|n| matches!(n.kind, NodeKind::SubProcess(_)))
        {
            set.extend(multi::start_state(&multi.variable, count));
        }
        self.known()
            .multi_counts
            .entry(node.to_string())
            .or_default()
            .push(count);
        if count == 0 {
            // Flowable passes an activity with no instance to run without entering it;
            // the native engine enters it once.
            {
                let mut known = self.known();
                let at = known.path.len();
                known.released.push((at, node.to_string()));
            }
            let _ = self.refresh_path().await?;
            let path = self.known().path.clone();
            self.witness.entered(&path, Vec::new());
            set.extend(multi.no_instance(&self.witness, node)?);
        }
        self.complete(job, &set).await
    }

    /// The instance of multi-instance sub-process `node` that `job` (whose variables are
    /// `job_variables`) runs in, once what earlier completions continue has run; `None`
    /// when the completion condition cancelled it.
    async fn within(
        &self,
        job: &Job,
        node: String,
        job_variables: &Map<String, Value>,
    ) -> Result<Option<multi::Within>, PullError> {
        self.quiet().await?;
        let Some(execution) = &job.execution_id else {
            return Err(PullError::Failed(format!(
                "Flowable did not say which execution of `{node}` runs the job at `{}`",
                job.element_id
            )));
        };
        if !self
            .client
            .execution_exists(execution)
            .await
            .map_err(|e| self.lost(e))?
        {
            return Ok(None);
        }
        // Flowable's loop counter (from 0), on the instance's execution around the job's.
        let flowable_counter = match job_variables.get("loopCounter").and_then(Value::as_u64) {
            Some(counter) => Some(counter),
            None => self
                .client
                .execution_variable(execution, "loopCounter")
                .await
                .map_err(|e| self.lost(e))?
                .as_ref()
                .and_then(Value::as_u64),
        };
        let counter = flowable_counter.ok_or_else(|| {
            PullError::Failed(format!(
                "Flowable does not show which instance of `{node}` the job at `{}` is in",
                job.element_id
            ))
        })?;
        let multi = self.multi_of(&node).ok_or_else(|| {
            PullError::Failed(format!(
                "`{node}` is no multi-instance activity of this run"
            ))
        })?;
        let raw = self
            .client
            .variables(&self.instance)
            .await
            .map_err(|e| self.lost(e))?;
        Ok(Some(multi::Within::new(multi, node, &raw, counter + 1)))
    }

    /// The instance of multi-instance task `task` that `job` is.
    fn instance(
        &self,
        job: &Job,
        task: &str,
        multi: &MultiTask,
        raw: &Map<String, Value>,
    ) -> Result<Instance, PullError> {
        let loop_counter = job
            .execution_id
            .as_ref()
            .and_then(|e| self.known().loop_counters.get(e).copied())
            .ok_or_else(|| {
                PullError::Failed(format!(
                    "Flowable's history does not show which instance of `{task}` waits"
                ))
            })?;
        Ok(multi.instance(raw, loop_counter))
    }

    async fn route(
        &self,
        job: &Job,
        gateway: &str,
        key: &str,
        variable: &str,
        variables: Map<String, Value>,
    ) -> Result<(), PullError> {
        let path = self.known().path.clone();
        let chosen = self.asker().route(gateway, key, variables, &path).await?;
        let mut set = Map::new();
        set.insert(variable.to_string(), Value::String(chosen));
        self.complete(job, &set).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn hook(
        &self,
        job: &Job,
        hook: &str,
        key: &str,
        flow: &str,
        variable: &str,
        variables: Map<String, Value>,
    ) -> Result<(), PullError> {
        let path = self.known().path.clone();
        let move_ = self
            .asker()
            .hook(hook, key, flow, variable, variables, &path, "Flowable")
            .await?;
        match move_ {
            HookMove::Continue(set) => self.complete(job, &set).await,
            HookMove::SkipNode(set, task) => {
                self.known().skips.insert(task);
                self.complete(job, &set).await
            }
            HookMove::Terminate(set, message) => {
                self.known().terminated = Some(message);
                self.complete(job, &set).await
            }
            HookMove::SkipTo(set, target) => {
                let to = self
                    .augmented
                    .rewritten
                    .entry
                    .get(&target)
                    .cloned()
                    .unwrap_or(target);
                self.client
                    .set_variables(&self.instance, &set)
                    .await
                    .map_err(|e| self.lost(e))?;
                self.client
                    .release(&job.id, &self.worker)
                    .await
                    .map_err(|e| self.lost(e))?;
                self.client
                    .move_tokens(
                        &self.instance,
                        std::slice::from_ref(&job.element_id),
                        std::slice::from_ref(&to),
                    )
                    .await
                    .map_err(|e| call(format!("Flowable could not move the token to `{to}`"), e))
            }
        }
    }

    /// The outcome: Flowable's final variables and path, or the failure.
    async fn finish(&self, ended: Ended) -> RunOutcome {
        let _ = self.refresh_path().await;
        // The timers Flowable's executor fired itself since the last look.
        if self.has_timers()
            && let Ok(timers) = self.client.timers(&self.instance).await
            && let Err(e) = self.track_timers(&timers).await
        {
            tracing::warn!("{e}");
        }
        let (path, terminated) = {
            let known = self.known();
            (known.path.clone(), known.terminated.clone())
        };
        let variables = match self.client.final_variables(&self.instance).await {
            // The history keeps the variables of multi-instance tasks' instances too.
            Ok(vars) if !vars.is_empty() && self.has_multi() => {
                strip_engine_locals(user_variables(vars))
            }
            Ok(vars) if !vars.is_empty() => user_variables(vars),
            _ => self.witness.variables(),
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
    type Seen = ();
    type Work = Job;

    async fn observe(&self) -> Result<Option<()>, PullError> {
        self.refresh_path().await?;
        // Timers are journalled as they start (and as Flowable fires them itself).
        if self.has_timers() {
            let timers = (self.client.timers(&self.instance).await).map_err(|e| self.lost(e))?;
            self.track_timers(&timers).await?;
        }
        Ok(Some(()))
    }

    fn over_budget(&self) -> Option<PullError> {
        pull::over_budget(&self.known().path, self.request.annotations.step_budget)
    }

    async fn waiting(&self, _: &()) -> Result<Look<Job>, PullError> {
        let jobs = self
            .client
            .acquire(&self.topic, &self.worker, 1, self.lock)
            .await
            .map_err(|e| self.lost(e))?;
        // After a hook's terminate, nothing more is asked: the instance is ending. Only
        // the terminating hook's own job is completed, when the run stopped before it
        // was (its answer is journalled).
        let jobs = if self.known().terminated.is_some() {
            self.journalled_only(jobs).await?
        } else {
            jobs
        };
        if jobs.is_empty() {
            return Ok(Look::Idle);
        }
        self.moving();
        Ok(Look::Work(jobs))
    }

    async fn idle(&self) -> Result<Idle, PullError> {
        match self.settled().await.map_err(|e| self.lost(e))? {
            Settled::Moving => {
                self.moving();
                Ok(Idle::Again)
            }
            Settled::Ended => Ok(Idle::Ended),
            Settled::Stuck(at) if !at.is_empty() && self.all_joins(&at) => {
                self.release(&at).await?;
                Ok(Idle::Again)
            }
            Settled::Stuck(at) if at.is_empty() && self.between_activities() => {
                let between = self.known().between;
                let pause = Duration::from_millis(100 * u64::from(between.min(10)));
                tokio::time::sleep(pause).await;
                Ok(Idle::Again)
            }
            Settled::Stuck(at) => {
                // Waiting for a timer or for a delivery from outside?
                match self.wait_or_park().await? {
                    Waited::Moved => Ok(Idle::Again),
                    Waited::Parked => Ok(Idle::Park),
                    Waited::Nothing => Err(PullError::Failed(format!(
                        "the instance waits at {} and nothing will move it (a join waiting \
                         for a branch that will not come?)",
                        if at.is_empty() {
                            "no activity".to_string()
                        } else {
                            at.join(", ")
                        }
                    ))),
                }
            }
            Settled::Failed(why) => Err(PullError::Failed(format!(
                "Flowable could not continue: {why}"
            ))),
        }
    }

    async fn work(&self, _: &(), job: Job) -> Result<(), PullError> {
        self.work_job(job).await
    }

    /// Fail the run: delete the instance (when Flowable can still be reached). A run
    /// that parks when its engine is lost ([`RunRequest::lost_parks`]) parks instead,
    /// due at once, the instance left as it is.
    async fn fail(&self, why: PullError) -> Ended {
        if self.request.lost_parks && matches!(why, PullError::Lost { .. }) {
            let reason = format!("engine lost: {}", why.message());
            tracing::warn!("run {}: {reason}; parked", self.request.run_id);
            return match self.witness.journal(Event::RunWaiting {
                reason,
                questions: Vec::new(),
                due_ms: Some(crate::clock::now_ms()),
                awaiting: Vec::new(),
            }) {
                Ok(()) => Ended::Waiting,
                Err(e) => Ended::Failed(crate::diag::chain(&e)),
            };
        }
        let why = why.message();
        let reason = format!("cuga-flo: {why}");
        if let Err(e) = self.client.delete(&self.instance, &reason).await {
            tracing::warn!("could not delete Flowable instance {}: {e}", self.instance);
        }
        Ended::Failed(why)
    }
}

impl Run {
    /// The instance moved: the next look between two activities starts a new grace.
    fn moving(&self) {
        let mut known = self.known();
        known.between = 0;
        known.between_since = None;
    }

    /// The instance runs at no activity: whether that is still within the grace given to
    /// Flowable's async executor to carry out a continuation (counting the look).
    fn between_activities(&self) -> bool {
        let mut known = self.known();
        let within = known
            .between_since
            .get_or_insert_with(std::time::Instant::now)
            .elapsed()
            < CONTINUATION_GRACE;
        if within {
            known.between += 1;
        }
        within
    }
}

/// The variables without the ones Flowable gives a multi-instance task's instances (its
/// loop counter counts from 0): cuga-flo gives the native engine's instead.
fn strip_engine_locals(mut variables: Map<String, Value>) -> Map<String, Value> {
    for name in [
        "loopCounter",
        "nrOfInstances",
        "nrOfActiveInstances",
        "nrOfCompletedInstances",
    ] {
        variables.remove(name);
    }
    variables
}

/// The joins cuga-flo released, and the multi-instance tasks with no instance to run it
/// recorded as entered, before a resumed run stopped (Flowable's history does not show
/// them): the sync joins of the journalled path that the history's path lacks, at
/// their places.
fn released_joins(
    process: &crate::bpmn::Process,
    journalled: &[String],
    history: &[String],
) -> Vec<(usize, String)> {
    let mut released = Vec::new();
    let mut next = history.iter().peekable();
    for (at, node) in journalled.iter().enumerate() {
        if next.peek() == Some(&node) {
            next.next();
        } else if process.node(node).is_some_and(|n| {
            is_sync_join(process, n)
                || matches!(
                    n.looping.as_ref().map(|l| l.kind),
                    Some(LoopKind::MultiInstance { .. })
                )
        }) {
            // A join cuga-flo released, or a multi-instance task with no instance to
            // run (Flowable does not enter it; one that ran instances is in the history).
            released.push((at, node.clone()));
        } else {
            next.next();
        }
    }
    released
}

/// How long an instance may show no activity at all (Flowable's async executor between
/// two activities) before the run is judged stuck: the executor's continuations take
/// seconds on a loaded machine.
const CONTINUATION_GRACE: Duration = Duration::from_secs(30);
