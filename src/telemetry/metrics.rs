//! The process's metrics: a fixed catalogue of counters, gauges and histograms with
//! labels, read as Prometheus text ([`Metrics::prometheus`]) and sent over OTLP
//! (cumulative). Recorded from journal commits (runs, control points, model and tool
//! calls, the commits themselves) and by the worker (its queue).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// What a metric is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram(&'static [f64]),
}

/// One metric of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    /// The name without Prometheus's `_total` (added to counters).
    pub name: &'static str,
    pub help: &'static str,
    pub unit: &'static str,
    pub kind: Kind,
}

const SECONDS: &[f64] = &[
    0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];
const RECORDS: &[f64] = &[1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 500.0, 1000.0];

pub const RUNS_STARTED: Metric = Metric {
    name: "cuga_flo_runs_started",
    help: "Runs started (a resumed run is not started again).",
    unit: "1",
    kind: Kind::Counter,
};
pub const RUNS_FINISHED: Metric = Metric {
    name: "cuga_flo_runs_finished",
    help: "Runs finished, by status.",
    unit: "1",
    kind: Kind::Counter,
};
pub const RUNS_PARKED: Metric = Metric {
    name: "cuga_flo_runs_parked",
    help: "Times a run parked (waiting for a person, a timer, a message), by reason.",
    unit: "1",
    kind: Kind::Counter,
};
pub const CONTROL_POINT_SECONDS: Metric = Metric {
    name: "cuga_flo_control_point_duration_seconds",
    help: "Time to answer a control point, by kind and decider.",
    unit: "s",
    kind: Kind::Histogram(SECONDS),
};
pub const MODEL_CALLS: Metric = Metric {
    name: "cuga_flo_model_calls",
    help: "Model calls, by model and outcome (errors included).",
    unit: "1",
    kind: Kind::Counter,
};
pub const MODEL_TOKENS: Metric = Metric {
    name: "cuga_flo_model_tokens",
    help: "Tokens of model calls, by model and type (input, output).",
    unit: "1",
    kind: Kind::Counter,
};
pub const MODEL_SECONDS: Metric = Metric {
    name: "cuga_flo_model_call_duration_seconds",
    help: "Time of a model call, retries included, by model.",
    unit: "s",
    kind: Kind::Histogram(SECONDS),
};
pub const TOOL_CALLS: Metric = Metric {
    name: "cuga_flo_tool_calls",
    help: "Tool calls of task agents, by tool and outcome.",
    unit: "1",
    kind: Kind::Counter,
};
pub const COMMIT_SECONDS: Metric = Metric {
    name: "cuga_flo_journal_commit_duration_seconds",
    help: "Time of a journal commit (one write and, when durable, one fdatasync).",
    unit: "s",
    kind: Kind::Histogram(SECONDS),
};
pub const COMMIT_RECORDS: Metric = Metric {
    name: "cuga_flo_journal_commit_records",
    help: "Records per journal commit (group commit's batch size).",
    unit: "1",
    kind: Kind::Histogram(RECORDS),
};
pub const WORKER_QUEUE: Metric = Metric {
    name: "cuga_flo_worker_queue_depth",
    help: "Runs the worker found due at its last look.",
    unit: "1",
    kind: Kind::Gauge,
};
pub const WORKER_LAG: Metric = Metric {
    name: "cuga_flo_worker_due_lag_seconds",
    help: "How late the most overdue run was at the worker's last look (0: none overdue).",
    unit: "s",
    kind: Kind::Gauge,
};
pub const RUNS_HELD: Metric = Metric {
    name: "cuga_flo_runs_held",
    help: "Runs this server holds now, by state (going, waiting).",
    unit: "1",
    kind: Kind::Gauge,
};
pub const MODEL_SLOTS: Metric = Metric {
    name: "cuga_flo_model_slots",
    help: "Requests a model endpoint may have in flight at once (max_concurrency), by endpoint.",
    unit: "1",
    kind: Kind::Gauge,
};
pub const MODEL_IN_FLIGHT: Metric = Metric {
    name: "cuga_flo_model_requests_in_flight",
    help: "Requests sent to a model endpoint and not answered yet, by endpoint.",
    unit: "1",
    kind: Kind::Gauge,
};
pub const MODEL_WAITING: Metric = Metric {
    name: "cuga_flo_model_requests_waiting",
    help: "Requests waiting for a turn at a model endpoint (all its slots busy), by endpoint.",
    unit: "1",
    kind: Kind::Gauge,
};
pub const SPANS_DROPPED: Metric = Metric {
    name: "cuga_flo_telemetry_spans_dropped",
    help: "Spans dropped because the exporter's queue was full.",
    unit: "1",
    kind: Kind::Counter,
};

/// Every metric, in the order they are shown.
pub const CATALOGUE: &[Metric] = &[
    RUNS_STARTED,
    RUNS_FINISHED,
    RUNS_PARKED,
    CONTROL_POINT_SECONDS,
    MODEL_CALLS,
    MODEL_TOKENS,
    MODEL_SECONDS,
    TOOL_CALLS,
    COMMIT_SECONDS,
    COMMIT_RECORDS,
    WORKER_QUEUE,
    WORKER_LAG,
    RUNS_HELD,
    MODEL_SLOTS,
    MODEL_IN_FLIGHT,
    MODEL_WAITING,
    SPANS_DROPPED,
];

/// A series' labels, in order.
pub type Labels = Vec<(&'static str, String)>;

/// A histogram's buckets (cumulative counts are computed when shown).
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    /// Per bucket (the bounds of its metric, then +Inf), not cumulative.
    pub counts: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

/// One series' value.
#[derive(Debug, Clone)]
pub enum Value {
    Number(f64),
    Histogram(Histogram),
}

/// A gauge read when the metrics are (what a server holds now).
type Reading = Box<dyn Fn() -> f64 + Send + Sync>;

/// The process's metrics.
#[derive(Default)]
pub struct Metrics {
    series: Mutex<BTreeMap<(&'static str, Labels), Value>>,
    readings: Mutex<Vec<(Metric, Labels, Reading)>>,
    /// When the process started counting (the start of every cumulative series).
    pub(super) start_ns: std::sync::OnceLock<u64>,
}

impl Metrics {
    fn with(&self, metric: Metric, labels: Labels, f: impl FnOnce(&mut Value)) {
        self.start_ns.get_or_init(super::now_ns);
        let mut series = self.series.lock().unwrap_or_else(|p| p.into_inner());
        let value = series
            .entry((metric.name, labels))
            .or_insert_with(|| match metric.kind {
                Kind::Histogram(bounds) => Value::Histogram(Histogram {
                    counts: vec![0; bounds.len() + 1],
                    ..Histogram::default()
                }),
                _ => Value::Number(0.0),
            });
        f(value);
    }

    /// Add `n` to a counter.
    pub fn add(&self, metric: Metric, labels: Labels, n: f64) {
        debug_assert_eq!(metric.kind, Kind::Counter);
        self.with(metric, labels, |v| {
            if let Value::Number(x) = v {
                *x += n;
            }
        });
    }

    /// Set a gauge.
    pub fn set(&self, metric: Metric, labels: Labels, n: f64) {
        debug_assert_eq!(metric.kind, Kind::Gauge);
        self.with(metric, labels, |v| *v = Value::Number(n));
    }

    /// Record one observation of a histogram.
    pub fn observe(&self, metric: Metric, labels: Labels, x: f64) {
        let Kind::Histogram(bounds) = metric.kind else {
            return;
        };
        self.with(metric, labels, |v| {
            if let Value::Histogram(h) = v {
                let i = bounds.iter().position(|b| x <= *b).unwrap_or(bounds.len());
                h.counts[i] += 1;
                h.sum += x;
                h.count += 1;
            }
        });
    }

    pub(super) fn spans_dropped(&self) {
        self.add(SPANS_DROPPED, Vec::new(), 1.0);
    }

    /// Read gauge `metric` with `labels` from `read` whenever the metrics are read.
    pub fn read_gauge(
        &self,
        metric: Metric,
        labels: Labels,
        read: impl Fn() -> f64 + Send + Sync + 'static,
    ) {
        let mut readings = self.readings.lock().unwrap_or_else(|p| p.into_inner());
        readings.push((metric, labels, Box::new(read)));
    }

    /// Every series now, by metric.
    pub fn snapshot(&self) -> Vec<(Metric, Vec<(Labels, Value)>)> {
        let read: Vec<(Metric, Labels, f64)> = {
            let readings = self.readings.lock().unwrap_or_else(|p| p.into_inner());
            readings
                .iter()
                .map(|(m, l, f)| (*m, l.clone(), f()))
                .collect()
        };
        for (m, labels, value) in read {
            self.set(m, labels, value);
        }
        let series = self.series.lock().unwrap_or_else(|p| p.into_inner());
        CATALOGUE
            .iter()
            .map(|m| {
                let of: Vec<(Labels, Value)> = series
                    .iter()
                    .filter(|((name, _), _)| *name == m.name)
                    .map(|((_, labels), v)| (labels.clone(), v.clone()))
                    .collect();
                (*m, of)
            })
            .filter(|(_, of)| !of.is_empty())
            .collect()
    }

    /// The metrics in Prometheus's text format (version 0.0.4).
    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        for (m, series) in self.snapshot() {
            let name = match m.kind {
                Kind::Counter => format!("{}_total", m.name),
                _ => m.name.to_string(),
            };
            let kind = match m.kind {
                Kind::Counter => "counter",
                Kind::Gauge => "gauge",
                Kind::Histogram(_) => "histogram",
            };
            let _ = writeln!(out, "# HELP {name} {}", m.help);
            let _ = writeln!(out, "# TYPE {name} {kind}");
            for (labels, value) in series {
                match (value, m.kind) {
                    (Value::Number(x), _) => {
                        let _ = writeln!(out, "{name}{} {}", label_set(&labels, None), number(x));
                    }
                    (Value::Histogram(h), Kind::Histogram(bounds)) => {
                        let mut cumulative = 0;
                        for (i, c) in h.counts.iter().enumerate() {
                            cumulative += c;
                            let le = bounds.get(i).map_or("+Inf".to_string(), |b| number(*b));
                            let _ = writeln!(
                                out,
                                "{name}_bucket{} {cumulative}",
                                label_set(&labels, Some(&le))
                            );
                        }
                        let _ = writeln!(
                            out,
                            "{name}_sum{} {}",
                            label_set(&labels, None),
                            number(h.sum)
                        );
                        let _ =
                            writeln!(out, "{name}_count{} {}", label_set(&labels, None), h.count);
                    }
                    (Value::Histogram(_), _) => {}
                }
            }
        }
        out
    }
}

fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// `{a="x",b="y"}` (with `le` last), escaped as the format says; empty without labels.
fn label_set(labels: &Labels, le: Option<&str>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_text_counts_and_escapes() {
        let m = Metrics::default();
        m.add(
            RUNS_FINISHED,
            vec![("app", "a\"b".into()), ("status", "completed".into())],
            1.0,
        );
        m.add(
            RUNS_FINISHED,
            vec![("app", "a\"b".into()), ("status", "completed".into())],
            1.0,
        );
        m.observe(COMMIT_RECORDS, Vec::new(), 3.0);
        m.observe(COMMIT_RECORDS, Vec::new(), 700.0);
        let text = m.prometheus();
        assert!(
            text.contains("# TYPE cuga_flo_runs_finished_total counter"),
            "{text}"
        );
        assert!(
            text.contains("cuga_flo_runs_finished_total{app=\"a\\\"b\",status=\"completed\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("cuga_flo_journal_commit_records_bucket{le=\"5\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("cuga_flo_journal_commit_records_bucket{le=\"1000\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("cuga_flo_journal_commit_records_bucket{le=\"+Inf\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("cuga_flo_journal_commit_records_count 2"),
            "{text}"
        );
        assert!(
            !text.contains("cuga_flo_runs_started"),
            "no series, no metric: {text}"
        );
    }
}
