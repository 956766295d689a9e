//! The bridge over MCP's streamable HTTP transport. [`HttpBridge`] serves a
//! [`BridgeServer`] at `http://HOST:PORT/mcp`, behind a bearer-token check when it has a
//! token (`cuga-flo serve --http`, and the endpoint an external engine calls back during
//! a run). [`connect`] is the client side (an external engine's `run_process`).
//!
//! The token is compared in constant time and never logged; a request without it gets
//! 401 with `WWW-Authenticate: Bearer`. A POST (an MCP message) counts as in flight until
//! its response has been sent, so a shutdown can let the requests in flight finish.
//!
//! What an untrusted client can hold is bounded ([`Limits`]): a connection that does not
//! send a request head within the read timeout (a half-open connection, or a kept-alive
//! one left idle) is closed, as is one whose body stalls; bodies are capped; sessions
//! are capped and expire when idle. A POST that is not JSON gets a JSON-RPC parse error
//! (-32700), one that is not a JSON-RPC message an invalid-request error (-32600), both
//! with HTTP 400, as the streamable HTTP transport says for a message it cannot accept.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::BridgeServer;
use crate::secret::Secret;

/// What one client may hold of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A request head (and body) must arrive within this; it is also how long a
    /// kept-alive connection may idle between requests.
    pub read_timeout: Duration,
    /// MCP sessions open at once; a new one beyond gets HTTP 503.
    pub max_sessions: usize,
    /// A session nobody uses for this long is closed.
    pub session_idle: Duration,
    /// The largest request body accepted (HTTP 413 beyond).
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            read_timeout: Duration::from_secs(10),
            max_sessions: 64,
            session_idle: Duration::from_secs(300),
            max_body: 4 * 1024 * 1024,
        }
    }
}

/// A bridge server listening on HTTP.
pub struct HttpBridge {
    local: SocketAddr,
    gate: Arc<Gate>,
    /// Stops accepting connections (and requests on idle ones).
    stop: CancellationToken,
    /// Ends the MCP sessions (and their event streams); cancelled last.
    sessions: CancellationToken,
    task: JoinHandle<std::io::Result<()>>,
}

impl HttpBridge {
    /// Listen on `addr` (port 0: any free port). With a token, every request must carry
    /// `Authorization: Bearer <token>`.
    pub async fn bind(
        server: BridgeServer,
        addr: SocketAddr,
        token: Option<Secret>,
    ) -> std::io::Result<HttpBridge> {
        Self::bind_with(server, addr, token, Limits::default()).await
    }

    /// [`HttpBridge::bind`] with explicit [`Limits`].
    pub async fn bind_with(
        server: BridgeServer,
        addr: SocketAddr,
        token: Option<Secret>,
        limits: Limits,
    ) -> std::io::Result<HttpBridge> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let sessions = CancellationToken::new();
        let mut config =
            StreamableHttpServerConfig::default().with_cancellation_token(sessions.clone());
        if local.ip().is_loopback() {
            // Host checks against DNS rebinding: the loopback names, and the address bound.
            let ip = local.ip().to_string();
            if !config.allowed_hosts.contains(&ip) {
                config.allowed_hosts.push(ip);
            }
        } else {
            // Reachable under names this server cannot know; the token guards it.
            config = config.disable_allowed_hosts();
        }
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(limits.session_idle);
        let manager = Arc::new(manager);
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), manager.clone(), config);
        let gate = Arc::new(Gate {
            token,
            in_flight: InFlight::default(),
            sessions: manager,
            limits,
        });
        let router = axum::Router::new()
            .route_service("/mcp", service)
            .layer(middleware::from_fn_with_state(gate.clone(), guard));
        let stop = CancellationToken::new();
        let task = tokio::spawn(crate::serving::accept(
            listener,
            router,
            stop.clone(),
            limits.read_timeout,
        ));
        Ok(HttpBridge {
            local,
            gate,
            stop,
            sessions,
            task,
        })
    }

    /// `http://HOST:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.local)
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    pub fn requires_token(&self) -> bool {
        self.gate.token.is_some()
    }

    /// Requests whose response has not been sent yet.
    pub fn in_flight(&self) -> usize {
        self.gate.in_flight.count()
    }

    /// Resolves if the server stops on its own, with why.
    pub async fn stopped(&mut self) -> String {
        match (&mut self.task).await {
            Ok(Ok(())) => "stopped".to_string(),
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        }
    }

    /// Stop accepting, give the requests in flight (and whatever `busy` reports) up to
    /// `grace` to finish, then end the sessions. False when something was still busy.
    pub async fn shutdown(mut self, grace: Duration, busy: impl Fn() -> bool) -> bool {
        self.stop.cancel();
        let idle = async {
            while self.gate.in_flight.count() > 0 || busy() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let clean = tokio::time::timeout(grace, idle).await.is_ok();
        self.sessions.cancel();
        if tokio::time::timeout(Duration::from_secs(1), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
        clean
    }
}

pub use crate::tools::mcp::plain_error;
#[cfg(test)]
use crate::tools::mcp::without_type_names;

// ---- The bearer token, the limits and the requests in flight ----

struct Gate {
    token: Option<Secret>,
    in_flight: InFlight,
    sessions: Arc<LocalSessionManager>,
    limits: Limits,
}

/// The JSON-RPC error codes a transport answers with.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
/// Server errors (-32000 to -32099): too many sessions, a body too large or too slow.
const SERVER_BUSY: i64 = -32000;

/// Every request passes here: without the token (when one is set) it gets 401; a POST
/// counts as in flight until its response body has been sent.
async fn guard(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if let Some(message) = crate::serving::token_refusal(gate.token.as_ref(), request.headers()) {
        tracing::warn!(
            "refused {} {}: {message}",
            request.method(),
            request.uri().path()
        );
        return crate::serving::unauthorized(message);
    }
    let request = if request.method() == Method::POST {
        if !request.headers().contains_key("mcp-session-id") {
            let open = gate.sessions.sessions.read().await.len();
            if open >= gate.limits.max_sessions {
                tracing::warn!("refused a new MCP session: {open} are open (--max-sessions)");
                return rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    SERVER_BUSY,
                    &format!(
                        "too many MCP sessions ({open} open, at most {}): close one (DELETE /mcp) or wait for an idle one to expire",
                        gate.limits.max_sessions
                    ),
                );
            }
        }
        match checked_message(request, &gate.limits).await {
            Ok(request) => request,
            Err(response) => return response,
        }
    } else {
        request
    };
    let entered = (request.method() == Method::POST).then(|| gate.in_flight.enter());
    let deleting = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    // A session closed: 200, as clients expect (rmcp answers 202, which the official
    // Python SDK reports as "Session termination failed: 202" on every close).
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    match entered {
        Some(entered) => response.map(|body| {
            Body::new(Counted {
                body,
                _entered: entered,
            })
        }),
        None => response,
    }
}

/// A POST's body, read within the limits and checked to be a JSON-RPC message (or a
/// batch of them) before the MCP service sees it; the request rebuilt with it, or the
/// JSON-RPC error response to send instead.
async fn checked_message(request: Request, limits: &Limits) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let declared = (parts.headers.get(header::CONTENT_LENGTH))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_large = || {
        rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            &format!("the request body is larger than {} bytes", limits.max_body),
        )
    };
    if declared.is_some_and(|n| n > limits.max_body as u64) {
        return Err(too_large());
    }
    let bytes = match tokio::time::timeout(
        limits.read_timeout,
        axum::body::to_bytes(body, limits.max_body),
    )
    .await
    {
        Err(_) => {
            return Err(rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                SERVER_BUSY,
                &format!(
                    "the request body did not arrive within {}s",
                    limits.read_timeout.as_secs_f64()
                ),
            ));
        }
        Ok(Err(e)) => {
            let limit = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            return Err(if limit {
                too_large()
            } else {
                rpc_error(
                    StatusCode::BAD_REQUEST,
                    PARSE_ERROR,
                    "the request body could not be read",
                )
            });
        }
        Ok(Ok(bytes)) => bytes,
    };
    let message: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(value) => value,
        Err(e) => {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                &format!(
                    "parse error: the body is not JSON (line {}, column {})",
                    e.line(),
                    e.column()
                ),
            ));
        }
    };
    if let Err(why) = jsonrpc_message(&message) {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            &format!("invalid request: {why}"),
        ));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Whether `value` is a JSON-RPC 2.0 request, notification or response, or a non-empty
/// batch of them; why not otherwise.
fn jsonrpc_message(value: &serde_json::Value) -> Result<(), &'static str> {
    use serde_json::Value;
    match value {
        Value::Array(items) if items.is_empty() => Err("an empty batch"),
        Value::Array(items) => items.iter().try_for_each(one_message),
        other => one_message(other),
    }
}

fn one_message(value: &serde_json::Value) -> Result<(), &'static str> {
    use serde_json::Value;
    let Value::Object(map) = value else {
        return Err("a JSON-RPC message is an object");
    };
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("`jsonrpc` must be \"2.0\"");
    }
    if let Some(id) = map.get("id")
        && !matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
    {
        return Err("`id` must be a string or a number");
    }
    match map.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Err("`method` must be a string"),
        None if map.contains_key("result") || map.contains_key("error") => {
            if !map.contains_key("id") {
                return Err("a response has an `id`");
            }
        }
        None => return Err("neither a request (`method`) nor a response"),
    }
    if let Some(params) = map.get("params")
        && !matches!(params, Value::Object(_) | Value::Array(_))
    {
        return Err("`params` must be an object or an array");
    }
    Ok(())
}

/// A JSON-RPC error response without an id (the request's could not be known), as the
/// HTTP response with `status`.
fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    })
    .to_string();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// How many requests are in flight.
#[derive(Clone, Default)]
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(&self) -> Entered {
        self.0.fetch_add(1, Ordering::SeqCst);
        Entered(self.0.clone())
    }

    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// One request in flight, until dropped.
struct Entered(Arc<AtomicUsize>);

impl Drop for Entered {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that keeps its request counted as in flight until it has been sent
/// (an MCP response may stream as server-sent events).
struct Counted {
    body: Body,
    _entered: Entered,
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_never_show_rust_type_names() {
        let text = "Send [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>]";
        assert_eq!(without_type_names(text), "Send");
        assert_eq!(
            without_type_names("Connection refused (os error 111)"),
            "Connection refused (os error 111)"
        );
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        #[derive(Debug)]
        struct Wrapper(std::io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("Send [rmcp::transport::worker::WorkerTransport<X>]")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        assert_eq!(plain_error(&Wrapper(io)), "Connection refused");
    }

    #[test]
    fn secrets_compare_whole() {
        let same = |a: &str, b: &str| Secret::new(b).matches(a);
        assert!(same("s3cret", "s3cret"));
        assert!(!same("s3cre", "s3cret"));
        assert!(!same("s3crets3cret", "s3cret"));
        assert!(!same("S3cret", "s3cret"));
        assert!(!same("", "s3cret"));
        assert!(!same("", ""));
    }

    #[test]
    fn jsonrpc_messages() {
        use serde_json::json;
        for ok in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": "a", "result": {}}),
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}]),
        ] {
            assert_eq!(jsonrpc_message(&ok), Ok(()), "{ok}");
        }
        for bad in [
            json!([]),
            json!(42),
            json!({"id": 1, "method": "ping"}),
            json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": {}, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": 7}),
            json!({"jsonrpc": "2.0", "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "m", "params": 3}),
        ] {
            assert!(jsonrpc_message(&bad).is_err(), "{bad}");
        }
    }
}
