//! `cuga-flo serve --a2a`: a flow as an A2A 1.0 agent, with the official A2A Python SDK
//! (`a2a-sdk`, pinned in `tests/interop/requirements-a2a.txt`) as its client
//! (`tests/interop/a2a_client_check.py`): the card, a task sent and completed, a task
//! streamed through two `input-required` rounds, a task cancelled, the bearer token, and
//! a task whose run parks (a timer, a message) staying `working` until it completes.
//! The official JavaScript SDK (`@a2a-js/sdk`, pinned in `tests/interop/a2a-js/`) runs one
//! round too (`tests/interop/a2a_js_check.mjs`). The app is
//! `tests/fixtures/apps/a2a_claim`. Needs `python3` (3.10+) with `venv` and `pip`, Node.js
//! 20+ with `npm`, and PyPI and npm the first time (both cached under
//! `~/.cache/cuga-flo/`). Every wait is bounded.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin_cmd;
use cuga_flo::journal::Event;
use cuga_flo::journal::store::{JOURNAL_FILE, read_journal, run_dir};
use cuga_flo::vocab::{Decider, RunStatus};
use serde_json::Value;

use crate::support::a2a_served;
use crate::support::python;
use a2a_served::{A2aServed, LIMIT};
use python::{Check, a2a_python, interop_dir, npm_packages};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

fn fixture_app() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps/a2a_claim")
}

/// A `cuga-flo serve --a2a 127.0.0.1:0` process serving the fixture app; killed when
/// dropped.
struct Served {
    inner: A2aServed,
    url: String,
    agent: String,
}

impl Served {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut all = vec![fixture_app().into_os_string()];
        all.extend(args.iter().map(Into::into));
        let inner = A2aServed::start::<[&str; 0], _>([], all, None, env, 1);
        let (slug, agent) = inner.agents[0].clone();
        assert_eq!(slug, "a2a_claim");
        assert_eq!(agent, format!("{}/a2a_claim", inner.url));
        Served {
            url: inner.url.clone(),
            agent,
            inner,
        }
    }

    fn base(&self) -> PathBuf {
        self.inner.base()
    }

    fn stderr(&self) -> String {
        self.inner.stderr()
    }

    /// The SDK client's checks against the agent: one JSON object per check.
    fn check(&self, checks: &[&str], env: &[(&str, &str)], extra: &[&str]) -> Vec<Value> {
        let mut cmd = Command::new(a2a_python());
        cmd.arg(interop_dir().join("a2a_client_check.py"))
            .arg(&self.agent)
            .args(checks)
            .args(extra);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let done = Check::spawn(&mut cmd)
            .unwrap()
            .wait(Duration::from_secs(120));
        let lines: Vec<Value> = done
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("{l}")))
            .collect();
        for line in &lines {
            assert_eq!(
                line["ok"],
                true,
                "{line}\nclient stderr:\n{}\nserver stderr:\n{}",
                done.stderr,
                self.stderr()
            );
        }
        assert_eq!(lines.len(), checks.len(), "{}", done.stderr);
        lines
    }

    /// One JSON-RPC request over a plain HTTP/1.1 connection; the response body.
    fn post(&self, body: &str) -> Value {
        self.inner.post("a2a_claim", body, &[])
    }

    fn journal(&self, run: &str) -> Vec<Event> {
        self.inner.journal(run)
    }
}

fn finished(events: &[Event]) -> (RunStatus, Option<String>) {
    events
        .iter()
        .find_map(|e| match e {
            Event::RunFinished {
                status, message, ..
            } => Some((*status, message.clone())),
            _ => None,
        })
        .expect("the run finished")
}

#[test]
fn the_python_sdk_reads_the_card_sends_streams_answers_and_cancels_in_1_0_and_0_3() {
    let served = Served::start(&[], &[]);
    // A 1.0 client, then a 0.3 one (the SDK's compat transport, from the card's 0.3
    // fields): the same agent, the same behaviour.
    for (extra, version) in [(&[][..], "1.0"), (&["--v03"][..], "0.3")] {
        eprintln!("A2A {version}");
        python_sdk_round(&served, extra, version);
    }
}

fn python_sdk_round(served: &Served, extra: &[&str], version: &str) {
    let facts = served.check(&["card", "send", "stream", "cancel"], &[], extra);
    let (card, send, stream, cancel) = (&facts[0], &facts[1], &facts[2], &facts[3]);

    // The card: the flow's name, one skill (the process) listing the inputs, streaming.
    assert_eq!(card["name"], "Expense claim");
    assert_eq!(card["skills"], serde_json::json!(["a2a_claim"]));
    let skill = card["skill_description"].as_str().unwrap();
    assert!(skill.contains("amount (default 0)"), "{skill}");
    assert_eq!(card["streaming"], true);
    assert!(
        card["interface"]["protocolVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with(version)),
        "{card}"
    );
    assert_eq!(card["interface"]["url"], served.agent.as_str());

    // A small claim: completed at once, the final variables as the artifact.
    assert_eq!(send["state"], "TASK_STATE_COMPLETED");
    assert_eq!(send["get_state"], "TASK_STATE_COMPLETED");
    assert_eq!(send["variables"]["claimant"], "Bo");
    assert_eq!(send["variables"]["approved"], false);
    let run = send["task_id"].as_str().unwrap();
    let events = served.journal(run);
    assert_eq!(finished(&events).0, RunStatus::Completed);
    eprintln!(
        "SendMessage round trip (small claim, A2A {version}): {} ms",
        send["latency_ms"]
    );

    // A big claim, streamed: working updates, then input-required (the review) with the
    // question; the answer (a DataPart) goes back in the same task and the next question
    // (the payout gateway) is answered with text; it completes.
    assert_eq!(
        stream["states"],
        serde_json::json!([
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_COMPLETED"
        ])
    );
    let first: Vec<String> = stream["first"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[1].as_str().unwrap().to_string())
        .collect();
    assert!(
        first.contains(&"TASK_STATE_WORKING".to_string()),
        "{first:?}"
    );
    let question = stream["question"].to_string();
    assert!(
        question.contains("Activity_review") && question.contains("approved"),
        "{question}"
    );
    assert!(
        stream["third"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e[0] == "artifact" && e[1] == "variables"),
        "{}",
        stream["third"]
    );
    assert_eq!(stream["final_state"], "TASK_STATE_COMPLETED");
    assert_eq!(stream["variables"]["approved"], true);
    assert_eq!(stream["variables"]["claimant"], "Ada");
    // The run's journal: the review and the payout decided by a person (the caller).
    let events = served.journal(stream["task_id"].as_str().unwrap());
    assert_eq!(finished(&events).0, RunStatus::Completed);
    assert!(
        events.iter().any(|e| matches!(e,
        Event::TaskFinished { node, decided_by: Decider::Human, .. } if node == "Activity_review"))
    );
    assert!(events.iter().any(|e| matches!(e,
        Event::GatewayRouted { node, flows, decided_by: Decider::Human, .. }
            if node == "Gateway_payout" && flows == &["Flow_cheque".to_string()])));

    // Cancelled while it waits for input: canceled, not cancelable again; its run ends
    // cancelled, as `runs cancel` ends a run, by the A2A caller.
    assert_eq!(cancel["before"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(cancel["canceled"], "TASK_STATE_CANCELED");
    assert_eq!(cancel["get_state"], "TASK_STATE_CANCELED");
    assert!(
        cancel["cancel_again"]
            .as_str()
            .is_some_and(|e| e.contains("NotCancelable")),
        "{cancel}"
    );
    let events = served.journal(cancel["task_id"].as_str().unwrap());
    let (status, message) = finished(&events);
    assert_eq!(status, RunStatus::Cancelled);
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.starts_with("cancelled by the A2A caller: ")),
        "{message:?}"
    );
    assert!(events.iter().any(|e| matches!(e,
        Event::RunCancelled { by: Some(by), reason: Some(_), remote } 
            if by == "the A2A caller" && remote.is_empty())));
    let _ = &served.url;
}

/// A request without `A2A-Version` calling a 0.3 method is A2A 0.3, as the specification
/// says, and answered in 0.3's shapes; a header the method disagrees with, or a version
/// not spoken here, is refused with what is.
#[test]
fn a_request_speaks_0_3_or_1_0_by_its_header_and_method() {
    let served = Served::start(&[], &[]);
    let send = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m-1", "role": "user",
            "parts": [{"kind": "data", "data": {"amount": 50, "claimant": "Mo"}}]}}});
    let reply = served.post(&send.to_string());
    let task = &reply["result"];
    assert_eq!(task["kind"], "task", "{reply}");
    assert_eq!(task["status"]["state"], "completed", "{reply}");
    let part = &task["artifacts"][0]["parts"][0];
    assert_eq!(part["kind"], "data", "{reply}");
    assert_eq!(part["data"]["claimant"], "Mo");
    assert_eq!(task["history"][0]["role"], "user", "{reply}");
    let id = task["id"].as_str().unwrap();
    let get =
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": id}});
    let got = served.post(&get.to_string());
    assert_eq!(got["result"]["kind"], "task", "{got}");
    assert_eq!(got["result"]["status"]["state"], "completed");
    // The same task read in 1.0.
    let get =
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": id}});
    let got = served
        .inner
        .post("a2a_claim", &get.to_string(), &["A2A-Version: 1.0"]);
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{got}"
    );
    assert_eq!(got["result"]["history"][0]["role"], "ROLE_USER", "{got}");
    assert!(
        got["result"]["history"][0]["parts"][0]
            .get("kind")
            .is_none(),
        "{got}"
    );

    let refused = [
        ("SendMessage", "A2A-Version: 0.3", -32601, "message/send"),
        ("message/send", "A2A-Version: 1.0", -32601, "SendMessage"),
        ("SendMessage", "A2A-Version: 2.0", -32009, "1.0 and 0.3"),
        (
            "tasks/pushNotificationConfig/set",
            "X-None: 1",
            -32601,
            "tasks/resubscribe",
        ),
    ];
    for (method, header, code, says) in refused {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": {}});
        let reply = served.inner.post("a2a_claim", &body.to_string(), &[header]);
        assert_eq!(reply["error"]["code"], code, "{method} {header}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{method} {header}: {message}");
    }
}

/// A served app's required input (`inputs:`) must come in the task's first message: a
/// task without it fails at once, saying which input and what it holds; with it, the run
/// goes ahead.
#[test]
fn a_task_without_a_required_input_fails_saying_which() {
    let tmp = tempfile::tempdir().unwrap();
    let app = tmp.path().join("a2a_claim");
    crate::support::copy_dir(&fixture_app(), &app);
    let config = app.join("config/a2a_claim_config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace(
            "variables:",
            "inputs:\n  amount: {required: true, description: \"The claim's amount\"}\n\nvariables:",
        ),
    )
    .unwrap();
    let inner = A2aServed::start::<[&str; 0], _>([], [app.into_os_string()], None, &[], 1);
    // Each message its own id (the same id is the same message, sent again).
    let send = |id: &str, data: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":
               {{"messageId":"{id}","role":"ROLE_USER","parts":[{{"data":{data}}}]}}}}}}"#
        );
        inner.post("a2a_claim", &body, &["A2A-Version: 1.0"])
    };
    let reply = send("m1", r#"{"claimant": "Ed"}"#);
    let task = &reply["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{reply}");
    let said = task["status"]["message"].to_string();
    assert!(
        said.contains("input `amount` (The claim's amount) is required"),
        "{said}"
    );
    let reply = send("m2", r#"{"claimant": "Ed", "amount": 20}"#);
    assert_eq!(
        reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{reply}"
    );
}

/// A message sent again (its reply lost, a client retrying) is answered with the task it
/// started, as that task is now: never a second task, never a second run; a follow-up
/// sent again is not delivered twice.
#[test]
fn a_message_sent_again_is_answered_by_its_task_and_starts_nothing() {
    let served = Served::start(&[], &[]);
    let send = |id: &str, data: &str, task: Option<&str>| {
        let task = task
            .map(|t| format!(r#","taskId":"{t}""#))
            .unwrap_or_default();
        served.post(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":
               {{"messageId":"{id}","role":"ROLE_USER"{task},"parts":[{{"data":{data}}}]}}}}}}"#
        ))
    };
    let first = send("retry-me", r#"{"amount": 50}"#, None);
    let again = send("retry-me", r#"{"amount": 50}"#, None);
    let task = first["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(again["result"]["task"]["id"], task.as_str(), "{again}");
    assert_eq!(
        again["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let runs = served.base().join("runs");
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 1, "one run");

    // A big claim waits for its review; the answer sent twice is taken once.
    let big = send("big-1", r#"{"amount": 900}"#, None);
    let big_task = big["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        big["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let answered = send("answer-1", r#"{"approved": false}"#, Some(&big_task));
    let again = send("answer-1", r#"{"approved": false}"#, Some(&big_task));
    assert_eq!(
        answered["result"]["task"]["id"],
        big_task.as_str(),
        "{answered}"
    );
    assert_eq!(again["result"]["task"]["id"], big_task.as_str(), "{again}");
    assert!(again.get("error").is_none(), "{again}");
    let events = served.journal(&big_task);
    let answers = events
        .iter()
        .filter(|e| matches!(e, Event::TaskFinished { node, .. } if node == "Activity_review"))
        .count();
    assert_eq!(answers, 1, "the review was answered once");
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 2);
}

#[test]
fn with_a_token_requests_need_it_and_the_card_says_so() {
    let token = "a2a-test-token-0123456789abcdef";
    let served = Served::start(
        &["--token-env", "A2A_SERVE_TOKEN"],
        &[("A2A_SERVE_TOKEN", token)],
    );
    let facts = served.check(
        &["noauth", "card", "send"],
        &[("A2A_SERVE_TOKEN", token)],
        &["--token-env", "A2A_SERVE_TOKEN"],
    );
    assert!(
        facts[0]["refused"].as_str().unwrap().contains("401"),
        "{}",
        facts[0]
    );
    assert_eq!(facts[2]["state"], "TASK_STATE_COMPLETED");
    assert!(!served.stderr().contains(token));
    // The card names the scheme.
    assert_eq!(
        facts[1]["security"],
        serde_json::json!(["bearer"]),
        "{}",
        facts[1]
    );
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused() {
    let output = cargo_bin_cmd!("cuga-flo")
        .args(["serve", "--a2a", "0.0.0.0:0"])
        .arg(fixture_app())
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to serve on 0.0.0.0:0 without a token"),
        "{stderr}"
    );
}

#[test]
fn sigterm_stops_the_server_promptly_and_closes_the_runs_waiting_for_input() {
    let mut served = Served::start(&[], &[]);
    let reply = served.post(
        r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":
           {"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"amount":700}}]}}}"#,
    );
    let task = &reply["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{reply}"
    );
    let run = task["id"].as_str().unwrap().to_string();
    // Unknown methods and tasks are JSON-RPC errors.
    let unknown = served.post(r#"{"jsonrpc":"2.0","id":2,"method":"NoSuchMethod","params":{}}"#);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let missing = served.post(r#"{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"x"}}"#);
    assert_eq!(missing["error"]["code"], -32001, "{missing}");

    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &served.inner.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = loop {
        if let Some(status) = served.inner.child.try_wait().unwrap() {
            break status.code();
        }
        assert!(sent.elapsed() < LIMIT, "still running after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(code, Some(0), "{}", served.stderr());
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "took {:?}",
        sent.elapsed()
    );
    // Written before the server exited: read once, no waiting.
    let path = run_dir(&served.base(), &run).join(JOURNAL_FILE);
    let events: Vec<Event> = (read_journal(&path).unwrap().records.into_iter())
        .map(|r| r.event)
        .collect();
    let (status, message) = finished(&events);
    assert_eq!(status, RunStatus::Failed);
    assert!(
        message
            .as_deref()
            .unwrap_or_default()
            .contains("server shut down"),
        "{message:?}"
    );
}

/// A flow delegating its review to a flow served over A2A: cuga-flo's own A2A client
/// against `serve --a2a`. The served flow asks its caller (input-required) for the review;
/// the delegating run's answers file answers; the payout is answered on the served side.
#[test]
fn a_flow_delegates_to_a_served_flow_and_answers_its_question() {
    let answers_dir = tempfile::tempdir().unwrap();
    let served_answers = answers_dir.path().join("served.yaml");
    std::fs::write(
        &served_answers,
        "answers:\n  Gateway_payout: {flow: Flow_transfer}\n",
    )
    .unwrap();
    let served = Served::start(&["--answers", served_answers.to_str().unwrap()], &[]);

    // The delegating app: remote_review's model, its review delegated to the served flow.
    let apps = tempfile::tempdir().unwrap();
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps/remote_review/config");
    let dst = apps.path().join("intake/config");
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::copy(
        src.join("remote_review.bpmn"),
        dst.join("remote_review.bpmn"),
    )
    .unwrap();
    std::fs::write(
        dst.join("intake_config.yaml"),
        format!(
            "flow: {{id: intake, name: Intake, bpmn_file: remote_review.bpmn}}\n\
             variables: {{amount: 350, claimant: Ada, approved: false}}\n\
             remote_agents:\n  claims: {{url: \"{}\", protocol: a2a, timeout: 20}}\n\
             tasks:\n  - id: Activity_review\n    agent: {{name: claims desk, agent_type: claims}}\n    \
             input_mapping: {{amount: amount, claimant: claimant}}\n    \
             output_mapping: {{approved: approved}}\n",
            served.agent
        ),
    )
    .unwrap();
    let answers = apps.path().join("answers.yaml");
    std::fs::write(
        &answers,
        "answers:\n  Activity_review: {outputs: {answer: \"true\"}}\n",
    )
    .unwrap();
    let started = Instant::now();
    let out = Command::new(BIN)
        .env("NO_COLOR", "1")
        .args([
            "--apps-dir",
            apps.path().to_str().unwrap(),
            "start",
            "intake",
        ])
        .args(["--run-dir", apps.path().join("runs").to_str().unwrap()])
        .args([
            "--no-model",
            "--json",
            "--answers",
            answers.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}\nserver:\n{}",
        String::from_utf8_lossy(&out.stderr),
        served.stderr()
    );
    let end: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == "run_finished")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(end["status"], "completed", "{end}");
    assert_eq!(end["variables"]["approved"], true, "{end}");
    // The served run: the delegated inputs, the review answered by its caller.
    let runs: Vec<_> = std::fs::read_dir(served.base().join("runs"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1);
    let run = runs[0].file_name().to_string_lossy().into_owned();
    let events = served.journal(&run);
    assert_eq!(finished(&events).0, RunStatus::Completed);
    assert!(events.iter().any(|e| matches!(e,
        Event::RunStarted { variables, .. } if variables.get("amount") == Some(&serde_json::json!(350)))));
    assert!(
        events.iter().any(|e| matches!(e,
        Event::TaskFinished { node, decided_by: Decider::Human, variables, .. }
            if node == "Activity_review" && variables.get("approved") == Some(&Value::Bool(true))))
    );
    eprintln!("delegation with one input-required round through serve --a2a: {took:?}");
}

#[test]
fn the_javascript_sdk_streams_a_task_and_answers_its_questions_in_1_0_and_0_3() {
    let sdk = npm_packages("a2a-js", "node_modules/@a2a-js/sdk/package.json");
    let served = Served::start(&[], &[]);
    // ES modules resolve packages from the script's folder: the script is copied there.
    let script = tempfile::Builder::new()
        .suffix(".mjs")
        .tempfile_in(&sdk)
        .unwrap();
    std::fs::copy(interop_dir().join("a2a_js_check.mjs"), script.path()).unwrap();
    // A 1.0 client, then a 0.3 one (the SDK's legacy transport, from the card's 0.3
    // fields).
    for (extra, version) in [(None, "1.0"), (Some("--v03"), "0.3")] {
        let mut node = Command::new("node");
        node.arg(script.path()).arg(&served.agent).args(extra);
        let done = Check::spawn(&mut node)
            .unwrap()
            .wait(Duration::from_secs(60));
        let facts: Value = serde_json::from_str(done.stdout.trim()).unwrap_or_else(|_| {
            panic!(
                "{}\n{}\nserver:\n{}",
                done.stdout,
                done.stderr,
                served.stderr()
            )
        });
        assert_eq!(facts["ok"], true, "{version}: {facts}\n{}", done.stderr);
        assert!(
            facts["interface"]
                .as_str()
                .is_some_and(|v| v.starts_with(version)),
            "{facts}"
        );
        assert_eq!(facts["name"], "Expense claim");
        assert_eq!(facts["streaming"], true);
        assert_eq!(
            facts["events"].as_array().unwrap().last().unwrap()[1],
            "TASK_STATE_INPUT_REQUIRED",
            "{facts}"
        );
        assert_eq!(facts["waiting"], "TASK_STATE_INPUT_REQUIRED");
        // After the review, the payout question; answered by its label.
        assert_eq!(facts["after_review"], "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(facts["final"], "TASK_STATE_COMPLETED");
        assert_eq!(facts["variables"]["approved"], true);
        assert_eq!(facts["variables"]["claimant"], "Lin");
    }
}

/// A run that parks keeps its A2A task working, seen from the Python SDK: streamed status
/// updates say what it waits for (a timer, then the payment), `GetTask` shows the task
/// working, and once `cuga-flo runs message` (another process) delivers the payment the
/// server resumes the run and the task completes with the message's variable.
#[test]
fn the_python_sdk_sees_a_parked_run_keep_its_task_working_until_it_completes() {
    let waits = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps/served_waits");
    let served = Served::start(&[waits.to_str().unwrap(), "--max-wait", "0"], &[]);
    let base = served.base();
    let lines = served.check(
        &["parked"],
        &[
            ("CUGA_FLO_BIN", BIN),
            ("CUGA_FLO_RUN_DIR", base.to_str().unwrap()),
        ],
        &[],
    );
    let facts = &lines[0];
    let updates = facts["updates"].as_array().unwrap();
    let texts: Vec<&str> = updates.iter().filter_map(|u| u[1].as_str()).collect();
    assert!(
        updates.iter().all(|u| u[0] == "TASK_STATE_WORKING"),
        "{facts}"
    );
    assert!(
        texts.iter().any(|t| t.contains("waits for a timer due in")),
        "{facts}"
    );
    assert!(
        (texts.last().unwrap()).contains("message `Payment` at Receive_Payment"),
        "{facts}"
    );
    assert_eq!(facts["parked_state"], "TASK_STATE_WORKING", "{facts}");
    assert!(
        facts["delivered"].as_str().unwrap().contains("resumes it"),
        "{facts}"
    );
    assert_eq!(facts["final_state"], "TASK_STATE_COMPLETED", "{facts}");
    // A protobuf Struct's numbers are doubles.
    assert_eq!(facts["variables"]["amount"].as_f64(), Some(9.0), "{facts}");
    let task = facts["task_id"].as_str().unwrap();
    let events: Vec<Event> = read_journal(&run_dir(&base, task).join(JOURNAL_FILE))
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.event)
        .collect();
    assert!(events.iter().any(|e| matches!(
        e,
        Event::RunFinished {
            status: RunStatus::Completed,
            ..
        }
    )));
}
