//! Interop with the official MCP Python SDK (`tests/interop/`): `cuga-flo serve` as any
//! MCP host sees it. A cached venv (`tests/interop/setup_venv.py`) holds the SDK pinned in
//! `tests/interop/requirements.txt`; `client_check.py` drives every tool over streamable
//! HTTP (with a bearer token and a scenario's answers) and `stdio_check.py` spawns
//! `serve --stdio`. The official MCP TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in
//! `tests/interop/mcp-js/`, installed once into the same cache) runs `mcp_js_check.mjs`
//! over both transports as well: its `Client` validates every tool result against the
//! tool's output schema. Needs `python3` (3.10+) with `venv` and `pip`, Node.js 20+ with
//! `npm`, and PyPI and npm the first time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::listener;
use crate::support::python;
use listener::Listener;
use python::{app_dir, interop_dir, npm_packages, python, root, run, scenario_files, token};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");
/// One Python check script, end to end.
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);
const TOKEN_ENV: &str = "CUGA_FLO_INTEROP_TOKEN";

/// Spawn `cuga-flo serve ARGS --http 127.0.0.1:0` and wait for its `listening` line.
fn serve(args: &[&str], envs: &[(&str, &str)], cwd: &Path) -> Listener {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .args(args)
        .args(["--http", "127.0.0.1:0"])
        .envs(envs.iter().copied())
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .current_dir(cwd);
    Listener::start("serve", &mut cmd)
}

#[test]
fn the_python_sdk_drives_every_tool_over_streamable_http() {
    let python = python();
    let tmp = tempfile::tempdir().unwrap();
    let (answers, scenario) = scenario_files(tmp.path(), "incident_response", "routine");
    let run_dir = tmp.path().join("run-dir");
    let token = token("interop");
    let app = app_dir("incident_response");
    // The apps folder: `register_flow` loads the second app from it.
    let apps = app_dir("trip_planner").parent().unwrap().to_path_buf();
    let server = serve(
        &[
            "--apps-dir",
            apps.to_str().unwrap(),
            app.to_str().unwrap(),
            "--token-env",
            TOKEN_ENV,
            "--answers",
            answers.to_str().unwrap(),
            "--no-model",
            "--run-dir",
            run_dir.to_str().unwrap(),
        ],
        &[(TOKEN_ENV, &token)],
        tmp.path(),
    );

    let out = run(
        Command::new(&python)
            .arg(interop_dir().join("client_check.py"))
            .arg(&server.url)
            .arg("--scenario")
            .arg(&scenario)
            .args(["--token-env", TOKEN_ENV])
            .arg("--apps-dir")
            .arg(root().join("applications"))
            .args(["--timeout", &(CHECK_TIMEOUT.as_secs() - 20).to_string()])
            .env(TOKEN_ENV, &token),
        CHECK_TIMEOUT,
    )
    .unwrap();
    assert!(
        out.success(),
        "{}\n--- serve stderr ---\n{}",
        out.show("client_check.py"),
        server.show_stderr()
    );

    let summary: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "client_check.py's summary is not JSON ({e}):\n{}",
            out.stdout
        )
    });
    // Not failures, but worth seeing with --nocapture: what the SDK complained about.
    for warning in summary["warnings"].as_array().into_iter().flatten() {
        eprintln!(
            "client_check.py warning: {}",
            warning.as_str().unwrap_or_default()
        );
    }
    // The run that run_process started is journalled under --run-dir.
    let run_id = summary["run_id"]
        .as_str()
        .expect("the summary names its run id");
    let journal = run_dir.join("runs").join(run_id).join("journal.jsonl");
    assert!(
        journal.is_file(),
        "no journal at {} after run_process\n--- serve stderr ---\n{}",
        journal.display(),
        server.show_stderr()
    );
    drop(server);
}

#[test]
fn the_python_sdk_spawns_serve_over_stdio() {
    let python = python();
    let tmp = tempfile::tempdir().unwrap();
    let app = app_dir("incident_response");
    let run_dir = tmp.path().join("run-dir");
    let out = run(
        Command::new(&python)
            .arg(interop_dir().join("stdio_check.py"))
            .args(["--timeout", &(CHECK_TIMEOUT.as_secs() - 20).to_string()])
            .arg("--")
            .arg(BIN)
            .arg("serve")
            .arg(&app)
            .args(["--stdio", "--no-model", "--run-dir"])
            .arg(&run_dir)
            .env_remove("CUGA_FLO_APPS")
            .env("NO_COLOR", "1")
            .current_dir(tmp.path()),
        CHECK_TIMEOUT,
    )
    .unwrap();
    assert!(out.success(), "{}", out.show("stdio_check.py"));
}

/// The pinned MCP TypeScript SDK, with `mcp_js_check.mjs` copied beside its packages.
fn js_check() -> (PathBuf, tempfile::TempPath) {
    let sdk = npm_packages(
        "mcp-js",
        "node_modules/@modelcontextprotocol/sdk/package.json",
    );
    let script = tempfile::Builder::new()
        .suffix(".mjs")
        .tempfile_in(&sdk)
        .unwrap()
        .into_temp_path();
    std::fs::copy(interop_dir().join("mcp_js_check.mjs"), &script).unwrap();
    (sdk, script)
}

/// The checker's JSON summary: every check passed, or the failures shown.
fn assert_js_checks(out: &python::Finished, what: &str, server: &str) -> Value {
    let summary: Value = serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "{what}'s summary is not JSON ({e}):\n{}\n{server}",
            out.show(what)
        )
    });
    let failed: Vec<&Value> = summary["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["ok"] != Value::Bool(true))
        .collect();
    assert!(
        out.success() && failed.is_empty() && summary["ok"] == Value::Bool(true),
        "{what}: failed checks {failed:#?}\n{}\n{server}",
        out.show(what)
    );
    summary
}

#[test]
fn the_typescript_sdk_drives_the_tools_over_streamable_http() {
    let (_sdk, script) = js_check();
    let tmp = tempfile::tempdir().unwrap();
    let (answers, scenario) = scenario_files(tmp.path(), "incident_response", "routine");
    let run_dir = tmp.path().join("run-dir");
    let token = token("interop-js");
    let app = app_dir("incident_response");
    let server = serve(
        &[
            app.to_str().unwrap(),
            "--token-env",
            TOKEN_ENV,
            "--answers",
            answers.to_str().unwrap(),
            "--no-model",
            "--run-dir",
            run_dir.to_str().unwrap(),
        ],
        &[(TOKEN_ENV, &token)],
        tmp.path(),
    );
    let out = run(
        Command::new("node")
            .arg(&script)
            .args(["http", &server.url])
            .arg(&scenario)
            .env(TOKEN_ENV, &token),
        CHECK_TIMEOUT,
    )
    .unwrap();
    let summary = assert_js_checks(&out, "mcp_js_check.mjs http", &server.show_stderr());
    // Its names, not only its count: a check that silently stopped running would show here.
    let names: Vec<&str> = summary["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for want in [
        "http: a client without the token is refused",
        "tools/list: the bridge's tools with object schemas",
        "get_bpmn_process",
        "run_process: scenario incident_response/routine as it expects",
    ] {
        assert!(names.contains(&want), "no check {want:?} in {names:?}");
    }
    // The run the TypeScript client started is journalled like any other.
    let run_id = summary["run_id"]
        .as_str()
        .expect("the summary names its run");
    assert!(
        run_dir
            .join("runs")
            .join(run_id)
            .join("journal.jsonl")
            .is_file(),
        "no journal for {run_id}"
    );
    // Schemas a strict validator reads without complaint (schemars's `uint64` & co. are not
    // JSON Schema formats; Ajv logs each one it ignores).
    assert!(
        !out.stderr.contains("unknown format"),
        "the SDK's validator did not understand a schema:\n{}",
        out.stderr
    );
}

#[test]
fn the_typescript_sdk_spawns_serve_over_stdio() {
    let (_sdk, script) = js_check();
    let tmp = tempfile::tempdir().unwrap();
    let app = app_dir("incident_response");
    let run_dir = tmp.path().join("run-dir");
    let out = run(
        Command::new("node")
            .arg(&script)
            .args(["stdio", "--", BIN, "serve"])
            .arg(&app)
            .args(["--stdio", "--no-model", "--run-dir"])
            .arg(&run_dir)
            .env_remove("CUGA_FLO_APPS")
            .env("NO_COLOR", "1")
            .current_dir(tmp.path()),
        CHECK_TIMEOUT,
    )
    .unwrap();
    assert_js_checks(&out, "mcp_js_check.mjs stdio", "");
    assert!(
        !out.stderr.contains("unknown format"),
        "the SDK's validator did not understand a schema:\n{}",
        out.stderr
    );
}
