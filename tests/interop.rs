//! Interop with the official MCP Python SDK (`tests/interop/`): `cuga-flo serve` as any
//! MCP host sees it. A cached venv (`tests/interop/setup_venv.py`) holds the SDK pinned in
//! `tests/interop/requirements.txt`; `client_check.py` drives every tool over streamable
//! HTTP (with a bearer token and a scenario's answers) and `stdio_check.py` spawns
//! `serve --stdio`. Needs `python3` (3.10+) with `venv` and `pip`, and PyPI the first time.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "support/listener.rs"]
mod listener;
use listener::Listener;

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");
/// Creating the venv from nothing (download and install) may take this long.
const SETUP_TIMEOUT: Duration = Duration::from_secs(900);
/// One Python check script, end to end.
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);
const TOKEN_ENV: &str = "CUGA_FLO_INTEROP_TOKEN";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn interop_dir() -> PathBuf {
    root().join("tests/interop")
}

fn app_dir(name: &str) -> PathBuf {
    root().join("applications").join(name)
}

/// What a finished (or killed) child printed.
struct Finished {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Finished {
    fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    fn show(&self, what: &str) -> String {
        let status = match self.status {
            Some(s) => format!("{s}"),
            None => format!("killed after {:.0?} (timeout)", self.elapsed),
        };
        format!(
            "{what}: {status}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout, self.stderr
        )
    }
}

/// Read a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Run `cmd` to its end, killing it after `timeout`.
fn run(cmd: &mut Command, timeout: Duration) -> Result<Finished, String> {
    let shown = format!("{cmd:?}");
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("cannot wait for {shown}: {e}")),
        }
    };
    Ok(Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        elapsed: started.elapsed(),
    })
}

/// The venv's python, set up once per test binary (and cached across runs).
fn python() -> PathBuf {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON
        .get_or_init(setup_venv)
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn setup_venv() -> Result<PathBuf, String> {
    let python3 = std::env::var("PYTHON3").unwrap_or_else(|_| "python3".into());
    let help = "the interop tests need Python 3.10+ with the venv module and pip \
                (Debian: apt-get install python3 python3-venv python3-pip), and PyPI the \
                first time (CI has them)";
    let out = run(
        Command::new(&python3).arg(interop_dir().join("setup_venv.py")),
        SETUP_TIMEOUT,
    )
    .map_err(|e| format!("{e}\n{help}"))?;
    if !out.success() {
        return Err(format!("{}\n{help}", out.show("setup_venv.py")));
    }
    if !out.stderr.trim().is_empty() {
        eprintln!("{}", out.stderr.trim());
    }
    let path = PathBuf::from(out.stdout.trim());
    if !path.is_file() {
        return Err(format!(
            "setup_venv.py printed `{}`, which is not a file",
            path.display()
        ));
    }
    Ok(path)
}

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

/// A token unique to this test run (no secrets involved: the server is on loopback).
fn token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("interop-{}-{nanos:x}", std::process::id())
}

/// Scenario `name` of incident_response as two JSON files: the answers for `serve
/// --answers`, and the inputs and expectations for `client_check.py --scenario`.
fn scenario_files(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let s = cuga_flo::app::scenario::load(&app_dir("incident_response"), name)
        .unwrap_or_else(|e| panic!("{e}"));
    let expect = s.expect.as_ref().expect("the scenario has an `expect:`");
    let answers = dir.join("answers.json");
    let scenario = dir.join("scenario.json");
    std::fs::write(&answers, json!({ "answers": s.answers }).to_string()).unwrap();
    let doc = json!({
        "name": name,
        "inputs": s.inputs,
        "expect": {
            "status": expect.status,
            "path": expect.path,
            "variables": expect.variables,
        },
    });
    std::fs::write(&scenario, doc.to_string()).unwrap();
    (answers, scenario)
}

#[test]
fn the_python_sdk_drives_every_tool_over_streamable_http() {
    let python = python();
    let tmp = tempfile::tempdir().unwrap();
    let (answers, scenario) = scenario_files(tmp.path(), "routine");
    let run_dir = tmp.path().join("run-dir");
    let token = token();
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
