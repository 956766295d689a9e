//! A real Flowable server for the tests: `tests/flowable/start-server.sh` builds (Maven,
//! from Maven Central, cached) and starts a minimal Flowable REST application on
//! 127.0.0.1 with H2 in memory, and prints `listening URL`; the server stops when the test
//! binary that started it exits (the script watches `CUGA_FLO_OWNER_PID`).
//! `CUGA_FLO_TEST_FLOWABLE_URL` names a server that is already running instead (its
//! user and password in `FLOWABLE_USER` / `FLOWABLE_PASSWORD`, default admin/test).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub const USER: &str = "admin";
pub const PASSWORD: &str = "test";

/// A server started for these tests, or named by the environment.
pub struct Flowable {
    /// The process API (`http://127.0.0.1:PORT/flowable-rest/service`).
    pub url: String,
    /// Set when this process started it (and may stop it).
    port: Option<u16>,
}

impl Flowable {
    /// Start a server of our own.
    pub fn start() -> Flowable {
        Flowable::start_with(&[])
    }

    /// Start a server of our own with `env` (a node of a cluster on PostgreSQL: the
    /// `SPRING_DATASOURCE_*` settings, the async executor's lock times).
    pub fn start_with(env: &[(&str, String)]) -> Flowable {
        let mut env = env.to_vec();
        env.extend([
            ("FLOWABLE_USER", USER.to_string()),
            ("FLOWABLE_PASSWORD", PASSWORD.to_string()),
        ]);
        let url = super::start_server(
            "tests/flowable/start-server.sh",
            &[],
            &env,
            "the Flowable server",
        );
        let port = url
            .split(':')
            .nth(2)
            .and_then(|rest| rest.split('/').next())
            .and_then(|p| p.parse().ok());
        Flowable { url, port }
    }

    /// Kill it at once (SIGKILL: a node lost), a server of our own only.
    pub fn kill(&mut self) {
        if let Some(port) = self.port.take() {
            let cache = std::env::var("CUGA_FLO_CACHE").map_or_else(
                |_| Path::new(&std::env::var("HOME").unwrap_or_default()).join(".cache/cuga-flo"),
                std::path::PathBuf::from,
            );
            let dir = std::env::var("CUGA_FLO_FLOWABLE_DIR").map_or_else(
                |_| cache.join(format!("flowable/run-{port}")),
                std::path::PathBuf::from,
            );
            let pid = std::fs::read_to_string(dir.join("server.pid")).unwrap_or_default();
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
            let _ = std::fs::remove_file(dir.join("server.pid"));
        }
    }

    /// Stop it now (a server of our own only).
    pub fn stop(&mut self) {
        if let Some(port) = self.port.take() {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let _ = Command::new("bash")
                .arg(root.join("tests/flowable/stop-server.sh"))
                .arg(port.to_string())
                .stdout(Stdio::null())
                .status();
        }
    }
}

impl Drop for Flowable {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server these tests share: started once per test binary (and stopped when it
/// exits), or the one `CUGA_FLO_TEST_FLOWABLE_URL` names.
pub fn shared() -> &'static Flowable {
    static SERVER: OnceLock<Flowable> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("CUGA_FLO_TEST_FLOWABLE_URL") {
        Ok(url) if !url.trim().is_empty() => Flowable {
            url: url.trim().to_string(),
            port: None,
        },
        _ => Flowable::start(),
    })
}

/// The environment a `cuga-flo start` on Flowable needs: the credentials.
pub fn credentials() -> [(&'static str, String); 2] {
    [
        (
            "FLOWABLE_USER",
            std::env::var("FLOWABLE_USER").unwrap_or_else(|_| USER.to_string()),
        ),
        (
            "FLOWABLE_PASSWORD",
            std::env::var("FLOWABLE_PASSWORD").unwrap_or_else(|_| PASSWORD.to_string()),
        ),
    ]
}
