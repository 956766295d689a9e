//! Open instances in one server, and runs in parallel (issue 12, item 5).
//!
//! `open_instances`: one bridge server (what `cuga-flo serve` runs: the registry, the
//! `run_process` tool called over in-process MCP, the native engine calling the harness
//! directly, a durable journal per run under a temporary
//! folder, group commit) holds N runs at once, each blocked in a control point that has
//! not been answered yet (a person or a remote agent taking its time): a chain of 10 tasks
//! whose 5th never returns until the benchmark releases it. The memory each open instance
//! costs is the growth of the process's resident set divided by N. The runs are then
//! released and run to their end.
//!
//! `parallel_runs`: K runs of a 1,000-task chain (journalled without fsync) one after the
//! other, then K at once on a multi-threaded runtime: the second should take about
//! 1/cores of the first (on a machine nothing else is using: the last column, CPU time
//! over wall time while they run at once, shows how many cores the runs kept busy); and
//! K runs spread over one OS thread per core, each with a single-threaded runtime; and,
//! as the ceiling the machine itself sets, the same runs in one process per core.
//!
//! Run with `cargo bench --bench instances` (`-- 1000,5000` to choose N; each open run
//! keeps two file descriptors, its journal and its lock, so N is capped by `ulimit -n`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use cuga_flo::bridge::{Answer, BoxFuture, ControlPointContext, ControlPointError, ControlPoints};
use cuga_flo::engine::WorkflowEngine;
use cuga_flo::engine::native::NativeEngine;
use cuga_flo::journal::store::Journal;
use cuga_flo::journal::{Anchor, Durability, EventSink, JournalOptions};
use cuga_flo::mcp::{BridgeServer, InProcessBridge, RegisteredFlow, Registry, RunProcessArgs};
use cuga_flo::vocab::ControlPointKind;
use tokio::sync::watch;

#[path = "support/mod.rs"]
mod support;

use support::{chain, request};

/// The harness, except that the task `held` waits until `release` turns true.
struct Held {
    inner: Arc<dyn ControlPoints>,
    held: &'static str,
    waiting: AtomicUsize,
    release: watch::Receiver<bool>,
}

impl ControlPoints for Held {
    fn answer(
        &self,
        kind: ControlPointKind,
        element: &str,
        ctx: ControlPointContext,
    ) -> BoxFuture<'_, Result<Answer, ControlPointError>> {
        let id = element.to_string();
        Box::pin(async move {
            if kind == ControlPointKind::Task && id == self.held {
                self.waiting.fetch_add(1, Ordering::SeqCst);
                let mut release = self.release.clone();
                let _ = release.wait_for(|r| *r).await;
            }
            self.inner.answer(kind, &id, ctx).await
        })
    }
}

/// The resident set of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn journal(dir: &std::path::Path, run_id: &str, durability: Durability) -> Arc<dyn EventSink> {
    let options = JournalOptions {
        durability,
        anchor: Anchor::new(run_id, None),
    };
    Arc::new(Journal::create(&dir.join(run_id), options).expect("a run journal"))
}

fn open_instances(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let agent = chain(dir.path(), "task", 10);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (release, released) = watch::channel(false);
    let held = Arc::new(Held {
        inner: agent.clone(),
        held: "n5",
        waiting: AtomicUsize::new(0),
        release: released,
    });
    let registry = Arc::new(Registry::default());
    registry.register(RegisteredFlow {
        process_key: "bench_v1".into(),
        process: Arc::new(agent.process().unwrap().clone()),
        annotations: agent.annotations(),
        harness: held.clone(),
    });
    let bridge = rt
        .block_on(InProcessBridge::start(
            BridgeServer::new(registry.clone(), Arc::new(NativeEngine::new()), None)
                .with_direct_callbacks()
                .with_cores(Arc::new(cuga_flo::serving::Cores::per_core().unwrap())),
        ))
        .unwrap();
    let client = Arc::new(bridge.client());
    let journals = dir.path().join("runs");
    // Warm up: one run to its end, so that lazily built state is not counted.
    registry.attach_sink("warm", journal(&journals, "warm", Durability::Batch));
    let _ = release.send(true);
    rt.block_on(client.run_process(&args("warm"))).unwrap();
    let _ = release.send(false);
    held.waiting.store(0, Ordering::SeqCst);

    let before = rss_kib();
    let started = Instant::now();
    let mut runs = Vec::with_capacity(n);
    for i in 0..n {
        let run_id = format!("r{i}");
        registry.attach_sink(&run_id, journal(&journals, &run_id, Durability::Batch));
        let client = client.clone();
        runs.push(rt.spawn(async move { client.run_process(&args(&run_id)).await }));
    }
    while held.waiting.load(Ordering::SeqCst) < n {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let opened = started.elapsed();
    let after = rss_kib();
    let per = (after.saturating_sub(before)) as f64 / n as f64;
    let _ = release.send(true);
    let released_at = Instant::now();
    for run in runs {
        rt.block_on(run).unwrap().unwrap();
    }
    println!(
        "| {n} | {:.1} | {per:.1} | {:.0} | {:.0} |",
        after as f64 / 1024.0,
        opened.as_secs_f64() * 1e6 / n as f64,
        released_at.elapsed().as_secs_f64() * 1e6 / n as f64,
    );
    rt.block_on(bridge.shutdown());
}

fn args(run_id: &str) -> RunProcessArgs {
    RunProcessArgs {
        process_key: "bench_v1".into(),
        run_id: run_id.into(),
        variables: Default::default(),
        untrusted: None,
        bridge: None,
        adopt: None,
        lost_parks: false,
    }
}

/// User + system CPU time of this process so far.
fn cpu() -> std::time::Duration {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec as u64)
            + std::time::Duration::from_micros(t.tv_usec as u64)
    };
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn parallel_runs(k: usize) {
    let dir = tempfile::tempdir().unwrap();
    let agent = chain(dir.path(), "task", 1_000);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let journals = dir.path().join("runs");
    let one_by_one = Instant::now();
    for i in 0..k {
        let sink = journal(&journals, &format!("s{i}"), Durability::Off);
        rt.block_on(NativeEngine::new().run(request(&agent, i), agent.clone(), sink))
            .unwrap();
    }
    let serial = one_by_one.elapsed();
    let at_once = Instant::now();
    let cpu_before = cpu();
    let runs: Vec<_> = (0..k)
        .map(|i| {
            let agent = agent.clone();
            let sink = journal(&journals, &format!("p{i}"), Durability::Off);
            rt.spawn(async move {
                NativeEngine::new()
                    .run(request(&agent, 1_000 + i), agent, sink)
                    .await
            })
        })
        .collect();
    for run in runs {
        rt.block_on(run).unwrap().unwrap();
    }
    let parallel = at_once.elapsed();
    let busy = cpu() - cpu_before;
    // The same runs on one OS thread per core, each with a single-threaded runtime: no
    // task moves between workers.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let on_threads = Instant::now();
    let threads: Vec<_> = (0..cores)
        .map(|t| {
            let agent = agent.clone();
            let journals = journals.clone();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                for i in (t..k).step_by(cores) {
                    let sink = journal(&journals, &format!("t{i}"), Durability::Off);
                    rt.block_on(NativeEngine::new().run(
                        request(&agent, 2_000 + i),
                        agent.clone(),
                        sink,
                    ))
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let threaded = on_threads.elapsed();
    // What `serve` does: all K at once on `serving::Cores` (a single-threaded runtime per
    // core, each run staying on the thread it started on).
    let pool = Arc::new(cuga_flo::serving::Cores::per_core().unwrap());
    let on_pool = Instant::now();
    let runs: Vec<_> = (0..k)
        .map(|i| {
            let agent = agent.clone();
            let sink = journal(&journals, &format!("c{i}"), Durability::Off);
            pool.spawn(async move {
                NativeEngine::new()
                    .run(request(&agent, 4_000 + i), agent, sink)
                    .await
            })
        })
        .collect();
    rt.block_on(async {
        for run in runs {
            run.await.unwrap().unwrap();
        }
    });
    let pooled = on_pool.elapsed();
    let processes = in_processes(k, cores);
    println!(
        "| {k} | {cores} | {:.0} | {:.0} | {:.2} | {:.2} | {:.0} | {:.2} | {:.0} | {:.2} | {:.0} | {:.2} |",
        serial.as_secs_f64() * 1e3,
        parallel.as_secs_f64() * 1e3,
        serial.as_secs_f64() / parallel.as_secs_f64(),
        busy.as_secs_f64() / parallel.as_secs_f64(),
        threaded.as_secs_f64() * 1e3,
        serial.as_secs_f64() / threaded.as_secs_f64(),
        pooled.as_secs_f64() * 1e3,
        serial.as_secs_f64() / pooled.as_secs_f64(),
        processes.as_secs_f64() * 1e3,
        serial.as_secs_f64() / processes.as_secs_f64(),
    );
}

/// Milliseconds since the Unix epoch, with microseconds (the clock processes share).
fn epoch_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1e3
}

/// The same K runs in one process per core, sharing nothing: the most the machine gives
/// (its cores, caches and memory bandwidth), against which the in-process columns are
/// read. Each process builds its chain first, then all start their share of the runs at
/// the same instant; the time is from that instant to the last one's end.
fn in_processes(k: usize, cores: usize) -> std::time::Duration {
    let exe = std::env::current_exe().unwrap();
    let at = epoch_ms() + 1_500.0;
    let children: Vec<_> = (0..cores)
        .map(|t| {
            std::process::Command::new(&exe)
                .args(["--child", &format!("{k},{t},{cores},{at}")])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("the benchmark runs itself as a child")
        })
        .collect();
    let ends = children.into_iter().map(|child| {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "a child process failed");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<f64>()
            .unwrap()
    });
    let last = ends.fold(at, f64::max);
    std::time::Duration::from_secs_f64((last - at) / 1e3)
}

/// A child of [`in_processes`]: `k,t,cores,at` — run runs t, t+cores, … of k from the
/// instant `at`, print when the last one ended.
fn child(spec: &str) {
    let parts: Vec<f64> = spec.split(',').map(|p| p.parse().unwrap()).collect();
    let [k, t, cores, at] = parts[..] else {
        panic!("--child k,t,cores,at")
    };
    let dir = tempfile::tempdir().unwrap();
    let agent = chain(dir.path(), "task", 1_000);
    let journals = dir.path().join("runs");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let wait = at - epoch_ms();
    if wait > 0.0 {
        std::thread::sleep(std::time::Duration::from_secs_f64(wait / 1e3));
    }
    for i in (t as usize..k as usize).step_by(cores as usize) {
        let sink = journal(&journals, &format!("c{i}"), Durability::Off);
        rt.block_on(NativeEngine::new().run(request(&agent, 3_000 + i), agent.clone(), sink))
            .unwrap();
    }
    println!("{}", epoch_ms());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        return child(&args[at + 1]);
    }
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.split(',').filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 5_000, 9_000]);
    println!("open instances in one bridge server (the 5th of 10 tasks held)\n");
    println!("| open runs | RSS MiB | KiB per open run | µs to open each | µs to finish each |");
    println!("|---:|---:|---:|---:|---:|");
    for n in sizes {
        open_instances(n);
    }
    println!("\nruns of a 1,000-task chain, one after the other and all at once\n");
    println!(
        "| runs | cores | one by one ms | at once ms | speed-up | cores busy at once | a thread per core ms | speed-up | at once on serve's Cores ms | speed-up | a process per core ms | speed-up |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for k in [8, 32] {
        parallel_runs(k);
    }
}
