//! Native runs on a PostgreSQL run store that several hosts share (`--store postgres://…`,
//! docs/operations.md, "Running at scale"), proven by faults: a real PostgreSQL (Debian's
//! binaries, a throwaway cluster), two `cuga-flo worker` processes, each with its own run
//! folder (two hosts: separate processes, no shared files; each folder is its host's cache
//! of the store). Runs are started on both hosts, park at a timer, and are resumed by
//! whichever worker finds them due, twice each; one worker kills itself (SIGKILL) right
//! after a commit reached the store and before its own cache has it, the other is killed
//! from outside, PostgreSQL is restarted under them; every run must end as on the file
//! store, resumed by one process at a time, with journals intact.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::postgres::Postgres;
use crate::support::text;

/// How many runs the fault test starts.
const RUNS: usize = 200;

/// `cuga-flo ARGS` over the fixture apps, its runs kept in `store`.
fn on(store: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(store, args, env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("cuga-flo runs")
}

fn command(store: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuga-flo"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CUGA_FLO_APPS")
        .env_remove("CUGA_FLO_CRASH_AT")
        .env_remove("CUGA_FLO_CRASH_TRACE")
        .env_remove("CUGA_FLO_CLOCK_OFFSET")
        .env("NO_COLOR", "1")
        .env("CUGA_FLO_STORE", store)
        .args(["--apps-dir", "tests/fixtures/apps"])
        .args(args)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn dir(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

/// A `cuga-flo worker` on one host, killed when dropped (a failing test leaves none).
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn worker(store: &str, host: &Path, log: &Path, env: &[(&str, &str)]) -> Worker {
    let child = command(
        store,
        &[
            "worker",
            "--interval",
            "0.3",
            "--max-wait",
            "0",
            "--concurrency",
            "4",
            "--run-dir",
            dir(host),
        ],
        env,
    )
    .stdout(std::fs::File::create(log.with_extension("out")).unwrap())
    .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
    .spawn()
    .expect("cuga-flo runs");
    Worker(child)
}

/// `store status --json`.
fn status(store: &str) -> Value {
    let out = on(store, &["store", "status", "--json"], &[]);
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// Wait until `done`, at most `limit`; then fail with what the workers logged.
fn wait_for(what: &str, limit: Duration, logs: &Path, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        if started.elapsed() >= limit {
            let mut shown = String::new();
            for entry in std::fs::read_dir(logs).unwrap().flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "out" || e == "err") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let tail: Vec<&str> = text.lines().rev().take(20).collect();
                    shown.push_str(&format!("--- {} (last lines) ---\n", path.display()));
                    for line in tail.iter().rev() {
                        shown.push_str(line);
                        shown.push('\n');
                    }
                }
            }
            panic!("{what}: not within {limit:?}\n{shown}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The path and the routings of a run's records.
fn shape(records: &[Value]) -> (Vec<String>, Vec<String>) {
    let path = (records.iter())
        .filter(|r| r["event"] == "node_entered")
        .filter_map(|r| r["node"].as_str().map(str::to_string))
        .collect();
    let routed = (records.iter())
        .filter(|r| r["event"] == "gateway_routed")
        .map(|r| format!("{} {}", r["node"], r["flows"]))
        .collect();
    (path, routed)
}

fn journal(host: &Path, id: &str) -> Vec<Value> {
    crate::support::runs::records(host, id)
}

#[test]
fn native_runs_on_postgres_go_on_across_hosts_through_a_killed_worker_and_a_store_restart() {
    if !Postgres::available("store::native_runs_on_postgres") {
        return;
    }
    let pg = Postgres::start("runs");
    let store = pg.url.as_str();
    let password = pg.parts().4;
    let tmp = tempfile::tempdir().unwrap();
    let [h1, h2, h3, files, logs]: [PathBuf; 5] =
        ["h1", "h2", "h3", "files", "logs"].map(|d| tmp.path().join(d));
    std::fs::create_dir_all(&logs).unwrap();

    // A store not migrated yet: nothing runs, and the way out is said (never the password).
    let out = on(
        store,
        &["start", "relay", "--max-wait", "0", "--run-dir", dir(&h1)],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("cuga-flo store migrate"), "{said}");
    assert!(!said.contains(&password), "{said}");
    assert!(!h1.join("runs").exists(), "nothing written: {said}");
    let out = on(store, &["store", "status"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("schema version 0"), "{}", text(&out));
    // Migrated once; a second migration has nothing to do.
    let out = on(store, &["store", "migrate"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("applied 1: "), "{}", text(&out));
    let out = on(store, &["store", "migrate", "--json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let migrated: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(migrated["applied"], serde_json::json!([]));
    assert_eq!(migrated["version"], migrated["needs"]);
    assert!(!text(&out).contains(&password));

    // The reference: each route on the file store, on one host, with no fault.
    let reference = |amount: &str| {
        let host = files.join(amount);
        let out = on(
            "files",
            &[
                "start",
                "relay",
                "--var",
                &format!("amount={amount}"),
                "--var",
                "wait=PT0S",
                "--run-dir",
                dir(&host),
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        shape(&crate::support::runs::journal(&host))
    };
    let small = reference("100");
    let large = reference("900");
    assert_ne!(small, large);

    // RUNS runs, started on both hosts: each parks at its first wait.
    let amounts: Vec<u32> = (0..RUNS as u32).map(|i| 100 + i * 7).collect();
    std::thread::scope(|s| {
        for part in 0..4 {
            let (h1, h2, amounts) = (&h1, &h2, &amounts);
            s.spawn(move || {
                for (i, amount) in amounts.iter().enumerate().skip(part).step_by(4) {
                    let host = if i % 2 == 0 { h1 } else { h2 };
                    let out = on(
                        store,
                        &[
                            "start",
                            "relay",
                            "--var",
                            &format!("amount={amount}"),
                            "--var",
                            "wait=PT1S",
                            "--var",
                            "settle=PT1S",
                            "--max-wait",
                            "0",
                            "--run-dir",
                            dir(host),
                        ],
                        &[],
                    );
                    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
                }
            });
        }
    });
    assert_eq!(status(store)["parked"], RUNS);

    // Host 1's worker kills itself right after its 60th commit reached the store, before
    // its own run folder has it; host 2's goes on. Host 1 gets a new worker (a supervisor's
    // restart), its cache behind the store and perhaps torn.
    let w1 = worker(
        store,
        &h1,
        &logs.join("w1"),
        &[("CUGA_FLO_CRASH_AT", "store.after_commit#60")],
    );
    let mut w2 = worker(store, &h2, &logs.join("w2"), &[]);
    let mut w1 = w1;
    wait_for(
        "worker 1 killing itself mid-run",
        Duration::from_secs(180),
        &logs,
        || w1.0.try_wait().unwrap().is_some(),
    );
    {
        use std::os::unix::process::ExitStatusExt as _;
        let status = w1.0.wait().unwrap();
        assert_eq!(status.signal(), Some(9), "worker 1: {status}");
    }
    let _w1 = worker(store, &h1, &logs.join("w1b"), &[]);
    let finished = || status(store)["finished"].as_u64().unwrap_or(0) as usize;
    wait_for(
        "a quarter of the runs",
        Duration::from_secs(180),
        &logs,
        || finished() >= RUNS / 4,
    );
    // The store restarts under the workers (their connections cut, the runs' leases gone),
    // while they still have work.
    assert!(
        finished() < RUNS,
        "the restart must come while runs are under way"
    );
    pg.restart();
    wait_for("half of the runs", Duration::from_secs(180), &logs, || {
        finished() >= RUNS / 2
    });
    // Host 2's worker is killed from outside, and restarted.
    assert!(
        finished() < RUNS,
        "the kill must come while runs are under way"
    );
    w2.0.kill().unwrap();
    w2.0.wait().unwrap();
    let _w2 = worker(store, &h2, &logs.join("w2b"), &[]);
    wait_for(
        "every run finished",
        Duration::from_secs(300),
        &logs,
        || finished() >= RUNS,
    );

    // A third host, which ran nothing, sees every run, each as its reference.
    let out = on(
        store,
        &["runs", "list", "--json", "--run-dir", dir(&h3)],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.len(), RUNS);
    let mut by_amount = std::collections::BTreeMap::new();
    for run in &listed {
        let id = run["run_id"].as_str().unwrap();
        assert_eq!(run["status"], "completed", "{run}");
        let records = journal(&h3, id);
        let started = &records[0];
        let amount: u32 = started["variables"]["amount"].as_u64().unwrap() as u32;
        by_amount.insert(amount, id.to_string());
        let expected = if amount > 500 { &large } else { &small };
        assert_eq!(&shape(&records), expected, "run {id} (amount {amount})");
        for timer in ["Timer_First", "Timer_Second"] {
            let fired = (records.iter())
                .filter(|r| r["event"] == "timer_fired" && r["node"] == timer)
                .count();
            assert_eq!(fired, 1, "run {id}: {timer} fired {fired} times");
        }
        // Resumed by one process at a time: never twice from the same record.
        let mut from: Vec<u64> = (records.iter())
            .filter(|r| r["event"] == "run_resumed")
            .map(|r| r["from_seq"].as_u64().unwrap())
            .collect();
        assert!(from.len() >= 2, "run {id}: resumed at each wait: {from:?}");
        let resumes = from.len();
        from.dedup();
        assert_eq!(
            from.len(),
            resumes,
            "run {id} resumed twice from one record"
        );
    }
    assert_eq!(by_amount.len(), RUNS, "every run started once");
    // Intact, in the store itself, whichever host asks.
    let ids: Vec<&str> = listed
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    std::thread::scope(|s| {
        for part in 0..4 {
            let (ids, h) = (&ids, if part % 2 == 0 { &h1 } else { &h2 });
            s.spawn(move || {
                for id in ids.iter().skip(part).step_by(4) {
                    let out = on(store, &["runs", "verify", id, "--run-dir", dir(h)], &[]);
                    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
                    assert!(text(&out).contains("journal intact"), "{}", text(&out));
                }
            });
        }
    });
}
