//! OpenTelemetry checked against real backends (`support::telemetry`): a run's trace in
//! Jaeger is its journal — one span per control point record, one per model call with
//! the GenAI attributes, under the run's span — and the model server got the control
//! point's `traceparent`; a flow delegating over A2A to served flows is one trace with
//! them; Debian's Prometheus scrapes `serve --metrics` and its run counters are the runs
//! made. Telemetry off, nothing is exported and the journal says no trace.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::llm_run::{Workspace, plain_inputs};
use crate::support::a2a_served::A2aServed;
use crate::support::chat_server::{self, ChatServer, Reply};
use crate::support::telemetry::{Jaeger, Prometheus, get_text, jaeger, parent, tag};

fn journal(run_dir: &Path) -> Vec<Value> {
    let runs = run_dir.join("runs");
    let dir = std::fs::read_dir(&runs)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .next()
        .expect("a run");
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A service name of this test's own, so its traces are told from the others'.
fn service(test: &str) -> String {
    format!("cuga-flo-{test}-{}", std::process::id())
}

/// `cuga-flo` in the repository, its spans sent to `jaeger` as `service`.
fn traced(jaeger: &Jaeger, service: &str) -> Command {
    let mut c = Command::cargo_bin("cuga-flo").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &jaeger.otlp)
        .env("OTEL_SERVICE_NAME", service)
        .write_stdin("")
        .timeout(Duration::from_secs(120));
    c
}

#[test]
fn a_model_run_is_one_trace_whose_spans_are_its_journal() {
    let Some(jaeger) = jaeger() else { return };
    let server = ChatServer::start(Reply::from_schema_first_choice);
    let ws = Workspace::new();
    let name = service("model");
    ws.start(&server, &plain_inputs())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &jaeger.otlp)
        .env("OTEL_SERVICE_NAME", &name)
        .assert()
        .success();
    let run_dir = ws.run_dir();
    let journal = journal(&run_dir);
    let trace_id = journal[0]["trace"]["trace_id"]
        .as_str()
        .expect("run_started says the trace")
        .to_string();
    // The journal's control points and model calls.
    let mut points: Vec<(String, String)> = Vec::new();
    let mut calls = 0;
    for e in &journal {
        let kind = match e["event"].as_str().unwrap() {
            "task_finished" => "task",
            "gateway_routed" => "gateway",
            "hook_evaluated" => "hook",
            "model_called" => {
                calls += 1;
                continue;
            }
            _ => continue,
        };
        let node = e["node"].as_str().or(e["hook"].as_str()).unwrap();
        points.push((kind.to_string(), node.to_string()));
    }
    assert!(calls > 0, "the run called the model");
    let expected = points.len() + calls + 1;
    let traces = jaeger.traces(&name, |t| {
        t.len() == 1
            && t[0]["spans"]
                .as_array()
                .is_some_and(|s| s.len() >= expected)
    });
    assert_eq!(traces.len(), 1, "one trace for the run: {traces:?}");
    let trace = &traces[0];
    assert_eq!(trace["traceID"], trace_id.as_str());
    let spans = trace["spans"].as_array().unwrap();
    assert_eq!(spans.len(), expected, "{trace}");

    // One span per control point record, the run's span their parent.
    let run = spans
        .iter()
        .find(|s| s["operationName"] == "run loan_approval")
        .expect("the run's span");
    let mut seen: Vec<(String, String)> = spans
        .iter()
        .filter_map(|s| {
            let kind = tag(s, "cuga_flo.control_point.kind")?.as_str()?.to_string();
            assert_eq!(parent(s), run["spanID"].as_str(), "{s}");
            Some((kind, tag(s, "cuga_flo.element.id")?.as_str()?.to_string()))
        })
        .collect();
    seen.sort();
    points.sort();
    assert_eq!(seen, points);

    // One span per model call, with the GenAI attributes, under its control point.
    let cp_ids: BTreeSet<&str> = spans
        .iter()
        .filter(|s| tag(s, "cuga_flo.control_point.kind").is_some())
        .filter_map(|s| s["spanID"].as_str())
        .collect();
    let model_spans: Vec<&Value> = spans
        .iter()
        .filter(|s| tag(s, "gen_ai.operation.name") == Some(&json!("chat")))
        .collect();
    assert_eq!(model_spans.len(), calls);
    for s in &model_spans {
        assert_eq!(
            tag(s, "gen_ai.request.model"),
            Some(&json!(chat_server::MODEL))
        );
        assert!(tag(s, "gen_ai.response.finish_reasons").is_some(), "{s}");
        assert!(cp_ids.contains(parent(s).unwrap()), "{s}");
    }
    // The model server was told each call's control point as the parent.
    let requests = server.requests();
    assert_eq!(requests.len(), calls);
    for r in &requests {
        let tp = r
            .header("traceparent")
            .expect("a traceparent on the model request");
        let parts: Vec<&str> = tp.split('-').collect();
        assert_eq!(parts[1], trace_id, "{tp}");
        assert!(
            cp_ids.contains(parts[2]),
            "{tp}: not a control point's span"
        );
    }
    // The run's attributes.
    assert_eq!(tag(run, "cuga_flo.app"), Some(&json!("loan_approval")));
    assert_eq!(tag(run, "cuga_flo.run.status"), Some(&json!("completed")));
}

#[test]
fn a_flow_delegating_over_a2a_is_one_trace_with_the_flows_it_called() {
    let Some(jaeger) = jaeger() else { return };
    let name = service("a2a");
    let run_dir = TempDir::new().unwrap();
    traced(jaeger, &name)
        .env("CLAIM_DESK_TOKEN", "a-token-for-this-test-only")
        .args(["start", "claim_intake", "--scenario", "delegated_and_paid"])
        .arg("--run-dir")
        .arg(run_dir.path())
        .assert()
        .success();
    let apps = |t: &Value| -> BTreeSet<String> {
        (t["spans"].as_array().into_iter().flatten())
            .filter_map(|s| tag(s, "cuga_flo.app")?.as_str().map(str::to_string))
            .collect()
    };
    let traces = jaeger.traces(&name, |t| t.len() == 1 && apps(&t[0]).len() == 3);
    assert_eq!(traces.len(), 1, "one trace: {traces:?}");
    assert_eq!(
        apps(&traces[0]),
        BTreeSet::from(["claim_adjuster", "claim_assessor", "claim_intake"].map(String::from))
    );
    // The served assessor's run is a child of the caller's delegated task.
    let spans = traces[0]["spans"].as_array().unwrap();
    let delegated = spans
        .iter()
        .find(|s| {
            s["operationName"] == "task Assess the claim"
                && tag(s, "cuga_flo.app") == Some(&json!("claim_intake"))
        })
        .expect("the delegated task's span");
    let served = spans
        .iter()
        .find(|s| s["operationName"] == "run claim_assessor")
        .expect("the served run's span");
    assert_eq!(parent(served), delegated["spanID"].as_str());
    screenshot(jaeger, traces[0]["traceID"].as_str().unwrap());
}

/// The trace in Jaeger's UI as `docs/jaeger-trace.png` (the picture of the README and
/// docs/operations.md), when CUGA_FLO_UPDATE_SCREENSHOT is set and the Jaeger started has
/// a UI (`JAEGER_UI_ASSETS`: a built jaeger-ui, which the Go module does not carry).
fn screenshot(jaeger: &Jaeger, trace: &str) {
    if std::env::var_os("CUGA_FLO_UPDATE_SCREENSHOT").is_none()
        || std::env::var_os("JAEGER_UI_ASSETS").is_none()
    {
        return;
    }
    let Some(browser) = crate::support::webdriver::Browser::start() else {
        return;
    };
    browser.go(&format!("{}/trace/{trace}?uiEmbed=v0", jaeger.query));
    browser.wait_for(
        "the trace's spans drawn",
        "return document.querySelectorAll('.span-row').length > 10",
        30,
    );
    std::thread::sleep(Duration::from_millis(500));
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    std::fs::write(docs.join("jaeger-trace.png"), browser.screenshot()).unwrap();
}

#[test]
fn prometheus_scrapes_serve_and_its_run_counters_are_the_runs_made() {
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps/a2a_claim");
    let served = A2aServed::start::<[&str; 0], _>(
        [],
        [
            app.as_os_str(),
            "--metrics".as_ref(),
            "127.0.0.1:0".as_ref(),
        ],
        None,
        &[],
        1,
    );
    let metrics = served.metrics.clone().expect("a `metrics URL` line");
    let target = metrics
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_string();
    let Some(prometheus) = Prometheus::scraping(&target) else {
        return;
    };
    let runs = 3;
    for i in 0..runs {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":
               {{"messageId":"m{i}","role":"ROLE_USER","parts":[{{"data":{{"claimant":"Ed","amount":20}}}}]}}}}}}"#
        );
        let reply = served.post("a2a_claim", &body, &["A2A-Version: 1.0"]);
        assert_eq!(
            reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{reply}"
        );
    }
    let total = |q: &str| prometheus.value_when(q, runs as f64);
    assert_eq!(
        total("sum(cuga_flo_runs_finished_total{status=\"completed\"})"),
        Some(runs as f64)
    );
    assert_eq!(total("sum(cuga_flo_runs_started_total)"), Some(runs as f64));
    // Control points are measured too, by kind and decider.
    let text = get_text(&metrics);
    assert!(
        text.contains("# TYPE cuga_flo_control_point_duration_seconds histogram"),
        "{text}"
    );
    assert!(
        text.contains("cuga_flo_journal_commit_records_bucket"),
        "{text}"
    );
    // What the server holds now: nothing going, nothing waiting.
    assert!(
        text.contains("cuga_flo_runs_held{state=\"going\"} 0"),
        "{text}"
    );
    assert!(
        text.contains("cuga_flo_runs_held{state=\"waiting\"} 0"),
        "{text}"
    );
}

/// Telemetry off (no OTLP endpoint): the journal names no trace and the run is as it was.
#[test]
fn without_an_endpoint_nothing_is_traced() {
    let (_, first) = untraced(
        &[],
        &[
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        ],
    );
    assert!(first.get("trace").is_none(), "{first}");
}

/// A protocol cuga-flo does not speak is said, and the run goes on untraced.
#[test]
fn an_unsupported_otlp_protocol_is_said_and_nothing_is_exported() {
    let (stderr, first) = untraced(
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
        &[],
    );
    assert!(
        stderr.contains("telemetry off: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported"),
        "{stderr}"
    );
    assert!(first.get("trace").is_none(), "{first}");
}

/// `expense_claim`'s approved scenario run with `set` and without `unset` in the
/// environment: its stderr and its journal's first record (`run_started`).
fn untraced(set: &[(&str, &str)], unset: &[&str]) -> (String, Value) {
    let run_dir = TempDir::new().unwrap();
    let mut cmd = Command::cargo_bin("cuga-flo").unwrap();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    for var in unset {
        cmd.env_remove(var);
    }
    for (var, value) in set {
        cmd.env(var, value);
    }
    let out = cmd
        .args([
            "start",
            "expense_claim",
            "--scenario",
            "approved",
            "--run-dir",
        ])
        .arg(run_dir.path())
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let first = journal(run_dir.path()).swap_remove(0);
    assert_eq!(first["event"], "run_started");
    (stderr, first)
}

/// A run that parks and is answered later, by another process, continues its trace: the
/// resume is a span of the same trace under the run's first, and the question the person
/// was asked is an event of the first.
#[test]
fn a_resumed_run_continues_its_trace() {
    let Some(jaeger) = jaeger() else { return };
    let name = service("resume");
    let run_dir = TempDir::new().unwrap();
    let cuga = || traced(jaeger, &name);
    cuga()
        .args(["start", "expense_claim", "--no-model", "--no-prompt"])
        .args([
            "--var",
            "employee=bob",
            "--var",
            "amount=120",
            "--var",
            "purpose=train",
        ])
        .arg("--run-dir")
        .arg(run_dir.path())
        .assert()
        .code(3);
    let first = journal(run_dir.path());
    let run_id = first[0]["run_id"].as_str().unwrap().to_string();
    cuga()
        .args([
            "runs",
            "answer",
            &run_id,
            "Task_CheckReceipt",
            "--by",
            "ana",
        ])
        .args([
            "--outputs",
            r#"{"receipt_ok": true, "checked_amount": 120}"#,
        ])
        .arg("--run-dir")
        .arg(run_dir.path())
        .assert()
        .code(3);
    let traces = jaeger.traces(&name, |t| {
        t.len() == 1
            && (t[0]["spans"].as_array().into_iter().flatten())
                .any(|s| s["operationName"] == "resume expense_claim")
    });
    assert_eq!(traces.len(), 1, "{traces:?}");
    let spans = traces[0]["spans"].as_array().unwrap();
    let run = spans
        .iter()
        .find(|s| s["operationName"] == "run expense_claim")
        .expect("the first process's span");
    let resume = spans
        .iter()
        .find(|s| s["operationName"] == "resume expense_claim")
        .expect("the resume's span");
    assert_eq!(parent(resume), run["spanID"].as_str());
    assert_eq!(traces[0]["traceID"], first[0]["trace"]["trace_id"]);
    let events: Vec<&str> = (run["logs"].as_array().into_iter().flatten())
        .flat_map(|l| l["fields"].as_array().into_iter().flatten())
        .filter(|f| f["key"] == "event")
        .filter_map(|f| f["value"].as_str())
        .collect();
    assert!(events.contains(&"question parked"), "{events:?}");
    assert!(events.contains(&"waiting"), "{events:?}");
    // The answered task's span is in the resume, under it.
    let task = spans
        .iter()
        .find(|s| tag(s, "cuga_flo.element.id") == Some(&json!("Task_CheckReceipt")))
        .expect("the answered task's span");
    assert_eq!(parent(task), resume["spanID"].as_str());
    assert_eq!(tag(task, "cuga_flo.decider"), Some(&json!("human")));
}
