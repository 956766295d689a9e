//! The A2A client (src/a2a/) against a scripted in-process agent: what the official SDK
//! peers (tests/suite/a2a.rs) do not do: a card that claims 1.0 from an agent that answers only
//! 0.3 (fallback), garbage replies, a refused card, an agent that never ends a task.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use cuga_flo::a2a::{A2aError, AgentConfig, Client, Limits, NoAnswerer, Outgoing, Version};
use serde_json::{Value, json};

/// A JSON response (axum's `json` feature is off in this build).
fn json_response(status: StatusCode, v: &Value) -> Response {
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

type Handler = Arc<dyn Fn(&str, &HeaderMap, &Value) -> Response + Send + Sync>;

#[derive(Clone)]
struct Agent {
    card: Value,
    card_status: StatusCode,
    rpc: Handler,
    seen: Arc<Mutex<Vec<String>>>,
}

async fn card(State(a): State<Agent>) -> Response {
    json_response(a.card_status, &a.card)
}

async fn rpc(State(a): State<Agent>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = body["method"].as_str().unwrap_or("").to_string();
    a.seen.lock().unwrap().push(method.clone());
    (a.rpc)(&method, &headers, &body)
}

/// Serve `agent` on 127.0.0.1; its base URL.
async fn serve(mut agent: Agent) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    if agent.card.get("supportedInterfaces").is_some() {
        agent.card["supportedInterfaces"][0]["url"] = json!(format!("{url}/rpc"));
    } else if agent.card.get("url").is_some() {
        agent.card["url"] = json!(format!("{url}/rpc"));
    }
    let seen = agent.seen.clone();
    let app = Router::new()
        .route("/.well-known/agent-card.json", get(card))
        .route("/rpc", post(rpc))
        .with_state(agent);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

fn agent(card: Value, rpc: Handler) -> Agent {
    Agent {
        card,
        card_status: StatusCode::OK,
        rpc,
        seen: Arc::default(),
    }
}

fn card_1_0() -> Value {
    json!({"name": "scripted", "supportedInterfaces": [
        {"url": "", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]})
}

fn out() -> Outgoing {
    Outgoing {
        context_id: "run-1".into(),
        text: "hello".into(),
        data: Some(json!({"x": 1})),
        metadata: Default::default(),
    }
}

fn client(url: &str, timeout: Duration) -> Client {
    let mut config = AgentConfig::new("scripted", url);
    config.timeout = timeout;
    Client::new(config).unwrap()
}

fn result(id: &Value, result: Value) -> Response {
    json_response(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

#[tokio::test]
async fn a_1_0_card_from_a_0_3_agent_falls_back_to_0_3() {
    let (url, seen) = serve(agent(
        card_1_0(),
        Arc::new(|method, headers, body| match method {
            "SendMessage" => {
                assert_eq!(headers["a2a-version"], "1.0");
                json_response(StatusCode::OK, &json!({"jsonrpc": "2.0", "id": body["id"],
                    "error": {"code": -32009, "message": "A2A version '1.0' is not supported"}}))
            }
            "message/send" => {
                assert_eq!(body["params"]["message"]["kind"], "message");
                assert_eq!(body["params"]["message"]["parts"][1]["kind"], "data");
                result(&body["id"], json!({"kind": "task", "id": "t1", "contextId": "run-1",
                    "status": {"state": "completed"},
                    "artifacts": [{"artifactId": "a", "parts": [{"kind": "data", "data": {"ok": true}}]}]}))
            }
            other => panic!("unexpected {other}"),
        }),
    ))
    .await;
    let mut steps = Vec::new();
    let reply = client(&url, Duration::from_secs(5))
        .exchange(&out(), &NoAnswerer, &mut steps)
        .await
        .unwrap();
    assert_eq!(reply.version, Version::V03);
    assert_eq!(reply.data, Some(json!({"ok": true})));
    assert!(steps.iter().any(|s| s.kind == "fallback"), "{steps:?}");
    assert_eq!(*seen.lock().unwrap(), ["SendMessage", "message/send"]);
}

#[tokio::test]
async fn a_reply_that_is_not_json_is_malformed_and_a_refused_card_is_unauthorized() {
    let (url, _) = serve(agent(
        card_1_0(),
        Arc::new(|_, _, _| (StatusCode::OK, "<html>oops</html>").into_response()),
    ))
    .await;
    let mut steps = Vec::new();
    let err = client(&url, Duration::from_secs(5))
        .exchange(&out(), &NoAnswerer, &mut steps)
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Malformed { .. }), "{err}");

    let mut refused = agent(
        card_1_0(),
        Arc::new(|_, _, _| StatusCode::OK.into_response()),
    );
    refused.card_status = StatusCode::UNAUTHORIZED;
    let (url, seen) = serve(refused).await;
    let err = client(&url, Duration::from_secs(5))
        .exchange(&out(), &NoAnswerer, &mut steps)
        .await
        .unwrap_err();
    assert!(
        matches!(err, A2aError::Unauthorized { status: 401, .. }),
        "{err}"
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing is sent without a card"
    );
}

#[tokio::test]
async fn a_task_that_never_ends_is_cancelled_at_the_timeout_and_questions_without_answerer_fail() {
    let (url, seen) = serve(agent(
        card_1_0(),
        Arc::new(|method, _, body| match method {
            "SendMessage" => result(
                &body["id"],
                json!({"task": {"id": "t1", "contextId": "run-1",
                "status": {"state": "TASK_STATE_WORKING"}}}),
            ),
            "GetTask" => result(
                &body["id"],
                json!({"id": "t1", "contextId": "run-1",
                "status": {"state": "TASK_STATE_WORKING"}}),
            ),
            "CancelTask" => result(
                &body["id"],
                json!({"id": "t1",
                "status": {"state": "TASK_STATE_CANCELED"}}),
            ),
            other => panic!("unexpected {other}"),
        }),
    ))
    .await;
    let started = std::time::Instant::now();
    let mut steps = Vec::new();
    let err = client(&url, Duration::from_millis(400))
        .exchange(&out(), &NoAnswerer, &mut steps)
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Timeout { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(seen.lock().unwrap().last().unwrap(), "CancelTask");

    let (url, seen) = serve(agent(
        card_1_0(),
        Arc::new(|method, _, body| match method {
            "SendMessage" => result(
                &body["id"],
                json!({"task": {"id": "t2", "contextId": "run-1",
                "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                    "message": {"role": "ROLE_AGENT", "parts": [{"text": "Which budget?"}]}}}}),
            ),
            "CancelTask" => result(
                &body["id"],
                json!({"id": "t2",
                "status": {"state": "TASK_STATE_CANCELED"}}),
            ),
            other => panic!("unexpected {other}"),
        }),
    ))
    .await;
    let err = client(&url, Duration::from_secs(5))
        .exchange(&out(), &NoAnswerer, &mut steps)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Which budget?"), "{err}");
    assert_eq!(*seen.lock().unwrap(), ["SendMessage", "CancelTask"]);
}

#[tokio::test]
async fn an_exchange_dropped_mid_task_cancels_the_remote_task() {
    let (url, seen) = serve(agent(
        card_1_0(),
        Arc::new(|method, _, body| match method {
            "SendMessage" => result(
                &body["id"],
                json!({"task": {"id": "t3", "contextId": "run-1",
                "status": {"state": "TASK_STATE_WORKING"}}}),
            ),
            "GetTask" => result(
                &body["id"],
                json!({"id": "t3",
                "status": {"state": "TASK_STATE_WORKING"}}),
            ),
            "CancelTask" => {
                assert_eq!(body["params"]["id"], "t3");
                result(
                    &body["id"],
                    json!({"id": "t3", "status": {"state": "TASK_STATE_CANCELED"}}),
                )
            }
            other => panic!("unexpected {other}"),
        }),
    ))
    .await;
    let c = client(&url, Duration::from_secs(30));
    let mut steps = Vec::new();
    // The run is cancelled after 300 ms: the exchange's future is dropped.
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        c.exchange(&out(), &NoAnswerer, &mut steps),
    )
    .await;
    assert!(dropped.is_err());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !seen.lock().unwrap().iter().any(|m| m == "CancelTask") {
        assert!(
            std::time::Instant::now() < deadline,
            "no CancelTask: {:?}",
            seen.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An agent whose task works until `done` is set, then completes.
fn working_agent(done: Arc<std::sync::atomic::AtomicBool>) -> Agent {
    agent(
        card_1_0(),
        Arc::new(move |method, _headers, body| {
            let state = if done.load(std::sync::atomic::Ordering::SeqCst) {
                "TASK_STATE_COMPLETED"
            } else {
                "TASK_STATE_WORKING"
            };
            let task = json!({"id": "t9", "contextId": "run-1", "status": {"state": state},
                "artifacts": [{"artifactId": "a", "parts": [{"data": {"ok": true}}]}]});
            match method {
                "SendMessage" => result(&body["id"], json!({"task": task})),
                "GetTask" => {
                    assert_eq!(body["params"]["id"], "t9");
                    result(&body["id"], task)
                }
                "CancelTask" => result(&body["id"], task),
                other => panic!("unexpected {other}"),
            }
        }),
    )
}

#[tokio::test]
async fn past_its_wait_a_working_task_is_pending_not_cancelled_and_is_followed_up_later() {
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (url, seen) = serve(working_agent(done.clone())).await;
    let mut config = AgentConfig::new("scripted", &url);
    config.timeout = Duration::from_millis(300);
    config.wait = Some(Duration::from_millis(400));
    let c = Client::new(config).unwrap();
    let mut steps = Vec::new();
    let err = c
        .exchange(&out(), &NoAnswerer, &mut steps)
        .await
        .unwrap_err();
    match &err {
        A2aError::Pending {
            task_id,
            context_id,
            state,
            question,
            ..
        } => {
            assert_eq!((task_id.as_str(), context_id.as_str()), ("t9", "run-1"));
            assert_eq!(*state, "working");
            assert!(question.is_none());
        }
        other => panic!("{other:?}"),
    }
    // With a wait, `timeout` does not cancel the task (it bounds each request).
    assert!(!seen.lock().unwrap().iter().any(|m| m == "CancelTask"));
    // Still working: pending again; the message is never sent again.
    let err = c
        .follow_up("t9", "run-1", Default::default(), &NoAnswerer, &mut steps)
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Pending { .. }), "{err:?}");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let reply = c
        .follow_up("t9", "run-1", Default::default(), &NoAnswerer, &mut steps)
        .await
        .unwrap();
    assert_eq!(reply.task_id, "t9");
    assert_eq!(reply.data.unwrap()["ok"], true);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.iter().filter(|m| *m == "SendMessage").count(),
        1,
        "{seen:?}"
    );
    assert!(!seen.iter().any(|m| m == "CancelTask"), "{seen:?}");
    assert!(steps.iter().any(|s| s.kind == "follow-up"));
}

#[tokio::test]
async fn a_live_exchange_ignores_the_wait_and_cancels_at_its_timeout() {
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (url, seen) = serve(working_agent(done)).await;
    let mut config = AgentConfig::new("scripted", &url);
    config.timeout = Duration::from_millis(500);
    config.wait = Some(Duration::from_millis(100));
    let c = Client::new(config).unwrap();
    let mut steps = Vec::new();
    let err = c
        .exchange_live(&out(), &NoAnswerer, &mut steps)
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Timeout { .. }), "{err:?}");
    assert!(seen.lock().unwrap().iter().any(|m| m == "CancelTask"));
}

#[tokio::test]
async fn a_task_that_failed_while_the_run_was_parked_fails_the_follow_up() {
    let (url, seen) = serve(agent(
        card_1_0(),
        Arc::new(|method, _headers, body| match method {
            "GetTask" => result(
                &body["id"],
                json!({"id": "t7", "contextId": "run-1", "status": {"state": "TASK_STATE_FAILED",
                    "message": {"role": "ROLE_AGENT", "parts": [{"text": "no capacity"}]}}}),
            ),
            other => panic!("unexpected {other}"),
        }),
    ))
    .await;
    let mut config = AgentConfig::new("scripted", &url);
    config.wait = Some(Duration::from_secs(5));
    let c = Client::new(config).unwrap();
    let mut steps = Vec::new();
    let err = c
        .follow_up("t7", "run-1", Default::default(), &NoAnswerer, &mut steps)
        .await
        .unwrap_err();
    match err {
        A2aError::Ended { state, message, .. } => {
            assert_eq!(state, "failed");
            assert_eq!(message.as_deref(), Some("no capacity"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.lock().unwrap().as_slice(), ["GetTask"]);
}

/// An agent whose task `t3` asks "Gift?" until a message in the task answers it, then
/// completes with what it was told; the message bodies it got.
fn asking_agent(bodies: Arc<Mutex<Vec<Value>>>) -> Agent {
    agent(
        card_1_0(),
        Arc::new(move |method, _, body| match method {
            "SendMessage" => {
                bodies.lock().unwrap().push(body.clone());
                let message = &body["params"]["message"];
                if message["taskId"].is_null() {
                    result(
                        &body["id"],
                        json!({"task": {"id": "t3", "contextId": "ctx-3",
                        "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                            "message": {"role": "ROLE_AGENT", "parts": [{"text": "Gift?"}]}}}}),
                    )
                } else {
                    let said = message["parts"][0]["text"].clone();
                    result(
                        &body["id"],
                        json!({"task": {"id": "t3", "contextId": "ctx-3",
                        "status": {"state": "TASK_STATE_COMPLETED"},
                        "artifacts": [{"artifactId": "a", "parts": [{"data": {"said": said}}]}]}}),
                    )
                }
            }
            "GetTask" => result(
                &body["id"],
                json!({"id": "t3", "contextId": "ctx-3",
                "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                    "message": {"role": "ROLE_AGENT", "parts": [{"text": "Gift?"}]}}}),
            ),
            "CancelTask" => result(
                &body["id"],
                json!({"id": "t3", "status": {"state": "TASK_STATE_CANCELED"}}),
            ),
            other => panic!("unexpected {other}"),
        }),
    )
}

#[tokio::test]
async fn a_question_back_is_returned_to_the_caller_and_its_answer_goes_in_the_same_task() {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let (url, seen) = serve(asking_agent(bodies.clone())).await;
    let client = client(&url, Duration::from_secs(5));
    let limits = Limits {
        cancel_after: Some(Duration::from_secs(5)),
        questions_return: true,
        ..Limits::default()
    };
    // The question ends the exchange, the task left open (no CancelTask).
    let mut steps = Vec::new();
    let err = client
        .exchange_limited(&out(), &NoAnswerer, &mut steps, limits)
        .await
        .unwrap_err();
    let A2aError::Asked {
        task_id,
        context_id,
        question,
        ..
    } = err
    else {
        panic!("{err}")
    };
    assert_eq!(
        (task_id.as_str(), context_id.as_str(), question.as_str()),
        ("t3", "ctx-3", "Gift?")
    );
    assert_eq!(*seen.lock().unwrap(), ["SendMessage"]);
    // The answer goes in that task and context; the task then completes.
    let answer = Outgoing {
        context_id,
        text: "yes, wrap it".into(),
        data: None,
        metadata: Default::default(),
    };
    let mut steps = Vec::new();
    let reply = client
        .reply_limited(&task_id, &answer, &NoAnswerer, &mut steps, limits)
        .await
        .unwrap();
    assert_eq!(reply.data.unwrap()["said"], "yes, wrap it");
    let sent = bodies.lock().unwrap()[1]["params"]["message"].clone();
    assert_eq!(sent["taskId"], "t3");
    assert_eq!(sent["contextId"], "ctx-3");
    assert_eq!(steps[1].kind, "answer", "{steps:?}");
    assert_eq!(*seen.lock().unwrap(), ["SendMessage", "SendMessage"]);

    // A question read past the consultation's end is not returned: the task is cancelled
    // and the exchange times out.
    let limits = Limits {
        cancel_after: Some(Duration::ZERO),
        questions_return: true,
        ..Limits::default()
    };
    let err = client
        .follow_up_limited(
            "t3",
            "ctx-3",
            Default::default(),
            &NoAnswerer,
            &mut steps,
            limits,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, A2aError::Timeout { .. }), "{err}");
    assert_eq!(seen.lock().unwrap().last().unwrap(), "CancelTask");
}
