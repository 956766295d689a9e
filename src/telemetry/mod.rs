//! OpenTelemetry for operators: traces and metrics exported over OTLP (HTTP, JSON
//! encoding: `http/json`), configured by the standard `OTEL_*` variables and off unless
//! they name an endpoint; metrics also as Prometheus text for `serve` and `worker`
//! (`--metrics HOST:PORT`).
//!
//! Nothing here knows a run: the journal turns its committed records into spans and
//! measurements (`journal::otel`), so the spans of a run are its journal's control points
//! one to one, written once durable. Off, [`active`] is `None`: no thread, no buffer, one
//! atomic load per journal commit.
//!
//! Outgoing requests of a control point (the model, an A2A agent, an MCP server) carry a
//! W3C `traceparent` ([`outgoing`]); a run started by a request that carried one joins
//! its caller's trace ([`inbound`]).

pub mod metrics;
mod otlp;

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use metrics::Metrics;

/// A trace id: 16 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId(pub [u8; 16]);

/// A span id: 8 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanId(pub [u8; 8]);

impl TraceId {
    /// The trace of a run with no caller: derived from its run id, so that every process
    /// that writes the run (a resume, a worker) continues the same trace.
    pub fn of_run(run_id: &str) -> TraceId {
        let d = sha256(&["cuga-flo trace", run_id]);
        let mut id = [0u8; 16];
        id.copy_from_slice(&d[..16]);
        if id == [0; 16] {
            id[15] = 1;
        }
        TraceId(id)
    }

    pub fn hex(&self) -> String {
        crate::digest::hex(&self.0)
    }
}

impl SpanId {
    /// A span id derived from `parts` within `trace`: the same control point of the same
    /// run is the same span in every process that writes it.
    pub fn of(trace: TraceId, parts: &[&str]) -> SpanId {
        let hex = trace.hex();
        let mut all = vec!["cuga-flo span", hex.as_str()];
        all.extend_from_slice(parts);
        let d = sha256(&all);
        let mut id = [0u8; 8];
        id.copy_from_slice(&d[..8]);
        if id == [0; 8] {
            id[7] = 1;
        }
        SpanId(id)
    }

    pub fn hex(&self) -> String {
        crate::digest::hex(&self.0)
    }
}

fn sha256(parts: &[&str]) -> [u8; 32] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for p in parts {
        ctx.update(&(p.len() as u64).to_le_bytes());
        ctx.update(p.as_bytes());
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(ctx.finish().as_ref());
    out
}

/// A W3C trace context (`traceparent`: `00-<trace id>-<parent span id>-<flags>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace: TraceId,
    pub parent: SpanId,
    pub sampled: bool,
}

impl TraceParent {
    /// A `traceparent` header's value; `None` when it is not one (version `ff`, a zero
    /// id, bad hex, a wrong length), as the W3C spec says to ignore it then.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let text = text.trim();
        let parts: Vec<&str> = text.split('-').collect();
        let [version, trace, parent, flags, ..] = parts.as_slice() else {
            return None;
        };
        if version.len() != 2 || *version == "ff" || (*version == "00" && parts.len() != 4) {
            return None;
        }
        let trace: [u8; 16] = unhex(trace)?.try_into().ok()?;
        let parent: [u8; 8] = unhex(parent)?.try_into().ok()?;
        let flags = unhex(flags)?;
        if trace == [0; 16] || parent == [0; 8] || flags.len() != 1 {
            return None;
        }
        Some(TraceParent {
            trace: TraceId(trace),
            parent: SpanId(parent),
            sampled: flags[0] & 1 == 1,
        })
    }
}

impl std::fmt::Display for TraceParent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "00-{}-{}-{}",
            self.trace.hex(),
            self.parent.hex(),
            if self.sampled { "01" } else { "00" }
        )
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    if text.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// What kind of span (OTLP's `SpanKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Internal = 1,
    Server = 2,
    Client = 3,
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    Str(String),
    Int(i64),
    Bool(bool),
    StrList(Vec<String>),
}

impl From<&str> for AttrValue {
    fn from(v: &str) -> Self {
        AttrValue::Str(v.to_string())
    }
}
impl From<String> for AttrValue {
    fn from(v: String) -> Self {
        AttrValue::Str(v)
    }
}
impl From<u64> for AttrValue {
    fn from(v: u64) -> Self {
        AttrValue::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<bool> for AttrValue {
    fn from(v: bool) -> Self {
        AttrValue::Bool(v)
    }
}

/// Something that happened during a span (a question parked, an answer).
#[derive(Debug, Clone)]
pub struct SpanEvent {
    pub name: String,
    pub at_ns: u64,
    pub attributes: Vec<(String, AttrValue)>,
}

/// A finished span, ready to export.
#[derive(Debug, Clone)]
pub struct Span {
    pub trace: TraceId,
    pub id: SpanId,
    pub parent: Option<SpanId>,
    pub name: String,
    pub kind: SpanKind,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Vec<(String, AttrValue)>,
    pub events: Vec<SpanEvent>,
    /// `Some(message)`: the span ended in error.
    pub error: Option<String>,
}

impl Span {
    pub fn attr(mut self, key: &str, value: impl Into<AttrValue>) -> Self {
        self.attributes.push((key.to_string(), value.into()));
        self
    }
}

/// Nanoseconds since the Unix epoch of a time in milliseconds.
pub fn ns_of_ms(ms: u64) -> u64 {
    ms.saturating_mul(1_000_000)
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Why telemetry is not turned on as configured.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "OTEL_EXPORTER_OTLP_PROTOCOL={0} is not supported: cuga-flo exports OTLP over HTTP with JSON (`http/json`); point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (usually 4318) and unset the protocol or set it to http/json"
    )]
    Protocol(String),
    #[error("{var}={value}: not an http(s) URL")]
    Endpoint { var: &'static str, value: String },
    #[error("{var}: {why}")]
    Bad { var: &'static str, why: String },
}

/// Where and how telemetry is exported.
#[derive(Debug, Clone)]
pub struct Config {
    pub service: String,
    pub resource: Vec<(String, String)>,
    pub traces: Option<String>,
    pub metrics: Option<String>,
    /// Extra headers (`OTEL_EXPORTER_OTLP_HEADERS`): never logged.
    pub headers: Vec<(String, crate::secret::Secret)>,
    pub timeout: Duration,
    pub metric_interval: Duration,
}

impl Config {
    /// The configuration the environment gives (`lookup` reads a variable), `None` when
    /// it names no OTLP endpoint or disables the SDK (`OTEL_SDK_DISABLED=true`).
    pub fn from_env(
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Config>, ConfigError> {
        let get = |v: &str| {
            lookup(v)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        for var in [
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ] {
            if let Some(p) = get(var)
                && p != "http/json"
            {
                return Err(ConfigError::Protocol(p));
            }
        }
        let url = |var: &'static str, value: String| -> Result<String, ConfigError> {
            if value.starts_with("http://") || value.starts_with("https://") {
                Ok(value)
            } else {
                Err(ConfigError::Endpoint { var, value })
            }
        };
        let base = get("OTEL_EXPORTER_OTLP_ENDPOINT")
            .map(|v| url("OTEL_EXPORTER_OTLP_ENDPOINT", v))
            .transpose()?;
        let signal = |var: &'static str, path: &str| -> Result<Option<String>, ConfigError> {
            match get(var) {
                Some(v) => url(var, v).map(Some),
                None => Ok(base
                    .as_ref()
                    .map(|b| format!("{}/{path}", b.trim_end_matches('/')))),
            }
        };
        let exporter_off = |var: &str| get(var).is_some_and(|v| v == "none");
        let traces = if exporter_off("OTEL_TRACES_EXPORTER") {
            None
        } else {
            signal("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "v1/traces")?
        };
        let metrics = if exporter_off("OTEL_METRICS_EXPORTER") {
            None
        } else {
            signal("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "v1/metrics")?
        };
        if traces.is_none() && metrics.is_none() {
            return Ok(None);
        }
        let mut headers = Vec::new();
        if let Some(h) = get("OTEL_EXPORTER_OTLP_HEADERS") {
            for pair in h.split(',').filter(|p| !p.trim().is_empty()) {
                let (k, v) = pair.split_once('=').ok_or(ConfigError::Bad {
                    var: "OTEL_EXPORTER_OTLP_HEADERS",
                    why: "expected key=value pairs separated by commas".into(),
                })?;
                let value = form_urlencoded::parse(format!("v={}", v.trim()).as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                headers.push((k.trim().to_string(), crate::secret::Secret::new(value)));
            }
        }
        let millis = |var: &'static str, default: u64| -> Result<Duration, ConfigError> {
            match get(var) {
                Some(v) => {
                    v.parse::<u64>()
                        .map(Duration::from_millis)
                        .map_err(|_| ConfigError::Bad {
                            var,
                            why: format!("`{v}` is not a number of milliseconds"),
                        })
                }
                None => Ok(Duration::from_millis(default)),
            }
        };
        let mut resource = Vec::new();
        if let Some(attrs) = get("OTEL_RESOURCE_ATTRIBUTES") {
            for pair in attrs.split(',') {
                if let Some((k, v)) = pair.split_once('=') {
                    resource.push((k.trim().to_string(), v.trim().to_string()));
                }
            }
        }
        let service = get("OTEL_SERVICE_NAME")
            .or_else(|| {
                resource
                    .iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(|| "cuga-flo".to_string());
        Ok(Some(Config {
            service,
            resource,
            traces,
            metrics,
            headers,
            timeout: millis("OTEL_EXPORTER_OTLP_TIMEOUT", 10_000)?,
            metric_interval: millis("OTEL_METRIC_EXPORT_INTERVAL", 60_000)?,
        }))
    }
}

/// Telemetry turned on: where spans go, and the process's metrics.
pub struct Telemetry {
    config: Config,
    spans: Option<SyncSender<Message>>,
    pub metrics: Metrics,
    /// The trace context callers gave for runs about to start, by run id.
    inbound: Mutex<HashMap<String, TraceParent>>,
    /// The trace of each run this process writes, by run id.
    runs: Mutex<HashMap<String, TraceId>>,
}

enum Message {
    Span(Box<Span>),
    /// Export what is buffered, and the metrics, then answer.
    Flush(SyncSender<()>),
}

static ACTIVE: OnceLock<Telemetry> = OnceLock::new();
/// Metrics kept for a Prometheus endpoint though no OTLP endpoint is configured.
static LOCAL: OnceLock<Metrics> = OnceLock::new();

/// Telemetry, when it is on.
#[inline]
pub fn active() -> Option<&'static Telemetry> {
    ACTIVE.get()
}

/// The process's metrics, when anything reads them (OTLP or a Prometheus endpoint).
#[inline]
pub fn metrics() -> Option<&'static Metrics> {
    ACTIVE.get().map(|t| &t.metrics).or_else(|| LOCAL.get())
}

/// Keep metrics for a Prometheus endpoint (`--metrics`), whether or not OTLP is on.
pub fn keep_metrics() -> &'static Metrics {
    match ACTIVE.get() {
        Some(t) => &t.metrics,
        None => LOCAL.get_or_init(Metrics::default),
    }
}

/// The most spans waiting for the exporter; more are dropped (and counted), never waited
/// for: a slow collector must not slow runs.
const QUEUE: usize = 8192;
/// Spans sent in one request at the most.
const BATCH: usize = 512;
/// How often buffered spans are sent.
const EVERY: Duration = Duration::from_millis(1000);

/// Turn telemetry on as `config` says (once per process; later calls do nothing): the
/// exporter's thread starts here.
pub fn start(config: Config) -> &'static Telemetry {
    ACTIVE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let exporter_config = config.clone();
        let started = std::thread::Builder::new()
            .name("cuga-flo-otlp".into())
            .spawn(move || export_loop(exporter_config, rx))
            .is_ok();
        Telemetry {
            config,
            spans: started.then_some(tx),
            metrics: Metrics::default(),
            inbound: Mutex::default(),
            runs: Mutex::default(),
        }
    })
}

impl Telemetry {
    /// Export `span` (dropped when the queue is full).
    pub fn export(&self, span: Span) {
        if self.config.traces.is_none() {
            return;
        }
        if let Some(tx) = &self.spans
            && let Err(TrySendError::Full(_)) = tx.try_send(Message::Span(Box::new(span)))
        {
            self.metrics.spans_dropped();
        }
    }

    /// The trace context the caller of run `run_id` gave: its spans join that trace.
    pub fn inbound(&self, run_id: &str, parent: TraceParent) {
        let mut inbound = lock(&self.inbound);
        // A caller's context whose run never started is not kept forever.
        if inbound.len() >= 10_000 {
            inbound.clear();
        }
        inbound.insert(run_id.to_string(), parent);
    }

    /// The caller's trace context for a run starting now (taken: given once).
    pub fn take_inbound(&self, run_id: &str) -> Option<TraceParent> {
        lock(&self.inbound).remove(run_id)
    }

    /// Run `run_id` is written here, in `trace`.
    pub fn run_trace(&self, run_id: &str, trace: TraceId) {
        lock(&self.runs).insert(run_id.to_string(), trace);
    }

    /// Run `run_id` is no longer written here.
    pub fn run_done(&self, run_id: &str) {
        lock(&self.runs).remove(run_id);
    }

    /// The trace of run `run_id`, when this process writes it.
    pub fn trace_of(&self, run_id: &str) -> Option<TraceId> {
        lock(&self.runs).get(run_id).copied()
    }

    /// Send what is buffered (spans and metrics) and wait for it, at most `timeout`.
    pub fn flush(&self, timeout: Duration) {
        let Some(tx) = &self.spans else { return };
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        if tx.send(Message::Flush(done)).is_ok() {
            let _ = wait.recv_timeout(timeout);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Send what is buffered before the process exits (a `start` run's spans), at most the
/// exporter's timeout.
pub fn shutdown() {
    if let Some(t) = active() {
        t.flush(t.config.timeout.min(Duration::from_secs(5)));
    }
}

/// The exporter's thread: spans batched, sent every second or every [`BATCH`] spans;
/// metrics every `metric_interval`; both on a flush.
fn export_loop(config: Config, rx: Receiver<Message>) {
    crate::tls::install_provider();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        tracing::warn!("telemetry: cannot start the exporter's runtime; nothing is exported");
        return;
    };
    let client = match reqwest::Client::builder().timeout(config.timeout).build() {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("telemetry: cannot build the OTLP client: {e}; nothing is exported");
            return;
        }
    };
    let sender = otlp::Sender::new(client, &config);
    let mut batch: Vec<Span> = Vec::new();
    let mut last_spans = std::time::Instant::now();
    let mut last_metrics = std::time::Instant::now();
    loop {
        let message = rx.recv_timeout(EVERY.min(config.metric_interval));
        let mut flush: Option<SyncSender<()>> = None;
        let mut closed = false;
        match message {
            Ok(Message::Span(span)) => batch.push(*span),
            Ok(Message::Flush(done)) => flush = Some(done),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => closed = true,
        }
        let due = last_spans.elapsed() >= EVERY || batch.len() >= BATCH;
        if !batch.is_empty() && (due || flush.is_some() || closed) {
            for chunk in batch.chunks(BATCH) {
                runtime.block_on(sender.spans(chunk));
            }
            batch.clear();
            last_spans = std::time::Instant::now();
        }
        if last_metrics.elapsed() >= config.metric_interval || flush.is_some() || closed {
            if let Some(t) = active() {
                runtime.block_on(sender.metrics(&t.metrics));
            }
            last_metrics = std::time::Instant::now();
        }
        if let Some(done) = flush {
            let _ = done.send(());
        }
        if closed {
            return;
        }
    }
}

// The control point being answered in this task, for the trace context of the requests
// it makes.
tokio::task_local! {
    static CURRENT: TraceParent;
}

/// The trace context of the control point `key` of run `run_id`: `None` when telemetry
/// is off or this process does not trace the run.
pub fn control_point(run_id: &str, key: Option<&str>) -> Option<TraceParent> {
    let trace = active()?.trace_of(run_id)?;
    Some(TraceParent {
        trace,
        parent: SpanId::of(trace, &["cp", key.unwrap_or_default()]),
        sampled: true,
    })
}

/// Run `fut` within the control point `parent`: the requests it makes carry it.
pub async fn within<F: std::future::Future>(parent: TraceParent, fut: F) -> F::Output {
    CURRENT.scope(parent, fut).await
}

/// The `traceparent` for a request made now, within a control point.
pub fn outgoing() -> Option<String> {
    CURRENT.try_with(|p| p.to_string()).ok()
}

/// Start a span that ends now (spans are written when their end is known).
pub fn span(trace: TraceId, id: SpanId, parent: Option<SpanId>, name: &str, start_ns: u64) -> Span {
    Span {
        trace,
        id,
        parent,
        name: name.to_string(),
        kind: SpanKind::Internal,
        start_ns,
        end_ns: now_ns().max(start_ns),
        attributes: Vec::new(),
        events: Vec::new(),
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparents_parse_and_print() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let tp = TraceParent::parse(text).unwrap();
        assert!(tp.sampled);
        assert_eq!(tp.to_string(), text);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn ids_are_stable_per_run_and_control_point() {
        let t = TraceId::of_run("r1");
        assert_eq!(t, TraceId::of_run("r1"));
        assert_ne!(t, TraceId::of_run("r2"));
        assert_eq!(
            SpanId::of(t, &["cp", "r1:a:1"]),
            SpanId::of(t, &["cp", "r1:a:1"])
        );
        assert_ne!(
            SpanId::of(t, &["cp", "r1:a:1"]),
            SpanId::of(t, &["cp", "r1:a:2"])
        );
    }

    #[test]
    fn the_environment_turns_it_on_and_refuses_what_is_not_built() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |v: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == v)
                    .map(|(_, x)| x.to_string())
            }
        };
        assert!(Config::from_env(&env(&[])).unwrap().is_none());
        let c = Config::from_env(&env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/"),
            ("OTEL_SERVICE_NAME", "flows"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20abc"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(c.traces.as_deref(), Some("http://127.0.0.1:4318/v1/traces"));
        assert_eq!(
            c.metrics.as_deref(),
            Some("http://127.0.0.1:4318/v1/metrics")
        );
        assert_eq!(c.service, "flows");
        assert_eq!(c.headers[0].1.expose(), "Bearer abc");
        assert!(matches!(
            Config::from_env(&env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ])),
            Err(ConfigError::Protocol(_))
        ));
        assert!(
            Config::from_env(&env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_SDK_DISABLED", "true"),
            ]))
            .unwrap()
            .is_none()
        );
    }
}
