//! The server side of A2A 1.0 and 0.3 (JSON-RPC binding over HTTP; 0.3 translated at
//! the edge by [`super::v03`]): agents published under one
//! address, each at its own base URL `http://HOST:PORT/<agent>` with its card at
//! `<base>/.well-known/agent-card.json` (and at `/.well-known/agent-card.json` when there
//! is only one agent). The methods: `SendMessage` (blocking until the task ends or needs
//! input, or at once with `returnImmediately`), `SendStreamingMessage` and
//! `SubscribeToTask` (server-sent events: the task, then its status and artifact
//! updates, closed when it ends or needs input), `GetTask`, `CancelTask`.
//!
//! This module knows the protocol, not what an agent does: an [`Executor`] is handed each
//! new task ([`TaskHandle`]) and reports on it; the caller's next message in a task that
//! is `input-required` is handed back to it ([`TaskHandle::next_message`]).
//!
//! What a client can hold is bounded ([`Limits`]): request heads and bodies must arrive
//! within the read timeout, bodies are capped, tasks still going are capped (a new one
//! beyond is refused), and ended tasks are forgotten after `retain`. With a bearer token
//! every JSON-RPC request must carry it (the cards stay readable: they say how to
//! authenticate); it is compared in constant time and never logged.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{MEDIA_TYPE, TaskState, Version, new_id, parts, v03};
use crate::secret::Secret;

/// The messages a task's history keeps (the oldest go first).
pub const HISTORY: usize = 256;

/// JSON-RPC and A2A error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const SERVER_BUSY: i64 = -32000;
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
}

/// What one client may hold of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A request head and body must arrive within this.
    pub read_timeout: Duration,
    /// Tasks not ended yet (working or waiting for input), over all agents.
    pub max_tasks: usize,
    /// How long an ended task can still be read (`GetTask`).
    pub retain: Duration,
    /// The largest request body accepted.
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            read_timeout: Duration::from_secs(10),
            max_tasks: 64,
            retain: Duration::from_secs(300),
            max_body: 4 * 1024 * 1024,
        }
    }
}

/// One agent published by the server.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The path segment of its base URL (`/<slug>`).
    pub slug: String,
    pub name: String,
    pub description: String,
    pub version: String,
    /// Its skills, as the card lists them (`id`, `name`, `description`, `tags`...).
    pub skills: Vec<Value>,
}

/// A message from the caller: its DataParts (merged) and text parts (joined).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Incoming {
    pub data: Option<Value>,
    pub text: String,
}

/// Does the work of the tasks the server is sent.
/// No room for another task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many tasks going ({going}, at most {max}): wait for one to end or cancel one")]
pub struct Busy {
    going: usize,
    max: usize,
}

pub trait Executor: Send + Sync + 'static {
    /// A new task for agent `slug`, whose first message is `first`: start working on it
    /// (in the background) and report through `task`. An `Err` fails the task at once.
    fn start(&self, slug: &str, task: TaskHandle, first: Incoming) -> Result<(), ExecutorError>;
}

/// Why an executor could not start a task (its causes kept): the task fails with it.
pub type ExecutorError = Box<dyn std::error::Error + Send + Sync>;

// ---- Tasks ----

struct TaskData {
    id: String,
    context_id: String,
    slug: String,
    state: TaskState,
    /// The status message (the agent's), as a 1.0 Message.
    status_message: Option<Value>,
    artifacts: Vec<Value>,
    history: Vec<Value>,
    ended_at: Option<Instant>,
}

impl TaskData {
    fn remember(&mut self, message: Value) {
        if self.history.len() >= HISTORY {
            self.history.remove(0);
        }
        self.history.push(message);
    }

    fn json(&self) -> Value {
        let mut status = json!({"state": wire_state(self.state)});
        if let Some(m) = &self.status_message {
            status["message"] = m.clone();
        }
        json!({
            "id": self.id,
            "contextId": self.context_id,
            "status": status,
            "artifacts": self.artifacts,
            "history": self.history,
        })
    }

    fn status_update(&self) -> Value {
        json!({"statusUpdate": {
            "taskId": self.id,
            "contextId": self.context_id,
            "status": self.json()["status"].clone(),
        }})
    }
}

struct TaskEntry {
    data: Mutex<TaskData>,
    /// Stream responses (`statusUpdate`, `artifactUpdate`) as they happen.
    events: broadcast::Sender<Value>,
    /// The state, for those who wait for it to change.
    state: watch::Sender<TaskState>,
    /// The caller's messages sent while the task is `input-required`.
    inbox_tx: mpsc::UnboundedSender<Incoming>,
    inbox_rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Incoming>>,
    cancel: CancellationToken,
    /// Why the caller cancelled the task (`CancelTask`'s `metadata.reason`), when it said.
    cancel_reason: Mutex<Option<String>>,
}

impl TaskEntry {
    /// A submitted task `id` of agent `slug`, in context `context_id` (a new one when
    /// none is given).
    fn new(id: String, slug: &str, context_id: Option<String>) -> TaskEntry {
        let (events, _) = broadcast::channel(256);
        let (inbox_tx, inbox_rx) = mpsc::unbounded_channel();
        TaskEntry {
            data: Mutex::new(TaskData {
                id,
                context_id: context_id.filter(|c| !c.is_empty()).unwrap_or_else(new_id),
                slug: slug.to_string(),
                state: TaskState::Submitted,
                status_message: None,
                artifacts: Vec::new(),
                history: Vec::new(),
                ended_at: None,
            }),
            events,
            state: watch::channel(TaskState::Submitted).0,
            inbox_tx,
            inbox_rx: tokio::sync::Mutex::new(inbox_rx),
            cancel: CancellationToken::new(),
            cancel_reason: Mutex::new(None),
        }
    }
}

/// The executor's side of one task.
#[derive(Clone)]
pub struct TaskHandle(Arc<TaskEntry>);

impl TaskHandle {
    pub fn id(&self) -> String {
        lock(&self.0.data).id.clone()
    }

    pub fn context_id(&self) -> String {
        lock(&self.0.data).context_id.clone()
    }

    pub fn state(&self) -> TaskState {
        lock(&self.0.data).state
    }

    /// Cancelled by the caller (`CancelTask`) or the server shutting down.
    pub fn cancelled(&self) -> CancellationToken {
        self.0.cancel.clone()
    }

    /// Why the caller cancelled the task, when its `CancelTask` said
    /// (`metadata: {"reason": ...}`).
    pub fn cancel_reason(&self) -> Option<String> {
        lock(&self.0.cancel_reason).clone()
    }

    /// A new status, with an agent message of `text` and `data` (either may be empty).
    /// Nothing changes once the task has ended.
    pub fn update(&self, state: TaskState, text: &str, data: Option<Value>) {
        self.update_if(|_| true, state, text, data);
    }

    /// A `working` status with an agent message, only while the task is working (or
    /// submitted): a run's progress never hides the question it asks meanwhile
    /// (`input-required`) nor its end. Whether it was set.
    pub fn progress(&self, text: &str, data: Option<Value>) -> bool {
        let working = |s: TaskState| matches!(s, TaskState::Working | TaskState::Submitted);
        self.update_if(working, TaskState::Working, text, data)
    }

    /// [`TaskHandle::update`] when the task's state passes `when`, checked and set under
    /// one lock (the run and the caller's requests set it from different threads).
    fn update_if(
        &self,
        when: impl Fn(TaskState) -> bool,
        state: TaskState,
        text: &str,
        data: Option<Value>,
    ) -> bool {
        let mut d = lock(&self.0.data);
        if d.state.is_terminal() || !when(d.state) {
            return false;
        }
        let message = (!text.is_empty() || data.is_some())
            .then(|| agent_message(&d.context_id, &d.id, text, data));
        if let Some(m) = &message {
            d.remember(m.clone());
        }
        d.status_message = message;
        d.state = state;
        if state.is_terminal() {
            d.ended_at = Some(Instant::now());
        }
        let event = d.status_update();
        let _ = self.0.events.send(event);
        // Under the lock: those who wait for the state see the states in the order set.
        self.0.state.send_replace(state);
        true
    }

    /// An artifact (a DataPart of `data`), named `name`.
    pub fn artifact(&self, name: &str, data: Value) {
        let mut d = lock(&self.0.data);
        if d.state.is_terminal() {
            return;
        }
        let artifact = json!({
            "artifactId": new_id(),
            "name": name,
            "parts": [{"data": data, "mediaType": "application/json"}],
        });
        d.artifacts.push(artifact.clone());
        let event = json!({"artifactUpdate": {
            "taskId": d.id, "contextId": d.context_id, "artifact": artifact,
            "append": false, "lastChunk": true,
        }});
        let _ = self.0.events.send(event);
    }

    /// The caller's next message in this task (sent while it is `input-required`);
    /// `None` when the task is cancelled first.
    pub async fn next_message(&self) -> Option<Incoming> {
        let mut inbox = self.0.inbox_rx.lock().await;
        tokio::select! {
            m = inbox.recv() => m,
            () = self.0.cancel.cancelled() => None,
        }
    }
}

fn agent_message(context_id: &str, task_id: &str, text: &str, data: Option<Value>) -> Value {
    let mut parts = Vec::new();
    if !text.is_empty() {
        parts.push(json!({"text": text}));
    }
    if let Some(d) = data {
        parts.push(json!({"data": d, "mediaType": "application/json"}));
    }
    json!({
        "messageId": new_id(),
        "contextId": context_id,
        "taskId": task_id,
        "role": "ROLE_AGENT",
        "parts": parts,
    })
}

/// The 1.0 name of a state (`TASK_STATE_INPUT_REQUIRED`).
pub fn wire_state(s: TaskState) -> String {
    match s {
        TaskState::Unknown => "TASK_STATE_UNSPECIFIED".to_string(),
        s => format!(
            "TASK_STATE_{}",
            s.as_str().replace('-', "_").to_ascii_uppercase()
        ),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---- The server ----

struct Shared {
    agents: Vec<AgentSpec>,
    executor: Arc<dyn Executor>,
    tasks: Mutex<HashMap<String, Arc<TaskEntry>>>,
    /// The messages taken, by agent and `messageId`: the task each started or was
    /// delivered to. A message sent again (a retry after a lost reply) is answered with
    /// that task, never taken twice.
    messages: Mutex<HashMap<(String, String), String>>,
    token: Option<Secret>,
    limits: Limits,
    /// `http://HOST:PORT` as clients reach it.
    base: String,
}

impl Shared {
    fn agent(&self, slug: &str) -> Option<&AgentSpec> {
        self.agents.iter().find(|a| a.slug == slug)
    }

    fn card(&self, agent: &AgentSpec) -> Value {
        let url = format!("{}/{}", self.base, agent.slug);
        let mut card = json!({
            "name": agent.name,
            "description": agent.description,
            "version": agent.version,
            "supportedInterfaces": [
                {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
            ],
            // What a 0.3 client reads (a 1.0 client reads the interfaces above).
            "url": url,
            "protocolVersion": "0.3.0",
            "preferredTransport": "JSONRPC",
            "provider": {"organization": "cuga-flo", "url": "https://github.com/cuga-project"},
            "capabilities": {"streaming": true, "pushNotifications": false},
            "defaultInputModes": ["application/json", "text/plain"],
            "defaultOutputModes": ["application/json", "text/plain"],
            "skills": agent.skills,
        });
        if self.token.is_some() {
            card["securitySchemes"] = json!({
                "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}
            });
            card["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
        }
        card
    }

    /// The task message `message_id` to agent `slug` was taken by, when it was taken.
    fn taken(&self, slug: &str, message_id: &str) -> Option<Arc<TaskEntry>> {
        let key = (slug.to_string(), message_id.to_string());
        let task = lock(&self.messages).get(&key).cloned()?;
        self.task(&task)
    }

    fn remember(&self, slug: &str, message_id: Option<&str>, task: &str) {
        if let Some(m) = message_id {
            lock(&self.messages).insert((slug.to_string(), m.to_string()), task.to_string());
        }
    }

    fn task(&self, id: &str) -> Option<Arc<TaskEntry>> {
        lock(&self.tasks).get(id).cloned()
    }

    /// A new task, or why there is no room for one.
    fn new_task(&self, slug: &str, context_id: Option<String>) -> Result<Arc<TaskEntry>, Busy> {
        let mut tasks = lock(&self.tasks);
        let retain = self.limits.retain;
        tasks.retain(|_, t| {
            lock(&t.data)
                .ended_at
                .is_none_or(|at| at.elapsed() < retain)
        });
        // A message is remembered as long as its task is.
        lock(&self.messages).retain(|_, task| tasks.contains_key(task));
        let going = tasks
            .values()
            .filter(|t| !lock(&t.data).state.is_terminal())
            .count();
        if going >= self.limits.max_tasks {
            return Err(Busy {
                going,
                max: self.limits.max_tasks,
            });
        }
        // A task is a run: its id is a run id (sortable by when it was made), never one
        // this server holds already.
        let id = loop {
            let id = crate::clock::run_id();
            if !tasks.contains_key(&id) {
                break id;
            }
        };
        let entry = Arc::new(TaskEntry::new(id.clone(), slug, context_id));
        tasks.insert(id, entry.clone());
        Ok(entry)
    }

    /// Cancel every task not ended (the server shuts down).
    fn cancel_all(&self, why: &str) {
        let tasks: Vec<Arc<TaskEntry>> = lock(&self.tasks).values().cloned().collect();
        for t in tasks {
            if !lock(&t.data).state.is_terminal() {
                TaskHandle(t.clone()).update(TaskState::Canceled, why, None);
                t.cancel.cancel();
            }
        }
    }
}

/// The A2A server listening on HTTP.
pub struct A2aServer {
    local: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl A2aServer {
    /// Listen on `addr` (port 0: any free port) and publish `agents`.
    pub async fn bind(
        addr: SocketAddr,
        agents: Vec<AgentSpec>,
        executor: Arc<dyn Executor>,
        token: Option<Secret>,
        limits: Limits,
    ) -> std::io::Result<A2aServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let shared = Arc::new(Shared {
            agents,
            executor,
            tasks: Mutex::default(),
            messages: Mutex::default(),
            token,
            limits,
            base: format!("http://{local}"),
        });
        let router = axum::Router::new()
            .route("/.well-known/agent-card.json", get(root_card))
            .route("/{slug}/.well-known/agent-card.json", get(agent_card))
            .route("/{slug}", post(rpc))
            .route("/{slug}/", post(rpc))
            .with_state(shared.clone());
        let stop = CancellationToken::new();
        let task = tokio::spawn(crate::serving::accept(
            listener,
            router,
            stop.clone(),
            limits.read_timeout,
        ));
        Ok(A2aServer {
            local,
            shared,
            stop,
            task,
        })
    }

    /// `http://HOST:PORT`.
    pub fn url(&self) -> String {
        self.shared.base.clone()
    }

    /// The base URL of each agent.
    pub fn agent_urls(&self) -> Vec<(String, String)> {
        (self.shared.agents.iter())
            .map(|a| (a.slug.clone(), format!("{}/{}", self.shared.base, a.slug)))
            .collect()
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    pub fn requires_token(&self) -> bool {
        self.shared.token.is_some()
    }

    /// Tasks not ended yet.
    pub fn going(&self) -> usize {
        lock(&self.shared.tasks)
            .values()
            .filter(|t| !lock(&t.data).state.is_terminal())
            .count()
    }

    /// Resolves if the server stops on its own, with why.
    pub async fn stopped(&mut self) -> String {
        match (&mut self.task).await {
            Ok(Ok(())) => "stopped".to_string(),
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        }
    }

    /// Stop accepting, give the tasks working up to `grace` to end, then cancel those left
    /// (and those waiting for input).
    /// False when some were cancelled.
    pub async fn shutdown(self, grace: Duration) -> bool {
        self.shutdown_holding(grace, |_| false).await
    }

    /// As [`A2aServer::shutdown`], not waiting for the working tasks for which `held`
    /// holds (by task id: the tasks of runs parked by the server, which cannot end
    /// meanwhile).
    pub async fn shutdown_holding(mut self, grace: Duration, held: impl Fn(&str) -> bool) -> bool {
        self.stop.cancel();
        // Tasks waiting for their caller's input cannot end meanwhile: only the working
        // ones are waited for.
        let working = || {
            lock(&self.shared.tasks)
                .values()
                .filter(|t| {
                    let data = lock(&t.data);
                    matches!(data.state, TaskState::Submitted | TaskState::Working)
                        && !held(&data.id)
                })
                .count()
        };
        let idle = async {
            while working() > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let clean = tokio::time::timeout(grace, idle).await.is_ok();
        self.shared
            .cancel_all("canceled: the server shut down before the task ended");
        if tokio::time::timeout(Duration::from_secs(1), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
        clean
    }
}

fn json_response(status: StatusCode, body: &Value, media: &'static str) -> Response {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(media),
    );
    r
}

fn not_found(what: &str) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        &json!({"error": what}),
        "application/json",
    )
}

async fn root_card(State(s): State<Arc<Shared>>) -> Response {
    match s.agents.as_slice() {
        [one] => json_response(StatusCode::OK, &s.card(one), "application/json"),
        _ => not_found(&format!(
            "this server publishes several agents; read one card at /<agent>/.well-known/agent-card.json ({})",
            s.agents
                .iter()
                .map(|a| a.slug.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

async fn agent_card(State(s): State<Arc<Shared>>, Path(slug): Path<String>) -> Response {
    match s.agent(&slug) {
        Some(a) => json_response(StatusCode::OK, &s.card(a), "application/json"),
        None => not_found(&format!("no agent `{slug}` here")),
    }
}

fn rpc_error(status: StatusCode, id: &Value, code: i64, message: &str) -> Response {
    json_response(
        status,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        MEDIA_TYPE,
    )
}

async fn rpc(State(s): State<Arc<Shared>>, Path(slug): Path<String>, req: Request) -> Response {
    let null = Value::Null;
    if let Some(message) = crate::serving::token_refusal(s.token.as_ref(), req.headers()) {
        tracing::warn!("refused POST /{slug}: {message}");
        return crate::serving::unauthorized(message);
    }
    if s.agent(&slug).is_none() {
        return not_found(&format!("no agent `{slug}` here"));
    }
    let version = (req.headers().get("a2a-version"))
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .unwrap_or_default()
        .to_string();
    // The caller's trace context: a task it starts joins the caller's trace.
    let traceparent = (req.headers().get("traceparent"))
        .and_then(|v| v.to_str().ok())
        .and_then(crate::telemetry::TraceParent::parse);
    let limits = s.limits;
    let body = match tokio::time::timeout(
        limits.read_timeout,
        axum::body::to_bytes(req.into_body(), limits.max_body),
    )
    .await
    {
        Err(_) => {
            return rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                &null,
                code::SERVER_BUSY,
                "the request body did not arrive in time",
            );
        }
        Ok(Err(_)) => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &null,
                code::INVALID_REQUEST,
                &format!("the request body is larger than {} bytes", limits.max_body),
            );
        }
        Ok(Ok(b)) => b,
    };
    let Ok(doc) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(
            StatusCode::OK,
            &null,
            code::PARSE_ERROR,
            "the body is not JSON",
        );
    };
    let id = doc.get("id").cloned().unwrap_or(Value::Null);
    let (Some("2.0"), Some(method)) = (
        doc.get("jsonrpc").and_then(Value::as_str),
        doc.get("method").and_then(Value::as_str),
    ) else {
        return rpc_error(
            StatusCode::OK,
            &id,
            code::INVALID_REQUEST,
            "not a JSON-RPC 2.0 request",
        );
    };
    let dialect = match dialect(&version, method) {
        Ok(d) => d,
        Err((code, message)) => return rpc_error(StatusCode::OK, &id, code, &message),
    };
    let params = doc.get("params").cloned().unwrap_or(json!({}));
    let (method, params) = match dialect {
        Version::V1 => (method, params),
        Version::V03 => match v03::method(method) {
            Some(m) => (m, v03::params_in(&params)),
            None => {
                return rpc_error(
                    StatusCode::OK,
                    &id,
                    code::METHOD_NOT_FOUND,
                    &format!("method `{method}` is not served ({} are)", v03::METHODS),
                );
            }
        },
    };
    let result = match method {
        "SendMessage" => send(&s, &slug, &params, false, traceparent).await,
        "SendStreamingMessage" => match send(&s, &slug, &params, true, traceparent).await {
            Ok(Sent::Stream(watch)) => return stream_from(watch, id, dialect),
            other => other,
        },
        "SubscribeToTask" => match task_of(&s, &slug, &params) {
            Ok(entry) if lock(&entry.data).state.is_terminal() => Err((
                code::UNSUPPORTED_OPERATION,
                "the task has ended: read it with GetTask".to_string(),
            )),
            Ok(entry) => return stream_from(Watch::of(&entry), id, dialect),
            Err(e) => Err(e),
        },
        "GetTask" => task_of(&s, &slug, &params).map(|t| Sent::Value(history(&t, &params))),
        "CancelTask" => cancel(&s, &slug, &params),
        other => Err((
            code::METHOD_NOT_FOUND,
            format!(
                "method `{other}` is not served (SendMessage, SendStreamingMessage, \
                 SubscribeToTask, GetTask, CancelTask are)"
            ),
        )),
    };
    match result {
        Ok(Sent::Value(v)) => json_response(
            StatusCode::OK,
            &json!({"jsonrpc": "2.0", "id": id, "result": said_in(dialect, &v)}),
            match dialect {
                Version::V1 => MEDIA_TYPE,
                // 0.3 is plain JSON.
                Version::V03 => "application/json",
            },
        ),
        Ok(Sent::Stream(..)) => unreachable_stream(&id),
        Err((code, message)) => {
            let status = if code == code::SERVER_BUSY {
                StatusCode::SERVICE_UNAVAILABLE
            } else {
                StatusCode::OK
            };
            rpc_error(status, &id, code, &message)
        }
    }
}

/// The version a request speaks. The `A2A-Version` header says it; without one the
/// method's name does (a 0.3 client sends none, and 0.3's methods are `noun/verb`, so a
/// request without the header is 0.3, as the specification says, unless it calls a 1.0
/// method). A header naming a version this server does not speak, or disagreeing with the
/// method, is refused with the versions it speaks.
fn dialect(header: &str, method: &str) -> Result<Version, (i64, String)> {
    let by_method = if v03::is_v03_method(method) {
        Version::V03
    } else {
        Version::V1
    };
    let by_header = match header {
        "" => return Ok(by_method),
        "1" => Version::V1,
        h if h.starts_with("1.") => Version::V1,
        "0.3" => Version::V03,
        h if h.starts_with("0.3.") => Version::V03,
        other => {
            return Err((
                code::VERSION_NOT_SUPPORTED,
                format!("A2A version {other} is not supported: this agent speaks 1.0 and 0.3"),
            ));
        }
    };
    if by_header != by_method {
        return Err((
            code::METHOD_NOT_FOUND,
            format!(
                "method `{method}` is not an A2A {} method (A2A-Version: {header}); {} are",
                by_header.as_str(),
                match by_header {
                    Version::V1 => {
                        "SendMessage, SendStreamingMessage, SubscribeToTask, GetTask, CancelTask"
                    }
                    Version::V03 => v03::METHODS,
                }
            ),
        ));
    }
    Ok(by_header)
}

/// A result as the request's version says it.
fn said_in(dialect: Version, v: &Value) -> Value {
    match dialect {
        Version::V1 => v.clone(),
        Version::V03 => v03::result(v),
    }
}

/// `SendMessage` never yields a stream; answered as an internal error if it did.
fn unreachable_stream(id: &Value) -> Response {
    rpc_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        id,
        -32603,
        "internal error",
    )
}

type RpcResult = Result<Sent, (i64, String)>;

enum Sent {
    Value(Value),
    Stream(Watch),
}

/// Where a stream starts: the task as it is and every update from then on, taken under
/// one lock (no update falls between them), before the run is started or given the
/// message, so that a run on another thread cannot get ahead of its stream.
struct Watch {
    first: Value,
    events: broadcast::Receiver<Value>,
    stop_now: bool,
}

impl Watch {
    fn of(entry: &TaskEntry) -> Watch {
        let d = lock(&entry.data);
        Watch {
            first: json!({"task": d.json()}),
            events: entry.events.subscribe(),
            stop_now: d.state.is_terminal() || d.state == TaskState::InputRequired,
        }
    }
}

/// The task, with its history cut to `historyLength` when asked.
fn history(entry: &TaskEntry, params: &Value) -> Value {
    let mut t = lock(&entry.data).json();
    if let Some(n) = params.get("historyLength").and_then(Value::as_u64)
        && let Some(h) = t["history"].as_array_mut()
    {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let cut = h.len().saturating_sub(n);
        h.drain(..cut);
    }
    t
}

fn task_of(s: &Shared, slug: &str, params: &Value) -> Result<Arc<TaskEntry>, (i64, String)> {
    let id = params.get("id").and_then(Value::as_str).unwrap_or_default();
    match s.task(id) {
        Some(t) if lock(&t.data).slug == slug => Ok(t),
        _ => Err((code::TASK_NOT_FOUND, format!("no task `{id}` here"))),
    }
}

fn cancel(s: &Shared, slug: &str, params: &Value) -> RpcResult {
    let entry = task_of(s, slug, params)?;
    let state = lock(&entry.data).state;
    if state.is_terminal() {
        return Err((
            code::TASK_NOT_CANCELABLE,
            format!("the task has ended ({})", state.as_str()),
        ));
    }
    let reason = (params.pointer("/metadata/reason"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string);
    let text = match &reason {
        Some(r) => format!("canceled by the caller: {r}"),
        None => "canceled by the caller".to_string(),
    };
    *lock(&entry.cancel_reason) = reason;
    TaskHandle(entry.clone()).update(TaskState::Canceled, &text, None);
    entry.cancel.cancel();
    Ok(Sent::Value(lock(&entry.data).json()))
}

async fn send(
    s: &Arc<Shared>,
    slug: &str,
    params: &Value,
    streaming: bool,
    traceparent: Option<crate::telemetry::TraceParent>,
) -> RpcResult {
    let Some(message) = params.get("message").filter(|m| m.is_object()) else {
        return Err((
            code::INVALID_PARAMS,
            "SendMessage needs `message`".to_string(),
        ));
    };
    let message_id = message
        .get("messageId")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty());
    // Sent again (its reply was lost): the task it was taken by answers, as it is now;
    // nothing is started or delivered twice.
    if let Some(entry) = message_id.and_then(|m| s.taken(slug, m)) {
        let watch = streaming.then(|| Watch::of(&entry));
        return reply(entry, watch, params).await;
    }
    let (data, text) = parts(message.get("parts"));
    let incoming = Incoming { data, text };
    let user = |entry: &TaskEntry| {
        let d = lock(&entry.data);
        let mut m = message.clone();
        m["role"] = json!("ROLE_USER");
        m["taskId"] = json!(d.id);
        m["contextId"] = json!(d.context_id);
        m
    };
    let task_id = message
        .get("taskId")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let entry = match task_id {
        Some(id) => {
            let entry = task_of(s, slug, &json!({"id": id}))?;
            let user = user(&entry);
            let mut d = lock(&entry.data);
            if d.state != TaskState::InputRequired {
                let why = if d.state.is_terminal() {
                    format!(
                        "task `{id}` has ended ({}); start a new one",
                        d.state.as_str()
                    )
                } else {
                    format!(
                        "task `{id}` is {}: it takes a message only when input-required",
                        d.state.as_str()
                    )
                };
                return Err((code::UNSUPPORTED_OPERATION, why));
            }
            d.remember(user);
            d.state = TaskState::Working;
            d.status_message = None;
            let event = d.status_update();
            let _ = entry.events.send(event);
            entry.state.send_replace(TaskState::Working);
            drop(d);
            s.remember(slug, message_id, id);
            let watch = streaming.then(|| Watch::of(&entry));
            let _ = entry.inbox_tx.send(incoming);
            (entry, watch)
        }
        None => {
            let context = message
                .get("contextId")
                .and_then(Value::as_str)
                .map(str::to_string);
            let entry = s
                .new_task(slug, context)
                .map_err(|e| (code::SERVER_BUSY, e.to_string()))?;
            let user = user(&entry);
            lock(&entry.data).remember(user);
            s.remember(slug, message_id, &lock(&entry.data).id.clone());
            let watch = streaming.then(|| Watch::of(&entry));
            let handle = TaskHandle(entry.clone());
            if let (Some(t), Some(tp)) = (crate::telemetry::active(), traceparent) {
                t.inbound(&lock(&entry.data).id, tp);
            }
            if let Err(why) = s.executor.start(slug, handle.clone(), incoming) {
                handle.update(TaskState::Failed, &crate::diag::chain(&*why), None);
            }
            (entry, watch)
        }
    };
    let (entry, watch) = entry;
    reply(entry, watch, params).await
}

/// What a `SendMessage` answers for `entry`: its stream (`watch`), or the task once it
/// ends or needs input (at once with `returnImmediately`).
async fn reply(entry: Arc<TaskEntry>, watch: Option<Watch>, params: &Value) -> RpcResult {
    if let Some(watch) = watch {
        return Ok(Sent::Stream(watch));
    }
    let immediately = params
        .pointer("/configuration/returnImmediately")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if !immediately {
        // Blocking: until the task ends or needs input (or the caller goes away).
        let mut state = entry.state.subscribe();
        loop {
            let now = *state.borrow_and_update();
            if now.is_terminal()
                || now == TaskState::InputRequired
                || now == TaskState::AuthRequired
            {
                break;
            }
            if state.changed().await.is_err() {
                break;
            }
        }
    }
    Ok(Sent::Value(json!({"task": lock(&entry.data).json()})))
}

/// Server-sent events of a task, from where `watch` was taken: the task as it is, then
/// each update, until it ends or needs input; each said in the request's version.
fn stream_from(watch: Watch, id: Value, dialect: Version) -> Response {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let frame = move |result: &Value| -> Bytes {
        let doc = json!({"jsonrpc": "2.0", "id": id, "result": said_in(dialect, result)});
        Bytes::from(format!("data: {doc}\n\n"))
    };
    let Watch {
        first,
        mut events,
        stop_now,
    } = watch;
    let first = frame(&first);
    tokio::spawn(async move {
        if tx.send(first).await.is_err() || stop_now {
            return;
        }
        loop {
            let event = match events.recv().await {
                Ok(e) => e,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let state = event
                .pointer("/statusUpdate/status/state")
                .and_then(Value::as_str)
                .map(TaskState::parse);
            if tx.send(frame(&event)).await.is_err() {
                return;
            }
            if state.is_some_and(|s| {
                s.is_terminal() || s == TaskState::InputRequired || s == TaskState::AuthRequired
            }) {
                return;
            }
        }
    });
    let mut r = Response::new(Body::new(Events(rx)));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    r
}

/// A body of server-sent events, as they come.
struct Events(mpsc::Receiver<Bytes>);

impl http_body::Body for Events {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|b| b.map(|b| Ok(http_body::Frame::data(b))))
    }
}

/// What a task's first message gives its run.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    pub variables: Map<String, Value>,
    /// The outputs a delegating flow wants back (`None`: every variable).
    pub outputs: Option<Vec<String>>,
}

impl Inputs {
    fn of(variables: Map<String, Value>) -> Inputs {
        Inputs {
            variables,
            outputs: None,
        }
    }
}

/// The variables a message carries: its DataPart's object, or its text as a JSON object
/// (empty text: none). A DataPart in the form a delegating cuga-flo flow sends (`{task,
/// inputs, outputs, ...}`, docs/a2a.md) gives its `inputs`, and the output names it wants
/// back.
pub fn input_variables(m: &Incoming) -> Result<Inputs, String> {
    if let Some(d) = &m.data {
        return match d {
            Value::Object(o) => Ok(delegated(o).unwrap_or_else(|| Inputs::of(o.clone()))),
            other => Err(format!(
                "the DataPart is {other}, not an object of input variables"
            )),
        };
    }
    let text = m.text.trim();
    if text.is_empty() {
        return Ok(Inputs::of(Map::new()));
    }
    match serde_json::from_str::<Value>(super::strip_fence(text)) {
        Ok(Value::Object(o)) => Ok(Inputs::of(o)),
        _ => Err(
            "send the input variables as a DataPart (an object) or as text holding a JSON \
             object"
                .to_string(),
        ),
    }
}

/// A delegated task's envelope: its inputs and the outputs it wants.
fn delegated(o: &Map<String, Value>) -> Option<Inputs> {
    o.get("task")?.as_str()?;
    let inputs = o.get("inputs")?.as_object()?.clone();
    let outputs = o.get("outputs")?.as_array()?;
    let names = outputs
        .iter()
        .map(|n| n.as_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()?;
    Some(Inputs {
        variables: inputs,
        outputs: Some(names),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_never_hides_a_question_or_an_end() {
        let task = TaskHandle(Arc::new(TaskEntry::new("t".into(), "app", None)));
        let seen = task.0.state.subscribe();
        assert!(task.progress("started", None));
        // The run asks (on its thread) before the server says it started: the question
        // stays, for the caller waiting for it.
        task.update(TaskState::InputRequired, "which flow?", None);
        assert!(!task.progress("run started", None));
        assert_eq!(task.state(), TaskState::InputRequired);
        assert_eq!(*seen.borrow(), TaskState::InputRequired);
        task.update(TaskState::Working, "answered", None);
        assert!(task.progress("gateway routed", None));
        task.update(TaskState::Canceled, "canceled by the caller", None);
        assert!(!task.progress("task finished", None));
        task.update(TaskState::Working, "too late", None);
        assert_eq!(task.state(), TaskState::Canceled);
        assert_eq!(*seen.borrow(), TaskState::Canceled);
    }

    #[test]
    fn states_on_the_wire() {
        assert_eq!(
            wire_state(TaskState::InputRequired),
            "TASK_STATE_INPUT_REQUIRED"
        );
        assert_eq!(wire_state(TaskState::Completed), "TASK_STATE_COMPLETED");
        for s in [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::InputRequired,
            TaskState::Canceled,
            TaskState::Failed,
        ] {
            assert_eq!(TaskState::parse(&wire_state(s)), s);
        }
    }

    #[test]
    fn inputs_from_data_or_json_text() {
        let data = Incoming {
            data: Some(json!({"a": 1})),
            text: "ignored".into(),
        };
        assert_eq!(input_variables(&data).unwrap().variables["a"], 1);
        let text = Incoming {
            data: None,
            text: "{\"b\": true}".into(),
        };
        assert_eq!(input_variables(&text).unwrap().variables["b"], true);
        assert!(
            input_variables(&Incoming::default())
                .unwrap()
                .variables
                .is_empty()
        );
        // A delegating flow's envelope: its inputs, and the outputs it wants back.
        let envelope = Incoming {
            data: Some(json!({"task": "Activity_review", "inputs": {"amount": 5},
                              "outputs": ["approved"], "instruction": "Review it."})),
            text: "Review it.".into(),
        };
        let inputs = input_variables(&envelope).unwrap();
        assert_eq!(Value::Object(inputs.variables), json!({"amount": 5}));
        assert_eq!(inputs.outputs, Some(vec!["approved".to_string()]));
        let prose = Incoming {
            data: None,
            text: "please approve".into(),
        };
        assert!(input_variables(&prose).unwrap_err().contains("DataPart"));
        let list = Incoming {
            data: Some(json!([1])),
            text: String::new(),
        };
        assert!(input_variables(&list).is_err());
    }
}
