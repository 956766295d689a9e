//! OTLP over HTTP with the JSON encoding (the protobuf messages' JSON mapping: ids as
//! hex, 64-bit integers as strings, enums as numbers): `ExportTraceServiceRequest` to
//! `/v1/traces`, `ExportMetricsServiceRequest` to `/v1/metrics`. A failed export is
//! logged once a minute at the most and dropped: telemetry never stops a run.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::metrics::{Kind, Metrics, Value as MetricValue};
use super::{AttrValue, Config, Span};

pub(super) struct Sender {
    client: reqwest::Client,
    traces: Option<String>,
    metrics: Option<String>,
    headers: Vec<(String, crate::secret::Secret)>,
    resource: Value,
    last_warning: Mutex<Option<Instant>>,
}

fn attribute(key: &str, value: &AttrValue) -> Value {
    let v = match value {
        AttrValue::Str(s) => json!({"stringValue": s}),
        AttrValue::Int(i) => json!({"intValue": i.to_string()}),
        AttrValue::Bool(b) => json!({"boolValue": b}),
        AttrValue::StrList(l) => json!({"arrayValue": {"values":
            l.iter().map(|s| json!({"stringValue": s})).collect::<Vec<_>>()}}),
    };
    json!({"key": key, "value": v})
}

fn attributes(attrs: &[(String, AttrValue)]) -> Vec<Value> {
    attrs.iter().map(|(k, v)| attribute(k, v)).collect()
}

/// An error with its causes, one after the other.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

impl Sender {
    pub(super) fn new(client: reqwest::Client, config: &Config) -> Sender {
        let mut resource: Vec<(String, AttrValue)> = vec![
            ("service.name".into(), config.service.clone().into()),
            ("service.version".into(), env!("CARGO_PKG_VERSION").into()),
            ("telemetry.sdk.name".into(), "cuga-flo".into()),
            ("telemetry.sdk.language".into(), "rust".into()),
        ];
        for (k, v) in &config.resource {
            if !resource.iter().any(|(have, _)| have == k) {
                resource.push((k.clone(), v.clone().into()));
            }
        }
        Sender {
            client,
            traces: config.traces.clone(),
            metrics: config.metrics.clone(),
            headers: config.headers.clone(),
            resource: json!({"attributes": attributes(&resource)}),
            last_warning: Mutex::new(None),
        }
    }

    async fn post(&self, url: &str, body: Value) {
        let mut request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string());
        for (k, v) in &self.headers {
            request = request.header(k.as_str(), v.expose());
        }
        let failed = match request.send().await {
            Ok(r) if r.status().is_success() => None,
            Ok(r) => Some(format!(
                "{} answered {}",
                crate::secret::without_userinfo(url),
                r.status()
            )),
            Err(e) => Some(format!(
                "{}: {}",
                crate::secret::without_userinfo(url),
                crate::secret::redact_urls(&chain(&e))
            )),
        };
        if let Some(why) = failed {
            let mut last = self.last_warning.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_none_or(|t| t.elapsed() > Duration::from_secs(60)) {
                tracing::warn!("telemetry: export failed: {why}");
                *last = Some(Instant::now());
            }
        }
    }

    pub(super) async fn spans(&self, spans: &[Span]) {
        let Some(url) = &self.traces else { return };
        let spans: Vec<Value> = spans
            .iter()
            .map(|s| {
                let mut v = json!({
                    "traceId": s.trace.hex(),
                    "spanId": s.id.hex(),
                    "name": s.name,
                    "kind": s.kind as i32,
                    "startTimeUnixNano": s.start_ns.to_string(),
                    "endTimeUnixNano": s.end_ns.to_string(),
                    "attributes": attributes(&s.attributes),
                    "events": s.events.iter().map(|e| json!({
                        "timeUnixNano": e.at_ns.to_string(),
                        "name": e.name,
                        "attributes": attributes(&e.attributes),
                    })).collect::<Vec<_>>(),
                    "status": match &s.error {
                        Some(m) => json!({"code": 2, "message": m}),
                        None => json!({"code": 0}),
                    },
                });
                if let Some(p) = s.parent {
                    v["parentSpanId"] = Value::String(p.hex());
                }
                v
            })
            .collect();
        let body = json!({"resourceSpans": [{
            "resource": self.resource,
            "scopeSpans": [{"scope": {"name": "cuga-flo", "version": env!("CARGO_PKG_VERSION")},
                            "spans": spans}],
        }]});
        self.post(url, body).await;
    }

    pub(super) async fn metrics(&self, metrics: &Metrics) {
        let Some(url) = &self.metrics else { return };
        let start = metrics
            .start_ns
            .get()
            .copied()
            .unwrap_or_default()
            .to_string();
        let now = super::now_ns().to_string();
        let attrs = |labels: &super::metrics::Labels| -> Vec<Value> {
            labels
                .iter()
                .map(|(k, v)| attribute(k, &AttrValue::Str(v.clone())))
                .collect()
        };
        let out: Vec<Value> = metrics
            .snapshot()
            .into_iter()
            .map(|(m, series)| {
                let points: Vec<Value> = series
                    .iter()
                    .map(|(labels, value)| match value {
                        MetricValue::Number(x) => json!({
                            "attributes": attrs(labels), "startTimeUnixNano": start,
                            "timeUnixNano": now, "asDouble": x}),
                        MetricValue::Histogram(h) => json!({
                            "attributes": attrs(labels), "startTimeUnixNano": start,
                            "timeUnixNano": now, "count": h.count.to_string(), "sum": h.sum,
                            "bucketCounts": h.counts.iter().map(u64::to_string).collect::<Vec<_>>(),
                            "explicitBounds": match m.kind { Kind::Histogram(b) => b.to_vec(), _ => Vec::new() }}),
                    })
                    .collect();
                let data = match m.kind {
                    Kind::Counter => json!({"sum": {"dataPoints": points,
                        "aggregationTemporality": 2, "isMonotonic": true}}),
                    Kind::Gauge => json!({"gauge": {"dataPoints": points}}),
                    Kind::Histogram(_) => json!({"histogram": {"dataPoints": points,
                        "aggregationTemporality": 2}}),
                };
                let mut v = json!({"name": m.name, "description": m.help, "unit": m.unit});
                if let (Some(obj), Value::Object(d)) = (v.as_object_mut(), data) {
                    obj.extend(d);
                }
                v
            })
            .collect();
        if out.is_empty() {
            return;
        }
        let body = json!({"resourceMetrics": [{
            "resource": self.resource,
            "scopeMetrics": [{"scope": {"name": "cuga-flo"}, "metrics": out}],
        }]});
        self.post(url, body).await;
    }
}
