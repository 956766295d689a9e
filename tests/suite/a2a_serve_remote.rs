//! `cuga-flo serve --a2a` running a flow that delegates a task to a remote agent (a peer
//! written with the official A2A Python SDK, `tests/interop/a2a_peer.py`, working slowly):
//! the served run journals the remote task as soon as the agent assigns it
//! (`remote_task_started`, as `start` does), and a `CancelTask` from the served task's
//! caller cancels the run as `runs cancel` does: `CancelTask` at the peer for the remote
//! task, then `run_cancelled` (by the A2A caller, the reason the caller gave) and
//! `run_finished` with status `cancelled`. The served side's client is plain JSON-RPC over
//! HTTP/1.1. A run started through `serve --http`'s `run_process` journals its remote
//! task too. Needs `python3` (3.10+) with `venv` and `pip`, and PyPI the first time.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cuga_flo::journal::Event;
use cuga_flo::journal::store::{JOURNAL_FILE, read_journal, run_dir};
use cuga_flo::vocab::RunStatus;
use serde_json::{Value, json};

use crate::support::python;
use python::{a2a_python, interop_dir, root};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");
const LIMIT: Duration = Duration::from_secs(30);

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The slow peer on 127.0.0.1: its URL, its request log and its cancellation log.
fn slow_peer(dir: &Path, secs: &str) -> (Killed, String) {
    let port_file = dir.join("port");
    let child = Command::new(a2a_python())
        .arg(interop_dir().join("a2a_peer.py"))
        .arg("slow")
        .arg("--port-file")
        .arg(&port_file)
        .arg("--log")
        .arg(dir.join("requests.jsonl"))
        .env("A2A_PEER_CANCEL_LOG", dir.join("cancel.jsonl"))
        .env("A2A_PEER_SLOW_SECS", secs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the peer starts");
    let child = Killed(child);
    let started = Instant::now();
    let port = loop {
        if let Ok(p) = std::fs::read_to_string(&port_file)
            && !p.trim().is_empty()
        {
            break p.trim().to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no peer");
        std::thread::sleep(Duration::from_millis(50));
    };
    while std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err() {
        assert!(started.elapsed() < Duration::from_secs(60), "peer not up");
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, format!("http://127.0.0.1:{port}"))
}

/// The remote_review app (tests/suite/a2a.rs's) in `apps`, delegating to `url`.
fn remote_review(apps: &Path, url: &str) {
    let src = root().join("tests/fixtures/apps/remote_review/config");
    let dst = apps.join("remote_review/config");
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::copy(
        src.join("remote_review.bpmn"),
        dst.join("remote_review.bpmn"),
    )
    .unwrap();
    let config = std::fs::read_to_string(src.join("remote_review_config.yaml"))
        .unwrap()
        .replace("PEER_URL", url);
    std::fs::write(dst.join("remote_review_config.yaml"), config).unwrap();
}

/// `serve --a2a 127.0.0.1:0 remote_review` (or `--http`): the process and its
/// host:port (and path).
fn serve(dir: &Path) -> (Killed, String) {
    serve_on(dir, "--a2a")
}

fn serve_on(dir: &Path, transport: &str) -> (Killed, String) {
    let stderr = File::create(dir.join("stderr.log")).unwrap();
    let mut child = Command::new(BIN)
        .args(["--color", "never", "--apps-dir"])
        .arg(dir.join("apps"))
        .args([
            "serve",
            transport,
            "127.0.0.1:0",
            "--no-model",
            "remote_review",
        ])
        .arg("--run-dir")
        .arg(dir.join("base"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
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
                std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default()
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
        "POST /remote_review HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/a2a+json\r\n\
         A2A-Version: 1.0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap_or_else(|_| panic!("{response}"))
}

fn events(base: &Path, run: &str) -> Vec<Event> {
    let path = run_dir(base, run).join(JOURNAL_FILE);
    read_journal(&path)
        .map(|j| j.records.into_iter().map(|r| r.event).collect())
        .unwrap_or_default()
}

/// Wait (bounded) until `done` holds for the run's events; the events.
fn wait_for(base: &Path, run: &str, what: &str, done: impl Fn(&[Event]) -> bool) -> Vec<Event> {
    let started = Instant::now();
    loop {
        let events = events(base, run);
        if done(&events) {
            return events;
        }
        assert!(started.elapsed() < LIMIT, "no {what}: {events:#?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn lines(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn a_served_delegation_is_journalled_and_cancelling_the_task_cancels_the_run_and_its_remote_task() {
    let dir = tempfile::tempdir().unwrap();
    let (_peer, url) = slow_peer(dir.path(), "60");
    remote_review(&dir.path().join("apps"), &url);
    let (_served, host) = serve(dir.path());
    let base = dir.path().join("base");

    // Sent and returned at once: the run delegates the review to the slow peer.
    let reply = post(
        &host,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER",
                        "parts": [{"data": {"amount": 900}}]},
            "configuration": {"returnImmediately": true}}}),
    );
    let task_id = reply["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"))
        .to_string();

    // The remote task is journalled as soon as the peer assigns it, before it ends.
    let events = wait_for(&base, &task_id, "remote_task_started", |e| {
        e.iter()
            .any(|e| matches!(e, Event::RemoteTaskStarted { .. }))
    });
    let remote_id = events
        .iter()
        .find_map(|e| match e {
            Event::RemoteTaskStarted { node, remote, .. } => {
                assert_eq!(node, "Activity_review");
                assert_eq!(remote.agent, "reviewer");
                Some(remote.task_id.clone())
            }
            _ => None,
        })
        .unwrap();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::TaskFinished { .. } | Event::RunFinished { .. })),
        "{events:#?}"
    );

    // The caller cancels the task, saying why.
    let reply = post(
        &host,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {
            "id": task_id, "metadata": {"reason": "the claim was withdrawn"}}}),
    );
    assert_eq!(
        reply["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{reply}"
    );

    // The run ends as `runs cancel` ends one: its remote task cancelled at the peer, by
    // the A2A caller, for the reason given.
    let events = wait_for(&base, &task_id, "run_finished", |e| {
        e.iter().any(|e| matches!(e, Event::RunFinished { .. }))
    });
    let cancelled = events
        .iter()
        .find_map(|e| match e {
            Event::RunCancelled { by, reason, remote } => Some((by, reason, remote)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no run_cancelled: {events:#?}"));
    assert_eq!(cancelled.0.as_deref(), Some("the A2A caller"));
    assert_eq!(cancelled.1.as_deref(), Some("the claim was withdrawn"));
    assert_eq!(cancelled.2.len(), 1, "{:?}", cancelled.2);
    let r = &cancelled.2[0];
    assert_eq!(
        (r.agent.as_str(), r.task_id.as_str(), r.node.as_str()),
        ("reviewer", remote_id.as_str(), "Activity_review")
    );
    assert!(r.error.is_none(), "{r:?}");
    let finished = events.last().unwrap();
    match finished {
        Event::RunFinished {
            status, message, ..
        } => {
            assert_eq!(*status, RunStatus::Cancelled);
            assert_eq!(
                message.as_deref(),
                Some("cancelled by the A2A caller: the claim was withdrawn")
            );
        }
        other => panic!("the last record is {other:?}"),
    }

    // The peer was sent the review once and its cancellation once.
    let requests = lines(&dir.path().join("requests.jsonl"));
    let count = |m: &str| requests.iter().filter(|r| r["method"] == m).count();
    assert_eq!(count("SendMessage"), 1, "{requests:?}");
    assert_eq!(count("CancelTask"), 1, "{requests:?}");
    let started = Instant::now();
    while !std::fs::read_to_string(dir.path().join("cancel.jsonl"))
        .unwrap_or_default()
        .contains(&remote_id)
    {
        assert!(started.elapsed() < LIMIT, "the peer saw no cancellation");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_process_delegation_under_serve_http_is_journalled() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let dir = tempfile::tempdir().unwrap();
    let (_peer, url) = slow_peer(dir.path(), "0.5");
    remote_review(&dir.path().join("apps"), &url);
    let (_served, mcp) = serve_on(dir.path(), "--http");
    let base = dir.path().join("base");

    cuga_flo::tls::install_provider();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://{mcp}")),
    );
    let client = tokio::time::timeout(LIMIT, ().serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize failed");
    let args = json!({"process_key": "remote_review", "run_id": "served-remote",
                      "variables": {"amount": 900}});
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
        "completed",
        "{result:?}"
    );

    // The remote task was journalled in the run's journal, inside the review's visit.
    let events = events(&base, "served-remote");
    let started = events
        .iter()
        .position(|e| {
            matches!(e, Event::RemoteTaskStarted { node, remote, .. }
            if node == "Activity_review" && remote.agent == "reviewer")
        })
        .unwrap_or_else(|| panic!("no remote_task_started: {events:#?}"));
    let finished = events
        .iter()
        .position(|e| matches!(e, Event::TaskFinished { node, .. } if node == "Activity_review"))
        .unwrap();
    assert!(started < finished, "{events:#?}");
    let _ = client.cancel().await;
}
