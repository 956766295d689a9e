//! The A2A agent's run handling (`serve --a2a`, a scenario's sibling agents): each task an
//! app's agent is sent is a run of the app on the native engine ([`Runner`]), journalled
//! by the run host ([`super::host::Journals`]); each control point decided is a
//! `working` update; one that needs a person makes the task `input-required` and the
//! caller's next message answers it ([`Caller`], checked as `runs answer` checks an
//! answer); the run's final variables are the task's artifact; `CancelTask` cancels the
//! run as `runs cancel` does. The protocol side is [`crate::a2a::server`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::a2a::TaskState;
use crate::a2a::server::{self, A2aServer, AgentSpec, Executor, Incoming, Limits, TaskHandle};
use crate::app::LoadedApp;
use crate::app::guardrail::Guardrail;
use crate::bridge::BoxFuture;
use crate::bridge::child::ChildRuns;
use crate::bridge::run::{RunRequest, WorkflowEngine};
use crate::engine::native::NativeEngine;
use crate::harness::FlowAgent;
use crate::journal::{Event, EventSink, JournalError, Record};
use crate::mcp::RunProcessArgs;
use crate::reason::park::{self, Answers, Given, Recorded};
use crate::reason::{
    Chain, GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, ReasonError, Reasoner,
    TaskAnswer, TaskRequest,
};
use crate::secret::Secret;
use crate::vocab::{Decider, Offered, Question, RunStatus};

use super::host::{Journals, Labels, NotServed, OpenError};
use crate::diag::count;

use super::chain;
use super::children::AppChildren;

/// One served app.
pub struct Served {
    pub loaded: Arc<LoadedApp>,
    pub judge: Arc<dyn Reasoner>,
    /// As `judge`, then a person later (questions park): the runs no caller waits on (a
    /// run started from the web console, a run taken over).
    pub parking: Arc<dyn Reasoner>,
    pub process_key: String,
    /// The app's guardrail gateways (an approver's `approve`/`deny`), by gateway id.
    pub guardrails: Arc<HashMap<String, Guardrail>>,
}

/// The guardrail gateways of an app (those that resolve: `validate` reports the others).
pub fn guardrails(loaded: &LoadedApp) -> Arc<HashMap<String, Guardrail>> {
    let Some(process) = loaded.process() else {
        return Arc::default();
    };
    Arc::new(
        crate::app::guardrail::all(loaded.config.as_ref(), process)
            .into_iter()
            .filter_map(|(id, g)| Some((id, g.ok()?)))
            .collect(),
    )
}

/// Where the child runs of a served run's call activities go, and what answers them.
#[derive(Clone)]
pub struct ChildSettings {
    /// The apps folder (when a served app's own folder has no parent).
    pub apps_dir: std::path::PathBuf,
    pub run_dir: std::path::PathBuf,
    pub durability: crate::journal::Durability,
    pub no_model: bool,
    /// What the answers file addresses to called elements (`<call activity>/<element>`).
    pub given: Vec<chain::Given>,
}

/// Runs the apps for the tasks the server is sent.
pub struct Runner {
    pub apps: HashMap<String, Served>,
    pub children: ChildSettings,
    pub journals: Journals,
    pub engine: Arc<NativeEngine>,
    /// How long an input-required task waits for the caller's answer.
    pub input_wait: Duration,
    /// Set when the server shuts down: a task cancelled then was not cancelled by its
    /// caller.
    pub stopping: Arc<std::sync::atomic::AtomicBool>,
    /// The runs, spread over the cores (each stays on the thread it started on).
    pub cores: Arc<crate::serving::Cores>,
    /// `--max-wait`: how long a run waits in-process for a timer before it parks.
    pub max_wait: Option<u64>,
}

/// Why an app cannot be served as an agent, or a task or a run of it cannot start.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("no app `{0}`")]
    NoApp(String),
    #[error("no app with the process key `{0}` is served")]
    NoProcessKey(String),
    #[error(transparent)]
    NotServed(#[from] NotServed),
    #[error(transparent)]
    Harness(#[from] crate::harness::HarnessError),
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The task's first message does not give the run's inputs.
    #[error("{0}")]
    Inputs(String),
    #[error("cannot start a run thread")]
    Thread(#[source] std::io::Error),
    #[error("cannot listen on {addr}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// `variables` with each whole number that arrived as a float (`800.0`: A2A's protobuf
/// transport has doubles only) an integer again where the app declares the variable with
/// an integer default, as a run started any other way has it.
fn integers_as_declared(
    loaded: &LoadedApp,
    mut variables: Map<String, Value>,
) -> Map<String, Value> {
    let Some(config) = loaded.config.as_ref() else {
        return variables;
    };
    for (name, value) in variables.iter_mut() {
        let integer = config
            .variable(name)
            .is_some_and(|v| v.default.is_i64() || v.default.is_u64());
        if let Some(f) = value
            .as_f64()
            .filter(|f| integer && value.is_f64() && f.fract() == 0.0)
            && f.abs() < 9.0e15
        {
            *value = Value::from(f as i64);
        }
    }
    variables
}

/// Serve `loaded` (checked) as an agent: its harness asks the chain of
/// [`super::host::judge`] (the answers file, then the app's model unless `no_model`),
/// then the A2A caller; its runs are labelled and launched as `serve` launches them.
/// The app to serve and its card; why not, when its harness cannot be built.
/// An app served to the people of the web console only (beside `serve --http`): its runs'
/// questions park for them.
pub fn served_for_console(
    loaded: LoadedApp,
    answers: Option<&chain::AnswersFile>,
    no_model: bool,
    journals: &Journals,
) -> Result<Served, AgentError> {
    let parking = super::host::judge_parking(&loaded, answers, no_model, Some(journals))?;
    let config = loaded.config.as_ref().ok_or(NotServed::NoConfig)?;
    let process_key = config.process_key().to_string();
    Ok(Served {
        guardrails: guardrails(&loaded),
        loaded: Arc::new(loaded),
        judge: parking.clone(),
        parking,
        process_key,
    })
}

/// `caller`: served as an A2A agent; `console`: beside the web console.
#[allow(clippy::too_many_arguments)]
pub fn serve_app(
    loaded: LoadedApp,
    answers: Option<&chain::AnswersFile>,
    no_model: bool,
    journals: &Journals,
    labels: &Labels,
    caller: bool,
    console: bool,
) -> Result<(Served, AgentSpec), AgentError> {
    let reasoner = super::host::judge(&loaded, answers, no_model, Some(journals))?;
    let parking = super::host::judge_parking(&loaded, answers, no_model, Some(journals))?;
    // The harness is built once up front so that a broken app is reported now.
    FlowAgent::new(&loaded, reasoner.clone())?;
    let config = loaded.config.as_ref().ok_or(NotServed::NoConfig)?;
    let process_key = config.process_key().to_string();
    // Who answers what nobody before does: the A2A caller of a task's run; a person at
    // the web console (the question parks) for a run started there or taken over.
    let judgement = match (caller, console) {
        (true, true) => format!(
            "{} (then the A2A caller of its task; a person, later, for a run started at the web console)",
            reasoner.describe()
        ),
        (true, false) => format!("{} (then the A2A caller)", reasoner.describe()),
        (false, _) => parking.describe(),
    };
    labels.set(&process_key, &loaded.name, &judgement, &loaded.digest());
    labels.set_app(&process_key, &loaded);
    labels.set_launch(
        &process_key,
        &loaded,
        answers.map(|a| a.path.as_path()),
        no_model,
    );
    let spec = agent_spec(&slug(&loaded.name), &loaded);
    let served = Served {
        guardrails: guardrails(&loaded),
        loaded: Arc::new(loaded),
        judge: reasoner,
        parking,
        process_key,
    };
    Ok((served, spec))
}

/// The sibling apps a scenario's run reaches as its remote agents (`remote_agents: {<name>:
/// {serve: <app>}}`), each served over A2A on 127.0.0.1 (a free port) in this process for
/// the run's length, its runs journalled beside the scenario's.
pub struct ScenarioAgents {
    servers: Vec<A2aServer>,
    journals: Journals,
}

/// One app a scenario serves: the app, its reasoner chain (its scenario answers and
/// policy rules; then the caller), and the bearer token its callers must send, if any.
pub struct ScenarioServed {
    pub loaded: LoadedApp,
    pub judge: Arc<dyn Reasoner>,
    pub token: Option<Secret>,
}

impl ScenarioAgents {
    /// Serve each app on its own server; the base URL of each, in order.
    pub async fn start(
        served: Vec<ScenarioServed>,
        apps_dir: &std::path::Path,
        run_dir: &std::path::Path,
        durability: crate::journal::Durability,
        no_model: bool,
    ) -> Result<(ScenarioAgents, Vec<String>), AgentError> {
        let labels = Labels::default();
        let journals = Journals::new(run_dir.to_path_buf(), labels.clone(), durability);
        let mut agents = ScenarioAgents {
            servers: Vec::new(),
            journals: journals.clone(),
        };
        let mut urls = Vec::new();
        // The served siblings' runs share one thread besides the scenario's own run.
        let cores = Arc::new(crate::serving::Cores::new(1).map_err(AgentError::Thread)?);
        for s in served {
            let slug = slug(&s.loaded.name);
            let config = s.loaded.config.as_ref().ok_or(NotServed::NoConfig)?;
            let process_key = config.process_key().to_string();
            labels.set(
                &process_key,
                &s.loaded.name,
                &format!("{} (then the A2A caller)", s.judge.describe()),
                &s.loaded.digest(),
            );
            labels.set_app(&process_key, &s.loaded);
            let spec = agent_spec(&slug, &s.loaded);
            let runner = Arc::new(Runner {
                apps: HashMap::from([(
                    slug,
                    Served {
                        guardrails: guardrails(&s.loaded),
                        loaded: Arc::new(s.loaded),
                        parking: s.judge.clone(),
                        judge: s.judge,
                        process_key,
                    },
                )]),
                children: ChildSettings {
                    apps_dir: apps_dir.to_path_buf(),
                    run_dir: run_dir.to_path_buf(),
                    durability,
                    no_model,
                    given: Vec::new(),
                },
                journals: journals.clone(),
                engine: Arc::new(NativeEngine::new()),
                input_wait: Duration::from_secs(300),
                stopping: Arc::default(),
                cores: cores.clone(),
                max_wait: None,
            });
            let addr = SocketAddr::from(([127, 0, 0, 1], 0));
            let server = A2aServer::bind(addr, vec![spec], runner, s.token, Limits::default())
                .await
                .map_err(|source| AgentError::Listen { addr, source })?;
            urls.extend(server.agent_urls().into_iter().map(|(_, url)| url));
            agents.servers.push(server);
        }
        Ok((agents, urls))
    }

    /// Stop the servers: tasks still going are cancelled, their journals closed.
    pub async fn stop(self) {
        for server in self.servers {
            server.shutdown(Duration::from_millis(500)).await;
        }
        let idle = async {
            while self.journals.open_count() > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(1), idle).await;
        self.journals.interrupt_all();
    }
}

/// An app's name as a URL path segment: letters, digits, `-`, `_` and `.`; anything else
/// becomes `-`.
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("app-{s}")
    } else {
        s
    }
}

/// The card of an app: the flow's name and description, one skill (the process) whose
/// description lists the input variables with their defaults.
pub fn agent_spec(slug: &str, loaded: &LoadedApp) -> AgentSpec {
    let config = loaded.config.as_ref();
    let flow = config.map(|c| &c.flow);
    let name = (flow.and_then(|f| f.name.as_ref()))
        .map(|n| n.as_str().to_string())
        .unwrap_or_else(|| loaded.name.clone());
    let process = loaded.process();
    let description = (flow.and_then(|f| f.description.as_ref()))
        .map(|d| d.as_str().to_string())
        .unwrap_or_else(|| {
            format!(
                "Runs the BPMN process `{}` as a governed cuga-flo flow.",
                process.map_or("?", |p| p.id.as_str())
            )
        });
    let mut defaults = Map::new();
    for v in config.map(|c| c.variables.as_slice()).unwrap_or_default() {
        defaults.insert(v.name.as_str().to_string(), v.default.clone());
    }
    let inputs = if defaults.is_empty() {
        "It takes no declared input variables.".to_string()
    } else {
        format!(
            "Input variables (send them as a DataPart object, or as text holding a JSON \
             object; those left out keep their default): {}.",
            defaults
                .iter()
                .map(|(k, v)| format!("{k} (default {v})"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let skill_id = config.map_or(slug.to_string(), |c| c.process_key().to_string());
    let skill_name = (process.and_then(|p| p.name.clone())).unwrap_or_else(|| name.clone());
    AgentSpec {
        slug: slug.to_string(),
        name,
        description: description.clone(),
        version: (flow.and_then(|f| f.version.as_ref()))
            .map(|v| v.as_str().to_string())
            .unwrap_or_else(|| "1.0.0".to_string()),
        skills: vec![json!({
            "id": skill_id,
            "name": skill_name,
            "description": format!(
                "{description} {inputs} The reply is the run's final variables (a DataPart); \
                 a decision that needs a person makes the task input-required."
            ),
            "tags": ["bpmn", "cuga-flo", "workflow"],
            "examples": [Value::Object(defaults).to_string()],
            "inputModes": ["application/json", "text/plain"],
            "outputModes": ["application/json"],
        })],
    }
}

impl Runner {
    /// The run host of a server's apps: a native engine, one run thread per core, runs
    /// journalled by `journals`; an input-required task waits `input_wait` for its
    /// caller; `max_wait`: how long a run waits in-process for a timer before it parks.
    pub fn new(
        apps: HashMap<String, Served>,
        children: ChildSettings,
        journals: Journals,
        input_wait: Duration,
        max_wait: Option<u64>,
    ) -> Result<Runner, AgentError> {
        Ok(Runner {
            apps,
            children,
            journals,
            engine: Arc::new(NativeEngine::new()),
            input_wait,
            stopping: Arc::default(),
            cores: Arc::new(crate::serving::Cores::per_core().map_err(AgentError::Thread)?),
            max_wait,
        })
    }
}

impl Runner {
    /// Take over run `run_id` of `process_key`, left parked by a server now gone, whose
    /// journal `sink` is open here: held and resumed here when it can go on. Its A2A task
    /// was the dead server's and is not resumed as a task (no caller is there to see its
    /// updates or answer its questions): the run goes on under the app's own judgement,
    /// a question nobody before a person answers parks it (`runs answer` once this
    /// server stops, or `runs pending`), and its end is in its journal (`runs show`).
    pub fn adopt(
        self: &Arc<Self>,
        run_id: &str,
        process_key: &str,
        sink: Arc<dyn EventSink>,
    ) -> Result<(), AgentError> {
        self.go(run_id, process_key, sink, None)
    }

    /// Run `run_id` of `process_key` here under the app's judgement, then a person later
    /// (its questions park), its journal `sink` open here: started from `start` (its
    /// initial variables and their provenance), or, without, waiting and held here until
    /// it can go on. Each time it parks it is held here again, until it ends.
    pub(super) fn go(
        self: &Arc<Self>,
        run_id: &str,
        process_key: &str,
        sink: Arc<dyn EventSink>,
        start: Option<(Map<String, Value>, crate::vocab::Untrusted)>,
    ) -> Result<(), AgentError> {
        let served = (self.apps.values())
            .find(|s| s.process_key == process_key)
            .ok_or_else(|| AgentError::NoProcessKey(process_key.to_string()))?;
        let harness = FlowAgent::new(&served.loaded, served.parking.clone())?;
        let process = (served.loaded.shared_process()).ok_or(NotServed::NoProcess)?;
        let mut annotations = harness.annotations();
        if self.max_wait.is_some() {
            annotations.max_wait_secs = self.max_wait;
        }
        let children: Arc<dyn ChildRuns> = Arc::new(AppChildren {
            apps_dir: crate::app::called::apps_dir(&served.loaded)
                .map_or_else(|| self.children.apps_dir.clone(), |d| d.to_path_buf()),
            caller: (*served.loaded).clone(),
            run_dir: self.children.run_dir.clone(),
            durability: self.children.durability,
            no_model: self.children.no_model,
            given: self.children.given.clone(),
            depth: 0,
            asker: None,
            graph: Arc::default(),
        });
        harness.journal_remote_tasks(sink.clone());
        let harness = Arc::new(harness);
        let first = start.map(|(variables, untrusted)| {
            let mut request = RunRequest::new(
                run_id.to_string(),
                process_key.to_string(),
                process.clone(),
                annotations.clone(),
                variables,
                None,
            );
            request.untrusted = Some(untrusted);
            request.children = Some(children.clone());
            request
        });
        let parked = crate::mcp::Parked {
            run_id: run_id.to_string(),
            process_key: process_key.to_string(),
            process,
            annotations,
            sink: sink.clone(),
            children: Some(children),
        };
        let (engine, cores) = (self.engine.clone(), self.cores.clone());
        let parking: Arc<dyn crate::mcp::Parking> = Arc::new(self.journals.clone());
        let run = move |request: RunRequest, sink: Arc<dyn EventSink>| {
            let run = cores.spawn(engine.clone().run(request, harness.clone(), sink));
            async move {
                match run.await {
                    Ok(outcome) => Ok(outcome?),
                    Err(e) => Err(crate::mcp::BridgeError::Task(e)),
                }
            }
        };
        let run_id = run_id.to_string();
        let journals = self.journals.clone();
        tokio::spawn(async move {
            if let Some(request) = first {
                match run(request, sink).await {
                    Ok(o) if o.status == RunStatus::Waiting => {}
                    Ok(o) => {
                        tracing::info!("run {run_id}: {}", o.status.as_str());
                        return;
                    }
                    Err(e) => {
                        let e = crate::diag::chain(&e);
                        // Its journal ends failed, with why (nothing more is taken).
                        journals.interrupt(&run_id, &format!("the run stopped: {e}"));
                        return;
                    }
                }
            }
            crate::mcp::keep_parked(parking, parked, run).await;
        });
        Ok(())
    }
}

impl Executor for Runner {
    fn start(
        &self,
        slug: &str,
        task: TaskHandle,
        first: Incoming,
    ) -> Result<(), server::ExecutorError> {
        let served = self
            .apps
            .get(slug)
            .ok_or_else(|| AgentError::NoApp(slug.to_string()))?;
        let server::Inputs {
            variables,
            outputs: wanted,
        } = server::input_variables(&first).map_err(AgentError::Inputs)?;
        if let Some(config) = served.loaded.config.as_ref() {
            let given: Vec<String> = variables.keys().cloned().collect();
            if let Some(missing) = config.missing_inputs(&given).first() {
                return Err(Box::new(AgentError::Inputs(format!(
                    "input `{}`{} is required: send it in the message's DataPart",
                    missing.name.value,
                    missing
                        .description
                        .as_deref()
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                ))));
            }
        }
        let variables = integers_as_declared(&served.loaded, variables);
        let caller: Arc<dyn Reasoner> = Arc::new(Caller {
            task: task.clone(),
            wait: self.input_wait,
            guardrails: served.guardrails.clone(),
            asking: tokio::sync::Mutex::new(()),
        });
        let reasoner: Arc<dyn Reasoner> =
            Arc::new(Chain::new(vec![served.judge.clone(), caller.clone()]));
        let harness = FlowAgent::new(&served.loaded, reasoner).map_err(AgentError::from)?;
        let process = served
            .loaded
            .process()
            .cloned()
            .ok_or(AgentError::NotServed(NotServed::NoProcess))?;
        let run_id = task.id();
        let args = RunProcessArgs {
            process_key: served.process_key.clone(),
            run_id: run_id.clone(),
            variables: variables.clone(),
            untrusted: None,
            bridge: None,
            adopt: None,
            lost_parks: false,
        };
        let (journal, graph) = self.journals.open_run(&args).map_err(AgentError::from)?;
        let sink: Arc<dyn EventSink> = Arc::new(Streamed {
            inner: journal,
            task: task.clone(),
        });
        let process = Arc::new(process);
        let mut annotations = harness.annotations();
        if self.max_wait.is_some() {
            annotations.max_wait_secs = self.max_wait;
        }
        let mut request = RunRequest::new(
            run_id.clone(),
            served.process_key.clone(),
            process.clone(),
            annotations.clone(),
            variables,
            None,
        );
        // Call activities run the called process as a child run, journalled under the
        // same run folder and linked to this run, as `start` runs them.
        let children: Arc<dyn ChildRuns> = Arc::new(AppChildren {
            apps_dir: crate::app::called::apps_dir(&served.loaded)
                .map_or_else(|| self.children.apps_dir.clone(), |d| d.to_path_buf()),
            caller: (*served.loaded).clone(),
            run_dir: self.children.run_dir.clone(),
            durability: self.children.durability,
            no_model: self.children.no_model,
            given: self.children.given.clone(),
            depth: 0,
            // A child's question goes to this task's caller (input-required), as the
            // served run's own questions do.
            asker: Some(caller.clone()),
            graph: Arc::new(match graph {
                Some(g) => std::sync::OnceLock::from(g),
                None => std::sync::OnceLock::new(),
            }),
        });
        request.children = Some(children.clone());
        // A delegation journals its remote task as soon as the agent assigns it (a crash
        // after `SendMessage` follows it up on resume instead of sending it again), and
        // a cancelled run cancels it at its agent.
        harness.journal_remote_tasks(sink.clone());
        let harness = Arc::new(harness);
        let engine = self.engine.clone();
        let cores = self.cores.clone();
        // Said before the run goes: it may ask its first question at once, on its thread.
        task.update(
            TaskState::Working,
            &format!("run {run_id} of `{}` started", served.process_key),
            None,
        );
        let first = cores.spawn(engine.run(request, harness.clone(), sink.clone()));
        let journals = self.journals.clone();
        let stopping = self.stopping.clone();
        let cancelling = Cancelling {
            apps_dir: self.children.apps_dir.clone(),
            run_dir: self.children.run_dir.clone(),
            durability: self.children.durability,
        };
        let process_key = served.process_key.clone();
        let cancelled = task.cancelled();
        tokio::spawn(async move {
            let mut run = first;
            loop {
                let outcome = tokio::select! {
                    biased;
                    () = cancelled.cancelled() => None,
                    outcome = &mut run => Some(outcome),
                };
                let Some(outcome) = outcome else {
                    // The run goes no further: its remote tasks are cancelled through its
                    // own clients (so stopping it then sends no second CancelTask), its
                    // journal ends (nothing more is taken from it), and it is stopped on
                    // its thread.
                    if stopping.load(std::sync::atomic::Ordering::SeqCst) {
                        journals.interrupt(&run_id, "interrupted (the server shut down)");
                        run.stop().await;
                    } else {
                        let remotes = &harness.remotes;
                        cancel_run(&journals, &run_id, &task, remotes, &cancelling, Some(run))
                            .await;
                    }
                    return;
                };
                let outcome = match outcome {
                    Ok(outcome) => outcome,
                    Err(e) => Err(crate::bridge::run::EngineError::Refused(format!(
                        "the run's task failed: {e}"
                    ))),
                };
                match outcome {
                    Ok(o) if o.status == RunStatus::Waiting => {
                        // Parked: the task stays working while the server holds the run,
                        // and goes on when it can.
                        let (text, data) = waiting_update(&run_id, journals.state(&run_id));
                        task.update(TaskState::Working, &text, Some(data));
                        let held = tokio::select! {
                            biased;
                            () = cancelled.cancelled() => Err(()),
                            records = crate::mcp::Parking::until_due(&journals, &run_id) => Ok(records),
                        };
                        let records = match held {
                            Ok(Some(records)) => records,
                            // The server stops: the run stays parked, for `worker`.
                            Ok(None) => return,
                            Err(()) => {
                                if stopping.load(std::sync::atomic::Ordering::SeqCst) {
                                    return; // stays parked
                                }
                                journals.unpark(&run_id);
                                let remotes = &harness.remotes;
                                let none = None::<crate::serving::Running<()>>;
                                cancel_run(&journals, &run_id, &task, remotes, &cancelling, none)
                                    .await;
                                return;
                            }
                        };
                        let resumed = Event::RunResumed {
                            from_seq: records.len() as u64,
                            repaired: None,
                        };
                        if let Err(e) = sink.emit(resumed).and_then(|_| sink.commit()) {
                            task.update(
                                TaskState::Failed,
                                &format!("run {run_id} cannot be resumed: {e}"),
                                None,
                            );
                            return;
                        }
                        task.update(
                            TaskState::Working,
                            &format!("run {run_id} goes on"),
                            Some(json!({"event": "run_resumed"})),
                        );
                        let request = crate::mcp::resumed_request(
                            &run_id,
                            &process_key,
                            process.clone(),
                            annotations.clone(),
                            records,
                        );
                        let mut request = match request {
                            Ok(r) => r,
                            Err(e) => {
                                task.update(TaskState::Failed, &e.to_string(), None);
                                return;
                            }
                        };
                        request.children = Some(children.clone());
                        run = cores.spawn(engine.run(request, harness.clone(), sink.clone()));
                    }
                    Ok(o) if o.status == RunStatus::Completed => {
                        // A delegating flow gets the outputs it declared; anyone else every
                        // variable.
                        let variables = match &wanted {
                            Some(names) if !names.is_empty() => (o.variables.into_iter())
                                .filter(|(k, _)| names.contains(k))
                                .collect(),
                            _ => o.variables,
                        };
                        task.artifact("variables", Value::Object(variables));
                        task.update(
                            TaskState::Completed,
                            &format!(
                                "run {run_id} completed ({})",
                                count(o.steps as usize, "step")
                            ),
                            None,
                        );
                        return;
                    }
                    Ok(o) => {
                        let why = format!(
                            "run {run_id} {}{}",
                            o.status.as_str(),
                            o.message.map(|m| format!(": {m}")).unwrap_or_default()
                        );
                        task.update(
                            TaskState::Failed,
                            &why,
                            Some(json!({"variables": o.variables})),
                        );
                        return;
                    }
                    Err(e) => {
                        task.update(
                            TaskState::Failed,
                            &format!("run {run_id} failed: {e}"),
                            None,
                        );
                        return;
                    }
                }
            }
        });
        Ok(())
    }
}

/// A parked run's status update: what it waits for (a timer and when it is due, the
/// messages and signals), as a line and as data.
fn waiting_update(run_id: &str, state: Option<crate::journal::FlowState>) -> (String, Value) {
    let waiting = state.and_then(|s| s.waiting);
    let Some(w) = waiting else {
        return (
            format!("run {run_id} is waiting; it goes on here when it can"),
            json!({"event": "run_waiting"}),
        );
    };
    let mut what: Vec<String> = w
        .awaiting
        .iter()
        .map(|a| format!("{} `{}` at {}", a.kind.as_str(), a.name, a.node))
        .collect();
    if let Some(due) = w.due_ms {
        let secs = due.saturating_sub(crate::clock::now_ms()).div_ceil(1000);
        what.insert(0, format!("a timer due in {secs} s"));
    }
    if what.is_empty() {
        what.push(w.reason.clone());
    }
    (
        format!(
            "run {run_id} waits for {}; it goes on here when it can",
            what.join(", ")
        ),
        json!({"event": "run_waiting", "reason": w.reason, "due_ms": w.due_ms,
               "awaiting": w.awaiting}),
    )
}

/// Where the child runs of a cancelled served run are found, and its app's remote agents.
#[derive(Clone)]
struct Cancelling {
    apps_dir: std::path::PathBuf,
    run_dir: std::path::PathBuf,
    durability: crate::journal::Durability,
}

/// Who cancels a served run whose task its caller cancelled (`run_cancelled.by`).
const CALLER: &str = "the A2A caller";

/// A served run whose task the caller cancelled ends as `runs cancel` ends a run: the
/// remote tasks it waited for are cancelled at their agents, then `run_cancelled` (by the
/// A2A caller, the reason its `CancelTask` gave) and `run_finished` with status
/// `cancelled`.
async fn cancel_run<T>(
    journals: &Journals,
    run_id: &str,
    task: &TaskHandle,
    remotes: &crate::reason::remote::Remotes,
    cancelling: &Cancelling,
    going: Option<crate::serving::Running<T>>,
) {
    // The run may still be going on its thread: nothing more of it is journalled.
    journals.seal(run_id);
    let Some((records, state)) = journals.records(run_id) else {
        tracing::warn!("run {run_id}: cancelled, but its journal is not held here (ended?)");
        if let Some(run) = going {
            run.stop().await;
        }
        return;
    };
    let remote = crate::run::cancel::cancel_at_agents(remotes, &state).await;
    let reason = task
        .cancel_reason()
        .unwrap_or_else(|| format!("A2A task {run_id} canceled (CancelTask)"));
    journals.cancel(
        run_id,
        Some(CALLER.to_string()),
        Some(reason.clone()),
        remote,
        &state,
    );
    // Stopped (its child runs going in it with it), their journals are let go of.
    if let Some(run) = going {
        run.stop().await;
    }
    // Its child runs go with it, as with `runs cancel` (their own remote tasks too).
    let (apps_dir, run_dir, durability) = (
        cancelling.apps_dir.clone(),
        cancelling.run_dir.clone(),
        cancelling.durability,
    );
    let id = run_id.to_string();
    let cancelled = tokio::task::spawn_blocking(move || {
        let c = crate::run::cancel::Cancelling {
            run_dir: &run_dir,
            durability,
            app: None,
            find_app: Box::new(|app| crate::app::registry::find(app, &apps_dir)),
        };
        crate::run::cancel::cancel_children(&c, &id, &records, &state, Some(CALLER.to_string()))
            .len()
    })
    .await;
    if let Ok(n) = cancelled
        && n > 0
    {
        tracing::info!("run {run_id}: {} cancelled with it", count(n, "child run"));
    }
}

/// The run's journal, and each decision as a `working` status update of its task.
struct Streamed {
    inner: Arc<dyn EventSink>,
    task: TaskHandle,
}

impl EventSink for Streamed {
    fn emit(&self, event: Event) -> Result<Record, JournalError> {
        let progress = progress(&event);
        let record = self.inner.emit(event)?;
        if let Some((text, data)) = progress {
            self.task.progress(&text, Some(data));
        }
        Ok(record)
    }

    fn commit(&self) -> Result<(), JournalError> {
        self.inner.commit()
    }
}

/// What a caller is told of a journal event: a line and its data (no variable values).
fn progress(event: &Event) -> Option<(String, Value)> {
    match event {
        Event::TaskFinished {
            node,
            status,
            decided_by,
            error,
            ..
        } => {
            let status = name(status);
            let by = name(decided_by);
            Some((
                format!(
                    "task {node} {status} (decided by {by}){}",
                    error.as_ref().map(|e| format!(": {e}")).unwrap_or_default()
                ),
                json!({"event": "task_finished", "node": node, "status": status, "decided_by": by}),
            ))
        }
        Event::GatewayRouted {
            node,
            flows,
            decided_by,
            ..
        } => {
            let by = name(decided_by);
            Some((
                format!("gateway {node} took {} (decided by {by})", flows.join(", ")),
                json!({"event": "gateway_routed", "node": node, "flows": flows, "decided_by": by}),
            ))
        }
        Event::HookEvaluated {
            hook,
            action,
            decided_by,
            ..
        } => {
            let (action, by) = (name(action), name(decided_by));
            Some((
                format!("hook {hook}: {action} (decided by {by})"),
                json!({"event": "hook_evaluated", "node": hook, "action": action, "decided_by": by}),
            ))
        }
        Event::RemoteTaskStarted { node, remote, .. } => Some((
            format!(
                "task {node} delegated to remote agent {} (A2A task {})",
                remote.agent, remote.task_id
            ),
            json!({"event": "remote_task_started", "node": node, "agent": remote.agent,
                   "task_id": remote.task_id}),
        )),
        _ => None,
    }
}

/// A journal enum's name, as it is serialised (`completed`, `human`...).
fn name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".to_string(),
    }
}

// ---- The caller as the person who answers ----

/// The last reasoner of a served run: asks the A2A caller (the task becomes
/// `input-required`) and checks the answer as `runs answer` does.
struct Caller {
    task: TaskHandle,
    wait: Duration,
    /// Guardrail gateways: their question is an approval (`approve`/`deny`), DENIED when
    /// nobody decides within the guardrail's timeout.
    guardrails: Arc<HashMap<String, Guardrail>>,
    /// One question at a time (parallel branches may ask together): the caller's answer
    /// is always to the question the task shows.
    asking: tokio::sync::Mutex<()>,
}

impl Caller {
    /// The caller's answer to `q`, checked (in the form `runs answer` journals).
    async fn ask(&self, q: &Question) -> Result<Value, ReasonError> {
        self.ask_by(q).await.map(|(answer, _)| answer)
    }

    /// The caller's answer to `q`, and who decided it: the caller (`Human`), or nobody
    /// within a guardrail's timeout (`Timeout`: DENIED).
    async fn ask_by(&self, q: &Question) -> Result<(Value, Decider), ReasonError> {
        let _one = self.asking.lock().await;
        let mut problem: Option<String> = None;
        let guardrail = (q.approval.as_ref()).and_then(|_| self.guardrails.get(&q.element));
        let deadline =
            tokio::time::Instant::now() + guardrail.map_or(self.wait, |g| g.timeout.min(self.wait));
        loop {
            let text = question_text(q, problem.as_deref());
            let mut data = json!({"question": q});
            if let Some(p) = &problem {
                data["problem"] = json!(p);
            }
            self.task
                .update(TaskState::InputRequired, &text, Some(data));
            let message = match tokio::time::timeout_at(deadline, self.task.next_message()).await {
                Ok(Some(m)) => m,
                // Cancelled: the run is dropped where it stands (its journal is closed
                // by whoever cancelled it); it must not go on without an answer.
                Ok(None) => std::future::pending().await,
                Err(_) if guardrail.is_some_and(|g| g.timeout <= self.wait) => {
                    let g = guardrail.expect("checked");
                    self.task.update(
                        TaskState::Working,
                        &format!(
                            "no decision on {} within {}s: {}",
                            q.element,
                            g.timeout.as_secs(),
                            crate::app::guardrail::DENIED
                        ),
                        None,
                    );
                    return Ok((json!({"flows": [g.deny_flow]}), Decider::Timeout));
                }
                Err(_) => {
                    let why = format!(
                        "the A2A caller did not answer within {}s",
                        self.wait.as_secs()
                    );
                    return Err(ReasonError::no_answer(&q.element, why));
                }
            };
            match given(q, &message).and_then(|g| park::check_answer(q, &g)) {
                Ok(answer) => {
                    self.task.update(
                        TaskState::Working,
                        &format!("answer for {} accepted", q.element),
                        None,
                    );
                    return Ok((answer, Decider::Human));
                }
                Err(e) => problem = Some(e),
            }
        }
    }

    fn answers(&self, q: &Question, answer: Value) -> Answers {
        self.answers_by(q, answer, Decider::Human)
    }

    fn answers_by(&self, q: &Question, answer: Value, by: Decider) -> Answers {
        let reason = match by {
            Decider::Timeout => format!(
                "no decision from the A2A caller (task {}) in time: {}",
                self.task.id(),
                crate::app::guardrail::DENIED
            ),
            _ => format!("answered by the A2A caller (task {})", self.task.id()),
        };
        Answers::new(HashMap::from([(
            q.key.clone(),
            Recorded {
                answer,
                decided_by: by,
                reason: Some(reason),
                by: None,
            },
        )]))
    }
}

/// The question's key is the control point's idempotency key (or one made up when it has
/// none): the recorded answer is found under it.
fn keyed(ctx: &mut crate::bridge::ControlPointContext, q: &Question) {
    if ctx.idempotency_key.is_none() {
        ctx.idempotency_key = Some(q.key.clone());
    }
}

impl Reasoner for Caller {
    fn describe(&self) -> String {
        "the A2A caller (input-required)".to_string()
    }

    fn task(&self, mut req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move {
            let q = park::task_question(&req);
            let answer = self.ask(&q).await?;
            keyed(&mut req.context, &q);
            self.answers(&q, answer).task(req).await
        })
    }

    fn gateway(
        &self,
        mut req: GatewayRequest,
    ) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            let mut q = park::gateway_question(&req);
            q.approval = self.guardrails.get(&q.element).map(Guardrail::ask);
            let (answer, by) = self.ask_by(&q).await?;
            keyed(&mut req.context, &q);
            self.answers_by(&q, answer, by).gateway(req).await
        })
    }

    fn hook(&self, mut req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            let q = park::hook_question(&req);
            let answer = self.ask(&q).await?;
            keyed(&mut req.context, &q);
            self.answers(&q, answer).hook(req).await
        })
    }
}

/// What the caller's message answers: a DataPart (or JSON text) in the form `runs answer`
/// records (`{flow}`, `{action, target}`, `{outputs}`, `{choice}`; a task's outputs may
/// also come bare), or plain text: a flow's id or label or a choice number (gateway), an
/// action or a choice number (hook), the value of a task's only output.
fn given(q: &Question, m: &Incoming) -> Result<Given, String> {
    if let Some(approval) = &q.approval {
        return approved(approval, m);
    }
    let data = m.data.clone().or_else(|| {
        serde_json::from_str::<Value>(crate::a2a::strip_fence(m.text.trim()))
            .ok()
            .filter(Value::is_object)
    });
    if let Some(data) = data {
        let Value::Object(map) = &data else {
            return Err(format!("{data} is not an answer (an object)"));
        };
        let known = [
            "flow", "flows", "action", "target", "targets", "outputs", "choice", "error",
        ];
        if matches!(q.offered, Offered::Outputs { .. })
            && !map.keys().any(|k| known.contains(&k.as_str()))
        {
            return Ok(Given {
                outputs: Some(data),
                ..Given::default()
            });
        }
        return Given::from_value(&data);
    }
    let text = m.text.trim();
    if text.is_empty() {
        return Err("the message holds no answer".to_string());
    }
    let choice = text.parse::<usize>().ok();
    match &q.offered {
        Offered::Flows { flows, .. } => {
            if let Some(n) = choice {
                return Ok(Given {
                    choice: Some(n),
                    ..Given::default()
                });
            }
            let lower = text.to_lowercase();
            let named = flows.iter().find(|f| {
                f.id == text
                    || f.label
                        .as_deref()
                        .is_some_and(|l| l.to_lowercase() == lower)
            });
            Ok(Given {
                flows: vec![named.map_or(text.to_string(), |f| f.id.clone())],
                ..Given::default()
            })
        }
        Offered::Actions { .. } => Ok(Given {
            choice,
            action: choice.is_none().then(|| text.to_string()),
            ..Given::default()
        }),
        Offered::ToolCall { .. } => match crate::app::guardrail::decision_of(text) {
            Some(approved) => Ok(Given {
                confirm: Some(approved),
                ..Given::default()
            }),
            None => Err("answer `approve` or `deny`".to_string()),
        },
        Offered::Outputs { outputs, kinds } => match outputs.as_slice() {
            [one] => {
                // `true`, `42`, `[1]` are values unless the output takes text.
                let value = match serde_json::from_str::<Value>(text) {
                    Ok(v) if kinds.get(one) != Some(&crate::vocab::VarKind::String) => v,
                    _ => json!(text),
                };
                Ok(Given {
                    outputs: Some(json!({ one: value })),
                    ..Given::default()
                })
            }
            _ => Err(format!(
                "answer with an object of the outputs ({}) as a DataPart or JSON text",
                outputs.join(", ")
            )),
        },
    }
}

/// A guardrail's answer: `approve` or `deny` as text, or a DataPart `{"decision":
/// "approve"|"deny", "by": NAME}` (`by` is needed when the guardrail names its
/// approvers); a flow's id as for any gateway (`{"flow": id}`) is taken too.
fn approved(approval: &crate::vocab::ApprovalAsk, m: &Incoming) -> Result<Given, String> {
    let data = m.data.clone().or_else(|| {
        serde_json::from_str::<Value>(crate::a2a::strip_fence(m.text.trim()))
            .ok()
            .filter(Value::is_object)
    });
    let (decision, by) = match &data {
        Some(d) => (
            d.get("decision")
                .and_then(Value::as_str)
                .map(str::to_string),
            d.get("by").and_then(Value::as_str).map(str::to_string),
        ),
        None => (Some(m.text.trim().to_string()), None),
    };
    let flow = match decision.as_deref() {
        Some(d) => match crate::app::guardrail::decision_of(d) {
            Some(true) => approval.approve_flow.clone(),
            Some(false) => approval.deny_flow.clone(),
            None => return Err(format!("`{d}` is neither `approve` nor `deny`")),
        },
        None => match data
            .as_ref()
            .and_then(|d| d.get("flow"))
            .and_then(Value::as_str)
        {
            Some(f) if f == approval.approve_flow || f == approval.deny_flow => f.to_string(),
            _ => {
                return Err(
                    "answer `approve` or `deny` (or a DataPart {\"decision\": ..., \"by\": ...})"
                        .to_string(),
                );
            }
        },
    };
    if !crate::app::guardrail::admits(&approval.approvers, by.as_deref()) {
        return Err(format!(
            "{} may not decide this guardrail: its approvers are {} (answer with a DataPart \
             {{\"decision\": ..., \"by\": NAME}})",
            by.map_or_else(|| "an unnamed approver".to_string(), |b| format!("`{b}`")),
            approval.approvers.join(", ")
        ));
    }
    Ok(Given {
        flows: vec![flow],
        ..Given::default()
    })
}

/// The question as the caller reads it.
fn question_text(q: &Question, problem: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(p) = problem {
        out.push_str(&format!("That answer cannot be used: {p}\n"));
    }
    let name = q
        .name
        .as_deref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    match &q.offered {
        Offered::Flows { .. } if q.approval.is_some() => {
            let a = q.approval.as_ref().expect("checked");
            out.push_str(&format!(
                "Guardrail {}{name} needs an approval: answer `approve` (takes {}) or `deny` \
                 (takes {}){}",
                q.element,
                a.approve_flow,
                a.deny_flow,
                if a.approvers.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; only {} may decide: a DataPart {{\"decision\": \"approve\", \"by\": NAME}}",
                        a.approvers.join(", ")
                    )
                }
            ));
        }
        Offered::Flows { flows, multiple } => {
            out.push_str(&format!(
                "Gateway {}{name} needs a decision: answer with {} of these flows (its id, its \
                 label or its number, or a DataPart {{\"flow\": id}}):",
                q.element,
                if *multiple { "one or more" } else { "one" }
            ));
            for (i, f) in flows.iter().enumerate() {
                out.push_str(&format!(
                    "\n{}. {}{} -> {}",
                    i + 1,
                    f.id,
                    f.label
                        .as_deref()
                        .map(|l| format!(" \"{l}\""))
                        .unwrap_or_default(),
                    f.target
                ));
            }
        }
        Offered::Actions { actions, .. } => {
            out.push_str(&format!(
                "Hook {}{name} needs a decision: answer with one action (its name or number, \
                 or a DataPart {{\"action\": ..., \"target\": ...}}):",
                q.element
            ));
            for (i, a) in actions.iter().enumerate() {
                out.push_str(&format!("\n{}. {}", i + 1, a.as_str()));
            }
        }
        Offered::ToolCall {
            tool,
            arguments,
            why,
            ..
        } => {
            out.push_str(&format!(
                "The agent of task {}{name} asks to call {tool} with {arguments}: answer `approve` or `deny` ({why}).",
                q.element
            ));
        }
        Offered::Outputs { outputs, .. } => {
            out.push_str(&format!(
                "Task {}{name} needs a person: answer its outputs ({}) as a DataPart object \
                 (or JSON text{}).",
                q.element,
                outputs.join(", "),
                if outputs.len() == 1 {
                    "; plain text is the value of its only output"
                } else {
                    ""
                }
            ));
        }
    }
    if let Some(i) = &q.instruction {
        out.push_str(&format!("\nInstruction: {i}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{ControlPointKind, HookAction, OfferedFlow, VarKind};

    #[test]
    fn whole_floats_become_integers_where_the_app_declares_integers() {
        let app = crate::app::registry::app_at(std::path::Path::new("applications/claim_intake"));
        let loaded = crate::app::load_app(&app);
        let given: Map<String, Value> =
            serde_json::from_value(json!({"amount": 800.0, "claim_id": "c-1", "other": 2.0}))
                .unwrap();
        let typed = integers_as_declared(&loaded, given);
        // `amount: 0` is declared an integer; `other` is not declared; a text stays text.
        assert_eq!(
            Value::Object(typed),
            json!({"amount": 800, "claim_id": "c-1", "other": 2.0})
        );
    }

    fn question(offered: Offered) -> Question {
        Question {
            key: "r:X:1".into(),
            kind: ControlPointKind::Task,
            element: "X".into(),
            name: None,
            offered,
            policy: None,
            policy_path: None,
            instruction: None,
            deadline_ms: None,
            on_timeout: None,
            approval: None,
            remote: None,
        }
    }

    fn text(t: &str) -> Incoming {
        Incoming {
            data: None,
            text: t.into(),
        }
    }

    fn checked(q: &Question, m: &Incoming) -> Result<Value, String> {
        given(q, m).and_then(|g| park::check_answer(q, &g))
    }

    #[test]
    fn a_gateway_is_answered_by_id_label_number_or_data() {
        let mut q = question(Offered::Flows {
            flows: vec![
                OfferedFlow {
                    id: "F_a".into(),
                    target: "A".into(),
                    label: Some("Bank transfer".into()),
                },
                OfferedFlow {
                    id: "F_b".into(),
                    target: "B".into(),
                    label: None,
                },
            ],
            multiple: false,
        });
        q.kind = ControlPointKind::Gateway;
        let flows = |v: Value| v["flows"].clone();
        assert_eq!(flows(checked(&q, &text("F_b")).unwrap()), json!(["F_b"]));
        assert_eq!(
            flows(checked(&q, &text("bank transfer")).unwrap()),
            json!(["F_a"])
        );
        assert_eq!(flows(checked(&q, &text("2")).unwrap()), json!(["F_b"]));
        let data = Incoming {
            data: Some(json!({"flow": "F_a"})),
            text: String::new(),
        };
        assert_eq!(flows(checked(&q, &data).unwrap()), json!(["F_a"]));
        let wrong = checked(&q, &text("cheque")).unwrap_err();
        assert!(wrong.contains("F_a, F_b"), "{wrong}");
        assert!(question_text(&q, Some("nope")).starts_with("That answer cannot be used: nope"));
    }

    #[test]
    fn a_task_is_answered_by_its_outputs_bare_or_as_typed_text() {
        let q = question(Offered::Outputs {
            outputs: vec!["approved".into()],
            kinds: [("approved".to_string(), VarKind::Boolean)].into(),
        });
        let bare = Incoming {
            data: Some(json!({"approved": true})),
            text: String::new(),
        };
        assert_eq!(checked(&q, &bare).unwrap()["outputs"]["approved"], true);
        assert_eq!(
            checked(&q, &text("false")).unwrap()["outputs"]["approved"],
            false
        );
        assert!(checked(&q, &text("yes")).unwrap_err().contains("boolean"));
        // A text output keeps text that parses as JSON.
        let note = question(Offered::Outputs {
            outputs: vec!["note".into()],
            kinds: [("note".to_string(), VarKind::String)].into(),
        });
        assert_eq!(
            checked(&note, &text("42")).unwrap()["outputs"]["note"],
            "42"
        );
        let two = question(Offered::Outputs {
            outputs: vec!["a".into(), "b".into()],
            kinds: Default::default(),
        });
        assert!(given(&two, &text("x")).unwrap_err().contains("a, b"));
        assert!(given(&two, &text("")).is_err());
    }

    #[test]
    fn a_hook_is_answered_by_an_action_or_its_number() {
        let mut q = question(Offered::Actions {
            actions: vec![HookAction::Continue, HookAction::Terminate],
            targets: Vec::new(),
            insertable: Vec::new(),
            settable: Vec::new(),
            flow_target: None,
        });
        q.kind = ControlPointKind::Hook;
        assert_eq!(
            checked(&q, &text("terminate")).unwrap()["action"],
            "terminate"
        );
        assert_eq!(checked(&q, &text("1")).unwrap()["action"], "continue");
    }

    #[test]
    fn a_guardrail_is_answered_approve_or_deny_by_an_approver() {
        let mut q = question(Offered::Flows {
            flows: vec![
                OfferedFlow {
                    id: "F_yes".into(),
                    target: "Push".into(),
                    label: None,
                },
                OfferedFlow {
                    id: "F_no".into(),
                    target: "Abort".into(),
                    label: None,
                },
            ],
            multiple: false,
        });
        q.kind = ControlPointKind::Gateway;
        q.approval = Some(crate::vocab::ApprovalAsk {
            variable: "approval_status".into(),
            approve_flow: "F_yes".into(),
            deny_flow: "F_no".into(),
            approvers: Vec::new(),
        });
        let flows = |v: Value| v["flows"].clone();
        assert_eq!(
            flows(checked(&q, &text("approve")).unwrap()),
            json!(["F_yes"])
        );
        assert_eq!(
            flows(checked(&q, &text("Denied")).unwrap()),
            json!(["F_no"])
        );
        let data = |d: Value| Incoming {
            data: Some(d),
            text: String::new(),
        };
        assert_eq!(
            flows(checked(&q, &data(json!({"decision": "yes"}))).unwrap()),
            json!(["F_yes"])
        );
        assert_eq!(
            flows(checked(&q, &data(json!({"flow": "F_no"}))).unwrap()),
            json!(["F_no"])
        );
        assert!(
            checked(&q, &text("F_maybe"))
                .unwrap_err()
                .contains("neither")
        );
        assert!(question_text(&q, None).contains("answer `approve` (takes F_yes)"));
        // Only a named approver may decide.
        if let Some(a) = q.approval.as_mut() {
            a.approvers = vec!["alice".into()];
        }
        let refused = checked(&q, &text("approve")).unwrap_err();
        assert!(
            refused.contains("an unnamed approver may not decide"),
            "{refused}"
        );
        assert!(checked(&q, &data(json!({"decision": "approve", "by": "bob"}))).is_err());
        assert_eq!(
            flows(checked(&q, &data(json!({"decision": "approve", "by": "alice"}))).unwrap()),
            json!(["F_yes"])
        );
    }

    #[test]
    fn app_names_are_path_segments() {
        assert_eq!(slug("loan_approval"), "loan_approval");
        assert_eq!(slug("my app/x"), "my-app-x");
        assert_eq!(slug(".hidden"), "app-.hidden");
    }
}
