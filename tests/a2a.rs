//! Remote agents over A2A, against peers written with the official A2A Python SDK
//! (`tests/interop/a2a_peer.py`, `a2a-sdk` pinned in `tests/interop/requirements-a2a.txt`):
//! `cuga-flo start` on an app whose task is delegated to the peer. Needs `python3` (3.10+)
//! with `venv` and `pip`, and PyPI the first time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/python.rs"]
mod python;
use python::{a2a_python, interop_dir, root};

const BIN: &str = env!("CARGO_BIN_EXE_cuga-flo");

/// A peer agent on 127.0.0.1, killed when dropped.
struct Peer {
    child: Child,
    url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Peer {
    fn start(mode: &str, args: &[&str], envs: &[(&str, &str)]) -> Peer {
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
            if let Ok(p) = std::fs::read_to_string(&port_file) {
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
            _dir: dir,
        }
    }

    /// The requests the peer saw.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn cancels(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("cancel.jsonl")).unwrap_or_default()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The remote_review app in a temporary apps folder, pointed at `url`, with `auth` (YAML
/// lines under the agent) and `edit` applied to the config.
fn app(url: &str, auth: &str, edit: impl Fn(String) -> String) -> tempfile::TempDir {
    let apps = tempfile::tempdir().unwrap();
    let src = root().join("tests/fixtures/apps/remote_review/config");
    let dst = apps.path().join("remote_review/config");
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::copy(
        src.join("remote_review.bpmn"),
        dst.join("remote_review.bpmn"),
    )
    .unwrap();
    let config = std::fs::read_to_string(src.join("remote_review_config.yaml"))
        .unwrap()
        .replace("PEER_URL", url)
        .replace("    # AUTH", auth);
    std::fs::write(dst.join("remote_review_config.yaml"), edit(config)).unwrap();
    apps
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
    journal: String,
}

fn start(apps: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Ran {
    let runs = apps.join("runs");
    let mut cmd = Command::new(BIN);
    cmd.env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .args([
            "--apps-dir",
            apps.to_str().unwrap(),
            "start",
            "remote_review",
        ])
        .args(["--run-dir", runs.to_str().unwrap(), "--no-model", "--json"])
        .args(extra)
        .stdin(Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let mut journal = String::new();
    for run in std::fs::read_dir(runs.join("runs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        journal.push_str(
            &std::fs::read_to_string(run.path().join("journal.jsonl")).unwrap_or_default(),
        );
    }
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        journal,
    }
}

impl Ran {
    fn show(&self) -> String {
        format!(
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- journal ---\n{}",
            self.code, self.stdout, self.stderr, self.journal
        )
    }
}

#[test]
fn a_task_is_delegated_to_a_python_sdk_agent_and_its_data_part_is_the_outputs() {
    let peer = Peer::start("data", &[], &[]);
    let apps = app(&peer.url, "", |c| c);
    let ran = start(apps.path(), &[], &[]);
    eprintln!("{}", ran.show());
    assert_eq!(ran.code, 0, "{}", ran.show());
}
