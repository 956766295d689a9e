//! An in-process OpenAI-compatible chat-completions server for tests.
//!
//! It runs on 127.0.0.1 (a free port) on its own thread with its own tokio runtime, so
//! plain `#[test]`s, `#[tokio::test]`s and a `cuga-flo` child process (assert_cmd) can all
//! call it; it stops when dropped.
//!
//! ```ignore
//! #[path = "support/chat_server.rs"]
//! mod chat_server;
//! use chat_server::{ChatServer, Reply};
//!
//! let server = ChatServer::start(|r| match r.index {
//!     0 => Reply::status(503, "busy").header("retry-after", "0"),
//!     _ => Reply::from_schema_first_choice(r),
//! });
//! let settings = LlmSettings::new(server.url(), "test-model"); // http://127.0.0.1:PORT/v1
//! // ... run something ...
//! assert_eq!(server.count(), 2);
//! assert_eq!(server.requests()[1].response_format_type(), Some("json_schema"));
//! ```
//!
//! API:
//! - `ChatServer::start(handler: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> ChatServer`;
//!   the handler answers every `POST …/chat/completions`. `GET …/models` lists one model
//!   (`test-model`); anything else is a 404. Every request is recorded, in order.
//! - `server.url() -> String` (`http://127.0.0.1:PORT/v1`), `server.requests() -> Vec<Received>`,
//!   `server.count() -> usize`.
//! - `Received { index, method, path, headers, body, text }` with `header(name)`,
//!   `authorization()`, `schema()`, `response_format_type()`.
//! - `Reply::json(value)`, `Reply::completion(text)`, `Reply::tool_call(name, args_json)`,
//!   `Reply::tool_calls(&[(id, name, args_json)])` (several in one turn),
//!   `Reply::status(code, body)`, `Reply::raw(text)`, `Reply::from_schema_first_choice(&r)`,
//!   then `.header(name, value)` and `.after(duration)` (answer late).
//! - `closed_port_url() -> String`: a base URL where nothing listens (connection refused).
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The model `GET /v1/models` lists and completions name.
pub const MODEL: &str = "test-model";

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Position among all the requests the server received (from 0).
    pub index: usize,
    pub method: String,
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Header names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
    /// The body as text.
    pub text: String,
}

impl Received {
    /// The first value of a header (name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn authorization(&self) -> Option<&str> {
        self.header("authorization")
    }

    /// `response_format.type` (`json_schema`, `json_object`), None when absent.
    pub fn response_format_type(&self) -> Option<&str> {
        self.body["response_format"]["type"].as_str()
    }

    /// The answer's schema, from `response_format.json_schema.schema` or
    /// `response_format.schema`.
    pub fn schema(&self) -> Option<&Value> {
        let format = self.body.get("response_format")?;
        format
            .get("json_schema")
            .and_then(|s| s.get("schema"))
            .or_else(|| format.get("schema"))
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
}

impl Reply {
    /// HTTP 200 with a JSON body.
    pub fn json(value: Value) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: value.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// A chat completion whose message content is `text` (usage: 10 prompt, 5 completion
    /// tokens; finish reason `stop`).
    pub fn completion(text: &str) -> Reply {
        Reply::json(completion_body(
            json!({"role": "assistant", "content": text}),
            "stop",
        ))
    }

    /// A chat completion calling one tool (`id` `call_1`, finish reason `tool_calls`).
    pub fn tool_call(name: &str, args_json: &str) -> Reply {
        let message = json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": "call_1",
                "type": "function",
                "function": {"name": name, "arguments": args_json},
            }],
        });
        Reply::json(completion_body(message, "tool_calls"))
    }

    /// A chat completion calling several tools in one turn: (id, name, arguments JSON).
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
            })
            .collect();
        let message = json!({"role": "assistant", "content": null, "tool_calls": calls});
        Reply::json(completion_body(message, "tool_calls"))
    }

    /// Any status with `body` as it is (sent as JSON when it parses as JSON).
    pub fn status(code: u16, body: &str) -> Reply {
        let kind = if serde_json::from_str::<Value>(body).is_ok() {
            "application/json"
        } else {
            "text/plain"
        };
        Reply {
            status: code,
            headers: vec![("content-type".into(), kind.into())],
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// HTTP 200 with `text` as it is (e.g. garbage).
    pub fn raw(text: &str) -> Reply {
        Reply {
            headers: vec![("content-type".into(), "text/plain".into())],
            ..Reply::status(200, text)
        }
    }

    /// A completion whose content is a JSON object valid for the request's schema: per
    /// property the first enum value (or `const`), `"placeholder"`, 0, false, [] or {}.
    /// Without a schema in the request (the prompt form) the content is `{}`.
    pub fn from_schema_first_choice(received: &Received) -> Reply {
        let answer = received.schema().map_or_else(|| json!({}), sample);
        Reply::completion(&answer.to_string())
    }

    /// Adds a header (e.g. `retry-after`).
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Answers only after `delay`.
    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

fn completion_body(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}

/// The simplest value `schema` accepts (see [`Reply::from_schema_first_choice`]).
fn sample(schema: &Value) -> Value {
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = schema.get(key).and_then(|e| e.get(0)) {
            return sample(first);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "",
    };
    match kind {
        "object" => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let fields = properties.into_iter().flatten();
            Value::Object(fields.map(|(k, v)| (k.clone(), sample(v))).collect())
        }
        "array" => json!([]),
        "string" => json!("placeholder"),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => json!({}),
    }
}

type Handler = dyn Fn(&Received) -> Reply + Send + Sync;

struct Shared {
    handler: Box<Handler>,
    requests: Mutex<Vec<Received>>,
}

/// The running server; stops on drop.
pub struct ChatServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ChatServer {
    pub fn start(handler: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> ChatServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            handler: Box::new(handler),
            requests: Mutex::new(Vec::new()),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("test server runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                tokio::select! {
                    served = axum::serve(listener, app) => served.expect("test server"),
                    _ = stopped => {}
                }
            });
            // Dropping the runtime here drops every connection and pending reply.
        });
        ChatServer {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The API root, `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Received> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.shared.requests.lock().unwrap().len()
    }
}

impl Drop for ChatServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A base URL where nothing listens: connecting is refused.
pub fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{addr}/v1")
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let text = String::from_utf8_lossy(&body).into_owned();
    let path = uri.path().to_string();
    let received = {
        let mut requests = shared.requests.lock().unwrap();
        let received = Received {
            index: requests.len(),
            method: method.to_string(),
            path: path.clone(),
            headers: headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
        };
        requests.push(received.clone());
        received
    };
    let reply = if method == Method::POST && path.ends_with("/chat/completions") {
        (shared.handler)(&received)
    } else if method == Method::GET && path.ends_with("/models") {
        Reply::json(json!({
            "object": "list",
            "data": [{"id": MODEL, "object": "model", "created": 1_700_000_000, "owned_by": "cuga-flo-tests"}],
        }))
    } else {
        Reply::status(
            404,
            r#"{"error": {"message": "not found", "type": "invalid_request_error"}}"#,
        )
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = (
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        reply.body,
    )
        .into_response();
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            header::HeaderName::try_from(name),
            header::HeaderValue::try_from(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
