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

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{ArgGroup, Args};
use rmcp::ServiceExt;

use crate::app::registry::AppRef;
use crate::mcp::RegisteredFlow;
use crate::mcp::http::{HttpBridge, Limits};
use crate::secret::Secret;

use super::output::count;
use super::signals::Signals;
use super::target::{Target, all_apps, resolve};
use super::{Cli, Outcome, Style, UsageError};
use crate::run::chain;
use crate::run::host::{GRACE, Journals, Labels};
use crate::run::hosting::{McpHost, Settings};

use super::serve_a2a::{no_app_to_serve, warn_left_out};

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("transport").required(true).multiple(true).args(["http", "stdio", "a2a", "ui"])))]
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

    /// Serve the web console (tasklist, runs, start) at http://HOST:PORT, alone or beside
    /// --a2a or --http on the same run host (beside --http, a question nobody answers parks
    /// its run for the console's people); prints `listening http://HOST:PORT` (beside the
    /// others, `console http://HOST:PORT` after their lines) once ready
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "stdio")]
    pub ui: Option<String>,

    /// The console's users file (`cuga-flo users add`) [default: <run-dir>/users, when
    /// it exists]; without one (nor --user-header), only a loopback address is served,
    /// to the local user
    #[arg(long, value_name = "FILE", requires = "ui")]
    pub users: Option<PathBuf>,

    /// A trusted reverse proxy signs people in and names them in this request header
    /// (e.g. X-Forwarded-User); the console must then be reachable through the proxy only
    #[arg(long, value_name = "HEADER", requires = "ui", conflicts_with = "users")]
    pub user_header: Option<String>,

    /// Require `Authorization: Bearer <token>`, the token read from this environment
    /// variable (needed to bind to anything but a loopback address)
    #[arg(long, value_name = "VAR", conflicts_with_all = ["token_file", "stdio"])]
    pub token_env: Option<String>,

    /// Require `Authorization: Bearer <token>`, the token read from this file (its first
    /// line)
    #[arg(long, value_name = "FILE", conflicts_with = "stdio")]
    pub token_file: Option<PathBuf>,

    /// Serve the process's metrics (runs, control points, model and tool calls, journal
    /// commits) in Prometheus's text format at http://HOST:PORT/metrics (port 0: any free
    /// port), behind the bearer token when one is given; prints `metrics URL` with the
    /// listening lines
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics: Option<String>,

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
    /// The A2A agents (`addr`) and the web console (`--ui`), on one run host.
    A2a {
        addr: Option<SocketAddr>,
        token: Option<Secret>,
    },
}

pub fn run(cli: &Cli, args: &ServeArgs, style: Style) -> Result<Outcome, UsageError> {
    crate::serving::raise_open_files_limit();
    if args.stdio && (args.http.is_some() || args.a2a.is_some()) {
        return Err(UsageError::new(
            "--stdio serves MCP alone: give it without --http or --a2a",
        ));
    }
    if args.http.is_some() && args.a2a.is_some() {
        return Err(UsageError::new(
            "--http and --a2a are two servers: start one `cuga-flo serve` for each (on the same --run-dir)",
        ));
    }
    let transport = match (&args.a2a, &args.ui) {
        (Some(a2a), _) => {
            let (addr, token) = listen(args, "--a2a", a2a)?;
            Transport::A2a {
                addr: Some(addr),
                token,
            }
        }
        // The console alone: on the run host of the A2A agents, without them.
        (None, Some(_)) if args.http.is_none() => Transport::A2a {
            addr: None,
            token: None,
        },
        _ => transport(args)?,
    };
    // Read once, up front: a broken answers file is a usage error, not a problem of each
    // app; every app's chain answers from the one parsed file.
    let answers = chain::AnswersFile::of(args.answers.as_deref())?.map(Arc::new);
    let settings = Settings {
        apps_dir: cli.apps_dir.clone(),
        run_dir: args.journal.run_dir.clone(),
        durability: args.journal.durability,
        no_model: args.no_model,
        answers,
        input_wait: Duration::from_secs(args.session_idle),
        max_wait: args.max_wait,
    };
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
    let console = match &args.ui {
        Some(ui) => Some(console(args, ui)?),
        None => None,
    };
    let metrics = match &args.metrics {
        Some(m) => Some(listen(args, "--metrics", m)?),
        None => None,
    };
    if let Transport::A2a { addr, token } = transport {
        let limits = crate::a2a::server::Limits {
            read_timeout: Duration::from_secs(args.read_timeout),
            max_tasks: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
            retain: Duration::from_secs(args.session_idle),
            ..crate::a2a::server::Limits::default()
        };
        let listen = super::serve_a2a::Listen {
            addr,
            token,
            limits,
            console,
            metrics,
        };
        return super::serve_a2a::run(&settings, style, &targets, listen);
    }

    let labels = Labels::default();
    // The runs' journals: a delegation journals its remote task in its run's.
    let journals = Journals::new(
        args.journal.run_dir.clone(),
        labels.clone(),
        args.journal.durability,
    );
    let (apps, left) = settings.mcp_apps(&targets, &journals, &labels, console.is_some());
    warn_left_out(&left, style);
    if apps.flows.is_empty() {
        return Err(no_app_to_serve(left.len()));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| UsageError::new(format!("cannot start the async runtime: {e}")))?;
    // `register_flow` loads apps from the apps folder and the served apps' folders.
    let mut roots = vec![cli.apps_dir.clone()];
    roots.extend(targets.iter().map(|app| app.dir.clone()));
    let console = match console {
        Some((addr, identity)) => {
            let runner = settings
                .console_runner(apps.for_console, &journals)
                .map_err(|e| UsageError::new(crate::diag::chain(&e)))?;
            let web = crate::web::Settings {
                identity,
                read_timeout: Duration::from_secs(args.read_timeout),
            };
            Some((addr, Arc::new(runner), web))
        }
        None => None,
    };
    let outcome = runtime.block_on(serve(
        &settings, apps.flows, roots, labels, journals, transport, args, console, metrics,
    ));
    // A stdin reader may still be blocked in a read: do not wait for it.
    runtime.shutdown_background();
    outcome
}

/// Where the web console listens and who may sign in: a users file, a proxy's header, or
/// nobody (the local user, on a loopback address only).
fn console(args: &ServeArgs, ui: &str) -> Result<(SocketAddr, crate::web::Identity), UsageError> {
    let addr = ui
        .to_socket_addrs()
        .map_err(|e| {
            UsageError::new(format!("--ui {ui}: not an address to listen on: {e}"))
                .with_help("give HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free port)")
        })?
        .next()
        .ok_or_else(|| UsageError::new(format!("--ui {ui}: the host has no address")))?;
    if let Some(h) = &args.user_header {
        if axum::http::HeaderName::from_bytes(h.as_bytes()).is_err() {
            return Err(UsageError::new(format!(
                "--user-header {h}: not a header name"
            )));
        }
        return Ok((addr, crate::web::Identity::Header(h.to_ascii_lowercase())));
    }
    let (path, given) = match &args.users {
        Some(p) => (p.clone(), true),
        None => (
            args.journal.run_dir.join(crate::web::users::DEFAULT_FILE),
            false,
        ),
    };
    if given && !path.is_file() {
        return Err(
            UsageError::new(format!("--users {}: no such file", path.display()))
                .with_help("create it with `cuga-flo users add NAME --users FILE`"),
        );
    }
    let users =
        crate::web::users::Users::read(&path).map_err(|e| UsageError::new(e.to_string()))?;
    if !users.is_empty() {
        return Ok((addr, crate::web::Identity::Users(users)));
    }
    if !addr.ip().is_loopback() {
        return Err(UsageError::new(format!(
            "refusing to serve the console on {addr} without sign-in: it is not a loopback address"
        ))
        .with_help(
            "add people with `cuga-flo users add NAME` (or pass --user-header behind a signing-in proxy), or bind to 127.0.0.1",
        ));
    }
    let user = std::env::var("USER")
        .ok()
        .filter(|u| crate::web::users::valid_name(u))
        .unwrap_or_else(|| "local".to_string());
    tracing::warn!(
        "the console has no users file: everyone reaching it (on loopback only) is `{user}`; add people with `cuga-flo users add`"
    );
    Ok((addr, crate::web::Identity::Local(user)))
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
            Some(token(&value, &format!("--token-env {var}"))?)
        }
        (None, Some(path)) => {
            let text = crate::source::read_text(path).map_err(|e| {
                UsageError::new(format!(
                    "--token-file {}: cannot read it: {e}",
                    path.display()
                ))
            })?;
            let first = text.lines().next().unwrap_or_default();
            Some(token(first, &format!("--token-file {}", path.display()))?)
        }
        (None, None) => None,
    };
    crate::serving::exposure(addr, token.as_ref()).map_err(|e| {
        let refused = UsageError::new(e.to_string());
        match e {
            crate::serving::Exposure::NoToken { .. } => refused.with_help(
                "pass --token-env VAR or --token-file FILE (clients then send \
                 `Authorization: Bearer <token>`), or bind to 127.0.0.1",
            ),
            crate::serving::Exposure::WeakToken { .. } => refused,
        }
    })?;
    Ok((addr, token))
}

/// A usable token from `value`; the message names where it came from, never the token.
fn token(value: &str, from: &str) -> Result<Secret, UsageError> {
    crate::serving::token(value).map_err(|e| UsageError::new(format!("{from}: {e}")))
}

/// The web console beside MCP over HTTP: where it listens, its run host, its settings.
type Console = (
    SocketAddr,
    Arc<crate::run::agent::Runner>,
    crate::web::Settings,
);

#[allow(clippy::too_many_arguments)]
async fn serve(
    settings: &Settings,
    flows: Vec<RegisteredFlow>,
    roots: Vec<PathBuf>,
    labels: Labels,
    journals: Journals,
    transport: Transport,
    args: &ServeArgs,
    console: Option<Console>,
    metrics: Option<(SocketAddr, Option<Secret>)>,
) -> Result<Outcome, UsageError> {
    let mut signals =
        Signals::new().map_err(|e| UsageError::new(format!("cannot watch for signals: {e}")))?;
    let metrics = super::serve_a2a::metrics_endpoint(metrics).await?;
    journals.measured();
    let direct = args.bridge == super::start::BridgeChoice::Direct;
    let host = McpHost::start(settings, flows, roots, labels, journals, direct)
        .await
        .map_err(|e| UsageError::new(crate::diag::chain(&e)))?;
    tracing::info!(
        "serving {}: {}",
        count(host.keys.len(), "app"),
        host.keys.join(", ")
    );
    model_endpoints();
    let result = match transport {
        Transport::Http { addr, token } => {
            let limits = Limits {
                read_timeout: Duration::from_secs(args.read_timeout),
                max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
                session_idle: Duration::from_secs(args.session_idle),
                ..Limits::default()
            };
            let web = match console {
                Some((addr, runner, settings)) => Some(
                    crate::web::WebConsole::bind(addr, runner, settings)
                        .await
                        .map_err(|e| UsageError::new(format!("cannot listen on {addr}: {e}")))?,
                ),
                None => None,
            };
            let mut extra: Vec<String> =
                web.iter().map(|w| format!("console {}", w.url())).collect();
            extra.extend(metrics.iter().map(|m| format!("metrics {}", m.url())));
            let served = serve_http(&host, addr, token, limits, &mut signals, &extra).await;
            if let Some(web) = web {
                web.shutdown().await;
            }
            served
        }
        Transport::Stdio => {
            if let Some(m) = &metrics {
                tracing::info!("metrics {}", m.url());
            }
            serve_stdio(&host, &mut signals).await
        }
        Transport::A2a { .. } => Err(UsageError::new("`serve --a2a` serves no MCP")),
    };
    host.stop().await;
    if let Some(m) = metrics {
        m.stop().await;
    }
    result
}

async fn serve_http(
    host: &McpHost,
    addr: SocketAddr,
    token: Option<Secret>,
    limits: Limits,
    signals: &mut Signals,
    extra: &[String],
) -> Result<Outcome, UsageError> {
    let mut http = HttpBridge::bind_with(host.server.clone(), addr, token, limits)
        .await
        .map_err(|e| UsageError::new(format!("cannot listen on {addr}: {e}")))?;
    super::signals::announce(
        "MCP over streamable HTTP",
        &http.url(),
        extra,
        http.requires_token(),
    );
    let addr = http.local_addr();
    super::signals::until_signal(signals, http.stopped(), "HTTP", addr).await?;
    let in_flight = http.in_flight();
    if !http.shutdown(GRACE, || host.open_runs() > 0).await {
        tracing::warn!(
            "{} still in flight after {}s; interrupting",
            count(in_flight.max(1), "request"),
            GRACE.as_secs()
        );
    }
    Ok(Outcome::Ok)
}

async fn serve_stdio(host: &McpHost, signals: &mut Signals) -> Result<Outcome, UsageError> {
    let running = tokio::select! {
        running = host.server.clone().serve(rmcp::transport::stdio()) => running,
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
                while host.open_runs() > 0 {
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

/// A line per model endpoint the served apps call: how many requests it takes at once
/// (`max_concurrency`, or `CUGA_FLO_LLM_MAX_CONCURRENCY`), over every run served.
pub(super) fn model_endpoints() {
    for gate in crate::reason::llm::client::endpoints() {
        tracing::info!(
            "model {}: {} at once",
            gate.endpoint,
            count(gate.limit as usize, "request")
        );
    }
}
