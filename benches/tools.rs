//! What a task agent's tool calls cost, against a local MCP server over stdio: the bench
//! binary itself, started again as a one-tool server (`echo`, read-only, answering at
//! once), so that the numbers are cuga-flo's own and not a tool's.
//!
//! - `raw_call`: one `Toolbox::call`, the MCP round trip over stdio and nothing else;
//! - `run_with_calls`: a journalled run (`off`: no fsync; `batch`, the default: an fsync
//!   per commit) of a one-task process whose task's
//!   scripted answer makes `n` calls through the harness's tool gate: each call
//!   governed (offered? confirmed?), journalled before it is made and after (each a
//!   commit: a write and the head file), and made;
//! - `run_with_calls_in_memory`: the same with the events kept in memory (the journal's
//!   share is the difference).
//!
//! The loop's own overhead per call (excluding the tool and the model) is
//! `(run_with_calls(50) − run_with_calls(1)) / 49 − raw_call`; calls a run can make per
//! second is `49 / (run_with_calls(50) − run_with_calls(1))`.
//! Run with `cargo bench --bench tools`.

use std::path::Path;
use std::sync::Arc;

use cuga_flo::app::{load_app, registry::app_from_config};
use cuga_flo::engine::WorkflowEngine;
use cuga_flo::engine::native::NativeEngine;
use cuga_flo::harness::FlowAgent;
use cuga_flo::journal::store::{Journal, MemorySink};
use cuga_flo::journal::{Anchor, Durability, JournalOptions};
use cuga_flo::reason::ScriptedReasoner;
use cuga_flo::tools::Toolbox;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::json;

#[path = "support/mod.rs"]
mod support;

/// Set in the environment of the bench binary started as the MCP server.
const SERVER_ENV: &str = "CUGA_FLO_BENCH_MCP_SERVER";

fn main() {
    if std::env::var_os(SERVER_ENV).is_some() {
        serve_echo();
        return;
    }
    divan::main();
}

// ---- the server ----

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// What to say back.
    text: String,
}

#[derive(Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    #[tool(
        description = "Say the text back.",
        annotations(read_only_hint = true, idempotent_hint = true)
    )]
    async fn echo(&self, Parameters(a): Parameters<EchoArgs>) -> String {
        a.text
    }
}

#[tool_handler(router = self.tool_router, name = "bench-echo")]
impl ServerHandler for Echo {}

fn serve_echo() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = Echo {
            tool_router: Echo::tool_router(),
        }
        .serve(rmcp::transport::stdio())
        .await
        .expect("the echo server starts");
        let _ = server.waiting().await;
    });
}

// ---- the app ----

/// Write a one-task app (process key `bench_v1`) whose task may call `echo.echo`, served
/// by this binary over stdio; its config's path.
fn app(dir: &Path) -> std::path::PathBuf {
    let config_dir = dir.join("bench/config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(
        config_dir.join("model.bpmn"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
<process id="P" isExecutable="true">
<startEvent id="start"/><sequenceFlow id="f1" sourceRef="start" targetRef="T"/>
<task id="T" name="Echo"/><sequenceFlow id="f2" sourceRef="T" targetRef="end"/>
<endEvent id="end"/>
</process>
</definitions>
"#,
    )
    .unwrap();
    let exe = std::env::current_exe().unwrap();
    let config = json!({
        "flow": {"id": "bench_v1", "name": "Bench", "bpmn_file": "model.bpmn"},
        "variables": {"done": false},
        "mcp_servers": {"echo": {"command": [exe], "env": {SERVER_ENV: "1"}}},
        "tasks": [{
            "id": "T",
            "output_mapping": {"done": "done"},
            "agent": {"tools": ["echo.echo"], "max_tool_calls": 1000},
        }],
    });
    let path = config_dir.join("bench_config.yaml");
    // JSON is YAML.
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// The harness of the app, whose task's scripted answer makes `n` calls.
fn agent(config: &Path, n: usize) -> Arc<FlowAgent> {
    let calls: Vec<_> = (0..n)
        .map(|i| json!({"tool": "echo.echo", "arguments": {"text": format!("call {i}")}}))
        .collect();
    let answers = json!({"answers": {"T": {"tools": calls, "outputs": {"done": true}}}});
    let reasoner = ScriptedReasoner::from_value(answers, "the bench").unwrap();
    let loaded = load_app(&app_from_config(config));
    Arc::new(FlowAgent::new(&loaded, Arc::new(reasoner)).unwrap())
}

#[divan::bench(sample_count = 50, sample_size = 20)]
fn raw_call(bencher: divan::Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_app(&app_from_config(&app(dir.path())));
    let toolbox = Toolbox::of(loaded.config.as_ref().unwrap());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(toolbox.tools("echo")).unwrap();
    bencher.bench_local(|| {
        rt.block_on(toolbox.call("echo", "echo", json!({"text": "hi"}), "k"))
            .unwrap()
    });
}

/// The journal of a run: `off` (no fsync: what a crash of the process survives) or
/// `batch` (the default: an fsync per commit, so two per call).
const DURABILITY: [(Durability, usize); 4] = [
    (Durability::Off, 1),
    (Durability::Off, 50),
    (Durability::Batch, 1),
    (Durability::Batch, 50),
];

#[divan::bench(args = DURABILITY, sample_count = 20)]
fn run_with_calls(bencher: divan::Bencher, (durability, n): (Durability, usize)) {
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(&app(dir.path()), n);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut run = 0;
    bencher.bench_local(|| {
        run += 1;
        let journal = Arc::new(
            Journal::create(
                &dir.path().join(format!("r{run}")),
                JournalOptions {
                    durability,
                    anchor: Anchor::new(format!("run-{run}"), None),
                },
            )
            .unwrap(),
        );
        agent.journal_remote_tasks(journal.clone());
        let outcome = rt
            .block_on(NativeEngine::new().run(
                support::request(&agent, run),
                agent.clone(),
                journal,
            ))
            .unwrap();
        assert_eq!(
            outcome.variables.get("done"),
            Some(&json!(true)),
            "the run ends with the task's outputs"
        );
    });
}

#[divan::bench(args = [1, 50], sample_count = 20)]
fn run_with_calls_in_memory(bencher: divan::Bencher, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let agent = agent(&app(dir.path()), n);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut run = 0;
    bencher.bench_local(|| {
        run += 1;
        let events = Arc::new(MemorySink::new());
        agent.journal_remote_tasks(events.clone());
        rt.block_on(NativeEngine::new().run(support::request(&agent, run), agent.clone(), events))
            .unwrap()
    });
}
