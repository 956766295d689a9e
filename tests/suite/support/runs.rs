//! Reading what `cuga-flo start` streamed and journalled, to compare runs on different
//! engines (tests/suite/external_engine.rs, tests/suite/flowable.rs).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// `cuga-flo ARGS --run-dir RUN_DIR` over the fixture apps (tests/fixtures/apps), with
/// `env`: one step of a durable run (`start`, then `runs message`, `runs answer`, `runs
/// resume`, ...), which must exit with `code` (3: the run parked; 0: it ended).
pub fn cli_step(args: &[&str], run_dir: &Path, env: &[(&str, String)], code: i32) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_STORE")
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .env("NO_COLOR", "1")
        .args(["--apps-dir", "tests/fixtures/apps"])
        .args(args)
        .arg("--run-dir")
        .arg(run_dir)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("cuga-flo runs");
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", show(&out));
    out
}

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
        .env_remove("CUGA_FLO_STORE")
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
/// ids, the engine's name, token numbers, idempotency keys and kept hook answers (their
/// visits count differently on each engine), `flow_taken` (which only the native engine
/// sees), `instance_started` (only engines that own their tokens have one) and the
/// questions' digests (they cover the variables a question saw, which
/// differ when parallel branches interleave differently).
pub fn comparable(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] != "flow_taken" && e["event"] != "instance_started")
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
                    // Idempotency keys (they name the run) and the hook answers kept with
                    // them for resuming.
                    "key",
                    "answer",
                ] {
                    map.remove(key);
                }
                // Where the engine was reached (`--engine-url`).
                if let Some(launch) = map.get_mut("launch").and_then(Value::as_object_mut) {
                    launch.remove("engine_url");
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

/// The journal file of run `id` under `run_dir`.
pub fn journal_path(run_dir: &Path, id: &str) -> PathBuf {
    run_dir.join("runs").join(id).join("journal.jsonl")
}

/// Run `id`'s journal under `run_dir`, as JSON records (a torn last line, of a process
/// killed mid-write, is not a record).
pub fn records(run_dir: &Path, id: &str) -> Vec<Value> {
    std::fs::read_to_string(journal_path(run_dir, id))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The records of `records` that are `name` events, in order.
pub fn events<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["event"] == name).collect()
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

/// `cuga-flo runs resume <id> --json`, journalled under `run_dir`, with `extra` arguments
/// and `env`.
pub fn resume(run_dir: &Path, id: &str, extra: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.args(["runs", "resume", id, "--json", "--run-dir"])
        .arg(run_dir)
        .args(extra)
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_STORE")
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CRASH_TRACE")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("cuga-flo runs")
}

/// The id of the one run under `run_dir`.
pub fn only_run(run_dir: &Path) -> String {
    let ids: Vec<String> = std::fs::read_dir(run_dir.join("runs"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(ids.len(), 1, "one run under {}: {ids:?}", run_dir.display());
    ids[0].clone()
}

/// What must be the same at the end of a run however often it was stopped and resumed:
/// the status, message, final variables and steps, and per element the sequence of its
/// entries, task results, gateway routings and hook decisions.
pub fn final_state(records: &[Value]) -> Value {
    let finished: Vec<&Value> = records
        .iter()
        .filter(|r| r["event"] == "run_finished")
        .collect();
    assert_eq!(finished.len(), 1, "exactly one run_finished");
    let f = finished[0];
    let mut per: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in records {
        let (node, what) = match r["event"].as_str().unwrap_or_default() {
            "node_entered" => (&r["node"], serde_json::json!("entered")),
            "task_finished" => (
                &r["node"],
                serde_json::json!({"status": r["status"], "outputs": r["outputs"], "variables": r["variables"], "by": r["decided_by"]}),
            ),
            "gateway_routed" => (
                &r["node"],
                serde_json::json!({"flows": r["flows"], "by": r["decided_by"]}),
            ),
            "hook_evaluated" => (
                &r["hook"],
                serde_json::json!({"action": r["action"], "target": r["target"], "by": r["decided_by"]}),
            ),
            _ => continue,
        };
        per.entry(node.as_str().unwrap_or_default().to_string())
            .or_default()
            .push(what);
    }
    serde_json::json!({
        "status": f["status"],
        "message": f["message"],
        "variables": f["variables"],
        "steps": f["steps"],
        "per_element": per,
    })
}

/// The idempotency keys of the answers a journal holds (task, gateway and hook records
/// asked of the harness), in order.
pub fn answered_keys(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| {
            matches!(
                r["event"].as_str(),
                Some("task_finished" | "gateway_routed" | "hook_evaluated")
            )
        })
        .filter_map(|r| r["key"].as_str().map(str::to_string))
        .collect()
}

/// The idempotency keys of the control points answered in `records`, each asserted
/// answered once (`context` says where, when one was answered twice).
pub fn answered_once(records: &[Value], context: &str) -> Vec<String> {
    let keys = answered_keys(records);
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        keys.len(),
        "a control point answered twice: {keys:?}\n{context}"
    );
    keys
}

/// The crash points (`CUGA_FLO_CRASH_TRACE`) a `start_scenario` run passes: number and name.
pub fn crash_points(
    app: &Path,
    scenario: &str,
    run_dir: &Path,
    extra: &[&str],
    env: &[(&str, String)],
) -> Vec<(u64, String)> {
    let mut env = env.to_vec();
    env.push(("CUGA_FLO_CRASH_TRACE", "1".into()));
    let out = start_scenario(app, scenario, run_dir, extra, &env);
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| {
            let mut parts = l.strip_prefix("crash-point ")?.split(' ');
            Some((parts.next()?.parse().ok()?, parts.next()?.to_string()))
        })
        .collect()
}

/// Kill a `start_scenario` run with SIGKILL at each of `points`, resume it with `runs
/// resume`, and check that it ends as `baseline` (a [`final_state`]) did, with each
/// control point answered once (no key answered twice, as many answers as the baseline
/// run gave). Returns how many runs were killed and the longest resume.
pub fn kill_and_resume(
    app: &Path,
    scenario: &str,
    tmp: &Path,
    extra: &[&str],
    env: &[(&str, String)],
    points: &[(u64, String)],
    baseline: &[Value],
) -> (usize, std::time::Duration) {
    let want = final_state(baseline);
    let answers = answered_keys(baseline).len();
    let mut killed = 0;
    let mut longest = std::time::Duration::ZERO;
    for (at, name) in points {
        let dir = tmp.join(format!("{scenario}-{at}"));
        let mut crash = env.to_vec();
        crash.push(("CUGA_FLO_CRASH_AT", at.to_string()));
        let out = start_scenario(app, scenario, &dir, extra, &crash);
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if out.status.signal() != Some(9) {
                assert!(out.status.code().is_some(), "{}", show(&out));
                continue;
            }
        }
        let id = only_run(&dir);
        let path = dir.join("runs").join(&id).join("journal.jsonl");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.is_empty() {
            continue; // killed before `run_started` was durable: it never started
        }
        let written: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if written.iter().any(|r| r["event"] == "run_finished") {
            // Killed after its end was written: nothing to resume.
            assert_eq!(final_state(&written), want, "killed at {at} ({name})");
            continue;
        }
        let started = std::time::Instant::now();
        let resumed = resume(&dir, &id, &[], env);
        longest = longest.max(started.elapsed());
        let records = journal(&dir);
        let context = format!(
            "{scenario} killed at {at} ({name}), resumed:\n{}",
            show(&resumed)
        );
        assert_eq!(final_state(&records), want, "{context}");
        let keys = answered_once(&records, &context);
        assert_eq!(keys.len(), answers, "{context}");
        let met = String::from_utf8_lossy(&resumed.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|e| e["event"] == "scenario_checked" && e["met"] == true);
        assert!(met, "{context}");
        killed += 1;
    }
    (killed, longest)
}

/// The crash points to kill a run at: every point of the engine's own (asking a control
/// point, completing its worker) and every `every`-th of the others (the journal's).
pub fn chosen_points(points: &[(u64, String)], every: usize) -> Vec<(u64, String)> {
    points
        .iter()
        .enumerate()
        .filter(|(i, (_, name))| name.starts_with("engine.") || i % every == 0)
        .map(|(_, p)| p.clone())
        .collect()
}

/// Append to `journal` a record that follows its `run_finished` with a valid chain link
/// and sequence number, as a forger who knows the format would, and move the head file
/// to it.
pub fn forge_after_end(journal: &Path) {
    let text = std::fs::read_to_string(journal).unwrap();
    let last = text.lines().last().unwrap();
    let seq = text.lines().count() as u64 + 1;
    let prev = cuga_flo::journal::chain::line_hash(last.as_bytes());
    let forged = format!(
        "{{\"seq\":{seq},\"at_ms\":1,\"prev\":\"{prev}\",\"event\":\"variables_set\",\"source\":\"forged\",\"values\":{{\"total_amount\":1}}}}"
    );
    std::fs::write(journal, format!("{text}{forged}\n")).unwrap();
    let head = journal.with_file_name("journal.head");
    let hash = cuga_flo::journal::chain::line_hash(forged.as_bytes());
    std::fs::write(head, format!("{seq} {hash}\n")).unwrap();
}
