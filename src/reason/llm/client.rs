//! The HTTP side of a model call: one [`ChatRequest`] becomes a `POST
//! {base_url}/chat/completions` (the OpenAI wire shape) and a [`ChatResponse`].
//!
//! # Policy
//! - **Timeouts**: a connect timeout and a total timeout per HTTP request, from the
//!   settings.
//! - **Retries**: HTTP 429, 500, 502, 503 and 504, connect timeouts and connection
//!   failures are retried up to `settings.retries` times per call. A request that timed out
//!   once sent is not: the server is most likely still computing it (a local server works
//!   one request at a time), and a retry would only queue behind the abandoned request. The wait starts at
//!   `settings.backoff`, doubles per retry, gets up to a quarter more as jitter, and never
//!   exceeds [`MAX_BACKOFF`]; a `Retry-After: <seconds>` on 429/503 replaces it (capped the
//!   same way). Other 4xx are not retried, and neither is a 2xx that is not a chat
//!   completion ([`CallError::Protocol`]): a server that answers that way usually does it
//!   again, and the reasoner re-asks anyway. A body cut off in transit is a connection
//!   failure and is retried.
//! - **Structured output** ([`ResponseFormat`]): `JsonSchema`, `JsonObject` and `Prompt`
//!   are sent as they are. `Auto` sends `json_schema` first; when the server refuses it
//!   (HTTP 400/404/415/422/500/501 whose body mentions `response_format`, `json_schema`,
//!   `json_object` or `schema`) the same request is sent again at once, with no backoff and
//!   without using a retry, as `json_object` + schema, then without `response_format`.
//!   The client keeps the form that worked, so its later calls start there.
//! - **Concurrency**: at most `settings.max_concurrency` requests are in flight to one
//!   endpoint over the whole process ([`endpoint_gate`]); a request waits for its turn
//!   before it is sent, so its timeout counts only the server's time, and parallel
//!   branches or runs never pile requests up in a local server's queue where they would
//!   time out one after the other.
//! - **Secrets**: the API key is sent only in the `Authorization` header; every text that
//!   reaches an error or a log goes through [`Secret::redact`] first.
//! - **Cancellation**: the future owns the request; dropping it (Ctrl-C) closes the
//!   connection and abandons any backoff.

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, RETRY_AFTER};
use serde_json::{Map, Value, json};

use super::settings::{MAX_BACKOFF, Secret};
use super::{
    AnswerSchema, CallError, ChatMessage, ChatRequest, ChatResponse, LlmSettings, ResponseFormat,
    ToolCall, Usage,
};

/// The turns of one endpoint: at most `limit` requests in flight, over every run and
/// control point of the process that calls it with that limit; measured (telemetry on)
/// as the gauges `cuga_flo_model_slots`, `…_requests_in_flight` and `…_requests_waiting`.
#[derive(Debug)]
pub struct Gate {
    /// The endpoint as shown (no credentials, no query).
    pub endpoint: String,
    pub limit: u32,
    turns: tokio::sync::Semaphore,
    waiting: std::sync::atomic::AtomicUsize,
}

/// One request's turn: the gauges move when it is given back (dropped).
struct Turn<'a> {
    gate: &'a Gate,
    permit: Option<tokio::sync::SemaphorePermit<'a>>,
}

impl Gate {
    fn new(url: &str, limit: u32) -> Gate {
        let endpoint = match reqwest::Url::parse(&crate::secret::without_userinfo(url)) {
            Ok(mut u) => {
                u.set_query(None);
                u.to_string()
            }
            Err(_) => "(unparsed URL)".to_string(),
        };
        Gate {
            endpoint,
            limit: limit.max(1),
            turns: tokio::sync::Semaphore::new(limit.max(1) as usize),
            waiting: Default::default(),
        }
    }

    /// Wait for a turn.
    async fn turn(&self) -> Turn<'_> {
        use std::sync::atomic::Ordering;
        /// Counted as waiting until dropped: when the turn comes, or when the wait is
        /// abandoned (the request's future dropped, as on Ctrl-C).
        struct Waiting<'a>(&'a Gate);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.waiting.fetch_sub(1, Ordering::Relaxed);
                self.0.measure();
            }
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        self.measure();
        let waiting = Waiting(self);
        let permit = self.turns.acquire().await.ok();
        drop(waiting);
        Turn { gate: self, permit }
    }

    /// Requests sent and not answered yet.
    pub fn in_flight(&self) -> usize {
        (self.limit as usize).saturating_sub(self.turns.available_permits())
    }

    /// Requests waiting for a turn.
    pub fn waiting(&self) -> usize {
        self.waiting.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn measure(&self) {
        use crate::telemetry::metrics as m;
        let Some(metrics) = crate::telemetry::metrics() else {
            return;
        };
        let labels = || vec![("endpoint", self.endpoint.clone())];
        metrics.set(m::MODEL_SLOTS, labels(), f64::from(self.limit));
        metrics.set(m::MODEL_IN_FLIGHT, labels(), self.in_flight() as f64);
        metrics.set(m::MODEL_WAITING, labels(), self.waiting() as f64);
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        // The permit goes back after this; count it as given back already.
        let gate = self.gate;
        drop(self.permit.take());
        gate.measure();
    }
}

type Gates = std::sync::Mutex<Vec<std::sync::Arc<Gate>>>;

fn gates() -> std::sync::MutexGuard<'static, Vec<std::sync::Arc<Gate>>> {
    static GATES: std::sync::OnceLock<Gates> = std::sync::OnceLock::new();
    GATES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The gate of an endpoint: one per (URL, limit) in the process, so that every run and
/// control point calling the same server shares its limit.
fn endpoint_gate(url: &str, limit: u32) -> std::sync::Arc<Gate> {
    let mut gates = gates();
    let wanted = Gate::new(url, limit);
    if let Some(gate) =
        (gates.iter()).find(|g| g.endpoint == wanted.endpoint && g.limit == wanted.limit)
    {
        return gate.clone();
    }
    let gate = std::sync::Arc::new(wanted);
    gate.measure();
    gates.push(gate.clone());
    gate
}

/// The model endpoints the process has clients of, each with its limit (for a server's
/// start-up lines and its metrics).
pub fn endpoints() -> Vec<std::sync::Arc<Gate>> {
    gates().clone()
}

/// The longest excerpt of a response body kept in an error.
const EXCERPT_CHARS: usize = 300;

/// An OpenAI-compatible chat-completions client. Cheap to share (`&self` calls); the
/// connection pool and the learned structured-output form are kept between calls.
pub struct ChatClient {
    settings: LlmSettings,
    /// Shared with every client of the same endpoint in the process.
    gate: std::sync::Arc<Gate>,
    http: reqwest::Client,
    url: String,
    /// The form `Auto` calls start with, as [`form_index`]: it only ever moves forward.
    auto_form: AtomicU8,
    /// The server wants `max_completion_tokens` instead of `max_tokens` (OpenAI's reasoning
    /// models refuse the older name); learnt from its first refusal.
    completion_tokens: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("settings", &self.settings)
            .field("format", &self.start_format())
            .finish_non_exhaustive()
    }
}

impl ChatClient {
    pub fn new(settings: LlmSettings) -> Result<ChatClient, CallError> {
        crate::tls::install_provider();
        // With an API key, credentials in the URL's userinfo are not sent: the key is the
        // credential (reqwest would otherwise send them as a Basic Authorization ahead of
        // the key's Bearer). Without one, they are the credential.
        let url = match &settings.api_key {
            Some(_) => crate::secret::without_userinfo(&settings.completions_url()),
            None => settings.completions_url(),
        };
        let http = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.timeout)
            .user_agent(concat!("cuga-flo/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| CallError::Connect {
                url: redact(&settings.api_key, &url),
                message: redact(&settings.api_key, &error_chain(e)),
                attempts: 0,
            })?;
        Ok(ChatClient {
            gate: endpoint_gate(&url, settings.max_concurrency),
            url,
            http,
            auto_form: AtomicU8::new(form_index(ResponseFormat::JsonSchema)),
            completion_tokens: std::sync::atomic::AtomicBool::new(false),
            settings,
        })
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.settings
    }

    /// One logical call: retries and format fallbacks included (see the module doc).
    /// Without a schema in the request no `response_format` is sent, and the response's
    /// `format` is the form a call with a schema would have started with.
    pub async fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, CallError> {
        let started = Instant::now();
        let mut format = self.start_format();
        let mut attempts = 0u32;
        let mut retries_left = self.settings.retries;
        let mut backoff = self.settings.backoff;
        loop {
            let mut body = request_body(&self.settings, req, format);
            if self.completion_tokens.load(Ordering::Relaxed) {
                rename_max_tokens(&mut body);
            }
            attempts += 1;
            let sent = Instant::now();
            let failure = match self.post(&body, req.idempotency_key.as_deref()).await {
                Ok(reply) if reply.status.is_success() => {
                    self.log(attempts, format, Some(reply.status), sent);
                    let parsed =
                        parse_response(&reply.body).map_err(|message| CallError::Protocol {
                            url: self.redact(&self.url),
                            message: self.redact(&message),
                            attempts,
                        })?;
                    return Ok(ChatResponse {
                        latency: started.elapsed(),
                        http_attempts: attempts,
                        format,
                        ..parsed
                    });
                }
                Ok(reply) => {
                    self.log(attempts, format, Some(reply.status), sent);
                    let text = String::from_utf8_lossy(&reply.body);
                    if self.settings.max_tokens.is_some()
                        && !self.completion_tokens.load(Ordering::Relaxed)
                        && wants_completion_tokens(reply.status, &text)
                    {
                        tracing::debug!("the server wants `max_completion_tokens`");
                        self.completion_tokens.store(true, Ordering::Relaxed);
                        continue;
                    }
                    if self.may_fall_back(req, format) && refuses_format(reply.status, &text) {
                        format = next_format(format);
                        tracing::debug!(
                            url = %self.redact(&self.url),
                            status = reply.status.as_u16(),
                            fallback = format.as_str(),
                            "the server refused the structured-output form"
                        );
                        self.auto_form
                            .fetch_max(form_index(format), Ordering::Relaxed);
                        continue;
                    }
                    let retry_after = match reply.status.as_u16() {
                        429 | 503 => reply.retry_after,
                        _ => None,
                    };
                    Failure {
                        retry: retryable_status(reply.status),
                        retry_after,
                        error: CallError::Status {
                            url: self.redact(&self.url),
                            status: reply.status.as_u16(),
                            body: excerpt(&self.redact(&error_text(&text)), EXCERPT_CHARS),
                            attempts,
                        },
                    }
                }
                Err(e) => {
                    self.log(attempts, format, None, sent);
                    self.transport_failure(e, attempts)
                }
            };
            if !failure.retry || retries_left == 0 {
                return Err(failure.error);
            }
            retries_left -= 1;
            let wait = failure
                .retry_after
                .unwrap_or_else(|| with_jitter(backoff))
                .min(MAX_BACKOFF);
            tracing::debug!(error = %failure.error, wait_ms = wait.as_millis() as u64, "retrying");
            backoff = backoff.saturating_mul(2).min(MAX_BACKOFF);
            tokio::time::sleep(wait).await;
        }
    }

    /// The form a call starts with.
    fn start_format(&self) -> ResponseFormat {
        match self.settings.response_format {
            ResponseFormat::Auto => FORMS[usize::from(self.auto_form.load(Ordering::Relaxed))],
            fixed => fixed,
        }
    }

    fn may_fall_back(&self, req: &ChatRequest, format: ResponseFormat) -> bool {
        self.settings.response_format == ResponseFormat::Auto
            && req.schema.is_some()
            && format != ResponseFormat::Prompt
    }

    async fn post(&self, body: &Value, key: Option<&str>) -> Result<Reply, reqwest::Error> {
        let mut request = self
            .http
            .post(&self.url)
            .header(ACCEPT, "application/json")
            .json(body);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        // The run's trace context (telemetry on): the model server's spans join the run's.
        if let Some(tp) = crate::telemetry::outgoing() {
            request = request.header("traceparent", tp);
        }
        if let Some(key) = &self.settings.api_key {
            request = request.header(AUTHORIZATION, format!("Bearer {}", key.expose()));
        }
        // Held until the whole body has arrived (dropped with the future on cancellation).
        let _turn = self.gate.turn().await;
        let response = request.send().await?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let body = response.bytes().await?.to_vec();
        Ok(Reply {
            status,
            retry_after,
            body,
        })
    }

    fn transport_failure(&self, e: reqwest::Error, attempts: u32) -> Failure {
        let url = self.redact(&self.url);
        if e.is_timeout() {
            let limit = if e.is_connect() {
                self.settings.connect_timeout
            } else {
                self.settings.timeout
            };
            return Failure {
                // A request that timed out after it was sent is most likely still being
                // computed (a local server works one request at a time): a retry would
                // queue behind it. Only a connect timeout is retried.
                retry: e.is_connect(),
                retry_after: None,
                error: CallError::Timeout {
                    url,
                    secs: limit.as_secs_f64().ceil() as u64,
                    attempts,
                },
            };
        }
        Failure {
            // A request that cannot be built (a malformed base URL) fails the same way again.
            retry: !e.is_builder(),
            retry_after: None,
            error: CallError::Connect {
                url,
                message: self.redact(&error_chain(e)),
                attempts,
            },
        }
    }

    fn log(&self, attempt: u32, format: ResponseFormat, status: Option<StatusCode>, sent: Instant) {
        tracing::debug!(
            url = %self.redact(&self.url),
            model = %self.settings.model,
            attempt,
            format = format.as_str(),
            status = status.map(|s| s.as_u16()),
            latency_ms = sent.elapsed().as_millis() as u64,
            "chat completion request"
        );
    }

    fn redact(&self, text: &str) -> String {
        redact(&self.settings.api_key, text)
    }
}

/// One HTTP exchange that produced a status.
struct Reply {
    status: StatusCode,
    retry_after: Option<Duration>,
    body: Vec<u8>,
}

/// A failed HTTP attempt and whether another may succeed.
struct Failure {
    error: CallError,
    retry: bool,
    retry_after: Option<Duration>,
}

/// The forms `Auto` goes through, in order.
const FORMS: [ResponseFormat; 3] = [
    ResponseFormat::JsonSchema,
    ResponseFormat::JsonObject,
    ResponseFormat::Prompt,
];

fn form_index(format: ResponseFormat) -> u8 {
    FORMS.iter().position(|f| *f == format).unwrap_or(0) as u8
}

fn next_format(format: ResponseFormat) -> ResponseFormat {
    FORMS[(usize::from(form_index(format)) + 1).min(FORMS.len() - 1)]
}

fn redact(key: &Option<Secret>, text: &str) -> String {
    let text = crate::secret::redact_authorizations(&crate::secret::redact_urls(text));
    match key {
        Some(key) => key.redact(&text),
        None => text,
    }
}

/// The JSON body of a request in the given structured-output form.
fn request_body(settings: &LlmSettings, req: &ChatRequest, format: ResponseFormat) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(settings.model));
    body.insert(
        "messages".into(),
        Value::Array(req.messages.iter().map(wire_message).collect()),
    );
    if let Some(t) = settings.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = settings.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    if let Some(seed) = settings.seed {
        body.insert("seed".into(), json!(seed));
    }
    if !req.tools.is_empty() {
        let tools = req.tools.iter().map(|t| {
            json!({
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            })
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if let Some(format) = req
        .schema
        .as_ref()
        .and_then(|s| response_format(s, format, settings.strict))
    {
        body.insert("response_format".into(), format);
    }
    Value::Object(body)
}

/// `response_format` in the given form. In OpenAI's strict mode (when both the schema and
/// the endpoint allow it) the schema is cut to the subset strict mode accepts (no length
/// limits); otherwise it is sent whole, for servers whose grammars enforce the limits.
fn response_format(
    schema: &AnswerSchema,
    format: ResponseFormat,
    endpoint_strict: bool,
) -> Option<Value> {
    let strict = schema.strict && endpoint_strict;
    match format {
        ResponseFormat::JsonSchema | ResponseFormat::Auto => Some(json!({
            "type": "json_schema",
            "json_schema": {
                "name": schema_name(&schema.name),
                "schema": if strict { strict_subset(&schema.schema) } else { schema.schema.clone() },
                "strict": strict,
            },
        })),
        ResponseFormat::JsonObject => Some(json!({"type": "json_object", "schema": schema.schema})),
        ResponseFormat::Prompt => None,
    }
}

/// Keywords outside the subset of JSON Schema that OpenAI's strict mode accepts.
const NOT_STRICT: [&str; 4] = ["maxLength", "minLength", "uniqueItems", "patternProperties"];

/// `schema` without the keywords strict mode rejects (recursively).
pub fn strict_subset(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !NOT_STRICT.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strict_subset(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strict_subset).collect()),
        other => other.clone(),
    }
}

/// OpenAI accepts schema names of `[a-zA-Z0-9_-]{1,64}`.
fn schema_name(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "answer".into()
    } else {
        name
    }
}

fn wire_message(m: &ChatMessage) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), json!(m.role));
    out.insert("content".into(), json!(m.content));
    if !m.tool_calls.is_empty() {
        let calls = m.tool_calls.iter().map(|c| {
            json!({
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            })
        });
        out.insert("tool_calls".into(), Value::Array(calls.collect()));
    }
    if let Some(id) = &m.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(out)
}

/// A 2xx body as a response (latency, attempts and format are filled in by the caller).
/// The error is a message for [`CallError::Protocol`].
fn parse_response(body: &[u8]) -> Result<ChatResponse, String> {
    let root: Value = serde_json::from_slice(body).map_err(|e| {
        format!(
            "not JSON ({e}): {}",
            excerpt(&String::from_utf8_lossy(body), 100)
        )
    })?;
    let Some(choice) = root
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        return Err(match root.get("error") {
            Some(e) => format!("no choices; error: {}", excerpt(&error_message(e), 200)),
            None => "no choices".into(),
        });
    };
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or("the first choice has no message")?;
    let content = match message.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let text: Vec<&str> = parts
                .iter()
                .filter(|p| {
                    p.get("type")
                        .and_then(Value::as_str)
                        .is_none_or(|t| t == "text")
                })
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!text.is_empty()).then(|| text.concat())
        }
        None | Some(Value::Null) => None,
        Some(other) => return Err(format!("unexpected message content: {other}")),
    };
    let tool_calls = match message.get("tool_calls") {
        Some(Value::Array(calls)) => calls.iter().enumerate().map(tool_call).collect(),
        _ => Vec::new(),
    };
    let usage = root.get("usage");
    let tokens = |field: &str| usage.and_then(|u| u.get(field)).and_then(Value::as_u64);
    Ok(ChatResponse {
        content,
        tool_calls,
        usage: Usage {
            prompt_tokens: tokens("prompt_tokens"),
            completion_tokens: tokens("completion_tokens"),
        },
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(String::from),
        latency: Duration::ZERO,
        http_attempts: 0,
        format: ResponseFormat::Prompt,
    })
}

/// One entry of `message.tool_calls`; arguments given as an object (some servers) are
/// turned back into JSON text; a missing id gets `call_<index>`.
fn tool_call((index, call): (usize, &Value)) -> ToolCall {
    let function = call.get("function");
    let field = |name: &str| function.and_then(|f| f.get(name));
    ToolCall {
        id: call
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("call_{index}"), String::from),
        name: field("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        arguments: match field("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        },
    }
}

/// Statuses worth another attempt.
fn retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 500 | 502 | 503 | 504)
}

/// Whether an error answer says the server does not accept the structured-output form.
/// Whether a refusal says to send `max_completion_tokens` instead of `max_tokens`.
fn wants_completion_tokens(status: StatusCode, body: &str) -> bool {
    status == StatusCode::BAD_REQUEST && body.contains("max_completion_tokens")
}

/// `max_tokens` → `max_completion_tokens` in a request body.
fn rename_max_tokens(body: &mut Value) {
    if let Some(obj) = body.as_object_mut()
        && let Some(n) = obj.remove("max_tokens")
    {
        obj.insert("max_completion_tokens".into(), n);
    }
}

fn refuses_format(status: StatusCode, body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    matches!(status.as_u16(), 400 | 404 | 415 | 422 | 500 | 501)
        && ["response_format", "json_schema", "json_object", "schema"]
            .iter()
            .any(|word| body.contains(word))
}

/// `Retry-After` in seconds (an HTTP date is ignored: the backoff applies).
fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(3600.0)))
}

/// `wait` plus up to a quarter more, at random (so clients that failed together do not
/// come back together).
fn with_jitter(wait: Duration) -> Duration {
    let random = RandomState::new().hash_one(Instant::now());
    wait + wait.mul_f64((random % 1000) as f64 / 4000.0)
}

/// The message of an error body: OpenAI's `error.message`, else the body as it is.
fn error_text(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(v) => match v.get("error").or_else(|| v.get("detail")) {
            Some(e) => error_message(e),
            None => body.trim().to_string(),
        },
        Err(_) => body.trim().to_string(),
    }
}

fn error_message(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        other => match other.get("message").and_then(Value::as_str) {
            Some(m) => m.to_string(),
            None => other.to_string(),
        },
    }
}

/// At most `max` characters of `text` (whitespace runs folded), `…` marking a cut.
fn excerpt(text: &str, max: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max {
        return folded;
    }
    let mut cut: String = folded.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// An error with its causes (`a: b: c`, [`crate::diag::chain`]), without the URL reqwest
/// puts in its message.
fn error_chain(e: reqwest::Error) -> String {
    crate::diag::chain(&e.without_url())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reason::llm::{Role, ToolDef};

    fn request(schema: bool) -> ChatRequest {
        ChatRequest {
            messages: vec![ChatMessage::system("be brief"), ChatMessage::user("choose")],
            idempotency_key: None,
            schema: schema.then(|| AnswerSchema {
                name: "gateway_choice".into(),
                schema: json!({"type": "object", "properties": {"flow": {"enum": ["a", "b"]}}}),
                strict: true,
            }),
            tools: Vec::new(),
        }
    }

    fn settings() -> LlmSettings {
        LlmSettings::new("http://127.0.0.1:1/v1/", "m")
    }

    #[test]
    fn json_schema_body() {
        let mut s = settings();
        s.temperature = Some(0.0);
        s.seed = Some(7);
        s.strict = true;
        let body = request_body(&s, &request(true), ResponseFormat::JsonSchema);
        assert_eq!(body["model"], "m");
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["seed"], 7);
        assert!(body.get("max_tokens").is_none());
        assert!(body.get("tools").is_none());
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "be brief"})
        );
        let rf = &body["response_format"];
        assert_eq!(rf["type"], "json_schema");
        assert_eq!(rf["json_schema"]["name"], "gateway_choice");
        assert_eq!(rf["json_schema"]["strict"], true);
        assert_eq!(
            rf["json_schema"]["schema"]["properties"]["flow"]["enum"][1],
            "b"
        );
    }

    #[test]
    fn length_limits_go_only_to_endpoints_that_are_not_strict() {
        let mut req = request(true);
        if let Some(schema) = req.schema.as_mut() {
            schema.schema["properties"]["flow"]["maxLength"] = json!(9);
        }
        let mut s = settings();
        s.strict = true;
        let rf = &request_body(&s, &req, ResponseFormat::JsonSchema)["response_format"];
        assert_eq!(rf["json_schema"]["strict"], true);
        assert!(
            rf["json_schema"]["schema"]["properties"]["flow"]
                .get("maxLength")
                .is_none()
        );
        s.strict = false;
        let rf = &request_body(&s, &req, ResponseFormat::JsonSchema)["response_format"];
        assert_eq!(rf["json_schema"]["strict"], false);
        assert_eq!(
            rf["json_schema"]["schema"]["properties"]["flow"]["maxLength"],
            9
        );
    }

    #[test]
    fn json_object_and_prompt_bodies() {
        let body = request_body(&settings(), &request(true), ResponseFormat::JsonObject);
        assert_eq!(body["response_format"]["type"], "json_object");
        assert_eq!(body["response_format"]["schema"]["type"], "object");
        let body = request_body(&settings(), &request(true), ResponseFormat::Prompt);
        assert!(body.get("response_format").is_none());
        let body = request_body(&settings(), &request(false), ResponseFormat::JsonSchema);
        assert!(body.get("response_format").is_none());
    }

    #[test]
    fn tools_and_tool_messages_in_wire_shape() {
        let mut req = request(false);
        req.tools.push(ToolDef {
            name: "lookup".into(),
            description: "find".into(),
            parameters: json!({"type": "object"}),
        });
        req.messages.push(ChatMessage {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "lookup".into(),
                arguments: "{\"q\":1}".into(),
            }],
            tool_call_id: None,
        });
        req.messages.push(ChatMessage::tool_result("c1", "found"));
        let body = request_body(&settings(), &req, ResponseFormat::Auto);
        assert_eq!(
            body["tools"][0],
            json!({"type": "function", "function": {"name": "lookup", "description": "find", "parameters": {"type": "object"}}})
        );
        assert_eq!(
            body["messages"][2],
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}}
            ]})
        );
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "content": "found", "tool_call_id": "c1"})
        );
    }

    #[test]
    fn schema_names_are_sanitized() {
        assert_eq!(schema_name("hook decision/v1"), "hook_decision_v1");
        assert_eq!(schema_name(""), "answer");
        assert_eq!(schema_name(&"x".repeat(80)).len(), 64);
    }

    #[test]
    fn parses_a_completion() {
        let body = json!({
            "choices": [{"message": {"role": "assistant", "content": "{\"flow\":\"a\"}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        });
        let r = parse_response(body.to_string().as_bytes()).unwrap();
        assert_eq!(r.content.as_deref(), Some("{\"flow\":\"a\"}"));
        assert_eq!(r.finish_reason.as_deref(), Some("stop"));
        assert_eq!(r.usage.prompt_tokens, Some(12));
        assert_eq!(r.usage.completion_tokens, Some(3));
        assert!(r.tool_calls.is_empty());
    }

    #[test]
    fn parses_content_parts_tool_calls_and_missing_usage() {
        let body = json!({"choices": [{"message": {
            "content": [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}],
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"function": {"name": "g", "arguments": {"k": 1}}},
            ],
        }}]});
        let r = parse_response(body.to_string().as_bytes()).unwrap();
        assert_eq!(r.content.as_deref(), Some("ab"));
        assert_eq!(r.usage, Usage::default());
        assert_eq!(r.finish_reason, None);
        assert_eq!(r.tool_calls[0].id, "x");
        assert_eq!(r.tool_calls[1].id, "call_1");
        assert_eq!(r.tool_calls[1].name, "g");
        assert_eq!(r.tool_calls[1].arguments, "{\"k\":1}");

        let body = json!({"choices": [{"message": {"content": null}}]});
        assert_eq!(
            parse_response(body.to_string().as_bytes()).unwrap().content,
            None
        );
    }

    #[test]
    fn rejects_what_is_not_a_completion() {
        assert!(
            parse_response(b"<html>oops</html>")
                .unwrap_err()
                .starts_with("not JSON")
        );
        assert_eq!(
            parse_response(b"{\"choices\": []}").unwrap_err(),
            "no choices"
        );
        let err = parse_response(br#"{"error": {"message": "model overloaded"}}"#).unwrap_err();
        assert!(err.contains("model overloaded"), "{err}");
        assert!(parse_response(br#"{"choices": [{}]}"#).is_err());
    }

    #[test]
    fn classifies_statuses() {
        for code in [429, 500, 502, 503, 504] {
            assert!(
                retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
        for code in [400, 401, 403, 404, 422, 501] {
            assert!(
                !retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
        let llama = r#"{"error":{"message":"[{'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}]"}}"#;
        assert!(refuses_format(StatusCode::INTERNAL_SERVER_ERROR, llama));
        assert!(refuses_format(
            StatusCode::BAD_REQUEST,
            "Unknown field JSON_SCHEMA"
        ));
        assert!(!refuses_format(
            StatusCode::BAD_REQUEST,
            "context length exceeded"
        ));
        assert!(!refuses_format(
            StatusCode::TOO_MANY_REQUESTS,
            "response_format"
        ));
        assert!(!refuses_format(StatusCode::UNAUTHORIZED, "schema"));
    }

    #[test]
    fn forms_fall_back_in_order() {
        assert_eq!(
            next_format(ResponseFormat::JsonSchema),
            ResponseFormat::JsonObject
        );
        assert_eq!(
            next_format(ResponseFormat::JsonObject),
            ResponseFormat::Prompt
        );
        assert_eq!(next_format(ResponseFormat::Prompt), ResponseFormat::Prompt);
    }

    #[test]
    fn retry_after_and_jitter() {
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
        let base = Duration::from_millis(400);
        for _ in 0..20 {
            let w = with_jitter(base);
            assert!(w >= base && w <= base + base / 4, "{w:?}");
        }
        assert_eq!(with_jitter(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn error_excerpts_prefer_the_message_and_are_short() {
        assert_eq!(
            error_text(r#"{"error": {"message": "bad key", "type": "x"}}"#),
            "bad key"
        );
        assert_eq!(error_text(r#"{"detail": "Not Found"}"#), "Not Found");
        assert_eq!(error_text("  plain\n"), "plain");
        let long = excerpt(&"ab ".repeat(500), EXCERPT_CHARS);
        assert_eq!(long.chars().count(), EXCERPT_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(excerpt("a\n\n  b", 10), "a b");
    }

    #[test]
    fn redaction_hides_an_echoed_authorization() {
        let echoed = r#"{"error": "bad request", "headers": {"Authorization": "Basic dXNlcjpwYXNz", "x": "Bearer sk-other-9"}}"#;
        let shown = redact(&None, echoed);
        assert!(
            !shown.contains("dXNlcjpwYXNz") && !shown.contains("sk-other-9"),
            "{shown}"
        );
        assert!(
            shown.contains("\"Basic ***\"") && shown.contains("Bearer ***"),
            "{shown}"
        );
        // Words that merely start so are left alone.
        assert_eq!(redact(&None, "basically fine"), "basically fine");
    }

    #[test]
    fn redaction_hides_the_key() {
        let key = Some(Secret::new("sk-secret-123"));
        assert_eq!(redact(&key, "bad key sk-secret-123!"), "bad key ***!");
        assert_eq!(redact(&None, "text"), "text");
        let mut s = settings();
        s.api_key = key;
        let client = ChatClient::new(s).unwrap();
        assert!(!format!("{client:?}").contains("sk-secret"));
    }

    #[test]
    fn the_call_can_be_spawned() {
        fn send<T: Send>(_: T) {}
        let client = ChatClient::new(settings()).unwrap();
        let req = request(true);
        send(client.complete(&req));
    }

    #[test]
    fn auto_starts_with_json_schema_and_fixed_forms_stay() {
        let client = ChatClient::new(settings()).unwrap();
        assert_eq!(client.start_format(), ResponseFormat::JsonSchema);
        client
            .auto_form
            .fetch_max(form_index(ResponseFormat::JsonObject), Ordering::Relaxed);
        assert_eq!(client.start_format(), ResponseFormat::JsonObject);
        let mut s = settings();
        s.response_format = ResponseFormat::Prompt;
        assert_eq!(
            ChatClient::new(s).unwrap().start_format(),
            ResponseFormat::Prompt
        );
    }
}
