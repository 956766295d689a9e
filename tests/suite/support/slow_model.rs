//! Breaking an engine while a control point is pending: a model that takes four seconds
//! to answer is asked at the run's first control point, and the engine is stopped while it
//! thinks (tests/suite/flowable.rs, tests/suite/kogito.rs). Needs `chat_server` beside it.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::chat_server::{self, ChatServer, Received, Reply};

/// Run `app` with `engine_args` (journalled under `run_dir`), call `stop` once the model
/// has been asked, and wait for the run: its output and how long it took after `stop`.
pub fn stop_while_the_model_thinks(
    app: &Path,
    engine_args: &[&str],
    env: &[(&str, String)],
    run_dir: &Path,
    stop: impl FnOnce(),
) -> (Output, Duration) {
    let model = ChatServer::start(|received: &Received| {
        Reply::from_schema_first_choice(received).after(Duration::from_secs(4))
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.arg("start")
        .arg(app)
        .args(["--json", "--run-dir"])
        .arg(run_dir)
        .args(engine_args)
        .args([
            "--var",
            "applicant_name=Ada Byron",
            "--var",
            "applicant_id=1",
        ])
        .env_remove("CUGA_FLO_APPS")
        .env("CUGA_FLO_LLM_BASE_URL", model.url())
        .env("CUGA_FLO_LLM_MODEL", chat_server::MODEL)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("cuga-flo runs");
    let deadline = Instant::now() + Duration::from_secs(60);
    while model.count() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(model.count() > 0, "the model was never asked");
    stop();
    let stopped = Instant::now();
    let out = child.wait_with_output().expect("the run ends");
    (out, stopped.elapsed())
}
