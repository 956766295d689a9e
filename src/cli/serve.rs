//! `cuga-flo serve`: the bridge's MCP tools for a set of apps, as a real protocol surface.
//! Over streamable HTTP (`--http HOST:PORT`, the endpoint at `/mcp`) or over stdin/stdout
//! (`--stdio`), a client gets the harness tools (`execute_task`, `route_gateway`,
//! `evaluate_hook`), the registry tools (`register_flow`, `get_bpmn_process`,
//! `get_flow_annotations`) and `run_process`, which runs a registered process on the
//! native engine inside the server; its control points call back through an in-process
//! client, as with `start`. Each app's harness asks the policy rules, then the answers
//! file, then the app's model, as `start` does, but never a person.
//!
//! A run started by a client is journalled under `<run-dir>/runs/<run-id>/`, like a run of
//! `start`, so `cuga-flo runs show <run-id>` reads it. On SIGINT or SIGTERM the server
//! stops accepting, lets the requests in flight finish (for up to five seconds), closes
//! the journal of every run still going with a failed `run_finished` ("interrupted"), and
//! exits 0.
//!
//! Over HTTP, a bearer token (`--token-env VAR`, `--token-file FILE`) is required on
//! every request when one is configured, and must be configured to bind to anything but
//! a loopback address. It is compared in constant time and never logged.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use clap::{ArgGroup, Args};
use rmcp::ServiceExt;

use crate::app::registry::AppRef;
use crate::app::{FlowConfig, LoadedApp};
use crate::engine::native::NativeEngine;
use crate::journal::mailbox::{Delivery, DeliveryError};
use crate::journal::store::{self, Journal};
use crate::journal::{
    Anchor, Durability, Event, EventSink, FlowState, JournalError, JournalOptions, Record,
};
use crate::mcp::http::{HttpBridge, Limits};
use crate::mcp::{
    BridgeServer, InProcessBridge, JournalFactory, RegisteredFlow, Registry, RunProcessArgs,
};
use crate::reason::Reasoner;
use crate::secret::Secret;
use crate::vocab::RunStatus;

use super::output::count;
use super::signals::Signals;
use super::target::{Target, all_apps, resolve};
use super::{Cli, Outcome, Style, UsageError};
use crate::run::chain::{self, Labelled, Sources};

/// How long requests in flight may take to finish after a shutdown signal.
pub(super) const GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("transport").required(true).args(["http", "stdio", "a2a"])))]
pub struct ServeArgs {
    /// The apps to serve: names under the apps folder, app folders or flow config files
    #[arg(value_name = "APP|PATH")]
    pub apps: Vec<String>,

    /// Serve every app under the apps folder (those that do not validate are reported and
    /// left out)
    #[arg(long, conflicts_with = "apps")]
    pub all: bool,

    /// Serve MCP over streamable HTTP at http://HOST:PORT/mcp (port 0: any free port);
    /// prints `listening http://HOST:PORT/mcp` on stdout once ready
    #[arg(long, value_name = "HOST:PORT")]
    pub http: Option<String>,

    /// Serve MCP over stdin and stdout (logs go to stderr; nothing else to stdout)
    #[arg(long)]
    pub stdio: bool,

    /// Serve each app as an A2A 1.0 agent at http://HOST:PORT/<app> (its card at
    /// <app>/.well-known/agent-card.json; port 0: any free port); prints `listening
    /// http://HOST:PORT` and one `agent <app> <url>` line per app on stdout once ready
    #[arg(long, value_name = "HOST:PORT")]
    pub a2a: Option<String>,

    /// Require `Authorization: Bearer <token>`, the token read from this environment
    /// variable (needed to bind to anything but a loopback address)
    #[arg(long, value_name = "VAR", conflicts_with_all = ["token_file", "stdio"])]
    pub token_env: Option<String>,

    /// Require `Authorization: Bearer <token>`, the token read from this file (its first
    /// line)
    #[arg(long, value_name = "FILE", conflicts_with = "stdio")]
    pub token_file: Option<PathBuf>,

    /// Seconds a client has to send a request's head and body; also how long a connection
    /// may idle between requests before it is closed (HTTP, A2A)
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub read_timeout: u64,

    /// MCP sessions open at once; a new session beyond gets HTTP 503 (HTTP); A2A: tasks
    /// going at once (a new task beyond is refused)
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_sessions: u64,

    /// Seconds an MCP session may go unused before it is closed (HTTP); A2A: how long a
    /// task waits for the caller's answer when input-required (then it fails), and how
    /// long an ended task can still be read
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub session_idle: u64,

    /// Answers for control points, by id (YAML: `answers: {<id>: ...}`), asked after the
    /// policy rules and before the app's model
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,

    /// Never call a model, even when an app configures one
    #[arg(long)]
    pub no_model: bool,

    #[command(flatten)]
    pub journal: super::JournalArgs,

    /// How the runs that clients start with `run_process` reach the control points:
    /// directly (the bridge contract in-process), or back through the in-process MCP
    /// bridge, as an engine in another process would
    #[arg(long, value_enum, default_value = "direct")]
    pub bridge: super::start::BridgeChoice,

    /// Wait in-process for a timer due within SECS seconds; a run whose timer is due
    /// later parks, held by the server, which resumes it when the timer is due [default: 60]
    #[arg(long, value_name = "SECS")]
    pub max_wait: Option<u64>,
}

/// Where the server listens.
enum Transport {
    Http {
        addr: SocketAddr,
        token: Option<Secret>,
    },
    Stdio,
    A2a {
        addr: SocketAddr,
        token: Option<Secret>,
    },
}

pub fn run(cli: &Cli, args: &ServeArgs, style: Style) -> Result<Outcome, UsageError> {
    raise_open_files_limit();
    let transport = match &args.a2a {
        Some(a2a) => {
            let (addr, token) = listen(args, "--a2a", a2a)?;
            Transport::A2a { addr, token }
        }
        None => transport(args)?,
    };
    // Read once, up front: a broken answers file is a usage error, not a problem of each
    // app; every app's chain answers from the one parsed file.
    let answers = chain::AnswersFile::of(args.answers.as_deref())?.map(Arc::new);
    let targets: Vec<AppRef> = if args.all {
        all_apps(&cli.apps_dir)?
    } else if args.apps.is_empty() {
        return Err(UsageError::new(
            "name the apps to serve (app names, folders or flow configs), or pass --all",
        )
        .with_help("`cuga-flo list` shows the apps"));
    } else {
        let mut apps = Vec::new();
        for arg in &args.apps {
            match resolve(arg, &cli.apps_dir)? {
                Target::App(app) => apps.push(app),
                Target::Model(path) => {
                    return Err(UsageError::new(format!(
                        "{} is a BPMN model; `serve` serves apps",
                        path.display()
                    ))
                    .with_help("name the app folder or its flow config"));
                }
            }
        }
        apps
    };
    if let Transport::A2a { addr, token } = transport {
        return super::serve_a2a::run(cli, args, answers.as_deref(), style, &targets, addr, token);
    }

    let labels = Labels::default();
    // The runs' journals: a delegation journals its remote task in its run's.
    let journals = Journals::new(
        args.journal.run_dir.clone(),
        labels.clone(),
        args.journal.durability,
    );
    let mut flows = Vec::new();
    let mut skipped = 0;
    for app in &targets {
        match load(app, args, answers.as_deref(), journals.lookup()) {
            Ok((flow, _, _))
                if flows
                    .iter()
                    .any(|f: &RegisteredFlow| f.process_key == flow.process_key) =>
            {
                skipped += 1;
                eprintln!(
                    "{}: app `{}` has the process key `{}` of an app served already; not served",
                    style.yellow("warning"),
                    app.name,
                    flow.process_key
                );
            }
            Ok((flow, judgement, loaded)) => {
                labels.set(&flow.process_key, &app.name, &judgement, &loaded.digest());
                labels.set_app(&flow.process_key, &loaded);
                labels.set_launch(&flow.process_key, &loaded, args);
                flows.push(flow);
            }
            Err(problems) => {
                skipped += 1;
                eprintln!(
                    "{}: app `{}` {}; not served",
                    style.yellow("warning"),
                    app.name,
                    problems.0
                );
                for line in problems.1 {
                    eprintln!("  {line}");
                }
            }
        }
    }
    if flows.is_empty() {
        return Err(UsageError::new(format!(
            "no app to serve ({} left out)",
            count(skipped, "app")
        ))
        .with_help("run `cuga-flo validate` on them for the details"));
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| UsageError::new(format!("cannot start the async runtime: {e}")))?;
    // `register_flow` loads apps from the apps folder and the served apps' folders.
    let mut roots = vec![cli.apps_dir.clone()];
    roots.extend(targets.iter().map(|app| app.dir.clone()));
    let outcome = runtime.block_on(serve(
        flows, roots, labels, journals, transport, args, answers,
    ));
    // A stdin reader may still be blocked in a read: do not wait for it.
    runtime.shutdown_background();
    outcome
}

/// The shortest bearer token accepted on a non-loopback address (shorter ones are
/// accepted on loopback, with a warning).
const MIN_TOKEN_LEN: usize = 16;

/// Where the server listens, and its token; refuses a non-loopback address without one.
/// Raise this process's soft limit on open files to its hard limit, as servers do (Go's
/// runtime does it for every program): each open run holds its journal open, so the usual
/// soft limit of 1,024 would cap one `serve` at about a thousand runs open at once while
/// the hard limit allows hundreds of thousands. Best effort: a failure leaves the limit.
pub(super) fn raise_open_files_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0
                || limit.rlim_cur >= limit.rlim_max
            {
                return;
            }
            let before = limit.rlim_cur;
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                tracing::debug!(
                    "open files limit raised from {before} to {}",
                    limit.rlim_max
                );
            }
        }
    }
}

fn transport(args: &ServeArgs) -> Result<Transport, UsageError> {
    let Some(http) = &args.http else {
        return Ok(Transport::Stdio);
    };
    let (addr, token) = listen(args, "--http", http)?;
    Ok(Transport::Http { addr, token })
}

/// The address `flag` names and the token a client must send; refuses a non-loopback
/// address without a token.
pub(super) fn listen(
    args: &ServeArgs,
    flag: &str,
    http: &str,
) -> Result<(SocketAddr, Option<Secret>), UsageError> {
    let addr = http
        .to_socket_addrs()
        .map_err(|e| {
            UsageError::new(format!("{flag} {http}: not an address to listen on: {e}"))
                .with_help("give HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free port)")
        })?
        .next()
        .ok_or_else(|| UsageError::new(format!("{flag} {http}: the host has no address")))?;
    let token = match (&args.token_env, &args.token_file) {
        (Some(var), _) => {
            let value = std::env::var(var).map_err(|_| {
                UsageError::new(format!(
                    "--token-env {var}: the environment variable is not set (or not UTF-8)"
                ))
            })?;
            Some(secret(value, &format!("--token-env {var}"))?)
        }
        (None, Some(path)) => {
            let text = crate::source::read_text(path).map_err(|e| {
                UsageError::new(format!(
                    "--token-file {}: cannot read it: {e}",
                    path.display()
                ))
            })?;
            let first = text.lines().next().unwrap_or_default().to_string();
            Some(secret(first, &format!("--token-file {}", path.display()))?)
        }
        (None, None) => None,
    };
    if let Some(token) = &token
        && token.expose().len() < MIN_TOKEN_LEN
    {
        let why = format!(
            "the token has {} characters; a bearer token needs at least {MIN_TOKEN_LEN} (e.g. \
             `openssl rand -hex 32`)",
            token.expose().len()
        );
        if !addr.ip().is_loopback() {
            return Err(UsageError::new(format!(
                "refusing to serve on {addr}: {why}"
            )));
        }
        tracing::warn!("WEAK TOKEN: {why}; accepted only because {addr} is a loopback address");
    }
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(UsageError::new(format!(
            "refusing to serve on {addr} without a token: it is not a loopback address"
        ))
        .with_help(
            "pass --token-env VAR or --token-file FILE (clients then send \
             `Authorization: Bearer <token>`), or bind to 127.0.0.1",
        ));
    }
    Ok((addr, token))
}

/// A usable token: not empty, printable ASCII without spaces (a header value). The
/// messages name where it came from, never the token.
fn secret(value: String, from: &str) -> Result<Secret, UsageError> {
    let value = value.trim().to_string();
    if value.is_empty() {
        return Err(UsageError::new(format!("{from}: the token is empty")));
    }
    if !value.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(UsageError::new(format!(
            "{from}: the token must be printable ASCII without spaces"
        )));
    }
    Ok(Secret::new(value))
}

/// Why an app is not served: a summary and its problems, one line each.
type Problems = (String, Vec<String>);

/// Load, check and wire one app: its harness asks the chain of [`judge`], described by
/// the string returned with it.
/// An app's flow, its source of judgement and its digest.
fn load(
    app: &AppRef,
    args: &ServeArgs,
    answers: Option<&chain::AnswersFile>,
    journals: crate::reason::remote::RunJournals,
) -> Result<(RegisteredFlow, String, crate::app::LoadedApp), Problems> {
    let loaded = chain::load_checked(app).map_err(|errors| {
        let summary = format!("does not validate ({})", count(errors.len(), "error"));
        (summary, errors)
    })?;
    let reasoner = judge(&loaded, answers, args.no_model, Some(journals.clone()))
        .map_err(|e| (e, Vec::new()))?;
    let judgement = reasoner.describe();
    let flow =
        chain::registered_flow(&loaded, reasoner, Some(journals)).map_err(|e| (e, Vec::new()))?;
    Ok((flow, judgement, loaded))
}

/// An app's reasoner: policy rules, then the answers file, then the app's model (unless
/// `no_model`), then nothing. Its consultations (`human_consultation`) journal their
/// remote tasks into the journal `journals` finds for each run (the server's), so that
/// one still going past its agent's `wait` parks the run, which the server holds and
/// resumes in-process.
pub(super) fn judge(
    loaded: &LoadedApp,
    answers: Option<&chain::AnswersFile>,
    no_model: bool,
    journals: Option<crate::reason::remote::RunJournals>,
) -> Result<Arc<dyn Reasoner>, String> {
    let config: &FlowConfig = loaded.config.as_ref().ok_or("the app has no flow config")?;
    let remotes = Arc::new(crate::reason::remote::Remotes::of(config));
    if let Some(find) = journals {
        remotes.journal_by_run(find);
    }
    let sources = Sources {
        answers,
        no_model,
        remotes: Some(&remotes),
        // One answers file serves every flow the server runs (apps registered later
        // included): it is not checked against this app's control points.
        ..Sources::default()
    };
    let (reasoner, _) = chain::judgement(config, &sources).map_err(|e| match e.help() {
        Some(help) => format!("{e} ({help})"),
        None => e.to_string(),
    })?;
    Ok(reasoner)
}

/// The app name, the source of judgement and the app's digest of each process key, for
/// `RunStarted` (and the journal's anchor).
/// Also the served apps in graph mode, whose runs are written into their stores.
#[derive(Clone, Default)]
pub(super) struct Labels(
    Arc<Mutex<HashMap<String, Label>>>,
    Arc<Mutex<HashMap<String, crate::app::LoadedApp>>>,
    Arc<crate::graph::abox::Stores>,
    /// How each app is served, in its runs' `run_started.launch`: a run the server leaves
    /// parked is resumed by `worker` or `runs resume` with the same app and answers.
    Arc<Mutex<HashMap<String, crate::journal::Launch>>>,
);

type Label = (String, String, Option<String>);

impl Labels {
    pub(super) fn set(&self, process_key: &str, app: &str, judgement: &str, digest: &str) {
        lock(&self.0).insert(
            process_key.to_string(),
            (
                app.to_string(),
                judgement.to_string(),
                Some(digest.to_string()),
            ),
        );
    }

    /// The app of `process_key`, when it runs in graph mode (a `graph:` block): its runs
    /// are written into its store as `start` writes them.
    pub(super) fn set_app(&self, process_key: &str, loaded: &crate::app::LoadedApp) {
        if loaded.config.as_ref().is_some_and(|c| c.graph.is_some()) {
            lock(&self.1).insert(process_key.to_string(), loaded.clone());
        }
    }

    /// The app folder, answers file and `--no-model` the runs of `process_key` are served
    /// with (their `run_started.launch`).
    pub(super) fn set_launch(&self, process_key: &str, loaded: &LoadedApp, args: &ServeArgs) {
        self.set_launch_with(process_key, loaded, args.answers.as_deref(), args.no_model);
    }

    pub(super) fn set_launch_with(
        &self,
        process_key: &str,
        loaded: &LoadedApp,
        answers: Option<&Path>,
        no_model: bool,
    ) {
        let absolute = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let launch = crate::journal::Launch {
            app_dir: Some(absolute(&loaded.dir).display().to_string()),
            answers: answers.map(|a| absolute(a).display().to_string()),
            no_model,
            served: true,
            ..Default::default()
        };
        lock(&self.3).insert(process_key.to_string(), launch);
    }

    fn launch(&self, process_key: &str) -> Option<crate::journal::Launch> {
        lock(&self.3).get(process_key).cloned()
    }

    /// Graph mode's writer of run `run_id` of `process_key` (none without a `graph:`).
    fn graph(
        &self,
        process_key: &str,
        run_id: &str,
    ) -> Result<Option<Arc<crate::graph::abox::GraphRun>>, String> {
        let Some(loaded) = lock(&self.1).get(process_key).cloned() else {
            return Ok(None);
        };
        crate::graph::abox::served_graph_run(&self.2, &loaded, run_id)
            .map(|g| g.map(Arc::new))
            .map_err(|e| format!("run `{run_id}`: graph mode: {e}"))
    }

    fn get(&self, process_key: &str) -> Label {
        lock(&self.0)
            .get(process_key)
            .cloned()
            .unwrap_or_else(|| (process_key.to_string(), String::new(), None))
    }
}

async fn serve(
    flows: Vec<RegisteredFlow>,
    roots: Vec<PathBuf>,
    labels: Labels,
    journals: Journals,
    transport: Transport,
    args: &ServeArgs,
    answers: Option<Arc<chain::AnswersFile>>,
) -> Result<Outcome, UsageError> {
    let mut signals =
        Signals::new().map_err(|e| UsageError::new(format!("cannot watch for signals: {e}")))?;
    let registry = Arc::new(Registry::default());
    let keys: Vec<String> = flows.into_iter().map(|f| registry.register(f)).collect();
    let loader = {
        let no_model = args.no_model;
        let registry = registry.clone();
        // A client may add apps from the apps folder or the served apps' folders; a process
        // key already registered is refused (a run may be using it).
        let lookup = journals.lookup();
        chain::flow_loader(&roots, Some(journals.lookup()), move |loaded| {
            let config = loaded.config.as_ref().ok_or("the app has no flow config")?;
            let key = config.process_key();
            if registry.flow(key).is_ok() {
                return Err(format!(
                    "process key `{key}` is registered already (runs may be using it); \
                     restart the server to load a changed app"
                ));
            }
            let reasoner = judge(loaded, answers.as_deref(), no_model, Some(lookup.clone()))?;
            labels.set(key, &loaded.name, &reasoner.describe(), &loaded.digest());
            labels.set_app(key, loaded);
            labels.set_launch_with(
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
        .with_run_dir(crate::mcp::RunDir {
            base: args.journal.run_dir.clone(),
            durability: args.journal.durability,
        })
        // A run that parks stays the server's: it resumes here when it can go on.
        .with_parking(Arc::new(journals.clone()))
        .with_max_wait(args.max_wait);
    if args.bridge == super::start::BridgeChoice::Direct {
        server = server.with_direct_callbacks();
    }
    // Each run on one core's thread, where it stays (see `serving::Cores`).
    let cores = crate::serving::Cores::per_core()
        .map_err(|e| UsageError::new(format!("cannot start the run threads: {e}")))?;
    server = server.with_cores(Arc::new(cores));
    // The engine's side: `run_process` calls the control points back through it with
    // `--bridge mcp`.
    let bridge = InProcessBridge::start(server.clone())
        .await
        .map_err(UsageError::new)?;
    tracing::info!("serving {}: {}", count(keys.len(), "app"), keys.join(", "));
    // Runs a server now gone left parked: taken over, and resumed here like the runs
    // started here.
    let adopting = {
        let server = server.clone();
        let take: Adopt = Arc::new(move |run_id, key, sink| server.adopt_parked(run_id, key, sink));
        tokio::spawn(journals.clone().keep_adopting(take))
    };

    let result = match transport {
        Transport::Http { addr, token } => {
            let limits = Limits {
                read_timeout: Duration::from_secs(args.read_timeout),
                max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
                session_idle: Duration::from_secs(args.session_idle),
                ..Limits::default()
            };
            serve_http(server, addr, token, limits, &journals, &mut signals).await
        }
        Transport::Stdio => serve_stdio(server, &journals, &mut signals).await,
        Transport::A2a { .. } => Err(UsageError::new("`serve --a2a` serves no MCP")),
    };
    journals.interrupt_all();
    adopting.abort();
    let _ = tokio::time::timeout(Duration::from_secs(1), bridge.shutdown()).await;
    result
}

async fn serve_http(
    server: BridgeServer,
    addr: SocketAddr,
    token: Option<Secret>,
    limits: Limits,
    journals: &Journals,
    signals: &mut Signals,
) -> Result<Outcome, UsageError> {
    let mut http = HttpBridge::bind_with(server, addr, token, limits)
        .await
        .map_err(|e| UsageError::new(format!("cannot listen on {addr}: {e}")))?;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "listening {}", http.url());
    let _ = stdout.flush();
    drop(stdout);
    tracing::info!(
        "MCP over streamable HTTP at {} ({})",
        http.url(),
        if http.requires_token() {
            "bearer token required"
        } else {
            "no token"
        }
    );
    let signal = tokio::select! {
        signal = signals.recv() => signal,
        why = http.stopped() => {
            return Err(UsageError::new(format!(
                "the HTTP server on {} stopped: {why}",
                http.local_addr()
            )));
        }
    };
    tracing::info!("{signal}: shutting down");
    let in_flight = http.in_flight();
    if !http.shutdown(GRACE, || journals.open_count() > 0).await {
        tracing::warn!(
            "{} still in flight after {}s; interrupting",
            count(in_flight.max(1), "request"),
            GRACE.as_secs()
        );
    }
    Ok(Outcome::Ok)
}

async fn serve_stdio(
    server: BridgeServer,
    journals: &Journals,
    signals: &mut Signals,
) -> Result<Outcome, UsageError> {
    let running = tokio::select! {
        running = server.serve(rmcp::transport::stdio()) => running,
        signal = signals.recv() => {
            tracing::info!("{signal}: shutting down");
            return Ok(Outcome::Ok);
        }
    };
    let running = match running {
        Ok(running) => running,
        Err(e) => {
            tracing::error!("no MCP session on stdio: {e}");
            return Ok(Outcome::Failed);
        }
    };
    let cancel = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => {
            tracing::info!("stdin closed: shutting down");
        }
        signal = signals.recv() => {
            tracing::info!("{signal}: shutting down");
            let idle = async {
                while journals.open_count() > 0 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            };
            let _ = tokio::time::timeout(GRACE, idle).await;
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(1), &mut waiting).await;
        }
    }
    Ok(Outcome::Ok)
}

// ---- Journals of the runs clients start ----

/// A run's graph-mode writer.
type RunGraph = Arc<crate::graph::abox::GraphRun>;

type OpenRuns = Arc<Mutex<BTreeMap<String, Arc<RunJournal>>>>;

/// How a server takes over a run left parked (run id, process key, its journal opened
/// here): holds it and resumes it when it can go on.
pub(super) type Adopt = Arc<TakeOver>;

pub(super) type TakeOver =
    dyn Fn(&str, &str, Arc<dyn EventSink>) -> Result<(), String> + Send + Sync;

/// How often a server looks for runs left parked by a server that is gone.
const ADOPT_EVERY: Duration = Duration::from_secs(1);

/// The first record of the journal at `path` (its `run_started`), read alone.
fn first_record(path: &Path) -> Option<Record> {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::open(path).ok()?)
        .read_line(&mut line)
        .ok()?;
    serde_json::from_str(line.trim_end()).ok()
}

/// Opens a journal for each run a client starts, and closes those still open at shutdown.
#[derive(Clone)]
pub(super) struct Journals {
    base: PathBuf,
    labels: Labels,
    durability: Durability,
    open: OpenRuns,
    /// Cancelled when the server stops: the runs it holds parked stay parked.
    stop: tokio_util::sync::CancellationToken,
}

impl Journals {
    pub(super) fn new(base: PathBuf, labels: Labels, durability: Durability) -> Journals {
        Journals {
            base,
            labels,
            durability,
            open: OpenRuns::default(),
            stop: tokio_util::sync::CancellationToken::new(),
        }
    }

    fn factory(&self) -> JournalFactory {
        let journals = self.clone();
        Arc::new(move |args: &RunProcessArgs| journals.open(args))
    }

    pub(super) fn open(&self, args: &RunProcessArgs) -> Result<Arc<dyn EventSink>, String> {
        self.open_run(args).map(|(sink, _)| sink)
    }

    /// As [`Journals::open`], with the run's graph-mode writer (its child runs write into
    /// its store and link to it).
    pub(super) fn open_run(
        &self,
        args: &RunProcessArgs,
    ) -> Result<(Arc<dyn EventSink>, Option<RunGraph>), String> {
        crate::journal::store::check_run_id(&args.run_id)?;
        let dir = store::run_dir(&self.base, &args.run_id);
        let (app, judgement, app_digest) = self.labels.get(&args.process_key);
        let graph = self.labels.graph(&args.process_key, &args.run_id)?;
        let options = JournalOptions {
            durability: self.durability,
            anchor: Anchor::new(&args.run_id, app_digest.clone()),
        };
        let journal = Journal::create(&dir, options).map_err(|e| match e {
            // A journal there, or one still open (its run has finished but its sink lives).
            JournalError::Exists(_) | JournalError::Locked { .. } => format!(
                "run `{}` already has a journal under {}: a run id names one run",
                args.run_id,
                self.base.display()
            ),
            other => format!(
                "cannot create the journal of run `{}`: {other}",
                args.run_id
            ),
        })?;
        tracing::info!(
            "run {} of `{}`: journal {}",
            args.run_id,
            args.process_key,
            journal.path().display()
        );
        // Graph mode: the store is an observer of the journal, as for `start`.
        let journal = match &graph {
            Some(g) => {
                let g = g.clone();
                journal.with_observer(move |record: &crate::journal::Record| g.apply(record))
            }
            None => journal,
        };
        let run = Arc::new(RunJournal {
            run_id: args.run_id.clone(),
            sink: Labelled {
                inner: Arc::new(journal),
                app,
                judgement,
                launch: self.labels.launch(&args.process_key),
                sealed: Default::default(),
                app_digest,
                graph,
            },
            closed: Mutex::new(false),
            open: Arc::downgrade(&self.open),
            parked: Default::default(),
            wake: tokio::sync::Notify::new(),
        });
        lock(&self.open).insert(args.run_id.clone(), run.clone());
        let graph = run.sink.graph.clone();
        Ok((run, graph))
    }

    /// Take over the runs a server left parked that no process holds any more (the
    /// server crashed or stopped): the runs `serve` started (`run_started.launch.served`)
    /// of the apps served here, from the same app folder, that are parked. Each is taken
    /// under its journal's lock — exactly one process takes a run, however many servers
    /// and workers look at once — checked again once locked (it may have gone on
    /// meanwhile), held here as a run started here, and handed to `take`, which holds it
    /// until it can go on and resumes it. `ignored` keeps the runs that never will be
    /// taken (finished, or not started by a server), so that a look reads each once.
    pub(super) fn adopt_left_parked(
        &self,
        ignored: &mut std::collections::HashSet<String>,
        take: &TakeOver,
    ) -> usize {
        let mut taken = 0;
        for run_id in store::run_ids(&self.base) {
            if ignored.contains(&run_id) || lock(&self.open).contains_key(&run_id) {
                continue;
            }
            let dir = store::run_dir(&self.base, &run_id);
            let path = dir.join(store::JOURNAL_FILE);
            if let Some(Event::RunFinished { .. }) = store::last_record(&path).map(|r| r.event) {
                ignored.insert(run_id);
                continue;
            }
            let Some(Event::RunStarted {
                process_key,
                launch,
                parent,
                ..
            }) = first_record(&path).map(|r| r.event)
            else {
                continue; // being created, or not a run's journal
            };
            // A child run goes on with its parent, never on its own.
            let Some(launch) = launch.filter(|l| l.served && parent.is_none()) else {
                ignored.insert(run_id);
                continue;
            };
            // Only the runs of an app served here, from the same folder.
            let ours = self.labels.launch(&process_key);
            if ours.is_none_or(|ours| ours.app_dir != launch.app_dir) {
                continue;
            }
            if lock(&self.labels.1).contains_key(&process_key) {
                // Graph mode: its store's writer follows the run from its start.
                if ignored.insert(run_id.clone()) {
                    tracing::info!("run {run_id}: left parked in graph mode; `worker` resumes it");
                }
                continue;
            }
            if self.stop.is_cancelled() {
                break;
            }
            let Ok((journal, reopened)) = Journal::open(&dir, self.durability) else {
                continue; // held by a server, a worker or `runs resume`: theirs
            };
            let state = FlowState::fold(reopened.records.iter());
            if state.status.is_some() {
                ignored.insert(run_id);
                continue;
            }
            if state.waiting.is_none() {
                // Stopped while going (a crash mid-step): `runs resume` recovers it.
                continue;
            }
            let run = self.hold(&run_id, &process_key, journal);
            // Say at once who holds it: a delivery from now on is posted here.
            if let Err(e) = crate::journal::mailbox::hold_parked(&dir) {
                tracing::warn!("run {run_id}: cannot open its inbox: {e}");
            }
            match take(&run_id, &process_key, run) {
                Ok(()) => {
                    tracing::info!(
                        "run {run_id}: left parked by a server that is gone; taken over"
                    );
                    taken += 1;
                }
                Err(e) => {
                    tracing::warn!("run {run_id}: cannot take it over: {e}");
                    crate::journal::mailbox::release_parked(&dir);
                    lock(&self.open).remove(&run_id);
                }
            }
        }
        taken
    }

    /// Hold run `run_id` of `process_key`, whose journal was reopened here, as a run
    /// started here.
    fn hold(&self, run_id: &str, process_key: &str, journal: Journal) -> Arc<dyn EventSink> {
        let (app, judgement, app_digest) = self.labels.get(process_key);
        let run = Arc::new(RunJournal {
            run_id: run_id.to_string(),
            sink: Labelled {
                inner: Arc::new(journal),
                app,
                judgement,
                launch: self.labels.launch(process_key),
                sealed: Default::default(),
                app_digest,
                graph: None,
            },
            closed: Mutex::new(false),
            open: Arc::downgrade(&self.open),
            parked: Default::default(),
            wake: tokio::sync::Notify::new(),
        });
        lock(&self.open).insert(run_id.to_string(), run.clone());
        run
    }

    /// At once, then every [`ADOPT_EVERY`] until the server stops:
    /// [`Journals::adopt_left_parked`].
    pub(super) async fn keep_adopting(self, take: Adopt) {
        let ignored = Arc::new(Mutex::new(std::collections::HashSet::new()));
        loop {
            let (journals, take, ignored) = (self.clone(), take.clone(), ignored.clone());
            let look = tokio::task::spawn_blocking(move || {
                journals.adopt_left_parked(&mut lock(&ignored), &*take)
            });
            if let Err(e) = look.await {
                tracing::error!("the look for runs left parked failed: {e}");
            }
            tokio::select! {
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(ADOPT_EVERY) => {}
            }
        }
    }

    /// Finds the journal of a run still going here, by its id (for the harnesses: a
    /// delegation journals its remote task there).
    pub(super) fn lookup(&self) -> crate::reason::remote::RunJournals {
        let open = Arc::downgrade(&self.open);
        Arc::new(move |run_id: &str| {
            let open = open.upgrade()?;
            let run = lock(&open).get(run_id).cloned()?;
            Some(run as Arc<dyn EventSink>)
        })
    }

    /// The runs going here (those parked here are not going).
    pub(super) fn open_count(&self) -> usize {
        lock(&self.open).values().filter(|r| !r.is_parked()).count()
    }

    /// Whether run `run_id` is parked here (held by this server until it can go on).
    pub(super) fn is_parked(&self, run_id: &str) -> bool {
        lock(&self.open).get(run_id).is_some_and(|r| r.is_parked())
    }

    /// Close the journal of run `run_id`, if still going, with a failed `run_finished`.
    /// The run stays open until its record is written: a shutdown waiting for the open
    /// runs waits for it. A run parked here stays parked (its journal is left as it is).
    pub(super) fn interrupt(&self, run_id: &str, message: &str) {
        let run = lock(&self.open).get(run_id).cloned();
        if let Some(run) = run {
            if !run.is_parked() {
                run.interrupt(message);
            }
            lock(&self.open).remove(run_id);
        }
    }

    /// The records and the state of run `run_id` as its journal has them (committed
    /// first), while the run is held here.
    pub(super) fn records(&self, run_id: &str) -> Option<(Vec<Record>, FlowState)> {
        let run = lock(&self.open).get(run_id).cloned()?;
        self.read(&run)
    }

    /// Take nothing more from run `run_id`'s engine (it is being cancelled while it goes
    /// on its thread): its records from now on are refused.
    pub(super) fn seal(&self, run_id: &str) {
        if let Some(run) = lock(&self.open).get(run_id).cloned() {
            run.sink.seal();
        }
    }

    /// Stop holding parked run `run_id` (it is about to be ended here: cancelled).
    pub(super) fn unpark(&self, run_id: &str) {
        let Some(run) = lock(&self.open).get(run_id).cloned() else {
            return;
        };
        let _closed = lock(&run.closed);
        run.parked.store(false, std::sync::atomic::Ordering::SeqCst);
        crate::journal::mailbox::release_parked(&store::run_dir(&self.base, run_id));
    }

    /// Run `run_id`'s journal committed and read, with its state.
    fn read(&self, run: &RunJournal) -> Option<(Vec<Record>, FlowState)> {
        let _ = run.sink.inner.commit();
        let records = store::read_journal(run.sink.inner.path()).ok()?.records;
        let state = FlowState::fold(records.iter());
        Some((records, state))
    }

    /// Hold run `run_id`, which has parked, until it can go on: its timer is due, a
    /// delivery was journalled (through this server, or posted to its inbox by another
    /// process and taken here), or the child run it waits for has ended. The records to
    /// resume it from; `None` once the server stops (the run stays parked, for `worker`
    /// or `runs resume`) or when the run has ended meanwhile (cancelled).
    async fn hold_until_due(self, run_id: String) -> Option<Vec<Record>> {
        let run = lock(&self.open).get(&run_id).cloned()?;
        let dir = store::run_dir(&self.base, &run_id);
        {
            let _closed = lock(&run.closed);
            run.parked.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        if let Err(e) = crate::journal::mailbox::hold_parked(&dir) {
            tracing::warn!("run {run_id}: cannot open its inbox: {e}");
        }
        tracing::info!("run {run_id}: parked; held here until it can go on");
        let ready = loop {
            let Some((records, state)) = self.read(&run) else {
                // Left parked (as at shutdown): `runs resume` continues it.
                tracing::error!("run {run_id}: its journal cannot be read; left parked");
                crate::journal::mailbox::release_parked(&dir);
                return None;
            };
            if state.status.is_some() {
                break None;
            }
            let Some(waiting) = state.waiting.clone() else {
                break Some(records);
            };
            let now = crate::clock::now_ms();
            if waiting.due_ms.is_some_and(|due| due <= now)
                || !waiting.delivered.is_empty()
                || !state.unapplied_answers.is_empty()
                || crate::run::parked::child_finished(&self.base, &waiting.reason)
            {
                break Some(records);
            }
            let taken = {
                let _closed = lock(&run.closed);
                self.take_posted(&run, &dir)
            };
            if taken > 0 {
                continue;
            }
            let poll = crate::journal::mailbox::INBOX_POLL;
            let sleep = waiting
                .due_ms
                .map_or(poll, |due| Duration::from_millis(due - now).min(poll));
            tokio::select! {
                () = self.stop.cancelled() => {
                    crate::journal::mailbox::release_parked(&dir);
                    return None;
                }
                () = run.wake.notified() => {}
                () = tokio::time::sleep(sleep) => {}
            }
        };
        // Going on: deliveries posted meanwhile are taken first, then no more are.
        crate::journal::mailbox::release_parked(&dir);
        {
            let _closed = lock(&run.closed);
            self.take_posted(&run, &dir);
            run.parked.store(false, std::sync::atomic::Ordering::SeqCst);
        }
        let ready = ready?;
        // What was taken last is part of the records the run resumes from.
        Some(self.read(&run).map_or(ready, |(records, _)| records))
    }

    /// Journal the deliveries posted to parked run `run` by other processes.
    fn take_posted(&self, run: &RunJournal, dir: &Path) -> usize {
        crate::journal::mailbox::take_posted(dir, |delivery| {
            let (records, _) = self.read(run).ok_or_else(|| DeliveryError::Held {
                run: run.run_id.clone(),
                message: format!("cannot read the journal of run `{}`", run.run_id),
            })?;
            crate::journal::mailbox::deliver(&run.sink.inner, &records, &run.run_id, delivery)
        })
    }

    /// The state of run `run_id` as its journal has it (committed first), while the run
    /// is still going here.
    pub(super) fn state(&self, run_id: &str) -> Option<FlowState> {
        let run = lock(&self.open).get(run_id).cloned()?;
        let _ = run.sink.inner.commit();
        store::read_journal(run.sink.inner.path())
            .ok()
            .map(|r| FlowState::fold(r.records.iter()))
    }

    /// End the journal of run `run_id`, if still going, cancelled: `runs cancel`'s
    /// records (`run_cancelled`, then `run_finished` with status `cancelled`), with the
    /// variables and steps of `state`.
    pub(super) fn cancel(
        &self,
        run_id: &str,
        by: Option<String>,
        reason: Option<String>,
        remote: Vec<crate::journal::event::RemoteCancelled>,
        state: &FlowState,
    ) {
        let run = lock(&self.open).get(run_id).cloned();
        let Some(run) = run else { return };
        {
            let mut closed = lock(&run.closed);
            if *closed {
                return;
            }
            *closed = true;
            // Straight to the journal: the run's own sink may be sealed (see `seal`).
            let written = crate::run::cancel::journal_cancellation(
                &*run.sink.inner,
                by,
                reason,
                remote,
                state,
            );
            match written {
                Ok(()) => tracing::info!("run {run_id}: cancelled"),
                Err(e) => tracing::error!("run {run_id}: cannot journal its cancellation: {e}"),
            }
        }
        lock(&self.open).remove(run_id);
    }

    /// Close the journal of every run still going with a failed `run_finished`; the runs
    /// parked here stay parked (`worker` or `runs resume` continues them).
    pub(super) fn interrupt_all(&self) {
        self.stop.cancel();
        let runs: Vec<Arc<RunJournal>> = std::mem::take(&mut *lock(&self.open))
            .into_values()
            .collect();
        for run in runs {
            if run.is_parked() {
                crate::journal::mailbox::release_parked(&store::run_dir(&self.base, &run.run_id));
                tracing::info!("run {}: left parked", run.run_id);
            } else {
                run.interrupt("interrupted (the server shut down)");
            }
        }
    }
}

impl crate::mcp::Parking for Journals {
    fn until_due(&self, run_id: &str) -> crate::bridge::BoxFuture<'static, Option<Vec<Record>>> {
        Box::pin(self.clone().hold_until_due(run_id.to_string()))
    }

    fn deliver(
        &self,
        run_id: &str,
        delivery: &Delivery,
    ) -> Option<Result<Vec<Record>, DeliveryError>> {
        let run = lock(&self.open).get(run_id).cloned()?;
        let closed = lock(&run.closed);
        if *closed || !run.is_parked() {
            // Going here (or ending): a delivery waits until it parks.
            return Some(Err(DeliveryError::Held {
                run: run_id.to_string(),
                message: format!(
                    "run `{run_id}` is going in this server; a delivery is taken once it parks"
                ),
            }));
        }
        let written = match self.read(&run) {
            Some((records, _)) => {
                crate::journal::mailbox::deliver(&run.sink.inner, &records, run_id, delivery)
            }
            None => Err(DeliveryError::Held {
                run: run_id.to_string(),
                message: format!("cannot read the journal of run `{run_id}`"),
            }),
        };
        drop(closed);
        if written.is_ok() {
            run.wake.notify_one();
        }
        Some(written)
    }
}

/// The journal of one run started by a client.
struct RunJournal {
    run_id: String,
    sink: Labelled,
    /// Set once the run has its `run_finished` record: nothing is appended after it.
    closed: Mutex<bool>,
    open: Weak<Mutex<BTreeMap<String, Arc<RunJournal>>>>,
    /// Parked and held here (set and cleared under `closed`).
    parked: std::sync::atomic::AtomicBool,
    /// Woken by a delivery through this server while parked.
    wake: tokio::sync::Notify,
}

impl RunJournal {
    fn is_parked(&self) -> bool {
        self.parked.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn interrupt(&self, message: &str) {
        let mut closed = lock(&self.closed);
        if *closed {
            return;
        }
        *closed = true;
        let _ = self.sink.inner.commit();
        let state = store::read_journal(self.sink.inner.path())
            .map(|r| FlowState::fold(r.records.iter()))
            .unwrap_or_default();
        let written = self.sink.inner.emit(Event::RunFinished {
            status: RunStatus::Failed,
            message: Some(message.to_string()),
            variables: state.process_variables,
            steps: state.steps,
        });
        match written {
            Ok(_) => tracing::warn!("run {}: {message}", self.run_id),
            Err(e) => tracing::error!("run {}: cannot close its journal: {e}", self.run_id),
        }
    }
}

impl EventSink for RunJournal {
    fn emit(&self, event: Event) -> Result<Record, JournalError> {
        let mut closed = lock(&self.closed);
        if *closed {
            return Err(JournalError::Io {
                path: self.sink.inner.path().to_path_buf(),
                message: "the run was interrupted: the server shut down".to_string(),
            });
        }
        let finished = matches!(event, Event::RunFinished { .. });
        let record = self.sink.emit(event)?;
        if finished {
            *closed = true;
            drop(closed);
            if let Some(open) = self.open.upgrade() {
                lock(&open).remove(&self.run_id);
            }
        }
        Ok(record)
    }

    fn commit(&self) -> Result<(), JournalError> {
        self.sink.commit()
    }
}

/// Lock, ignoring poisoning.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(run_id: &str) -> RunProcessArgs {
        RunProcessArgs {
            process_key: "k".into(),
            run_id: run_id.into(),
            variables: serde_json::Map::new(),
            untrusted: None,
            bridge: None,
        }
    }

    fn started(run_id: &str) -> Event {
        Event::RunStarted {
            run_id: run_id.into(),
            app: "k".into(),
            process_key: "k".into(),
            process_id: "P".into(),
            engine: "native".into(),
            reasoner: String::new(),
            variables: serde_json::Map::new(),
            untrusted: None,
            launch: None,
            app_digest: None,
            parent: None,
        }
    }

    #[test]
    fn journals_are_labelled_unique_and_closed_when_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let labels = Labels::default();
        labels.set("k", "app_k", "answers file a.yaml", "d1");
        let journals = Journals::new(dir.path().to_path_buf(), labels, Durability::Batch);
        let open = journals.factory();

        // A run that finishes leaves the open set.
        let done = open(&run_args("done")).unwrap();
        done.emit(started("done")).unwrap();
        assert_eq!(journals.open_count(), 1);
        done.emit(Event::RunFinished {
            status: RunStatus::Completed,
            message: None,
            variables: serde_json::Map::new(),
            steps: 1,
        })
        .unwrap();
        assert_eq!(journals.open_count(), 0);
        let Err(e) = open(&run_args("done")) else {
            panic!("a second journal for the same run id");
        };
        assert!(e.contains("already has a journal"), "{e}");

        // A run still going at shutdown gets a failed `run_finished`, then nothing more.
        let going = open(&run_args("going")).unwrap();
        going.emit(started("going")).unwrap();
        journals.interrupt_all();
        assert!(going.emit(started("going")).is_err());
        let path = store::run_dir(dir.path(), "going").join(store::JOURNAL_FILE);
        let records = store::read_journal(&path).unwrap().records;
        assert_eq!(records.len(), 2);
        match &records[0].event {
            Event::RunStarted {
                app,
                reasoner,
                app_digest,
                ..
            } => {
                assert_eq!(app, "app_k");
                assert_eq!(reasoner, "answers file a.yaml");
                assert_eq!(app_digest.as_deref(), Some("d1"));
            }
            other => panic!("{other:?}"),
        }
        match &records[1].event {
            Event::RunFinished {
                status, message, ..
            } => {
                assert_eq!(*status, RunStatus::Failed);
                assert!(message.as_deref().unwrap().contains("interrupted"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn run_ids_name_one_folder() {
        assert!(crate::journal::store::check_run_id("20240229T123456Z-abc123").is_ok());
        assert!(crate::journal::store::check_run_id("r1.retry_2").is_ok());
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", ".hidden", "a b"] {
            assert!(crate::journal::store::check_run_id(bad).is_err(), "{bad:?}");
        }
        assert!(crate::journal::store::check_run_id(&"x".repeat(129)).is_err());
    }
}
