//! Consultations in served runs: a flow served by `cuga-flo serve --a2a` (and `serve
//! --http`'s `run_process`) whose gateway consults a remote person through an agent with
//! `wait` (a peer written with the official A2A Python SDK, `tests/interop/a2a_peer.py`,
//! whose person takes a few seconds). Past `wait` the served run parks on the
//! consultation; the server holds it and resumes it in-process when the poll deadline
//! comes, following the consultation up with `GetTask` (never sending it again), and the
//! gateway routes by the reply. Needs `python3` (3.10+) with `venv` and `pip`, and PyPI
//! the first time.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::a2a as support;
use crate::support::chat_server;
use support::{Peer, fixture_app};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");
const LIMIT: Duration = Duration::from_secs(40);

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `serve TRANSPORT 127.0.0.1:0 remote_consult` over the apps in `apps`, runs under
/// `base`, with `envs` (`--no-model` unless they name a model): the process and its
/// host:port.
fn serve(apps: &Path, base: &Path, transport: &str, envs: &[(&str, String)]) -> (Killed, String) {
    let stderr = File::create(base.with_extension("stderr.log")).unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["--color", "never", "--apps-dir"])
        .arg(apps)
        .args(["serve", transport, "127.0.0.1:0", "remote_consult"])
        .arg("--run-dir")
        .arg(base)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    if envs.is_empty() {
        cmd.arg("--no-model");
    }
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let child = Killed(child);
    let host = line
        .trim()
        .strip_prefix("listening http://")
        .unwrap_or_else(|| {
            panic!(
                "no `listening` line but {line:?}: {}",
                std::fs::read_to_string(base.with_extension("stderr.log")).unwrap_or_default()
            )
        })
        .to_string();
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    (child, host)
}

fn post(host: &str, body: &Value) -> Value {
    let body = body.to_string();
    let mut tcp = std::net::TcpStream::connect(host).unwrap();
    tcp.set_read_timeout(Some(LIMIT)).unwrap();
    write!(
        tcp,
        "POST /remote_consult HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/a2a+json\r\n\
         A2A-Version: 1.0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap_or_else(|_| panic!("{response}"))
}

/// The records of run `run` under `base`.
fn records(base: &Path, run: &str) -> Vec<Value> {
    std::fs::read_to_string(base.join("runs").join(run).join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Wait (bounded) until the run has a record with `event`; its records.
fn wait_for(base: &Path, run: &str, event: &str) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let records = records(base, run);
        if records.iter().any(|r| r["event"] == event) {
            return records;
        }
        assert!(
            started.elapsed() < LIMIT,
            "no {event}: {}",
            serde_json::to_string_pretty(&records).unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn position(records: &[Value], what: impl Fn(&Value) -> bool) -> usize {
    records
        .iter()
        .position(what)
        .unwrap_or_else(|| panic!("{}", serde_json::to_string_pretty(records).unwrap()))
}

/// The consultation app pointed at the peer, its agent waiting `wait` live.
fn consult_app(peer: &Peer, wait: &str) -> tempfile::TempDir {
    fixture_app("remote_consult", &peer.url, |c| {
        c.replace("timeout: 10", &format!("timeout: 60\n    wait: {wait}"))
    })
}

/// What a served run that parked on its consultation and was resumed in-process by the
/// server journalled: the parked question names the remote task; the server resumed the
/// run (`run_resumed`) and followed the task up; the gateway then routed as `decided_by`
/// (`remote`: the person's choice; `model`: a model that consulted).
fn assert_parked_and_resumed(records: &[Value], decided_by: &str) -> String {
    let show = || serde_json::to_string_pretty(records).unwrap();
    let started = position(records, |r| r["event"] == "remote_task_started");
    assert_eq!(records[started]["node"], "Gateway_shipping");
    let parked = position(records, |r| r["event"] == "question_parked");
    assert!(started < parked, "{}", show());
    let remote = &records[parked]["question"]["remote"];
    assert_eq!(remote["agent"], "advisor", "{}", show());
    assert_eq!(remote["state"], "working", "{}", show());
    let task_id = remote["task_id"].as_str().unwrap().to_string();
    let waiting = position(records, |r| r["event"] == "run_waiting");
    let resumed = position(records, |r| r["event"] == "run_resumed");
    assert!(parked < waiting && waiting < resumed, "{}", show());
    let follow_up = position(records, |r| {
        r["event"] == "model_called"
            && r["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with(&format!("follow-up task {task_id}")))
    });
    assert!(resumed < follow_up, "{}", show());
    let routed = position(records, |r| {
        r["event"] == "gateway_routed" && r["node"] == "Gateway_shipping"
    });
    assert_eq!(records[routed]["decided_by"], decided_by, "{}", show());
    assert_eq!(
        records[routed]["flows"],
        json!(["Flow_express"]),
        "{}",
        show()
    );
    let end = records.last().unwrap();
    assert_eq!(end["event"], "run_finished", "{}", show());
    assert_eq!(end["status"], "completed", "{}", show());
    task_id
}

#[test]
fn a_served_consultation_past_its_wait_parks_and_the_server_resumes_the_run_with_the_reply() {
    // The person behind the agent takes 3 s; the served run waits 1 s live, then parks.
    let peer = Peer::start("choose", &[], &[("A2A_PEER_DELAY_SECS", "3")]);
    let apps = consult_app(&peer, "1s");
    let base = apps.path().join("base");
    let (_served, host) = serve(apps.path(), &base, "--a2a", &[]);
    let reply = post(
        &host,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER",
                        "parts": [{"data": {"order_id": "B-9"}}]},
            "configuration": {"returnImmediately": true}}}),
    );
    let task = reply["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"))
        .to_string();

    // Parked on the consultation, the served task still working.
    let parked = wait_for(&base, &task, "run_waiting");
    assert!(
        !parked.iter().any(|r| r["event"] == "gateway_routed"),
        "{parked:?}"
    );
    let got = post(
        &host,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task}}),
    );
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_WORKING",
        "{got}"
    );

    // The server resumes it when the poll is due; once the person has chosen, the
    // gateway routes by their choice and the task completes.
    let done = wait_for(&base, &task, "run_finished");
    let remote_task = assert_parked_and_resumed(&done, "remote");
    let started = Instant::now();
    loop {
        let got = post(
            &host,
            &json!({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task}}),
        );
        if got["result"]["status"]["state"] == "TASK_STATE_COMPLETED" {
            break;
        }
        assert!(started.elapsed() < LIMIT, "{got}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The consultation was sent once, followed up, never cancelled.
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
    assert!(peer.count("GetTask") >= 2, "{:?}", peer.requests());
    assert!(
        peer.requests()
            .iter()
            .all(|r| r["task_id"].is_null() || r["task_id"] == remote_task.as_str())
    );
}

/// A model that consults first, then routes by what the consultation said.
fn consulting_model() -> chat_server::ChatServer {
    chat_server::ChatServer::start(|r| {
        let messages = r.body["messages"].as_array().unwrap();
        let Some(tool) = messages.iter().rev().find(|m| m["role"] == "tool") else {
            return chat_server::Reply::tool_call(
                "consult_user",
                r#"{"question": "Does the customer want express shipping?"}"#,
            );
        };
        let said = tool["content"].as_str().unwrap().to_string();
        let flow = if said.contains("prefers express") {
            "Flow_express"
        } else {
            "Flow_standard"
        };
        chat_server::Reply::completion(
            &json!({"reason": format!("consulted: {said}"), "flow": flow}).to_string(),
        )
    })
}

#[test]
fn a_served_model_that_consulted_continues_its_conversation_when_the_server_resumes_the_run() {
    let peer = Peer::start("consult", &[], &[("A2A_PEER_DELAY_SECS", "3")]);
    let model = consulting_model();
    let apps = consult_app(&peer, "1s");
    let base = apps.path().join("base");
    let env = support::model_env(&model.url(), chat_server::MODEL);
    let (_served, host) = serve(apps.path(), &base, "--a2a", &env);
    let reply = post(
        &host,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER",
                        "parts": [{"data": {"order_id": "B-9"}}]},
            "configuration": {"returnImmediately": true}}}),
    );
    let task = reply["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"))
        .to_string();
    let parked = wait_for(&base, &task, "run_waiting");
    let question = parked
        .iter()
        .find(|r| r["event"] == "question_parked")
        .unwrap();
    assert_eq!(
        question["question"]["remote"]["conversation"]["turns"][0]["tool_calls"][0]["name"],
        "consult_user",
        "{question}"
    );
    assert_eq!(model.count(), 1);

    let done = wait_for(&base, &task, "run_finished");
    assert_parked_and_resumed(&done, "model");
    // The model was asked once more, with its restored turn and the person's reply as
    // the tool's result; the consultation was sent once.
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "never re-asked for its earlier turn");
    let messages = requests[1].body["messages"].as_array().unwrap();
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("prefers express shipping"),
        "{tool}"
    );
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_process_consultation_under_serve_http_parks_and_is_resumed_by_the_server() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let peer = Peer::start("choose", &[], &[("A2A_PEER_DELAY_SECS", "3")]);
    let apps = consult_app(&peer, "1s");
    let base = apps.path().join("base");
    let (_served, mcp) = serve(apps.path(), &base, "--http", &[]);

    cuga_flo::tls::install_provider();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://{mcp}")),
    );
    let client = tokio::time::timeout(LIMIT, ().serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize failed");
    let args = json!({"process_key": "remote_consult", "run_id": "served-consult",
                      "variables": {"order_id": "B-9"}});
    let Value::Object(args) = args else {
        unreachable!()
    };
    let result = tokio::time::timeout(
        LIMIT,
        client.call_tool(CallToolRequestParams::new("run_process").with_arguments(args)),
    )
    .await
    .expect("run_process timed out")
    .expect("run_process failed");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        result.structured_content.as_ref().unwrap()["status"],
        "waiting",
        "{result:?}"
    );
    let base2 = base.clone();
    let done =
        tokio::task::spawn_blocking(move || wait_for(&base2, "served-consult", "run_finished"))
            .await
            .unwrap();
    assert_parked_and_resumed(&done, "remote");
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
    let _ = client.cancel().await;
}
