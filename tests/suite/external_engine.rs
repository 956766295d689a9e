//! An external workflow engine written with the official MCP Python SDK
//! (`tests/interop/engine.py`) runs the demo scenarios against `cuga-flo serve --http`:
//! the engine moves the tokens and asks the harness for every judgement over the bridge
//! (docs/bridge.md). `engine_check.py` calls the engine's `run_process` with a scenario's
//! inputs and the bridge's endpoint and checks the result against the scenario's `expect:`.
//! A second group of tests breaks the bridge during a run: the run must fail with a clear
//! message (or the call be a tool error) within the engine's deadline, never hang.
//!
//! The other direction: `cuga-flo start --engine-url` (`workflow_engine: {type: mcp}`)
//! hands each run to the Python engine and answers its control points on a loopback
//! endpoint of its own; the journal and the stream must be the native engine's, and an
//! engine that cannot be reached, dies mid-run or goes silent must fail the run clearly.
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

use crate::support;
use crate::support::listener;
use crate::support::python;
use crate::support::runs;
use listener::Listener;
use python::{Check, Finished, app_dir, interop_dir, python, scenario_files, token};
use runs::{by_element, closed_as_failed, comparable, journal};
use support::copy_dir;

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
    // A parallel multi-instance task, error boundaries on it and on the payment.
    ("invoice_payment", "invoice_payment_v1", "paid"),
    ("invoice_payment", "invoice_payment_v1", "lines_reviewed"),
    ("invoice_payment", "invoice_payment_v1", "line_disputed"),
    ("invoice_payment", "invoice_payment_v1", "payment_declined"),
    ("invoice_payment", "invoice_payment_v1", "agent_fails"),
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

// ---- `cuga-flo start` on the external engine ----

/// `cuga-flo start <app> --scenario <name>` journalled under `run_dir`, plus `extra`.
fn start(app: &Path, scenario: &str, run_dir: &Path, extra: &[&str]) -> Check {
    Check::spawn(
        Command::new(BIN)
            .arg("start")
            .arg(app)
            .args(["--scenario", scenario, "--no-model", "--run-dir"])
            .arg(run_dir)
            .args(extra)
            .env_remove("CUGA_FLO_APPS")
            .env("NO_COLOR", "1"),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn start_on_the_external_engine_journals_what_the_native_engine_journals() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(60, 0, &tmp.path().join("engine-journals"));
    let started = Instant::now();
    thread::scope(|scope| {
        for chunk in SCENARIOS.chunks(SCENARIOS.len().div_ceil(2)) {
            let (tmp, engine) = (tmp.path(), &engine);
            scope.spawn(move || {
                for &(app, _, name) in chunk {
                    let dir = tmp.join(app).join(name);
                    let native = start(
                        &app_dir(app),
                        name,
                        &dir.join("native"),
                        &["--json", "--engine", "native"],
                    );
                    let native = native.wait(CHECK_TIMEOUT);
                    let mcp = start(
                        &app_dir(app),
                        name,
                        &dir.join("mcp"),
                        &["--json", "--engine", "mcp", "--engine-url", &engine.url],
                    )
                    .wait(CHECK_TIMEOUT);
                    // Same exit (a terminated run exits 1 on both), every expectation met.
                    let code = |out: &Finished| out.status.and_then(|s| s.code());
                    assert_eq!(
                        code(&native),
                        code(&mcp),
                        "{app} {name}: {}\n{}\n{}",
                        native.show("native start"),
                        mcp.show("start --engine-url"),
                        engine.show_stderr()
                    );
                    let verdict = comparable(&mcp.stdout).pop().unwrap_or_default();
                    assert_eq!(verdict["met"], true, "{app} {name}: {}", mcp.stdout);
                    let (want, got) = (comparable(&native.stdout), comparable(&mcp.stdout));
                    assert_eq!(want.len(), got.len(), "{app} {name}: {got:#?}");
                    assert_eq!(want.first(), got.first(), "{app} {name}: run_started");
                    assert_eq!(want.last(), got.last(), "{app} {name}: the verdict");
                    assert_eq!(by_element(&want), by_element(&got), "{app} {name}");
                    let records = journal(&dir.join("mcp"));
                    assert_eq!(records[0]["engine"], "mcp");
                    assert_eq!(records.last().unwrap()["event"], "run_finished");
                }
            });
        }
    });
    eprintln!(
        "start --engine-url: {} scenarios on both engines in {:.1?}",
        SCENARIOS.len(),
        started.elapsed()
    );
}

#[test]
fn the_terminal_stream_of_an_external_run_reads_like_a_native_one() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(60, 0, &tmp.path().join("engine-journals"));
    let app = app_dir("incident_response");
    let human = |out: &Finished| {
        // Wrapped lines joined (where a line wraps depends on how long its timing reads).
        let mut joined: Vec<String> = Vec::new();
        for line in out.stdout.lines() {
            match joined.last_mut() {
                Some(last) if line.starts_with("      ") => {
                    last.push(' ');
                    last.push_str(line.trim_start());
                }
                _ => joined.push(line.to_owned()),
            }
        }
        let mut lines = Vec::new();
        for line in &joined {
            let line = line.replace("engine native", "engine ENGINE");
            let line = line.replace("engine mcp", "engine ENGINE");
            // Timings and run ids differ from run to run.
            let line: String = match (line.find("▶ run "), line.find(" · app")) {
                (Some(a), Some(b)) => format!("{}▶ run ID{}", &line[..a], &line[b..]),
                _ => line,
            };
            let line = match line.rfind(" ms)") {
                Some(end) => match line[..end].rfind('(') {
                    Some(open) => format!("{}(T){}", &line[..open], &line[end + 4..]),
                    None => line,
                },
                None => line,
            };
            // Timings are padded to a width: the spaces after one differ with it.
            let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
            if !line.trim_start().starts_with("journal:")
                && !line.trim_start().starts_with("duration:")
            {
                lines.push(line);
            }
        }
        lines.join("\n")
    };
    let native = start(&app, "ransomware", &tmp.path().join("native"), &[]).wait(CHECK_TIMEOUT);
    let mcp = start(
        &app,
        "ransomware",
        &tmp.path().join("mcp"),
        &["--engine", "mcp", "--engine-url", &engine.url],
    )
    .wait(CHECK_TIMEOUT);
    assert!(
        mcp.success(),
        "{}\n{}",
        mcp.show("start"),
        engine.show_stderr()
    );
    assert!(human(&native).contains("⚑ hook"), "{}", native.stdout);
    assert_eq!(human(&native), human(&mcp));
}

#[test]
fn start_fails_clearly_when_the_engine_cannot_be_reached() {
    let tmp = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}/mcp");
    let out = start(
        &app_dir("loan_approval"),
        "approve",
        tmp.path(),
        &["--engine", "mcp", "--engine-url", &closed],
    )
    .wait(CHECK_TIMEOUT);
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(1),
        "{}",
        out.show("start")
    );
    let message = closed_as_failed(&journal(tmp.path()));
    assert!(
        message.starts_with("cannot reach the engine") && message.contains(&closed),
        "unclear message: {message}"
    );
    // The summary wraps the message at the terminal's width.
    let squash = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        squash(&out.stdout).contains(&squash(&message)),
        "{}",
        out.show("start")
    );
    assert!(
        out.elapsed < Duration::from_secs(20),
        "took {:?}",
        out.elapsed
    );
}

#[test]
fn start_fails_clearly_when_the_engine_dies_mid_run() {
    let tmp = tempfile::tempdir().unwrap();
    // 300 ms before each control point: time to kill it between two.
    let mut engine = engine(60, 300, &tmp.path().join("engine-journals"));
    let from = engine.stderr().len();
    let run = start(
        &app_dir("loan_approval"),
        "approve",
        &tmp.path().join("run-dir"),
        &["--engine", "mcp", "--engine-url", &engine.url],
    );
    assert!(
        engine.wait_for_stderr(from, "call execute_task Activity_0oydey5", CHECK_TIMEOUT),
        "the engine never asked for the credit check\n{}",
        engine.show_stderr()
    );
    let killed = Instant::now();
    engine.kill();
    let out = run.wait(CHECK_TIMEOUT);
    let after = killed.elapsed();
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(1),
        "{}",
        out.show("start")
    );
    let records = journal(&tmp.path().join("run-dir"));
    let message = closed_as_failed(&records);
    assert!(
        message.contains("did not complete the run") && message.contains(&engine.url),
        "unclear message: {message}"
    );
    // What happened before the engine died is journalled.
    assert!(records.iter().any(|r| r["event"] == "hook_evaluated"));
    assert!(
        after < Duration::from_secs(15),
        "the run took {after:?} to fail"
    );
    eprintln!("engine killed: the run failed {after:.1?} later: {message}");
}

#[test]
fn start_fails_clearly_when_the_engine_goes_silent() {
    let tmp = tempfile::tempdir().unwrap();
    // The engine waits 8 s before its first control point; the app allows 1 s of silence.
    let engine = engine(60, 8000, &tmp.path().join("engine-journals"));
    let app = tmp.path().join("incident_response");
    copy_dir(&app_dir("incident_response"), &app);
    let config = app.join("config/incident_response_config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replace(
        "workflow_engine:\n  type: native\n",
        &format!(
            "workflow_engine:\n  type: mcp\n  url: {}\n  idle_timeout: 1\n",
            engine.url
        ),
    );
    assert!(text.contains("type: mcp"), "the config changed: {text}");
    std::fs::write(&config, text).unwrap();
    let out = start(&app, "routine", &tmp.path().join("run-dir"), &[]).wait(CHECK_TIMEOUT);
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(1),
        "{}",
        out.show("start")
    );
    let message = closed_as_failed(&journal(&tmp.path().join("run-dir")));
    assert!(
        message.contains("neither called a control point nor finished the run for 1s"),
        "unclear message: {message}"
    );
    assert!(
        out.elapsed < Duration::from_secs(7),
        "took {:?}",
        out.elapsed
    );
}

/// Every run journalled under `run_dir`, by id (a parent's id sorts before its children's).
fn journals(run_dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut ids: Vec<String> = std::fs::read_dir(run_dir.join("runs"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids.into_iter()
        .map(|id| {
            let text =
                std::fs::read_to_string(run_dir.join("runs").join(&id).join("journal.jsonl"))
                    .unwrap_or_default();
            let records = text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            (id, records)
        })
        .collect()
}

fn entered(records: &[Value]) -> Vec<&str> {
    records
        .iter()
        .filter(|r| r["event"] == "node_entered")
        .filter_map(|r| r["node"].as_str())
        .collect()
}

fn first<'a>(records: &'a [Value], event: &str) -> &'a Value {
    records
        .iter()
        .find(|r| r["event"] == event)
        .unwrap_or_else(|| panic!("no `{event}` in {records:#?}"))
}

/// A call activity on an external engine: the engine asks its `execute_task`, and cuga-flo
/// answers by running the called app as a linked child run (as for the native engine), its
/// `out` variables coming back; a child that fails raises its error code at the call
/// activity, which the engine throws to the call activity's error boundary.
#[test]
fn call_activities_run_linked_child_runs_on_the_external_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(60, 0, &tmp.path().join("engine-journals"));
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps/call_parent");
    let on_mcp = ["--engine", "mcp", "--engine-url", engine.url.as_str()];

    let approved = tmp.path().join("approve");
    let out = start(&app, "approve", &approved, &on_mcp).wait(CHECK_TIMEOUT);
    assert!(
        out.success(),
        "{}\n{}",
        out.show("start"),
        engine.show_stderr()
    );
    let runs = journals(&approved);
    assert_eq!(runs.len(), 2, "a parent and its child: {runs:#?}");
    let ((parent, p), (child, c)) = (&runs[0], &runs[1]);
    assert_eq!(child, &format!("{parent}.Call_Review.1"));
    assert_eq!(first(p, "run_started")["engine"], "mcp");
    assert_eq!(
        entered(p),
        ["Start", "Call_Review", "Gateway_Approved", "End_Approved"]
    );
    let started = first(p, "child_started");
    assert_eq!(started["run_id"], child.as_str());
    assert_eq!(started["process_key"], "call_child_v1");
    assert_eq!(started["key"], format!("{parent}:Call_Review:1"));
    let call = first(p, "task_finished");
    assert_eq!(call["key"], started["key"]);
    assert_eq!(call["variables"], serde_json::json!({"approved": true}));
    assert_eq!(
        first(c, "run_started")["parent"],
        serde_json::json!({"run_id": parent, "node": "Call_Review"})
    );
    // Only what the `in` mapping passes (and the child's own defaults).
    assert_eq!(
        first(c, "run_started")["variables"],
        serde_json::json!({"amount": 250, "approved": false})
    );
    assert_eq!(
        entered(c),
        ["Start", "Gateway_Limit", "Task_Assess", "End_Done"]
    );

    let over = tmp.path().join("over");
    let out = Check::spawn(
        Command::new(BIN)
            .arg("start")
            .arg(&app)
            .args([
                "--var",
                "amount=5000",
                "--no-model",
                "--detach",
                "--run-dir",
            ])
            .arg(&over)
            .args(on_mcp)
            .env_remove("CUGA_FLO_APPS")
            .env("NO_COLOR", "1"),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .wait(CHECK_TIMEOUT);
    assert!(
        out.success(),
        "{}\n{}",
        out.show("start"),
        engine.show_stderr()
    );
    let runs = journals(&over);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    let ((_, p), (_, c)) = (&runs[0], &runs[1]);
    assert_eq!(first(c, "run_finished")["status"], "failed");
    assert_eq!(
        entered(p),
        [
            "Start",
            "Call_Review",
            "Limit_Caught",
            "Task_Escalate",
            "End_Escalated"
        ]
    );
    let call = first(p, "task_finished");
    assert_eq!(call["status"], "failed");
    assert_eq!(call["error_code"], "LIMIT_EXCEEDED");
    let thrown = first(p, "event_thrown");
    assert_eq!(thrown["code"], "LIMIT_EXCEEDED");
    assert_eq!(thrown["caught_by"], "Limit_Caught");
    assert_eq!(first(p, "run_finished")["status"], "completed");
}

/// An external engine cannot park (docs/bridge.md §13): a run that can only wait for a
/// message from outside fails at once, saying what it waits for, instead of hanging.
#[test]
fn a_run_that_would_wait_for_a_message_from_outside_fails_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = engine(60, 0, &tmp.path().join("engine-journals"));
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apps/messages");
    let runs = tmp.path().join("runs");
    let out = Check::spawn(
        Command::new(BIN)
            .arg("start")
            .arg(&app)
            .args(["--no-model", "--detach", "--run-dir"])
            .arg(&runs)
            .args(["--engine", "mcp", "--engine-url", engine.url.as_str()])
            .env_remove("CUGA_FLO_APPS")
            .env("NO_COLOR", "1"),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .wait(CHECK_TIMEOUT);
    assert_eq!(
        out.status.and_then(|s| s.code()),
        Some(1),
        "{}",
        out.show("start")
    );
    let records = journal(&runs);
    assert_eq!(
        entered(&records),
        ["Start", "Task_Prepare", "Receive_Payment"]
    );
    let end = first(&records, "run_finished");
    assert_eq!(end["status"], "failed");
    let message = end["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("message `Payment` at `Receive_Payment`")
            && message.contains("cannot park"),
        "{message}"
    );
}
