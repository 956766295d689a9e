//! What `serve` hosts, whichever way it serves: the apps loaded once (each one left out
//! with why), the run host of the A2A agents and of the web console ([`Settings::runner`]),
//! and the MCP bridge server with its in-process client and the adoption of the runs a
//! server now gone left waiting ([`McpHost`]). The CLI chooses what to serve, prints, and
//! waits for signals; the transports listen.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::a2a::server::AgentSpec;
use crate::app::LoadedApp;
use crate::app::registry::AppRef;
use crate::engine::native::NativeEngine;
use crate::journal::Durability;
use crate::mcp::{BridgeError, BridgeServer, InProcessBridge, RegisteredFlow, Registry, RunDir};
use crate::run::agent::{self, AgentError, ChildSettings, Runner, Served};
use crate::run::chain::{self, AnswersFile, ChainError};
use crate::run::host::{self, Adopt, Journals, Labels, NotServed};

/// How `serve` serves its apps, whatever the protocol.
#[derive(Clone)]
pub struct Settings {
    /// The apps folder (a client may register apps from it over MCP; a call activity's
    /// callee is looked up there).
    pub apps_dir: PathBuf,
    pub run_dir: PathBuf,
    pub durability: Durability,
    pub no_model: bool,
    /// The answers file, read once for every app.
    pub answers: Option<Arc<AnswersFile>>,
    /// How long an input-required task waits for its caller, and a finished one is kept.
    pub input_wait: Duration,
    /// How long a run waits in-process for a timer before it parks.
    pub max_wait: Option<u64>,
}

/// Why the host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostingError {
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Answers(#[from] ChainError),
    #[error(transparent)]
    Bridge(#[from] BridgeError),
    #[error("cannot start the run threads")]
    Threads(#[source] std::io::Error),
}

/// An app named to serve and left out: why, and the problems found (a model that does
/// not validate).
#[derive(Debug)]
pub struct LeftOut {
    pub app: String,
    pub why: String,
    pub problems: Vec<String>,
}

impl LeftOut {
    fn new(app: &AppRef, why: impl Into<String>) -> LeftOut {
        LeftOut {
            app: app.name.clone(),
            why: why.into(),
            problems: Vec::new(),
        }
    }

    fn invalid(app: &AppRef, problems: Vec<String>) -> LeftOut {
        LeftOut {
            app: app.name.clone(),
            why: format!(
                "does not validate ({})",
                crate::diag::count(problems.len(), "error")
            ),
            problems,
        }
    }
}

/// Why an app is not served, in one line: with its causes, and what to do in brackets.
fn with_help(why: &NotServed) -> String {
    use crate::diag::Help as _;
    let text = crate::diag::chain(why);
    match why.help() {
        Some(help) => format!("{text} ({help})"),
        None => text,
    }
}

/// The apps served over MCP: their registered flows, and (beside the web console) the
/// loaded apps the console serves.
pub struct McpApps {
    pub flows: Vec<RegisteredFlow>,
    pub for_console: Vec<LoadedApp>,
}

impl Settings {
    fn answers(&self) -> Option<&AnswersFile> {
        self.answers.as_deref()
    }

    /// Load `targets` to be served over MCP, each labelled for its runs' journals; beside
    /// the console (`console`), their questions park for its people. An app whose process
    /// key another app served already has is left out.
    pub fn mcp_apps(
        &self,
        targets: &[AppRef],
        journals: &Journals,
        labels: &Labels,
        console: bool,
    ) -> (McpApps, Vec<LeftOut>) {
        let mut apps = McpApps {
            flows: Vec::new(),
            for_console: Vec::new(),
        };
        let mut left = Vec::new();
        for app in targets {
            match host::load(app, self.answers(), self.no_model, journals, console) {
                Ok((flow, _, _))
                    if apps.flows.iter().any(|f| f.process_key == flow.process_key) =>
                {
                    left.push(LeftOut::new(
                        app,
                        format!(
                            "has the process key `{}` of an app served already",
                            flow.process_key
                        ),
                    ));
                }
                Ok((flow, judgement, loaded)) => {
                    let key = &flow.process_key;
                    labels.set(key, &app.name, &judgement, &loaded.digest());
                    labels.set_app(key, &loaded);
                    labels.set_launch(key, &loaded, self.answers_path(), self.no_model);
                    apps.flows.push(flow);
                    if console {
                        apps.for_console.push(loaded);
                    }
                }
                Err(NotServed::Invalid(errors)) => left.push(LeftOut::invalid(app, errors)),
                Err(other) => left.push(LeftOut::new(app, with_help(&other))),
            }
        }
        (apps, left)
    }

    /// Load `targets` as A2A agents (`caller`: served to A2A callers; `console`: to the
    /// web console's people), each under its slug.
    pub fn agents(
        &self,
        targets: &[AppRef],
        journals: &Journals,
        labels: &Labels,
        caller: bool,
        console: bool,
    ) -> (HashMap<String, Served>, Vec<AgentSpec>, Vec<LeftOut>) {
        let mut apps = HashMap::new();
        let mut specs = Vec::new();
        let mut left = Vec::new();
        for app in targets {
            let slug = agent::slug(&app.name);
            let loaded = match chain::load_checked(app) {
                Ok(l) => l,
                Err(errors) => {
                    left.push(LeftOut::invalid(app, errors));
                    continue;
                }
            };
            if apps.contains_key(&slug) {
                left.push(LeftOut::new(app, format!("is served as `{slug}` already")));
                continue;
            }
            let answers = self.answers();
            match agent::serve_app(
                loaded,
                answers,
                self.no_model,
                journals,
                labels,
                caller,
                console,
            ) {
                Ok((served, spec)) => {
                    specs.push(spec);
                    apps.insert(slug, served);
                }
                Err(e) => left.push(LeftOut::new(app, e.to_string())),
            }
        }
        (apps, specs, left)
    }

    /// The run host of served apps (the A2A agents' and the web console's).
    pub fn runner(
        &self,
        apps: HashMap<String, Served>,
        journals: &Journals,
    ) -> Result<Runner, HostingError> {
        let children = ChildSettings {
            apps_dir: self.apps_dir.clone(),
            run_dir: self.run_dir.clone(),
            durability: self.durability,
            no_model: self.no_model,
            given: chain::given_to_calls(None, self.answers())?,
        };
        Ok(Runner::new(
            apps,
            children,
            journals.clone(),
            self.input_wait,
            self.max_wait,
        )?)
    }

    /// The web console's run host beside MCP: the MCP apps, their questions parking for
    /// the console's people.
    pub fn console_runner(
        &self,
        for_console: Vec<LoadedApp>,
        journals: &Journals,
    ) -> Result<Runner, HostingError> {
        let mut apps = HashMap::new();
        for loaded in for_console {
            let slug = agent::slug(&loaded.name);
            let served =
                agent::served_for_console(loaded, self.answers(), self.no_model, journals)?;
            apps.insert(slug, served);
        }
        self.runner(apps, journals)
    }

    fn answers_path(&self) -> Option<&std::path::Path> {
        self.answers.as_deref().map(|a| a.path.as_path())
    }
}

/// The MCP bridge server of `serve --http`/`--stdio`: the served flows registered, apps
/// loadable by clients from `roots`, runs journalled and held when they park, the engine's
/// in-process client, and the adoption of runs a server now gone left waiting.
pub struct McpHost {
    pub server: BridgeServer,
    bridge: InProcessBridge,
    adopting: tokio::task::JoinHandle<()>,
    journals: Journals,
    /// The process keys served, in order.
    pub keys: Vec<String>,
}

impl McpHost {
    /// Start the host (on the current runtime). `direct`: `run_process` calls the
    /// registered harnesses directly rather than through the in-process MCP bridge.
    pub async fn start(
        settings: &Settings,
        flows: Vec<RegisteredFlow>,
        roots: Vec<PathBuf>,
        labels: Labels,
        journals: Journals,
        direct: bool,
    ) -> Result<McpHost, HostingError> {
        let registry = Arc::new(Registry::default());
        let keys: Vec<String> = flows.into_iter().map(|f| registry.register(f)).collect();
        let loader = {
            let no_model = settings.no_model;
            let answers = settings.answers.clone();
            let registry = registry.clone();
            // A client may add apps from the apps folder or the served apps' folders; a
            // process key already registered is refused (a run may be using it).
            let served = journals.clone();
            host::flow_loader(&roots, Some(journals.lookup()), move |loaded| {
                let config = loaded.config.as_ref().ok_or(NotServed::NoConfig)?;
                let key = config.process_key();
                if registry.flow(key).is_ok() {
                    return Err(NotServed::Registered(key.to_string()));
                }
                let reasoner = host::judge(loaded, answers.as_deref(), no_model, Some(&served))?;
                labels.set(key, &loaded.name, &reasoner.describe(), &loaded.digest());
                labels.set_app(key, loaded);
                labels.set_launch(
                    key,
                    loaded,
                    answers.as_deref().map(|a| a.path.as_path()),
                    no_model,
                );
                Ok(reasoner)
            })
        };
        let mut server = BridgeServer::new(registry, Arc::new(NativeEngine::new()), Some(loader))
            .with_journals(journals.factory())
            .with_run_dir(RunDir {
                base: settings.run_dir.clone(),
                durability: settings.durability,
            })
            // A run that parks stays the server's: it resumes here when it can go on.
            .with_parking(Arc::new(journals.clone()))
            .with_max_wait(settings.max_wait);
        if direct {
            server = server.with_direct_callbacks();
        }
        // Each run on one core's thread, where it stays (see `serving::Cores`).
        let cores = crate::serving::Cores::per_core().map_err(HostingError::Threads)?;
        server = server.with_cores(Arc::new(cores));
        // The engine's side: `run_process` calls the control points back through it with
        // `--bridge mcp`.
        let bridge = InProcessBridge::start(server.clone()).await?;
        // Runs a server now gone left parked: taken over, and resumed here like the runs
        // started here.
        let adopting = {
            let server = server.clone();
            let take: Adopt =
                Arc::new(move |run_id, key, sink| Ok(server.adopt_parked(run_id, key, sink)?));
            tokio::spawn(journals.clone().keep_adopting(take))
        };
        Ok(McpHost {
            server,
            bridge,
            adopting,
            journals,
            keys,
        })
    }

    /// The runs open now (journals held by this host).
    pub fn open_runs(&self) -> usize {
        self.journals.open_count()
    }

    /// Stop: interrupt the runs still open, stop adopting, close the in-process bridge.
    pub async fn stop(self) {
        self.journals.interrupt_all();
        self.adopting.abort();
        let _ = tokio::time::timeout(Duration::from_secs(1), self.bridge.shutdown()).await;
    }
}
