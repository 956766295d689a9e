//! A run planned once: [`RunSpec`] (what a host asks for: the app, its engine, the
//! journal's place and durability, where answers come from, budgets, inputs) resolved
//! against the app, its config and the environment into a [`RunPlan`] (the checked app,
//! the engine, the reasoner chain, the initial variables typed against the app's
//! declarations, the child runs' settings), which [`super::launch`] runs. Every host that
//! starts or continues a run on the terminal's path — `start`, `runs resume`, `runs
//! replay`, `worker`, `test` — asks for one here; nothing downstream re-derives it.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::app::registry::AppRef;
use crate::app::scenario::{self, Scenario};
use crate::app::{EngineKind, FlowConfig, LoadedApp, load_app};
use crate::bridge::child::ChildRuns;
use crate::check::check_app_on;
use crate::diag::Diagnostic;
use crate::engine::WorkflowEngine;
use crate::engine::external::{ExternalEngine, ExternalSettings};
use crate::engine::flowable::{FlowableEngine, FlowableSettings};
use crate::engine::kogito::{KogitoEngine, KogitoSettings};
use crate::engine::native::NativeEngine;
use crate::journal::store::Journal;
use crate::journal::{Durability, Event};
use crate::reason::park::Answers;
use crate::reason::scripted::ScriptedReasoner;
use crate::reason::{Reasoner, Recorder, Rules};
use crate::vocab::{Taint, Untrusted};

use super::chain::{self, ChainError, Judgement, Sources};
use super::children::AppChildren;

/// Why a run cannot be planned: nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The app does not validate (on the engine chosen, when it is not the config's).
    #[error("app `{app}` {}", match engine {
        Some(kind) => format!("cannot run on the {kind} engine ({} errors)", errors.len()),
        None => format!("does not validate ({} errors)", errors.len()),
    })]
    Invalid {
        app: String,
        /// The engine chosen instead of the config's, when the app fails on it.
        engine: Option<EngineKind>,
        errors: Vec<Diagnostic>,
        /// What the user named the app with (for the help line).
        named: String,
    },
    /// Its reasoner chain cannot be built.
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Scenario(#[from] crate::app::scenario::ScenarioError),
    /// The apps a scenario serves beside its run cannot be served.
    #[error(transparent)]
    Agents(#[from] super::agent::AgentError),
    /// Anything else refused (inputs, the engine's settings, a scenario, a resumed run on
    /// a changed app), with what to do about it.
    #[error("{message}")]
    Refused {
        message: String,
        help: Option<String>,
    },
}

impl PlanError {
    pub fn new(message: impl Into<String>) -> Self {
        PlanError::Refused {
            message: message.into(),
            help: None,
        }
    }

    pub fn with_help(self, help: impl Into<String>) -> Self {
        match self {
            PlanError::Refused { message, .. } => PlanError::Refused {
                message,
                help: Some(help.into()),
            },
            other => other,
        }
    }
}

impl super::Help for PlanError {
    fn help(&self) -> Option<String> {
        match self {
            PlanError::Invalid {
                engine: None,
                named,
                ..
            } => Some(format!("run `cuga-flo validate {named}` for the details")),
            PlanError::Invalid { .. } | PlanError::Agents(_) | PlanError::Scenario(_) => None,
            PlanError::Chain(e) => super::Help::help(e),
            PlanError::Refused { help, .. } => help.clone(),
        }
    }
}

/// How the native engine reaches the control points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bridge {
    /// In-process, through the bridge's Rust contract.
    #[default]
    Direct,
    /// Over an in-process MCP connection (as an external engine would).
    Mcp,
}

/// What a host asks to run (or to continue: see [`RunPlan::resolve`]'s `resumed`).
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The app.
    pub app: AppRef,
    /// What the user named it with (for messages: `cuga-flo start <app_arg>`).
    pub app_arg: String,
    /// The apps folder (the scenario's sibling agents, child runs' called apps).
    pub apps_dir: PathBuf,
    /// A scenario of the app: its inputs, answers and expectations.
    pub scenario: Option<String>,
    /// An answers file.
    pub answers: Option<PathBuf>,
    /// Where to write a cassette of every answer given.
    pub record: Option<PathBuf>,
    /// A cassette to answer from (only).
    pub replay: Option<PathBuf>,
    /// `NAME=VALUE` assignments, typed by the variables' declared defaults.
    pub vars: Vec<String>,
    /// A JSON object of initial variables in a file, or `-` for stdin.
    pub input: Option<String>,
    /// The engine instead of the config's.
    pub engine: Option<EngineKind>,
    /// The engine's URL instead of the config's.
    pub engine_url: Option<String>,
    /// Where the run is journalled, and how.
    pub run_dir: PathBuf,
    pub durability: Durability,
    /// Node entries allowed before the run fails.
    pub step_budget: Option<u64>,
    pub no_model: bool,
    /// Never ask at the terminal: a question for a person parks the run.
    pub detach: bool,
    /// A question nobody can answer fails the run instead of parking it.
    pub no_park: bool,
    /// Who answers at the terminal.
    pub by: Option<String>,
    pub bridge: Bridge,
    /// How long the run waits in-process for a timer before it parks.
    pub max_wait: Option<u64>,
    /// Set by `runs replay`: the run's id, its recorded answers and its variables.
    pub preset: Option<Box<Preset>>,
    /// Take over an instance of the engine started outside cuga-flo (a worker fleet on
    /// Flowable), journalled as run `run_id`.
    pub adopt: Option<Adoption>,
    /// When the engine stops answering mid-run, park the run instead of failing it
    /// ([`crate::engine::RunRequest::lost_parks`]).
    pub lost_parks: bool,
}

/// An engine's instance a run takes over ([`RunSpec::adopt`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Adoption {
    /// The run's id.
    pub run_id: String,
    /// The engine's instance.
    pub instance: String,
    /// Its variables when taken over: the run's inputs (untrusted).
    pub variables: Map<String, Value>,
}

impl RunSpec {
    /// A run of `app` (named `app_arg` by the user) journalled under `run_dir`, every
    /// other setting the config's or off.
    pub fn new(app: AppRef, app_arg: String, apps_dir: PathBuf, run_dir: PathBuf) -> RunSpec {
        RunSpec {
            app,
            app_arg,
            apps_dir,
            scenario: None,
            answers: None,
            record: None,
            replay: None,
            vars: Vec::new(),
            input: None,
            engine: None,
            engine_url: None,
            run_dir,
            durability: Durability::default(),
            step_budget: None,
            no_model: false,
            detach: false,
            no_park: false,
            by: None,
            bridge: Bridge::Direct,
            max_wait: None,
            preset: None,
            adopt: None,
            lost_parks: false,
        }
    }
}

/// A run continued from its journal: the journal reopened for append (its lock held), the
/// records it holds, and the answers recorded with `runs answer`.
pub struct Resumed {
    pub run_id: String,
    pub journal: Journal,
    /// The run's initial variables (its `run_started`).
    pub variables: Map<String, Value>,
    /// Which of them are untrusted (`None`: its journal does not say).
    pub untrusted: Option<Untrusted>,
    /// What its model calls spent so far (counted against the run's budget).
    pub model_usage: crate::journal::ModelUsage,
    pub records: Vec<crate::journal::Record>,
    pub answers: Answers,
    /// A torn last line cut off when the journal was reopened.
    pub repaired: Option<String>,
}

impl std::fmt::Debug for Resumed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resumed")
            .field("run_id", &self.run_id)
            .field("records", &self.records.len())
            .finish_non_exhaustive()
    }
}

/// A run prepared by another command (`runs replay`): its id, the only answers it may use
/// (checked against their recorded digests), and its initial variables.
#[derive(Debug, Clone)]
pub struct Preset {
    pub run_id: String,
    pub cassette: Value,
    /// Where the cassette came from, for the stream's header.
    pub source: String,
    pub variables: Map<String, Value>,
    /// Which of them are untrusted (`None`: the journal does not say).
    pub untrusted: Option<Untrusted>,
}

/// A run ready to launch: everything resolved before it starts.
pub struct RunPlan {
    pub spec: RunSpec,
    /// The app, checked (its remote agents pointed at the scenario's served siblings).
    pub loaded: LoadedApp,
    pub engine: Arc<dyn WorkflowEngine>,
    pub reasoner: Arc<dyn Reasoner>,
    pub recorder: Option<Arc<Recorder>>,
    pub variables: Map<String, Value>,
    /// Which of `variables` are untrusted, and where each came from (`None`: unknown).
    pub untrusted: Option<Untrusted>,
    pub scenario: Option<Scenario>,
    pub resumed: Option<Box<Resumed>>,
    pub children: Option<Arc<dyn ChildRuns>>,
    /// Where the child runs find this run's graph-mode writer, once it is open.
    pub parent_graph: super::children::ParentGraph,
    /// The clients of the app's remote agents (the harness's and the consultations').
    pub remotes: Arc<crate::reason::remote::Remotes>,
    /// The sibling apps serving the scenario's remote agents, for the run's length
    /// ([`super::agent::ScenarioAgents::stop`] them after it).
    pub served: Option<super::agent::ScenarioAgents>,
}

impl RunPlan {
    /// Plan the run `spec` asks for (with `resumed`: the continuation of a journalled
    /// run, on the app it started with). The scenario's sibling agents start on
    /// `runtime`. A diagnostic-free refusal writes nothing.
    pub fn resolve(
        spec: RunSpec,
        resumed: Option<Resumed>,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<RunPlan, PlanError> {
        let loaded = load_app(&spec.app);
        let kind = loaded
            .config
            .as_ref()
            .map(|config| engine_kind(config, &spec))
            .transpose()?;
        let diags = check_app_on(&loaded, kind);
        let errors: Vec<Diagnostic> = diags.into_iter().filter(|d| d.is_error()).collect();
        if !errors.is_empty() {
            let chosen =
                kind.filter(|k| loaded.config.as_ref().is_some_and(|c| c.engine.kind != *k));
            return Err(PlanError::Invalid {
                app: spec.app.name.clone(),
                engine: chosen,
                errors,
                named: spec.app_arg.clone(),
            });
        }
        let (Some(config), Some(kind)) = (loaded.config.as_ref(), kind) else {
            return Err(PlanError::new("the app has no flow config"));
        };
        if let Some(r) = &resumed {
            same_app(&loaded, r)?;
        }
        if let Some(adopt) = &spec.adopt
            && (kind != EngineKind::Flowable || !matches!(spec.bridge, Bridge::Direct))
        {
            return Err(PlanError::new(format!(
                "instance {} cannot be taken over: only runs on Flowable, reached directly, \
                 can take over an instance started outside cuga-flo",
                adopt.instance
            )));
        }
        let engine = engine(config, kind, &spec)?;
        let scenario = match &spec.scenario {
            Some(name) => Some(scenario::load(&loaded.dir, name)?),
            None => None,
        };
        let (variables, untrusted) = match &resumed {
            Some(r) => (r.variables.clone(), r.untrusted.clone()),
            None => initial_variables(&loaded, scenario.as_ref(), &spec)?,
        };
        // The scenario's remote agents played by sibling apps: served here, for this run,
        // and the app's `remote_agents` pointed at them.
        let (loaded, served) = match scenario.as_ref() {
            Some(s) if !s.remote_agents.is_empty() => {
                let (loaded, served) = serve_scenario_agents(runtime, &loaded, s, &spec)?;
                (loaded, Some(served))
            }
            _ => (loaded, None),
        };
        let Some(config) = loaded.config.as_ref() else {
            return Err(PlanError::new("the app has no flow config"));
        };
        let answered = resumed.as_ref().map(|r| &r.answers);
        let spent = resumed.as_ref().map(|r| r.model_usage);
        // Read once: the run's chain answers from it, its child runs get what it
        // addresses to the elements they run.
        let answers = chain::AnswersFile::of(spec.answers.as_deref())?;
        // One set of clients of the app's remote agents for the harness (delegations) and
        // the reasoners (consultations): both journal their remote tasks and follow them.
        let remotes = Arc::new(
            crate::reason::remote::Remotes::of(config)
                .served_here(scenario.iter().flat_map(|s| s.remote_agents.keys())),
        );
        let (reasoner, recorder) = reasoner(
            config,
            &spec,
            Sources {
                scenario: scenario.as_ref(),
                answers: answers.as_ref(),
                no_model: spec.no_model,
                person: true,
                by: spec.by.as_deref(),
                record: spec.record.is_some(),
                park: !spec.no_park,
                detach: spec.detach,
                answered,
                spent,
                process: loaded.process(),
                approvals_in: None,
                given: &[],
                remotes: Some(&remotes),
            },
        )?;
        let given = chain::given_to_calls(scenario.as_ref(), answers.as_ref())?;
        // Call activities that name a process run it as a child run (on every engine: an
        // external one's, Flowable's or Kogito's call activity is answered so).
        let parent_graph = super::children::ParentGraph::default();
        let children: Arc<dyn ChildRuns> = Arc::new(AppChildren {
            // The apps folder the calling app is in (as `validate` looks there).
            apps_dir: crate::app::called::apps_dir(&loaded)
                .map_or_else(|| spec.apps_dir.clone(), |d| d.to_path_buf()),
            caller: loaded.clone(),
            run_dir: spec.run_dir.clone(),
            durability: spec.durability,
            no_model: spec.no_model,
            given,
            depth: 0,
            asker: None,
            graph: parent_graph.clone(),
        });
        Ok(RunPlan {
            spec,
            children: Some(children),
            parent_graph,
            loaded,
            engine,
            reasoner,
            recorder,
            variables,
            untrusted,
            scenario,
            resumed: resumed.map(Box::new),
            remotes,
            served,
        })
    }
}

/// Serve the sibling apps that play the scenario's remote agents (`remote_agents: {<name>:
/// {serve: <app>, answers}}`) over A2A on 127.0.0.1, and point the app's agents at them:
/// the app as the run sees it. An agent whose config sends a bearer token (`auth: {type:
/// bearer, token_env: VAR}`) is served with the value of `VAR` as its token (`cuga-flo
/// test` sets `VAR` to a fresh one for the scenario when it is not set).
fn serve_scenario_agents(
    runtime: &tokio::runtime::Runtime,
    loaded: &LoadedApp,
    scenario: &Scenario,
    spec: &RunSpec,
) -> Result<(LoadedApp, super::agent::ScenarioAgents), PlanError> {
    use crate::app::RemoteAuth;
    let config = loaded
        .config
        .as_ref()
        .ok_or_else(|| PlanError::new("the app has no flow config"))?;
    let apps_dir = crate::app::called::apps_dir(loaded)
        .map_or_else(|| spec.apps_dir.clone(), |d| d.to_path_buf());
    let mut served = Vec::new();
    let mut names = Vec::new();
    for (name, agent) in &scenario.remote_agents {
        let Some(remote) = config.remote_agents.iter().find(|r| r.name.value == *name) else {
            let known: Vec<&str> = (config.remote_agents.iter())
                .map(|r| r.name.value.as_str())
                .collect();
            let err = PlanError::new(format!(
                "{}: app `{}` has no remote agent `{name}`",
                agent.at, loaded.name
            ));
            return Err(match crate::diag::did_you_mean(name, known.iter().copied()) {
                Some(close) => err.with_help(format!("did you mean `{close}`?")),
                None if known.is_empty() => err.with_help(
                    "a scenario serves the agents the flow config declares under `remote_agents:`",
                ),
                None => err.with_help(format!("its remote agents: {}", known.join(", "))),
            });
        };
        let apps = crate::app::registry::discover(&apps_dir).map_err(|e| {
            PlanError::new(format!(
                "cannot read the apps folder {}: {e}",
                apps_dir.display()
            ))
        })?;
        let Some(app) = apps
            .iter()
            .find(|a| a.name == agent.serve && a.dir != loaded.dir)
        else {
            let names: Vec<&str> = (apps.iter())
                .filter(|a| a.dir != loaded.dir)
                .map(|a| a.name.as_str())
                .collect();
            let err = PlanError::new(format!(
                "{}: no app `{}` in {} to serve as remote agent `{name}`",
                agent.serve_at,
                agent.serve,
                apps_dir.display()
            ));
            return Err(
                match crate::diag::did_you_mean(&agent.serve, names.iter().copied()) {
                    Some(close) => err.with_help(format!("did you mean `{close}`?")),
                    None => err.with_help(
                        "`serve:` names a sibling app (another folder of the same apps folder)",
                    ),
                },
            );
        };
        let served_app = chain::load_checked(app).map_err(|errors| {
            PlanError::new(format!(
                "{}: app `{}` (serving remote agent `{name}`) does not validate: {}",
                agent.serve_at,
                app.name,
                errors.join("; ")
            ))
        })?;
        let Some(served_config) = served_app.config.as_ref() else {
            return Err(PlanError::new(format!(
                "{}: app `{}` has no flow config",
                agent.serve_at, app.name
            )));
        };
        // The served app's own answers, checked against its control points.
        let answers = Scenario {
            name: format!("{}: remote agent {name}", scenario.name),
            path: scenario.path.clone(),
            answers: agent.answers.clone(),
            ..Scenario::default()
        };
        let sources = Sources {
            scenario: Some(&answers),
            no_model: spec.no_model,
            process: served_app.process(),
            ..Sources::default()
        };
        let (judge, _) = chain::judgement(served_config, &sources)
            .map_err(|e| PlanError::new(format!("{}: {}", agent.at, e)))?;
        let token = match &remote.auth {
            None => None,
            Some(RemoteAuth::Bearer { token_env }) => match std::env::var(&token_env.value) {
                Ok(v) if !v.is_empty() => Some(crate::secret::Secret::new(v)),
                _ => {
                    return Err(PlanError::new(format!(
                        "remote agent `{name}` sends a bearer token from `{}`, which is not set",
                        token_env.value
                    ))
                    .with_help(format!(
                        "set it to any value: the served `{}` takes it as its token \
                         (`cuga-flo test` sets one itself)",
                        agent.serve
                    )));
                }
            },
            Some(RemoteAuth::ApiKey { .. }) => {
                return Err(PlanError::new(format!(
                    "{}: remote agent `{name}` sends an API key; a served app takes a bearer \
                     token only",
                    agent.at
                )));
            }
        };
        served.push(super::agent::ScenarioServed {
            loaded: served_app,
            judge,
            token,
        });
        names.push(name.clone());
    }
    let (agents, urls) = runtime.block_on(super::agent::ScenarioAgents::start(
        served,
        &apps_dir,
        &spec.run_dir,
        spec.durability,
        spec.no_model,
    ))?;
    let mut loaded = loaded.clone();
    if let Some(config) = loaded.config.as_mut() {
        for (name, url) in names.iter().zip(urls) {
            tracing::info!("scenario: remote agent `{name}` served at {url}");
            if let Some(r) = config
                .remote_agents
                .iter_mut()
                .find(|r| r.name.value == *name)
            {
                let span = r.url.as_ref().map_or(r.span, |u| u.span);
                r.url = Some(crate::app::Located::new(url, span));
            }
        }
    }
    Ok((loaded, agents))
}

/// A run resumes on the app it started with: the same files (their digest in the run's
/// `run_started`), or its journal would not re-execute as it was written.
fn same_app(loaded: &LoadedApp, resumed: &Resumed) -> Result<(), PlanError> {
    let started = resumed.records.first().and_then(|r| match &r.event {
        Event::RunStarted { app_digest, .. } => app_digest.clone(),
        _ => None,
    });
    match started {
        Some(digest) if digest != loaded.digest() => Err(PlanError::new(format!(
            "app `{}` has changed since run `{}` started (its files' digest differs): a run \
             resumes on the app it started with",
            loaded.name, resumed.run_id
        ))
        .with_help(
            "restore the app's flow config, BPMN model and policies as they were, or start a \
             new run",
        )),
        _ => Ok(()),
    }
}

/// Which engine the run goes to: the config's, or `--engine` / `--engine-url`.
fn engine_kind(config: &FlowConfig, spec: &RunSpec) -> Result<EngineKind, PlanError> {
    let kind = match (spec.engine, &spec.engine_url) {
        (Some(kind), _) => kind,
        // A URL alone: the config's engine when it is reached by URL, else an MCP engine.
        (None, Some(_)) if config.engine.kind.is_remote() => config.engine.kind,
        (None, Some(_)) => EngineKind::Mcp,
        (None, None) => config.engine.kind,
    };
    if spec.engine_url.is_some() && kind == EngineKind::Native {
        return Err(PlanError::new(
            "--engine-url names a remote engine, but the run goes to the native engine",
        )
        .with_help("leave out --engine native, or pass --engine mcp or --engine flowable"));
    }
    Ok(kind)
}

/// The engine of `kind`, set up from the config and the command line.
fn engine(
    config: &FlowConfig,
    kind: EngineKind,
    spec: &RunSpec,
) -> Result<Arc<dyn WorkflowEngine>, PlanError> {
    let url = spec.engine_url.as_deref();
    match kind {
        EngineKind::Native => Ok(Arc::new(NativeEngine::new())),
        EngineKind::Mcp => {
            let settings = ExternalSettings::from_config(&config.engine, url)
                .map_err(|e| PlanError::new(e.to_string()))?;
            Ok(Arc::new(ExternalEngine::new(settings)))
        }
        EngineKind::Flowable => {
            let settings = FlowableSettings::from_config(&config.engine, url)
                .map_err(|e| settings_refused(e.to_string(), config, kind, spec))?;
            Ok(Arc::new(FlowableEngine::new(settings)))
        }
        EngineKind::Kogito => {
            let settings = KogitoSettings::from_config(&config.engine, url)
                .map_err(|e| settings_refused(e.to_string(), config, kind, spec))?;
            Ok(Arc::new(KogitoEngine::new(settings)))
        }
    }
}

/// Why a server-bound engine cannot be set up: a server that does not answer is said
/// first (a missing password matters only once there is a server to give it to).
fn settings_refused(
    why: String,
    config: &FlowConfig,
    kind: EngineKind,
    spec: &RunSpec,
) -> PlanError {
    let url = (spec.engine_url.as_deref()).or(config.engine.url.as_ref().map(|u| u.value.as_str()));
    let message = match url {
        Some(u) if super::ready::answers(u) == Some(false) => format!(
            "no {} server answers at {} (and {why})",
            match kind {
                EngineKind::Flowable => "Flowable",
                _ => "Kogito",
            },
            crate::secret::without_userinfo(u)
        ),
        _ => why,
    };
    PlanError::new(message).with_help(server_help(config, kind, spec))
}

/// The server an app bound to Flowable or Kogito runs on (its URL without credentials),
/// how to start one, and how to run the app without it.
pub fn server_help(config: &FlowConfig, kind: EngineKind, spec: &RunSpec) -> String {
    let url = (spec.engine_url.as_deref())
        .or(config.engine.url.as_ref().map(|u| u.value.as_str()))
        .map(crate::secret::without_userinfo);
    let at = url.map_or_else(
        || "(no `workflow_engine.url` given)".to_owned(),
        |u| format!("at {u}"),
    );
    let start = match kind {
        EngineKind::Flowable => "start one (docs/engines.md: the `flowable/flowable-rest` \
             Docker image, or `tests/flowable/start-server.sh` in a clone of cuga-flo), or pass \
             --engine-url URL for yours"
            .to_owned(),
        _ => format!(
            "build and start its service with `cuga-flo kogito build {app}` and \
             `java -jar .cuga-flo/kogito/{app}/target/quarkus-app/quarkus-run.jar` (or \
             `tests/kogito/start-service.sh {app}` in a clone; docs/engines.md)",
            app = spec.app_arg
        ),
    };
    format!(
        "this app runs on a {} server {at}: {start}; or run it on the in-process engine: \
         `cuga-flo start {} --engine native`",
        match kind {
            EngineKind::Flowable => "Flowable",
            _ => "Kogito",
        },
        spec.app_arg
    )
}

/// Where judgement comes from (see [`chain::judgement`]): with `--replay` (or a preset
/// from `runs replay`), only the cassette answers (after the rules); otherwise the
/// scenario or answers file, the app's model, a person at the terminal, in that order.
fn reasoner(
    config: &FlowConfig,
    spec: &RunSpec,
    sources: Sources<'_>,
) -> Result<Judgement, PlanError> {
    if let Some(preset) = &spec.preset {
        let cassette = ScriptedReasoner::from_value(preset.cassette.clone(), preset.source.clone())
            .map_err(|e| PlanError::new(e.to_string()))?
            .checking_digests();
        let cassette: Arc<dyn Reasoner> = Arc::new(cassette);
        // Parking allowed (replaying a cancelled run): a question the journal does not
        // answer parks the replay where the run stood.
        let inner: Arc<dyn Reasoner> = if spec.no_park {
            cassette
        } else {
            Arc::new(crate::reason::Chain::new(vec![
                cassette,
                Arc::new(crate::reason::park::Park {
                    deadlines: Default::default(),
                    approvals: Default::default(),
                }),
            ]))
        };
        return Ok((Arc::new(Rules::new(inner)), None));
    }
    if let Some(path) = &spec.replay {
        let text = crate::source::read_text(path)
            .map_err(|e| PlanError::new(format!("cannot read {}: {e}", path.display())))?;
        let source = format!("recorded answers replayed from {}", path.display());
        let cassette = ScriptedReasoner::from_text(&text, source)
            .map_err(|e| PlanError::new(e.to_string()))?
            .checking_digests();
        return Ok((Arc::new(Rules::new(Arc::new(cassette))), None));
    }
    Ok(chain::judgement(config, &sources)?)
}

/// The config's defaults, then the scenario's inputs, then `--input`, then `--var`; and
/// which of them are untrusted (every run input, whatever its value), with where each
/// came from.
fn initial_variables(
    app: &LoadedApp,
    scenario: Option<&Scenario>,
    spec: &RunSpec,
) -> Result<(Map<String, Value>, Option<Untrusted>), PlanError> {
    let config = app
        .config
        .as_ref()
        .ok_or_else(|| PlanError::new("no flow config"))?;
    let mut vars: Map<String, Value> = config
        .variables
        .iter()
        .map(|v| (v.name.value.clone(), v.default.clone()))
        .collect();
    let mut untrusted = Untrusted::new();
    // A replay of a run journalled before provenance was recorded: unknown.
    let mut known = true;
    // Which variables the run was given (the inputs required are checked against it).
    let mut given: Vec<String> = Vec::new();
    // Run inputs are untrusted, whatever their value.
    let inputs = |vars: &mut Map<String, Value>,
                  untrusted: &mut Untrusted,
                  values: Map<String, Value>,
                  source: &str| {
        for (name, value) in values {
            untrusted.insert(name.clone(), Taint::input(source));
            vars.insert(name, value);
        }
    };
    if let (Some(s), Some(name)) = (scenario, &spec.scenario) {
        for (input, value) in &s.inputs {
            check_input(config, &format!("scenario `{name}`: input"), input, value)?;
        }
        let source = format!("from scenario `{name}`'s inputs");
        given.extend(s.inputs.keys().cloned());
        inputs(&mut vars, &mut untrusted, s.inputs.clone(), &source);
    }
    if let Some(preset) = &spec.preset {
        // A replay starts from the replayed run's initial variables, provenance included.
        vars.extend(preset.variables.clone());
        match &preset.untrusted {
            Some(recorded) => untrusted.extend(recorded.clone()),
            None => known = false,
        }
    }
    if let Some(adoption) = &spec.adopt {
        // The instance's variables when taken over: untrusted inputs, whoever set them.
        let source = format!("from Flowable instance {}", adoption.instance);
        given.extend(adoption.variables.keys().cloned());
        inputs(
            &mut vars,
            &mut untrusted,
            adoption.variables.clone(),
            &source,
        );
    }
    if let Some(input) = &spec.input {
        let text = if input == "-" {
            crate::source::read_text_from(std::io::stdin())
                .map_err(|e| PlanError::new(format!("cannot read stdin: {e}")))?
        } else {
            crate::source::read_text(input)
                .map_err(|e| PlanError::new(format!("cannot read {input}: {e}")))?
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => {
                // JSON is YAML: the YAML reader refuses what serde_json lets pass silently
                // (a key written twice, an integer that does not fit 64 bits).
                if let Err(e) = crate::app::yaml::parse(&text)
                    && (e.message.contains("duplicate key") || e.message.contains("does not fit"))
                {
                    let at = crate::source::SourceFile::new(input.as_str(), text.as_str())
                        .line_col(e.span.offset);
                    return Err(PlanError::new(format!(
                        "{input}:{}:{}: {}",
                        at.line, at.column, e.message
                    )));
                }
                for (name, value) in &map {
                    check_input(config, &format!("--input {input}:"), name, value)?;
                }
                given.extend(map.keys().cloned());
                inputs(&mut vars, &mut untrusted, map, "from --input")
            }
            Ok(_) => {
                return Err(PlanError::new(format!(
                    "{input}: the input must be a JSON object"
                )));
            }
            Err(e) => {
                let message = e.to_string();
                let what = message.split(" at line ").next().unwrap_or(&message);
                return Err(PlanError::new(format!(
                    "{input}:{}:{}: invalid JSON: {what}",
                    e.line(),
                    e.column()
                )));
            }
        }
    }
    for assignment in &spec.vars {
        let (name, raw) = assignment
            .split_once('=')
            .ok_or_else(|| PlanError::new(format!("--var {assignment}: expected NAME=VALUE")))?;
        if name.trim().is_empty() {
            return Err(PlanError::new(format!(
                "--var {assignment}: the variable has no name (expected NAME=VALUE)"
            )));
        }
        let declared = config.variable(name).map(|v| &v.default);
        if declared.is_none() && !config.variables.is_empty() {
            return Err(undeclared(config, &format!("--var {name}:"), name));
        }
        let value = typed_value(name, raw, declared)?;
        let value = Map::from_iter([(name.to_string(), value)]);
        given.push(name.to_string());
        inputs(&mut vars, &mut untrusted, value, "from --var");
    }
    // A replay starts from what the replayed run was given.
    if spec.preset.is_none()
        && let Some(missing) = config.missing_inputs(&given).first()
    {
        let what = missing
            .description
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        let kind = config
            .declared_kind(&missing.name.value)
            .map(|k| k.described())
            .unwrap_or("a value");
        return Err(PlanError::new(format!(
            "input `{}`{what} is required, and the run was not given it",
            missing.name.value
        ))
        .with_help(format!(
            "pass --var {}=… ({kind}) or --input FILE; `cuga-flo describe {}` lists the inputs",
            missing.name.value, app.name
        )));
    }
    Ok((vars, known.then_some(untrusted)))
}

/// A run's initial variables from a form (the web console's start page): the config's
/// defaults, then each field given, typed as `--var` types its value (by the declared
/// default) and checked as `--var` is (a declared variable, the required inputs given);
/// each given value untrusted, from `source`. An empty field keeps the default.
pub fn form_variables(
    config: &crate::app::FlowConfig,
    fields: &[(String, String)],
    source: &str,
) -> Result<(Map<String, Value>, Untrusted), PlanError> {
    let mut vars: Map<String, Value> = (config.variables.iter())
        .map(|v| (v.name.value.clone(), v.default.clone()))
        .collect();
    let mut untrusted = Untrusted::new();
    let mut given = Vec::new();
    for (name, raw) in fields {
        let declared = config.variable(name).map(|v| &v.default);
        if declared.is_none() && !config.variables.is_empty() {
            return Err(undeclared(config, &format!("`{name}`:"), name));
        }
        if raw.is_empty() && !matches!(declared, None | Some(Value::Null)) {
            continue;
        }
        let value = typed_value(name, raw, declared).map_err(|_| {
            let kind = config
                .declared_kind(name)
                .map_or("a value", |k| k.described());
            PlanError::new(format!("`{name}` is {kind}, not {raw:?}"))
        })?;
        untrusted.insert(name.clone(), Taint::input(source));
        vars.insert(name.clone(), value);
        given.push(name.clone());
    }
    if let Some(missing) = config.missing_inputs(&given).first() {
        return Err(PlanError::new(format!(
            "input `{}` is required",
            missing.name.value
        )));
    }
    Ok((vars, untrusted))
}

/// An input `name` = `value` (from `source`) checked against the app's variables: in an
/// app that declares its variables it must be one of them (an undeclared one would set a
/// variable nothing reads while the real one keeps its default), and of the declared
/// variable's kind. (An app that declares none takes any input: its model reads them.)
pub(crate) fn check_input(
    config: &crate::app::FlowConfig,
    source: &str,
    name: &str,
    value: &Value,
) -> Result<(), PlanError> {
    if config.variable(name).is_none() {
        if config.variables.is_empty() {
            return Ok(());
        }
        return Err(undeclared(config, source, name));
    }
    match config.declared_kind(name) {
        Some(kind) if !kind.admits(value) => Err(PlanError::new(format!(
            "{source} `{name}` is {}, not {}",
            kind.described(),
            crate::vocab::kind_of(value)
        ))
        .with_help(format!(
            "its default under `variables:` in {} says what it holds",
            config.source.path().display()
        ))),
        _ => Ok(()),
    }
}

/// Why input `name` (from `source`) is refused: the app declares no such variable.
fn undeclared(config: &crate::app::FlowConfig, source: &str, name: &str) -> PlanError {
    let declared: Vec<&str> = config
        .variables
        .iter()
        .map(|v| v.name.value.as_str())
        .collect();
    let error = PlanError::new(format!("{source} the app declares no variable `{name}`"));
    match crate::diag::did_you_mean(name, declared.iter().copied()) {
        Some(close) => error.with_help(format!("did you mean `{close}`?")),
        None => error.with_help(format!(
            "its variables: {}; declare another under `variables:` in {}",
            crate::diag::name_list(&declared, 12),
            config.source.path().display()
        )),
    }
}

/// A `--var` value, typed by the variable's declared default.
fn typed_value(name: &str, raw: &str, declared: Option<&Value>) -> Result<Value, PlanError> {
    let bad = |what: &str| PlanError::new(format!("--var {name}={raw}: `{name}` is {what}"));
    Ok(match declared {
        Some(Value::Number(_)) => {
            let digits = raw.trim().strip_prefix(['-', '+']).unwrap_or(raw.trim());
            if !digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_digit())
                && raw.trim().parse::<i64>().is_err()
            {
                return Err(bad(
                    "a number within ±9223372036854775807 (this integer does not fit)",
                ));
            }
            if let Ok(i) = raw.trim().parse::<i64>() {
                return Ok(Value::from(i));
            }
            let n: f64 = raw.trim().parse().map_err(|_| bad("a number"))?;
            if n.fract() == 0.0 && n.abs() < 9.0e15 && !raw.contains('.') {
                Value::from(n as i64)
            } else {
                serde_json::Number::from_f64(n)
                    .map(Value::Number)
                    .ok_or_else(|| bad("a finite number"))?
            }
        }
        Some(Value::Bool(_)) => match raw.trim() {
            "true" | "True" | "yes" | "1" => Value::Bool(true),
            "false" | "False" | "no" | "0" => Value::Bool(false),
            _ => return Err(bad("true or false")),
        },
        Some(Value::Array(_)) | Some(Value::Object(_)) => {
            serde_json::from_str(raw).map_err(|_| bad("JSON (a list or an object)"))?
        }
        Some(Value::String(_)) => Value::String(raw.to_string()),
        // Undeclared (or null default): JSON if it parses, else a string.
        Some(Value::Null) | None => {
            serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
        }
    })
}
