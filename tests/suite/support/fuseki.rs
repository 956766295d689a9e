//! A real Apache Jena Fuseki for the tests: `tests/fuseki/start-server.sh` fetches
//! jena-fuseki-main (Maven Central, cached) and starts it on 127.0.0.1 with an in-memory
//! dataset `/ds` (updates enabled), and prints `listening URL`; the server stops when the
//! test binary that started it exits (the script watches `CUGA_FLO_OWNER_PID`).
//! `CUGA_FLO_TEST_FUSEKI_URL` names a server that is already running instead (with a
//! dataset `ds` that takes updates).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// A server started for these tests, or named by the environment.
pub struct Fuseki {
    /// The server's base URL (`http://127.0.0.1:PORT`); the dataset is `ds` under it.
    pub url: String,
    /// Set when this process started it (and may stop it).
    port: Option<u16>,
}

impl Fuseki {
    /// Start a server of our own.
    pub fn start() -> Fuseki {
        let url = super::start_server(
            "tests/fuseki/start-server.sh",
            &[],
            &[],
            "the Fuseki server",
        );
        let port = url.rsplit(':').next().and_then(|p| p.parse().ok());
        Fuseki { url, port }
    }

    /// Stop it now (a server of our own only).
    pub fn stop(&mut self) {
        if let Some(port) = self.port.take() {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let _ = Command::new("bash")
                .arg(root.join("tests/fuseki/stop-server.sh"))
                .arg(port.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for Fuseki {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server these tests share: started once per test binary (and stopped when it
/// exits), or the one `CUGA_FLO_TEST_FUSEKI_URL` names.
pub fn shared() -> &'static Fuseki {
    static SERVER: OnceLock<Fuseki> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("CUGA_FLO_TEST_FUSEKI_URL") {
        Ok(url) if !url.trim().is_empty() => Fuseki {
            url: url.trim().trim_end_matches('/').to_string(),
            port: None,
        },
        _ => Fuseki::start(),
    })
}
