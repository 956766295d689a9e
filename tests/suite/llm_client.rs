//! The chat-completions client against the in-process test server: wire shape,
//! structured-output fallback, retries, timeouts, errors, secrets.

use crate::support::chat_server;

use std::time::Duration;

use chat_server::{ChatServer, Reply, closed_port_url};
use cuga_flo::reason::llm::{
    AnswerSchema, CallError, ChatClient, ChatMessage, ChatRequest, LlmSettings, ResponseFormat,
    Secret, ToolDef,
};
use serde_json::json;

const KEY: &str = "sk-test-0123456789abcdef";

/// llama-cpp-python's answer to a `json_schema` response format.
const LLAMA_REFUSAL: &str = r#"{"error":{"message":"[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]","type":"internal_server_error","param":null,"code":null}}"#;

/// Fast settings: short timeouts, 2 retries, 10 ms backoff.
fn settings(url: String) -> LlmSettings {
    let mut s = LlmSettings::new(url, "test-model");
    s.timeout = Duration::from_secs(2);
    s.connect_timeout = Duration::from_secs(1);
    s.retries = 2;
    s.backoff = Duration::from_millis(10);
    s
}

fn client(s: LlmSettings) -> ChatClient {
    ChatClient::new(s).expect("client")
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::system("Choose a flow."),
            ChatMessage::user("amount is 1200"),
        ],
        schema: Some(AnswerSchema {
            name: "gateway_choice".into(),
            schema: json!({
                "type": "object",
                "properties": {"flow": {"type": "string", "enum": ["approve", "reject"]}, "reason": {"type": "string"}},
                "required": ["flow", "reason"],
                "additionalProperties": false,
            }),
            strict: true,
        }),
        tools: Vec::new(),
        idempotency_key: None,
    }
}

#[tokio::test]
async fn sends_the_openai_wire_shape_and_reads_the_answer() {
    let server = ChatServer::start(Reply::from_schema_first_choice);
    let mut s = settings(server.url());
    s.temperature = Some(0.2);
    s.max_tokens = Some(64);
    s.seed = Some(42);
    s.strict = true;
    let response = client(s).complete(&request()).await.unwrap();

    assert_eq!(
        response.content.as_deref(),
        Some(r#"{"flow":"approve","reason":"placeholder"}"#)
    );
    assert_eq!(response.format, ResponseFormat::JsonSchema);
    assert_eq!(response.http_attempts, 1);
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(response.usage.prompt_tokens, Some(10));
    assert_eq!(response.usage.completion_tokens, Some(5));

    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.body["model"], "test-model");
    assert_eq!(sent.body["temperature"], 0.2);
    assert_eq!(sent.body["max_tokens"], 64);
    assert_eq!(sent.body["seed"], 42);
    assert_eq!(
        sent.body["messages"],
        json!([
            {"role": "system", "content": "Choose a flow."},
            {"role": "user", "content": "amount is 1200"},
        ])
    );
    let format = &sent.body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "gateway_choice");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(format["json_schema"]["schema"]["required"][0], "flow");
    assert!(sent.body.get("tools").is_none());
}

#[tokio::test]
async fn strict_flag_follows_the_schema() {
    let server = ChatServer::start(Reply::from_schema_first_choice);
    let mut req = request();
    req.schema.as_mut().unwrap().strict = false;
    client(settings(server.url())).complete(&req).await.unwrap();
    assert_eq!(
        server.requests()[0].body["response_format"]["json_schema"]["strict"],
        false
    );
}

#[tokio::test]
async fn authorization_only_with_a_key() {
    let server = ChatServer::start(|_| Reply::completion("{}"));
    let mut s = settings(server.url());
    s.api_key = Some(Secret::new(KEY));
    client(s).complete(&request()).await.unwrap();
    client(settings(server.url()))
        .complete(&request())
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(
        requests[0].authorization(),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(requests[1].authorization(), None);
}

#[tokio::test]
async fn auto_falls_back_to_json_object_and_remembers() {
    let server = ChatServer::start(|r| match r.response_format_type() {
        Some("json_schema") => Reply::status(500, LLAMA_REFUSAL),
        _ => Reply::from_schema_first_choice(r),
    });
    let client = client(settings(server.url()));

    let first = client.complete(&request()).await.unwrap();
    assert_eq!(first.format, ResponseFormat::JsonObject);
    assert_eq!(first.http_attempts, 2);
    assert_eq!(
        first.content.as_deref(),
        Some(r#"{"flow":"approve","reason":"placeholder"}"#)
    );

    let second = client.complete(&request()).await.unwrap();
    assert_eq!(second.format, ResponseFormat::JsonObject);
    assert_eq!(second.http_attempts, 1);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let types: Vec<_> = requests.iter().map(|r| r.response_format_type()).collect();
    assert_eq!(
        types,
        [
            Some("json_schema"),
            Some("json_object"),
            Some("json_object")
        ]
    );
    assert_eq!(
        requests[1].body["response_format"]["schema"]["type"],
        "object"
    );
}

#[tokio::test]
async fn auto_falls_back_to_the_prompt_when_both_forms_are_refused() {
    let server = ChatServer::start(|r| match r.response_format_type() {
        Some(kind) => Reply::status(
            400,
            &format!(r#"{{"error":{{"message":"response_format {kind} is not supported"}}}}"#),
        ),
        None => Reply::completion(r#"{"flow":"reject","reason":"r"}"#),
    });
    let client = client(settings(server.url()));

    let first = client.complete(&request()).await.unwrap();
    assert_eq!(first.format, ResponseFormat::Prompt);
    assert_eq!(first.http_attempts, 3);
    let second = client.complete(&request()).await.unwrap();
    assert_eq!(second.format, ResponseFormat::Prompt);
    assert_eq!(second.http_attempts, 1);

    let requests = server.requests();
    let types: Vec<_> = requests.iter().map(|r| r.response_format_type()).collect();
    assert_eq!(
        types,
        [Some("json_schema"), Some("json_object"), None, None]
    );
}

#[tokio::test]
async fn a_fixed_form_does_not_fall_back() {
    let server = ChatServer::start(|_| Reply::status(500, LLAMA_REFUSAL));
    let mut s = settings(server.url());
    s.response_format = ResponseFormat::JsonSchema;
    s.retries = 1;
    let err = client(s).complete(&request()).await.unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Status {
                status: 500,
                attempts: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.response_format_type() == Some("json_schema"))
    );
}

#[tokio::test]
async fn retries_429_after_retry_after() {
    let server = ChatServer::start(|r| match r.index {
        0 => Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "0"),
        _ => Reply::completion("{}"),
    });
    let response = client(settings(server.url()))
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(response.http_attempts, 2);
}

#[tokio::test]
async fn retry_after_overrides_the_backoff() {
    let server = ChatServer::start(|r| match r.index {
        0 => Reply::status(503, "busy").header("retry-after", "1"),
        _ => Reply::completion("{}"),
    });
    let response = client(settings(server.url()))
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(response.http_attempts, 2);
    assert!(
        response.latency >= Duration::from_millis(950),
        "{:?}",
        response.latency
    );
}

#[tokio::test]
async fn retries_500_then_succeeds() {
    let server = ChatServer::start(|r| match r.index {
        0 | 1 => Reply::status(500, "internal error"),
        _ => Reply::completion("{}"),
    });
    let response = client(settings(server.url()))
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(response.http_attempts, 3);
    assert_eq!(server.count(), 3);
}

#[tokio::test]
async fn gives_up_after_the_retries() {
    let server = ChatServer::start(|_| Reply::status(503, r#"{"error":{"message":"overloaded"}}"#));
    let mut s = settings(server.url());
    s.retries = 3;
    let err = client(s).complete(&request()).await.unwrap_err();
    match &err {
        CallError::Status {
            status,
            body,
            attempts,
            ..
        } => {
            assert_eq!(*status, 503);
            assert_eq!(body, "overloaded");
            assert_eq!(*attempts, 4);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.count(), 4);
    assert!(err.to_string().contains("HTTP 503: overloaded"), "{err}");
}

#[tokio::test]
async fn other_client_errors_are_not_retried() {
    let server = ChatServer::start(|_| {
        Reply::status(
            400,
            r#"{"error":{"message":"maximum context length exceeded"}}"#,
        )
    });
    let err = client(settings(server.url()))
        .complete(&request())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Status {
                status: 400,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_slow_server_times_out_once_and_is_not_asked_again_behind_its_own_request() {
    let server = ChatServer::start(|_| Reply::completion("{}").after(Duration::from_secs(5)));
    let mut s = settings(server.url());
    s.timeout = Duration::from_millis(200);
    s.retries = 1;
    let err = client(s).complete(&request()).await.unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Timeout {
                secs: 1,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
    // The retry budget is not spent on a request the server is still computing.
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn a_closed_port_is_a_connect_error() {
    let mut s = settings(closed_port_url());
    s.retries = 1;
    let err = client(s).complete(&request()).await.unwrap_err();
    assert!(
        matches!(err, CallError::Connect { attempts: 2, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("cannot reach http://127.0.0.1:"),
        "{err}"
    );
}

#[tokio::test]
async fn garbage_is_a_protocol_error() {
    let server = ChatServer::start(|_| Reply::raw("<html>gateway says hi</html>"));
    let err = client(settings(server.url()))
        .complete(&request())
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Protocol { attempts: 1, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("gateway says hi"), "{err}");

    let server =
        ChatServer::start(|_| Reply::json(json!({"object": "chat.completion", "choices": []})));
    let err = client(settings(server.url()))
        .complete(&request())
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Protocol { .. }), "{err:?}");
}

#[tokio::test]
async fn tool_calls_are_sent_and_parsed() {
    let server = ChatServer::start(|_| Reply::tool_call("lookup_customer", r#"{"id":7}"#));
    let mut req = request();
    req.tools.push(ToolDef {
        name: "lookup_customer".into(),
        description: "Find a customer".into(),
        parameters: json!({"type": "object", "properties": {"id": {"type": "integer"}}}),
    });
    let response = client(settings(server.url())).complete(&req).await.unwrap();
    assert_eq!(response.content, None);
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].id, "call_1");
    assert_eq!(response.tool_calls[0].name, "lookup_customer");
    assert_eq!(response.tool_calls[0].arguments, r#"{"id":7}"#);
    assert_eq!(
        server.requests()[0].body["tools"][0]["function"]["name"],
        "lookup_customer"
    );
    assert_eq!(server.requests()[0].body["tools"][0]["type"], "function");
}

#[tokio::test]
async fn the_key_never_shows_in_errors() {
    let echo = |r: &chat_server::Received| {
        let auth = r.authorization().unwrap_or_default().to_string();
        match r.index {
            0 => Reply::status(
                401,
                &json!({"error": {"message": format!("Incorrect API key provided: {auth}")}})
                    .to_string(),
            ),
            _ => Reply::raw(&format!("not json, your header was {auth}")),
        }
    };
    let server = ChatServer::start(echo);
    let mut s = settings(server.url());
    s.api_key = Some(Secret::new(KEY));
    let client = client(s);
    for _ in 0..2 {
        let err = client.complete(&request()).await.unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains(KEY), "{shown}");
        assert!(shown.contains("***"), "{shown}");
    }
    assert!(!format!("{client:?}").contains(KEY));
    assert!(server.requests()[0].text.contains("response_format"));
}

#[test]
fn the_server_lists_a_model_and_works_from_plain_tests() {
    use std::io::{Read, Write};
    let server = ChatServer::start(|_| Reply::completion("{}"));
    let addr = server
        .url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "GET /v1/models HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""id":"test-model""#), "{answer}");
    assert_eq!(server.requests()[0].method, "GET");
    assert_eq!(server.requests()[0].path, "/v1/models");
}

/// OpenAI's reasoning models refuse `max_tokens`; the client switches to
/// `max_completion_tokens` once and keeps it.
#[tokio::test]
async fn a_server_that_wants_max_completion_tokens_gets_it() {
    const REFUSAL: &str = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#;
    let server = ChatServer::start(|r| {
        if r.body.get("max_tokens").is_some() {
            Reply::status(400, REFUSAL)
        } else {
            Reply::completion(r#"{"flow":"approve","reason":"ok"}"#)
        }
    });
    let mut s = settings(server.url());
    s.max_tokens = Some(100);
    let c = client(s);
    let first = c.complete(&request()).await.unwrap();
    assert_eq!(first.http_attempts, 2);
    let second = c.complete(&request()).await.unwrap();
    assert_eq!(second.http_attempts, 1);
    let sent = server.requests();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[1].body["max_completion_tokens"], 100);
    assert!(sent[2].body.get("max_tokens").is_none());
    assert_eq!(sent[2].body["max_completion_tokens"], 100);
}

/// `max_concurrency` requests in flight to one endpoint, whichever client sends them (each
/// run and control point has its own): the others wait before they are sent, so a server
/// that works one request at a time never holds a queue that times out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_to_one_endpoint_wait_their_turn_before_they_are_sent() {
    for (limit, in_flight) in [(1u32, 1usize), (3, 3)] {
        let server =
            ChatServer::start(|_| Reply::completion("{}").after(Duration::from_millis(600)));
        let mut s = settings(server.url());
        s.max_concurrency = limit;
        s.timeout = Duration::from_secs(1);
        let calls: Vec<_> = (0..3)
            .map(|_| {
                let c = client(s.clone());
                tokio::spawn(async move { c.complete(&request()).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(server.count(), in_flight, "limit {limit}");
        // The endpoint's gate says so too (what a server reports and measures).
        let gate = cuga_flo::reason::llm::client::endpoints()
            .into_iter()
            .find(|g| g.endpoint.starts_with(&server.url()) && g.limit == limit)
            .expect("the endpoint's gate");
        assert_eq!(gate.endpoint, format!("{}/chat/completions", server.url()));
        assert_eq!(
            (gate.in_flight(), gate.waiting()),
            (in_flight, 3 - in_flight),
            "limit {limit}"
        );
        for call in calls {
            // Each request's timeout (1 s) counts from when it was sent, not from when it
            // started to wait: the third one waits 1.2 s and still succeeds.
            call.await.unwrap().unwrap();
        }
        assert_eq!(server.count(), 3);
        let gate = cuga_flo::reason::llm::client::endpoints()
            .into_iter()
            .find(|g| g.endpoint.starts_with(&server.url()) && g.limit == limit)
            .expect("the endpoint's gate");
        assert_eq!((gate.in_flight(), gate.waiting()), (0, 0));
    }
}

#[test]
fn a_server_on_this_machine_gets_one_request_at_a_time_by_default() {
    use cuga_flo::reason::llm::default_concurrency;
    assert_eq!(default_concurrency("http://127.0.0.1:8080/v1", None), 1);
    assert_eq!(
        default_concurrency("http://localhost:11434/v1", Some("ollama")),
        1
    );
    assert_eq!(
        default_concurrency("http://[::1]:8080/v1", Some("llamacpp")),
        1
    );
    assert_eq!(
        default_concurrency("http://127.0.0.1:8000/v1", Some("vllm")),
        16
    );
    assert_eq!(
        default_concurrency("https://api.openai.com/v1", Some("openai")),
        16
    );
    assert_eq!(default_concurrency("http://10.0.0.5:8080/v1", None), 16);
}
