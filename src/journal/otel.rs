//! A run's journal as OpenTelemetry: its committed records turned into spans and metrics
//! ([`crate::telemetry`]), so that the trace of a run is its journal — one span per
//! control point record (`task_finished`, `gateway_routed`, `hook_evaluated`), one per
//! model call (GenAI conventions), A2A exchange and tool call, under a span for what this
//! process did of the run (its start, or a resume), with the people's questions and
//! answers as span events. Spans are written once their records are durable; ids are
//! derived from the run's trace and the records' keys, so a resumed run continues the
//! same trace in whatever process resumes it.
//!
//! The trace is the run's `run_started.trace`: the caller's (a request that carried a
//! `traceparent`) or one of its own; a journal without one (written with telemetry off)
//! has the trace its run id derives.

use std::collections::HashMap;

use super::event::{Event, Record, TraceRef};
use crate::telemetry::{
    self, AttrValue, Span, SpanEvent, SpanId, SpanKind, TraceId, TraceParent, metrics as m,
};
use crate::vocab::{CallOutcome, Decider};

impl TraceRef {
    fn ids(&self) -> Option<(TraceId, Option<SpanId>)> {
        let parent = self
            .parent_span_id
            .clone()
            .unwrap_or_else(|| "0000000000000001".into());
        let tp = TraceParent::parse(&format!("00-{}-{parent}-01", self.trace_id))?;
        Some((tp.trace, self.parent_span_id.as_ref().map(|_| tp.parent)))
    }
}

/// Fill in the trace of a run starting now: its caller's, else its own.
pub(crate) fn stamp(event: &mut Event) {
    let Some(t) = telemetry::active() else { return };
    if let Event::RunStarted { run_id, trace, .. } = event
        && trace.is_none()
    {
        *trace = Some(match t.take_inbound(run_id) {
            Some(caller) => TraceRef {
                trace_id: caller.trace.hex(),
                parent_span_id: Some(caller.parent.hex()),
            },
            None => TraceRef {
                trace_id: TraceId::of_run(run_id).hex(),
                parent_span_id: None,
            },
        });
    }
}

/// What this process writes of one run, as spans.
pub(crate) struct RunTrace {
    run_id: String,
    app: String,
    trace: TraceId,
    /// The run's first span (its start) and who called it.
    root: SpanId,
    caller: Option<SpanId>,
    /// The span of what this process does of the run, while it is open.
    segment: Option<Segment>,
    /// The names of the elements entered, by id.
    names: HashMap<String, String>,
    last_ms: u64,
}

struct Segment {
    id: SpanId,
    name: String,
    start_ms: u64,
    events: Vec<SpanEvent>,
    attributes: Vec<(String, AttrValue)>,
}

impl RunTrace {
    /// The spans of a run whose first record is `first` (a journal reopened), or that
    /// starts with the records committed next (`None`).
    pub(crate) fn new(first: Option<&Record>) -> Option<RunTrace> {
        telemetry::metrics()?;
        let (run_id, app, trace) = match first.map(|r| &r.event) {
            Some(Event::RunStarted {
                run_id, app, trace, ..
            }) => (run_id.clone(), app.clone(), trace.clone()),
            Some(_) => return None,
            None => (String::new(), String::new(), None),
        };
        let mut t = RunTrace {
            run_id: String::new(),
            app,
            trace: TraceId([0; 16]),
            root: SpanId([0; 8]),
            caller: None,
            segment: None,
            names: HashMap::new(),
            last_ms: 0,
        };
        if !run_id.is_empty() {
            t.known(&run_id, trace.as_ref());
        }
        Some(t)
    }

    fn known(&mut self, run_id: &str, trace: Option<&TraceRef>) {
        let (id, caller) = trace
            .and_then(TraceRef::ids)
            .unwrap_or((TraceId::of_run(run_id), None));
        self.run_id = run_id.to_string();
        self.trace = id;
        self.caller = caller;
        self.root = SpanId::of(id, &["run", run_id]);
        if let Some(t) = telemetry::active() {
            t.run_trace(run_id, id);
        }
    }

    fn base(&self) -> Vec<(String, AttrValue)> {
        vec![
            ("cuga_flo.app".into(), self.app.clone().into()),
            ("cuga_flo.run_id".into(), self.run_id.clone().into()),
        ]
    }

    fn open(&mut self, record: &Record) {
        if self.segment.is_some() || self.run_id.is_empty() {
            return;
        }
        let (id, name) = match &record.event {
            Event::RunStarted { .. } => (self.root, format!("run {}", self.app)),
            Event::RunResumed { .. } => (
                SpanId::of(self.trace, &["segment", &record.seq.to_string()]),
                format!("resume {}", self.app),
            ),
            _ => (
                SpanId::of(self.trace, &["segment", &record.seq.to_string()]),
                format!("update {}", self.app),
            ),
        };
        self.segment = Some(Segment {
            id,
            name,
            start_ms: record.at_ms,
            events: Vec::new(),
            attributes: self.base(),
        });
    }

    fn close(&mut self, end_ms: u64, status: Option<&str>, error: Option<String>) {
        let Some(seg) = self.segment.take() else {
            return;
        };
        let Some(t) = telemetry::active() else { return };
        let parent = if seg.id == self.root {
            self.caller
        } else {
            Some(self.root)
        };
        let mut span = telemetry::span(
            self.trace,
            seg.id,
            parent,
            &seg.name,
            telemetry::ns_of_ms(seg.start_ms),
        );
        span.kind = SpanKind::Server;
        span.end_ns = telemetry::ns_of_ms(end_ms.max(seg.start_ms));
        span.attributes = seg.attributes;
        if let Some(s) = status {
            span.attributes
                .push(("cuga_flo.run.status".into(), s.to_string().into()));
        }
        span.events = seg.events;
        span.error = error;
        t.export(span);
    }

    fn event(&mut self, at_ms: u64, name: &str, attributes: Vec<(String, AttrValue)>) {
        if let Some(seg) = &mut self.segment {
            seg.events.push(SpanEvent {
                name: name.to_string(),
                at_ns: telemetry::ns_of_ms(at_ms),
                attributes,
            });
        }
    }

    /// A control point's span (the parent of its model, A2A and tool calls).
    #[allow(clippy::too_many_arguments)]
    fn control_point(
        &self,
        kind: &str,
        node: &str,
        key: &Option<String>,
        end_ms: u64,
        duration_ms: u64,
        decider: Decider,
        outcome: String,
        error: Option<String>,
    ) -> Option<Span> {
        let seg = self.segment.as_ref()?;
        let key = key
            .clone()
            .unwrap_or_else(|| format!("{}:{node}", self.run_id));
        let id = SpanId::of(self.trace, &["cp", &key]);
        let name = match self.names.get(node) {
            Some(n) => format!("{kind} {n}"),
            None => format!("{kind} {node}"),
        };
        let mut span = telemetry::span(
            self.trace,
            id,
            Some(seg.id),
            &name,
            telemetry::ns_of_ms(end_ms.saturating_sub(duration_ms)),
        );
        span.end_ns = telemetry::ns_of_ms(end_ms);
        span.attributes = self.base();
        span.attributes.extend([
            ("cuga_flo.control_point.kind".into(), kind.into()),
            ("cuga_flo.element.id".into(), node.into()),
            ("cuga_flo.decider".into(), decider.as_str().into()),
            ("cuga_flo.outcome".into(), outcome.into()),
            ("cuga_flo.idempotency_key".into(), key.into()),
        ]);
        if let Some(n) = self.names.get(node) {
            span.attributes
                .push(("cuga_flo.element.name".into(), n.clone().into()));
        }
        span.error = error;
        Some(span)
    }

    /// Turn committed records into spans (traces on) and measurements.
    pub(crate) fn committed(&mut self, records: &[Record]) {
        let Some(metrics) = telemetry::metrics() else {
            return;
        };
        let spans = telemetry::active();
        for r in records {
            self.record(metrics, spans, r);
        }
    }

    fn record(
        &mut self,
        metrics: &telemetry::Metrics,
        t: Option<&telemetry::Telemetry>,
        r: &Record,
    ) {
        self.last_ms = r.at_ms;
        if let Event::RunStarted {
            run_id, app, trace, ..
        } = &r.event
        {
            self.app.clone_from(app);
            self.known(run_id, trace.as_ref());
            metrics.add(m::RUNS_STARTED, vec![("app", app.clone())], 1.0);
        }
        self.open(r);
        // A person's answer (or a delivery) written first, then the run resumed: what this
        // process does of the run is a resume.
        if let (Event::RunResumed { .. }, Some(seg)) = (&r.event, &mut self.segment)
            && seg.name.starts_with("update ")
        {
            seg.name = format!("resume {}", self.app);
        }
        match &r.event {
            Event::NodeEntered {
                node,
                name: Some(name),
                ..
            } => {
                self.names.insert(node.clone(), name.clone());
            }
            Event::TaskFinished {
                key,
                node,
                status,
                decided_by,
                duration_ms,
                error,
                ..
            } => {
                let failed = matches!(status, crate::vocab::TaskStatus::Failed);
                let span = self.control_point(
                    "task",
                    node,
                    key,
                    r.at_ms,
                    *duration_ms,
                    *decided_by,
                    status.as_str().to_string(),
                    if failed {
                        error.clone().or(Some("failed".into()))
                    } else {
                        None
                    },
                );
                self.cp_measured(metrics, "task", *decided_by, *duration_ms);
                if let (Some(t), Some(span)) = (t, span) {
                    t.export(span);
                }
            }
            Event::GatewayRouted {
                key,
                node,
                flows,
                decided_by,
                duration_ms,
                ..
            } => {
                let span = self.control_point(
                    "gateway",
                    node,
                    key,
                    r.at_ms,
                    *duration_ms,
                    *decided_by,
                    flows.join(","),
                    None,
                );
                self.cp_measured(metrics, "gateway", *decided_by, *duration_ms);
                if let (Some(t), Some(span)) = (t, span) {
                    t.export(span.attr("cuga_flo.flows", AttrValue::StrList(flows.clone())));
                }
            }
            Event::HookEvaluated {
                key,
                hook,
                action,
                decided_by,
                duration_ms,
                ..
            } => {
                let span = self.control_point(
                    "hook",
                    hook,
                    key,
                    r.at_ms,
                    *duration_ms,
                    *decided_by,
                    action.as_str().to_string(),
                    None,
                );
                self.cp_measured(metrics, "hook", *decided_by, *duration_ms);
                if let (Some(t), Some(span)) = (t, span) {
                    t.export(span);
                }
            }
            Event::ModelCalled { node, key, call } => {
                self.model_called(metrics, t, r, node, key, call);
            }
            Event::ToolCalled {
                key,
                call,
                tool,
                outcome,
                duration_ms,
                ..
            } => {
                let outcome = serde_json::to_value(outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                metrics.add(
                    m::TOOL_CALLS,
                    vec![("tool", tool.clone()), ("outcome", outcome.clone())],
                    1.0,
                );
                if let (Some(t), true) = (t, self.segment.is_some()) {
                    let id = SpanId::of(self.trace, &["tool", key, &call.to_string()]);
                    let parent = SpanId::of(self.trace, &["cp", key]);
                    let mut span = telemetry::span(
                        self.trace,
                        id,
                        Some(parent),
                        &format!("execute_tool {tool}"),
                        telemetry::ns_of_ms(r.at_ms.saturating_sub(*duration_ms)),
                    );
                    span.kind = SpanKind::Client;
                    span.end_ns = telemetry::ns_of_ms(r.at_ms);
                    span.attributes = self.base();
                    span.attributes.extend([
                        ("gen_ai.operation.name".into(), "execute_tool".into()),
                        ("gen_ai.tool.name".into(), tool.clone().into()),
                        ("cuga_flo.tool.outcome".into(), outcome.clone().into()),
                    ]);
                    if outcome != "ok" {
                        span.error = Some(outcome);
                    }
                    t.export(span);
                }
            }
            Event::QuestionParked { question } => {
                let attrs = vec![
                    (
                        "cuga_flo.element.id".into(),
                        question.element.clone().into(),
                    ),
                    (
                        "cuga_flo.question.kind".into(),
                        question.kind.as_str().into(),
                    ),
                ];
                self.event(r.at_ms, "question parked", attrs);
            }
            Event::QuestionAnswered { key, by, .. } => {
                let mut attrs: Vec<(String, AttrValue)> =
                    vec![("cuga_flo.question.key".into(), key.clone().into())];
                if let Some(by) = by {
                    attrs.push(("cuga_flo.answered_by".into(), by.clone().into()));
                }
                self.event(r.at_ms, "question answered", attrs);
            }
            Event::RunWaiting { reason, .. } => {
                metrics.add(
                    m::RUNS_PARKED,
                    vec![("app", self.app.clone()), ("reason", reason.clone())],
                    1.0,
                );
                self.event(
                    r.at_ms,
                    "waiting",
                    vec![("cuga_flo.waiting.reason".into(), reason.clone().into())],
                );
                self.close(r.at_ms, Some("waiting"), None);
            }
            Event::RunFinished {
                status, message, ..
            } => {
                metrics.add(
                    m::RUNS_FINISHED,
                    vec![
                        ("app", self.app.clone()),
                        ("status", status.as_str().into()),
                    ],
                    1.0,
                );
                let error = matches!(status, crate::vocab::RunStatus::Failed)
                    .then(|| message.clone().unwrap_or_else(|| "failed".into()));
                self.close(r.at_ms, Some(status.as_str()), error);
                if let Some(t) = telemetry::active() {
                    t.run_done(&self.run_id);
                }
            }
            _ => {}
        }
    }

    fn cp_measured(&self, metrics: &telemetry::Metrics, kind: &str, decider: Decider, ms: u64) {
        metrics.observe(
            m::CONTROL_POINT_SECONDS,
            vec![
                ("kind", kind.to_string()),
                ("decider", decider.as_str().into()),
            ],
            ms as f64 / 1000.0,
        );
    }

    fn model_called(
        &self,
        metrics: &telemetry::Metrics,
        t: Option<&telemetry::Telemetry>,
        r: &Record,
        node: &str,
        key: &Option<String>,
        call: &crate::vocab::ModelCall,
    ) {
        let outcome = call.outcome.as_str();
        if !call.is_remote() {
            let model = vec![("model", call.model.clone())];
            metrics.add(
                m::MODEL_CALLS,
                vec![("model", call.model.clone()), ("outcome", outcome.into())],
                1.0,
            );
            metrics.observe(m::MODEL_SECONDS, model, call.latency_ms as f64 / 1000.0);
            for (kind, n) in [
                ("input", call.prompt_tokens),
                ("output", call.completion_tokens),
            ] {
                if let Some(n) = n {
                    metrics.add(
                        m::MODEL_TOKENS,
                        vec![("model", call.model.clone()), ("type", kind.into())],
                        n as f64,
                    );
                }
            }
        }
        let Some(t) = t.filter(|_| self.segment.is_some()) else {
            return;
        };
        let key = key
            .clone()
            .unwrap_or_else(|| format!("{}:{node}", self.run_id));
        let id = SpanId::of(self.trace, &["call", &r.seq.to_string()]);
        let parent = SpanId::of(self.trace, &["cp", &key]);
        let (name, mut attrs): (String, Vec<(String, AttrValue)>) = if call.is_remote() {
            let agent = call
                .model
                .strip_prefix(crate::vocab::REMOTE_CALL_PREFIX)
                .unwrap_or(&call.model);
            (
                format!("a2a {agent}"),
                vec![
                    ("cuga_flo.remote.agent".into(), agent.to_string().into()),
                    ("rpc.system".into(), "a2a".into()),
                ],
            )
        } else {
            let mut a: Vec<(String, AttrValue)> = vec![
                ("gen_ai.operation.name".into(), "chat".into()),
                ("gen_ai.request.model".into(), call.model.clone().into()),
                ("gen_ai.provider.name".into(), "openai".into()),
            ];
            if let Some(n) = call.prompt_tokens {
                a.push(("gen_ai.usage.input_tokens".into(), n.into()));
            }
            if let Some(n) = call.completion_tokens {
                a.push(("gen_ai.usage.output_tokens".into(), n.into()));
            }
            if let Some(reasons) = &call.finish_reasons {
                a.push((
                    "gen_ai.response.finish_reasons".into(),
                    AttrValue::StrList(reasons.clone()),
                ));
            }
            (format!("chat {}", call.model), a)
        };
        attrs.extend(self.base());
        attrs.extend([
            ("cuga_flo.element.id".into(), node.to_string().into()),
            (
                "cuga_flo.call.attempt".into(),
                u64::from(call.attempt).into(),
            ),
            ("cuga_flo.call.outcome".into(), outcome.into()),
            (
                "cuga_flo.call.http_attempts".into(),
                u64::from(call.http_attempts).into(),
            ),
        ]);
        let mut span = telemetry::span(
            self.trace,
            id,
            Some(parent),
            &name,
            telemetry::ns_of_ms(r.at_ms.saturating_sub(call.latency_ms)),
        );
        span.kind = SpanKind::Client;
        span.end_ns = telemetry::ns_of_ms(r.at_ms);
        span.attributes = attrs;
        // A step of a tool round or an A2A exchange is not a failure; these are.
        if matches!(
            call.outcome,
            CallOutcome::Error | CallOutcome::Timeout | CallOutcome::Invalid
        ) {
            span.error = Some(call.detail.clone().unwrap_or_else(|| outcome.to_string()));
        }
        t.export(span);
    }
}

impl Drop for RunTrace {
    /// The process stops writing the run (it parked, was interrupted, or the journal was
    /// only updated): what it did is one span, ended at its last record.
    fn drop(&mut self) {
        if self.segment.is_some() {
            let end = self.last_ms;
            self.close(end, None, None);
        }
        if let Some(t) = telemetry::active()
            && !self.run_id.is_empty()
        {
            t.run_done(&self.run_id);
        }
    }
}

/// A commit's measurements: its time and how many records it wrote.
pub(crate) fn commit_measured(records: usize, seconds: f64) {
    if let Some(metrics) = telemetry::metrics() {
        metrics.observe(m::COMMIT_SECONDS, Vec::new(), seconds);
        metrics.observe(m::COMMIT_RECORDS, Vec::new(), records as f64);
    }
}
