//! Reading what `cuga-flo start` streamed and journalled, to compare runs on different
//! engines (tests/external_engine.rs, tests/flowable.rs).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The repository's app `name`.
pub fn app_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("applications")
        .join(name)
}

/// `cuga-flo start <app> --scenario <name> --no-model --json`, journalled under
/// `run_dir`, with `extra` arguments and `env`.
pub fn start_scenario(
    app: &Path,
    scenario: &str,
    run_dir: &Path,
    extra: &[&str],
    env: &[(&str, String)],
) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.arg("start")
        .arg(app)
        .args(["--scenario", scenario, "--no-model", "--json", "--run-dir"])
        .arg(run_dir)
        .args(extra)
        .env_remove("CUGA_FLO_APPS")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cuga-flo runs")
}

pub fn show(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Run `scenario` of `app` on the native engine and with `engine_args`: both must end
/// alike, meet the scenario and journal the same per element; the journal names
/// `engine`. Returns how long the run on the engine took.
pub fn same_as_native(
    app: &str,
    scenario: &str,
    tmp: &Path,
    engine: &str,
    engine_args: &[&str],
    env: &[(&str, String)],
) -> std::time::Duration {
    let dir = tmp.join(app).join(scenario);
    let native = start_scenario(
        &app_dir(app),
        scenario,
        &dir.join("native"),
        &["--engine", "native"],
        env,
    );
    let started = std::time::Instant::now();
    let other = start_scenario(&app_dir(app), scenario, &dir.join(engine), engine_args, env);
    let took = started.elapsed();
    assert_eq!(
        native.status.code(),
        other.status.code(),
        "{app} {scenario}:\nnative: {}\n{engine}: {}",
        show(&native),
        show(&other)
    );
    let want = comparable(&String::from_utf8_lossy(&native.stdout));
    let got = comparable(&String::from_utf8_lossy(&other.stdout));
    assert_eq!(
        got.last().unwrap()["met"],
        true,
        "{app} {scenario}: {}",
        show(&other)
    );
    assert_eq!(by_element(&want), by_element(&got), "{app} {scenario}");
    assert_eq!(want.len(), got.len(), "{app} {scenario}");
    assert_eq!(journal(&dir.join(engine))[0]["engine"], engine);
    took
}

/// The JSON stream without what differs between engines and runs by nature: timings,
/// ids, the engine's name, token numbers, idempotency keys and kept hook answers (only the
/// native engine resumes runs), `flow_taken` (which only the native engine sees) and the
/// questions' digests (they cover the variables a question saw, which
/// differ when parallel branches interleave differently).
pub fn comparable(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] != "flow_taken")
        .map(|mut e| {
            if let Some(map) = e.as_object_mut() {
                for key in [
                    "seq",
                    "at_ms",
                    "prev",
                    "app_digest",
                    "duration_ms",
                    "run_id",
                    "engine",
                    "token",
                    "digest",
                    // The native engine's idempotency keys (they name the run) and the
                    // hook answers it keeps for resuming; other engines give neither.
                    "key",
                    "answer",
                ] {
                    map.remove(key);
                }
            }
            e
        })
        .collect()
}

/// The events of each node or hook, in order. The Python engine moves one token at a
/// time, so the events of parallel branches interleave differently than on the native
/// engine; per element, they must be the same.
pub fn by_element(events: &[Value]) -> BTreeMap<String, Vec<&Value>> {
    let mut map: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for e in events {
        let key = ["node", "hook", "event"]
            .iter()
            .find_map(|k| e[*k].as_str())
            .unwrap_or_default();
        map.entry(key.to_string()).or_default().push(e);
    }
    map
}

/// The one journal under `run_dir`, as JSON records.
pub fn journal(run_dir: &Path) -> Vec<Value> {
    let runs: Vec<PathBuf> = std::fs::read_dir(run_dir.join("runs"))
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(
        runs.len(),
        1,
        "one run journalled under {}",
        run_dir.display()
    );
    std::fs::read_to_string(runs[0].join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A journal that was closed: `run_started` first, a failed `run_finished` last; its message.
pub fn closed_as_failed(records: &[Value]) -> String {
    assert_eq!(
        records.first().map(|r| &r["event"]),
        Some(&"run_started".into())
    );
    let last = records.last().unwrap();
    assert_eq!(last["event"], "run_finished", "{last:#}");
    assert_eq!(last["status"], "failed", "{last:#}");
    last["message"].as_str().unwrap_or_default().to_string()
}
