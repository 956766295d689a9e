//! Following a task over a stream of server-sent events instead of polling `GetTask`.
//!
//! When the agent's card says `capabilities.streaming: true` (and the agent's config does
//! not turn it off, [`super::AgentConfig::streaming`]), a message is sent with
//! `SendStreamingMessage` (0.3: `message/stream`): the reply is an SSE stream whose events
//! each hold one JSON-RPC response, its `result` a task, a message, a status update or an
//! artifact update (1.0: `{"task"|"message"|"statusUpdate"|"artifactUpdate": {...}}`; 0.3:
//! the object itself, told by its `kind`). The events are applied to the task as known so
//! far, and the exchange follows it exactly as it follows the tasks `GetTask` returns (same
//! steps, outcomes, timeouts and cancellation).
//!
//! - The stream ends when the task ends or needs input (`input-required`,
//!   `auth-required`), or on a direct message reply. An answer goes back with
//!   `SendStreamingMessage` in the same task, which opens the next stream.
//! - A stream that ends (or breaks) before that is re-attached with `SubscribeToTask`
//!   (0.3: `tasks/resubscribe`), whose first event is the task as it stands, at most
//!   [`MAX_ATTACH`] times per exchange; then (or when the agent refuses) the task is
//!   polled with `GetTask`. A run resumed on a task it parked on reads it with `GetTask`
//!   and, still going, follows it with `SubscribeToTask`.
//! - An agent that refuses `SendStreamingMessage` (any JSON-RPC error but "version not
//!   supported") is sent `SendMessage` and polled.
//! - Bounded: a line or an event's data over [`MAX_EVENT_BYTES`] or an event that is not
//!   a JSON-RPC response of one of those objects fails the exchange (`Malformed`); more
//!   than [`MAX_EVENTS`] events in one stream and the task is polled instead. Each read
//!   is bounded by the time the exchange has left, so a silent stream never hangs it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{A2aError, Card, Client, MEDIA_TYPE, Outgoing, Step, TaskState, TaskView, Version};

/// The largest line, and the largest data of one event, a stream may send.
pub const MAX_EVENT_BYTES: usize = 4 << 20;
/// Events one stream may send before the task is polled instead.
pub const MAX_EVENTS: usize = 10_000;
/// Times one exchange re-attaches to a task with `SubscribeToTask`.
pub const MAX_ATTACH: u32 = 3;

/// The stream state of one exchange: the open stream, if any, and what was said about it
/// (turned into steps by the exchange).
#[derive(Default)]
pub(crate) struct Live {
    events: Option<Events>,
    /// `SubscribeToTask` attempts so far.
    attaches: u32,
    /// Streaming was refused or gave up: the exchange polls.
    off: bool,
    /// Steps to record: (kind, task id, detail).
    notes: Vec<(&'static str, Option<String>, String)>,
    /// The task as the last finished stream left it: an answer's stream starts from it
    /// (the artifacts of earlier rounds stay, as `GetTask` would show them).
    last: Option<Value>,
}

impl Live {
    /// Record what happened to the stream since the last call as steps.
    pub(crate) fn drain_into(&mut self, steps: &mut Vec<Step>, started: Instant) {
        for (kind, task_id, detail) in self.notes.drain(..) {
            steps.push(Step {
                at_ms: started.elapsed().as_millis() as u64,
                kind,
                task_id,
                state: None,
                detail: Some(detail),
            });
        }
    }

    fn note(&mut self, task_id: &str, detail: String) {
        tracing::debug!(task_id, %detail, "a2a stream");
        self.notes
            .push(("stream", Some(task_id.to_string()), detail));
    }
}

/// An SSE stream of one task's events.
pub(crate) struct Events {
    resp: reqwest::Response,
    parser: Parser,
    queue: VecDeque<String>,
    count: usize,
    /// The task as the events so far make it (a Task object).
    task: Value,
    /// The stream said all it will (an end or interrupted state, a direct message).
    done: bool,
}

/// What reading the stream gave.
enum Read {
    /// The task after the next event.
    Event(Box<TaskView>),
    /// The stream ended, broke or sent too much before the task ended: why.
    Ended(String),
}

impl Client {
    fn stream_request(
        &self,
        card: &Card,
        version: Version,
        method: &str,
        params: Value,
    ) -> reqwest::RequestBuilder {
        let body =
            json!({"jsonrpc": "2.0", "id": super::new_id(), "method": method, "params": params});
        // The stream may last longer than one request may: each read is bounded instead.
        let req = self
            .http
            .post(&card.endpoint)
            .timeout(Duration::from_secs(7 * 24 * 3600))
            .body(body.to_string())
            .header("Accept", "text/event-stream");
        let req = match version {
            Version::V1 => req
                .header("A2A-Version", "1.0")
                .header("Content-Type", MEDIA_TYPE),
            Version::V03 => req.header("Content-Type", "application/json"),
        };
        self.authed(req)
    }

    /// Send `out` with `SendStreamingMessage` when the card offers streaming: the task
    /// as the first event gives it (the stream kept in `live`). `None`: not streaming
    /// (the caller sends `SendMessage`).
    pub(super) async fn send_streaming(
        &self,
        card: &Card,
        version: Version,
        out: &Outgoing,
        task_id: Option<&str>,
        live: &mut Live,
    ) -> Result<Option<TaskView>, A2aError> {
        live.events = None;
        if !card.streaming || !self.config.streaming || live.off {
            return Ok(None);
        }
        let message = super::message_json(version, out, task_id);
        let method = match version {
            Version::V1 => "SendStreamingMessage",
            Version::V03 => "message/stream",
        };
        let params = json!({"message": message, "metadata": out.metadata});
        let req = self.stream_request(card, version, method, params);
        let plain = std::sync::atomic::AtomicBool::new(false);
        // An answer in a task: the task as the last stream left it, working again.
        let seed = match (task_id, live.last.take()) {
            (Some(id), Some(mut last)) if last.get("id").and_then(Value::as_str) == Some(id) => {
                last["status"] = json!({"state": "working"});
                last
            }
            _ => json!({"id": task_id.unwrap_or_default()}),
        };
        match self.open(card, req, method, seed, &plain).await {
            Ok((view, events, last)) => {
                live.events = events;
                live.last = last;
                Ok(Some(view))
            }
            // The agent speaks another version: the caller falls back as for SendMessage.
            Err(e @ A2aError::Rpc { code: -32009, .. }) => Err(e),
            // Refused with a plain JSON-RPC error (not an event of a stream).
            Err(A2aError::Rpc { code, message, .. })
                if plain.load(std::sync::atomic::Ordering::Relaxed) =>
            {
                live.off = true;
                live.note(
                    task_id.unwrap_or_default(),
                    format!("{method} refused (error {code}: {message}); polling"),
                );
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Re-attach to `task` with `SubscribeToTask`: its state as the first event gives it.
    async fn subscribe(
        &self,
        card: &Card,
        version: Version,
        task_id: &str,
    ) -> Result<(TaskView, Option<Events>, Option<Value>), A2aError> {
        let method = match version {
            Version::V1 => "SubscribeToTask",
            Version::V03 => "tasks/resubscribe",
        };
        let req = self.stream_request(card, version, method, json!({"id": task_id}));
        let plain = std::sync::atomic::AtomicBool::new(false);
        self.open(card, req, method, json!({"id": task_id}), &plain)
            .await
    }

    /// Send a streaming request and read its first event (within the agent's timeout).
    /// `seed` is the task as known before (the events apply to it); `plain` is set when
    /// the reply is a plain JSON-RPC reply, not a stream. The task, and the stream while
    /// it goes on, else the task as it left it.
    async fn open(
        &self,
        card: &Card,
        req: reqwest::RequestBuilder,
        method: &str,
        seed: Value,
        plain: &std::sync::atomic::AtomicBool,
    ) -> Result<(TaskView, Option<Events>, Option<Value>), A2aError> {
        let timeout = self.config.timeout;
        let first = async {
            let resp = req
                .send()
                .await
                .map_err(|e| self.err_unreachable(&card.endpoint, &e))?;
            self.check_status(resp.status().as_u16())?;
            let sse = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            let mut events = Events {
                resp,
                parser: Parser::default(),
                queue: VecDeque::new(),
                count: 0,
                task: seed,
                done: false,
            };
            if !sse {
                // A plain JSON-RPC reply: an error (or, leniently, one result).
                plain.store(true, std::sync::atomic::Ordering::Relaxed);
                let body = events.resp.bytes().await.map_err(|e| {
                    self.malformed(&format!("the reply to {method} could not be read: {e}"))
                })?;
                let text = String::from_utf8_lossy(&body).into_owned();
                let (mut task, mut done) = (events.task, events.done);
                let view = self.apply(&mut task, &mut done, &text, method)?;
                return Ok((view, None, Some(task)));
            }
            match self.read(&mut events, method).await? {
                Read::Event(view) if events.done => Ok((*view, None, Some(events.task))),
                Read::Event(view) => Ok((*view, Some(events), None)),
                Read::Ended(why) => {
                    Err(self.malformed(&format!("the {method} stream gave no task: {why}")))
                }
            }
        };
        match tokio::time::timeout(timeout, first).await {
            Ok(r) => r,
            Err(_) => Err(A2aError::Unreachable {
                agent: self.config.name.clone(),
                url: crate::secret::redact_urls(&card.endpoint),
                message: format!("no event on the {method} stream within {timeout:?}"),
            }),
        }
    }

    /// The next event's effect on the task.
    async fn read(&self, events: &mut Events, method: &str) -> Result<Read, A2aError> {
        loop {
            if let Some(data) = events.queue.pop_front() {
                events.count += 1;
                if events.count > MAX_EVENTS {
                    return Ok(Read::Ended(format!("more than {MAX_EVENTS} events")));
                }
                return self
                    .apply(&mut events.task, &mut events.done, &data, method)
                    .map(|v| Read::Event(Box::new(v)));
            }
            if events.done {
                return Ok(Read::Ended("the stream is over".into()));
            }
            let chunk = match events.resp.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => {
                    // A last event without its blank line still counts.
                    if let Some(d) = events.parser.finish() {
                        events.queue.push_back(d);
                        continue;
                    }
                    return Ok(Read::Ended("the stream ended".into()));
                }
                Err(e) => return Ok(Read::Ended(format!("the stream broke: {e}"))),
            };
            let datas = events
                .parser
                .feed(&chunk)
                .map_err(|m| self.malformed(&format!("the {method} stream: {m}")))?;
            events.queue.extend(datas);
        }
    }

    /// Apply one event (its data: a JSON-RPC response) to the task.
    fn apply(
        &self,
        task: &mut Value,
        done: &mut bool,
        data: &str,
        method: &str,
    ) -> Result<TaskView, A2aError> {
        let bad = |m: String| self.malformed(&format!("an event of the {method} stream {m}"));
        let doc: Value = serde_json::from_str(data)
            .map_err(|e| bad(format!("is not JSON ({e}): {}", super::clip(data, 200))))?;
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
        let result = doc
            .get("result")
            .ok_or_else(|| bad("has neither `result` nor `error`".into()))?;
        let (kind, body) = event_of(result).ok_or_else(|| {
            bad(format!(
                "is none of task, message, status or artifact update: {}",
                super::clip(&result.to_string(), 200)
            ))
        })?;
        let object = |v: &Value| {
            v.as_object()
                .cloned()
                .ok_or_else(|| bad(format!("has a {kind} that is not an object")))
        };
        match kind {
            "task" => {
                let mut t = object(body)?;
                // A snapshot: the artifacts streamed so far stay unless it has its own.
                if !t.contains_key("artifacts")
                    && let Some(a) = task.get("artifacts")
                {
                    t.insert("artifacts".into(), a.clone());
                }
                *task = Value::Object(t);
            }
            "message" => {
                // A direct reply: the task is done with it as its status message.
                let m = object(body)?;
                if let Some(id) = m.get("taskId").filter(|v| v.is_string()) {
                    task["id"] = id.clone();
                }
                if let Some(c) = m.get("contextId").filter(|v| v.is_string()) {
                    task["contextId"] = c.clone();
                }
                task["status"] = json!({"state": "completed", "message": Value::Object(m)});
                *done = true;
            }
            "status" => {
                let status = body
                    .get("status")
                    .filter(|s| s.is_object())
                    .ok_or_else(|| bad("has a status update without a status".into()))?;
                task["status"] = status.clone();
                for (from, to) in [("taskId", "id"), ("contextId", "contextId")] {
                    if let Some(v) = body.get(from).filter(|v| v.is_string())
                        && task
                            .get(to)
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                    {
                        task[to] = v.clone();
                    }
                }
                if body.get("final").and_then(Value::as_bool) == Some(true) {
                    *done = true;
                }
            }
            _ => {
                let artifact = body
                    .get("artifact")
                    .and_then(Value::as_object)
                    .ok_or_else(|| bad("has an artifact update without an artifact".into()))?;
                let append = body.get("append").and_then(Value::as_bool) == Some(true);
                add_artifact(task, artifact, append);
            }
        }
        let view = TaskView::parse(task)
            .ok_or_else(|| bad("leaves the task without a status (no task came first)".into()))?;
        if view.state.is_terminal()
            || matches!(
                view.state,
                TaskState::InputRequired | TaskState::AuthRequired
            )
        {
            *done = true;
        }
        Ok(view)
    }

    /// The task after the next streamed event: `Some` when a stream is open (or could be
    /// opened) for it; the same task when nothing came within `left` (the caller checks
    /// its limits again); `None` when the task is to be polled with `GetTask`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn next_streamed(
        &self,
        card: &Card,
        version: Version,
        task: &TaskView,
        live: &mut Live,
        left: Duration,
    ) -> Result<Option<TaskView>, A2aError> {
        let method = match version {
            Version::V1 => "SendStreamingMessage",
            Version::V03 => "message/stream",
        };
        if let Some(events) = live.events.as_mut() {
            let left = if left.is_zero() {
                self.config.poll_max
            } else {
                left
            };
            match tokio::time::timeout(left, self.read(events, method)).await {
                Err(_) => return Ok(Some(task.clone())),
                Ok(Err(e)) => return Err(e),
                Ok(Ok(Read::Event(view))) => {
                    if events.done {
                        live.last = live.events.take().map(|e| e.task);
                    }
                    return Ok(Some(*view));
                }
                Ok(Ok(Read::Ended(why))) => {
                    live.events = None;
                    // Too many events: polled from now on.
                    live.off = why.starts_with("more than");
                    let next = if live.off {
                        "polling GetTask"
                    } else {
                        "re-attaching"
                    };
                    live.note(
                        &task.id,
                        format!("{why} at {}; {next}", task.state.as_str()),
                    );
                }
            }
        }
        let following = matches!(task.state, TaskState::Submitted | TaskState::Working);
        if !card.streaming || !self.config.streaming || live.off || !following || task.id.is_empty()
        {
            return Ok(None);
        }
        if live.attaches >= MAX_ATTACH {
            live.off = true;
            live.note(
                &task.id,
                format!("re-attached {MAX_ATTACH} times; polling GetTask"),
            );
            return Ok(None);
        }
        live.attaches += 1;
        match self.subscribe(card, version, &task.id).await {
            Ok((view, events, last)) => {
                live.events = events;
                live.last = last;
                live.note(
                    &task.id,
                    format!("subscribed to the task [{}]", view.state.as_str()),
                );
                Ok(Some(view))
            }
            Err(e @ (A2aError::Unauthorized { .. } | A2aError::Malformed { .. })) => Err(e),
            Err(e) => {
                live.off = true;
                live.note(
                    &task.id,
                    format!("SubscribeToTask failed ({e}); polling GetTask"),
                );
                Ok(None)
            }
        }
    }
}

/// The kind of a stream result and its object, in either version's shape.
fn event_of(result: &Value) -> Option<(&'static str, &Value)> {
    for (key, kind) in [
        ("task", "task"),
        ("message", "message"),
        ("statusUpdate", "status"),
        ("artifactUpdate", "artifact"),
    ] {
        if let Some(v) = result.get(key) {
            return Some((kind, v));
        }
    }
    let kind = match result.get("kind")?.as_str()? {
        "task" => "task",
        "message" => "message",
        "status-update" => "status",
        "artifact-update" => "artifact",
        _ => return None,
    };
    Some((kind, result))
}

/// Add a streamed artifact to the task: a new one, one replacing its namesake
/// (`artifactId`), or (`append`) more parts of it.
fn add_artifact(task: &mut Value, artifact: &serde_json::Map<String, Value>, append: bool) {
    if !task.get("artifacts").is_some_and(Value::is_array) {
        task["artifacts"] = json!([]);
    }
    let Some(list) = task.get_mut("artifacts").and_then(Value::as_array_mut) else {
        return;
    };
    let id = artifact.get("artifactId").and_then(Value::as_str);
    let same = id.and_then(|id| {
        list.iter_mut()
            .find(|a| a.get("artifactId").and_then(Value::as_str) == Some(id))
    });
    match same {
        Some(existing) if append => {
            let more = artifact
                .get("parts")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(parts) = existing.get_mut("parts").and_then(Value::as_array_mut) {
                parts.extend(more);
            } else {
                existing["parts"] = Value::Array(more);
            }
        }
        Some(existing) => *existing = Value::Object(artifact.clone()),
        None => list.push(Value::Object(artifact.clone())),
    }
}

/// A small, bounded parser of server-sent events: the data of each event (its `data:`
/// lines joined by newlines). Other fields (`event:`, `id:`, `retry:`) and comments are
/// skipped.
#[derive(Default, Debug)]
pub(crate) struct Parser {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    /// The last byte fed was a CR (a CRLF may be split across chunks).
    after_cr: bool,
}

/// Why a server-sent event stream cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SseError {
    #[error("a line is longer than {MAX_EVENT_BYTES} bytes")]
    TooLong,
    #[error("a line is not UTF-8")]
    NotUtf8,
    #[error("an event is larger than {MAX_EVENT_BYTES} bytes")]
    TooLarge,
}

impl Parser {
    /// Feed bytes; the data of each event they complete.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, SseError> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(d) = self.line_done(&line)? {
                        out.push(d);
                    }
                }
                _ => {
                    if self.line.len() >= MAX_EVENT_BYTES {
                        return Err(SseError::TooLong);
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(out)
    }

    /// The stream ended: the data of an event left without its blank line.
    pub(crate) fn finish(&mut self) -> Option<String> {
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            let _ = self.line_done(&line);
        }
        self.has_data.then(|| {
            self.has_data = false;
            std::mem::take(&mut self.data)
        })
    }

    fn line_done(&mut self, line: &[u8]) -> Result<Option<String>, SseError> {
        if line.is_empty() {
            if !self.has_data {
                return Ok(None);
            }
            self.has_data = false;
            return Ok(Some(std::mem::take(&mut self.data)));
        }
        let line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            if self.data.len() + value.len() > MAX_EVENT_BYTES {
                return Err(SseError::TooLarge);
            }
            self.data.push_str(value);
            self.has_data = true;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_crlf_and_comments() {
        let mut p = Parser::default();
        let mut got = Vec::new();
        for chunk in [
            &b": ping\r\n\r\nevent: message\r\nda"[..],
            b"ta: {\"a\":\r",
            b"\ndata: 1}\r\n\r\ndata: x\n\ndata:y",
        ] {
            got.extend(p.feed(chunk).unwrap());
        }
        assert_eq!(got, vec!["{\"a\":\n1}".to_string(), "x".into()]);
        assert_eq!(p.finish().as_deref(), Some("y"));
        assert_eq!(p.finish(), None);
    }

    #[test]
    fn an_oversized_line_or_event_is_an_error_not_a_hang() {
        let mut p = Parser::default();
        let big = vec![b'a'; MAX_EVENT_BYTES + 1];
        assert_eq!(p.feed(&big).unwrap_err(), SseError::TooLong);
        let mut p = Parser::default();
        let half = format!("data: {}\n", "b".repeat(MAX_EVENT_BYTES / 2 + 1));
        p.feed(half.as_bytes()).unwrap();
        assert_eq!(p.feed(half.as_bytes()).unwrap_err(), SseError::TooLarge);
        let mut p = Parser::default();
        assert_eq!(p.feed(b"data: \xff\xfe\n").unwrap_err(), SseError::NotUtf8);
    }

    #[test]
    fn the_card_says_whether_the_agent_streams() {
        let card = |caps: Value| {
            super::super::parse_card(
                &json!({"name": "a", "capabilities": caps, "supportedInterfaces": [
                    {"url": "http://h/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}),
                "http://h",
            )
        };
        assert!(card(json!({"streaming": true})).streaming);
        assert!(!card(json!({"streaming": false})).streaming);
        assert!(!card(json!({})).streaming);
        let v03 = json!({"name": "b", "url": "http://h/", "protocolVersion": "0.3.0",
                         "capabilities": {"streaming": true}});
        assert!(super::super::parse_card(&v03, "http://h").streaming);
    }

    #[test]
    fn events_of_both_versions() {
        let v1 =
            json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}});
        assert_eq!(event_of(&v1).unwrap().0, "status");
        let v03 = json!({"kind": "artifact-update", "taskId": "t", "artifact": {}});
        assert_eq!(event_of(&v03).unwrap().0, "artifact");
        assert!(event_of(&json!({"kind": "other"})).is_none());
        assert!(event_of(&json!(3)).is_none());
    }

    #[test]
    fn artifacts_are_added_replaced_and_appended() {
        let mut task = json!({"id": "t", "status": {"state": "working"}});
        let a = |id: &str, text: &str| {
            json!({"artifactId": id, "parts": [{"text": text}]})
                .as_object()
                .unwrap()
                .clone()
        };
        add_artifact(&mut task, &a("1", "x"), false);
        add_artifact(&mut task, &a("1", "y"), true);
        add_artifact(&mut task, &a("2", "z"), false);
        add_artifact(&mut task, &a("2", "w"), false);
        let v = TaskView::parse(&task).unwrap();
        assert_eq!(v.artifacts_text, "x\ny\nw");
    }
}
