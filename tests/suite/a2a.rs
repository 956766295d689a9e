//! Remote agents over A2A, against peers written with the official A2A Python SDK
//! (`tests/interop/a2a_peer.py`, `a2a-sdk` pinned in `tests/interop/requirements-a2a.txt`):
//! `cuga-flo start` on an app whose task is delegated to the peer. Needs `python3` (3.10+)
//! with `venv` and `pip`, and PyPI the first time.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::a2a as support;
use crate::support::chat_server;
use crate::support::python;
use python::root;
use support::{Peer, Ran, cuga_in, envs_of, fixture_app, fresh_runs};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

/// The remote_review app in a temporary apps folder, pointed at `url`, with `auth` (YAML
/// lines under the agent) and `edit` applied to the config.
fn app(url: &str, auth: &str, edit: impl Fn(String) -> String) -> tempfile::TempDir {
    fixture_app("remote_review", url, |c| {
        edit(c.replace("    # AUTH", auth))
    })
}

/// The remote_review app with `wait: WAIT` (the run parks on a task still going then).
fn app_waiting(url: &str, wait: &str) -> tempfile::TempDir {
    app(url, "", |c| {
        c.replace("timeout: 20", &format!("timeout: 20\n    wait: {wait}"))
    })
}

/// `cuga-flo start remote_review --no-model --json EXTRA` in a fresh run folder.
fn start(apps: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Ran {
    let runs = fresh_runs(apps);
    let mut args = vec!["start", "remote_review", "--no-model", "--json"];
    args.extend_from_slice(extra);
    cuga_in(apps, &runs, &args, envs)
}

/// The `task_finished` record of the review, and the run's end.
fn review(ran: &Ran) -> (Value, Value) {
    let task = ran.record("task_finished", "Activity_review");
    let end = ran
        .records()
        .into_iter()
        .rev()
        .find(|r| r["event"] == "run_finished")
        .unwrap_or_else(|| panic!("no run_finished\n{}", ran.show()));
    (task, end)
}

fn entered(ran: &Ran, node: &str) -> bool {
    ran.entered(node)
}

#[test]
fn a_task_is_delegated_to_a_python_sdk_agent_and_its_data_part_is_the_outputs() {
    let peer = Peer::start("data", &[], &[]);
    let apps = app(&peer.url, "", |c| c);
    let ran = start(apps.path(), &[], &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    let (task, end) = review(&ran);
    assert_eq!(task["status"], "completed", "{}", ran.show());
    assert_eq!(task["decided_by"], "remote");
    assert_eq!(task["variables"]["approved"], true);
    assert_eq!(task["variables"]["score"], 0.9);
    // The composed input arrived as a DataPart: inputs per input_mapping, the outputs
    // asked for, the instruction; the run id is the A2A context id.
    let echo = &task["outputs"]["echo"];
    assert_eq!(echo["inputs"]["claimant"], "Ada");
    assert_eq!(echo["inputs"]["amount"], 120.0);
    assert_eq!(echo["outputs"], serde_json::json!(["approved", "score"]));
    assert!(
        echo["instruction"]
            .as_str()
            .unwrap()
            .contains("expense claim")
    );
    let run_id = ran.journal.lines().next().unwrap();
    let run_id: Value = serde_json::from_str(run_id).unwrap();
    assert_eq!(task["outputs"]["context_id"], run_id["run_id"]);
    // The task is tainted: its data came from outside the run.
    assert!(
        task["taint"]["source"]
            .as_str()
            .unwrap()
            .contains("reviewer")
    );
    assert_eq!(end["status"], "completed");
    assert!(entered(&ran, "Activity_pay"));
    // Every step is journalled: card, send, status, reply.
    for step in [
        "card: peer-data speaks A2A 1.0",
        "send task",
        "[completed]",
        "reply: task",
    ] {
        assert!(ran.journal.contains(step), "{step}\n{}", ran.show());
    }
    // 1.0 on the wire: the header and the media type.
    let sends: Vec<Value> = peer
        .requests()
        .into_iter()
        .filter(|r| r["method"] == "SendMessage")
        .collect();
    assert_eq!(sends.len(), 1, "{:?}", peer.requests());
    assert_eq!(sends[0]["a2a_version"], "1.0");
    assert_eq!(sends[0]["content_type"], "application/a2a+json");
    assert!(peer.requests().iter().any(|r| r["method"] == "GetTask"));
    // The round trip (card, send, polls, reply), for the record: docs/a2a.md.
    let reply = ran
        .journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["model"] == "a2a:reviewer" && r["outcome"] == "answered")
        .unwrap();
    eprintln!("delegation round trip: {} ms", reply["latency_ms"]);
    // A second run reuses nothing but is as quick: the card is read once per run.
    let ran = start(apps.path(), &[], &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    let reply = ran
        .journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["model"] == "a2a:reviewer" && r["outcome"] == "answered")
        .unwrap();
    eprintln!(
        "delegation round trip, warm agent: {} ms",
        reply["latency_ms"]
    );
    let cards = peer
        .requests()
        .iter()
        .filter(|r| r["path"] == "/.well-known/agent-card.json")
        .count();
    assert_eq!(cards, 2, "one card read per run");
}

#[test]
fn a_text_reply_is_parsed_as_json_and_prose_fails_the_task_into_its_error_boundary() {
    let peer = Peer::start("text", &[], &[]);
    let apps = app(&peer.url, "", |c| c);
    let ran = start(apps.path(), &[], &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    let (task, _) = review(&ran);
    assert_eq!(task["variables"]["score"], 0.7, "{}", ran.show());

    let peer = Peer::start("prose", &[], &[]);
    let apps = app(&peer.url, "", |c| c);
    let ran = start(apps.path(), &[], &[]);
    let (task, end) = review(&ran);
    assert_eq!(task["status"], "failed", "{}", ran.show());
    assert_eq!(task["error_code"], "REMOTE_FAILED", "{}", ran.show());
    let error = task["error"].as_str().unwrap();
    assert!(error.contains("not a JSON object"), "{error}");
    // The error boundary caught it.
    assert!(entered(&ran, "Activity_escalate"), "{}", ran.show());
    assert_eq!(end["status"], "completed");
}

#[test]
fn a_failed_remote_task_fails_the_run_without_an_error_boundary() {
    let peer = Peer::start("fail", &[], &[]);
    // Without the boundary event, the failure ends the run.
    let apps = app(&peer.url, "", |c| c);
    let bpmn = apps.path().join("remote_review/config/remote_review.bpmn");
    let text = std::fs::read_to_string(&bpmn).unwrap();
    let start_b = text.find("    <boundaryEvent").unwrap();
    let end_b = text.find("</boundaryEvent>\n").unwrap() + "</boundaryEvent>\n".len();
    let text = format!("{}{}", &text[..start_b], &text[end_b..])
        .replace(
            r#"    <sequenceFlow id="Flow_failed" sourceRef="Boundary_review_failed" targetRef="Activity_escalate" />
"#,
            "",
        )
        .replace(
            r#"    <sequenceFlow id="Flow_escalated" sourceRef="Activity_escalate" targetRef="EndEvent_escalated" />
"#,
            "",
        )
        .replace(r#"    <task id="Activity_escalate" name="Escalate to a person" />
"#, "")
        .replace(r#"    <endEvent id="EndEvent_escalated" />
"#, "");
    std::fs::write(&bpmn, text).unwrap();
    let ran = start(apps.path(), &[], &[]);
    assert_ne!(ran.code, 0, "{}", ran.show());
    let (task, end) = review(&ran);
    assert_eq!(task["error_code"], "REMOTE_FAILED");
    assert!(
        task["error"].as_str().unwrap().contains("no capacity"),
        "{}",
        ran.show()
    );
    assert_eq!(end["status"], "failed", "{}", ran.show());
}

#[test]
fn an_unreachable_agent_fails_the_task_clearly() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let apps = app(&format!("http://127.0.0.1:{port}"), "", |c| c);
    let ran = start(apps.path(), &[], &[]);
    let (task, _) = review(&ran);
    assert_eq!(task["error_code"], "REMOTE_FAILED");
    assert!(
        task["error"].as_str().unwrap().contains("unreachable"),
        "{}",
        ran.show()
    );
    assert!(entered(&ran, "Activity_escalate"));
}

#[test]
fn input_required_is_answered_by_the_reasoner_chain_in_the_same_task() {
    let peer = Peer::start("ask", &[], &[]);
    let apps = app(&peer.url, "", |c| {
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
    let ran = start(apps.path(), &["--answers", answers.to_str().unwrap()], &[]);
    let (task, _) = review(&ran);
    assert_eq!(task["outputs"]["budget"], "500 EUR", "{}", ran.show());
    assert!(
        ran.journal.contains("input-required task"),
        "{}",
        ran.show()
    );
    assert!(ran.journal.contains("Which budget?"));
    // One A2A task: the reply went back with the task id (two SendMessage, one task).
    let sends = peer
        .requests()
        .into_iter()
        .filter(|r| r["method"] == "SendMessage")
        .count();
    assert_eq!(sends, 2);
}

#[test]
fn a_slow_agent_is_cancelled_at_its_timeout() {
    let peer = Peer::start("slow", &[], &[]);
    let apps = app(&peer.url, "", |c| c.replace("timeout: 20", "timeout: 1.5"));
    let started = Instant::now();
    let ran = start(apps.path(), &[], &[]);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{}",
        ran.show()
    );
    let (task, _) = review(&ran);
    assert_eq!(task["error_code"], "REMOTE_FAILED");
    assert!(
        task["error"]
            .as_str()
            .unwrap()
            .contains("did not finish within"),
        "{}",
        ran.show()
    );
    assert!(
        peer.requests().iter().any(|r| r["method"] == "CancelTask"),
        "{:?}",
        peer.requests()
    );
    // The SDK handed the cancellation to the agent.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !peer.cancels().contains("canceled") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        peer.cancels().contains("canceled"),
        "the agent saw no cancellation"
    );
    assert!(entered(&ran, "Activity_escalate"));
}

#[test]
fn a_0_3_agent_is_spoken_to_in_0_3() {
    let peer = Peer::start("data", &["--v03"], &[]);
    let apps = app(&peer.url, "", |c| c);
    let ran = start(apps.path(), &[], &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    let (task, _) = review(&ran);
    assert_eq!(task["variables"]["approved"], true, "{}", ran.show());
    assert!(ran.journal.contains("speaks A2A 0.3"), "{}", ran.show());
    assert!(
        peer.requests()
            .iter()
            .any(|r| r["method"] == "message/send"),
        "{:?}",
        peer.requests()
    );
}

const CANARY: &str = "canary-7f3a9c1e5b2d4a60";

#[test]
fn bearer_and_api_key_auth_reach_the_agent_and_the_secret_reaches_nothing_else() {
    let peer = Peer::start(
        "data",
        &["--bearer-env", "PEER_TOKEN"],
        &[("PEER_TOKEN", CANARY)],
    );
    let auth = "    auth: {type: bearer, token_env: REVIEWER_TOKEN}";
    let apps = app(&peer.url, auth, |c| c);
    let ran = start(apps.path(), &["-vv"], &[("REVIEWER_TOKEN", CANARY)]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert!(
        peer.requests()
            .iter()
            .filter(|r| r["method"].is_string())
            .all(|r| r["auth_ok"] == true)
    );
    for (what, text) in [
        ("stdout", &ran.stdout),
        ("stderr", &ran.stderr),
        ("journal", &ran.journal),
    ] {
        assert!(!text.contains(CANARY), "the secret reached {what}");
    }
    // A wrong token: 401, the task fails saying so, and the secret is still nowhere.
    let ran = start(apps.path(), &[], &[("REVIEWER_TOKEN", "wrong-token-value")]);
    let (task, _) = review(&ran);
    assert!(
        task["error"]
            .as_str()
            .unwrap()
            .contains("refused the credentials"),
        "{}",
        ran.show()
    );
    assert!(!ran.journal.contains("wrong-token-value"));
    // The variable not set: the task fails naming it.
    let ran = start(apps.path(), &[], &[]);
    let (task, _) = review(&ran);
    assert!(
        task["error"].as_str().unwrap().contains("REVIEWER_TOKEN"),
        "{}",
        ran.show()
    );

    let peer = Peer::start(
        "data",
        &[
            "--api-key-env",
            "PEER_KEY",
            "--api-key-header",
            "X-Review-Key",
        ],
        &[("PEER_KEY", CANARY)],
    );
    let auth = "    auth: {type: api_key, header: X-Review-Key, key_env: REVIEWER_KEY}";
    let apps = app(&peer.url, auth, |c| c);
    let ran = start(apps.path(), &["-vv"], &[("REVIEWER_KEY", CANARY)]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    for text in [&ran.stdout, &ran.stderr, &ran.journal] {
        assert!(!text.contains(CANARY));
    }
}

#[test]
fn an_inline_token_is_a_validate_error_that_says_how_to_move_it() {
    let auth = format!("    auth: {{type: bearer, token: {CANARY}}}");
    let apps = app("http://127.0.0.1:9", &auth, |c| c);
    let out = Command::new(BIN)
        .env("NO_COLOR", "1")
        .args([
            "--apps-dir",
            apps.path().to_str().unwrap(),
            "validate",
            "remote_review",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("config::secret"), "{stdout}");
    assert!(stdout.contains("token_env"), "{stdout}");
}

/// The consultation app, pointed at `url`; its journal after `cuga-flo start` with the
/// model at `model_url`.
fn consult_run(url: &str, model_url: &str) -> Ran {
    consult_run_with(url, Some(model_url))
}

fn consult_run_with(url: &str, model_url: Option<&str>) -> Ran {
    let apps = consult_app(url, |c| c);
    let runs = apps.path().join("runs");
    match model_url {
        Some(url) => {
            let env = model_env(url);
            cuga_in(
                apps.path(),
                &runs,
                &["start", "remote_consult", "--json"],
                &envs_of(&env),
            )
        }
        None => cuga_in(
            apps.path(),
            &runs,
            &["start", "remote_consult", "--json", "--no-model"],
            &[],
        ),
    }
}

/// A model that consults first, then routes by what the consultation said.
fn consulting_model() -> chat_server::ChatServer {
    chat_server::ChatServer::start(|r| {
        let messages = r.body["messages"].as_array().unwrap();
        let tool = messages.iter().rev().find(|m| m["role"] == "tool");
        let Some(tool) = tool else {
            let tools: Vec<&str> = r.body["tools"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|t| t["function"]["name"].as_str().unwrap())
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(
                tools,
                ["consult_user"],
                "the gateway is offered consult_user"
            );
            return chat_server::Reply::tool_call(
                "consult_user",
                r#"{"question": "Does the customer want express shipping?"}"#,
            );
        };
        let said = tool["content"].as_str().unwrap().to_string();
        if said.contains("asks_back") {
            // The person asked back: answer them (in the same consultation).
            return chat_server::Reply::tool_call(
                "consult_user",
                r#"{"question": "Yes, it is a gift."}"#,
            );
        }
        let flow = if said.contains("prefers express") {
            "Flow_express"
        } else {
            "Flow_standard"
        };
        chat_server::Reply::completion(
            &serde_json::json!({"reason": format!("consulted: {said}"), "flow": flow}).to_string(),
        )
    })
}

#[test]
fn a_gateway_model_consults_a_remote_person_and_routes_by_the_answer() {
    let peer = Peer::start("consult", &[], &[]);
    let model = consulting_model();
    let ran = consult_run(&peer.url, &model.url());
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert!(entered(&ran, "Activity_express"), "{}", ran.show());
    // The exchange is journalled with the gateway's calls.
    assert!(ran.journal.contains("a2a:advisor"), "{}", ran.show());
    assert!(ran.journal.contains("reply: task"), "{}", ran.show());
    let sends: Vec<Value> = peer
        .requests()
        .into_iter()
        .filter(|r| r["method"] == "SendMessage")
        .collect();
    assert_eq!(sends.len(), 1);
}

#[test]
fn a_failed_consultation_is_journalled_and_the_model_decides_without_it() {
    let peer = Peer::start("fail", &[], &[]);
    let model = consulting_model();
    let ran = consult_run(&peer.url, &model.url());
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert!(entered(&ran, "Activity_standard"), "{}", ran.show());
    assert!(
        ran.journal.contains("\"model\":\"a2a:advisor\""),
        "{}",
        ran.show()
    );
    assert!(ran.journal.contains("no capacity"), "{}", ran.show());
    // What the model was told.
    let told = model
        .requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(told.contains("consultation unavailable"), "{told}");
}

/// The `SendMessage` requests the peer saw.
fn sends(peer: &Peer) -> Vec<Value> {
    peer.requests()
        .into_iter()
        .filter(|r| r["method"] == "SendMessage")
        .collect()
}

#[test]
fn a_consultants_question_back_goes_to_the_model_whose_next_consult_answers_in_the_same_task() {
    let peer = Peer::start("probe", &[], &[]);
    let model = consulting_model();
    let ran = consult_run(&peer.url, &model.url());
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert!(entered(&ran, "Activity_express"), "{}", ran.show());
    // The model got the question back as its tool's result, marked as a question, and
    // answered it with its next consult_user; then it decided with the reply.
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "{}", ran.show());
    let results: Vec<String> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    let asked: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(asked["asks_back"], "Is the order a gift?", "{asked}");
    assert!(
        results[1].contains("is it a gift? Yes, it is a gift."),
        "{results:?}"
    );
    // One A2A task: the answer went in the task the question came from, same context.
    let sends = sends(&peer);
    assert_eq!(sends.len(), 2, "{sends:?}");
    assert!(sends[0]["task_id"].is_null());
    let task_id = sends[1]["task_id"].as_str().expect("sent in the task");
    assert_eq!(sends[1]["context_id"], sends[0]["context_id"], "{sends:?}");
    assert_eq!(peer.count("CancelTask"), 0);
    // Each round is journalled with the gateway's calls.
    for step in [
        format!("asks back: task {task_id} [input-required]: Is the order a gift?"),
        format!("answer task {task_id}: Yes, it is a gift."),
        format!("reply: task {task_id} completed"),
    ] {
        assert!(ran.journal.contains(&step), "{step}\n{}", ran.show());
    }
}

#[test]
fn a_question_back_the_model_leaves_unanswered_is_given_up_when_it_decides() {
    let peer = Peer::start("probe", &[], &[]);
    // A model that consults, then decides without answering the question it gets back.
    let model = chat_server::ChatServer::start(|r| {
        let messages = r.body["messages"].as_array().unwrap();
        if !messages.iter().any(|m| m["role"] == "tool") {
            return chat_server::Reply::tool_call(
                "consult_user",
                r#"{"question": "Does the customer want express shipping?"}"#,
            );
        }
        chat_server::Reply::completion(
            &serde_json::json!({"reason": "no time to ask again", "flow": "Flow_standard"})
                .to_string(),
        )
    });
    let ran = consult_run(&peer.url, &model.url());
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert!(entered(&ran, "Activity_standard"), "{}", ran.show());
    // The task the question came from is cancelled at the agent, and journalled.
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 1, "{:?}", peer.requests());
    assert!(
        ran.journal.contains(
            "the model decided without answering the question remote agent `advisor` asked back"
        ),
        "{}",
        ran.show()
    );
}

#[test]
fn a_consultants_question_back_parks_for_a_person_whose_reply_goes_in_the_same_task() {
    let peer = Peer::start("probe", &[], &[]);
    let apps = consult_app(&peer.url, |c| c);
    let runs = apps.path().join("runs");
    let ran = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_consult", "--no-model", "--json"],
        &[],
    );
    // Nobody decides before the remote person, who asks back: the run parks on it, the
    // task left open at the agent.
    let parked = ran.parked();
    let task_id = parked.on_remote("advisor", "input-required");
    let run_id = parked.run_id.clone();
    assert_eq!(parked.question["element"], "Gateway_shipping");
    let instruction = parked.question["instruction"].as_str().unwrap();
    assert!(
        instruction.contains("Is the order a gift?") && instruction.contains("--reply"),
        "{instruction}"
    );
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
    let pending = cuga_in(apps.path(), &runs, &["runs", "pending"], &[]);
    assert!(
        pending.stdout.contains("Is the order a gift?")
            && pending.stdout.contains(&format!(
                "runs answer {run_id} Gateway_shipping --reply TEXT"
            )),
        "{}",
        pending.show()
    );
    // A flow is not an answer to it: the question is the remote person's.
    let refused = cuga_in(
        apps.path(),
        &runs,
        &[
            "runs",
            "answer",
            &run_id,
            "Gateway_shipping",
            "--flow",
            "Flow_express",
        ],
        &[],
    );
    assert_eq!(refused.code, 2, "{}", refused.show());
    assert!(refused.stderr.contains("--reply"), "{}", refused.show());

    // The reply goes to them in the same task; they choose, and the gateway routes.
    let done = cuga_in(
        apps.path(),
        &runs,
        &[
            "runs",
            "answer",
            &run_id,
            "Gateway_shipping",
            "--reply",
            "yes, wrap it",
            "--by",
            "ada",
        ],
        &[],
    );
    assert_eq!(done.code, 0, "{}", done.show());
    let replied = done.record("remote_replied", "Gateway_shipping");
    assert_eq!(replied["task_id"], task_id.as_str());
    assert_eq!(replied["reply"], "yes, wrap it");
    assert_eq!(replied["by"], "ada");
    let routed = done.record("gateway_routed", "Gateway_shipping");
    assert_eq!(routed["decided_by"], "remote", "{routed}");
    assert!(done.entered("Activity_express"), "{}", done.show());
    let sends = sends(&peer);
    assert_eq!(sends.len(), 2, "{sends:?}");
    assert_eq!(sends[1]["task_id"], task_id.as_str(), "{sends:?}");
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
    assert!(
        done.journal
            .contains(&format!("answer task {task_id}: yes, wrap it")),
        "{}",
        done.show()
    );
}

/// The original project's `excel_flows_kogito` (three tasks delegated to `agent0`, a
/// gateway consulting it) runs natively against an `a2a-sdk` delegate.
#[test]
fn the_upstream_excel_flows_kogito_app_runs_natively_against_a_delegate() {
    let peer = Peer::start("data", &[], &[]);
    let apps = tempfile::tempdir().unwrap();
    let src = root().join("tests/fixtures/upstream-apps/excel_flows_kogito");
    let dst = apps.path().join("excel_flows_kogito");
    for sub in ["config", "policies"] {
        std::fs::create_dir_all(dst.join(sub)).unwrap();
        for f in std::fs::read_dir(src.join(sub)).unwrap().flatten() {
            std::fs::copy(f.path(), dst.join(sub).join(f.file_name())).unwrap();
        }
    }
    let config = dst.join("config/excel_flows_kogito_config.yaml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("http://a.b.c", &peer.url);
    std::fs::write(&config, text).unwrap();
    let answers = apps.path().join("answers.yaml");
    std::fs::write(
        &answers,
        "answers:\n  n_idef1d8509-fe5d-49b5-b0b6-03d2711a6371: {flow: n_c55888b8-8a2c-4c56-b7b7-9b85c617bbf0}\n",
    )
    .unwrap();
    let runs = apps.path().join("runs");
    let out = Command::new(BIN)
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .args([
            "--apps-dir",
            apps.path().to_str().unwrap(),
            "start",
            "excel_flows_kogito",
        ])
        .args([
            "--engine",
            "native",
            "--no-model",
            "--answers",
            answers.to_str().unwrap(),
        ])
        .args(["--run-dir", runs.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("3 remote"), "{stdout}");
    // The exchanges are not model calls: no model usage, no model budget spent.
    assert!(!stdout.contains("  model: "), "{stdout}");
    let sends = peer
        .requests()
        .into_iter()
        .filter(|r| r["method"] == "SendMessage")
        .count();
    assert_eq!(sends, 3);
}

#[test]
fn without_a_model_the_remote_person_chooses_the_flow() {
    let peer = Peer::start("choose", &[], &[]);
    let ran = consult_run_with(&peer.url, None);
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert!(entered(&ran, "Activity_express"), "{}", ran.show());
    assert!(
        ran.journal.contains("\"decided_by\":\"remote\""),
        "{}",
        ran.show()
    );

    // A failed consultation is journalled and the next reasoner decides: here nobody is
    // at the terminal, so the question parks.
    let peer = Peer::start("fail", &[], &[]);
    let ran = consult_run_with(&peer.url, None);
    assert!(
        ran.journal.contains("\"model\":\"a2a:advisor\""),
        "{}",
        ran.show()
    );
    assert!(ran.journal.contains("no capacity"), "{}", ran.show());
    assert!(!entered(&ran, "Activity_express"), "{}", ran.show());
    assert!(
        ran.journal.contains("run_waiting") || ran.journal.contains("parked"),
        "{}",
        ran.show()
    );
}

#[test]
fn a_slow_delegation_parks_the_run_and_a_resume_continues_with_its_reply() {
    // The agent works 5 s; the run waits 1 s live, then parks.
    let peer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "5")]);
    let sent = Instant::now();
    let apps = app_waiting(&peer.url, "1s");
    let runs = apps.path().join("runs");
    let ran = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_review", "--no-model", "--json"],
        &[],
    );
    let parked = ran.parked();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "it parked before the agent finished\n{}",
        ran.show()
    );
    let (run_id, question, records) = (parked.run_id.clone(), &parked.question, &parked.records);
    // Crash-safety: the A2A task is journalled (in the parked question) before the run
    // parks, so a resume never sends the message again.
    let waiting = parked.position("run_waiting");
    assert!(
        parked.position("question_parked") < waiting,
        "{}",
        ran.show()
    );
    assert_eq!(question["element"], "Activity_review");
    let task_id = parked.on_remote("reviewer", "working");
    assert_eq!(question["remote"]["context_id"], run_id.as_str());
    assert!(
        records[waiting]["due_ms"].as_u64().is_some(),
        "{}",
        ran.show()
    );
    assert!(
        !records
            .iter()
            .any(|r| r["event"] == "task_finished" && r["node"] == "Activity_review")
    );
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());

    // `runs answer` refuses it: a remote agent, not a person, answers it.
    let answered = cuga_in(
        apps.path(),
        &runs,
        &[
            "runs",
            "answer",
            &run_id,
            "Activity_review",
            "--outputs",
            r#"{"approved": false, "score": 0}"#,
        ],
        &[],
    );
    assert_ne!(answered.code, 0, "{}", answered.show());
    assert!(
        answered
            .stderr
            .contains("waits for remote agent `reviewer`"),
        "{}",
        answered.show()
    );

    // Resumed while the agent still works: GetTask on the same task, and the run parks
    // again (nothing sent again, nothing cancelled).
    let again = cuga_in(apps.path(), &runs, &["runs", "resume", &run_id], &[]);
    assert!(sent.elapsed() < Duration::from_secs(5), "{}", again.show());
    assert_eq!(again.code, 3, "parked again\n{}", again.show());
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
    assert!(peer.count("GetTask") >= 2);

    // Once the agent has finished (and the poll deadline passed), `runs resume --due`
    // picks the run up and it goes on with the reply.
    support::sleep_until(sent + Duration::from_secs(6));
    let done = cuga_in(apps.path(), &runs, &["runs", "resume", "--due"], &[]);
    assert_eq!(done.code, 0, "{}", done.show());
    let (task, end) = review(&done);
    assert_eq!(task["status"], "completed", "{}", done.show());
    assert_eq!(task["decided_by"], "remote");
    assert_eq!(task["variables"]["approved"], true);
    assert_eq!(task["variables"]["score"], 0.5);
    assert_eq!(task["outputs"]["late"], true);
    assert!(
        task["reason"].as_str().unwrap().contains(&task_id),
        "{}",
        done.show()
    );
    assert_eq!(end["status"], "completed");
    assert!(
        done.journal.contains(&format!("follow-up task {task_id}")),
        "{}",
        done.show()
    );
    // The agent saw the message exactly once.
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
}

#[test]
fn a_wait_that_is_not_a_duration_is_a_validate_error() {
    let apps = app("http://127.0.0.1:9", "", |c| {
        c.replace("timeout: 20", "timeout: 20\n    wait: soon")
    });
    let out = Command::new(BIN)
        .env("NO_COLOR", "1")
        .args([
            "--apps-dir",
            apps.path().to_str().unwrap(),
            "validate",
            "remote_review",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("`wait` of remote agent `reviewer`"),
        "{stdout}"
    );
}

#[test]
fn an_agent_question_nobody_answers_parks_the_run_visibly_and_a_resume_answers_it() {
    let peer = Peer::start("ask", &[], &[]);
    let apps = app(&peer.url, "", |c| {
        c.replace("  approved: false\n", "  approved: false\n  budget: \"\"\n")
            .replace(
                "      score: score\n",
                "      score: score\n      budget: budget\n",
            )
            .replace("timeout: 20", "timeout: 20\n    wait: 30s")
    });
    let runs = apps.path().join("runs");
    // Nobody answers "Which budget?" now: the task stays open at the agent and the run
    // parks on it (no CancelTask), the question visible.
    let answers = apps.path().join("answers.yaml");
    std::fs::write(&answers, "answers: {}\n").unwrap();
    let ran = cuga_in(
        apps.path(),
        &runs,
        &[
            "start",
            "remote_review",
            "--no-model",
            "--answers",
            answers.to_str().unwrap(),
        ],
        &[],
    );
    let parked = ran.parked();
    let (run_id, question) = (parked.run_id.clone(), &parked.question);
    parked.on_remote("reviewer", "input-required");
    assert!(
        question["instruction"]
            .as_str()
            .unwrap()
            .contains("Which budget?")
    );
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
    let show = cuga_in(apps.path(), &runs, &["runs", "show", &run_id], &[]);
    assert!(
        show.stdout.contains("waits for remote agent `reviewer`")
            && show.stdout.contains("Which budget?"),
        "{}",
        show.show()
    );
    let pending = cuga_in(apps.path(), &runs, &["runs", "pending"], &[]);
    assert!(
        pending.stdout.contains("input-required") && pending.stdout.contains("Which budget?"),
        "{}",
        pending.show()
    );

    // The run's answers file now answers it: the resumed run reads the task again and
    // the answer goes back in the same A2A task.
    std::fs::write(
        &answers,
        "answers:\n  Activity_review: {outputs: {answer: \"500 EUR\"}}\n",
    )
    .unwrap();
    let done = cuga_in(apps.path(), &runs, &["runs", "resume", &run_id], &[]);
    assert_eq!(done.code, 0, "{}", done.show());
    let (task, end) = review(&done);
    assert_eq!(task["outputs"]["budget"], "500 EUR", "{}", done.show());
    assert_eq!(end["status"], "completed");
    // One A2A task: the first message and the answer (no message sent again).
    assert_eq!(peer.count("SendMessage"), 2, "{:?}", peer.requests());
}

/// The remote_review app with `wait: 0.5s`, parked on the slow peer (working `secs`): the
/// apps folder, the runs folder, the run id and the parked question.
fn parked_on_slow(peer: &Peer) -> (tempfile::TempDir, PathBuf, String, Value) {
    let apps = app_waiting(&peer.url, "0.5s");
    let runs = apps.path().join("runs");
    let ran = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_review", "--no-model", "--json"],
        &[],
    );
    let parked = ran.parked();
    (apps, runs, parked.run_id, parked.question)
}

#[test]
fn a_crash_right_after_the_task_is_journalled_resumes_without_sending_it_again() {
    let peer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "3")]);
    let sent = Instant::now();
    let (apps, runs, run_id, question) = parked_on_slow(&peer);
    // The process dies right after `question_parked` (with the A2A task id) was written:
    // everything after it is lost.
    let journal = runs.join("runs").join(&run_id).join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let keep: Vec<&str> = text
        .lines()
        .scan(false, |past, l| {
            let line = (!*past).then_some(l);
            *past |= l.contains("\"question_parked\"");
            Some(line)
        })
        .flatten()
        .collect();
    assert!(keep.last().unwrap().contains("\"question_parked\""));
    assert!(text.contains("\"run_waiting\"") && !keep.join("\n").contains("\"run_waiting\""));
    std::fs::write(&journal, keep.join("\n") + "\n").unwrap();
    // The head file as a commit right after `question_parked` leaves it: its seq, and its
    // line's hash (the next record's `prev`).
    let next: Value = serde_json::from_str(text.lines().nth(keep.len()).unwrap()).unwrap();
    std::fs::write(
        journal.with_file_name("journal.head"),
        format!("{} {}\n", keep.len(), next["prev"].as_str().unwrap()),
    )
    .unwrap();
    support::sleep_until(sent + Duration::from_secs(4));
    let done = cuga_in(apps.path(), &runs, &["runs", "resume", &run_id], &[]);
    assert_eq!(done.code, 0, "{}", done.show());
    let (task, end) = review(&done);
    assert_eq!(task["outputs"]["late"], true, "{}", done.show());
    assert_eq!(end["status"], "completed");
    let task_id = question["remote"]["task_id"].as_str().unwrap();
    assert!(done.journal.contains(&format!("follow-up task {task_id}")));
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
}

#[test]
fn the_worker_picks_up_a_run_parked_on_a_remote_task_once_its_poll_is_due() {
    let peer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "2")]);
    let sent = Instant::now();
    let (apps, runs, _run_id, _) = parked_on_slow(&peer);
    support::sleep_until(sent + Duration::from_secs(3));
    let done = cuga_in(apps.path(), &runs, &["worker", "--once"], &[]);
    assert_eq!(done.code, 0, "{}", done.show());
    let (task, end) = review(&done);
    assert_eq!(task["variables"]["approved"], true, "{}", done.show());
    assert_eq!(end["status"], "completed");
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
}

#[test]
fn runs_cancel_sends_cancel_task_for_the_remote_task_a_parked_run_waits_for() {
    let peer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "30")]);
    let (apps, runs, run_id, question) = parked_on_slow(&peer);
    let task_id = question["remote"]["task_id"].as_str().unwrap().to_string();
    let ran = cuga_in(
        apps.path(),
        &runs,
        &[
            "runs",
            "cancel",
            &run_id,
            "--reason",
            "the claim was withdrawn",
            "--by",
            "bob",
            "--json",
        ],
        &[],
    );
    assert_eq!(ran.code, 0, "{}", ran.show());
    let out: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(out["status"], "cancelled");
    assert_eq!(out["remote"][0]["task_id"], task_id.as_str());
    // The peer saw the message once and the cancellation once.
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 1, "{:?}", peer.requests());
    assert!(peer.cancels().contains(&task_id), "{}", peer.cancels());
    let records = ran.records();
    let cancelled = records
        .iter()
        .find(|r| r["event"] == "run_cancelled")
        .unwrap_or_else(|| panic!("{}", ran.show()));
    assert_eq!(cancelled["by"], "bob");
    assert_eq!(cancelled["reason"], "the claim was withdrawn");
    let remote = &cancelled["remote"][0];
    assert_eq!(remote["agent"], "reviewer");
    assert_eq!(remote["task_id"], task_id.as_str());
    assert_eq!(remote["node"], "Activity_review");
    assert_eq!(remote["state"], "canceled", "{cancelled}");
    let end = records.last().unwrap();
    assert_eq!(end["event"], "run_finished");
    assert_eq!(end["status"], "cancelled");
    // A resume is refused: nothing is sent again.
    let again = cuga_in(apps.path(), &runs, &["runs", "resume", &run_id], &[]);
    assert_eq!(again.code, 2, "{}", again.show());
    assert!(again.stderr.contains("cancelled"), "{}", again.show());
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
}

#[test]
fn a_failing_cancel_task_is_journalled_and_the_run_is_cancelled_all_the_same() {
    let mut peer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "30")]);
    let (apps, runs, run_id, _) = parked_on_slow(&peer);
    // The agent is gone by the time the run is cancelled.
    peer.child.kill().unwrap();
    peer.child.wait().unwrap();
    let ran = cuga_in(apps.path(), &runs, &["runs", "cancel", &run_id], &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert!(ran.stdout.contains("CancelTask failed"), "{}", ran.show());
    let records = ran.records();
    let cancelled = records
        .iter()
        .find(|r| r["event"] == "run_cancelled")
        .unwrap_or_else(|| panic!("{}", ran.show()));
    let remote = &cancelled["remote"][0];
    assert!(remote["state"].is_null(), "{cancelled}");
    assert!(
        remote["error"].as_str().unwrap().contains("reviewer"),
        "{cancelled}"
    );
    assert_eq!(records.last().unwrap()["status"], "cancelled");
}

/// The crash point passed right after `remote_task_started` is committed, in a run of the
/// remote_review app against `peer` (a run of its own, traced).
fn remote_task_crash_point(peer: &Peer) -> String {
    let apps = app_waiting(&peer.url, "0.5s");
    let runs = apps.path().join("runs");
    let ran = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_review", "--no-model"],
        &[("CUGA_FLO_CRASH_TRACE", "1")],
    );
    assert_eq!(ran.code, 3, "{}", ran.show());
    let line = ran
        .stderr
        .lines()
        .find(|l| l.ends_with(" remote task journalled"))
        .unwrap_or_else(|| panic!("no crash point after the remote task\n{}", ran.show()));
    line.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn a_crash_right_after_send_message_resumes_with_get_task_and_never_sends_again() {
    let tracer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "30")]);
    let point = remote_task_crash_point(&tracer);
    drop(tracer);

    let peer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "2")]);
    let sent = Instant::now();
    let apps = app_waiting(&peer.url, "0.5s");
    let runs = apps.path().join("runs");
    let crashed = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_review", "--no-model"],
        &[("CUGA_FLO_CRASH_AT", point.as_str())],
    );
    assert_eq!(crashed.code, -1, "killed\n{}", crashed.show());
    let records = crashed.records();
    let last = records.last().unwrap();
    assert_eq!(last["event"], "remote_task_started", "{}", crashed.show());
    assert_eq!(last["node"], "Activity_review");
    assert_eq!(last["remote"]["agent"], "reviewer");
    let task_id = last["remote"]["task_id"].as_str().unwrap().to_string();
    assert!(!records.iter().any(|r| r["event"] == "question_parked"));
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());

    // Resumed once the agent has finished: GetTask on the journalled task, its reply
    // taken, the message never sent again.
    support::sleep_until(sent + Duration::from_secs(3));
    let run_id = crashed.run_id();
    let done = cuga_in(apps.path(), &runs, &["runs", "resume", &run_id], &[]);
    assert_eq!(done.code, 0, "{}", done.show());
    let (task, end) = review(&done);
    assert_eq!(task["outputs"]["late"], true, "{}", done.show());
    assert_eq!(end["status"], "completed");
    assert!(
        done.journal.contains(&format!("follow-up task {task_id}")),
        "{}",
        done.show()
    );
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    let verify = cuga_in(apps.path(), &runs, &["runs", "verify", &run_id], &[]);
    assert_eq!(verify.code, 0, "{}", verify.show());
}

#[test]
fn a_run_a_crash_left_after_send_message_is_cancelled_at_its_agent() {
    let tracer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "30")]);
    let point = remote_task_crash_point(&tracer);
    drop(tracer);

    let peer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "30")]);
    let apps = app_waiting(&peer.url, "0.5s");
    let runs = apps.path().join("runs");
    let crashed = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_review", "--no-model"],
        &[("CUGA_FLO_CRASH_AT", point.as_str())],
    );
    assert_eq!(crashed.code, -1, "killed\n{}", crashed.show());
    let records = crashed.records();
    let run_id = crashed.run_id();
    let task_id = records.last().unwrap()["remote"]["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let ran = cuga_in(apps.path(), &runs, &["runs", "cancel", &run_id], &[]);
    assert_eq!(ran.code, 0, "{}", ran.show());
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 1, "{:?}", peer.requests());
    assert!(peer.cancels().contains(&task_id), "{}", peer.cancels());
}

/// The consultation app in a temporary apps folder, pointed at `url`, with `edit` applied
/// to its config.
fn consult_app(url: &str, edit: impl Fn(String) -> String) -> tempfile::TempDir {
    fixture_app("remote_consult", url, edit)
}

/// The environment that points cuga-flo at the test model server.
fn model_env(url: &str) -> Vec<(&'static str, String)> {
    support::model_env(url, chat_server::MODEL)
}

#[test]
fn a_slow_consultation_parks_the_run_and_a_resume_decides_with_its_reply() {
    // The person behind the agent takes 4 s; the run waits 1 s live, then parks.
    let peer = Peer::start("choose", &[], &[("A2A_PEER_DELAY_SECS", "4")]);
    let sent = Instant::now();
    let apps = consult_app(&peer.url, |c| {
        c.replace("timeout: 10", "timeout: 60\n    wait: 1s")
    });
    let runs = apps.path().join("runs");
    let ran = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_consult", "--no-model", "--json"],
        &[],
    );
    let parked = ran.parked();
    assert!(sent.elapsed() < Duration::from_secs(4), "{}", ran.show());
    let (run_id, question, records) = (parked.run_id.clone(), &parked.question, &parked.records);
    // The remote task is committed as soon as the agent assigns it, then the question
    // the run parks on names it.
    let started = parked.position("remote_task_started");
    assert!(
        started < parked.position("question_parked"),
        "{}",
        ran.show()
    );
    assert_eq!(records[started]["node"], "Gateway_shipping");
    assert_eq!(question["element"], "Gateway_shipping");
    assert_eq!(question["kind"], "gateway", "{question}");
    let task_id = parked.on_remote("advisor", "working");
    assert!(
        question["remote"]["until_ms"].as_u64().is_some(),
        "{question}"
    );
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());

    // `runs show` and `runs pending` say what it waits for.
    let show = cuga_in(apps.path(), &runs, &["runs", "show", &run_id], &[]);
    assert!(
        show.stdout.contains("waits for remote agent `advisor`"),
        "{}",
        show.show()
    );
    let pending = cuga_in(apps.path(), &runs, &["runs", "pending"], &[]);
    assert!(
        pending.stdout.contains("advisor") && pending.stdout.contains(&task_id),
        "{}",
        pending.show()
    );

    // Resumed while the person still thinks: GetTask, and the run parks again.
    let again = cuga_in(apps.path(), &runs, &["runs", "resume", &run_id], &[]);
    assert!(sent.elapsed() < Duration::from_secs(4), "{}", again.show());
    assert_eq!(again.code, 3, "parked again\n{}", again.show());
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert!(peer.count("GetTask") >= 2);

    // Once answered, `runs resume --due` decides with the reply, as if it came live.
    support::sleep_until(sent + Duration::from_secs(5));
    let done = cuga_in(apps.path(), &runs, &["runs", "resume", "--due"], &[]);
    assert_eq!(done.code, 0, "{}", done.show());
    assert!(entered(&done, "Activity_express"), "{}", done.show());
    let routed = done
        .records()
        .into_iter()
        .find(|r| r["event"] == "gateway_routed" && r["node"] == "Gateway_shipping")
        .unwrap_or_else(|| panic!("not routed\n{}", done.show()));
    assert_eq!(routed["decided_by"], "remote", "{routed}");
    assert!(
        done.journal.contains(&format!("follow-up task {task_id}")),
        "{}",
        done.show()
    );
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 0, "{:?}", peer.requests());
}

#[test]
fn a_model_that_consulted_continues_its_conversation_on_resume_without_being_asked_again() {
    let peer = Peer::start("consult", &[], &[("A2A_PEER_DELAY_SECS", "3")]);
    let model = consulting_model();
    let env = model_env(&model.url());
    let sent = Instant::now();
    let apps = consult_app(&peer.url, |c| {
        c.replace("timeout: 10", "timeout: 60\n    wait: 1s")
    });
    let runs = apps.path().join("runs");
    let ran = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_consult", "--json"],
        &envs_of(&env),
    );
    let parked = ran.parked();
    assert_eq!(model.count(), 1, "the model asked to consult, once");
    let (run_id, question) = (parked.run_id.clone(), &parked.question);
    // The model's turn (its consult_user call) is journalled with the remote task.
    let turns = &question["remote"]["conversation"]["turns"];
    assert_eq!(
        turns[0]["tool_calls"][0]["name"], "consult_user",
        "{question}"
    );
    // Its call is journalled (and counted) with the parked visit.
    assert!(
        ran.journal
            .contains(&format!("\"model\":\"{}\"", chat_server::MODEL)),
        "{}",
        ran.show()
    );

    // Resumed while the person still thinks: parks again, the model not asked.
    let again = cuga_in(
        apps.path(),
        &runs,
        &["runs", "resume", &run_id],
        &envs_of(&env),
    );
    assert_eq!(again.code, 3, "parked again\n{}", again.show());
    assert_eq!(model.count(), 1, "{}", again.show());

    support::sleep_until(sent + Duration::from_secs(4));
    let done = cuga_in(
        apps.path(),
        &runs,
        &["runs", "resume", &run_id],
        &envs_of(&env),
    );
    assert_eq!(done.code, 0, "{}", done.show());
    assert!(entered(&done, "Activity_express"), "{}", done.show());
    // One more model call: the one after the tool result; its conversation holds the
    // earlier turn (restored from the journal) and the consultation's reply.
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "never re-asked for its earlier turn");
    let messages = requests[1].body["messages"].as_array().unwrap();
    let calls: Vec<&Value> = messages
        .iter()
        .filter(|m| m["role"] == "assistant" && m["tool_calls"].is_array())
        .collect();
    assert_eq!(calls.len(), 1, "{messages:?}");
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

#[test]
fn a_consultation_past_its_timeout_is_cancelled_and_the_model_decides_without_it() {
    let peer = Peer::start("consult", &[], &[("A2A_PEER_DELAY_SECS", "60")]);
    let model = consulting_model();
    let env = model_env(&model.url());
    let sent = Instant::now();
    let apps = consult_app(&peer.url, |c| {
        c.replace("timeout: 10", "timeout: 2\n    wait: 0.5s")
    });
    let runs = apps.path().join("runs");
    let ran = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_consult", "--json"],
        &envs_of(&env),
    );
    let run_id = ran.parked().run_id;
    support::sleep_until(sent + Duration::from_millis(2500));
    // Past the timeout: the task is cancelled and the model decides without it.
    let done = cuga_in(
        apps.path(),
        &runs,
        &["runs", "resume", &run_id],
        &envs_of(&env),
    );
    assert_eq!(done.code, 0, "{}", done.show());
    assert!(entered(&done, "Activity_standard"), "{}", done.show());
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
    assert_eq!(peer.count("CancelTask"), 1, "{:?}", peer.requests());
    let told = model
        .requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(told.contains("consultation unavailable"), "{told}");
    assert_eq!(model.count(), 2, "{told}");
}

#[test]
fn a_replay_of_a_run_parked_on_a_remote_task_sends_nothing() {
    let peer = Peer::start("slow", &[], &[("A2A_PEER_SLOW_SECS", "30")]);
    let (apps, runs, run_id, _) = parked_on_slow(&peer);
    assert_eq!(peer.count("SendMessage"), 1);
    let polled = peer.count("GetTask");
    let replay = cuga_in(apps.path(), &runs, &["runs", "replay", &run_id], &[]);
    // Nothing reaches the agent: no message, no GetTask, no CancelTask.
    assert_eq!(peer.count("SendMessage"), 1, "{}", replay.show());
    assert_eq!(peer.count("GetTask"), polled, "{}", replay.show());
    assert_eq!(peer.count("CancelTask"), 0, "{}", replay.show());
    let all = format!("{}{}{}", replay.stdout, replay.stderr, replay.journal);
    assert!(
        all.contains("read-only against remote agents"),
        "{}",
        replay.show()
    );
}

#[test]
fn a_replay_of_a_completed_delegation_uses_the_journalled_reply() {
    let peer = Peer::start("data", &[], &[]);
    let apps = app(&peer.url, "", |c| c);
    let runs = apps.path().join("runs");
    let ran = cuga_in(
        apps.path(),
        &runs,
        &["start", "remote_review", "--no-model", "--json"],
        &[],
    );
    assert_eq!(ran.code, 0, "{}", ran.show());
    let run_id = ran.run_id();
    let replay = cuga_in(apps.path(), &runs, &["runs", "replay", &run_id], &[]);
    assert_eq!(replay.code, 0, "{}", replay.show());
    assert!(replay.stdout.contains("all identical"), "{}", replay.show());
    assert_eq!(peer.count("SendMessage"), 1, "{:?}", peer.requests());
}

/// One delegation round trip to the `a2a-sdk` peer, timed in-process with cuga-flo's A2A
/// client: from `SendMessage` to the completed reply (the card read once before), median
/// of 25 (docs/a2a.md quotes it; debug build).
#[test]
fn delegation_round_trip_latency_to_the_python_sdk_agent() {
    use cuga_flo::a2a::{AgentConfig, Client, NoAnswerer, Outgoing};
    let peer = Peer::start("data", &[], &[]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (total, send) = runtime.block_on(async {
        let client = Client::new(AgentConfig::new("peer", &peer.url)).unwrap();
        client.card(false).await.unwrap();
        let mut total = Vec::new();
        let mut send = Vec::new();
        for i in 0..26 {
            let out = Outgoing {
                context_id: format!("latency-{i}"),
                text: "Review the claim.".into(),
                data: Some(serde_json::json!({"task": "Activity_review", "inputs": {"amount": 120}, "outputs": ["approved", "score"]})),
                metadata: Default::default(),
            };
            let mut steps = Vec::new();
            let started = Instant::now();
            let reply = client.exchange(&out, &NoAnswerer, &mut steps).await.unwrap();
            let took = started.elapsed();
            assert_eq!(reply.data.as_ref().unwrap()["approved"], true);
            if i == 0 {
                continue; // the first warms the connection pool
            }
            total.push(took.as_secs_f64() * 1000.0);
            let sent = steps.iter().find(|s| s.kind == "send").unwrap();
            send.push(sent.at_ms as f64);
        }
        (total, send)
    });
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (n, min, max) = (
        total.len(),
        total.iter().cloned().fold(f64::MAX, f64::min),
        total.iter().cloned().fold(0.0, f64::max),
    );
    let (m, s) = (median(total), median(send));
    eprintln!(
        "delegation round trip to the a2a-sdk peer: median {m:.1} ms of {n} (min {min:.1}, max {max:.1}); SendMessage alone median {s:.0} ms"
    );
    assert!(m < 5000.0, "median {m} ms");
}
