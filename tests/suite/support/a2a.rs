//! What the A2A client tests share (tests/suite/a2a.rs): a peer agent written with the official
//! Python `a2a-sdk` (`tests/interop/a2a_peer.py`), a fixture app copied into a temporary
//! apps folder and pointed at it, and one way to run `cuga-flo` there and read back what it
//! printed and journalled ([`cuga_in`], [`Ran`]), parking included ([`Ran::parked`]).
//! Include it next to `support/python.rs` (as `mod python`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::python::{a2a_python, interop_dir, root};

/// A peer agent on 127.0.0.1, killed when dropped.
pub struct Peer {
    pub child: Child,
    pub url: String,
    log: PathBuf,
    dir: tempfile::TempDir,
}

impl Peer {
    /// `a2a_peer.py MODE ARGS` with `envs`, once it listens.
    pub fn start(mode: &str, args: &[&str], envs: &[(&str, &str)]) -> Peer {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let log = dir.path().join("requests.jsonl");
        let mut cmd = Command::new(a2a_python());
        cmd.arg(interop_dir().join("a2a_peer.py"))
            .arg(mode)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .args(args)
            .env("A2A_PEER_CANCEL_LOG", dir.path().join("cancel.jsonl"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("the peer starts");
        let started = Instant::now();
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(&port_file)
                && !p.trim().is_empty()
            {
                break p.trim().to_string();
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the peer did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        // The port is bound before the file is written; wait until it answers.
        let url = format!("http://127.0.0.1:{port}");
        while std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the peer does not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Peer {
            child,
            url,
            log,
            dir,
        }
    }

    /// The requests the peer saw.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The JSON-RPC methods the peer was sent, in order.
    pub fn methods(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter_map(|r| r["method"].as_str().map(str::to_string))
            .collect()
    }

    /// How many `method` requests the peer saw.
    pub fn count(&self, method: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r["method"] == method)
            .count()
    }

    /// The cancellations the agent was handed (one JSON line each).
    pub fn cancels(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("cancel.jsonl")).unwrap_or_default()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fixture app `tests/fixtures/apps/<name>` in a temporary apps folder: its
/// `config/` copied, `PEER_URL` in its config replaced by `url`, then `edit` applied to
/// the config.
pub fn fixture_app(name: &str, url: &str, edit: impl Fn(String) -> String) -> tempfile::TempDir {
    let apps = tempfile::tempdir().unwrap();
    let src = root().join("tests/fixtures/apps").join(name).join("config");
    let dst = apps.path().join(name).join("config");
    std::fs::create_dir_all(&dst).unwrap();
    let config = format!("{name}_config.yaml");
    for f in std::fs::read_dir(&src).unwrap().flatten() {
        if f.file_name() != config.as_str() {
            std::fs::copy(f.path(), dst.join(f.file_name())).unwrap();
        }
    }
    let text = std::fs::read_to_string(src.join(&config))
        .unwrap()
        .replace("PEER_URL", url);
    std::fs::write(dst.join(&config), edit(text)).unwrap();
    apps
}

/// What one `cuga-flo` command did: its exit code, what it printed, and the journals of
/// every run under its run folder (concatenated).
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub journal: String,
}

/// A run parked: its id, the question it parked on, and its records so far.
pub struct Parked {
    pub run_id: String,
    pub question: Value,
    pub records: Vec<Value>,
}

impl Ran {
    /// Everything, for an assertion message.
    pub fn show(&self) -> String {
        format!(
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- journal ---\n{}",
            self.code, self.stdout, self.stderr, self.journal
        )
    }

    pub fn records(&self) -> Vec<Value> {
        self.journal
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The run id of the first journal read.
    pub fn run_id(&self) -> String {
        self.records()[0]["run_id"].as_str().unwrap().to_string()
    }

    /// The first record with `event` at `node`.
    pub fn record(&self, event: &str, node: &str) -> Value {
        self.records()
            .into_iter()
            .find(|r| r["event"] == event && r["node"] == node)
            .unwrap_or_else(|| panic!("no {event} at {node}\n{}", self.show()))
    }

    /// The index of the first record with `event`.
    pub fn position(&self, event: &str) -> usize {
        self.records()
            .iter()
            .position(|r| r["event"] == event)
            .unwrap_or_else(|| panic!("no {event}\n{}", self.show()))
    }

    /// Whether the run entered `node`.
    pub fn entered(&self, node: &str) -> bool {
        self.journal
            .lines()
            .any(|l| l.contains("\"node_entered\"") && l.contains(&format!("\"node\":\"{node}\"")))
    }

    /// The run parked (exit 3) on a question: the run, the question and the records.
    pub fn parked(&self) -> Parked {
        assert_eq!(self.code, 3, "parked\n{}", self.show());
        let records = self.records();
        let question = records
            .iter()
            .find(|r| r["event"] == "question_parked")
            .unwrap_or_else(|| panic!("no question_parked\n{}", self.show()))["question"]
            .clone();
        Parked {
            run_id: records[0]["run_id"].as_str().unwrap().to_string(),
            question,
            records,
        }
    }
}

impl Parked {
    /// The remote task the question names: it is `agent`'s, in `state`, with a task id,
    /// and the question has a poll deadline. Its task id.
    pub fn on_remote(&self, agent: &str, state: &str) -> String {
        let remote = &self.question["remote"];
        assert_eq!(remote["agent"], agent, "{}", self.question);
        assert_eq!(remote["state"], state, "{}", self.question);
        assert!(
            self.question["deadline_ms"].as_u64().is_some(),
            "a poll deadline: {}",
            self.question
        );
        let task_id = remote["task_id"].as_str().unwrap_or_default().to_string();
        assert!(!task_id.is_empty(), "{}", self.question);
        task_id
    }

    /// The index of the first record with `event`.
    pub fn position(&self, event: &str) -> usize {
        self.records
            .iter()
            .position(|r| r["event"] == event)
            .unwrap_or_else(|| panic!("no {event}: {:?}", self.records))
    }
}

/// `cuga-flo --apps-dir APPS ARGS --run-dir RUNS` with `envs` (stdin empty: no person at
/// a terminal; no model unless `envs` name one), and the journals under `RUNS`.
pub fn cuga_in(apps: &Path, runs: &Path, args: &[&str], envs: &[(&str, &str)]) -> Ran {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.env_remove("CUGA_FLO_APPS")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CRASH_TRACE")
        .env("NO_COLOR", "1")
        .args(["--apps-dir", apps.to_str().unwrap()])
        .args(args)
        .args(["--run-dir", runs.to_str().unwrap()])
        .stdin(Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let mut journal = String::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(runs.join("runs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for run in dirs {
        journal.push_str(&std::fs::read_to_string(run.join("journal.jsonl")).unwrap_or_default());
    }
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        journal,
    }
}

/// A fresh run folder under `apps` (runs-0, runs-1, ...): the journal read back is that
/// run's only.
pub fn fresh_runs(apps: &Path) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    apps.join(format!("runs-{n}"))
}

/// The environment that points cuga-flo at a test model server (support/chat_server.rs)
/// serving `model`.
pub fn model_env(url: &str, model: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CUGA_FLO_LLM_BASE_URL", url.to_string()),
        ("CUGA_FLO_LLM_MODEL", model.to_string()),
        ("CUGA_FLO_LLM_API_KEY", "sk-test".to_string()),
    ]
}

pub fn envs_of<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Sleep until `at` (a peer's slow work is done, a poll deadline has passed).
pub fn sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}
