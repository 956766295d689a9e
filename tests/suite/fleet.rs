//! A worker fleet on a Flowable cluster (`cuga-flo worker --engine flowable APP`), proven
//! by faults: a real PostgreSQL (Debian's binaries, a throwaway cluster), two real Flowable
//! nodes of the same build on it, two `cuga-flo worker` processes sharing one run folder.
//! Instances are started through Flowable's REST API directly, spread over both nodes;
//! one node and one worker are killed (SIGKILL) mid-run; every instance must complete
//! exactly once, as on the native engine, with no control point completed twice (checked
//! in Flowable's history and in the journals).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::flowable::{self, Flowable};
use crate::support::http;
use crate::support::postgres::Postgres;
use crate::support::runs::{answered_once, app_dir, cli_step, records};

/// How many instances the fault test starts.
const INSTANCES: usize = 200;

fn auth() -> String {
    use std::io::Write as _;
    let mut raw = Vec::new();
    write!(raw, "{}:{}", flowable::USER, flowable::PASSWORD).unwrap();
    format!("Basic {}", base64(&raw))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `METHOD url` on Flowable's REST API, as JSON.
fn rest(method: &str, url: &str, body: Option<&Value>) -> Value {
    let auth = auth();
    let body = body.map(Value::to_string).unwrap_or_default();
    let reply = http::request(
        method,
        url,
        &[
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
        ],
        &body,
    );
    assert!(
        reply.status / 100 == 2,
        "{method} {url}: {} {}",
        reply.status,
        reply.body
    );
    reply.json()
}

/// The `answers:` block of a scenario, as an answers file.
fn answers_of(app: &str, scenario: &str, to: &Path) {
    let text =
        std::fs::read_to_string(app_dir(app).join(format!("scenarios/{scenario}.yaml"))).unwrap();
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("answers:") {
            inside = true;
        } else if !line.starts_with(' ') && !line.trim().is_empty() {
            inside = false;
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    std::fs::write(to, out).unwrap();
}

/// A scenario's inputs as Flowable REST variables (`{"name", "value"}`).
fn inputs_of(app: &str, scenario: &str, run_dir: &Path) -> Vec<Value> {
    let app = app_dir(app);
    let out = cli_step(
        &[
            "start",
            &app.to_string_lossy(),
            "--scenario",
            scenario,
            "--engine",
            "native",
            "--json",
        ],
        run_dir,
        &[],
        0,
    );
    let stream = String::from_utf8_lossy(&out.stdout).to_string();
    let started: Value = stream
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "run_started")
        .expect("run_started");
    let given = started["untrusted"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    started["variables"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| given.contains_key(*name))
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect()
}

/// What both tests run: `loan_approval`'s `approve` scenario under `dir`, as an answers
/// file, its inputs as Flowable REST variables, and the path and decisions of its run on
/// the native engine.
fn approve_under(dir: &Path) -> (std::path::PathBuf, Vec<Value>, (Vec<String>, Vec<String>)) {
    let answers = dir.join("answers.yaml");
    answers_of("loan_approval", "approve", &answers);
    let native_dir = dir.join("native");
    let inputs = inputs_of("loan_approval", "approve", &native_dir);
    let native = shape(&crate::support::runs::journal(&native_dir));
    (answers, inputs, native)
}

/// The path and the control points answered, in order, of a run's records.
fn shape(records: &[Value]) -> (Vec<String>, Vec<String>) {
    let path = records
        .iter()
        .filter(|r| r["event"] == "node_entered")
        .filter_map(|r| r["node"].as_str().map(str::to_string))
        .collect();
    let answered = records
        .iter()
        .filter(|r| {
            matches!(
                r["event"].as_str(),
                Some("task_finished" | "gateway_routed" | "hook_evaluated")
            )
        })
        .map(|r| {
            format!(
                "{} {}",
                r["event"].as_str().unwrap_or_default(),
                r["node"]
                    .as_str()
                    .or(r["flow"].as_str())
                    .unwrap_or_default()
            )
        })
        .collect();
    (path, answered)
}

/// A `cuga-flo worker` process, killed when dropped (a failing test leaves none behind).
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn worker(run_dir: &Path, nodes: [&str; 2], answers: &Path, log: &Path) -> Worker {
    worker_with(run_dir, nodes, answers, log, 4, &[])
}

fn worker_with(
    run_dir: &Path,
    nodes: [&str; 2],
    answers: &Path,
    log: &Path,
    concurrency: u16,
    env: &[(&str, &str)],
) -> Worker {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_CRASH_AT")
        .envs(flowable::credentials())
        .env("NO_COLOR", "1")
        .args(["worker", "--engine", "flowable", "loan_approval"])
        .args(["--node", nodes[0], "--node", nodes[1]])
        .args(["--concurrency", &concurrency.to_string()])
        .args(["--poll", "200ms", "--interval", "1"])
        .arg("--answers")
        .arg(answers)
        .arg("--run-dir")
        .arg(run_dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(log.with_extension("out")).unwrap())
        .stderr(std::fs::File::create(log.with_extension("err")).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Worker(cmd.spawn().expect("cuga-flo runs"))
}

/// The process key a worker serves, once it says so (`serving APP on Flowable (definition
/// KEY:VERSION:ID) through URL`).
fn served_key(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log.with_extension("out")).ok()?;
    text.lines()
        .find_map(|l| l.split("(definition ").nth(1))
        .and_then(|r| r.split(':').next())
        .map(str::to_string)
}

/// The runs under `run_dir` that have finished, by status.
fn finished(run_dir: &Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(run_dir.join("runs")) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let id = e.file_name().to_string_lossy().to_string();
            let text = std::fs::read_to_string(e.path().join("journal.jsonl")).ok()?;
            let last: Value = serde_json::from_str(text.lines().last()?).ok()?;
            (last["event"] == "run_finished")
                .then(|| (id, last["status"].as_str().unwrap_or_default().to_string()))
        })
        .collect()
}

/// Wait until `done`, at most `limit` (generous: CI's two cores run other tests beside
/// two JVMs and PostgreSQL); then fail with how many runs under `logs/runs` finished and
/// what the workers logged under `logs`.
fn wait_for(what: &str, limit: Duration, logs: &Path, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        if started.elapsed() >= limit {
            let mut shown = String::new();
            for w in ["w1", "w2"] {
                for ext in ["out", "err"] {
                    let text = std::fs::read_to_string(logs.join(w).with_extension(ext))
                        .unwrap_or_default();
                    let tail: Vec<&str> = text.lines().rev().take(30).collect();
                    shown.push_str(&format!("--- {w}.{ext} (last lines) ---\n"));
                    for line in tail.iter().rev() {
                        shown.push_str(line);
                        shown.push('\n');
                    }
                }
            }
            let runs = logs.join("runs");
            let journalled = std::fs::read_dir(runs.join("runs")).map_or(0, |d| d.count());
            panic!(
                "{what}: not within {limit:?} ({} of {journalled} runs finished)\n{shown}",
                finished(&runs).len()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_worker_fleet_completes_every_instance_once_through_a_lost_node_and_a_lost_worker() {
    if !Postgres::available("fleet") {
        return;
    }
    let pg = Postgres::start("flowable");
    let mut env = pg.spring_env();
    // A dead node's async jobs are handed to the other node 10 s after it locked them
    // (Flowable's default is 5 minutes); expired locks are looked for every 2 s.
    env.push((
        "FLOWABLE_PROCESS_ASYNC_EXECUTOR_ASYNC_JOB_LOCK_TIME",
        "PT10S".into(),
    ));
    env.push((
        "FLOWABLE_PROCESS_ASYNC_EXECUTOR_RESET_EXPIRED_JOBS_INTERVAL",
        "PT2S".into(),
    ));
    // The first node creates the schema; the second finds it.
    let mut node1 = Flowable::start_with(&env);
    let node2 = Flowable::start_with(&env);

    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (answers, inputs, native) = approve_under(tmp.path());

    let mut w1 = worker(
        &runs,
        [&node1.url, &node2.url],
        answers.as_path(),
        &tmp.path().join("w1"),
    );
    let mut w2 = worker(
        &runs,
        [&node2.url, &node1.url],
        answers.as_path(),
        &tmp.path().join("w2"),
    );
    // Both deployed (workers starting at once may both deploy the same content: they
    // serve every definition deployed from it) once both say what they serve.
    let mut key = String::new();
    wait_for(
        "the workers' deployments",
        Duration::from_secs(60),
        tmp.path(),
        || match (
            served_key(&tmp.path().join("w1")),
            served_key(&tmp.path().join("w2")),
        ) {
            (Some(a), Some(b)) => {
                assert_eq!(a, b, "both workers serve one process");
                key = a;
                true
            }
            _ => false,
        },
    );

    // Started through Flowable's REST API directly, half on each node.
    let started = Instant::now();
    let mut instances = Vec::new();
    for i in 0..INSTANCES {
        let node = if i % 2 == 0 { &node1.url } else { &node2.url };
        let created = rest(
            "POST",
            &format!("{node}/runtime/process-instances"),
            Some(&json!({"processDefinitionKey": key, "variables": inputs})),
        );
        instances.push(created["id"].as_str().unwrap().to_string());
    }
    // Mid-run: a node and a worker die.
    wait_for(
        "the first runs",
        Duration::from_secs(300),
        tmp.path(),
        || finished(&runs).len() >= INSTANCES / 10,
    );
    node1.kill();
    w1.0.kill().unwrap();
    w1.0.wait().unwrap();
    let killed = Instant::now();
    let done_before = finished(&runs).len();
    wait_for(
        "every instance",
        Duration::from_secs(900),
        tmp.path(),
        || finished(&runs).len() >= INSTANCES,
    );
    let took = started.elapsed();
    eprintln!(
        "fleet: {INSTANCES} instances in {took:.1?} ({:.1}/s); {done_before} done when node 1 \
         and worker 1 were killed, the rest {:.1?} after",
        INSTANCES as f64 / took.as_secs_f64(),
        killed.elapsed()
    );

    // SIGTERM: the surviving worker stops taking work and exits 0.
    let status = Command::new("kill")
        .args(["-TERM", &w2.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = w2.0.wait().unwrap();
    assert_eq!(exit.code(), Some(0), "the worker's exit on SIGTERM");

    // Every instance once, completed, as on the native engine; no control point twice.
    let done = finished(&runs);
    assert_eq!(done.len(), INSTANCES, "one run per instance");
    let mut resumed = 0;
    let mut ids: Vec<&str> = done.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort_unstable();
    let mut want: Vec<&str> = instances.iter().map(String::as_str).collect();
    want.sort_unstable();
    assert_eq!(ids, want, "each run is keyed by its instance");
    for (id, status) in &done {
        assert_eq!(status, "completed", "run {id}");
        let records = records(&runs, id);
        assert_eq!(shape(&records), native, "run {id}: path and decisions");
        let keys = answered_once(&records, &format!("run {id}"));
        resumed += records
            .iter()
            .filter(|r| r["event"] == "run_resumed")
            .count();
        // Flowable's history: each control point's worker completed once.
        let history = rest(
            "GET",
            &format!(
                "{}/history/historic-activity-instances?processInstanceId={id}&activityType=externalWorkerServiceTask&size=1000",
                node2.url
            ),
            None,
        );
        let mut workers: Vec<String> = history["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["activityId"].as_str().unwrap_or_default().to_string())
            .collect();
        if workers.len() != keys.len() {
            let all = rest(
                "GET",
                &format!(
                    "{}/history/historic-activity-instances?processInstanceId={id}&size=1000",
                    node2.url
                ),
                None,
            );
            let instance = rest(
                "GET",
                &format!("{}/history/historic-process-instances/{id}", node2.url),
                None,
            );
            panic!(
                "run {id}: Flowable's history shows the workers {workers:?}, the journal {keys:?}\n\
                 activities: {}\ninstance: {instance}\njournal: {}",
                all["data"],
                serde_json::Value::Array(records.clone())
            );
        }
        workers.sort();
        let n = workers.len();
        workers.dedup();
        assert_eq!(workers.len(), n, "run {id}: a worker task completed twice");
        let instance = rest(
            "GET",
            &format!("{}/history/historic-process-instances/{id}", node2.url),
            None,
        );
        assert!(!instance["endTime"].is_null(), "instance {id} ended");
        assert!(
            instance["deleteReason"].is_null(),
            "instance {id} ended normally"
        );
    }
    assert!(
        resumed > 0,
        "a run the killed worker had in hand was taken over"
    );
    eprintln!("fleet: {resumed} runs taken over from the killed worker");
    for id in instances.iter().step_by(INSTANCES / 10) {
        let out = cli_step(&["runs", "verify", id], &runs, &[], 0);
        assert!(String::from_utf8_lossy(&out.stdout).contains("journal intact"));
    }
}

/// A worker that dies right after completing an instance's last job (the instance then
/// ends on Flowable, with no job left for any look to find) leaves its run unfinished; the
/// next worker finds the run by its journal, re-attaches to the ended instance and closes
/// the run as it ended, asking nothing again.
#[test]
fn a_run_whose_worker_died_after_its_instances_last_job_is_closed_by_the_next_worker() {
    let server = flowable::shared();
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (answers, inputs, native) = approve_under(tmp.path());
    let nodes = [server.url.as_str(), server.url.as_str()];
    // loan_approval's approve path has five control points: the fifth completion is the
    // instance's last job.
    let mut a = worker_with(
        &runs,
        nodes,
        &answers,
        &tmp.path().join("w1"),
        1,
        &[("CUGA_FLO_CRASH_AT", "engine.after_complete#5")],
    );
    let mut key = String::new();
    wait_for(
        "the deployment",
        Duration::from_secs(60),
        tmp.path(),
        || {
            served_key(&tmp.path().join("w1")).is_some_and(|k| {
                key = k;
                true
            })
        },
    );
    let created = rest(
        "POST",
        &format!("{}/runtime/process-instances", server.url),
        Some(&json!({"processDefinitionKey": key, "variables": inputs})),
    );
    let id = created["id"].as_str().unwrap().to_string();
    wait_for(
        "the worker's death",
        Duration::from_secs(120),
        tmp.path(),
        || a.0.try_wait().unwrap().is_some(),
    );
    let left = records(&runs, &id);
    assert_ne!(
        left.last().unwrap()["event"],
        "run_finished",
        "the dead worker closed the run"
    );
    wait_for(
        "the instance's end",
        Duration::from_secs(60),
        tmp.path(),
        || {
            !rest(
                "GET",
                &format!("{}/history/historic-process-instances/{id}", server.url),
                None,
            )["endTime"]
                .is_null()
        },
    );
    let _b = worker(&runs, nodes, &answers, &tmp.path().join("w2"));
    wait_for(
        "the run closed",
        Duration::from_secs(60),
        tmp.path(),
        || finished(&runs).iter().any(|(r, _)| *r == id),
    );
    let records = records(&runs, &id);
    assert_eq!(
        records.last().unwrap()["status"],
        "completed",
        "{:#?}",
        records.last()
    );
    assert_eq!(shape(&records), native, "path and decisions");
    let keys = answered_once(&records, &format!("run {id}"));
    assert_eq!(keys.len(), 5);
}
