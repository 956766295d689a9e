//! Following remote A2A tasks over a stream (`SendStreamingMessage`, `SubscribeToTask`)
//! instead of polling `GetTask`, against the official Python `a2a-sdk` peer
//! (`tests/interop/a2a_peer.py --streaming`), and against a hand-written stream that
//! misbehaves. Needs `python3` (3.10+) with `venv` and `pip`, and PyPI the first time.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::a2a as a2a_support;
use a2a_support::{Peer, fixture_app};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

/// The remote_review app pointed at `url`, with `edit` applied to its config.
fn app(url: &str, edit: impl Fn(String) -> String) -> tempfile::TempDir {
    fixture_app("remote_review", url, |config| {
        edit(config.replace("    # AUTH", ""))
    })
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
    records: Vec<Value>,
}

impl Ran {
    fn show(&self) -> String {
        let journal: Vec<String> = self.records.iter().map(Value::to_string).collect();
        format!(
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- journal ---\n{}",
            self.code,
            self.stdout,
            self.stderr,
            journal.join("\n")
        )
    }

    /// The review's `task_finished`.
    fn review(&self) -> &Value {
        self.records
            .iter()
            .find(|r| r["event"] == "task_finished" && r["node"] == "Activity_review")
            .unwrap_or_else(|| panic!("no review\n{}", self.show()))
    }

    /// The exchange's steps as journalled: the detail of each `a2a:reviewer` call.
    fn steps(&self) -> Vec<String> {
        self.records
            .iter()
            .filter(|r| r["model"] == "a2a:reviewer")
            .filter_map(|r| r["detail"].as_str().map(str::to_string))
            .collect()
    }

    fn end(&self) -> &Value {
        self.records
            .iter()
            .rev()
            .find(|r| r["event"] == "run_finished")
            .unwrap_or_else(|| panic!("no end\n{}", self.show()))
    }
}

fn start(apps: &Path, extra: &[&str]) -> Ran {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let runs = apps.join(format!("runs-{n}"));
    let out = Command::new(BIN)
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .args([
            "--apps-dir",
            apps.to_str().unwrap(),
            "start",
            "remote_review",
        ])
        .args(["--run-dir", runs.to_str().unwrap(), "--no-model", "--json"])
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let mut records = Vec::new();
    for run in std::fs::read_dir(runs.join("runs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(run.path().join("journal.jsonl")).unwrap_or_default();
        records.extend(
            text.lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap()),
        );
    }
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        records,
    }
}

/// The kind of a journalled step (`card`, `send`, `status`, `stream`, `reply`, ...).
fn kind(step: &str) -> &str {
    step.split([' ', ':']).next().unwrap_or_default()
}

/// The outputs, without the ids that differ from run to run.
fn outputs(ran: &Ran) -> Value {
    let mut o = ran.review()["outputs"].clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("context_id");
        m.remove("task_id");
    }
    o
}

#[test]
fn a_delegation_over_a_stream_gets_the_same_outputs_and_journal_events_as_polling() {
    let streamed = Peer::start("data", &["--streaming"], &[]);
    let polled = Peer::start("data", &[], &[]);
    let a = start(app(&streamed.url, |c| c).path(), &[]);
    let b = start(app(&polled.url, |c| c).path(), &[]);
    assert_eq!(a.code, 0, "{}", a.show());
    assert_eq!(b.code, 0, "{}", b.show());
    // The streaming agent was sent one SendStreamingMessage and never polled; the other
    // (its card says no streaming) was sent SendMessage and polled.
    assert_eq!(
        streamed.methods(),
        vec!["SendStreamingMessage"],
        "{}",
        a.show()
    );
    assert_eq!(polled.count("SendMessage"), 1);
    assert!(polled.count("GetTask") >= 1, "{:?}", polled.methods());
    assert_eq!(polled.count("SendStreamingMessage"), 0);
    // The same outputs, the same decision.
    assert_eq!(outputs(&a), outputs(&b), "{}\n{}", a.show(), b.show());
    assert_eq!(a.review()["variables"]["approved"], true);
    assert_eq!(a.review()["decided_by"], b.review()["decided_by"]);
    assert_eq!(a.end()["status"], "completed");
    // The same kinds of journal events: card, send, status ..., reply, ending with
    // `status ... [completed]` and the reply.
    let (sa, sb) = (a.steps(), b.steps());
    let kinds = |s: &[String]| {
        let mut k: Vec<String> = s.iter().map(|x| kind(x).to_string()).collect();
        k.dedup();
        k
    };
    assert_eq!(kinds(&sa), kinds(&sb), "{sa:#?}\n{sb:#?}");
    assert_eq!(kinds(&sa), ["card", "send", "status", "reply"], "{sa:#?}");
    for s in [&sa, &sb] {
        assert!(s[0].contains("speaks A2A 1.0"), "{s:#?}");
        assert!(s[s.len() - 2].ends_with("[completed]"), "{s:#?}");
        assert!(
            s[s.len() - 1].contains("completed (A2A 1.0, data)"),
            "{s:#?}"
        );
    }
    // Streamed, the agent's every state change was seen: submitted, working, completed.
    assert!(sa[1].ends_with("[submitted]"), "{sa:#?}");
    assert!(sa.iter().any(|s| s.ends_with("[working]")), "{sa:#?}");
}

#[test]
fn a_stream_cut_in_the_middle_is_re_attached_and_the_task_completes() {
    let peer = Peer::start(
        "slow",
        &["--streaming", "--cut-streams", "first"],
        &[("A2A_PEER_SLOW_SECS", "1")],
    );
    let ran = start(app(&peer.url, |c| c).path(), &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert_eq!(ran.review()["outputs"]["late"], true, "{}", ran.show());
    assert_eq!(
        peer.methods(),
        vec!["SendStreamingMessage", "SubscribeToTask"],
        "{}",
        ran.show()
    );
    let steps = ran.steps().join("\n");
    assert!(steps.contains("the stream ended at"), "{steps}");
    assert!(steps.contains("subscribed to the task"), "{steps}");
    assert!(steps.contains("[completed]"), "{steps}");
}

#[test]
fn streams_that_keep_breaking_fall_back_to_polling_and_the_task_completes() {
    let peer = Peer::start(
        "slow",
        &["--streaming", "--cut-streams", "all"],
        &[("A2A_PEER_SLOW_SECS", "1")],
    );
    let ran = start(app(&peer.url, |c| c).path(), &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert_eq!(ran.review()["outputs"]["late"], true, "{}", ran.show());
    assert_eq!(peer.count("SendStreamingMessage"), 1);
    assert_eq!(peer.count("SubscribeToTask"), 3, "{:?}", peer.methods());
    assert!(peer.count("GetTask") >= 1, "{:?}", peer.methods());
    assert_eq!(peer.count("SendMessage"), 0);
    let steps = ran.steps().join("\n");
    assert!(steps.contains("polling GetTask"), "{steps}");
}

#[test]
fn input_required_over_a_stream_is_answered_in_the_same_task() {
    let peer = Peer::start("ask", &["--streaming"], &[]);
    let apps = app(&peer.url, |c| {
        c.replace("  approved: false\n", "  approved: false\n  budget: \"\"\n")
            .replace(
                "      score: score\n",
                "      score: score\n      budget: budget\n",
            )
    });
    let answers = apps.path().join("answers.yaml");
    std::fs::write(
        &answers,
        "answers:\n  Activity_review: {outputs: {answer: \"500 EUR\"}}\n",
    )
    .unwrap();
    let ran = start(apps.path(), &["--answers", answers.to_str().unwrap()]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert_eq!(
        ran.review()["outputs"]["budget"],
        "500 EUR",
        "{}",
        ran.show()
    );
    let steps = ran.steps().join("\n");
    assert!(steps.contains("input-required task"), "{steps}");
    assert!(steps.contains("Which budget?"), "{steps}");
    assert!(steps.contains("answer task"), "{steps}");
    // Both messages streamed, nothing polled.
    assert_eq!(
        peer.methods(),
        vec!["SendStreamingMessage", "SendStreamingMessage"],
        "{steps}"
    );
}

#[test]
fn a_slow_streamed_task_is_cancelled_at_its_timeout() {
    let peer = Peer::start("slow", &["--streaming"], &[]);
    let apps = app(&peer.url, |c| c.replace("timeout: 20", "timeout: 1.5"));
    let started = Instant::now();
    let ran = start(apps.path(), &[]);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{}",
        ran.show()
    );
    assert_eq!(
        ran.review()["error_code"],
        "REMOTE_FAILED",
        "{}",
        ran.show()
    );
    let error = ran.review()["error"].as_str().unwrap().to_string();
    assert!(error.contains("did not finish within"), "{error}");
    assert_eq!(peer.count("CancelTask"), 1, "{:?}", peer.methods());
    assert_eq!(peer.count("GetTask"), 0, "{:?}", peer.methods());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !peer.cancels().contains("canceled") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        peer.cancels().contains("canceled"),
        "the agent saw no cancel"
    );
}

#[test]
fn a_0_3_agent_that_streams_is_followed_with_message_stream() {
    let peer = Peer::start("data", &["--v03", "--streaming"], &[]);
    let ran = start(app(&peer.url, |c| c).path(), &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert_eq!(
        ran.review()["variables"]["approved"],
        true,
        "{}",
        ran.show()
    );
    assert_eq!(peer.methods(), vec!["message/stream"], "{}", ran.show());
    let steps = ran.steps().join("\n");
    assert!(steps.contains("speaks A2A 0.3"), "{steps}");
    assert!(steps.contains("completed (A2A 0.3, data)"), "{steps}");
}

#[test]
fn a_run_parked_on_a_streamed_task_follows_it_up_with_subscribe_to_task() {
    let peer = Peer::start("slow", &["--streaming"], &[("A2A_PEER_SLOW_SECS", "3")]);
    // Parked after 2 s; resumed at once, the task ends within the next 2 s of following.
    let apps = app(&peer.url, |c| {
        c.replace("timeout: 20", "timeout: 20\n    wait: 2s")
    });
    let runs = apps.path().join("runs-parked");
    let cuga = |args: &[&str]| {
        Command::new(BIN)
            .env_remove("CUGA_FLO_APPS")
            .env("NO_COLOR", "1")
            .args(["--apps-dir", apps.path().to_str().unwrap()])
            .args(args)
            .args(["--run-dir", runs.to_str().unwrap()])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = cuga(&["start", "remote_review", "--no-model", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(peer.methods(), vec!["SendStreamingMessage"]);
    let run = std::fs::read_dir(runs.join("runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    // Resumed while the agent still works: GetTask, then the stream of the task.
    let out = cuga(&["runs", "resume", &run]);
    let journal =
        std::fs::read_to_string(runs.join("runs").join(&run).join("journal.jsonl")).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}\n{journal}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        peer.methods(),
        vec!["SendStreamingMessage", "GetTask", "SubscribeToTask"],
        "{journal}"
    );
    assert!(journal.contains("\"late\":true"), "{journal}");
    assert!(journal.contains("subscribed to the task"), "{journal}");
}

/// A server on 127.0.0.1 whose card offers streaming and whose every POST is answered
/// with `body` as an SSE stream (then the connection is held open `hold`).
fn fake_agent(body: &'static [u8], hold: Duration) -> String {
    fake_agent_of(vec![body], hold)
}

/// [`fake_agent`] answering the n-th POST with `bodies[n]` (the last one from then on).
fn fake_agent_of(bodies: Vec<&'static [u8]>, hold: Duration) -> String {
    let posts = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let card = serde_json::json!({
        "name": "fake",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
    })
    .to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let card = card.clone();
            let (posts, bodies) = (posts.clone(), bodies.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut conn = conn;
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut skip = vec![0; length];
                let _ = reader.read_exact(&mut skip);
                if first.starts_with("GET") {
                    let _ = write!(
                        conn,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{card}",
                        card.len()
                    );
                    return;
                }
                let n = posts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let body = bodies[n.min(bodies.len() - 1)];
                if body.starts_with(b"{") {
                    // A plain JSON-RPC reply, not a stream.
                    let _ = write!(
                        conn,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = conn.write_all(body);
                    return;
                }
                let _ = conn.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
                );
                let _ = conn.write_all(body);
                let _ = conn.flush();
                std::thread::sleep(hold);
            });
        }
    });
    base
}

fn exchange_with(url: &str, timeout: Duration) -> (Result<cuga_flo::a2a::Reply, String>, Duration) {
    exchange_answered(url, timeout, &cuga_flo::a2a::NoAnswerer, &mut Vec::new())
}

/// Answers every question with "blue".
struct Blue;

impl cuga_flo::a2a::Answerer for Blue {
    fn answer(&self, _question: &str) -> cuga_flo::a2a::BoxFuture<'_, Option<String>> {
        Box::pin(async { Some("blue".to_string()) })
    }
}

fn exchange_answered(
    url: &str,
    timeout: Duration,
    answerer: &dyn cuga_flo::a2a::Answerer,
    steps: &mut Vec<cuga_flo::a2a::Step>,
) -> (Result<cuga_flo::a2a::Reply, String>, Duration) {
    use cuga_flo::a2a::{AgentConfig, Client, Outgoing};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut config = AgentConfig::new("fake", url);
        config.timeout = timeout;
        let client = Client::new(config).unwrap();
        let out = Outgoing {
            context_id: "c".into(),
            text: "hi".into(),
            ..Default::default()
        };
        let started = Instant::now();
        let r = client
            .exchange_live(&out, answerer, steps)
            .await
            .map_err(|e| e.to_string());
        (r, started.elapsed())
    })
}

#[test]
fn a_malformed_event_fails_the_exchange_clearly() {
    let url = fake_agent(b"data: {\"result\": {not json\n\n", Duration::from_secs(30));
    let (r, took) = exchange_with(&url, Duration::from_secs(20));
    let e = r.unwrap_err();
    assert!(e.contains("malformed") && e.contains("is not JSON"), "{e}");
    assert!(took < Duration::from_secs(5), "{took:?}");

    let url = fake_agent(
        b"data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"surprise\": 1}}\n\n",
        Duration::from_secs(30),
    );
    let e = exchange_with(&url, Duration::from_secs(20)).0.unwrap_err();
    assert!(e.contains("none of task, message"), "{e}");

    // An error in the stream is the agent's error.
    let url = fake_agent(
        b"data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"error\": {\"code\": -32603, \"message\": \"boom\"}}\n\n",
        Duration::from_secs(30),
    );
    let e = exchange_with(&url, Duration::from_secs(20)).0.unwrap_err();
    assert!(e.contains("-32603") && e.contains("boom"), "{e}");
}

#[test]
fn a_silent_stream_is_bounded_by_the_timeout_not_a_hang() {
    // The task is announced, then nothing more: the exchange times out (and cancels).
    let url = fake_agent(
        b"data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"task\": {\"id\": \"t1\", \"contextId\": \"c\", \"status\": {\"state\": \"TASK_STATE_WORKING\"}}}}\n\n",
        Duration::from_secs(60),
    );
    let (r, took) = exchange_with(&url, Duration::from_secs(2));
    let e = r.unwrap_err();
    assert!(e.contains("did not finish within"), "{e}");
    assert!(took < Duration::from_secs(6), "{took:?}");
    // A stream that only says nothing at all fails within the timeout too.
    let url = fake_agent(b": nothing\n\n", Duration::from_secs(60));
    let (r, took) = exchange_with(&url, Duration::from_secs(2));
    assert!(r.is_err());
    assert!(took < Duration::from_secs(6), "{took:?}");
}

#[test]
fn an_endless_line_is_refused_not_buffered() {
    static BIG: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let body = BIG.get_or_init(|| {
        let mut b = b"data: ".to_vec();
        b.extend(std::iter::repeat_n(
            b'x',
            cuga_flo::a2a::stream::MAX_EVENT_BYTES + 10,
        ));
        b
    });
    let url = fake_agent(body, Duration::from_secs(30));
    let e = exchange_with(&url, Duration::from_secs(20)).0.unwrap_err();
    assert!(e.contains("longer than"), "{e}");
}

/// One delegation round trip to the `a2a-sdk` peer over a stream and by polling (the
/// same streaming agent; the client told not to stream): median of 25 each, after one
/// warm-up. `cargo test --test suite a2a_stream:: round_trip -- --nocapture` prints them.
#[test]
fn delegation_round_trip_streaming_vs_polling() {
    use cuga_flo::a2a::{AgentConfig, Client, NoAnswerer, Outgoing};
    let peer = Peer::start("data", &["--streaming"], &[]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let measure = |streaming: bool| -> Vec<f64> {
        runtime.block_on(async {
            let mut config = AgentConfig::new("peer", &peer.url);
            config.streaming = streaming;
            let client = Client::new(config).unwrap();
            client.card(false).await.unwrap();
            let mut took = Vec::new();
            for i in 0..26 {
                let out = Outgoing {
                    context_id: format!("latency-{streaming}-{i}"),
                    text: "Review the claim.".into(),
                    data: Some(serde_json::json!({"task": "Activity_review", "inputs": {"amount": 120}, "outputs": ["approved", "score"]})),
                    metadata: Default::default(),
                };
                let mut steps = Vec::new();
                let started = Instant::now();
                let reply = client.exchange(&out, &NoAnswerer, &mut steps).await.unwrap();
                let t = started.elapsed();
                assert_eq!(reply.data.as_ref().unwrap()["approved"], true);
                if i > 0 {
                    took.push(t.as_secs_f64() * 1000.0);
                }
            }
            took
        })
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let (s, smin, smax) = median(measure(true));
    let (p, pmin, pmax) = median(measure(false));
    eprintln!(
        "delegation round trip to the a2a-sdk peer, 25 each: streaming median {s:.1} ms (min {smin:.1}, max {smax:.1}); polling median {p:.1} ms (min {pmin:.1}, max {pmax:.1})"
    );
    assert_eq!(peer.count("SendStreamingMessage"), 26);
    assert_eq!(peer.count("SendMessage"), 26);
    assert!(s < 5000.0 && p < 5000.0);
}

#[test]
fn an_answers_stream_keeps_the_artifacts_of_the_rounds_before() {
    // Round one: an artifact, then a question; round two (the answer's stream): another
    // artifact and the end. The reply has both, as GetTask would show them.
    let url = fake_agent_of(
        vec![
            b"data: {\"result\": {\"task\": {\"id\": \"t1\", \"contextId\": \"c\", \"status\": {\"state\": \"TASK_STATE_WORKING\"}}}}\n\n\
data: {\"result\": {\"artifactUpdate\": {\"taskId\": \"t1\", \"artifact\": {\"artifactId\": \"a1\", \"parts\": [{\"data\": {\"first\": 1}}]}}}}\n\n\
data: {\"result\": {\"statusUpdate\": {\"taskId\": \"t1\", \"status\": {\"state\": \"TASK_STATE_INPUT_REQUIRED\", \"message\": {\"role\": \"ROLE_AGENT\", \"parts\": [{\"text\": \"Which colour?\"}]}}}}}\n\n",
            b"data: {\"result\": {\"statusUpdate\": {\"taskId\": \"t1\", \"status\": {\"state\": \"TASK_STATE_WORKING\"}}}}\n\n\
data: {\"result\": {\"artifactUpdate\": {\"taskId\": \"t1\", \"artifact\": {\"artifactId\": \"a2\", \"parts\": [{\"data\": {\"second\": 2}}]}}}}\n\n\
data: {\"result\": {\"statusUpdate\": {\"taskId\": \"t1\", \"status\": {\"state\": \"TASK_STATE_COMPLETED\"}}}}\n\n",
        ],
        Duration::from_secs(30),
    );
    let mut steps = Vec::new();
    let (r, _) = exchange_answered(&url, Duration::from_secs(10), &Blue, &mut steps);
    let reply = r.unwrap();
    assert_eq!(reply.task_id, "t1");
    assert_eq!(
        reply.data,
        Some(serde_json::json!({"first": 1, "second": 2})),
        "{steps:#?}"
    );
    let kinds: Vec<&str> = steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            "card",
            "send",
            "status",
            "input-required",
            "answer",
            "status",
            "status"
        ],
        "{steps:#?}"
    );
    assert_eq!(steps[3].detail.as_deref(), Some("Which colour?"));
}

#[test]
fn an_agent_that_refuses_to_stream_is_sent_send_message_and_polled() {
    // The card says streaming, but SendStreamingMessage is refused with a plain
    // JSON-RPC error: the message goes again as SendMessage.
    let url = fake_agent_of(
        vec![
            br#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "Streaming is not supported by the agent"}}"#,
            br#"{"jsonrpc": "2.0", "id": 2, "result": {"task": {"id": "t9", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [{"artifactId": "a", "parts": [{"data": {"ok": true}}]}]}}}"#,
        ],
        Duration::from_secs(1),
    );
    let mut steps = Vec::new();
    let (r, _) = exchange_answered(
        &url,
        Duration::from_secs(10),
        &cuga_flo::a2a::NoAnswerer,
        &mut steps,
    );
    let reply = r.unwrap();
    assert_eq!(reply.data, Some(serde_json::json!({"ok": true})));
    let refused = steps.iter().find(|s| s.kind == "stream").unwrap();
    let detail = refused.detail.as_deref().unwrap();
    assert!(
        detail.contains("SendStreamingMessage refused (error -32004")
            && detail.ends_with("polling"),
        "{detail}"
    );
}
