//! An engine in another process, reached over MCP (`workflow_engine: {type: mcp, url}`):
//! cuga-flo calls the engine's `run_process` tool and the engine calls the harness back.
//!
//! For each run, [`ExternalEngine`] serves the run's process on a loopback MCP endpoint
//! of its own ([`HttpBridge`], a fresh random bearer token per run): the registry tools
//! for the one process, and the harness tools, answered through the control points the
//! engine was given and journalled by a [`Witness`]. It then calls `run_process` on the
//! engine with `bridge: {url, token}` and waits for the result.
//!
//! Nothing hangs: connecting is bounded (`connect_timeout`, 10 s by default), and so is
//! the engine's silence (`idle_timeout`, 300 s by default: the time it may go without
//! calling a control point or finishing; the clock stops while a control point is being
//! answered, since a person may take their time). A lost connection, a refused call or a
//! silent engine fails the run with a message naming the engine, and the journal is
//! closed with that `run_finished`.

mod prior;
mod witness;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

pub use prior::{Instance, Prior};
pub use witness::Witness;

use super::{
    EngineError, RunOutcome, RunRequest, SettingsError, WorkflowEngine, engine_block, engine_url,
    seconds,
};
use crate::app::{EngineConfig, EngineKind};
use crate::bridge::{BoxFuture, ControlPoints};
use crate::journal::EventSink;
use crate::mcp::http::HttpBridge;
use crate::mcp::{
    BridgeEndpoint, BridgeServer, McpControlPoints, RegisteredFlow, Registry, RunProcessArgs,
    RunProcessResult,
};
use crate::secret::Secret;
use crate::tools::mcp::connect_http as connect;
use crate::vocab::RunStatus;

/// How long connecting to the engine may take, by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the engine may stay silent, by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Where the engine is and how long it may take.
#[derive(Debug, Clone)]
pub struct ExternalSettings {
    /// The engine's MCP endpoint (streamable HTTP).
    pub url: String,
    /// The bearer token of the engine's endpoint, when it requires one.
    pub token: Option<Secret>,
    /// Where the run's callback endpoint listens (port 0: any free port).
    pub callback: SocketAddr,
    pub connect_timeout: Duration,
    /// `None`: the engine may stay silent for ever.
    pub idle_timeout: Option<Duration>,
}

impl ExternalSettings {
    /// Settings from the app's `workflow_engine:` block when it configures an `mcp`
    /// engine (another engine's settings do not apply: only `url` is used then); `url`
    /// replaces its `url`. The token is read from the variable `token_env` names.
    pub fn from_config(config: &EngineConfig, url: Option<&str>) -> Result<Self, SettingsError> {
        let config = engine_block(config, EngineKind::Mcp);
        let url = engine_url(config, url, EngineKind::Mcp)?;
        let token = match &config.token_env {
            Some(var) => {
                let value = std::env::var(&var.value)
                    .map_err(|_| SettingsError::NoToken(var.value.clone()))?;
                Some(Secret::new(value.trim()))
            }
            None => None,
        };
        let host = config
            .callback_host
            .as_ref()
            .map_or("127.0.0.1", |h| h.value.as_str());
        let port = config.callback_port.as_ref().map_or(0, |p| p.value);
        let callback = (host, port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
            .ok_or_else(|| SettingsError::NoAddress(host.to_string()))?;
        Ok(ExternalSettings {
            url,
            token,
            callback,
            connect_timeout: seconds(&config.connect_timeout, DEFAULT_CONNECT_TIMEOUT),
            idle_timeout: Some(seconds(&config.idle_timeout, DEFAULT_IDLE_TIMEOUT)),
        })
    }
}

/// Runs processes on an engine that implements `run_process` over MCP.
pub struct ExternalEngine {
    settings: ExternalSettings,
}

impl ExternalEngine {
    pub fn new(settings: ExternalSettings) -> Self {
        ExternalEngine { settings }
    }
}

impl WorkflowEngine for ExternalEngine {
    fn name(&self) -> &'static str {
        "mcp"
    }

    fn run(
        &self,
        request: RunRequest,
        control_points: Arc<dyn ControlPoints>,
        events: Arc<dyn EventSink>,
    ) -> BoxFuture<'static, Result<RunOutcome, EngineError>> {
        let settings = self.settings.clone();
        if request.resume.is_some() {
            return Box::pin(async {
                Err(EngineError::Refused(
                    "a run on an external MCP engine cannot be resumed yet (docs/bridge.md §13)"
                        .into(),
                ))
            });
        }
        Box::pin(witnessed(
            "mcp",
            request,
            control_points,
            events,
            move |witness, request| drive(settings, witness, request),
        ))
    }
}

/// Why a run on the engine ended without a result (the engine's messages with its token
/// redacted).
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    NoRandom(#[from] crate::secret::NoRandom),
    #[error("cannot listen for the engine's calls on {addr}")]
    Listen {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot reach the engine: {0}")]
    Unreachable(String),
    #[error("the engine at {url} did not complete the run: {message}")]
    NotCompleted { url: String, message: String },
    #[error(
        "the engine at {url} neither called a control point nor finished the run for {secs}s \
         (workflow_engine.idle_timeout)"
    )]
    Silent { url: String, secs: f64 },
    #[error("the engine at {url} answered for run `{got}`, not `{want}`")]
    OtherRun {
        url: String,
        got: String,
        want: String,
    },
}

impl RunFailure for Failure {
    fn message(&self) -> String {
        crate::diag::chain(self)
    }
}

/// Why a witnessed run has no outcome: its failure message.
pub(crate) trait RunFailure {
    fn message(&self) -> String;
}

/// A run on an engine that owns the tokens, journalled by a [`Witness`]: `run_started`,
/// then `body` (given the witness that answers the engine's control points, and the
/// request), then `run_finished` with its outcome, or a failed one with the reason `body`
/// gives for having no outcome. The external, Flowable and Kogito engines all run so. A
/// resumed run (`request.resume`) has its `run_started` journalled already: its witness
/// goes on from the journal ([`Prior`]), and `body` re-attaches to the run's instance.
pub(crate) async fn witnessed<F, Fut, E>(
    engine: &'static str,
    request: RunRequest,
    control_points: Arc<dyn ControlPoints>,
    events: Arc<dyn EventSink>,
    body: F,
) -> Result<RunOutcome, EngineError>
where
    F: FnOnce(Arc<Witness>, RunRequest) -> Fut,
    Fut: std::future::Future<Output = Result<RunOutcome, E>>,
    E: RunFailure,
{
    if let Some(resume) = &request.resume {
        control_points.resuming(&resume.records);
    }
    let witness = match &request.resume {
        Some(resume) => Witness::resuming(
            &request.process,
            Prior::of(&resume.records),
            control_points,
            events.clone(),
        ),
        None => {
            events
                .emit(request.started(engine))
                .and_then(|_| events.commit())
                .map_err(|e| EngineError::Journal(e.to_string()))?;
            Witness::new(
                &request.process,
                request.variables.clone(),
                control_points,
                events.clone(),
            )
        }
    };
    // Engines that own their tokens ask a call activity's `execute_task`: the witness
    // runs its child run, when the run has someone to run them.
    let witness = witness.with_children(request.children.clone(), &request.run_id);
    let witness = Arc::new(witness);
    let outcome = match body(witness.clone(), request).await {
        Ok(outcome) => outcome,
        Err(why) => RunOutcome {
            status: RunStatus::Failed,
            message: Some(why.message()),
            variables: witness.variables(),
            steps: 0,
            path: Vec::new(),
        },
    };
    if let Some(e) = witness.journal_error() {
        return Err(EngineError::Journal(e));
    }
    // A parked run journalled its `run_waiting` already; it has not finished.
    if outcome.status != RunStatus::Waiting {
        events
            .emit(outcome.finished())
            .map_err(|e| EngineError::Journal(e.to_string()))?;
    }
    events
        .commit()
        .map_err(|e| EngineError::Journal(e.to_string()))?;
    Ok(outcome)
}

/// One run: serve its callbacks, call the engine, read its result.
async fn drive(
    settings: ExternalSettings,
    witness: Arc<Witness>,
    request: RunRequest,
) -> Result<RunOutcome, Failure> {
    let callbacks = serve_callbacks(&settings, &request, witness.clone()).await?;
    let result = call_engine(&settings, &request, &callbacks, &witness).await;
    callbacks
        .http
        .shutdown(Duration::from_secs(1), || false)
        .await;
    let mut result = result?;
    witness.entered(&result.path, std::mem::take(&mut result.records));
    Ok(RunOutcome {
        status: result.status,
        message: result.message,
        variables: result.variables,
        steps: result.steps,
        path: result.path,
    })
}

/// The run's callback endpoint and its token.
struct Callbacks {
    http: HttpBridge,
    token: Secret,
}

/// Serve the run's process and the witnessed harness on a loopback endpoint.
async fn serve_callbacks(
    settings: &ExternalSettings,
    request: &RunRequest,
    witness: Arc<Witness>,
) -> Result<Callbacks, Failure> {
    let registry = Arc::new(Registry::default());
    registry.register(RegisteredFlow {
        process_key: request.process_key.clone(),
        process: request.process.clone(),
        annotations: request.annotations.clone(),
        harness: witness,
    });
    let server = BridgeServer::new(registry, Arc::new(Refuses), None);
    let token = Secret::random()?;
    let http = HttpBridge::bind(server, settings.callback, Some(token.clone()))
        .await
        .map_err(|source| Failure::Listen {
            addr: settings.callback,
            source,
        })?;
    tracing::debug!("callbacks for run {} at {}", request.run_id, http.url());
    Ok(Callbacks { http, token })
}

/// Call `run_process` on the engine and wait for its result, watching its silence.
async fn call_engine(
    settings: &ExternalSettings,
    request: &RunRequest,
    callbacks: &Callbacks,
    witness: &Witness,
) -> Result<RunProcessResult, Failure> {
    let url = &settings.url;
    let session = connect(url, settings.token.as_ref(), settings.connect_timeout)
        .await
        .map_err(Failure::Unreachable)?;
    let args = RunProcessArgs {
        process_key: request.process_key.clone(),
        run_id: request.run_id.clone(),
        // Every variable the run starts with (the config's defaults included).
        variables: request.variables.clone(),
        // Provenance for an engine that records it and sends it back in its contexts
        // (one that does not: the harness over-approximates).
        untrusted: request.untrusted.clone(),
        bridge: Some(BridgeEndpoint {
            url: callbacks.http.url(),
            token: Some(callbacks.token.expose().to_string()),
        }),
        adopt: request.adopt.clone(),
        lost_parks: request.lost_parks,
    };
    let client = McpControlPoints::new(session.peer().clone());
    let call = client.run_process(&args);
    tokio::pin!(call);
    let tick = Duration::from_millis(250);
    let result = loop {
        tokio::select! {
            result = &mut call => break result.map_err(|e| {
                let message = match &settings.token {
                    Some(t) => t.redact(&e.message),
                    None => e.message,
                };
                Failure::NotCompleted { url: url.clone(), message }
            }),
            _ = tokio::time::sleep(tick) => {
                if let (Some(limit), Some(idle)) = (settings.idle_timeout, witness.idle_for())
                    && idle >= limit
                {
                    break Err(Failure::Silent {
                        url: url.clone(),
                        secs: limit.as_secs_f64(),
                    });
                }
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), session.cancel()).await;
    let result = result?;
    if result.run_id != request.run_id {
        return Err(Failure::OtherRun {
            url: url.clone(),
            got: result.run_id,
            want: request.run_id.clone(),
        });
    }
    Ok(result)
}

/// The callback endpoint runs nothing itself: `run_process` there is refused.
struct Refuses;

impl WorkflowEngine for Refuses {
    fn name(&self) -> &'static str {
        "none"
    }

    fn run(
        &self,
        _request: RunRequest,
        _control_points: Arc<dyn ControlPoints>,
        _events: Arc<dyn EventSink>,
    ) -> BoxFuture<'static, Result<RunOutcome, EngineError>> {
        Box::pin(async {
            Err(EngineError::Refused(
                "this endpoint answers the control points of one run; it runs no process".into(),
            ))
        })
    }
}
