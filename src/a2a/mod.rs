//! A small typed client of the Agent2Agent protocol (A2A), for the remote agents a flow
//! delegates tasks to and consults.
//!
//! - Discovery: the agent card at `<url>/.well-known/agent-card.json`, read once per
//!   client (one client per run) and read again after a failed exchange.
//! - Version: the card's `supportedInterfaces` say which protocol the agent speaks. A
//!   JSON-RPC interface of version 1.x is spoken as A2A 1.0 (`SendMessage`, `GetTask`,
//!   `CancelTask`; header `A2A-Version: 1.0`, media type `application/a2a+json`); a card
//!   without one (a 0.3 card: `url`, `protocolVersion: 0.3.x`) is spoken as 0.3 JSON-RPC
//!   (`message/send`, `tasks/get`, `tasks/cancel`). A 1.0 request answered with "version
//!   not supported" (-32009) or "method not found" (-32601) is retried once as 0.3.
//! - One exchange: a message with the run's context id (the agent assigns the task id,
//!   which every later message of the same control-point visit carries), sent without
//!   blocking, then `GetTask` polled until a terminal state. `input-required` is handed to
//!   the caller's [`Answerer`]; its reply goes back in the same task. Past the agent's total
//!   timeout the task is cancelled (`CancelTask`) and the exchange fails.
//! - The reply: the DataParts of the task's artifacts (merged, in order) are its data; its
//!   text parts its text. The caller decides what they mean ([`Reply::outputs`]).
//!
//! Secrets are [`Secret`]s: never in an error, a log line or a [`Step`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::secret::Secret;

pub mod server;
mod state;
pub mod stream;
pub mod v03;

pub use state::TaskState;

/// The media type of A2A 1.0 over HTTP.
pub const MEDIA_TYPE: &str = "application/a2a+json";
/// Where an agent publishes its card.
pub const CARD_PATH: &str = "/.well-known/agent-card.json";
/// Default total time of one exchange (upstream's value).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);
/// Default time to open a connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// `input-required` rounds one exchange may take before it fails.
pub const MAX_ROUNDS: u32 = 8;

/// The protocol version spoken to an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Version {
    #[serde(rename = "1.0")]
    V1,
    #[serde(rename = "0.3")]
    V03,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "1.0",
            Version::V03 => "0.3",
        }
    }
}

/// Why an exchange with a remote agent failed. Never carries a secret.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum A2aError {
    #[error("remote agent `{agent}` is unreachable at {url}: {message}")]
    Unreachable {
        agent: String,
        url: String,
        message: String,
    },
    #[error(
        "remote agent `{agent}` refused the credentials (HTTP {status}); check its `auth:` and the environment variable it names"
    )]
    Unauthorized { agent: String, status: u16 },
    #[error("remote agent `{agent}` answered HTTP {status}")]
    Http { agent: String, status: u16 },
    #[error("remote agent `{agent}` answered error {code}: {message}")]
    Rpc {
        agent: String,
        code: i64,
        message: String,
    },
    #[error("remote agent `{agent}` sent a malformed reply: {message}")]
    Malformed { agent: String, message: String },
    #[error("remote agent `{agent}`: task {task_id} ended {state}{}", .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Ended {
        agent: String,
        task_id: String,
        state: &'static str,
        message: Option<String>,
    },
    #[error("remote agent `{agent}` did not finish within {secs}s (task {task_id} cancelled)")]
    Timeout {
        agent: String,
        task_id: String,
        secs: u64,
    },
    #[error("remote agent `{agent}` asked for input and nobody could answer: {question}")]
    Unanswered { agent: String, question: String },
    #[error("remote agent `{agent}`: {message}")]
    Config { agent: String, message: String },
    /// Past the agent's `wait` the task is still going (or waits for input nobody here
    /// can give): the run parks, and the task is followed up later (never sent again).
    #[error("remote agent `{agent}`: task {task_id} is still {state} after {secs}s; the run parks")]
    Pending {
        agent: String,
        task_id: String,
        context_id: String,
        state: &'static str,
        secs: f64,
        /// The agent's question, when it waits for input.
        question: Option<String>,
    },
    /// The agent asks a question back (`input-required`) and the exchange was asked to
    /// hand such questions to its caller ([`Limits::questions_return`]): the task stays
    /// open, and the caller's answer goes into it ([`Client::reply_limited`]).
    #[error("remote agent `{agent}`: task {task_id} asks: {question}")]
    Asked {
        agent: String,
        task_id: String,
        context_id: String,
        question: String,
    },
}

/// Credentials sent with every request (the card's request too).
#[derive(Clone, Debug)]
pub enum Credential {
    Bearer(Secret),
    Header { name: String, value: Secret },
}

/// How to reach one remote agent.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    pub name: String,
    /// The base URL (the card is read below it).
    pub url: String,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub credential: Option<Credential>,
    /// The first wait before `GetTask` is polled; it doubles up to `poll_max`.
    pub poll: Duration,
    pub poll_max: Duration,
    /// How long an exchange follows a task live before it returns [`A2aError::Pending`]
    /// (the caller parks). `None`: it follows it up to `timeout`, then cancels it.
    pub wait: Option<Duration>,
    /// Follow tasks over a stream when the card offers one ([`stream`]); `false`: poll.
    pub streaming: bool,
}

impl AgentConfig {
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> AgentConfig {
        AgentConfig {
            name: name.into(),
            url: url.into(),
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            credential: None,
            poll: Duration::from_millis(10),
            poll_max: Duration::from_millis(500),
            wait: None,
            streaming: true,
        }
    }
}

/// What the card said that the client uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Card {
    pub name: String,
    pub endpoint: String,
    pub version: Version,
    /// `capabilities.streaming`: tasks can be followed over SSE ([`stream`]).
    pub streaming: bool,
}

/// What is sent: data (a DataPart) and text (a TextPart); either may be empty.
#[derive(Clone, Debug, Default)]
pub struct Outgoing {
    pub context_id: String,
    pub text: String,
    pub data: Option<Value>,
    /// Request metadata (`{"role": "fulfill_task"}`...).
    pub metadata: Map<String, Value>,
}

/// One step of an exchange, for the journal and the stream. No secrets, no payloads
/// beyond the question asked.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Step {
    pub at_ms: u64,
    /// `card`, `send`, `status`, `input-required`, `answer`, `cancel`, `fallback`.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The reply of a finished (completed) task.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub task_id: String,
    pub context_id: String,
    pub version: Version,
    /// The DataParts of the artifacts (and of the final status message), merged.
    pub data: Option<Value>,
    /// The text parts, joined by newlines.
    pub text: String,
}

impl Reply {
    /// The outputs a task with declared `outputs` takes from this reply: the DataPart's
    /// object; else the text parsed as a JSON object; else an error that says what came.
    /// With no declared outputs, the data (or `{"reply": text}`).
    pub fn outputs(&self, agent: &str, outputs: &[String]) -> Result<Map<String, Value>, A2aError> {
        if let Some(data) = &self.data {
            return match data {
                Value::Object(m) => Ok(m.clone()),
                other if outputs.len() == 1 => {
                    Ok(Map::from_iter([(outputs[0].clone(), other.clone())]))
                }
                other => Err(A2aError::Malformed {
                    agent: agent.to_string(),
                    message: format!("the DataPart is {other}, not an object of the outputs"),
                }),
            };
        }
        if outputs.is_empty() {
            return Ok(Map::from_iter([("reply".to_string(), json!(self.text))]));
        }
        let text = strip_fence(self.text.trim());
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(A2aError::Malformed {
                agent: agent.to_string(),
                message: format!(
                    "the task declares outputs ({}) but the reply is text that is not a JSON object: {:?}",
                    outputs.join(", "),
                    clip(&self.text, 200)
                ),
            }),
        }
    }
}

/// A boxed future (the trait objects here are async).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// How long an exchange follows a task live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Past this the exchange is [`A2aError::Pending`] (the run parks; the task goes on).
    pub park_after: Option<Duration>,
    /// Past this the task is cancelled (`CancelTask`) and the exchange is
    /// [`A2aError::Timeout`]. Checked before `park_after`.
    pub cancel_after: Option<Duration>,
    /// An `input-required` question nobody here answers parks too (a delegation: the
    /// answer may come on resume); otherwise the task is cancelled and the exchange fails.
    pub questions_park: bool,
    /// An `input-required` question is not handed to the answerer: the exchange ends
    /// with [`A2aError::Asked`] and the task stays open (a consultation: the question
    /// goes back to the consulting model or person, whose answer is sent in the same
    /// task with [`Client::reply_limited`]).
    pub questions_return: bool,
}

/// Whoever answers an agent's `input-required` question (the consulting reasoner, a
/// person). `None`: nobody can; the exchange fails.
///
/// It is also told when the agent has assigned a task id to the message just sent
/// ([`Answerer::started`]), before the task is followed: a delegation journals the task
/// then, so that a crash while it is followed never sends the message again.
pub trait Answerer: Send + Sync {
    fn answer(&self, question: &str) -> BoxFuture<'_, Option<String>>;

    /// `SendMessage` returned task `task_id` (in `context_id`, in `state`), not ended
    /// yet. Called once per exchange, before the first `GetTask`.
    fn started(&self, _task_id: &str, _context_id: &str, _state: &str) {}
}

/// No one answers.
pub struct NoAnswerer;

impl Answerer for NoAnswerer {
    fn answer(&self, _question: &str) -> BoxFuture<'_, Option<String>> {
        Box::pin(async { None })
    }
}

/// A client of one remote agent: its card (cached) and an HTTP client.
pub struct Client {
    config: AgentConfig,
    http: reqwest::Client,
    card: Mutex<Option<Card>>,
    /// The tasks cancelled with [`Client::cancel_task`]: an exchange on one of them that
    /// is then dropped sends no second `CancelTask`.
    cancelled: Mutex<std::collections::HashSet<String>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("a2a::Client")
            .field("agent", &self.config.name)
            .field("url", &crate::secret::redact_urls(&self.config.url))
            .finish_non_exhaustive()
    }
}

impl Client {
    pub fn new(config: AgentConfig) -> Result<Client, A2aError> {
        crate::tls::install_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .user_agent(concat!("cuga-flo/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| A2aError::Config {
                agent: config.name.clone(),
                message: e.to_string(),
            })?;
        Ok(Client {
            config,
            http,
            card: Mutex::new(None),
            cancelled: Mutex::new(Default::default()),
        })
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    fn err_unreachable(&self, url: &str, e: &reqwest::Error) -> A2aError {
        // reqwest's message names the URL; the URL's userinfo is redacted.
        let mut message = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            message = format!("{message}: {s}");
            source = s.source();
        }
        A2aError::Unreachable {
            agent: self.config.name.clone(),
            url: crate::secret::redact_urls(url),
            message: self.redact(&crate::secret::redact_urls(&message)),
        }
    }

    fn redact(&self, text: &str) -> String {
        match &self.config.credential {
            Some(Credential::Bearer(s)) | Some(Credential::Header { value: s, .. }) => {
                s.redact(text)
            }
            None => text.to_string(),
        }
    }

    fn authed(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        // Within a control point: the agent's work joins the run's trace.
        let req = match crate::telemetry::outgoing() {
            Some(tp) => req.header("traceparent", tp),
            None => req,
        };
        match &self.config.credential {
            Some(Credential::Bearer(s)) => req.bearer_auth(s.expose()),
            Some(Credential::Header { name, value }) => req.header(name.as_str(), value.expose()),
            None => req,
        }
    }

    /// The agent's card: cached; `refresh` reads it again.
    pub async fn card(&self, refresh: bool) -> Result<Card, A2aError> {
        if !refresh && let Some(card) = self.card.lock().unwrap_or_else(|e| e.into_inner()).clone()
        {
            return Ok(card);
        }
        let url = format!("{}{CARD_PATH}", self.config.url.trim_end_matches('/'));
        let resp = self
            .authed(self.http.get(&url).header("Accept", "application/json"))
            .send()
            .await
            .map_err(|e| self.err_unreachable(&url, &e))?;
        let status = resp.status().as_u16();
        self.check_status(status)?;
        let doc: Value = resp.json().await.map_err(|e| A2aError::Malformed {
            agent: self.config.name.clone(),
            message: format!("the agent card is not JSON: {e}"),
        })?;
        let card = parse_card(&doc, &self.config.url);
        *self.card.lock().unwrap_or_else(|e| e.into_inner()) = Some(card.clone());
        Ok(card)
    }

    fn check_status(&self, status: u16) -> Result<(), A2aError> {
        match status {
            200..=299 => Ok(()),
            401 | 403 => Err(A2aError::Unauthorized {
                agent: self.config.name.clone(),
                status,
            }),
            _ => Err(A2aError::Http {
                agent: self.config.name.clone(),
                status,
            }),
        }
    }

    /// One JSON-RPC call; the `result`.
    async fn rpc(
        &self,
        card: &Card,
        version: Version,
        method: &str,
        params: Value,
    ) -> Result<Value, A2aError> {
        let body = json!({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": params});
        let mut req = self.http.post(&card.endpoint).body(body.to_string());
        req = match version {
            Version::V1 => req
                .header("A2A-Version", "1.0")
                .header("Content-Type", MEDIA_TYPE)
                .header("Accept", format!("{MEDIA_TYPE}, application/json")),
            Version::V03 => req
                .header("Content-Type", "application/json")
                .header("Accept", "application/json"),
        };
        let resp = self
            .authed(req)
            .send()
            .await
            .map_err(|e| self.err_unreachable(&card.endpoint, &e))?;
        self.check_status(resp.status().as_u16())?;
        let doc: Value = resp.json().await.map_err(|e| A2aError::Malformed {
            agent: self.config.name.clone(),
            message: format!("the reply to {method} is not JSON: {e}"),
        })?;
        if let Some(err) = doc.get("error") {
            return Err(A2aError::Rpc {
                agent: self.config.name.clone(),
                code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: self.redact(
                    err.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("(no message)"),
                ),
            });
        }
        doc.get("result")
            .cloned()
            .ok_or_else(|| A2aError::Malformed {
                agent: self.config.name.clone(),
                message: format!("the reply to {method} has neither `result` nor `error`"),
            })
    }

    /// Send one message (the first of a task, or a reply in `task_id`); the task it
    /// created or updated (a plain message reply is a completed task of its own).
    async fn send(
        &self,
        card: &Card,
        version: Version,
        out: &Outgoing,
        task_id: Option<&str>,
        live: &mut stream::Live,
    ) -> Result<TaskView, A2aError> {
        if let Some(task) = self
            .send_streaming(card, version, out, task_id, live)
            .await?
        {
            return Ok(task);
        }
        let message = message_json(version, out, task_id);
        let (method, params) = match version {
            Version::V1 => (
                "SendMessage",
                json!({"message": message, "configuration": {"returnImmediately": true},
                       "metadata": out.metadata}),
            ),
            Version::V03 => (
                "message/send",
                json!({"message": message, "configuration": {"blocking": false},
                       "metadata": out.metadata}),
            ),
        };
        let result = self.rpc(card, version, method, params).await?;
        // 1.0: {"task": {...}} or {"message": {...}}; 0.3: the Task or Message itself.
        let (task, msg) = match version {
            Version::V1 => (result.get("task"), result.get("message")),
            Version::V03 => match result.get("kind").and_then(Value::as_str) {
                Some("message") => (None, Some(&result)),
                _ => (Some(&result), None),
            },
        };
        if let Some(t) = task {
            return TaskView::parse(t).ok_or_else(|| self.malformed("a task without id or status"));
        }
        if let Some(m) = msg {
            let (data, text) = parts(m.get("parts"));
            return Ok(TaskView {
                id: m
                    .get("taskId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                context_id: str_of(m, "contextId"),
                state: TaskState::Completed,
                status_data: data,
                status_text: text,
                artifacts_data: None,
                artifacts_text: String::new(),
            });
        }
        Err(self.malformed("the reply to SendMessage has neither a task nor a message"))
    }

    fn malformed(&self, message: &str) -> A2aError {
        A2aError::Malformed {
            agent: self.config.name.clone(),
            message: message.to_string(),
        }
    }

    async fn get(&self, card: &Card, version: Version, id: &str) -> Result<TaskView, A2aError> {
        let method = match version {
            Version::V1 => "GetTask",
            Version::V03 => "tasks/get",
        };
        let result = self.rpc(card, version, method, json!({"id": id})).await?;
        TaskView::parse(&result).ok_or_else(|| self.malformed("GetTask returned no task"))
    }

    /// A CancelTask request, built ahead (for [`CancelOnDrop`]).
    fn cancel_request(&self, card: &Card, version: Version, id: &str) -> reqwest::RequestBuilder {
        let method = match version {
            Version::V1 => "CancelTask",
            Version::V03 => "tasks/cancel",
        };
        let body =
            json!({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": {"id": id}});
        let req = self.http.post(&card.endpoint).body(body.to_string());
        let req = match version {
            Version::V1 => req
                .header("A2A-Version", "1.0")
                .header("Content-Type", MEDIA_TYPE),
            Version::V03 => req.header("Content-Type", "application/json"),
        };
        self.authed(req)
    }

    async fn cancel(&self, card: &Card, version: Version, id: &str) -> Result<(), A2aError> {
        self.cancel_reply(card, version, id).await.map(|_| ())
    }

    /// One exchange: send `out`, follow the task to its end, hand `input-required`
    /// questions to `answerer`. `steps` receives each step as it happens. With the agent's
    /// `wait`, a task still going past it is [`A2aError::Pending`] (not cancelled).
    pub async fn exchange(
        &self,
        out: &Outgoing,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
    ) -> Result<Reply, A2aError> {
        let limits = Limits {
            park_after: self.config.wait,
            cancel_after: self.config.wait.is_none().then_some(self.config.timeout),
            questions_park: true,
            questions_return: false,
        };
        self.exchange_within(out, answerer, steps, limits).await
    }

    /// [`Client::exchange`] within `limits`: past `cancel_after` the task is cancelled
    /// (even when a `park_after` would come later), past `park_after` the exchange is
    /// [`A2aError::Pending`] (a consultation that may take hours: parked after `wait`,
    /// cancelled after `timeout`).
    pub async fn exchange_limited(
        &self,
        out: &Outgoing,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
        limits: Limits,
    ) -> Result<Reply, A2aError> {
        self.exchange_within(out, answerer, steps, limits).await
    }

    /// Answer the question task `task_id` asked (it is `input-required`; the exchange
    /// that saw it ended [`A2aError::Asked`]): `out` is sent in that task and the task is
    /// followed within `limits`, as [`Client::exchange_limited`] follows a new one.
    pub async fn reply_limited(
        &self,
        task_id: &str,
        out: &Outgoing,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
        limits: Limits,
    ) -> Result<Reply, A2aError> {
        let started = Instant::now();
        let pending: Pending = Mutex::new(None);
        self.guarded(
            &pending,
            self.exchange_inner(
                out,
                Some(task_id),
                answerer,
                steps,
                started,
                &pending,
                limits,
            ),
        )
        .await
    }

    /// [`Client::exchange`] that never parks: followed up to `timeout`, then cancelled
    /// (a consultation, which a reasoner waits for).
    pub async fn exchange_live(
        &self,
        out: &Outgoing,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
    ) -> Result<Reply, A2aError> {
        let limits = Limits {
            park_after: None,
            cancel_after: Some(self.config.timeout),
            questions_park: false,
            questions_return: false,
        };
        self.exchange_within(out, answerer, steps, limits).await
    }

    async fn exchange_within(
        &self,
        out: &Outgoing,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
        limits: Limits,
    ) -> Result<Reply, A2aError> {
        let started = Instant::now();
        let pending: Pending = Mutex::new(None);
        self.guarded(
            &pending,
            self.exchange_inner(out, None, answerer, steps, started, &pending, limits),
        )
        .await
    }

    /// Run `exchange` (a send or a follow-up that records its task in `pending`): if this
    /// future is dropped mid-exchange (the run was cancelled), the remote task is
    /// cancelled too (best effort, sent on the runtime without waiting); if it fails, a
    /// later exchange reads the card again (the agent may have moved or upgraded).
    async fn guarded(
        &self,
        pending: &Pending,
        exchange: impl std::future::Future<Output = Result<Reply, A2aError>>,
    ) -> Result<Reply, A2aError> {
        let guard = CancelOnDrop(pending, &self.cancelled);
        let result = exchange.await;
        guard.defuse();
        if result.is_err() {
            *self.card.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
        result
    }

    /// Send `out` (in task `in_task`, answering its question, or as a new task) and
    /// follow the task.
    #[allow(clippy::too_many_arguments)]
    async fn exchange_inner(
        &self,
        out: &Outgoing,
        in_task: Option<&str>,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
        started: Instant,
        pending: &Pending,
        limits: Limits,
    ) -> Result<Reply, A2aError> {
        let at = |s: Instant| s.elapsed().as_millis() as u64;
        let card = self.card(false).await?;
        steps.push(Step {
            at_ms: at(started),
            kind: "card",
            task_id: None,
            state: None,
            detail: Some(format!(
                "{} speaks A2A {}",
                card.name,
                card.version.as_str()
            )),
        });
        if let Some(id) = in_task {
            steps.push(Step {
                at_ms: at(started),
                kind: "answer",
                task_id: Some(id.to_string()),
                state: None,
                detail: Some(clip(&out.text, 500)),
            });
        }
        let mut version = card.version;
        let mut live = stream::Live::default();
        let task = match self.send(&card, version, out, in_task, &mut live).await {
            Err(e) if refuses_1_0(&e, version) => {
                version = Version::V03;
                steps.push(Step {
                    at_ms: at(started),
                    kind: "fallback",
                    task_id: None,
                    state: None,
                    detail: Some(format!(
                        "the agent refused A2A 1.0 (error {}); speaking 0.3",
                        rpc_code(&e)
                    )),
                });
                self.send(&card, version, out, in_task, &mut live).await?
            }
            other => other?,
        };
        let mut task = task;
        if task.id.is_empty()
            && let Some(id) = in_task
        {
            task.id = id.to_string();
        }
        if !task.id.is_empty() && !task.state.is_terminal() {
            *pending.lock().unwrap_or_else(|e| e.into_inner()) = Some((
                task.id.clone(),
                self.cancel_request(&card, version, &task.id),
            ));
            let context_id = if task.context_id.is_empty() {
                &out.context_id
            } else {
                &task.context_id
            };
            answerer.started(&task.id, context_id, task.state.as_str());
        }
        steps.push(Step {
            at_ms: at(started),
            kind: "send",
            task_id: Some(task.id.clone()),
            state: Some(task.state.as_str()),
            detail: None,
        });
        self.follow(
            &card, version, task, out, answerer, steps, started, limits, live,
        )
        .await
    }

    /// Follow up on a task sent earlier (`task_id`, in `context_id`; the run parked while
    /// it went on): read it with `GetTask` (the message is never sent again) and follow it
    /// as [`Client::exchange`] does. `metadata` goes with any answer to its questions.
    pub async fn follow_up(
        &self,
        task_id: &str,
        context_id: &str,
        metadata: Map<String, Value>,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
    ) -> Result<Reply, A2aError> {
        let limits = Limits {
            park_after: self.config.wait,
            cancel_after: None,
            questions_park: true,
            questions_return: false,
        };
        self.follow_up_limited(task_id, context_id, metadata, answerer, steps, limits)
            .await
    }

    /// [`Client::follow_up`] within `limits` (see [`Client::exchange_limited`]); a task
    /// already past `cancel_after` (zero) is read once: ended, its end is taken, else it
    /// is cancelled.
    pub async fn follow_up_limited(
        &self,
        task_id: &str,
        context_id: &str,
        metadata: Map<String, Value>,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
        limits: Limits,
    ) -> Result<Reply, A2aError> {
        let started = Instant::now();
        let pending: Pending = Mutex::new(None);
        self.guarded(
            &pending,
            self.follow_up_inner(
                task_id, context_id, metadata, answerer, steps, started, &pending, limits,
            ),
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn follow_up_inner(
        &self,
        task_id: &str,
        context_id: &str,
        metadata: Map<String, Value>,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
        started: Instant,
        pending: &Pending,
        limits: Limits,
    ) -> Result<Reply, A2aError> {
        let at = |s: Instant| s.elapsed().as_millis() as u64;
        let card = self.card(false).await?;
        let mut version = card.version;
        let task = match self.get(&card, version, task_id).await {
            Err(e) if refuses_1_0(&e, version) => {
                version = Version::V03;
                self.get(&card, version, task_id).await?
            }
            other => other?,
        };
        if !task.state.is_terminal() {
            *pending.lock().unwrap_or_else(|e| e.into_inner()) = Some((
                task_id.to_string(),
                self.cancel_request(&card, version, task_id),
            ));
        }
        steps.push(Step {
            at_ms: at(started),
            kind: "follow-up",
            task_id: Some(task_id.to_string()),
            state: Some(task.state.as_str()),
            detail: Some(format!("A2A {}", version.as_str())),
        });
        let out = Outgoing {
            context_id: context_id.to_string(),
            text: String::new(),
            data: None,
            metadata,
        };
        let mut task = task;
        if task.id.is_empty() {
            task.id = task_id.to_string();
        }
        let live = stream::Live::default();
        self.follow(
            &card, version, task, &out, answerer, steps, started, limits, live,
        )
        .await
    }

    /// Follow `task` to its end: poll `GetTask`, hand `input-required` questions to
    /// `answerer`; past `wait` return [`A2aError::Pending`], past `timeout` (without a
    /// `wait`) cancel it.
    #[allow(clippy::too_many_arguments)]
    async fn follow(
        &self,
        card: &Card,
        version: Version,
        mut task: TaskView,
        out: &Outgoing,
        answerer: &dyn Answerer,
        steps: &mut Vec<Step>,
        started: Instant,
        limits: Limits,
        mut live: stream::Live,
    ) -> Result<Reply, A2aError> {
        let Limits {
            park_after,
            cancel_after,
            questions_park,
            questions_return,
        } = limits;
        let card = card.clone();
        let at = |s: Instant| s.elapsed().as_millis() as u64;
        let mut rounds = 0;
        let mut last = task.state;
        let mut wait = self.config.poll;
        loop {
            live.drain_into(steps, started);
            if task.state != last {
                last = task.state;
                steps.push(Step {
                    at_ms: at(started),
                    kind: "status",
                    task_id: Some(task.id.clone()),
                    state: Some(task.state.as_str()),
                    detail: None,
                });
            }
            match task.state {
                TaskState::Completed => {
                    return Ok(task.into_reply(version, &out.context_id));
                }
                s if s.is_terminal() => {
                    let message = Some(task.status_text.clone()).filter(|t| !t.is_empty());
                    return Err(A2aError::Ended {
                        agent: self.config.name.clone(),
                        task_id: task.id,
                        state: s.as_str(),
                        message,
                    });
                }
                TaskState::InputRequired | TaskState::AuthRequired => {
                    let question = if task.status_text.is_empty() {
                        task.status_data
                            .as_ref()
                            .map(Value::to_string)
                            .unwrap_or_default()
                    } else {
                        task.status_text.clone()
                    };
                    steps.push(Step {
                        at_ms: at(started),
                        kind: "input-required",
                        task_id: Some(task.id.clone()),
                        state: Some(task.state.as_str()),
                        detail: Some(clip(&question, 500)),
                    });
                    if questions_return
                        && task.state == TaskState::InputRequired
                        && !task.id.is_empty()
                        && cancel_after.is_none_or(|c| started.elapsed() < c)
                    {
                        // The question goes back to whoever consulted; the task stays
                        // open for their answer.
                        return Err(A2aError::Asked {
                            agent: self.config.name.clone(),
                            task_id: task.id.clone(),
                            context_id: if task.context_id.is_empty() {
                                out.context_id.clone()
                            } else {
                                task.context_id.clone()
                            },
                            question: clip(&question, 2000),
                        });
                    }
                    if questions_return && task.state == TaskState::InputRequired {
                        let _ = self.cancel(&card, version, &task.id).await;
                        steps.push(Step {
                            at_ms: at(started),
                            kind: "cancel",
                            task_id: Some(task.id.clone()),
                            state: None,
                            detail: Some("timeout".into()),
                        });
                        return Err(A2aError::Timeout {
                            agent: self.config.name.clone(),
                            task_id: task.id,
                            secs: self.config.timeout.as_secs(),
                        });
                    }
                    rounds += 1;
                    let answer = if rounds > MAX_ROUNDS || task.state == TaskState::AuthRequired {
                        None
                    } else {
                        answerer.answer(&question).await
                    };
                    let Some(answer) = answer else {
                        if let Some(w) = park_after.filter(|_| questions_park)
                            && cancel_after.is_none_or(|c| started.elapsed() < c)
                            && rounds <= MAX_ROUNDS
                            && task.state == TaskState::InputRequired
                            && !task.id.is_empty()
                        {
                            // Nobody here can answer now: the run parks with the question
                            // (the task stays open; a later follow-up asks again).
                            return Err(self.pending(
                                &task,
                                out,
                                w,
                                Some(clip(&question, 500)),
                                steps,
                                started,
                            ));
                        }
                        let _ = self.cancel(&card, version, &task.id).await;
                        return Err(A2aError::Unanswered {
                            agent: self.config.name.clone(),
                            question: clip(&question, 500),
                        });
                    };
                    steps.push(Step {
                        at_ms: at(started),
                        kind: "answer",
                        task_id: Some(task.id.clone()),
                        state: None,
                        detail: Some(clip(&answer, 500)),
                    });
                    let reply = Outgoing {
                        context_id: if task.context_id.is_empty() {
                            out.context_id.clone()
                        } else {
                            task.context_id.clone()
                        },
                        text: answer,
                        data: None,
                        metadata: out.metadata.clone(),
                    };
                    let id = task.id.clone();
                    wait = self.config.poll;
                    task = self
                        .send(&card, version, &reply, Some(&id), &mut live)
                        .await?;
                    if task.id.is_empty() {
                        task.id = id;
                    }
                    continue;
                }
                _ => {}
            }
            if let Some(c) = cancel_after
                && started.elapsed() >= c
            {
                let _ = self.cancel(&card, version, &task.id).await;
                steps.push(Step {
                    at_ms: at(started),
                    kind: "cancel",
                    task_id: Some(task.id.clone()),
                    state: None,
                    detail: Some("timeout".into()),
                });
                return Err(A2aError::Timeout {
                    agent: self.config.name.clone(),
                    task_id: task.id,
                    secs: self.config.timeout.as_secs(),
                });
            }
            if let Some(w) = park_after
                && started.elapsed() >= w
                && !task.id.is_empty()
            {
                return Err(self.pending(&task, out, w, None, steps, started));
            }
            // Never past the timeout (the cancellation is due then) or the wait.
            let left = match (park_after, cancel_after) {
                (Some(w), Some(c)) => w.min(c),
                (Some(w), None) => w,
                (None, Some(c)) => c,
                (None, None) => self.config.timeout,
            }
            .saturating_sub(started.elapsed());
            if let Some(t) = self
                .next_streamed(&card, version, &task, &mut live, left)
                .await?
            {
                task = t;
                continue;
            }
            tokio::time::sleep(wait.min(left)).await;
            wait = (wait * 2).min(self.config.poll_max);
            if task.id.is_empty() {
                return Err(self.malformed("the task has no id to follow"));
            }
            task = self.get(&card, version, &task.id).await?;
        }
    }
}

impl Client {
    /// The task is still going past `wait`: the step, and the error that parks the run.
    fn pending(
        &self,
        task: &TaskView,
        out: &Outgoing,
        wait: Duration,
        question: Option<String>,
        steps: &mut Vec<Step>,
        started: Instant,
    ) -> A2aError {
        steps.push(Step {
            at_ms: started.elapsed().as_millis() as u64,
            kind: "park",
            task_id: Some(task.id.clone()),
            state: Some(task.state.as_str()),
            detail: Some(format!("still {} after {:?}", task.state.as_str(), wait)),
        });
        A2aError::Pending {
            agent: self.config.name.clone(),
            task_id: task.id.clone(),
            context_id: if task.context_id.is_empty() {
                out.context_id.clone()
            } else {
                task.context_id.clone()
            },
            state: task.state.as_str(),
            secs: wait.as_secs_f64(),
            question,
        }
    }

    /// Cancel a task sent earlier (the run that waited for it is cancelled): the task's
    /// state in the agent's reply (`canceled`; empty when the reply names none).
    pub async fn cancel_task(&self, task_id: &str) -> Result<String, A2aError> {
        (self.cancelled.lock().unwrap_or_else(|e| e.into_inner())).insert(task_id.to_string());
        let card = self.card(false).await?;
        let reply = match self.cancel_reply(&card, card.version, task_id).await {
            Err(e) if refuses_1_0(&e, card.version) => {
                self.cancel_reply(&card, Version::V03, task_id).await
            }
            other => other,
        }?;
        Ok(TaskView::parse(reply.get("task").unwrap_or(&reply))
            .map(|t| t.state.as_str().to_string())
            .unwrap_or_default())
    }

    async fn cancel_reply(
        &self,
        card: &Card,
        version: Version,
        id: &str,
    ) -> Result<Value, A2aError> {
        let method = match version {
            Version::V1 => "CancelTask",
            Version::V03 => "tasks/cancel",
        };
        self.rpc(card, version, method, json!({"id": id})).await
    }
}

/// The `CancelTask` an exchange sends if it is dropped (its task's id and the request).
type Pending = Mutex<Option<(String, reqwest::RequestBuilder)>>;

/// Sends the pending CancelTask when dropped armed (the exchange's future was dropped),
/// unless the task was cancelled with [`Client::cancel_task`] already.
struct CancelOnDrop<'a>(&'a Pending, &'a Mutex<std::collections::HashSet<String>>);

impl CancelOnDrop<'_> {
    /// The exchange ended by itself: nothing to cancel.
    fn defuse(self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some((id, req)) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        if (self.1.lock().unwrap_or_else(|e| e.into_inner())).contains(&id) {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = req.send().await;
            });
        }
    }
}

/// Whether `e` refuses a 1.0 request as such ("version not supported", -32009, or
/// "method not found", -32601): the request is sent again in 0.3.
fn refuses_1_0(e: &A2aError, version: Version) -> bool {
    version == Version::V1 && matches!(rpc_code(e), -32009 | -32601)
}

/// The JSON-RPC error code of `e` (0 when it is not a JSON-RPC error).
fn rpc_code(e: &A2aError) -> i64 {
    match e {
        A2aError::Rpc { code, .. } => *code,
        _ => 0,
    }
}

/// A task as read from a reply.
#[derive(Debug, Clone)]
struct TaskView {
    id: String,
    context_id: String,
    state: TaskState,
    status_data: Option<Value>,
    status_text: String,
    artifacts_data: Option<Value>,
    artifacts_text: String,
}

impl TaskView {
    fn parse(t: &Value) -> Option<TaskView> {
        let status = t.get("status")?;
        let state = TaskState::parse(status.get("state")?.as_str()?);
        let (status_data, status_text) = match status.get("message") {
            Some(m) => parts(m.get("parts")),
            None => (None, String::new()),
        };
        let mut data: Option<Value> = None;
        let mut text = Vec::new();
        for a in t
            .get("artifacts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (d, tx) = parts(a.get("parts"));
            if let Some(d) = d {
                merge(&mut data, d);
            }
            if !tx.is_empty() {
                text.push(tx);
            }
        }
        Some(TaskView {
            id: str_of(t, "id"),
            context_id: str_of(t, "contextId"),
            state,
            status_data,
            status_text,
            artifacts_data: data,
            artifacts_text: text.join("\n"),
        })
    }

    fn into_reply(self, version: Version, context_id: &str) -> Reply {
        let mut data = self.artifacts_data;
        if let Some(d) = self.status_data {
            merge(&mut data, d);
        }
        let text = [self.artifacts_text, self.status_text]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        Reply {
            task_id: self.id,
            context_id: if self.context_id.is_empty() {
                context_id.to_string()
            } else {
                self.context_id
            },
            version,
            data,
            text,
        }
    }
}

/// Objects merge key by key; anything else replaces.
fn merge(into: &mut Option<Value>, d: Value) {
    match (into.as_mut(), d) {
        (Some(Value::Object(a)), Value::Object(b)) => a.extend(b),
        (_, d) => *into = Some(d),
    }
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The data (merged DataParts) and text (joined TextParts) of a parts list, in either
/// version's shape (1.0: `{"text"}` / `{"data"}`; 0.3: `{"kind": "text"|"data", ...}`).
pub(crate) fn parts(parts: Option<&Value>) -> (Option<Value>, String) {
    let mut data = None;
    let mut text = Vec::new();
    for p in parts.and_then(Value::as_array).into_iter().flatten() {
        if let Some(d) = p.get("data") {
            merge(&mut data, d.clone());
        } else if let Some(t) = p.get("text").and_then(Value::as_str) {
            text.push(t.to_string());
        }
    }
    (data, text.join("\n"))
}

fn message_json(version: Version, out: &Outgoing, task_id: Option<&str>) -> Value {
    let mut parts = Vec::new();
    if !out.text.is_empty() {
        parts.push(json!({"text": out.text}));
    }
    if let Some(d) = &out.data {
        parts.push(json!({"data": d, "mediaType": "application/json"}));
    }
    let mut m = json!({
        "messageId": new_id(),
        "role": "ROLE_USER",
        "contextId": out.context_id,
        "parts": parts,
    });
    if let Some(t) = task_id {
        m["taskId"] = json!(t);
    }
    match version {
        Version::V1 => m,
        Version::V03 => v03::message(&m),
    }
}

/// The card's JSON-RPC endpoint and version. 1.0: a `supportedInterfaces` entry with
/// binding `JSONRPC` and version 1.x (else any JSONRPC one, as 0.3); 0.3: the card's
/// `url`. Without either, the base URL as 1.0.
pub fn parse_card(doc: &Value, base: &str) -> Card {
    let name = str_of(doc, "name");
    let streaming = doc
        .pointer("/capabilities/streaming")
        .and_then(Value::as_bool)
        == Some(true);
    let interfaces: Vec<&Value> = doc
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let jsonrpc = |v: &Value| {
        v.get("protocolBinding")
            .and_then(Value::as_str)
            .is_none_or(|b| b.eq_ignore_ascii_case("JSONRPC"))
    };
    let version_of = |v: &Value| {
        v.get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("1.0")
            .to_string()
    };
    if let Some(i) = interfaces
        .iter()
        .find(|i| jsonrpc(i) && version_of(i).starts_with("1."))
    {
        return Card {
            name,
            endpoint: str_of(i, "url"),
            version: Version::V1,
            streaming,
        };
    }
    if let Some(i) = interfaces.iter().find(|i| jsonrpc(i)) {
        return Card {
            name,
            endpoint: str_of(i, "url"),
            version: Version::V03,
            streaming,
        };
    }
    if let Some(url) = doc.get("url").and_then(Value::as_str) {
        let v = doc
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("0.3");
        return Card {
            name,
            endpoint: url.to_string(),
            version: if v.starts_with("1.") {
                Version::V1
            } else {
                Version::V03
            },
            streaming,
        };
    }
    Card {
        name,
        endpoint: base.to_string(),
        version: Version::V1,
        streaming,
    }
}

/// A fresh random id (a UUID v4 in form).
pub fn new_id() -> String {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut b = [0u8; 16];
    let _ = SystemRandom::new().fill(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

pub(crate) fn strip_fence(t: &str) -> &str {
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let rest = rest.trim_start_matches("json");
    rest.trim_end().trim_end_matches("```").trim()
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_of_both_versions() {
        assert_eq!(
            TaskState::parse("TASK_STATE_INPUT_REQUIRED"),
            TaskState::InputRequired
        );
        assert_eq!(TaskState::parse("input-required"), TaskState::InputRequired);
        assert_eq!(
            TaskState::parse("TASK_STATE_COMPLETED"),
            TaskState::Completed
        );
        assert!(TaskState::parse("canceled").is_terminal());
        assert!(!TaskState::parse("working").is_terminal());
    }

    #[test]
    fn cards_of_both_versions() {
        let v1 = json!({"name": "a", "supportedInterfaces": [
            {"url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "http://h/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]});
        let c = parse_card(&v1, "http://h");
        assert_eq!(
            (c.endpoint.as_str(), c.version),
            ("http://h/rpc", Version::V1)
        );
        let v03 = json!({"name": "b", "url": "http://h/a2a", "protocolVersion": "0.3.0"});
        let c = parse_card(&v03, "http://h");
        assert_eq!(
            (c.endpoint.as_str(), c.version),
            ("http://h/a2a", Version::V03)
        );
    }

    fn reply(data: Option<Value>, text: &str) -> Reply {
        Reply {
            task_id: "t".into(),
            context_id: "c".into(),
            version: Version::V1,
            data,
            text: text.into(),
        }
    }

    #[test]
    fn outputs_from_data_text_json_or_a_clear_failure() {
        let outs = vec!["approved".to_string()];
        let r = reply(Some(json!({"approved": true})), "");
        assert_eq!(r.outputs("a", &outs).unwrap()["approved"], json!(true));
        let r = reply(None, "```json\n{\"approved\": false}\n```");
        assert_eq!(r.outputs("a", &outs).unwrap()["approved"], json!(false));
        let r = reply(None, "sure, approve it");
        let e = r.outputs("a", &outs).unwrap_err().to_string();
        assert!(
            e.contains("not a JSON object") && e.contains("approved"),
            "{e}"
        );
        let r = reply(None, "free text");
        assert_eq!(r.outputs("a", &[]).unwrap()["reply"], json!("free text"));
    }

    #[test]
    fn messages_in_both_shapes() {
        let out = Outgoing {
            context_id: "c".into(),
            text: "hi".into(),
            data: Some(json!({"x": 1})),
            metadata: Map::new(),
        };
        let m = message_json(Version::V1, &out, Some("t"));
        assert_eq!(m["role"], "ROLE_USER");
        assert_eq!(m["parts"][1]["data"]["x"], 1);
        assert_eq!(m["taskId"], "t");
        let m = message_json(Version::V03, &out, None);
        assert_eq!(m["kind"], "message");
        assert_eq!(m["parts"][0]["kind"], "text");
        assert!(m.get("taskId").is_none());
    }

    #[test]
    fn ids_are_uuid_shaped() {
        let id = new_id();
        assert_eq!(id.len(), 36);
        assert_ne!(id, new_id());
    }
}
