//! `cuga-flo serve`: the real binary serves the bridge's tools over streamable HTTP (to
//! rmcp's client, and to plain HTTP requests for the token checks) and over stdio (raw
//! JSON-RPC lines), journals the runs its clients start, and stops cleanly on SIGTERM.
//! Every wait is bounded: a broken server fails a test, never hangs it.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin_cmd;
use cuga_flo::app::load_app;
use cuga_flo::app::registry::app_at;
use cuga_flo::app::scenario;
use cuga_flo::journal::Event;
use cuga_flo::journal::store::{JOURNAL_FILE, read_journal, run_dir};
use cuga_flo::mcp::RunProcessResult;
use cuga_flo::vocab::RunStatus;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Map, Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");
/// Longest wait for anything (a broken server fails the test instead of hanging it).
const LIMIT: Duration = Duration::from_secs(10);

fn apps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("applications")
}

/// A `cuga-flo serve --http 127.0.0.1:0` process; killed when dropped.
struct Served {
    child: Child,
    url: String,
    dir: tempfile::TempDir,
    base: PathBuf,
}

impl Served {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Served {
        Served::start_at(None, args, env)
    }

    /// As [`Served::start`], journalling under `base` (the runs of an earlier server).
    fn start_at(base: Option<&Path>, args: &[&str], env: &[(&str, &str)]) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let base = base.map_or_else(|| dir.path().join("runs-base"), Path::to_path_buf);
        let stderr = File::create(dir.path().join("stderr.log")).unwrap();
        let mut command = Command::new(BIN);
        command
            .arg("--apps-dir")
            .arg(apps_dir())
            .args([
                "--color",
                "never",
                "serve",
                "--http",
                "127.0.0.1:0",
                "--no-model",
            ])
            .arg("--run-dir")
            .arg(&base)
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let line = first_line(child.stdout.take().unwrap());
        let Some(url) = line.trim_end().strip_prefix("listening ") else {
            let _ = child.kill();
            let _ = child.wait();
            let err = std::fs::read_to_string(dir.path().join("stderr.log")).unwrap_or_default();
            panic!("no `listening` line but {line:?}; stderr:\n{err}");
        };
        let url = url.to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{url}"
        );
        Served {
            child,
            url,
            dir,
            base,
        }
    }

    fn base(&self) -> PathBuf {
        self.base.clone()
    }

    /// Kill it (SIGKILL: nothing of it runs after) and wait for it.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
    }

    /// Send SIGTERM and wait (bounded) for the exit code.
    fn terminate(&mut self) -> (Option<i32>, Duration) {
        let sent = Instant::now();
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status.code(), sent.elapsed());
            }
            assert!(sent.elapsed() < LIMIT, "still running after SIGTERM");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first line of a child's stdout, read on a thread so a silent child cannot hang
/// the test; the rest of stdout is drained there too.
fn first_line(stdout: ChildStdout) -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send(line);
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    rx.recv_timeout(LIMIT).unwrap_or_default()
}

async fn client(url: &str, token: Option<&str>) -> RunningService<RoleClient, ()> {
    cuga_flo::tls::install_provider();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    tokio::time::timeout(LIMIT, ().serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize failed")
}

/// Call a tool: whether it is a tool error, and its structured content (or its content).
async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> (bool, Value) {
    let Value::Object(args) = args else {
        unreachable!()
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
    let result = tokio::time::timeout(LIMIT, client.call_tool(params))
        .await
        .expect("tool call timed out");
    match result {
        Ok(result) => {
            let error = result.is_error == Some(true);
            let value = result
                .structured_content
                .unwrap_or_else(|| serde_json::to_value(&result.content).unwrap());
            (error, value)
        }
        // A JSON-RPC error (invalid parameters...) is an error too, as text.
        Err(ServiceError::McpError(e)) => (true, json!(e.message)),
        Err(e) => panic!("`{tool}` failed at the transport: {e}"),
    }
}

fn ctx(process_key: &str, element: &str, variables: Value) -> Value {
    json!({"run_id": "probe", "process_key": process_key, "element_id": element,
        "element_name": null, "variables": variables, "history": [], "instruction": null})
}

/// The config's defaults, then the scenario's inputs: what `start --scenario` runs with.
fn scenario_variables(app: &str, scenario: &scenario::Scenario) -> Map<String, Value> {
    let loaded = load_app(&app_at(&apps_dir().join(app)));
    let mut vars: Map<String, Value> = loaded
        .config
        .as_ref()
        .unwrap()
        .variables
        .iter()
        .map(|v| (v.name.value.clone(), v.default.clone()))
        .collect();
    vars.extend(scenario.inputs.clone());
    vars
}

#[tokio::test]
async fn an_mcp_client_lists_the_tools_and_calls_each_kind_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let routine = scenario::load(&apps_dir().join("incident_response"), "routine").unwrap();
    let answers = dir.path().join("answers.yaml");
    std::fs::write(&answers, json!({"answers": routine.answers}).to_string()).unwrap();
    let answers_arg = answers.to_str().unwrap();
    let served = Served::start(
        &[
            "incident_response",
            "receive_order",
            "trip_planner",
            "--answers",
            answers_arg,
        ],
        &[],
    );
    let client = client(&served.url, None).await;

    let tools = client.list_tools(None).await.unwrap().tools;
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "deliver_message",
            "evaluate_hook",
            "execute_task",
            "get_bpmn_process",
            "get_flow_annotations",
            "register_flow",
            "route_gateway",
            "run_process",
            "send_signal"
        ]
    );

    // Registry tools.
    let (error, annotations) = call(
        &client,
        "get_flow_annotations",
        json!({"process_key": "receive_order_v1"}),
    )
    .await;
    assert!(!error, "{annotations}");
    assert_eq!(annotations["hooks"]["Flow_1ji6b0i"], "post_receival_check");
    let (error, process) = call(
        &client,
        "get_bpmn_process",
        json!({"process_key": "incident_response_v1"}),
    )
    .await;
    assert!(!error, "{process}");
    let nodes = process["process"]["nodes"].as_array().unwrap();
    assert!(nodes.iter().any(|n| n["id"] == "Gateway_Severity"));

    // A native gateway: its conditions decide.
    let (error, decision) = call(
        &client,
        "route_gateway",
        json!({"gateway_id": "Gateway_Severity",
            "ctx": ctx("incident_response_v1", "Gateway_Severity", json!({"severity": "low"}))}),
    )
    .await;
    assert!(!error, "{decision}");
    assert_eq!(decision["flows"], json!(["Flow_SeverityLow"]));
    let (_, decision) = call(
        &client,
        "route_gateway",
        json!({"gateway_id": "Gateway_Severity",
            "ctx": ctx("incident_response_v1", "Gateway_Severity", json!({"severity": "critical"}))}),
    )
    .await;
    assert_eq!(decision["flows"], json!(["Flow_SeverityHigh"]));

    // A hook its policy's rule decides. The context says what the run executed: the
    // harness checks the adaptation against the app's guarantees with it (the order must be
    // registered before it is processed).
    let mut hook_ctx = ctx(
        "receive_order_v1",
        "post_receival_check",
        json!({"order_id": "1212"}),
    );
    hook_ctx["history"] = json!(["StartEvent_0bpt8wp", "Activity_0oydey5"]);
    hook_ctx["executed"] = json!(["StartEvent_0bpt8wp", "Activity_0oydey5"]);
    let (error, decision) = call(
        &client,
        "evaluate_hook",
        json!({"hook_id": "post_receival_check", "ctx": hook_ctx}),
    )
    .await;
    assert!(!error, "{decision}");
    assert_eq!(decision["action"], "skip_to");
    assert_eq!(decision["target"], "Activity_1h9ix55");
    assert_eq!(decision["decided_by"], "rule");
    assert_eq!(decision["state_updates"]["invoice_skipped"], true);

    // A pass-through task.
    let (error, outcome) = call(
        &client,
        "execute_task",
        json!({"task_id": "Activity_0w2einw",
            "ctx": ctx("trip_planner_v1", "Activity_0w2einw", json!({}))}),
    )
    .await;
    assert!(!error, "{outcome}");
    assert_eq!(outcome["status"], "completed");

    // A whole run on the server's engine, answered from the answers file.
    let variables = scenario_variables("incident_response", &routine);
    let args = json!({"process_key": "incident_response_v1", "run_id": "served-1", "variables": variables});
    let (error, result) = call(&client, "run_process", args.clone()).await;
    assert!(!error, "{result}");
    let result: RunProcessResult = serde_json::from_value(result).unwrap();
    assert_eq!(result.status, RunStatus::Completed, "{:?}", result.message);
    let misses = routine.expect.as_ref().unwrap().mismatches(
        None,
        Some(result.status),
        &result.path,
        &result.variables,
    );
    assert!(misses.is_empty(), "{misses:?}");

    // Its journal, as `start` writes one.
    let journal = run_dir(&served.base(), "served-1").join(JOURNAL_FILE);
    let records = read_journal(&journal).unwrap().records;
    match &records.first().unwrap().event {
        Event::RunStarted {
            run_id,
            app,
            reasoner,
            ..
        } => {
            assert_eq!(run_id, "served-1");
            assert_eq!(app, "incident_response");
            assert!(reasoner.contains("answers file"), "{reasoner}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        records.last().unwrap().event,
        Event::RunFinished {
            status: RunStatus::Completed,
            ..
        }
    ));
    cargo_bin_cmd!("cuga-flo")
        .arg("runs")
        .arg("show")
        .arg("served-1")
        .arg("--run-dir")
        .arg(served.base())
        .assert()
        .success();

    // A run id names one run: a call retried with it (its answer lost) answers that run's
    // result, neither a second run nor a refusal; and it names a folder, nothing else.
    let (error, text) = call(&client, "run_process", args).await;
    assert!(!error, "{text}");
    assert_eq!(text["status"], "completed", "{text}");
    assert_eq!(text["run_id"], "served-1", "{text}");
    assert_eq!(read_journal(&journal).unwrap().records.len(), records.len());
    let (error, text) = call(
        &client,
        "run_process",
        json!({"process_key": "incident_response_v1", "run_id": "../escape"}),
    )
    .await;
    assert!(error);
    assert!(text.to_string().contains("not a valid run id"), "{text}");
    assert!(!served.base().join("escape").exists());
    let _ = client.cancel().await;
}

#[tokio::test]
async fn an_unknown_process_key_is_a_tool_error_naming_the_known_ones() {
    let served = Served::start(&["receive_order"], &[]);
    let client = client(&served.url, None).await;
    for tool in ["get_flow_annotations", "get_bpmn_process"] {
        let (error, text) = call(&client, tool, json!({"process_key": "nope"})).await;
        assert!(error, "{tool}: {text}");
        let text = text.to_string();
        assert!(
            text.contains("unknown process key `nope`") && text.contains("receive_order_v1"),
            "{text}"
        );
    }
    let (error, text) = call(
        &client,
        "run_process",
        json!({"process_key": "nope", "run_id": "r-unknown"}),
    )
    .await;
    assert!(error);
    assert!(text.to_string().contains("unknown process key"), "{text}");
    assert!(!run_dir(&served.base(), "r-unknown").exists());
    let _ = client.cancel().await;
}

#[tokio::test]
async fn register_flow_loads_only_apps_from_the_apps_folder_and_never_replaces_one() {
    let served = Served::start(&["receive_order"], &[]);
    let client = client(&served.url, None).await;
    let register = |path: String| {
        let client = &client;
        async move { call(client, "register_flow", json!({"flow_config_path": path})).await }
    };
    // Outside the apps folder: refused without being read (no quote of the file).
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.yaml");
    std::fs::write(&secret, "flow: {id: stolen-4711}\n").unwrap();
    for path in [secret.display().to_string(), "/etc/passwd".into()] {
        let (error, text) = register(path.clone()).await;
        assert!(error, "{path}: {text}");
        let text = text.to_string();
        assert!(
            text.contains("is not an app folder or flow config under"),
            "{text}"
        );
        assert!(
            !text.contains("stolen-4711") && !text.contains("root:"),
            "{text}"
        );
    }
    // Inside it: loaded once; the same process key again is refused.
    let trip = apps_dir().join("trip_planner").display().to_string();
    let (error, data) = register(trip.clone()).await;
    assert!(!error, "{data}");
    assert_eq!(data["process_key"], "trip_planner_v1");
    let (error, text) = register(trip).await;
    assert!(error);
    assert!(
        text.to_string()
            .contains("`trip_planner_v1` is registered already"),
        "{text}"
    );
    let (error, text) = register(apps_dir().join("receive_order").display().to_string()).await;
    assert!(error);
    assert!(
        text.to_string()
            .contains("`receive_order_v1` is registered already"),
        "{text}"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn malformed_arguments_are_errors_and_the_server_keeps_serving() {
    let served = Served::start(&["receive_order"], &[]);
    let client = client(&served.url, None).await;
    for (tool, args) in [
        ("execute_task", json!({"task_id": 5})),
        ("route_gateway", json!({})),
        ("run_process", json!({"process_key": ["x"], "run_id": "r"})),
        (
            "get_flow_annotations",
            json!({"process": "receive_order_v1"}),
        ),
    ] {
        let (error, content) = call(&client, tool, args).await;
        assert!(error, "{tool}: {content}");
    }
    let (error, _) = call(
        &client,
        "get_flow_annotations",
        json!({"process_key": "receive_order_v1"}),
    )
    .await;
    assert!(!error);
    let _ = client.cancel().await;
}

#[tokio::test]
async fn with_a_token_every_request_needs_it() {
    const TOKEN: &str = "tok-3f9a1c7e5b2d";
    // Logging at its most verbose: the token must not show even there.
    let served = Served::start(
        &["receive_order", "--token-env", "SERVE_TEST_TOKEN"],
        &[("SERVE_TEST_TOKEN", TOKEN), ("CUGA_FLO_LOG", "trace")],
    );
    cuga_flo::tls::install_provider();
    let http = http_client();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    for authorization in [None, Some("Bearer wrong-token"), Some("Basic dG9rOg==")] {
        let mut request = http
            .post(&served.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(initialize.to_string());
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let response = tokio::time::timeout(LIMIT, request.send())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(response.status(), 401, "{authorization:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        let message = body["error"].as_str().unwrap();
        assert!(message.contains("bearer token"), "{message}");
        assert!(!message.contains(TOKEN));
    }

    let refused = tokio::time::timeout(
        LIMIT,
        ().serve(StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(served.url.as_str())
                .auth_header("not-it"),
        )),
    )
    .await
    .unwrap();
    assert!(refused.is_err(), "a wrong token was let in");

    let client = client(&served.url, Some(TOKEN)).await;
    let tools = client.list_tools(None).await.unwrap().tools;
    assert_eq!(tools.len(), 9);
    let (error, _) = call(
        &client,
        "get_flow_annotations",
        json!({"process_key": "receive_order_v1"}),
    )
    .await;
    assert!(!error);
    let _ = client.cancel().await;

    let stderr = served.stderr();
    assert!(stderr.contains("bearer token"), "{stderr}");
    assert!(!stderr.contains(TOKEN), "the token was logged:\n{stderr}");
}

#[test]
fn a_token_file_works_and_a_bad_token_source_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "from-a-file-77\n").unwrap();
    let served = Served::start(
        &["receive_order", "--token-file", file.to_str().unwrap()],
        &[],
    );
    cuga_flo::tls::install_provider();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let response = http_client()
            .post(&served.url)
            .header("authorization", "Bearer from-a-file-77x")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401);
        let client = client(&served.url, Some("from-a-file-77")).await;
        assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 9);
        let _ = client.cancel().await;
    });

    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let output = cargo_bin_cmd!("cuga-flo")
        .args([
            "serve",
            "receive_order",
            "--http",
            "127.0.0.1:0",
            "--token-file",
        ])
        .arg(&empty)
        .arg("--apps-dir")
        .arg(apps_dir())
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("the token is empty"));
    let output = cargo_bin_cmd!("cuga-flo")
        .args(["serve", "receive_order", "--http", "127.0.0.1:0"])
        .args(["--token-env", "SERVE_TEST_UNSET_VARIABLE"])
        .arg("--apps-dir")
        .arg(apps_dir())
        .env_remove("SERVE_TEST_UNSET_VARIABLE")
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not set"));
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused() {
    let output = cargo_bin_cmd!("cuga-flo")
        .args(["serve", "receive_order", "--http", "0.0.0.0:0"])
        .arg("--apps-dir")
        .arg(apps_dir())
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to serve on 0.0.0.0:0 without a token")
            && stderr.contains("--token-env"),
        "{stderr}"
    );
}

#[test]
fn apps_that_do_not_load_are_reported_and_none_at_all_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken");
    std::fs::create_dir_all(broken.join("config")).unwrap();
    std::fs::write(broken.join("config/broken_config.yaml"), "flow: [\n").unwrap();
    let output = cargo_bin_cmd!("cuga-flo")
        .args(["serve", "--http", "127.0.0.1:0"])
        .arg(&broken)
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("app `broken` does not validate") && stderr.contains("no app to serve"),
        "{stderr}"
    );

    // Next to one that validates: served, and the broken one reported.
    let good = apps_dir().join("receive_order");
    let served = Served::start(&[good.to_str().unwrap(), broken.to_str().unwrap()], &[]);
    let stderr = served.stderr();
    assert!(
        stderr.contains("app `broken` does not validate"),
        "{stderr}"
    );
}

#[test]
fn stdio_speaks_mcp_on_stdin_and_stdout_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("--apps-dir")
        .arg(apps_dir())
        .args([
            "serve",
            "receive_order",
            "--stdio",
            "--no-model",
            "--run-dir",
        ])
        .arg(dir.path())
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = move |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let reply: Value = serde_json::from_str(&rx.recv_timeout(LIMIT).unwrap()).unwrap();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["serverInfo"]["name"], "cuga-flo-bridge");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let reply: Value = serde_json::from_str(&rx.recv_timeout(LIMIT).unwrap()).unwrap();
    assert_eq!(reply["id"], 2);
    let mut names: Vec<&str> = reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 9, "{names:?}");
    assert!(names.contains(&"run_process") && names.contains(&"route_gateway"));
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "get_flow_annotations", "arguments": {"process_key": "receive_order_v1"}}}),
    );
    let reply: Value = serde_json::from_str(&rx.recv_timeout(LIMIT).unwrap()).unwrap();
    assert_eq!(reply["id"], 3);
    assert_eq!(
        reply["result"]["structuredContent"]["hooks"]["Flow_1ji6b0i"],
        "post_receival_check"
    );

    // End of input ends the server, cleanly, with nothing more on stdout.
    drop(send);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("still running after stdin closed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0));
    let rest: Vec<String> = rx.try_iter().collect();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn sigterm_stops_the_server_promptly_with_exit_0() {
    let mut served = Served::start(&["receive_order"], &[]);
    // With a client connected (its session holds an event stream open).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = runtime.block_on(client(&served.url, None));
    let (code, took) = served.terminate();
    assert_eq!(code, Some(0), "{}", served.stderr());
    assert!(took < Duration::from_secs(2), "took {took:?}");
    drop(client);
}

/// Not a test: the latency of a cheap tool call over HTTP from rmcp's client
/// (`cargo test --test suite serve:: -- --ignored --nocapture latency`).
#[tokio::test]
#[ignore]
async fn latency_of_a_cheap_tool_over_http() {
    let served = Served::start(&["incident_response", "receive_order"], &[]);
    let client = client(&served.url, None).await;
    for (tool, args) in [
        (
            "get_flow_annotations",
            json!({"process_key": "receive_order_v1"}),
        ),
        (
            "route_gateway",
            json!({"gateway_id": "Gateway_Severity",
                "ctx": ctx("incident_response_v1", "Gateway_Severity", json!({"severity": "low"}))}),
        ),
    ] {
        for _ in 0..20 {
            call(&client, tool, args.clone()).await;
        }
        let n = 300;
        let mut times: Vec<Duration> = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            let (error, _) = call(&client, tool, args.clone()).await;
            times.push(start.elapsed());
            assert!(!error);
        }
        times.sort();
        let mean = times.iter().sum::<Duration>() / n as u32;
        println!(
            "{tool}: n={n} mean={mean:?} p50={:?} p90={:?} p99={:?} max={:?}",
            times[n / 2],
            times[n * 9 / 10],
            times[n * 99 / 100],
            times[n - 1]
        );
    }
    let _ = client.cancel().await;
}

// ---- Hardening: timeouts, the session cap, JSON-RPC errors, body size ----

/// An `initialize` request over plain HTTP; the session id the server gave, or the
/// status and body it answered with.
/// A plain HTTP client (its TLS provider installed: a test run on its own has no other
/// test to install it first).
fn http_client() -> reqwest::Client {
    cuga_flo::tls::install_provider();
    reqwest::Client::new()
}

async fn initialize(url: &str) -> Result<String, (u16, Value)> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = tokio::time::timeout(
        LIMIT,
        http_client()
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string())
            .send(),
    )
    .await
    .unwrap()
    .unwrap();
    match response.headers().get("mcp-session-id") {
        Some(id) => Ok(id.to_str().unwrap().to_string()),
        None => {
            let status = response.status().as_u16();
            let bytes = response.bytes().await.unwrap();
            Err((
                status,
                serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            ))
        }
    }
}

/// A raw POST to the MCP endpoint: status and JSON body.
async fn post_raw(url: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
    let response = tokio::time::timeout(
        LIMIT,
        http_client()
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body)
            .send(),
    )
    .await
    .unwrap()
    .unwrap();
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn host_port(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

#[test]
fn a_half_open_or_slow_connection_is_closed_after_the_read_timeout() {
    use std::io::Read;
    use std::net::TcpStream;
    let served = Served::start(&["receive_order", "--read-timeout", "1"], &[]);
    let addr = host_port(&served.url);
    // Nothing sent at all; a head begun and never finished; a kept-alive connection left
    // idle after one request.
    let silent = TcpStream::connect(&addr).unwrap();
    let mut partial = TcpStream::connect(&addr).unwrap();
    partial
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    let mut kept = TcpStream::connect(&addr).unwrap();
    kept.write_all(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let started = Instant::now();
    for (what, mut stream) in [("silent", silent), ("partial", partial), ("kept", kept)] {
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut sink = Vec::new();
        // Closed by the server: read_to_end returns (EOF or reset), never times out.
        let result = stream.read_to_end(&mut sink);
        if let Err(e) = &result {
            assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "{what}: still open after 5s"
            );
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "closed after {:?}",
        started.elapsed()
    );
    // The server still serves.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async { initialize(&served.url).await.unwrap() });
}

/// One HTTP/1.1 exchange on a kept-alive socket: the status, the `mcp-session-id` header
/// and the body (read to its end: `Content-Length` or chunks). `None`: the server closed
/// the connection.
fn exchange(
    stream: &mut std::net::TcpStream,
    session: Option<&str>,
    body: &Value,
) -> Option<(u16, Option<String>, String)> {
    use std::io::Read;
    let body = body.to_string();
    let session = session.map_or(String::new(), |s| format!("mcp-session-id: {s}\r\n"));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n{session}content-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body.as_bytes()).ok()?;
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let status: u16 = line.split_whitespace().nth(1)?.parse().ok()?;
    let (mut length, mut chunked, mut id) = (None, false, None);
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse::<usize>().ok(),
            "transfer-encoding" => chunked = value.trim().eq_ignore_ascii_case("chunked"),
            "mcp-session-id" => id = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut text = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line).ok()?;
            let size = usize::from_str_radix(line.trim(), 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            text.extend_from_slice(&chunk[..size]);
        }
    } else {
        let mut all = vec![0; length.unwrap_or(0)];
        reader.read_exact(&mut all).ok()?;
        text = all;
    }
    Some((status, id, String::from_utf8_lossy(&text).into_owned()))
}

/// The read timeout bounds only the wait for a request on an idle connection: a kept-alive
/// connection whose requests each take longer to serve than the timeout, with short
/// pauses between them, is never cut (a client that lost its connection in the middle of
/// `run_process` cannot tell whether its run went ahead).
#[test]
fn a_busy_kept_alive_connection_is_never_cut_by_the_read_timeout() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps");
    let served = Served::start(
        &[
            "--apps-dir",
            fixtures.to_str().unwrap(),
            "timers",
            "--read-timeout",
            "1",
        ],
        &[],
    );
    let mut stream = std::net::TcpStream::connect(host_port(&served.url)).unwrap();
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = exchange(&mut stream, None, &initialize).expect("initialize");
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = exchange(&mut stream, Some(&session), &initialized).expect("initialized");
    assert_eq!(status, 202);
    for (i, pause_ms) in [300u64, 800, 50, 900].into_iter().enumerate() {
        std::thread::sleep(Duration::from_millis(pause_ms));
        // A 1.3 s wait on the timer: the run outlasts the 1 s read timeout (then ends at
        // the approval, which nobody answers).
        let call = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {
            "name": "run_process", "arguments": {"process_key": "timers_v1", "run_id": format!("busy-{i}"),
            "variables": {"wait": "PT1.3S", "approval_deadline": "PT0.1S"}}}});
        let started = Instant::now();
        let (status, _, text) = exchange(&mut stream, Some(&session), &call).unwrap_or_else(|| {
            panic!(
                "call {i}: the server cut the connection after {:?}",
                started.elapsed()
            )
        });
        assert_eq!(status, 200, "{text}");
        assert!(
            started.elapsed() >= Duration::from_millis(1200),
            "{:?}",
            started.elapsed()
        );
        assert!(
            text.contains(&format!(r#"\"run_id\":\"busy-{i}\",\"status\""#)),
            "{text}"
        );
    }
    // Left idle, the same connection is closed after the timeout.
    let mut rest = Vec::new();
    let idle = Instant::now();
    let _ = std::io::Read::read_to_end(&mut stream, &mut rest);
    assert!(
        idle.elapsed() < Duration::from_secs(5),
        "{:?}",
        idle.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_capped_and_expire_when_idle() {
    cuga_flo::tls::install_provider();
    let served = Served::start(
        &[
            "receive_order",
            "--max-sessions",
            "2",
            "--session-idle",
            "2",
        ],
        &[],
    );
    let first = initialize(&served.url).await.unwrap();
    initialize(&served.url).await.unwrap();
    let (status, body) = initialize(&served.url).await.unwrap_err();
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["error"]["code"], -32000);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("too many MCP sessions"), "{message}");

    // Closing one makes room.
    let closed = http_client()
        .delete(&served.url)
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    // 200, as the official SDKs expect (they log "Session termination failed" otherwise).
    assert_eq!(closed.status(), 200, "{}", closed.status());
    let third = initialize(&served.url).await.unwrap();
    assert!(initialize(&served.url).await.is_err());

    // Unused sessions expire: after the idle time, there is room again.
    let waited = Instant::now();
    loop {
        if initialize(&served.url).await.is_ok() {
            break;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(8),
            "idle sessions never expired"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let _ = third;
    assert!(served.stderr().contains("--max-sessions"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_rpc_gets_json_rpc_errors() {
    cuga_flo::tls::install_provider();
    let served = Served::start(&["receive_order"], &[]);
    let cases: [(&str, String, u16, i64); 6] = [
        ("not JSON", "{\"jsonrpc\": \"2.0\", ".into(), 400, -32700),
        ("binary", "\u{1}\u{2}garbage".into(), 400, -32700),
        ("a number", "42".into(), 400, -32600),
        (
            "no jsonrpc",
            r#"{"id": 1, "method": "ping"}"#.into(),
            400,
            -32600,
        ),
        ("empty batch", "[]".into(), 400, -32600),
        (
            "object id",
            r#"{"jsonrpc": "2.0", "id": {}, "method": "ping"}"#.into(),
            400,
            -32600,
        ),
    ];
    for (what, body, status, code) in cases {
        let (got, reply) = post_raw(&served.url, body).await;
        assert_eq!(got, status, "{what}: {reply}");
        assert_eq!(reply["jsonrpc"], "2.0", "{what}: {reply}");
        assert_eq!(reply["id"], Value::Null, "{what}");
        assert_eq!(reply["error"]["code"], code, "{what}: {reply}");
    }
    // A body beyond the cap is refused before it is read: the head alone (its
    // Content-Length) gets the answer. (Sending the body too would race the server's
    // close against the client's write: a client may see a broken pipe, not the 413.)
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(host_port(&served.url))
            .await
            .unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            host_port(&served.url),
            4 * 1024 * 1024 + 1
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        let _ = tokio::time::timeout(LIMIT, tcp.read_to_end(&mut reply)).await;
        let reply = String::from_utf8_lossy(&reply);
        assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
        assert!(reply.contains("-32600"), "{reply}");
    }
    // And the server still serves a real client.
    let client = client(&served.url, None).await;
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 9);
    let _ = client.cancel().await;
}

#[test]
fn a_short_token_is_refused_off_loopback_and_warned_about_on_it() {
    let output = cargo_bin_cmd!("cuga-flo")
        .args(["serve", "receive_order", "--http", "0.0.0.0:0"])
        .args(["--token-env", "SERVE_TEST_SHORT"])
        .env("SERVE_TEST_SHORT", "x")
        .arg("--apps-dir")
        .arg(apps_dir())
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("at least 16"), "{stderr}");
    assert!(!stderr.contains("SERVE_TEST_SHORT=x"));

    let served = Served::start(
        &["receive_order", "--token-env", "SERVE_TEST_SHORT"],
        &[("SERVE_TEST_SHORT", "short")],
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        served.stderr().contains("WEAK TOKEN"),
        "{}",
        served.stderr()
    );
}

/// `deliver_message` and `send_signal` journal deliveries to the runs parked under the
/// server's run folder (refusing a message a run does not wait for); `runs resume --due`
/// applies them.
#[tokio::test]
async fn deliver_message_and_send_signal_reach_parked_runs() {
    let served = Served::start(&["receive_order"], &[]);
    let base = served.base();
    let cli = |args: &[&str]| {
        Command::new(BIN)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("NO_COLOR", "1")
            .args(["--apps-dir", "tests/fixtures/apps"])
            .args(args)
            .arg("--run-dir")
            .arg(&base)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = cli(&["start", "messages", "--var", "order_id=A-7"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let run = std::fs::read_dir(base.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    let journal = || -> Vec<Value> {
        std::fs::read_to_string(base.join("runs").join(&run).join("journal.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let client = client(&served.url, None).await;

    let before = journal();
    let (error, content) = call(
        &client,
        "deliver_message",
        json!({"message": "Refund", "run_id": run}),
    )
    .await;
    assert!(error, "{content}");
    assert!(
        content
            .to_string()
            .contains("not waiting for message `Refund`"),
        "{content}"
    );
    assert_eq!(journal(), before, "nothing written");

    // Sent twice with the same delivery id (a retry after a lost reply): taken once, and
    // the retry answered as the first was.
    let payment = json!({"message": "Payment", "correlate": {"name": "order_id", "value": "A-7"},
        "variables": {"amount": 5}, "delivery_id": "pay-A-7"});
    let (error, content) = call(&client, "deliver_message", payment.clone()).await;
    assert!(!error, "{content}");
    assert_eq!(content["delivered"][0]["run_id"], run.as_str());
    assert_eq!(content["delivered"][0]["nodes"][0], "Receive_Payment");
    let (error, again) = call(&client, "deliver_message", payment.clone()).await;
    assert!(!error, "{again}");
    assert_eq!(again["delivered"], content["delivered"], "{again}");
    let received: Vec<Value> = journal()
        .into_iter()
        .filter(|r| r["event"] == "message_received")
        .collect();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["delivery"], "pay-A-7");
    assert_eq!(
        received[0]["taint"]["source"],
        "from the bridge's `deliver_message`"
    );

    let out = cli(&["runs", "resume", "--due"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    // The run has moved on past the payment: the payment sent again is still not taken.
    let (error, again) = call(&client, "deliver_message", payment.clone()).await;
    assert!(!error, "{again}");
    let received = || {
        journal()
            .into_iter()
            .filter(|r| r["event"] == "message_received")
            .count()
    };
    assert_eq!(received(), 1);
    let (error, content) = call(&client, "send_signal", json!({"signal": "Go"})).await;
    assert!(!error, "{content}");
    assert_eq!(content["delivered"][0]["nodes"][0], "Catch_Go");
    let out = cli(&["runs", "resume", "--due"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let finished: Vec<Value> = journal()
        .into_iter()
        .filter(|r| r["event"] == "run_finished")
        .collect();
    assert_eq!(finished[0]["status"], "completed");
    assert_eq!(finished[0]["variables"]["amount"], 5);
    let (error, _) = call(&client, "send_signal", json!({"signal": "Go"})).await;
    assert!(error, "nobody waits any more");
    // The run has finished: the payment sent again (found by its correlation no longer)
    // is still answered as it was the first time, and nothing is written.
    let before = journal();
    let (error, again) = call(&client, "deliver_message", payment).await;
    assert!(!error, "{again}");
    assert_eq!(again["delivered"][0]["run_id"], run.as_str(), "{again}");
    assert_eq!(again["delivered"][0]["nodes"][0], "Receive_Payment");
    assert_eq!(journal(), before, "nothing written");
}

/// `serve` runs a client's `run_process` with the native engine calling the harness
/// directly (the default) or back through the in-process MCP bridge (`--bridge mcp`): the
/// two are the same run — outcome, path, variables and the journal's events in order.
#[tokio::test]
async fn a_served_run_is_the_same_run_over_both_bridges() {
    let dir = tempfile::tempdir().unwrap();
    let routine = scenario::load(&apps_dir().join("incident_response"), "routine").unwrap();
    let answers = dir.path().join("answers.yaml");
    std::fs::write(&answers, json!({"answers": routine.answers}).to_string()).unwrap();
    let variables = scenario_variables("incident_response", &routine);
    let mut seen = Vec::new();
    for bridge in ["direct", "mcp"] {
        let served = Served::start(
            &[
                "incident_response",
                "--answers",
                answers.to_str().unwrap(),
                "--bridge",
                bridge,
            ],
            &[],
        );
        let client = client(&served.url, None).await;
        let args = json!({"process_key": "incident_response_v1", "run_id": "both", "variables": variables});
        let (error, result) = call(&client, "run_process", args).await;
        assert!(!error, "{bridge}: {result}");
        let result: RunProcessResult = serde_json::from_value(result).unwrap();
        assert_eq!(
            result.status,
            RunStatus::Completed,
            "{bridge}: {:?}",
            result.message
        );
        let journal = run_dir(&served.base(), "both").join(JOURNAL_FILE);
        let events: Vec<String> = std::fs::read_to_string(&journal)
            .unwrap()
            .lines()
            .map(|line| {
                let record: Value = serde_json::from_str(line).unwrap();
                let mut kind = record["event"].as_str().unwrap().to_string();
                for key in ["node", "task_id", "gateway_id", "flow", "status"] {
                    if let Some(v) = record.get(key).and_then(Value::as_str) {
                        kind.push_str(&format!(" {key}={v}"));
                    }
                }
                kind
            })
            .collect();
        seen.push((result.path, result.variables, events));
    }
    assert!(seen[0].2.len() > 5, "{:?}", seen[0].2);
    assert_eq!(seen[0], seen[1], "direct (left) and mcp (right) differ");
}

/// A run `run_process` starts that parks stays the server's: the server holds its journal
/// (another command's `runs resume` is refused, naming the server's pid), resumes it
/// in-process when its timer is due, and again when a message reaches it — sent with
/// `cuga-flo runs message` from another process (posted to the server, which journals
/// it) or with the server's own `deliver_message`. After the server stops, a run it held
/// parked is still parked, and `runs resume --due` / `runs message` continue it.
#[tokio::test]
async fn a_run_that_parks_under_serve_is_resumed_there() {
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps/served_waits");
    let mut served = Served::start(&[app.to_str().unwrap(), "--max-wait", "0"], &[]);
    let base = served.base();
    let cli = |args: &[&str]| {
        Command::new(BIN)
            .env("NO_COLOR", "1")
            .args(args)
            .arg("--run-dir")
            .arg(&base)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let events = |run: &str| -> Vec<Event> {
        let path = run_dir(&base, run).join(JOURNAL_FILE);
        read_journal(&path)
            .map(|j| j.records.into_iter().map(|r| r.event).collect())
            .unwrap_or_default()
    };
    // Until `done` holds of the run's events (bounded).
    let until = |run: &str, what: &str, done: &dyn Fn(&[Event]) -> bool| -> Vec<Event> {
        let started = Instant::now();
        loop {
            let seen = events(run);
            if done(&seen) {
                return seen;
            }
            assert!(
                started.elapsed() < LIMIT,
                "run {run}: never {what}: {seen:#?}\nserver:\n{}",
                served.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let waits = |e: &[Event]| {
        e.iter()
            .filter(|e| matches!(e, Event::RunWaiting { .. }))
            .count()
    };
    let resumed = |e: &[Event]| {
        (e.iter())
            .filter(|e| matches!(e, Event::RunResumed { .. }))
            .count()
    };
    let finished = |e: &[Event]| {
        e.iter().find_map(|e| match e {
            Event::RunFinished {
                status, variables, ..
            } => Some((*status, variables.clone())),
            _ => None,
        })
    };
    let client = client(&served.url, None).await;
    let start = |run: &str, wait: &str| {
        json!({"process_key": "served_waits_v1", "run_id": run,
               "variables": {"order_id": run, "wait": wait}})
    };

    // Parked at its 1 s timer: the server holds it.
    let (error, result) = call(&client, "run_process", start("w1", "PT1S")).await;
    assert!(!error, "{result}");
    assert_eq!(result["status"], "waiting", "{result}");
    let out = cli(&["runs", "resume", "w1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("pid {}", served.child.id())),
        "{stderr}"
    );
    // The timer is due: the server resumes it, and it parks again at its receive task.
    let seen = until("w1", "resumed by its timer", &|e| {
        resumed(e) == 1 && waits(e) == 2
    });
    assert!(finished(&seen).is_none(), "{seen:#?}");
    // Parked again once the server says it holds it (between its `run_waiting` and then
    // the run is the server's, going: a delivery is refused).
    wait_for("held w1 again", &|| served.stderr(), &|| {
        held_by(&base, "w1") == Some(served.child.id())
    });

    // A message from another process: posted to the server, which resumes the run.
    let out = cli(&["runs", "message", "w1", "Payment", "--var", "amount=5"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("delivered to run w1 at Receive_Payment") && stdout.contains("resumes it"),
        "{stdout}"
    );
    let seen = until("w1", "completed", &|e| finished(e).is_some());
    let (status, variables) = finished(&seen).unwrap();
    assert_eq!(status, RunStatus::Completed, "{seen:#?}");
    assert_eq!(variables["amount"], 5);
    assert_eq!(resumed(&seen), 2, "{seen:#?}");
    // A wrong message is refused by the server, and nothing is written.
    let (error, result) = call(&client, "run_process", start("w2", "PT0S")).await;
    assert!(!error && result["status"] == "waiting", "{result}");
    let before = events("w2");
    let out = cli(&["runs", "message", "w2", "Refund"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not waiting for message `Refund`"),
        "{out:?}"
    );
    assert_eq!(events("w2"), before, "nothing written");
    // The server's own `deliver_message` resumes it at once.
    let (error, content) = call(
        &client,
        "deliver_message",
        json!({"message": "Payment", "run_id": "w2", "variables": {"amount": 7}}),
    )
    .await;
    assert!(!error, "{content}");
    assert_eq!(content["delivered"][0]["nodes"][0], "Receive_Payment");
    let seen = until("w2", "completed", &|e| finished(e).is_some());
    assert_eq!(finished(&seen).unwrap().0, RunStatus::Completed);
    assert_eq!(finished(&seen).unwrap().1["amount"], 7);

    // A run the server holds when it stops stays parked, for `runs resume --due`.
    let (error, result) = call(&client, "run_process", start("w3", "PT2S")).await;
    assert!(!error && result["status"] == "waiting", "{result}");
    let (code, _) = served.terminate();
    assert_eq!(code, Some(0));
    let seen = events("w3");
    assert!(finished(&seen).is_none(), "{seen:#?}");
    assert!(
        !run_dir(&base, "w3").join("inbox/held").exists(),
        "the server no longer says it holds the run"
    );
    std::thread::sleep(Duration::from_millis(2100));
    let out = cli(&["runs", "resume", "--due"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "parks at the receive task: {out:?}"
    );
    let out = cli(&["runs", "message", "w3", "Payment"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(finished(&events("w3")).unwrap().0, RunStatus::Completed);
}

/// The events of run `run` under `base` (none before its journal is there).
fn events_of(base: &Path, run: &str) -> Vec<Event> {
    let path = run_dir(base, run).join(JOURNAL_FILE);
    read_journal(&path)
        .map(|j| j.records.into_iter().map(|r| r.event).collect())
        .unwrap_or_default()
}

/// Until `done` holds (bounded): a broken server fails the test with `what` and `log()`.
fn wait_for(what: &str, log: &dyn Fn() -> String, done: &dyn Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < LIMIT, "never {what}\n{}", log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid in run `run`'s `inbox/held`: the server that holds it parked.
fn held_by(base: &Path, run: &str) -> Option<u32> {
    std::fs::read_to_string(run_dir(base, run).join("inbox/held"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `cuga-flo <args> --run-dir <base>`.
fn cli_at(base: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .env("NO_COLOR", "1")
        .args(args)
        .arg("--run-dir")
        .arg(base)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn served_waits() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps/served_waits")
}

/// Park the runs `runs` under a served `served_waits` (each at its `wait` timer).
async fn park(served: &Served, runs: &[(&str, &str)]) {
    let client = client(&served.url, None).await;
    for (run, wait) in runs {
        let (error, result) = call(
            &client,
            "run_process",
            json!({"process_key": "served_waits_v1", "run_id": run,
                   "variables": {"order_id": run, "wait": wait}}),
        )
        .await;
        assert!(!error && result["status"] == "waiting", "{result}");
    }
}

fn finished_as(events: &[Event]) -> Option<(RunStatus, Map<String, Value>)> {
    events.iter().find_map(|e| match e {
        Event::RunFinished {
            status, variables, ..
        } => Some((*status, variables.clone())),
        _ => None,
    })
}

fn count_of(events: &[Event], which: fn(&Event) -> bool) -> usize {
    events.iter().filter(|e| which(e)).count()
}

/// A server that dies (SIGKILL) leaves its parked runs parked, its `inbox/held` naming a
/// dead pid. The next server of the app takes them over: it holds them (its pid in
/// `inbox/held`), resumes one when its timer is due, and another when `runs message`
/// reaches it (posted to the new server, which journals it and resumes the run). A run
/// parked by `start`, not by a server, is left alone.
#[tokio::test]
async fn a_new_serve_takes_over_the_runs_a_killed_serve_left_parked() {
    let app = served_waits();
    let app = app.to_str().unwrap();
    let mut first = Served::start(&[app, "--max-wait", "0"], &[]);
    let base = first.base();
    // a1 at its receive task, a2 at a 3 s timer.
    park(&first, &[("a1", "PT0S"), ("a2", "PT3S")]).await;
    // A run `start` parked at the same app: not a server's.
    let out = cargo_bin_cmd!("cuga-flo")
        .args([
            "--color",
            "never",
            "start",
            app,
            "--no-model",
            "--detach",
            "--max-wait",
            "0",
        ])
        .args(["--var", "order_id=s1", "--var", "wait=PT0S", "--run-dir"])
        .arg(&base)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let s1 = std::fs::read_dir(base.join("runs"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|id| id != "a1" && id != "a2")
        .unwrap();
    let s1 = s1.as_str();
    let dead = first.child.id();
    first.kill();
    assert_eq!(
        held_by(&base, "a1"),
        Some(dead),
        "the dead server's claim is left"
    );

    let second = Served::start_at(Some(&base), &[app, "--max-wait", "0"], &[]);
    let pid = second.child.id();
    let log = || second.stderr();
    wait_for("took a1 and a2 over", &log, &|| {
        held_by(&base, "a1") == Some(pid) && held_by(&base, "a2") == Some(pid)
    });
    // The timer of a2 is due: resumed here, it parks at its receive task.
    wait_for("resumed a2 at its timer", &log, &|| {
        let e = events_of(&base, "a2");
        count_of(&e, |e| matches!(e, Event::RunResumed { .. })) == 1
            && count_of(&e, |e| matches!(e, Event::RunWaiting { .. })) == 2
    });
    // A message from another process: posted to the new server, which resumes a1.
    let out = cli_at(
        &base,
        &["runs", "message", "a1", "Payment", "--var", "amount=5"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("(pid {pid}) resumes it")),
        "{stdout}"
    );
    wait_for("completed a1", &log, &|| {
        finished_as(&events_of(&base, "a1")).is_some()
    });
    let (status, variables) = finished_as(&events_of(&base, "a1")).unwrap();
    assert_eq!(status, RunStatus::Completed);
    assert_eq!(variables["amount"], 5);
    wait_for("held a2 again", &log, &|| held_by(&base, "a2") == Some(pid));
    let out = cli_at(&base, &["runs", "message", "a2", "Payment"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    wait_for("completed a2", &log, &|| {
        finished_as(&events_of(&base, "a2")).is_some_and(|(s, _)| s == RunStatus::Completed)
    });
    // `start`'s run is not the server's: still parked, held by no one, resumable here.
    assert!(held_by(&base, s1).is_none());
    assert!(finished_as(&events_of(&base, s1)).is_none());
    let out = cli_at(&base, &["runs", "message", s1, "Payment"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("the server holding it"),
        "{out:?}"
    );
}

/// With a shared run store (`--store postgres://…`), a server on another host (its own
/// run folder) takes over the runs a killed server left parked, and a message sent from a
/// third host reaches it through the store's inbox: journalled there, by the server that
/// holds the run, which resumes it to its end.
#[tokio::test]
async fn on_a_shared_store_a_serve_on_another_host_takes_a_killed_serves_runs_and_their_messages() {
    use crate::support::postgres::Postgres;
    if !Postgres::available("serve::on_a_shared_store") {
        return;
    }
    let pg = Postgres::start("served");
    let env = [("CUGA_FLO_STORE", pg.url.as_str())];
    let hosts = tempfile::tempdir().unwrap();
    let [a, b, c] = ["a", "b", "c"].map(|h| hosts.path().join(h));
    let on = |base: &Path, args: &[&str]| {
        Command::new(BIN)
            .env("NO_COLOR", "1")
            .envs(env)
            .args(args)
            .arg("--run-dir")
            .arg(base)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = Command::new(BIN)
        .envs(env)
        .args(["store", "migrate"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let app = served_waits();
    let app = app.to_str().unwrap();
    let mut first = Served::start_at(Some(&a), &[app, "--max-wait", "0"], &env);
    park(&first, &[("p1", "PT0S")]).await;
    first.kill();

    let second = Served::start_at(Some(&b), &[app, "--max-wait", "0"], &env);
    let pid = second.child.id();
    let log = || second.stderr();
    let held = || pg.value("SELECT held_parked_by FROM cuga_flo_runs WHERE run_id = 'p1'");
    wait_for("took p1 over on host b", &log, &|| {
        held() == pid.to_string()
    });
    let out = on(
        &c,
        &["runs", "message", "p1", "Payment", "--var", "amount=5"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{out:?}
{}",
        log()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("(pid {pid}) resumes it")),
        "{stdout}"
    );
    wait_for("completed p1 on host b", &log, &|| {
        finished_as(&events_of(&b, "p1")).is_some()
    });
    let (status, variables) = finished_as(&events_of(&b, "p1")).unwrap();
    assert_eq!(status, RunStatus::Completed);
    assert_eq!(variables["amount"], 5);
    // Every host reads the same run, ended, intact; none was written on host c.
    let out = on(&a, &["runs", "verify", "p1"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let shown = on(&c, &["runs", "show", "p1"]);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("completed"),
        "{shown:?}"
    );
    assert_eq!(
        pg.value("SELECT count(*) FROM cuga_flo_inbox"),
        "0",
        "answered and taken"
    );
}

/// Two servers started at once over the runs a killed server left parked, a `worker`
/// alongside, take each run exactly once (the journal's lock decides): the runs whose
/// timer is due are resumed once by whoever took them (a run the worker resumed parks
/// again, released, and a server takes it over then), every run is taken over by one
/// server, resumed once by its message, and completes.
#[tokio::test]
async fn two_serves_racing_take_each_left_parked_run_once() {
    let app = served_waits();
    let app = app.to_str().unwrap();
    let mut first = Served::start(&[app, "--max-wait", "0"], &[]);
    let base = first.base();
    let at_message = ["r1", "r2", "r3"];
    let at_timer = ["r4", "r5", "r6"];
    let runs = ["r1", "r2", "r3", "r4", "r5", "r6"];
    let mut parked: Vec<(&str, &str)> = at_message.iter().map(|r| (*r, "PT0S")).collect();
    parked.extend(at_timer.iter().map(|r| (*r, "PT1S")));
    park(&first, &parked).await;
    first.kill();
    // Their timers are due by the time anyone looks.
    std::thread::sleep(Duration::from_millis(1100));

    let (b, c, worker) = std::thread::scope(|s| {
        let serve = || {
            Served::start_at(
                Some(&base),
                &[app, "--max-wait", "0"],
                &[("CUGA_FLO_LOG", "info")],
            )
        };
        let b = s.spawn(serve);
        let c = s.spawn(serve);
        let worker = s.spawn(|| cli_at(&base, &["worker", "--once"]));
        let (b, c, worker) = (b.join(), c.join(), worker.join());
        (b.unwrap(), c.unwrap(), worker.unwrap())
    });
    assert_eq!(worker.status.code(), Some(0), "{worker:?}");
    let pids = [b.child.id(), c.child.id()];
    let log = || format!("B:\n{}\nC:\n{}", b.stderr(), c.stderr());
    wait_for(
        "took every run over, each at its receive task",
        &log,
        &|| {
            runs.iter().all(|r| {
                held_by(&base, r).is_some_and(|p| pids.contains(&p))
                    && count_of(&events_of(&base, r), |e| {
                        matches!(e, Event::RunWaiting { .. })
                    }) == if at_timer.contains(r) { 2 } else { 1 }
            })
        },
    );
    for run in runs {
        let out = cli_at(&base, &["runs", "message", run, "Payment"]);
        assert_eq!(out.status.code(), Some(0), "{run}: {out:?}\n{}", log());
    }
    for run in runs {
        wait_for(&format!("completed {run}"), &log, &|| {
            finished_as(&events_of(&base, run)).is_some()
        });
        let e = events_of(&base, run);
        assert_eq!(finished_as(&e).unwrap().0, RunStatus::Completed, "{e:#?}");
        // Once by its message, and once by its timer before.
        let resumed = if at_timer.contains(&run) { 2 } else { 1 };
        assert_eq!(
            count_of(&e, |e| matches!(e, Event::RunResumed { .. })),
            resumed,
            "{run} resumed once at each wait: {e:#?}"
        );
        assert_eq!(
            count_of(&e, |e| matches!(e, Event::TimerFired { .. })),
            1,
            "{e:#?}"
        );
        assert_eq!(
            count_of(&e, |e| matches!(e, Event::MessageReceived { .. })),
            1,
            "{e:#?}"
        );
    }
    let taken = |log: String, run: &str| {
        log.lines()
            .filter(|l| l.contains(&format!("run {run}: left parked")) && l.contains("taken over"))
            .count()
    };
    for run in runs {
        assert_eq!(
            taken(b.stderr(), run) + taken(c.stderr(), run),
            1,
            "{run} taken over once\n{}",
            log()
        );
    }
}

/// Beside MCP (`--http`), the web console (`--ui`) shares the process and the run host: a
/// run an MCP client starts with `run_process` whose question nobody answers parks (its
/// result says `waiting`) instead of failing, shows on the console's tasklist, and goes
/// on in the server once a person answers it there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beside_mcp_the_console_answers_the_runs_mcp_clients_start() {
    use crate::support::http;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, said) = crate::support::listener::announced(
        Command::new(BIN)
            .args([
                "serve",
                "--http",
                "127.0.0.1:0",
                "--ui",
                "127.0.0.1:0",
                "expense_claim",
            ])
            .arg("--apps-dir")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("applications"))
            .arg("--run-dir")
            .arg(dir.path())
            .env("NO_COLOR", "1")
            .env("USER", "clerk")
            .stderr(Stdio::null()),
        2,
    );
    let mcp = said[0].strip_prefix("listening ").unwrap().to_string();
    let console = said[1].strip_prefix("console ").unwrap().to_string();
    let client = client(&mcp, None).await;
    let (error, result) = call(
        &client,
        "run_process",
        json!({"process_key": "expense_claim", "run_id": "claim-1",
               "variables": {"employee": "bob", "amount": 40}}),
    )
    .await;
    assert!(!error, "{result}");
    assert_eq!(result["status"], "waiting", "{result}");
    // Nobody signs in on loopback without a users file: the local user answers.
    let page = http::get(&format!("{console}/tasks"), &[]).body;
    assert!(
        page.contains("Check the receipt") && page.contains("claim-1"),
        "{page}"
    );
    let at = page.find("name=\"csrf\" value=\"").unwrap() + 19;
    let csrf = &page[at..at + 64];
    let r = http::post_form(
        &format!("{console}/runs/claim-1/answer"),
        &[],
        &[
            ("csrf", csrf),
            ("key", "claim-1:Task_CheckReceipt:1"),
            ("out.receipt_ok", "true"),
            ("out.checked_amount", "40"),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let started = Instant::now();
    loop {
        let events = read_journal(&run_dir(dir.path(), "claim-1").join(JOURNAL_FILE))
            .unwrap()
            .records;
        let at_approval = events.iter().any(|r| {
            matches!(&r.event, Event::QuestionParked { question } if question.element == "GW_ManagerApproval")
        });
        if at_approval {
            let answered = events.iter().find_map(|r| match &r.event {
                Event::QuestionAnswered { by, .. } => by.clone(),
                _ => None,
            });
            assert_eq!(answered.as_deref(), Some("clerk"));
            break;
        }
        assert!(
            started.elapsed() < LIMIT,
            "the answered run did not go on: {events:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}
