//! `cuga-flo serve --a2a HOST:PORT`: each app as an A2A 1.0 agent (the protocol side is
//! [`crate::a2a::server`]). An agent's base URL is `http://HOST:PORT/<app>`; its card
//! names the flow and one skill (the process: its description and its input variables).
//!
//! Each task the agent is sent is a run of the app on the native engine, journalled
//! under `<run-dir>/runs/<task id>/` (so `cuga-flo runs show <task id>` reads it): the
//! message's DataPart (or its text, a JSON object) gives the run's input variables; each
//! control point decided is a `working` status update; a control point that needs a
//! person (after the policy rules, the answers file and the app's model) makes the task
//! `input-required`, its status message the question (text, and a DataPart with the
//! question as `runs show` has it); the caller's next message in the task answers it,
//! checked as `runs answer` checks an answer (a wrong one asks again, saying why). The
//! run's final variables are the task's artifact (a DataPart); a failed run fails the
//! task with its message. `CancelTask` cancels the run as `runs cancel` does (its remote
//! tasks cancelled at their agents, `run_cancelled` by the A2A caller, `run_finished`
//! with status `cancelled`). A delegated task's remote task is journalled
//! (`remote_task_started`) as soon as its agent assigns it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::a2a::server::{A2aServer, AgentSpec, Limits};
use crate::app::registry::AppRef;
use crate::run::agent;
use crate::run::host::{Adopt, GRACE, Journals, Labels};
use crate::run::hosting::{LeftOut, Settings};
use crate::secret::Secret;

use super::output::count;
use super::signals::Signals;
use super::{Outcome, Style, UsageError};

/// Serve `targets` as A2A agents on `addr` (none: to the web console alone) and, with
/// `console`, the web console on the same run host.
/// Where `serve --a2a` (or `--ui` alone) listens, and how.
pub(super) struct Listen {
    /// The A2A agents' address (none: the web console alone).
    pub addr: Option<SocketAddr>,
    pub token: Option<Secret>,
    pub limits: Limits,
    /// `--ui`: where the web console listens, and who may sign in.
    pub console: Option<(SocketAddr, crate::web::Identity)>,
    /// `--metrics`: where the Prometheus endpoint listens, and its token.
    pub metrics: Option<(SocketAddr, Option<Secret>)>,
}

pub(super) fn run(
    settings: &Settings,
    style: Style,
    targets: &[AppRef],
    listen: Listen,
) -> Result<Outcome, UsageError> {
    let Listen {
        addr,
        token,
        limits,
        console,
        metrics,
    } = listen;
    let labels = Labels::default();
    // The runs' journals (the consultations of each app's reasoner journal their remote
    // tasks there).
    let journals = Journals::new(
        settings.run_dir.clone(),
        labels.clone(),
        settings.durability,
    );
    let (caller, for_console) = (addr.is_some(), console.is_some());
    let (apps, agents, left) = settings.agents(targets, &journals, &labels, caller, for_console);
    warn_left_out(&left, style);
    if apps.is_empty() {
        return Err(no_app_to_serve(left.len()));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| UsageError::new(format!("cannot start the async runtime: {e}")))?;
    let runner = settings
        .runner(apps, &journals)
        .map(Arc::new)
        .map_err(|e| UsageError::new(crate::diag::chain(&e)))?;
    let stopping = runner.stopping.clone();
    let adopter = runner.clone();
    let outcome = runtime.block_on(async {
        // Runs a server now gone left parked: taken over, and resumed here.
        let take: Adopt = Arc::new(move |run_id, key, sink| Ok(adopter.adopt(run_id, key, sink)?));
        let adopting = tokio::spawn(journals.clone().keep_adopting(take));
        let console = console.map(|(addr, identity)| {
            let settings = crate::web::Settings {
                identity,
                read_timeout: limits.read_timeout,
            };
            (addr, settings)
        });
        let metrics = match metrics_endpoint(metrics).await {
            Ok(m) => m,
            Err(e) => {
                adopting.abort();
                return Err(e);
            }
        };
        journals.measured();
        let extra: Vec<String> = metrics
            .iter()
            .map(|m| format!("metrics {}", m.url()))
            .collect();
        let outcome = serve(
            addr, agents, runner, token, limits, console, &journals, &stopping, &extra,
        )
        .await;
        adopting.abort();
        if let Some(m) = metrics {
            m.stop().await;
        }
        outcome
    });
    runtime.shutdown_background();
    outcome
}

#[allow(clippy::too_many_arguments)]
async fn serve(
    addr: Option<SocketAddr>,
    agents: Vec<AgentSpec>,
    runner: Arc<agent::Runner>,
    token: Option<Secret>,
    limits: Limits,
    console: Option<(SocketAddr, crate::web::Settings)>,
    journals: &Journals,
    stopping: &std::sync::atomic::AtomicBool,
    extra: &[String],
) -> Result<Outcome, UsageError> {
    let mut signals =
        Signals::new().map_err(|e| UsageError::new(format!("cannot watch for signals: {e}")))?;
    let mut server = match addr {
        Some(addr) => Some(
            A2aServer::bind(addr, agents, runner.clone(), token, limits)
                .await
                .map_err(|e| UsageError::new(format!("cannot listen on {addr}: {e}")))?,
        ),
        None => None,
    };
    let web = match console {
        Some((addr, settings)) => Some(
            crate::web::WebConsole::bind(addr, runner, settings)
                .await
                .map_err(|e| UsageError::new(format!("cannot listen on {addr}: {e}")))?,
        ),
        None => None,
    };
    match (&server, &web) {
        (Some(server), web) => {
            let mut lines: Vec<String> = (server.agent_urls().into_iter())
                .map(|(slug, url)| format!("agent {slug} {url}"))
                .collect();
            if let Some(web) = web {
                lines.push(format!("console {}", web.url()));
            }
            lines.extend(extra.iter().cloned());
            super::signals::announce("A2A 1.0", &server.url(), &lines, server.requires_token());
        }
        (None, Some(web)) => {
            super::signals::announce("the web console", &web.url(), extra, false);
        }
        (None, None) => unreachable!("serve --a2a or --ui"),
    }
    match &mut server {
        Some(server) => {
            let addr = server.local_addr();
            super::signals::until_signal(&mut signals, server.stopped(), "A2A", addr).await?;
        }
        None => {
            let addr = web.as_ref().map(|w| w.local_addr()).expect("a console");
            let never = std::future::pending::<String>();
            super::signals::until_signal(&mut signals, never, "console", addr).await?;
        }
    }
    stopping.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Some(web) = web {
        web.shutdown().await;
    }
    // The tasks of runs parked here cannot end meanwhile: they are not waited for.
    if let Some(server) = server
        && !server
            .shutdown_holding(GRACE, |id| journals.is_parked(id))
            .await
    {
        tracing::warn!("tasks still going after {}s; cancelled", GRACE.as_secs());
    }
    // Runs whose task was cancelled end their journal themselves; any left are closed.
    let idle = async {
        while journals.open_count() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), idle).await;
    journals.interrupt_all();
    Ok(Outcome::Ok)
}

/// Each app left out, as a warning.
pub(super) fn warn_left_out(left: &[LeftOut], style: Style) {
    for app in left {
        eprintln!(
            "{}: app `{}` {}; not served",
            style.yellow("warning"),
            app.app,
            app.why
        );
        for line in &app.problems {
            eprintln!("  {line}");
        }
    }
}

pub(super) fn no_app_to_serve(left_out: usize) -> UsageError {
    UsageError::new(format!(
        "no app to serve ({} left out)",
        count(left_out, "app")
    ))
    .with_help("run `cuga-flo validate` on them for the details")
}

/// The Prometheus endpoint `--metrics` asks for, listening.
pub(super) async fn metrics_endpoint(
    at: Option<(SocketAddr, Option<Secret>)>,
) -> Result<Option<crate::serving::MetricsEndpoint>, UsageError> {
    let Some((addr, token)) = at else {
        return Ok(None);
    };
    crate::serving::MetricsEndpoint::bind(addr, token)
        .await
        .map(Some)
        .map_err(|e| UsageError::new(format!("--metrics: cannot listen on {addr}: {e}")))
}
