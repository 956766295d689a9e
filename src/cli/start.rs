//! `cuga-flo start <app>`: run a process on its engine (the native one, or an external
//! engine over MCP), with every control point
//! going through the MCP bridge to the harness, every event journalled under
//! `.cuga-flo/runs/<run-id>/`, and the decisions and hook audit streamed to the terminal.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use clap::{Args, ValueEnum};
use serde_json::{Map, Value};

use crate::app::scenario::{self, Scenario};
use crate::app::{EngineKind, FlowConfig, LoadedApp, load_app};
use crate::bridge::BoxFuture;
use crate::bridge::ControlPoints;
use crate::bridge::child::ChildRuns;
use crate::check::check_app_on;
use crate::engine::external::{ExternalEngine, ExternalSettings};
use crate::engine::flowable::{FlowableEngine, FlowableSettings};
use crate::engine::kogito::{KogitoEngine, KogitoSettings};
use crate::engine::native::NativeEngine;
use crate::engine::{Resume, RunRequest, WorkflowEngine};
use crate::harness::FlowAgent;
use crate::journal::store::{self, DEFAULT_BASE, Journal};
use crate::journal::{Anchor, Event, EventSink, FlowState, JournalOptions, Launch, Record};
use crate::mcp::{
    BridgeServer, InProcessBridge, RegisteredFlow, Registry, RunProcessArgs, RunProcessResult,
};
use crate::reason::park::Answers;
use crate::reason::scripted::ScriptedReasoner;
use crate::reason::{
    GatewayAnswer, GatewayRequest, HookAnswer, HookRequest, ReasonError, Reasoner, Recorder, Rules,
    TaskAnswer, TaskRequest,
};
use crate::view::{self, Human, HumanOptions, JsonLines, View};
use crate::vocab::{RunStatus, Taint, Untrusted};

use super::signals::Signals;
use super::target::{Target, resolve};
use super::{Cli, Outcome, Style, UsageError};
use crate::run::chain::{self, Judgement, Labelled, Sources};
use crate::run::children::AppChildren;

#[derive(Debug, Args)]
pub struct StartArgs {
    /// The app: a name under the apps folder, an app folder or a flow config file
    #[arg(value_name = "APP|PATH")]
    pub app: String,

    /// Run `applications/<app>/scenarios/<NAME>.yaml`: its inputs and answers, then check its expectations
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,

    /// Answers for control points, by id (YAML: `answers: {<id>: ...}`)
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,

    /// Record every answer given (scenario, answers file, person) to FILE, as a cassette
    /// that `--replay` (or `--answers`) reads
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,

    /// Answer only from a recorded cassette (after the policy rules), refusing an answer
    /// whose context drifted since recording; pass the inputs with --input / --var
    #[arg(long, value_name = "FILE", conflicts_with_all = ["answers", "scenario"])]
    pub replay: Option<PathBuf>,

    /// Set a process variable (typed by its declared default); repeatable
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,

    /// Initial variables from a JSON object in a file, or `-` for stdin
    #[arg(long, value_name = "FILE|-")]
    pub input: Option<String>,

    /// Run on this engine instead of the config's
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,

    /// The engine's URL instead of the config's `workflow_engine.url`: an MCP engine's
    /// endpoint, Flowable's REST API or a Kogito service (alone: the config's engine when
    /// it is reached by URL, else an MCP engine)
    #[arg(long, value_name = "URL")]
    pub engine_url: Option<String>,

    #[command(flatten)]
    pub journal: super::JournalArgs,

    /// Node entries allowed before the run fails (bounds loops); at least 1
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub step_budget: Option<u64>,

    /// Stream one JSON event per line instead of the human view
    #[arg(long)]
    pub json: bool,

    /// Never call a model, even when the app configures one (answers come from the
    /// policy rules, the scenario or answers file, or a person)
    #[arg(long)]
    pub no_model: bool,

    /// Never ask at the terminal: a question for a person parks the run (exit 3) for
    /// `cuga-flo runs answer`
    #[arg(long)]
    pub detach: bool,

    /// A question nobody can answer fails the run instead of parking it
    #[arg(long, conflicts_with = "detach")]
    pub no_park: bool,

    /// Who answers at the terminal (default: $USER); at a guardrail with approvers, only
    /// an approver is asked there
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,

    /// How the native engine reaches the control points: directly (the bridge contract
    /// in-process), or through the in-process MCP bridge (as an external engine would)
    #[arg(long, value_enum, default_value = "direct")]
    pub bridge: BridgeChoice,

    /// Wait in-process for a timer due within SECS seconds; a later one parks the run
    /// (exit 3) until `cuga-flo runs resume --due` or `cuga-flo worker` [default: 60]
    #[arg(long, value_name = "SECS")]
    pub max_wait: Option<u64>,

    /// Set by `runs replay`: the run's id, its recorded answers and its variables.
    #[arg(skip)]
    pub preset: Option<Box<Preset>>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BridgeChoice {
    /// The engine calls the harness in-process, through the bridge's Rust contract
    Direct,
    /// The engine calls the harness's MCP tools over an in-process MCP connection
    Mcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    Native,
    Flowable,
    Kogito,
    Mcp,
}

pub fn run(cli: &Cli, args: &StartArgs, style: Style) -> Result<Outcome, UsageError> {
    run_resumed(cli, args, None, style)
}

/// `start`, or (with `resumed`) the continuation of a journalled run.
pub fn run_resumed(
    cli: &Cli,
    args: &StartArgs,
    resumed: Option<Resumed>,
    style: Style,
) -> Result<Outcome, UsageError> {
    let app = match resolve(&args.app, &cli.apps_dir)? {
        Target::App(app) => app,
        Target::Model(path) => {
            return Err(UsageError::new(format!(
                "{} is a BPMN model; `start` runs an app",
                path.display()
            ))
            .with_help("name the app folder or its flow config"));
        }
    };
    let loaded = load_app(&app);
    let kind = loaded
        .config
        .as_ref()
        .map(|config| engine_kind(config, args))
        .transpose()?;
    let diags = check_app_on(&loaded, kind);
    let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
    if !errors.is_empty() {
        for d in &errors {
            eprint!("{}", style.diagnostic(d));
        }
        let chosen = kind.filter(|k| loaded.config.as_ref().is_some_and(|c| c.engine.kind != *k));
        return Err(match chosen {
            Some(kind) => UsageError::new(format!(
                "app `{}` cannot run on the {kind} engine ({} errors)",
                app.name,
                errors.len()
            )),
            None => UsageError::new(format!(
                "app `{}` does not validate ({} errors)",
                app.name,
                errors.len()
            ))
            .with_help(format!(
                "run `cuga-flo validate {}` for the details",
                args.app
            )),
        });
    }
    let (Some(config), Some(kind)) = (loaded.config.as_ref(), kind) else {
        return Err(UsageError::new("the app has no flow config"));
    };
    if let Some(r) = &resumed {
        same_app(&loaded, r)?;
    }

    let engine = engine(config, kind, args)?;

    let scenario = match &args.scenario {
        Some(name) => Some(scenario::load(&loaded.dir, name).map_err(UsageError::new)?),
        None => None,
    };
    let (variables, untrusted) = match &resumed {
        Some(r) => (r.variables.clone(), r.untrusted.clone()),
        None => initial_variables(&loaded, scenario.as_ref(), args)?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| UsageError::new(format!("cannot start the async runtime: {e}")))?;
    // The scenario's remote agents played by sibling apps: served here, for this run, and
    // the app's `remote_agents` pointed at them.
    let (loaded, served) = match scenario.as_ref() {
        Some(s) if !s.remote_agents.is_empty() => {
            let (loaded, served) = serve_scenario_agents(&runtime, cli, &loaded, s, args)?;
            (loaded, Some(served))
        }
        _ => (loaded, None),
    };
    let Some(config) = loaded.config.as_ref() else {
        return Err(UsageError::new("the app has no flow config"));
    };

    let answered = resumed.as_ref().map(|r| &r.answers);
    let spent = resumed.as_ref().map(|r| r.model_usage);
    // Read once: the run's chain answers from it, its child runs get what it addresses
    // to the elements they run.
    let answers = chain::AnswersFile::of(args.answers.as_deref())?;
    // One set of clients of the app's remote agents for the harness (delegations) and
    // the reasoners (consultations): both journal their remote tasks and follow them up.
    let remotes = Arc::new(
        crate::reason::remote::Remotes::of(config)
            .served_here(scenario.iter().flat_map(|s| s.remote_agents.keys())),
    );
    let (reasoner, recorder) = reasoner(
        config,
        args,
        Sources {
            scenario: scenario.as_ref(),
            answers: answers.as_ref(),
            no_model: args.no_model,
            person: true,
            by: args.by.as_deref(),
            record: args.record.is_some(),
            park: !args.no_park,
            detach: args.detach,
            answered,
            spent,
            process: loaded.process(),
            given: &[],
            remotes: Some(&remotes),
        },
    )?;
    let resumed = resumed.map(Box::new);
    let given = chain::given_to_calls(scenario.as_ref(), answers.as_ref())?;
    // Call activities that name a process run it as a child run (on the native engine,
    // and on an external one, Flowable or Kogito, whose call activity's `execute_task` cuga-flo
    // answers so).
    let parent_graph: crate::run::children::ParentGraph = Default::default();
    let children: Option<Arc<dyn ChildRuns>> = matches!(
        kind,
        EngineKind::Native | EngineKind::Mcp | EngineKind::Flowable | EngineKind::Kogito
    )
    .then(|| {
        Arc::new(AppChildren {
            // The apps folder the calling app is in (as `validate` looks there).
            apps_dir: crate::app::called::apps_dir(&loaded)
                .map_or_else(|| cli.apps_dir.clone(), |d| d.to_path_buf()),
            caller: loaded.clone(),
            run_dir: args.journal.run_dir.clone(),
            durability: args.journal.durability,
            no_model: args.no_model,
            given: given.clone(),
            depth: 0,
            asker: None,
            graph: parent_graph.clone(),
        }) as Arc<dyn ChildRuns>
    });
    let prepared = Prepared {
        children,
        parent_graph,
        loaded: loaded.clone(),
        engine,
        reasoner,
        recorder,
        variables,
        untrusted,
        scenario,
        resumed,
        remotes,
    };
    let outcome = runtime.block_on(run_async(prepared, args, style, cli.verbose > 0));
    if let Some(served) = served {
        runtime.block_on(served.stop());
    }
    // A person's prompt may still block on the terminal: do not wait for it.
    runtime.shutdown_background();
    outcome
}

/// Serve the sibling apps that play the scenario's remote agents (`remote_agents: {<name>:
/// {serve: <app>, answers}}`) over A2A on 127.0.0.1, and point the app's agents at them:
/// the app as the run sees it. An agent whose config sends a bearer token (`auth: {type:
/// bearer, token_env: VAR}`) is served with the value of `VAR` as its token (`cuga-flo
/// test` sets `VAR` to a fresh one for the scenario when it is not set).
fn serve_scenario_agents(
    runtime: &tokio::runtime::Runtime,
    cli: &Cli,
    loaded: &LoadedApp,
    scenario: &Scenario,
    args: &StartArgs,
) -> Result<(LoadedApp, crate::run::agent::ScenarioAgents), UsageError> {
    use crate::app::RemoteAuth;
    let config = loaded
        .config
        .as_ref()
        .ok_or_else(|| UsageError::new("the app has no flow config"))?;
    let apps_dir = crate::app::called::apps_dir(loaded)
        .map_or_else(|| cli.apps_dir.clone(), |d| d.to_path_buf());
    let mut served = Vec::new();
    let mut names = Vec::new();
    for (name, agent) in &scenario.remote_agents {
        let Some(remote) = config.remote_agents.iter().find(|r| r.name.value == *name) else {
            let known: Vec<&str> = (config.remote_agents.iter())
                .map(|r| r.name.value.as_str())
                .collect();
            let err = UsageError::new(format!(
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
        let apps = super::target::all_apps(&apps_dir)?;
        let Some(app) = apps
            .iter()
            .find(|a| a.name == agent.serve && a.dir != loaded.dir)
        else {
            let names: Vec<&str> = (apps.iter())
                .filter(|a| a.dir != loaded.dir)
                .map(|a| a.name.as_str())
                .collect();
            let err = UsageError::new(format!(
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
            UsageError::new(format!(
                "{}: app `{}` (serving remote agent `{name}`) does not validate: {}",
                agent.serve_at,
                app.name,
                errors.join("; ")
            ))
        })?;
        let Some(served_config) = served_app.config.as_ref() else {
            return Err(UsageError::new(format!(
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
            no_model: args.no_model,
            process: served_app.process(),
            ..Sources::default()
        };
        let (judge, _) = chain::judgement(served_config, &sources)
            .map_err(|e| UsageError::new(format!("{}: {}", agent.at, e)))?;
        let token = match &remote.auth {
            None => None,
            Some(RemoteAuth::Bearer { token_env }) => match std::env::var(&token_env.value) {
                Ok(v) if !v.is_empty() => Some(crate::secret::Secret::new(v)),
                _ => {
                    return Err(UsageError::new(format!(
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
                return Err(UsageError::new(format!(
                    "{}: remote agent `{name}` sends an API key; a served app takes a bearer \
                     token only",
                    agent.at
                )));
            }
        };
        served.push(crate::run::agent::ScenarioServed {
            loaded: served_app,
            judge,
            token,
        });
        names.push(name.clone());
    }
    let (agents, urls) = runtime
        .block_on(crate::run::agent::ScenarioAgents::start(
            served,
            &apps_dir,
            &args.journal.run_dir,
            args.journal.durability,
            args.no_model,
        ))
        .map_err(UsageError::new)?;
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

/// Everything a run needs, resolved before the async runtime starts.
struct Prepared {
    loaded: LoadedApp,
    engine: Arc<dyn WorkflowEngine>,
    reasoner: Arc<dyn Reasoner>,
    recorder: Option<Arc<Recorder>>,
    variables: Map<String, Value>,
    /// Which of `variables` are untrusted, and where each came from (`None`: unknown).
    untrusted: Option<Untrusted>,
    scenario: Option<Scenario>,
    resumed: Option<Box<Resumed>>,
    children: Option<Arc<dyn ChildRuns>>,
    /// Where the child runs find this run's graph-mode writer, once it is open.
    parent_graph: crate::run::children::ParentGraph,
    /// The clients of the app's remote agents (the harness's and the consultations').
    remotes: Arc<crate::reason::remote::Remotes>,
}

async fn run_async(
    prepared: Prepared,
    args: &StartArgs,
    style: Style,
    verbose: bool,
) -> Result<Outcome, UsageError> {
    let Prepared {
        loaded,
        engine,
        reasoner,
        recorder,
        variables,
        untrusted,
        scenario,
        resumed,
        children,
        parent_graph,
        remotes,
    } = prepared;
    // Ctrl-C or SIGTERM parks the run; listening starts before the run does.
    let mut stop =
        Signals::new().map_err(|e| UsageError::new(format!("cannot watch for signals: {e}")))?;
    let judgement = reasoner.describe();
    // The view: human (with a spinner while a reasoner works) or JSON lines.
    let view: Arc<dyn View> = if args.json {
        Arc::new(JsonLines::new())
    } else {
        let mut options = HumanOptions::detect(verbose);
        options.color = style.color;
        options.width = style.width;
        // The spinner steps aside while a person answers at the terminal.
        let mut names = view::Names::from_app(&loaded);
        if let Some(model) = std::env::var(crate::reason::llm::settings::ENV_MODEL)
            .ok()
            .filter(|m| !m.trim().is_empty())
        {
            names.override_model(model);
        }
        let mut human = Human::new(options).with_names(names);
        if engine.name() != "native" {
            human = human.with_remote_engine(engine.name());
        }
        Arc::new(human)
    };
    let reasoner: Arc<dyn Reasoner> = Arc::new(Watched {
        inner: reasoner,
        view: view.clone(),
    });
    let harness = FlowAgent::new(&loaded, reasoner)
        .map_err(|e| UsageError::new(e.to_string()))?
        .with_remotes(remotes);
    if args.preset.is_some() {
        // A replay answers from the journal: it never sends anything to a remote agent.
        harness.remotes_offline();
    }
    let mut annotations = harness.annotations();
    if let Some(budget) = args.step_budget {
        annotations.step_budget = budget;
    }
    annotations.max_wait_secs = args.max_wait;
    let process = loaded
        .process()
        .cloned()
        .ok_or_else(|| UsageError::new("the app's BPMN model has no process"))?;
    let config = harness.config().clone();
    let process_key = config.process_key().to_string();

    let agent = Arc::new(harness);
    let harness: Arc<dyn ControlPoints> = agent.clone();
    let process = Arc::new(process);
    // The native engine calls the harness directly (the bridge contract, no transport)
    // unless `--bridge mcp` asks for the in-process MCP hop; other engines always reach
    // the control points over MCP.
    let direct = args.bridge == BridgeChoice::Direct && engine.name() == "native";
    if let Some(r) = &resumed
        && !direct
    {
        // The engine restores what the harness needs to go on (`resuming`), but over the
        // MCP bridge it reaches the bridge's client, not the harness: restore it here.
        harness.resuming(&r.records);
    }
    let registry = Arc::new(Registry::default());
    let bridge = if direct {
        None
    } else {
        registry.register(RegisteredFlow {
            process_key: process_key.clone(),
            process: process.clone(),
            annotations: annotations.clone(),
            harness: harness.clone(),
        });
        // Nothing but this run reaches the in-process bridge: it loads no other flow.
        let server = BridgeServer::new(registry.clone(), engine.clone(), None);
        Some(
            InProcessBridge::start(server)
                .await
                .map_err(UsageError::new)?,
        )
    };

    // A run resumed on an engine that owns its tokens re-attaches to its instance there:
    // when the engine cannot be reached, nothing is written and the run stays as it was.
    if let Some(r) = &resumed {
        engine.reachable(&process.id).await.map_err(|why| {
            UsageError::new(format!("run `{}` cannot be resumed now: {why}", r.run_id)).with_help(
                format!(
                    "nothing was written; run `cuga-flo runs resume {}` again once the {} \
                     engine answers (or pass --engine-url URL if it moved)",
                    r.run_id,
                    engine.name()
                ),
            )
        })?;
    }
    // The journal, with the view as its observer and the run's state folded as it is
    // committed: a new one, or the resumed run's.
    let app_digest = loaded.digest();
    let folded = Arc::new(Mutex::new(FlowState::default()));
    let (run_id, journal, resume, graph) = match resumed {
        Some(r) => {
            let Resumed {
                run_id,
                journal,
                records,
                repaired,
                ..
            } = *r;
            view.resumed(&records);
            *lock_state(&folded) = FlowState::fold(records.iter());
            let graph = open_graph(&loaded, &run_id)?;
            if let Some(g) = &graph {
                g.replay(&records);
            }
            let journal = with_graph(
                journal
                    .with_observer(view::observer(view.clone()))
                    .with_observer(folding(&folded)),
                &graph,
            );
            journal
                .emit(Event::RunResumed {
                    from_seq: records.len() as u64,
                    repaired,
                })
                .and_then(|_| journal.commit())
                .map_err(|e| UsageError::new(format!("cannot write the run journal: {e}")))?;
            (run_id, journal, Some(Arc::new(Resume { records })), graph)
        }
        None => {
            let run_id = match &args.preset {
                Some(p) => p.run_id.clone(),
                None => store::new_run_id(),
            };
            let run_dir = store::run_dir(&args.journal.run_dir, &run_id);
            let options = JournalOptions {
                durability: args.journal.durability,
                anchor: Anchor::new(&run_id, Some(app_digest.clone())),
            };
            let graph = open_graph(&loaded, &run_id)?;
            let journal = Journal::create(&run_dir, options)
                .map_err(|e| UsageError::new(format!("cannot create the run journal: {e}")))?
                .with_observer(view::observer(view.clone()))
                .with_observer(folding(&folded));
            let journal = with_graph(journal, &graph);
            (run_id, journal, None, graph)
        }
    };
    if let Some(g) = &graph {
        let _ = parent_graph.set(g.clone());
    }
    let journal = Arc::new(journal);
    let sink = Arc::new(Labelled {
        inner: journal.clone(),
        app: loaded.name.clone(),
        judgement,
        app_digest: Some(app_digest),
        launch: Some(Launch {
            app_dir: loaded
                .dir
                .canonicalize()
                .ok()
                .map(|d| d.display().to_string()),
            scenario: args.scenario.clone(),
            answers: args
                .answers
                .as_ref()
                .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
                .map(|p| p.display().to_string()),
            no_model: args.no_model,
            detach: args.detach,
            step_budget: args.step_budget,
            engine_url: args
                .engine_url
                .as_deref()
                .map(crate::secret::without_userinfo),
            served: false,
        }),
        sealed: Default::default(),
        graph: graph.clone(),
    });

    // A delegation journals its remote task as soon as the agent assigns it.
    agent.journal_remote_tasks(sink.clone());

    // What the run waits for while it waits: a Ctrl-C parks it with that.
    let awaiting = Arc::new(crate::bridge::run::Awaiting::default());
    let run: BoxFuture<'_, Result<RunProcessResult, String>> = match &bridge {
        None => {
            let mut request = RunRequest::new(
                run_id.clone(),
                process_key,
                process,
                annotations,
                variables,
                resume,
            );
            request.untrusted = untrusted;
            request.children = children;
            request.awaiting = Some(awaiting.clone());
            let events: Arc<dyn EventSink> = sink.clone();
            let run = engine.run(request, harness, events);
            let id = run_id.clone();
            Box::pin(async move {
                let outcome = run.await.map_err(|e| e.to_string())?;
                Ok(RunProcessResult::of(id, outcome))
            })
        }
        Some(bridge) => {
            registry.attach_sink(&run_id, sink.clone());
            if let Some(resume) = resume {
                registry.attach_resume(&run_id, resume);
            }
            if let Some(children) = children {
                registry.attach_children(&run_id, children);
            }
            // The engine shows what the run waits for here too: a Ctrl-C parks it with it.
            registry.attach_awaiting(&run_id, awaiting.clone());
            let client = bridge.client();
            let args_run = RunProcessArgs {
                process_key,
                run_id: run_id.clone(),
                variables,
                untrusted,
                bridge: None,
            };
            Box::pin(async move { client.run_process(&args_run).await.map_err(|e| e.message) })
        }
    };
    let result = tokio::select! {
        result = run => Some(result),
        _ = stop.recv() => None,
    };
    let Some(result) = result else {
        // Interrupted. What the engine does while it winds down is not part of the run:
        // the journal takes nothing more from it. The run parks as it stands, with the
        // questions a person was being asked at the terminal (`runs answer` answers them,
        // `runs resume` asks them again); the bridge is not drained (a prompt may block).
        sink.seal();
        let asked = crate::reason::human::asking();
        let keys = asked.iter().map(|q| q.key.clone()).collect();
        let parked = asked.into_iter().try_for_each(|question| {
            journal
                .emit(Event::QuestionParked {
                    question: Box::new(question),
                })
                .map(|_| ())
        });
        let _ = journal
            .commit()
            .and(parked)
            .and_then(|()| {
                journal.emit(Event::RunWaiting {
                    reason: "interrupted".to_string(),
                    questions: keys,
                    due_ms: None,
                    awaiting: awaiting.lock().map(|a| a.clone()).unwrap_or_default(),
                })
            })
            .and_then(|_| journal.commit());
        if let (Some(recorder), Some(path)) = (&recorder, &args.record) {
            let _ = recorder.write(path);
        }
        eprintln!(
            "\n{}: interrupted; the run is parked: `cuga-flo runs resume {run_id}` continues it",
            style.error_word(),
        );
        eprintln!("  journal: {}", journal.path().display());
        return Ok(Outcome::Interrupted);
    };
    if let Some(bridge) = bridge {
        bridge.shutdown().await;
    }
    // The cassette is what happened, whether or not the run completed.
    let cassette = match (&recorder, &args.record) {
        (Some(recorder), Some(path)) => {
            recorder
                .write(path)
                .map_err(|e| UsageError::new(e.to_string()))?;
            Some(path.clone())
        }
        _ => None,
    };

    // A run that ended without `run_finished` (an engine error) may leave a step uncommitted.
    let _ = journal.commit();
    // Graph mode: a store that failed stopped the run; its journal is closed, failed.
    let graph_failed = graph.as_ref().and_then(|g| g.failed());
    if let Some(err) = &graph_failed {
        close_failed(&journal, &format!("graph mode: {err}"));
    }
    // Whatever is still buffered (a failed run's last records) is committed, and so folded.
    let _ = journal.commit();
    let state = lock_state(&folded).clone();
    view.finish(&state);

    let result = match (result, graph_failed) {
        (Ok(_), Some(err)) => {
            // The engine finished, but the store missed its last records.
            eprintln!("{}: the run failed: graph mode: {err}", style.error_word());
            eprintln!("  journal: {}", journal.path().display());
            return Ok(Outcome::Failed);
        }
        (Ok(r), None) => r,
        (Err(e), _) => {
            eprintln!("{}: the run could not complete: {e}", style.error_word());
            eprintln!("  journal: {}", journal.path().display());
            if let Some(path) = &cassette {
                eprintln!("  cassette: {}", path.display());
            }
            return Ok(Outcome::Failed);
        }
    };
    if !args.json {
        outln!("  journal: {}", journal.path().display());
        if let Some(path) = &cassette {
            outln!("  cassette: {}", path.display());
        }
    }

    let not_run = never_started(result.status, &result.path);
    if not_run && !args.json && engine.name() != "native" {
        let kind = match engine.name() {
            "flowable" => Some(EngineKind::Flowable),
            "kogito" => Some(EngineKind::Kogito),
            _ => None,
        };
        if let (Some(kind), Some(config)) = (kind, loaded.config.as_ref()) {
            let help = server_help(config, kind, args);
            let words: Vec<&str> = help.split(' ').collect();
            for line in crate::view::wrap("  help:", &words, style.width, 8) {
                outln!("{line}");
            }
        }
    }
    let mut outcome = match result.status {
        RunStatus::Completed => Outcome::Ok,
        RunStatus::Terminated | RunStatus::Failed | RunStatus::Cancelled => Outcome::Failed,
        RunStatus::Waiting => {
            if !args.json {
                print_waiting(&state, &args.journal.run_dir, style);
            }
            Outcome::Waiting
        }
    };
    let expect = scenario.as_ref().and_then(|s| s.expect.as_ref());
    if expect.is_some() && not_run {
        // Nothing ran: the expectations say nothing about the process.
        let name = scenario
            .as_ref()
            .map(|s| s.name.as_str())
            .unwrap_or_default();
        if args.json {
            let line = serde_json::json!({"event": "scenario_checked", "scenario": name, "met": false, "never_started": true, "mismatches": []});
            outln!("{line}");
        } else {
            outln!(
                "{} scenario `{name}`: not checked, the run never started",
                style.red("✗")
            );
        }
        outcome = Outcome::Failed;
    } else if let Some(expect) = expect {
        let misses = expect.mismatches(Some(result.status), &result.path, &result.variables);
        let name = scenario
            .as_ref()
            .map(|s| s.name.as_str())
            .unwrap_or_default();
        if args.json {
            let line = serde_json::json!({"event": "scenario_checked", "scenario": name, "met": misses.is_empty(), "mismatches": misses});
            outln!("{line}");
        } else if misses.is_empty() {
            outln!(
                "{} scenario `{name}`: every expectation met",
                style.green("✓")
            );
        } else {
            outln!(
                "{} scenario `{name}`: {} expectation(s) not met",
                style.red("✗"),
                misses.len()
            );
            for m in &misses {
                outln!("    {m}");
            }
        }
        // A scenario says how its run should end: met, it succeeds whatever that end is
        // (a scenario expecting `terminated` passes when the run terminates).
        outcome = match (misses.is_empty(), outcome) {
            (false, _) => Outcome::Failed,
            (true, Outcome::Waiting) => Outcome::Waiting,
            (true, _) => Outcome::Ok,
        };
    }
    Ok(outcome)
}

/// A run resumes on the app it started with: the same files (their digest in the run's
/// `run_started`), or its journal would not re-execute as it was written.
fn same_app(loaded: &LoadedApp, resumed: &Resumed) -> Result<(), UsageError> {
    let started = resumed.records.first().and_then(|r| match &r.event {
        Event::RunStarted { app_digest, .. } => app_digest.clone(),
        _ => None,
    });
    match started {
        Some(digest) if digest != loaded.digest() => Err(UsageError::new(format!(
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

/// How to answer a parked run's questions.
fn print_waiting(state: &FlowState, run_dir: &std::path::Path, style: Style) {
    let dir = if run_dir == std::path::Path::new(DEFAULT_BASE) {
        String::new()
    } else {
        format!(
            " --run-dir {}",
            super::output::shell_quote(&run_dir.display().to_string())
        )
    };
    let run = &state.run_id;
    for q in state.open_questions.values() {
        let how = match &q.offered {
            // A guardrail: its approver approves or denies.
            crate::vocab::Offered::Flows { .. } if q.approval.is_some() => {
                "approve|deny --by NAME".to_string()
            }
            crate::vocab::Offered::Flows { flows, .. } => {
                let ids: Vec<&str> = flows.iter().map(|f| f.id.as_str()).collect();
                format!("--flow {}", ids.join("|"))
            }
            crate::vocab::Offered::Actions { actions, .. } => {
                let names: Vec<&str> = actions.iter().map(|a| a.as_str()).collect();
                format!("--action {}", names.join("|"))
            }
            crate::vocab::Offered::ToolCall { .. } => "approve|deny [--reason TEXT]".to_string(),
            crate::vocab::Offered::Outputs { outputs, .. } => {
                let keys: Vec<String> = (outputs.iter())
                    .map(|o| format!("{}: ...", serde_json::Value::String(o.clone())))
                    .collect();
                format!(
                    "--outputs {}",
                    super::output::shell_quote(&format!("{{{}}}", keys.join(", ")))
                )
            }
        };
        // Several questions at one element (the instances of a multi-instance task): each
        // is named by its key.
        let shared = (state.open_questions.values())
            .filter(|o| o.element == q.element)
            .count()
            > 1;
        let named = super::output::shell_quote(if shared { &q.key } else { &q.element });
        outln!(
            "  {} answer: cuga-flo runs answer {run} {named} {how}{dir}",
            style.yellow("?")
        );
    }
    let awaiting = state
        .waiting
        .as_ref()
        .map(|w| w.awaiting.as_slice())
        .unwrap_or_default();
    for a in awaiting {
        let command = match (a.kind, &a.correlation) {
            (crate::journal::event::CatchKind::Message, Some(key)) => {
                format!("message --key {}", super::output::shell_quote(key))
            }
            (crate::journal::event::CatchKind::Message, None) => format!("message {run}"),
            (crate::journal::event::CatchKind::Signal, _) => "signal".to_string(),
        };
        let name = super::output::shell_quote(&a.name);
        outln!(
            "  {} deliver: cuga-flo runs {command} {name} [--var NAME=VALUE]{dir}",
            style.yellow("✉"),
        );
    }
    // A call activity's child run parked: it is answered (or resumed) first.
    let children = state
        .waiting
        .as_ref()
        .and_then(|w| w.reason.strip_prefix("child run "));
    if let Some(children) = children {
        for child in children.split(", ") {
            outln!(
                "  {} child run {child} waits: answer it (cuga-flo runs pending{dir}), then \
                 cuga-flo runs resume {run}{dir}",
                style.yellow("⤷"),
            );
        }
    }
    if state.open_questions.is_empty() && !awaiting.is_empty() {
        return;
    }
    outln!("  pending: cuga-flo runs pending{dir}");
    outln!(
        "  (to answer in advance: --answers FILE or --scenario NAME; to let a model answer: \
         `llm:` in the flow config)"
    );
}

/// Which engine the run goes to: the config's, or `--engine` / `--engine-url`.
fn engine_kind(config: &FlowConfig, args: &StartArgs) -> Result<EngineKind, UsageError> {
    let kind = match (args.engine, &args.engine_url) {
        (Some(EngineChoice::Native), _) => EngineKind::Native,
        (Some(EngineChoice::Flowable), _) => EngineKind::Flowable,
        (Some(EngineChoice::Kogito), _) => EngineKind::Kogito,
        (Some(EngineChoice::Mcp), _) => EngineKind::Mcp,
        // A URL alone: the config's engine when it is reached by URL, else an MCP engine.
        (None, Some(_)) if config.engine.kind.is_remote() => config.engine.kind,
        (None, Some(_)) => EngineKind::Mcp,
        (None, None) => config.engine.kind,
    };
    if args.engine_url.is_some() && kind == EngineKind::Native {
        return Err(UsageError::new(
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
    args: &StartArgs,
) -> Result<Arc<dyn WorkflowEngine>, UsageError> {
    let url = args.engine_url.as_deref();
    match kind {
        EngineKind::Native => Ok(Arc::new(NativeEngine::new())),
        EngineKind::Mcp => {
            let settings =
                ExternalSettings::from_config(&config.engine, url).map_err(UsageError::new)?;
            Ok(Arc::new(ExternalEngine::new(settings)))
        }
        EngineKind::Flowable => {
            let settings = FlowableSettings::from_config(&config.engine, url)
                .map_err(|e| UsageError::new(e).with_help(server_help(config, kind, args)))?;
            Ok(Arc::new(FlowableEngine::new(settings)))
        }
        EngineKind::Kogito => {
            let settings = KogitoSettings::from_config(&config.engine, url)
                .map_err(|e| UsageError::new(e).with_help(server_help(config, kind, args)))?;
            Ok(Arc::new(KogitoEngine::new(settings)))
        }
    }
}

/// The server an app bound to Flowable or Kogito runs on (its URL without credentials),
/// how to start one, and how to run the app without it.
fn server_help(config: &FlowConfig, kind: EngineKind, args: &StartArgs) -> String {
    let url = (args.engine_url.as_deref())
        .or(config.engine.url.as_ref().map(|u| u.value.as_str()))
        .map(crate::secret::without_userinfo);
    let at = url.map_or_else(
        || "(no `workflow_engine.url` given)".to_owned(),
        |u| format!("at {u}"),
    );
    let start = match kind {
        EngineKind::Flowable => "start one with `tests/flowable/start-server.sh` (README: \
             \"Running on Flowable\"), or pass --engine-url URL for yours"
            .to_owned(),
        _ => format!(
            "build and start its service with `cuga-flo kogito build {app}` and \
             `java -jar .cuga-flo/kogito/{app}/target/quarkus-app/quarkus-run.jar` (or \
             `tests/kogito/start-service.sh {app}`; README: \"Running on Kogito\")",
            app = args.app
        ),
    };
    format!(
        "this app runs on a {} server {at}: {start}; or run it on the in-process engine: \
         `cuga-flo start {} --engine native`",
        match kind {
            EngineKind::Flowable => "Flowable",
            _ => "Kogito",
        },
        args.app
    )
}

/// Whether a run failed before anything ran: no node was entered (an engine that could
/// not be reached, a deployment it refused).
fn never_started(status: RunStatus, path: &[String]) -> bool {
    status == RunStatus::Failed && path.is_empty()
}

/// Tells the view which control point a reasoner is working on (it shows a spinner).
struct Watched {
    inner: Arc<dyn Reasoner>,
    view: Arc<dyn View>,
}

impl Reasoner for Watched {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn confirm(
        &self,
        req: crate::reason::tools::ConfirmRequest,
    ) -> crate::reason::tools::Confirming<'_> {
        self.inner.confirm(req)
    }

    fn answers_in_advance(&self, req: &TaskRequest) -> bool {
        self.inner.answers_in_advance(req)
    }

    // The spinner starts when the answer is awaited, not when it is asked for: the engine
    // commits (and so shows) its step's records in between, and a record shown stops the
    // spinner (tests/pty.rs).
    fn task(&self, req: TaskRequest) -> BoxFuture<'_, Result<TaskAnswer, ReasonError>> {
        Box::pin(async move {
            self.view.waiting(&req.task_id);
            self.inner.task(req).await
        })
    }

    fn gateway(&self, req: GatewayRequest) -> BoxFuture<'_, Result<GatewayAnswer, ReasonError>> {
        Box::pin(async move {
            self.view.waiting(&req.gateway_id);
            self.inner.gateway(req).await
        })
    }

    fn hook(&self, req: HookRequest) -> BoxFuture<'_, Result<HookAnswer, ReasonError>> {
        Box::pin(async move {
            self.view.waiting(&req.hook_id);
            self.inner.hook(req).await
        })
    }
}

/// Where judgement comes from (see [`chain::judgement`]): with `--replay` (or a preset
/// from `runs replay`), only the cassette answers (after the rules); otherwise the
/// scenario or answers file, the app's model, a person at the terminal, in that order.
fn reasoner(
    config: &FlowConfig,
    args: &StartArgs,
    sources: Sources<'_>,
) -> Result<Judgement, UsageError> {
    if let Some(preset) = &args.preset {
        let cassette = ScriptedReasoner::from_value(preset.cassette.clone(), preset.source.clone())
            .map_err(|e| UsageError::new(e.to_string()))?
            .checking_digests();
        let cassette: Arc<dyn Reasoner> = Arc::new(cassette);
        // Parking allowed (replaying a cancelled run): a question the journal does not
        // answer parks the replay where the run stood.
        let inner: Arc<dyn Reasoner> = if args.no_park {
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
    if let Some(path) = &args.replay {
        let text = crate::source::read_text(path)
            .map_err(|e| UsageError::new(format!("cannot read {}: {e}", path.display())))?;
        let source = format!("recorded answers replayed from {}", path.display());
        let cassette = ScriptedReasoner::from_text(&text, source)
            .map_err(|e| UsageError::new(e.to_string()))?
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
    args: &StartArgs,
) -> Result<(Map<String, Value>, Option<Untrusted>), UsageError> {
    let config = app
        .config
        .as_ref()
        .ok_or_else(|| UsageError::new("no flow config"))?;
    let mut vars: Map<String, Value> = config
        .variables
        .iter()
        .map(|v| (v.name.value.clone(), v.default.clone()))
        .collect();
    let mut untrusted = Untrusted::new();
    // A replay of a run journalled before provenance was recorded: unknown.
    let mut known = true;
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
    if let (Some(s), Some(name)) = (scenario, &args.scenario) {
        let source = format!("from scenario `{name}`'s inputs");
        inputs(&mut vars, &mut untrusted, s.inputs.clone(), &source);
    }
    if let Some(preset) = &args.preset {
        // A replay starts from the replayed run's initial variables, provenance included.
        vars.extend(preset.variables.clone());
        match &preset.untrusted {
            Some(recorded) => untrusted.extend(recorded.clone()),
            None => known = false,
        }
    }
    if let Some(input) = &args.input {
        let text = if input == "-" {
            crate::source::read_text_from(std::io::stdin())
                .map_err(|e| UsageError::new(format!("cannot read stdin: {e}")))?
        } else {
            crate::source::read_text(input)
                .map_err(|e| UsageError::new(format!("cannot read {input}: {e}")))?
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => inputs(&mut vars, &mut untrusted, map, "from --input"),
            Ok(_) => {
                return Err(UsageError::new(format!(
                    "{input}: the input must be a JSON object"
                )));
            }
            Err(e) => {
                let message = e.to_string();
                let what = message.split(" at line ").next().unwrap_or(&message);
                return Err(UsageError::new(format!(
                    "{input}:{}:{}: invalid JSON: {what}",
                    e.line(),
                    e.column()
                )));
            }
        }
    }
    for assignment in &args.vars {
        let (name, raw) = assignment
            .split_once('=')
            .ok_or_else(|| UsageError::new(format!("--var {assignment}: expected NAME=VALUE")))?;
        if name.trim().is_empty() {
            return Err(UsageError::new(format!(
                "--var {assignment}: the variable has no name (expected NAME=VALUE)"
            )));
        }
        let declared = config.variable(name).map(|v| &v.default);
        if declared.is_none()
            && let Some(close) = crate::diag::did_you_mean(
                name,
                config.variables.iter().map(|v| v.name.value.as_str()),
            )
        {
            // A typo would set a variable nothing reads while the real one keeps its default.
            return Err(UsageError::new(format!(
                "--var {name}: the app declares no variable `{name}`"
            ))
            .with_help(format!("did you mean `{close}`?")));
        }
        let value = typed_value(name, raw, declared)?;
        let value = Map::from_iter([(name.to_string(), value)]);
        inputs(&mut vars, &mut untrusted, value, "from --var");
    }
    Ok((vars, known.then_some(untrusted)))
}

/// A `--var` value, typed by the variable's declared default.
fn typed_value(name: &str, raw: &str, declared: Option<&Value>) -> Result<Value, UsageError> {
    let bad = |what: &str| UsageError::new(format!("--var {name}={raw}: `{name}` is {what}"));
    Ok(match declared {
        Some(Value::Number(_)) => {
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

/// Graph mode's writer of this run (none without a `graph:` block). A store that cannot be
/// set up (an unset variable, no on-disk store in this build) is a usage error: nothing is
/// written. A store that fails later fails the run.
fn open_graph(
    loaded: &LoadedApp,
    run_id: &str,
) -> Result<Option<Arc<crate::graph::abox::GraphRun>>, UsageError> {
    crate::graph::abox::graph_run(loaded, run_id)
        .map(|g| g.map(Arc::new))
        .map_err(|e| {
            UsageError::new(format!("graph mode: {e}"))
                .with_help("the `graph:` block of the flow config names the store (docs/graph.md)")
        })
}

/// An observer folding the committed records into `state` (the run's state without
/// reading its journal back).
fn folding(state: &Arc<Mutex<FlowState>>) -> impl Fn(&Record) + Send + Sync + 'static {
    let state = state.clone();
    move |record| lock_state(&state).apply(record)
}

fn lock_state(state: &Mutex<FlowState>) -> std::sync::MutexGuard<'_, FlowState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// The journal with the graph store as an observer of its committed records.
fn with_graph(journal: Journal, graph: &Option<Arc<crate::graph::abox::GraphRun>>) -> Journal {
    match graph {
        Some(g) => {
            let g = g.clone();
            journal.with_observer(move |record: &Record| g.apply(record))
        }
        None => journal,
    }
}

/// Close a journal the engine left open: `run_finished`, failed with `message` (unless it
/// has one already).
fn close_failed(journal: &Journal, message: &str) {
    let Ok(read) = store::read_journal(journal.path()) else {
        return;
    };
    if read
        .records
        .iter()
        .any(|r| matches!(r.event, Event::RunFinished { .. }))
    {
        return;
    }
    let state = FlowState::fold(read.records.iter());
    let _ = journal
        .emit(Event::RunFinished {
            status: RunStatus::Failed,
            message: Some(message.to_string()),
            variables: state.process_variables.clone(),
            steps: state.steps,
        })
        .and_then(|_| journal.commit());
}
