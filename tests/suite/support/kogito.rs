//! A real Kogito service for the tests: `tests/kogito/start-service.sh APP` generates the
//! app's service with `cuga-flo kogito build`, builds it with Maven (once per content,
//! cached), starts it on 127.0.0.1 and prints `listening URL`; it stops when the test
//! binary that started it exits (the script watches `CUGA_FLO_OWNER_PID`).
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// A service started for these tests.
pub struct Kogito {
    pub url: String,
    port: Option<u16>,
}

impl Kogito {
    /// Build (if needed) and start `app`'s service (an app name, or the folder of a
    /// project written already).
    pub fn start(app: &str) -> Kogito {
        Kogito::start_with(app, None, &[])
    }

    /// [`Kogito::start`] on `port` (a free one when `None`), with `env` (a service built
    /// `--persistence postgresql`: the `QUARKUS_DATASOURCE_*` settings).
    pub fn start_with(app: &str, port: Option<u16>, env: &[(&str, String)]) -> Kogito {
        let port_arg = port.map(|p| p.to_string());
        let mut args = vec![app];
        args.extend(port_arg.as_deref());
        let mut env = env.to_vec();
        env.push(("CUGA_FLO_BIN", env!("CARGO_BIN_EXE_cuga-flo").to_string()));
        let url = super::start_server(
            "tests/kogito/start-service.sh",
            &args,
            &env,
            &format!("the Kogito service of {app}"),
        );
        let port = url.rsplit(':').next().and_then(|p| p.parse().ok());
        Kogito { url, port }
    }

    /// The port it listens on (a service of our own).
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    pub fn stop(&mut self) {
        if let Some(port) = self.port.take() {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let _ = Command::new("bash")
                .arg(root.join("tests/kogito/stop-service.sh"))
                .arg(port.to_string())
                .status();
        }
    }
}

impl Drop for Kogito {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The service of `app` these tests share, started once per test binary.
pub fn shared(app: &str) -> String {
    static SERVICES: OnceLock<Mutex<HashMap<String, &'static Kogito>>> = OnceLock::new();
    let services = SERVICES.get_or_init(Default::default);
    let mut services = services.lock().unwrap_or_else(|p| p.into_inner());
    let service = services
        .entry(app.to_string())
        .or_insert_with(|| Box::leak(Box::new(Kogito::start(app))));
    service.url.clone()
}
