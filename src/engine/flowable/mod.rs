//! Flowable as the workflow engine (`workflow_engine: {type: flowable, url, ...}`).
//!
//! The app's process is rewritten ([`augment`]) so that every control point is an
//! external-worker task on a topic of the run's own; it is deployed over REST (once per
//! content: the deployment is named after its hash), an instance is started with the run's
//! variables, and cuga-flo then works as the instance's only worker ([`rest`]): it
//! acquires the jobs of its topic, asks the harness (through the bridge, journalled by a
//! [`Witness`] as for any engine that owns its tokens), and completes each job with the
//! answer's variables, until the instance has ended. Flowable persists and moves the
//! tokens (joins, sub-processes, terminate ends); it never calls cuga-flo back.
//!
//! Hook actions on Flowable: `continue`, `terminate` (a terminate end event behind the
//! hook), `skip_to` (the token is moved with `change-state`), `skip_node` (the skipped
//! task's job is completed without asking the harness). `swap_nodes`, `remove_node` and
//! `add_node` change the topology, which a deployed definition cannot: `validate`
//! rejects Flowable apps that permit them.

pub mod augment;
pub mod rest;

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Map, Value};

use self::augment::Augmented;
use self::rest::{Client, Endpoint, Job, RestError};
use super::external::{Witness, witnessed};
use super::pull::{Asker, HookMove, is_sync_join, terminate_end, user_variables};
use super::{
    EngineError, RunOutcome, RunRequest, WorkflowEngine, engine_block, engine_url, seconds,
};
use crate::app::{EngineConfig, EngineKind};
use crate::bridge::{BoxFuture, ControlPoints};
use crate::engine::rewrite::Role;
use crate::journal::EventSink;
use crate::secret::Secret;
use crate::vocab::RunStatus;

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
    pub fn from_config(config: &EngineConfig, url: Option<&str>) -> Result<Self, String> {
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
            return Err(format!(
                "the Flowable password is read from the environment variable `{password_var}`, \
                 which is not set"
            ));
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
}

async fn run(
    settings: FlowableSettings,
    witness: Arc<Witness>,
    request: RunRequest,
) -> Result<RunOutcome, String> {
    let run = Arc::new(Run::prepare(&settings, &request, witness).await?);
    let ended = run.clone().drive().await;
    Ok(run.finish(ended).await)
}

/// How the instance ended, when cuga-flo ended it or saw it end.
#[derive(Debug, Clone)]
enum Ended {
    /// Flowable finished it; `terminated` by a hook when set.
    Finished { terminated: Option<String> },
    /// cuga-flo failed it (and deleted the instance).
    Failed(String),
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
    /// The model's nodes entered so far, in order (from Flowable's history).
    path: Vec<String>,
    /// Tasks a hook's `skip_node` sends a token to.
    skips: HashSet<String>,
    /// Set by a hook that terminated the run.
    terminated: Option<String>,
    /// Joins cuga-flo released (none of their missing branches could still come): where
    /// in the path each fired, since Flowable's history does not show it.
    released: Vec<(usize, String)>,
}

impl Run {
    /// Augment, deploy (unless deployed already) and start the instance.
    async fn prepare(
        settings: &FlowableSettings,
        request: &RunRequest,
        witness: Arc<Witness>,
    ) -> Result<Run, String> {
        let key = settings
            .definition_key
            .clone()
            .unwrap_or_else(|| request.process.id.clone());
        let augmented =
            augment::augment(&request.process, &request.annotations, &key).map_err(|problems| {
                let list: Vec<String> = problems
                    .iter()
                    .map(|(id, why)| format!("`{id}`: {why}"))
                    .collect();
                format!("the model cannot run on Flowable: {}", list.join("; "))
            })?;
        let client = Client::new(settings.endpoint.clone())?;
        let url = client.url().to_string();
        client.ping().await.map_err(|e| {
            if e.is_unreachable() {
                format!("cannot reach Flowable at {url}: {}", e.detail)
            } else {
                format!("Flowable at {url} refused the first call: {e}")
            }
        })?;
        // The definition to start: the one of the deployment of exactly this model
        // (another model under the same key may have been deployed since).
        let definition = if settings.deploy {
            let name = format!(
                "cuga-flo {key} {:012x}",
                rest::fxhash(&augmented.xml) & 0xffff_ffff_ffff
            );
            let at = |e: RestError| format!("Flowable at {url}: {e}");
            let deployment = match client.deployment_named(&name).await.map_err(at)? {
                Some(id) => id,
                None => client
                    .deploy(&name, &format!("{key}.bpmn20.xml"), &augmented.xml)
                    .await
                    .map_err(|e| format!("Flowable refused the deployment of `{key}`: {e}"))?,
            };
            client
                .definition(&key, Some(&deployment))
                .await
                .map_err(at)?
        } else {
            client
                .definition(&key, None)
                .await
                .map_err(|e| format!("Flowable at {url}: {e}"))?
        };
        let definition = definition.ok_or_else(|| {
            format!(
                "Flowable at {url} has no process definition `{key}`{}",
                if settings.deploy {
                    " in cuga-flo's deployment"
                } else {
                    " (and `deploy` is off)"
                }
            )
        })?;
        let topic = format!("cuga-flo.{}", request.run_id);
        let mut variables = request.variables.clone();
        variables.insert("cugaTopic".into(), Value::String(topic.clone()));
        let instance = client
            .start(&definition, &request.run_id, &variables)
            .await
            .map_err(|e| format!("Flowable could not start `{key}`: {e}"))?;
        Ok(Run {
            client,
            witness,
            augmented,
            request: request.clone(),
            instance,
            worker: format!("cuga-flo-{}", request.run_id),
            topic,
            lock: settings.lock,
            state: Mutex::new(Known::default()),
        })
    }

    fn known(&self) -> MutexGuard<'_, Known> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Work the instance's jobs until it ends or cuga-flo ends it.
    async fn drive(self: Arc<Self>) -> Ended {
        loop {
            if let Err(e) = self.refresh_path().await {
                return self.fail(e).await;
            }
            if let Some(why) = self.over_budget() {
                return self.fail(why).await;
            }
            // After a hook's terminate, nothing more is worked: the instance is ending.
            let terminating = self.known().terminated.is_some();
            let jobs = if terminating {
                Vec::new()
            } else {
                match self
                    .client
                    .acquire(&self.topic, &self.worker, 1, self.lock)
                    .await
                {
                    Ok(jobs) => jobs,
                    Err(e) => return self.fail(self.lost(e)).await,
                }
            };
            if jobs.is_empty() {
                match self.settled().await {
                    Ok(Settled::Moving) => continue,
                    Ok(Settled::Ended) => {
                        return Ended::Finished {
                            terminated: self.known().terminated.clone(),
                        };
                    }
                    Ok(Settled::Stuck(at)) if !at.is_empty() && self.all_joins(&at) => {
                        if let Err(why) = self.release(&at).await {
                            return self.fail(why).await;
                        }
                        continue;
                    }
                    Ok(Settled::Stuck(at)) => {
                        return self
                            .fail(format!(
                                "the instance waits at {} and nothing will move it (a join \
                                 waiting for a branch that will not come?)",
                                if at.is_empty() {
                                    "no activity".to_string()
                                } else {
                                    at.join(", ")
                                }
                            ))
                            .await;
                    }
                    Ok(Settled::Failed(why)) => {
                        return self
                            .fail(format!("Flowable could not continue: {why}"))
                            .await;
                    }
                    Err(e) => return self.fail(self.lost(e)).await,
                }
            }
            // One at a time: each completion continues the instance in Flowable, and
            // concurrent continuations of parallel branches would collide at their join.
            let mut ended = None;
            for job in jobs {
                if let Err(why) = self.work(job).await {
                    ended = Some(why);
                    break;
                }
            }
            if let Some(why) = ended {
                return self.fail(why).await;
            }
        }
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
            if self.known().terminated.is_none() && self.client.has_jobs(&self.topic).await? {
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

    fn lost(&self, e: RestError) -> String {
        if e.is_unreachable() {
            format!("lost Flowable at {}: {}", self.client.url(), e.detail)
        } else {
            format!("Flowable at {}: {e}", self.client.url())
        }
    }

    /// Fail the run: delete the instance (when Flowable can still be reached).
    async fn fail(&self, why: String) -> Ended {
        let reason = format!("cuga-flo: {why}");
        if let Err(e) = self.client.delete(&self.instance, &reason).await {
            tracing::warn!("could not delete Flowable instance {}: {e}", self.instance);
        }
        Ended::Failed(why)
    }

    fn over_budget(&self) -> Option<String> {
        let known = self.known();
        let budget = self.request.annotations.step_budget;
        (known.path.len() as u64 > budget).then(|| {
            format!(
                "the step budget of {budget} node entries is spent: entering `{}` would exceed it",
                known.path.get(budget as usize).cloned().unwrap_or_default()
            )
        })
    }

    /// Read the model's nodes entered so far from Flowable's history. A synchronising
    /// join is recorded once per arriving token; it counts as entered once, when it
    /// fires: the arrival whose execution goes on past it.
    async fn refresh_path(&self) -> Result<(), String> {
        let activities = self
            .client
            .activities(&self.instance)
            .await
            .map_err(|e| self.lost(e))?;
        let process = &self.request.process;
        let mut path = Vec::new();
        for (i, a) in activities.iter().enumerate() {
            if a.activity_type.as_deref() == Some("sequenceFlow") {
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
                let fired = activities[i + 1..].iter().any(|later| {
                    later.execution_id.is_some() && later.execution_id == a.execution_id
                });
                if !fired {
                    continue;
                }
            }
            path.push(node.id.clone());
        }
        let mut known = self.known();
        for (at, join) in &known.released {
            path.insert((*at).min(path.len()), join.clone());
        }
        known.path = path;
        Ok(())
    }

    fn all_joins(&self, at: &[String]) -> bool {
        let process = &self.request.process;
        at.iter()
            .all(|id| process.node(id).is_some_and(|n| is_sync_join(process, n)))
    }

    /// Fire joins that wait for branches no token can bring any more (a hook skipped or
    /// ended them), as the native engine does: the waiting token is moved to where the
    /// join's outgoing flows lead, and the join is recorded as entered.
    async fn release(&self, joins: &[String]) -> Result<(), String> {
        self.refresh_path().await?;
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
                return Err(format!("join `{join}` has no outgoing flow"));
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
                .map_err(|e| format!("Flowable could not release join `{join}`: {e}"))?;
        }
        Ok(())
    }

    /// Answer one job through the harness and complete it.
    async fn work(&self, job: Job) -> Result<(), String> {
        let role = self
            .augmented
            .rewritten
            .roles
            .get(&job.element_id)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "Flowable handed over a job at `{}`, which is no control point of this run",
                    job.element_id
                )
            })?;
        let variables = match &job.variables {
            Some(vars) => rest::from_rest(vars),
            None => self
                .client
                .variables(&self.instance)
                .await
                .map_err(|e| self.lost(e))?,
        };
        let variables = user_variables(variables);
        // The job's activity has started since the last look at the history, and may be
        // the entry that spends the step budget: then it is not asked about.
        self.refresh_path().await?;
        if let Some(why) = self.over_budget() {
            return Err(why);
        }
        match role {
            Role::Task(task) => self.task(&job, &task, variables).await,
            Role::Route { gateway, variable } => {
                self.route(&job, &gateway, &variable, variables).await
            }
            Role::Hook {
                hook,
                flow,
                variable,
            } => self.hook(&job, &hook, &flow, &variable, variables).await,
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

    async fn complete(&self, job: &Job, variables: &Map<String, Value>) -> Result<(), String> {
        self.client
            .complete(&job.id, &self.worker, variables)
            .await
            .map_err(|e| self.lost(e))
    }

    async fn task(
        &self,
        job: &Job,
        task: &str,
        variables: Map<String, Value>,
    ) -> Result<(), String> {
        if self.known().skips.remove(task) {
            // Entered and recorded as skipped (the witness journals it from the path).
            return self.complete(job, &Map::new()).await;
        }
        let path = self.known().path.clone();
        let writes = self.asker().task(task, variables, &path).await?;
        self.complete(job, &writes).await
    }

    async fn route(
        &self,
        job: &Job,
        gateway: &str,
        variable: &str,
        variables: Map<String, Value>,
    ) -> Result<(), String> {
        let path = self.known().path.clone();
        let chosen = self.asker().route(gateway, variables, &path).await?;
        let mut set = Map::new();
        set.insert(variable.to_string(), Value::String(chosen));
        self.complete(job, &set).await
    }

    async fn hook(
        &self,
        job: &Job,
        hook: &str,
        flow: &str,
        variable: &str,
        variables: Map<String, Value>,
    ) -> Result<(), String> {
        let path = self.known().path.clone();
        let move_ = self
            .asker()
            .hook(hook, flow, variable, variables, &path, "Flowable")
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
                    .map_err(|e| format!("Flowable could not move the token to `{to}`: {e}"))
            }
        }
    }

    /// The outcome: Flowable's final variables and path, or the failure.
    async fn finish(&self, ended: Ended) -> RunOutcome {
        let _ = self.refresh_path().await;
        let mut path = self.known().path.clone();
        // Flowable entered the node that spent the budget before cuga-flo saw it; the
        // run failed instead of entering it, as on the native engine.
        path.truncate(usize::try_from(self.request.annotations.step_budget).unwrap_or(usize::MAX));
        self.witness.entered(&path);
        let variables = match self.client.final_variables(&self.instance).await {
            Ok(vars) if !vars.is_empty() => user_variables(vars),
            _ => self.witness.variables(),
        };
        let (status, message) = match ended {
            Ended::Finished {
                terminated: Some(m),
            } => (RunStatus::Terminated, Some(m)),
            Ended::Finished { terminated: None } => {
                match terminate_end(&self.request.process, &path) {
                    Some(m) => (RunStatus::Terminated, Some(m)),
                    None => (RunStatus::Completed, None),
                }
            }
            Ended::Failed(why) => (RunStatus::Failed, Some(why)),
        };
        RunOutcome {
            status,
            message,
            variables,
            steps: path.len() as u64,
            path,
        }
    }
}
