//! An external workflow engine written with the official MCP Python SDK
//! (`tests/interop/engine.py`) runs the demo scenarios against `cuga-flo serve --http`:
//! the engine moves the tokens and asks the harness for every judgement over the bridge
//! (docs/bridge.md). `engine_check.py` calls the engine's `run_process` with a scenario's
//! inputs and the bridge's endpoint and checks the result against the scenario's `expect:`.
//! A second group of tests breaks the bridge during a run: the run must fail with a clear
//! message (or the call be a tool error) within the engine's deadline, never hang.
//!
//! Uses the cached venv of `tests/interop/setup_venv.py` (the SDK pinned in
//! `tests/interop/requirements.txt`). Needs `python3` (3.10+) with `venv` and `pip`, and
//! PyPI the first time. With `--nocapture` the tests print their wall times and the
//! per-control-point latencies the engine saw.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/listener.rs"]
mod listener;
use listener::{LISTEN_TIMEOUT, Listener};
#[path = "support/python.rs"]
mod python;
use python::{Check, Finished, app_dir, interop_dir, python, scenario_files, token};

/// What `engine_check.py` printed: its JSON summary.
fn summary(out: &Finished) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}\n(engine_check.py's summary is not JSON: {e})",
            out.show("engine_check.py")
        )
    })
}

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");
/// One `engine_check.py`, end to end.
const CHECK_TIMEOUT: Duration = Duration::from_secs(180);
const TOKEN_ENV: &str = "CUGA_FLO_ENGINE_TEST_TOKEN";

/// The demo scenarios the engine runs: (app, process key, scenario).
const SCENARIOS: &[(&str, &str, &str)] = &[
    ("loan_approval", "loan_approval_v1", "approve"),
    ("loan_approval", "loan_approval_v1", "missing_name"),
    (
        "loan_approval",
        "loan_approval_v1",
        "regulatory_restriction",
    ),
    ("loan_approval", "loan_approval_v1", "reject_low_score"),
    ("loan_approval", "loan_approval_v1", "score_unknown"),
    ("incident_response", "incident_response_v1", "routine"),
    (
        "incident_response",
        "incident_response_v1",
        "false_positive",
    ),
    (
        "incident_response",
        "incident_response_v1",
        "duplicate_alert",
    ),
    ("incident_response", "incident_response_v1", "ransomware"),
    ("incident_response", "incident_response_v1", "notify_first"),
    ("incident_response", "incident_response_v1", "low_severity"),
    (
        "incident_response",
        "incident_response_v1",
        "regulated_breach",
    ),
    ("receive_order", "receive_order_v1", "standard"),
    ("receive_order", "receive_order_v1", "no_invoice_1212"),
];

/// `cuga-flo serve APP --http 127.0.0.1:0` with a bearer token, scripted answers and no model.
fn serve(app: &str, answers: &Path, run_dir: &Path, token: &str) -> Listener {
    Listener::start(
        "serve",
        Command::new(BIN)
            .arg("serve")
            .arg(app_dir(app))
            .args([
                "--http",
                "127.0.0.1:0",
                "--token-env",
                TOKEN_ENV,
                "--answers",
            ])
            .arg(answers)
            .arg("--no-model")
            .arg("--run-dir")
            .arg(run_dir)
            .env(TOKEN_ENV, token)
            .env_remove("CUGA_FLO_APPS")
            .env("NO_COLOR", "1")
            .current_dir(run_dir.parent().unwrap()),
    )
}

/// `engine.py --port 0`, with its deadline per bridge call and its delay before each
/// control point.
fn engine(call_timeout_s: u64, call_delay_ms: u64, journal_dir: &Path) -> Listener {
    Listener::start(
        "engine.py",
        Command::new(python())
            .arg(interop_dir().join("engine.py"))
            .args(["--port", "0", "--journal-dir"])
            .arg(journal_dir)
            .env("CUGA_FLO_ENGINE_CALL_TIMEOUT", call_timeout_s.to_string())
            .env("CUGA_FLO_ENGINE_CALL_DELAY_MS", call_delay_ms.to_string())
            .env("PYTHONUNBUFFERED", "1"),
    )
}

fn engine_check(
    engine: &Listener,
    runs: &[(&str, &str, &Path)],
    token: &str,
    expect_failure: bool,
) -> Check {
    let mut cmd = Command::new(python());
    cmd.arg(interop_dir().join("engine_check.py"))
        .args(["--engine", &engine.url, "--token-env", TOKEN_ENV])
        .args(["--timeout", &(CHECK_TIMEOUT.as_secs() - 30).to_string()])
        .env(TOKEN_ENV, token);
    for (bridge, key, scenario) in runs {
        cmd.args(["--bridge", bridge, "--process-key", key, "--scenario"])
            .arg(scenario);
    }
    if expect_failure {
        cmd.arg("--expect-failure");
    }
    Check::spawn(&mut cmd).unwrap_or_else(|e| panic!("{e}"))
}

/// The `engine-stats` lines the engine printed: per tool, the calls and their mean latency.
fn latencies(engine_stderr: &str) -> String {
    let mut per_tool: std::collections::BTreeMap<String, (u64, f64, f64)> = Default::default();
    let mut runs = 0;
    for line in engine_stderr.lines() {
        let Some(stats) = line.strip_prefix("engine-stats ") else {
            continue;
        };
        let Ok(stats) = serde_json::from_str::<Value>(stats) else {
            continue;
        };
        runs += 1;
        for (tool, s) in stats["calls"].as_object().into_iter().flatten() {
            let n = s["n"].as_u64().unwrap_or(0);
            let e = per_tool.entry(tool.clone()).or_default();
            e.0 += n;
            e.1 += s["mean_ms"].as_f64().unwrap_or(0.0) * n as f64;
            e.2 = e.2.max(s["max_ms"].as_f64().unwrap_or(0.0));
        }
    }
    let rows: Vec<String> = per_tool
        .iter()
        .map(|(tool, (n, total, max))| {
            format!(
                "{tool}: {n} calls, mean {:.1} ms, max {max:.1} ms",
                total / *n as f64
            )
        })
        .collect();
    format!("{runs} runs; {}", rows.join("; "))
}

#[test]
fn the_python_engine_runs_the_demo_scenarios_over_the_bridge() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let token = token("engine");
    // One bridge per scenario (each has its own answers), started together; one engine and
    // one engine_check for them all (the SDK's import alone costs a CPU-second or two).
    let bridges: Vec<(Listener, PathBuf)> = thread::scope(|scope| {
        let starting: Vec<_> = SCENARIOS
            .iter()
            .map(|&(app, _, name)| {
                let (dir, token) = (tmp.path().join(app).join(name), &token);
                scope.spawn(move || {
                    let (answers, scenario) = scenario_files(&dir, app, name);
                    (serve(app, &answers, &dir.join("run-dir"), token), scenario)
                })
            })
            .collect();
        starting
            .into_iter()
            .map(|s| s.join().expect("a bridge did not start"))
            .collect()
    });
    let engine = engine(120, 0, &tmp.path().join("engine-journals"));
    let ready = started.elapsed();
    let runs: Vec<(&str, &str, &Path)> = bridges
        .iter()
        .zip(SCENARIOS)
        .map(|((bridge, scenario), &(_, key, _))| (bridge.url.as_str(), key, scenario.as_path()))
        .collect();
    let out = engine_check(&engine, &runs, &token, false).wait(CHECK_TIMEOUT);
    if !out.success() {
        // Each failed run with its bridge's log.
        let summary: Value = serde_json::from_str(&out.stdout).unwrap_or_default();
        let failed: Vec<String> = summary["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(&bridges)
            .filter(|(run, _)| run["ok"] != true)
            .map(|(run, (bridge, _))| format!("{run:#}\n{}", bridge.show_stderr()))
            .collect();
        panic!(
            "{}\n\nfailed runs:\n{}\n\n{}",
            out.show("engine_check.py"),
            failed.join("\n\n"),
            engine.show_stderr()
        );
    }
    let summary = summary(&out);
    let run_ms: f64 = summary["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["run_ms"].as_f64())
        .sum();
    eprintln!(
        "external engine: {} scenarios passed in {:.1?} (bridges and engine ready after \
         {ready:.1?}; run_process calls {run_ms:.0} ms in all)",
        SCENARIOS.len(),
        started.elapsed()
    );
    eprintln!(
        "external engine: latency seen by the engine: {}",
        latencies(&engine.stderr())
    );
    // The engine kept its own record of each run, in cuga-flo's event shape.
    let journals = std::fs::read_dir(tmp.path().join("engine-journals"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(journals, SCENARIOS.len(), "one engine journal per run");
}

/// Start a run of loan_approval `approve` on an engine that waits 300 ms before each control
/// point and gives each bridge call `call_timeout_s`, and break the bridge with `breaking`
/// once the engine has asked for the credit check. Returns the run's engine_check summary,
/// the time from the break to the answer, and the engine.
fn run_and_break(
    call_timeout_s: u64,
    breaking: impl FnOnce(&mut Listener),
) -> (Value, Duration, Listener) {
    let tmp = tempfile::tempdir().unwrap();
    let token = token("engine");
    let (answers, scenario) = scenario_files(&tmp.path().join("s"), "loan_approval", "approve");
    let engine = engine(call_timeout_s, 300, &tmp.path().join("engine-journals"));
    let mut bridge = serve(
        "loan_approval",
        &answers,
        &tmp.path().join("run-dir"),
        &token,
    );
    let from = engine.stderr().len();
    let check = engine_check(
        &engine,
        &[(bridge.url.as_str(), "loan_approval_v1", scenario.as_path())],
        &token,
        true,
    );
    assert!(
        engine.wait_for_stderr(from, "call execute_task Activity_0oydey5", CHECK_TIMEOUT),
        "the engine never asked for the credit check\n{}\n{}",
        engine.show_stderr(),
        bridge.show_stderr()
    );
    let broken = Instant::now();
    breaking(&mut bridge);
    let out = check.wait(CHECK_TIMEOUT);
    let after = broken.elapsed();
    assert!(
        out.success(),
        "{}\n{}",
        out.show("engine_check.py"),
        engine.show_stderr()
    );
    (summary(&out)["runs"][0].clone(), after, engine)
}

#[test]
fn a_bridge_killed_mid_call_fails_the_run_at_once() {
    // Stop the bridge, let the engine's call reach it (the engine waits 300 ms before each
    // control point), then kill it: the connection drops with the call in flight.
    let (summary, after, engine) = run_and_break(30, |bridge| {
        bridge.signal("STOP");
        thread::sleep(Duration::from_millis(1000));
        bridge.kill();
    });
    let message = summary["result"]["message"].as_str().unwrap_or_default();
    assert_eq!(summary["result"]["status"], "failed", "{summary:#}");
    assert!(
        message.starts_with("task `Activity_0oydey5` failed: the connection to the bridge")
            && message.contains("was lost"),
        "unclear message: {message}"
    );
    // The engine notices the dropped connection at once, well within its 30 s deadline.
    assert!(
        after < Duration::from_secs(15),
        "the run took {after:?} to fail after the bridge died\n{}",
        engine.show_stderr()
    );
    eprintln!("bridge killed: the run failed {after:.1?} later: {message}");
}

#[test]
fn a_bridge_that_stops_answering_fails_the_run_at_the_deadline() {
    // SIGSTOP: the bridge's socket still accepts connections, but nothing answers.
    let (summary, after, engine) = run_and_break(3, |bridge| bridge.signal("STOP"));
    let message = summary["result"]["message"].as_str().unwrap_or_default();
    assert_eq!(summary["result"]["status"], "failed", "{summary:#}");
    assert!(
        message.contains("task `Activity_0oydey5` failed") && message.contains("within 3s"),
        "unclear message: {message}"
    );
    assert!(
        after >= Duration::from_secs(3) && after < Duration::from_secs(20),
        "the run failed {after:?} after the bridge stopped (deadline 3 s)\n{}",
        engine.show_stderr()
    );
    eprintln!("bridge stopped: the run failed {after:.1?} later: {message}");
    // The listener's drop kills the stopped bridge (SIGKILL works on a stopped process).
}

#[test]
fn a_run_that_cannot_start_is_a_tool_error() {
    let tmp = tempfile::tempdir().unwrap();
    let token = token("engine");
    let (answers, scenario) = scenario_files(&tmp.path().join("s"), "loan_approval", "approve");
    // A port nobody listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}/mcp");
    let bridge = serve(
        "loan_approval",
        &answers,
        &tmp.path().join("run-dir"),
        &token,
    );
    let engine = engine(10, 0, &tmp.path().join("engine-journals"));
    let started = Instant::now();
    let out = engine_check(
        &engine,
        &[
            (closed.as_str(), "loan_approval_v1", scenario.as_path()),
            (bridge.url.as_str(), "no_such_process", scenario.as_path()),
        ],
        &token,
        true,
    )
    .wait(CHECK_TIMEOUT);
    assert!(
        out.success(),
        "{}\n{}",
        out.show("engine_check.py"),
        engine.show_stderr()
    );
    let summary = summary(&out);
    let error = |i: usize| {
        summary["runs"][i]["tool_error"]
            .as_str()
            .unwrap_or_default()
    };
    assert!(
        error(0).contains("cannot reach the bridge") && error(0).contains(&closed),
        "unclear error: {summary:#}"
    );
    assert!(
        error(1).contains("unknown process key `no_such_process`"),
        "unclear error: {summary:#}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}

/// cuga-flo's own client for engines (`McpControlPoints::run_process`, what `start` will
/// use to drive an external engine) reads the Python engine's result.
#[test]
fn cuga_flos_client_reads_the_python_engines_result() {
    use cuga_flo::bridge::mcp::{BridgeEndpoint, McpControlPoints, RunProcessArgs};
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let tmp = tempfile::tempdir().unwrap();
    let token = token("engine");
    let s = cuga_flo::app::scenario::load(&app_dir("loan_approval"), "approve").unwrap();
    let expect = s.expect.clone().expect("the scenario has an `expect:`");
    let (answers, _) = scenario_files(&tmp.path().join("s"), "loan_approval", "approve");
    let engine = engine(120, 0, &tmp.path().join("engine-journals"));
    let bridge = serve(
        "loan_approval",
        &answers,
        &tmp.path().join("run-dir"),
        &token,
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(async {
        cuga_flo::reason::llm::client::install_tls_provider();
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(engine.url.as_str()),
        );
        let client = tokio::time::timeout(LISTEN_TIMEOUT, ().serve(transport))
            .await
            .expect("initialize timed out")
            .expect("initialize failed");
        let args = RunProcessArgs {
            process_key: "loan_approval_v1".into(),
            run_id: "rust-client-1".into(),
            variables: s.inputs.clone(),
            bridge: Some(BridgeEndpoint {
                url: bridge.url.clone(),
                token: Some(token.clone()),
            }),
        };
        let control_points = McpControlPoints::new(client.peer().clone());
        let result = tokio::time::timeout(CHECK_TIMEOUT, control_points.run_process(&args))
            .await
            .expect("run_process timed out");
        let _ = client.cancel().await;
        result
    });
    let result = result.unwrap_or_else(|e| {
        panic!(
            "run_process through McpControlPoints failed: {}\n{}\n{}",
            e.message,
            engine.show_stderr(),
            bridge.show_stderr()
        )
    });
    assert_eq!(result.run_id, "rust-client-1");
    assert_eq!(Some(result.status), expect.status, "{result:?}");
    assert_eq!(Some(&result.path), expect.path.as_ref(), "{result:?}");
    assert_eq!(result.steps, result.path.len() as u64);
}
